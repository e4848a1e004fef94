// The executor's half of the log-line reader's wire (ipc/log_lines_wire.hpp):
// it encodes the request and decodes, strictly, the parser's answer.
#include "ipc/le_bytes.hpp"
#include "ipc/log_lines_wire.hpp"

namespace hb {

using le::get_u16, le::get_u32, le::get_u64, le::put_u16, le::put_u32, le::put_u64;

std::array<std::uint8_t, kLogLinesRequestSize> encode_log_lines_request(
    const LogLinesRequest& request) {
    std::array<std::uint8_t, kLogLinesRequestSize> out{};
    std::uint8_t* p = out.data();
    put_u32(p, kLogLinesMagic);
    put_u32(p + 4, request.seq);
    p[8] = static_cast<std::uint8_t>(request.kind);
    p[9] = request.cut ? 1 : 0;
    put_u16(p + 10, request.window.lines);
    put_u32(p + 12, request.size);
    put_u64(p + 16, static_cast<std::uint64_t>(request.window.since_ns));
    put_u32(p + 24, request.window.since_seen);
    put_u32(p + 28, request.budget);
    put_u64(p + 32, static_cast<std::uint64_t>(request.group_ns));
    put_u32(p + 40, request.group_len);
    return out;
}

Result<LogLinesAnswer> decode_log_lines_answer(std::span<const std::uint8_t> bytes,
                                               std::size_t size) {
    if (bytes.size() != kLogLinesAnswerSize) return make_error("wrong size");
    const std::uint8_t* p = bytes.data();
    if (get_u32(p) != kLogLinesMagic ||
        p[8] > static_cast<std::uint8_t>(LogLinesStatus::NotFound) || p[9] > 3 ||
        get_u16(p + 14) != 0 || get_u64(p + 48) != 0 || get_u64(p + 56) != 0) {
        return make_error("bad magic, status, flags or padding");
    }
    LogLinesAnswer a;
    a.seq = get_u32(p + 4);
    a.status = static_cast<LogLinesStatus>(p[8]);
    a.more = (p[9] & 1) != 0;
    a.continued = (p[9] & 2) != 0;
    a.cursor = LogCursor{static_cast<std::int64_t>(get_u64(p + 16)), get_u32(p + 24)};
    a.cut = get_u32(p + 28);
    a.group = LogRange{get_u32(p + 32), get_u32(p + 36)};
    a.value = get_u64(p + 40);
    // Each list in order, inside the file, the unused slots zero; only a
    // cut line's head may be empty.
    const auto ranges = [&](std::size_t at, std::size_t count, std::size_t max, bool empty_ok,
                            std::vector<LogRange>& out) {
        std::uint64_t from = 0;
        for (std::size_t i = 0; i < max; ++i, at += 8) {
            const LogRange r{get_u32(p + at), get_u32(p + at + 4)};
            if (i >= count ? r != LogRange{}
                           : r.start < from || r.end > size || r.end < r.start + !empty_ok)
                return false;
            if (i < count) out.push_back(r);
            from = r.end;
        }
        return true;
    };
    if (!ranges(64, get_u16(p + 10), kMaxLogTextRanges, a.cut != 0, a.text) ||
        !ranges(64 + 8 * kMaxLogTextRanges, get_u16(p + 12), kMaxLogUntimedRanges, false,
                a.untimed)) {
        return make_error("a range outside the log or out of order");
    }
    if (a.continued ? a.group.start >= a.group.end || a.group.end > size : a.group != LogRange{})
        return make_error("a group line outside the log");
    if (a.cut != 0 && (a.text.size() != 1 || a.text[0].start + std::uint64_t{a.cut} > size ||
                       a.text[0].end - a.text[0].start > a.cut)) {
        return make_error("a cut line that is not one line of the log");
    }
    return a;
}

}  // namespace hb
