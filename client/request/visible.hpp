// The one way the admin tool shows text it did not write itself (file
// content, request names, audit fields, command output) to a person: every
// byte or character that could move the cursor, change the terminal's state,
// or reorder or hide text becomes a visible escape (`\x1b`, `\u202e`). Never
// replaced by `?` (that loses evidence), never passed through.
#pragma once

#include <string>
#include <string_view>

namespace hb::client {

// One field on one line: newline and tab are escaped too (`\n`, `\t`).
std::string visible(std::string_view text);

// One cell of a table: visible(), and no run of spaces (every space after
// another is written `\x20`), so text from the agent cannot line up a row
// of its own; cut at `width` bytes (0: no limit), the cut marked by a
// trailing "..." within the width.
std::string table_cell(std::string_view text, std::size_t width = 0);

// Several lines (a diff, a file): a newline ends a line and a tab stays as
// it is; everything else as visible() (a lone `\r` is shown as `\r`).
std::string visible_text(std::string_view text);

// Whether `text` shows as itself: valid UTF-8 with no control byte but tab
// and newline and no bidirectional or zero-width character. approve shows
// a file that is not as a hex dump.
bool is_plain_text(std::string_view text);

// A JSON line with DEL, C1, bidirectional and zero-width characters written
// as \uXXXX escapes: the same JSON value, safe on a terminal.
std::string visible_json(std::string_view line);

}  // namespace hb::client
