// The executor's half of the image-config wire (ipc/image_config_wire.hpp): it
// encodes the request and decodes, strictly, the reader's answer.
#include "ipc/image_config_wire.hpp"
#include "ipc/le_bytes.hpp"

namespace hb {

using le::get_u32, le::put_u32;

std::array<std::uint8_t, kImageConfigRequestSize> encode_image_config_request(std::uint32_t seq) {
    std::array<std::uint8_t, kImageConfigRequestSize> out{};
    put_u32(out.data(), kImageConfigMagic);
    put_u32(out.data() + 4, seq);
    return out;
}

Result<ImageConfigAnswer> decode_image_config_answer(std::span<const std::uint8_t> bytes) {
    if (bytes.size() != kImageConfigAnswerSize)
        return make_error("image config answer: wrong size");
    const std::uint8_t* p = bytes.data();
    if (get_u32(p) != kImageConfigMagic) return make_error("image config answer: bad magic");
    if (p[9] != 0 || p[10] != 0 || p[11] != 0)
        return make_error("image config answer: padding not zero");
    if (p[8] > static_cast<std::uint8_t>(kLastImageConfigStatus))
        return make_error("image config answer: status out of range");
    ImageConfigAnswer a;
    a.seq = get_u32(p + 4);
    a.status = static_cast<ImageConfigStatus>(p[8]);
    a.triggers = get_u32(p + 12);
    if (a.status != ImageConfigStatus::Ok && a.triggers != 0)
        return make_error("image config answer: a count with a failed status");
    if (a.triggers > kMaxImageTriggers)
        return make_error("image config answer: count out of range");
    return a;
}

}  // namespace hb
