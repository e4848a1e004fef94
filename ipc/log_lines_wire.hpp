// The log-line reader's two messages (docs/PARSER.md, "--log-lines").
//
// A windowed `logs` reads the engine's `logs --timestamps` output into a
// sealed memfd (engines/podman/follow_log.cpp). Everything after each
// line's stamp was written by the agent's container, so the executor never
// reads it for meaning: a fresh `hostbridge-parser --log-lines`, locked down
// as the request parser is, reads the file through the fd the executor
// attaches (at offset 0) and answers which byte ranges of it to show and
// the cursor after them. The executor checks the ranges against the file
// and reads them itself with pread (engines/podman/log_lines_client.cpp).
//
//   LogLinesRequest (kLogLinesRequestSize = 44 bytes):
//     0 u32 magic "HBL1"  4 u32 seq  8 u8 kind  9 u8 cut (0 or 1)
//     10 u16 lines (0..kMaxLogLines)  12 u32 size (bytes of the file to read)
//     16 i64 since_ns (kNoTime: the newest lines)  24 u32 since_seen
//     28 u32 budget (1..kMaxLogAnswerBytes)  32 i64 group_ns (Pieces)
//     40 u32 group_len (Pieces: the file's first group_len bytes are the
//        line looked for, the view follows)
//   LogLinesAnswer (kLogLinesAnswerSize = 8512 bytes):
//     0 u32 magic  4 u32 seq  8 u8 status  9 u8 flags (1 more, 2 continued)
//     10 u16 text ranges  12 u16 untimed ranges  14 u16 zero
//     16 i64 cursor_ns  24 u32 cursor_seen
//     28 u32 cut (the whole size of the one range's line when it is cut, else 0)
//     32 u32 group_start  36 u32 group_end (continued only)
//     40 u64 value (Pieces: the count)  48..63 zero
//     64 kMaxLogTextRanges x {u32 start, u32 end}, unused ones zero
//     8256 kMaxLogUntimedRanges x {u32 start, u32 end}, unused ones zero
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "ipc/log_cursor.hpp"
#include "ipc/result.hpp"
#include "ipc/wire.hpp"

namespace hb {

// At most this much of the engine's output is read for one view: the
// engine is stopped from writing more (follow_log.cpp's sealed memfd).
inline constexpr std::size_t kMaxEngineLogBytes = 8u << 20;
// The most an answer shows (executor/responses.hpp's kMaxOutputBytes).
inline constexpr std::size_t kMaxLogAnswerBytes = 16384;
// A stamped line is at least 22 bytes ("2026-12-02T20:57:25Z \n"), so a
// budget of kMaxLogAnswerBytes holds at most 745 of them: a range each at
// worst (lines apart, the engine's own lines between them).
inline constexpr std::size_t kMaxLogTextRanges = 1024;
// The engine's own lines (no stamp), written to the executor's log only:
// at most 4 KiB in at most this many runs; those past it are not logged.
inline constexpr std::size_t kMaxLogUntimedRanges = 32;
inline constexpr std::size_t kMaxLogUntimedBytes = 4096;
inline constexpr std::size_t kLogLinesRequestSize = 44;
inline constexpr std::size_t kLogLinesAnswerSize =
    64 + 8 * (kMaxLogTextRanges + kMaxLogUntimedRanges);
inline constexpr std::uint32_t kLogLinesMagic = 0x484c4231;  // "HBL1"

// Wire values fixed (one byte each); append only.
enum class LogLinesKind : std::uint8_t {
    Select = 0,  // the window's lines (parser/log_lines.hpp select_lines)
    Pieces = 1,  // lines stamped group_ns before the group line (pieces_before); the last
};
enum class LogLinesStatus : std::uint8_t {
    Ok = 0,
    NotFound = 1,  // Pieces: the group line is not in the view; the last
};

struct LogRange {
    std::uint32_t start = 0;
    std::uint32_t end = 0;  // past the last byte
    bool operator==(const LogRange&) const = default;
};

struct LogLinesRequest {
    std::uint32_t seq = 0;
    LogLinesKind kind = LogLinesKind::Select;
    bool cut = false;  // the engine was stopped at kMaxEngineLogBytes
    std::uint32_t size = 0;
    LogWindow window;
    std::uint32_t budget = kMaxLogAnswerBytes;
    std::int64_t group_ns = 0;
    std::uint32_t group_len = 0;
};

struct LogLinesAnswer {
    std::uint32_t seq = 0;
    LogLinesStatus status = LogLinesStatus::Ok;
    bool more = false;       // complete lines after `cursor` were left out
    bool continued = false;  // see parser/log_lines.hpp LogSelection
    std::vector<LogRange> text;
    std::vector<LogRange> untimed;
    LogCursor cursor;
    std::uint32_t cut = 0;
    LogRange group;
    std::uint64_t value = 0;
};

// The note after a line cut to the budget, `left_out` its bytes not shown:
// written by the parser's selection and by the executor after the range.
inline std::string log_cut_note(std::size_t left_out) {
    return " [line cut: " + std::to_string(left_out) + " bytes not shown]\n";
}

std::array<std::uint8_t, kLogLinesRequestSize> encode_log_lines_request(
    const LogLinesRequest& request);
// Refuses a wrong size or magic, an unknown kind, a bad window, a size past
// 2 x kMaxEngineLogBytes, a budget of 0 or past kMaxLogAnswerBytes.
Result<LogLinesRequest> decode_log_lines_request(std::span<const std::uint8_t> bytes);

std::array<std::uint8_t, kLogLinesAnswerSize> encode_log_lines_answer(const LogLinesAnswer& answer);
// Refuses a wrong size or magic, nonzero padding or unused ranges, an enum
// or a flag out of range, a range not inside the `size` bytes read or out
// of order, a group line without `continued` or outside the file, a cut
// that is not one line's head.
Result<LogLinesAnswer> decode_log_lines_answer(std::span<const std::uint8_t> bytes,
                                               std::size_t size);

}  // namespace hb
