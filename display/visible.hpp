// The one rule for text the bridge did not write itself (file content,
// request and file names, response and audit fields, command output) on its
// way to a person: the admin tool, `hostbridge request` and the MCP server
// show it only through these functions. Stored bytes and piped output stay
// as they were written (docs/PROTOCOL.md, "What a person is shown").
//
// Shown as an escape (`\x1b`, `\u202e`, `\u3000`, `\xff`), never replaced
// by `?` (that loses evidence), never passed through: every byte or
// character that could move the cursor, change the terminal's state,
// reorder or hide text (C0, DEL, C1, bytes that are not UTF-8,
// bidirectional controls, zero-width and other invisible formatting
// characters), draw blank columns (Unicode blanks: NBSP, U+2000..U+200A,
// U+3000, U+2800, the Hangul fillers) or draw over its neighbour (combining
// marks, display/marks.hpp). A run of four or more of one escape is shown
// once with its count (`\u3000{x30000}`), so a flood cannot push a line off
// the screen.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace hb::display {

// One field on one line: newline and tab are escaped too (`\n`, `\t`).
std::string visible(std::string_view text);

// One cell of a table: visible(), and no run of blanks (a space after a
// space or a Unicode blank is written `\x20`), so text from the agent
// cannot line up a row of its own; cut at `width` bytes (0: no limit), the
// cut marked by a trailing "..." within the width.
std::string table_cell(std::string_view text, std::size_t width = 0);

// Several lines (a diff, a file): a newline ends a line and a tab stays as
// it is; everything else as visible() (a lone `\r` is shown as `\r`).
std::string visible_text(std::string_view text);

// Whether `text` holds nothing that hides or rewrites text: valid UTF-8
// with no control byte but tab and newline and no bidirectional or
// zero-width character. approve shows a file that is not as a hex dump of
// its changed bytes as well; blanks and combining marks are only escaped.
bool is_plain_text(std::string_view text);

// A JSON line with DEL, C1, bidirectional, zero-width, blank and combining
// characters written as \uXXXX escapes: the same JSON value, safe on a
// terminal.
std::string visible_json(std::string_view line);

// A word of a fixed vocabulary (a state name): itself when `known` holds
// it; anything else as `?"..."`, table_cell() with a quote escaped, cut at
// 64 bytes, so that it never passes for a word nor reads as more text.
std::string word(std::string_view text, std::span<const std::string_view> known);

}  // namespace hb::display
