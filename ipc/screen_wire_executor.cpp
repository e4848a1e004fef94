// The executor's half of the build-input screen wire (ipc/screen_wire.hpp): it
// encodes the request and decodes, strictly, the screen's answer.
#include "ipc/le_bytes.hpp"
#include "ipc/screen_wire.hpp"

namespace hb {

using le::get_u32, le::put_u32;

Result<std::vector<std::uint8_t>> encode_screen_request(const ScreenRequest& request) {
    if (auto ok = check_screen_images(request.images); !ok) return ok.error();
    std::vector<std::uint8_t> out(9);
    put_u32(out.data(), kScreenMagic);
    put_u32(out.data() + 4, request.seq);
    out[8] = static_cast<std::uint8_t>(request.images.size());
    for (const std::string& image : request.images) {
        out.push_back(static_cast<std::uint8_t>(image.size()));
        out.insert(out.end(), image.begin(), image.end());
    }
    return out;
}

Result<ScreenAnswer> decode_screen_answer(std::span<const std::uint8_t> bytes) {
    if (bytes.size() != kScreenAnswerSize) return make_error("screen answer: wrong size");
    const std::uint8_t* p = bytes.data();
    if (get_u32(p) != kScreenMagic) return make_error("screen answer: bad magic");
    if (p[14] != 0 || p[15] != 0) return make_error("screen answer: padding not zero");
    if (p[12] > static_cast<std::uint8_t>(kLastScreenReason))
        return make_error("screen answer: reason out of range");
    if (p[13] > static_cast<std::uint8_t>(kLastScreenFlag))
        return make_error("screen answer: flag out of range");
    ScreenAnswer a;
    a.seq = get_u32(p + 4);
    a.verdict.line = get_u32(p + 8);
    a.verdict.reason = static_cast<ScreenReason>(p[12]);
    a.verdict.flag = static_cast<ScreenFlag>(p[13]);
    if (a.verdict.line > kMaxScreenLine) return make_error("screen answer: line out of range");
    if (a.verdict.reason == ScreenReason::None &&
        (a.verdict.line != 0 || a.verdict.flag != ScreenFlag::None)) {
        return make_error("screen answer: an acceptance with a line or flag");
    }
    // Every refusal but TooLarge and NoStage (about the whole file) names its line.
    const bool whole_file =
        a.verdict.reason == ScreenReason::TooLarge || a.verdict.reason == ScreenReason::NoStage;
    if (a.verdict.reason != ScreenReason::None && !whole_file && a.verdict.line == 0) {
        return make_error("screen answer: a refusal without a line");
    }
    return a;
}

}  // namespace hb
