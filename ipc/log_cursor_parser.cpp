// The parser's half of the logs window's text forms (ipc/log_cursor.hpp): the
// `lines` the agent's request carries, read by the parser and checked by the
// agent's client before it writes a request.
#include "ipc/log_cursor.hpp"
#include "ipc/wire.hpp"

namespace hb {

std::optional<std::uint16_t> parse_lines(std::string_view text) {
    const auto lines = parse_decimal(text, kMaxLogLines);
    if (!lines || *lines == 0) return {};
    return static_cast<std::uint16_t>(*lines);
}

}  // namespace hb
