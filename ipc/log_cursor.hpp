// The text forms of a logs request's window (docs/PROTOCOL.md, "Following
// logs"): `lines` and the cursor `since` carries. The executor writes a
// cursor into an answer, the parser reads it back from the next request and
// the held record stores it: one encoder, one decoder, each accepting
// exactly what the other produces.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hb {

// A point in a service's log: after `seen` lines stamped `ns` (nanoseconds
// since the epoch, as the engine stamped them).
struct LogCursor {
    std::int64_t ns = 0;
    std::uint32_t seen = 0;
    bool operator==(const LogCursor&) const = default;
};

// "NS:SEEN", both decimal without leading zeros, NS >= 0, SEEN <= kMaxCursorSeen.
std::string format_cursor(LogCursor cursor);
// Exactly what format_cursor writes; nullopt for anything else.
std::optional<LogCursor> parse_cursor(std::string_view text);
// A decimal without sign or leading zero ("0" itself allowed), at most
// `max`; nullopt on anything else, overflow included. Both text forms are
// read with it.
std::optional<std::uint64_t> parse_decimal(std::string_view text, std::uint64_t max);
// `lines`: "1".."1000" (kMaxLogLines), decimal without leading zeros.
std::optional<std::uint16_t> parse_lines(std::string_view text);  // ipc/log_cursor_parser.cpp

}  // namespace hb
