#include "ipc/log_cursor.hpp"

#include <limits>

#include "ipc/wire.hpp"

namespace hb {

std::optional<std::uint64_t> parse_decimal(std::string_view text, std::uint64_t max) {
    if (text.empty() || text.size() > 19 || (text.size() > 1 && text[0] == '0')) return {};
    std::uint64_t value = 0;
    for (const char c : text) {
        if (c < '0' || c > '9') return {};
        value = value * 10 + static_cast<std::uint64_t>(c - '0');  // 19 digits fit in u64
    }
    if (value > max) return {};
    return value;
}

std::string format_cursor(LogCursor cursor) {
    return std::to_string(cursor.ns) + ":" + std::to_string(cursor.seen);
}

std::optional<LogCursor> parse_cursor(std::string_view text) {
    const std::size_t colon = text.find(':');
    if (colon == std::string_view::npos) return {};
    const auto ns =
        parse_decimal(text.substr(0, colon),
                      static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()));
    const auto seen = parse_decimal(text.substr(colon + 1), kMaxCursorSeen);
    if (!ns || !seen) return {};
    return LogCursor{static_cast<std::int64_t>(*ns), static_cast<std::uint32_t>(*seen)};
}

}  // namespace hb
