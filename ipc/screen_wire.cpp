#include "ipc/screen_wire.hpp"

#include <string>

#include "ipc/le_bytes.hpp"

namespace hb {

using le::get_u32, le::put_u32;

namespace {

// The one rule both ends hold the list to: it is a set, in one spelling.
Result<void> check_images(const std::vector<std::string>& images) {
    if (images.size() > kMaxScreenImages) return make_error("screen request: too many images");
    for (std::size_t i = 0; i < images.size(); ++i) {
        const std::string& image = images[i];
        if (image.empty() || image.size() > kMaxImageRefBytes)
            return make_error("screen request: an image of a wrong length");
        if (canonical_image_ref(image) != image)
            return make_error("screen request: an image not in canonical form");
        if (i > 0 && images[i - 1] >= image)
            return make_error("screen request: images out of order or repeated");
    }
    return {};
}

}  // namespace

Result<std::vector<std::uint8_t>> encode_screen_request(const ScreenRequest& request) {
    if (auto ok = check_images(request.images); !ok) return ok.error();
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
    if (auto ok = check_images(request.images); !ok) return ok.error();
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
