// The parser's half of the log-line reader's wire (ipc/log_lines_wire.hpp):
// it decodes the executor's request and encodes its answer.
#include <algorithm>

#include "ipc/le_bytes.hpp"
#include "ipc/log_lines_wire.hpp"

namespace hb {

using le::get_u16, le::get_u32, le::get_u64, le::put_u16, le::put_u32, le::put_u64;

Result<LogLinesRequest> decode_log_lines_request(std::span<const std::uint8_t> bytes) {
    if (bytes.size() != kLogLinesRequestSize) return make_error("log lines request: wrong size");
    const std::uint8_t* p = bytes.data();
    if (get_u32(p) != kLogLinesMagic) return make_error("log lines request: bad magic");
    if (p[8] > static_cast<std::uint8_t>(LogLinesKind::Pieces) || p[9] > 1) {
        return make_error("log lines request: kind or cut out of range");
    }
    LogLinesRequest r;
    r.seq = get_u32(p + 4);
    r.kind = static_cast<LogLinesKind>(p[8]);
    r.cut = p[9] == 1;
    r.window.lines = get_u16(p + 10);
    r.size = get_u32(p + 12);
    r.window.since_ns = static_cast<std::int64_t>(get_u64(p + 16));
    r.window.since_seen = get_u32(p + 24);
    r.budget = get_u32(p + 28);
    r.group_ns = static_cast<std::int64_t>(get_u64(p + 32));
    r.group_len = get_u32(p + 40);
    if (r.window.lines > kMaxLogLines || r.window.since_seen > kMaxCursorSeen ||
        (r.window.since_ns != kNoTime && r.window.since_ns < 0)) {
        return make_error("log lines request: bad window");
    }
    if (r.size > 2 * kMaxEngineLogBytes || r.group_len > r.size) {
        return make_error("log lines request: bad size");
    }
    if (r.budget == 0 || r.budget > kMaxLogAnswerBytes) {
        return make_error("log lines request: bad budget");
    }
    return r;
}

std::array<std::uint8_t, kLogLinesAnswerSize> encode_log_lines_answer(
    const LogLinesAnswer& answer) {
    std::array<std::uint8_t, kLogLinesAnswerSize> out{};
    std::uint8_t* p = out.data();
    put_u32(p, kLogLinesMagic);
    put_u32(p + 4, answer.seq);
    p[8] = static_cast<std::uint8_t>(answer.status);
    p[9] = static_cast<std::uint8_t>((answer.more ? 1 : 0) | (answer.continued ? 2 : 0));
    const std::size_t text = std::min(answer.text.size(), kMaxLogTextRanges);
    const std::size_t untimed = std::min(answer.untimed.size(), kMaxLogUntimedRanges);
    put_u16(p + 10, static_cast<std::uint16_t>(text));
    put_u16(p + 12, static_cast<std::uint16_t>(untimed));
    put_u64(p + 16, static_cast<std::uint64_t>(answer.cursor.ns));
    put_u32(p + 24, answer.cursor.seen);
    put_u32(p + 28, answer.cut);
    put_u32(p + 32, answer.group.start);
    put_u32(p + 36, answer.group.end);
    put_u64(p + 40, answer.value);
    const auto put = [](std::uint8_t* at, const LogRange& r) {
        put_u32(at, r.start);
        put_u32(at + 4, r.end);
    };
    for (std::size_t i = 0; i < text; ++i) put(p + 64 + 8 * i, answer.text[i]);
    for (std::size_t i = 0; i < untimed; ++i) {
        put(p + 64 + 8 * kMaxLogTextRanges + 8 * i, answer.untimed[i]);
    }
    return out;
}

}  // namespace hb
