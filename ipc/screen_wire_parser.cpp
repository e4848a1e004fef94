// The parser's half of the build-input screen wire (ipc/screen_wire.hpp): it
// decodes the executor's request and encodes the screen's answer.
#include "ipc/le_bytes.hpp"
#include "ipc/screen_wire.hpp"

namespace hb {

using le::get_u32, le::put_u32;

Result<ScreenRequest> decode_screen_request(std::span<const std::uint8_t> bytes) {
    if (bytes.size() < 9 || bytes.size() > kScreenRequestMax)
        return make_error("screen request: wrong size");
    if (get_u32(bytes.data()) != kScreenMagic) return make_error("screen request: bad magic");
    ScreenRequest request;
    request.seq = get_u32(bytes.data() + 4);
    const std::size_t count = bytes[8];
    if (count > kMaxScreenImages) return make_error("screen request: too many images");
    std::size_t at = 9;
    for (std::size_t i = 0; i < count; ++i) {
        if (at >= bytes.size()) return make_error("screen request: cut short");
        const std::size_t length = bytes[at++];
        if (length == 0 || bytes.size() - at < length)
            return make_error("screen request: an image of a wrong length");
        request.images.emplace_back(reinterpret_cast<const char*>(bytes.data() + at), length);
        at += length;
    }
    if (at != bytes.size()) return make_error("screen request: bytes after the last image");
    if (auto ok = check_screen_images(request.images); !ok) return ok.error();
    return request;
}

std::array<std::uint8_t, kScreenAnswerSize> encode_screen_answer(const ScreenAnswer& answer) {
    std::array<std::uint8_t, kScreenAnswerSize> out{};
    put_u32(out.data(), kScreenMagic);
    put_u32(out.data() + 4, answer.seq);
    put_u32(out.data() + 8, answer.verdict.line);
    out[12] = static_cast<std::uint8_t>(answer.verdict.reason);
    out[13] = static_cast<std::uint8_t>(answer.verdict.flag);
    return out;
}

}  // namespace hb
