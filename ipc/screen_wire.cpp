#include "ipc/screen_wire.hpp"

#include <string>

#include "ipc/le_bytes.hpp"

namespace hb {

using le::get_u32, le::put_u32;

std::array<std::uint8_t, kScreenRequestSize> encode_screen_request(std::uint32_t seq) {
    std::array<std::uint8_t, kScreenRequestSize> out{};
    put_u32(out.data(), kScreenMagic);
    put_u32(out.data() + 4, seq);
    return out;
}

Result<std::uint32_t> decode_screen_request(std::span<const std::uint8_t> bytes) {
    if (bytes.size() != kScreenRequestSize) return make_error("screen request: wrong size");
    if (get_u32(bytes.data()) != kScreenMagic) return make_error("screen request: bad magic");
    return get_u32(bytes.data() + 4);
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
    // Every refusal but TooLarge names its line.
    const bool whole_file = a.verdict.reason == ScreenReason::TooLarge;
    if (a.verdict.reason != ScreenReason::None && !whole_file && a.verdict.line == 0) {
        return make_error("screen answer: a refusal without a line");
    }
    return a;
}

}  // namespace hb
