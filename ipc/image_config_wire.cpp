#include "ipc/image_config_wire.hpp"

#include "ipc/le_bytes.hpp"

namespace hb {

using le::get_u32, le::put_u32;

std::string_view image_config_status_text(ImageConfigStatus status) {
    switch (status) {
        case ImageConfigStatus::Ok:
            return "ok";
        case ImageConfigStatus::TooLarge:
            return "the image config is larger than the reader reads";
        case ImageConfigStatus::NotJson:
            return "the image config is not JSON";
        case ImageConfigStatus::BadShape:
            return "the image config is not shaped as an image config";
        case ImageConfigStatus::BadArchive:
            return "the saved image is not a tar archive as podman writes one";
        case ImageConfigStatus::NotOneConfig:
            return "the saved image holds no config file, or more than one";
    }
    return "unknown status";
}

std::array<std::uint8_t, kImageConfigRequestSize> encode_image_config_request(std::uint32_t seq) {
    std::array<std::uint8_t, kImageConfigRequestSize> out{};
    put_u32(out.data(), kImageConfigMagic);
    put_u32(out.data() + 4, seq);
    return out;
}

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
