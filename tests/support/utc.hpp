#pragma once
// A request's time as the protocol writes it (docs/PROTOCOL.md): the name's
// stamp (20261129T080000Z) or `requested_at` (2026-11-29T08:00:00Z), both
// from the host's own formatter (ipc/sys.hpp, format_utc).

#include <algorithm>
#include <ctime>
#include <string>

#include "ipc/sys.hpp"

namespace hb::test {

inline std::string utc(std::time_t t, bool rfc3339) {
    std::string text = sys::format_utc(static_cast<std::int64_t>(t));
    if (!rfc3339) std::erase_if(text, [](char c) { return c == '-' || c == ':'; });
    return text;
}

}  // namespace hb::test
