// The parser's half of the image-config wire (ipc/image_config_wire.hpp): it
// decodes the executor's request and encodes the reader's answer.
#include "ipc/image_config_wire.hpp"
#include "ipc/le_bytes.hpp"

namespace hb {

using le::get_u32, le::put_u32;

Result<std::uint32_t> decode_image_config_request(std::span<const std::uint8_t> bytes) {
    if (bytes.size() != kImageConfigRequestSize)
        return make_error("image config request: wrong size");
    if (get_u32(bytes.data()) != kImageConfigMagic)
        return make_error("image config request: bad magic");
    return get_u32(bytes.data() + 4);
}

std::array<std::uint8_t, kImageConfigAnswerSize> encode_image_config_answer(
    const ImageConfigAnswer& answer) {
    std::array<std::uint8_t, kImageConfigAnswerSize> out{};
    put_u32(out.data(), kImageConfigMagic);
    put_u32(out.data() + 4, answer.seq);
    out[8] = static_cast<std::uint8_t>(answer.status);
    put_u32(out.data() + 12, answer.triggers);
    return out;
}

}  // namespace hb
