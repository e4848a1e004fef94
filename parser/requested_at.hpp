// requested_at: exactly `YYYY-MM-DDTHH:MM:SSZ` (RFC 3339, UTC, no fractions,
// no offsets), naming a real calendar instant.
#pragma once

#include <cstdint>
#include <string_view>

namespace hb::parser {

// Seconds since the epoch, or hb::kNoTime when the text is not exactly that
// form or names no real instant (2026-02-30, 2025-02-29, 24:00:00, a leap
// second 23:59:60: POSIX time has none). Pure arithmetic: no locale, no TZ.
std::int64_t parse_requested_at(std::string_view text);

}  // namespace hb::parser
