// The engine's times: container start times in `inspect` (read in the
// sandbox, parser/container_inspect.cpp) and the stamp in front of each
// `logs --timestamps` line (read in the sandbox too, parser/log_lines.cpp).
// One reader for both, and the one writer (ipc/rfc3339_format.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace hb {

// "2026-12-02T20:57:25.602731173Z" (or with a +hh:mm offset) as
// nanoseconds since the epoch; 0 for a time before 1970 (podman writes
// year 1 for "never") or text that is not one.
std::int64_t rfc3339_ns(std::string_view text);

// `ns` (>= 0) in UTC with nine digits: "2026-12-02T20:57:25.602731173Z".
std::string rfc3339_utc_ns(std::int64_t ns);

}  // namespace hb
