// A windowed `logs`' line choice, made in the sandbox: a fresh
// `hostbridge-parser --log-lines` (locked down as the request parser is)
// reads the engine's `logs --timestamps` output through the fd we attach
// and answers byte ranges and a cursor (ipc/log_lines_wire.hpp). The answer
// is untrusted: every range must lie in the file, the text fit the budget
// and the cursor move forward, else the request fails with a sentence.
// Only then are the ranges read, here, with pread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ipc/log_lines_wire.hpp"
#include "ipc/result.hpp"

namespace hb::exec {

// An engine view: `size` bytes written from offset 0 of `fd`; `cut`: the
// engine was stopped at kMaxEngineLogBytes, so more may follow.
struct LogView {
    int fd = -1;
    std::size_t size = 0;
    bool cut = false;
};

struct LogSelection {
    std::string text;   // the chosen lines, each with its stamp and newline, oldest first
    LogCursor cursor;   // after the last chosen line; the window's since (or 0:0) when none
    bool more = false;  // complete lines after `cursor` were left out
    // The view's line `group` (the first stamped cursor.ns) follows a piece
    // stamped cursor.ns: count_pieces() must count that piece too.
    bool continued = false;
    LogRange group;
    std::string untimed;  // the engine's own lines (no stamp), for the executor's log
};

// The lines of `view` the window answers with, at most `budget` bytes.
Result<LogSelection> select_in_sandbox(const std::string& parser_path, const LogView& view,
                                       const LogWindow& window,
                                       std::size_t budget = kMaxLogAnswerBytes);

// In `view` (from `ns` on), how many lines stamped `ns` come before the
// line `group` of `earlier` (an earlier view): nullopt when it is not there.
Result<std::optional<std::uint32_t>> pieces_in_sandbox(const std::string& parser_path,
                                                       const LogView& earlier, LogRange group,
                                                       const LogView& view, std::int64_t ns);

}  // namespace hb::exec
