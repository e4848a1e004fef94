// Which of a service's log lines a windowed `logs` answers with, and the
// cursor after them (docs/PROTOCOL.md, "Following logs"), read in the
// sandbox (`hostbridge-parser --log-lines`, docs/PARSER.md). Pure: it reads
// the engine's `logs --timestamps` output, where every line starts with the
// engine's own stamp (a piece written without a newline is continued on the
// same line, after its own stamp, so a line's first word is always the
// engine's). Of the rest of a line, written by the agent's container, it
// reads nothing but where it ends. It answers byte ranges of the output,
// which the executor reads itself (engines/podman/log_lines_client.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ipc/log_cursor.hpp"
#include "ipc/log_lines_wire.hpp"
#include "ipc/wire.hpp"

namespace hb::parser {

struct LogSelection {
    // The chosen lines, each with its stamp and newline, oldest first, as
    // ranges of the output (lines apart where the engine's own lines fall
    // between them).
    std::vector<LogRange> text;
    // Nonzero: the one line chosen was longer than the budget (or cut by
    // the read limit); `text` is its head and this its whole size, and the
    // answer ends in log_cut_note(cut - head).
    std::size_t cut = 0;
    LogCursor cursor;   // after the last chosen line; the window's since (or 0:0) when none
    bool more = false;  // complete lines after `cursor` were left out
    // The line before the first line stamped cursor.ns carries a piece
    // stamped cursor.ns (written without a newline, ended later): the next
    // request's view, from cursor.ns on, shows that piece as a line of its
    // own before `group_first` (this view's first line stamped cursor.ns),
    // and cursor.seen must count it too (pieces_before).
    bool continued = false;
    LogRange group_first;
    // Lines without a stamp (the engine's own warnings): at most
    // kMaxLogUntimedBytes in at most kMaxLogUntimedRanges runs.
    std::vector<LogRange> untimed;
};

// `output`: what `$ENGINE logs --timestamps [--since T]` printed, a view of
// the log from an instant on (the engine prints a piece stamped before T
// not at all, and one from T on as the start of a line); `cut`: it was
// stopped at the read limit, so more may follow. With window.since the
// lines after the cursor, from the oldest, else the newest; at most
// window.lines (when given) and `budget` bytes; a line alone longer than
// `budget` is cut and says so. Only complete lines, but for one: a view cut
// before the end of its first line after the cursor answers that line's
// head, so a line longer than the read limit cannot stop the log.
LogSelection select_lines(std::string_view output, bool cut, const LogWindow& window,
                          std::size_t budget);

// The answer's text as the executor reads it from the ranges: the ranges'
// bytes, then the cut note. For the tests, the fuzzer and the benchmark.
std::string selected_text(std::string_view output, const LogSelection& selection);

// In `view` (the engine's view from `ns` on), how many complete lines
// stamped `ns` come before the line `group_first`; nullopt when it is not
// there. Lines finished after the view `group_first` came from are never
// counted: they follow it.
std::optional<std::uint32_t> pieces_before(std::string_view view, std::int64_t ns,
                                           std::string_view group_first);

// The engine's stamp at the start of `line`, in ns since the epoch; 0 when
// the line has none.
std::int64_t line_stamp(std::string_view line);

// One `--log-lines` request on the file's bytes: its answer (seq aside).
LogLinesAnswer answer_log_lines(std::string_view file, const LogLinesRequest& request);

}  // namespace hb::parser
