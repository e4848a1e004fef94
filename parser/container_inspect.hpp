// Reads the engine's `container inspect` JSON (podman 4.3 or docker) into
// fixed records (ipc/inspect_wire.hpp), in the sandboxed parser process
// (`hostbridge-parser --inspect`): the JSON carries text the agent chose,
// which never reaches the executor. Pure: no I/O.
#pragma once

#include <cstdint>
#include <span>

#include "ipc/inspect_wire.hpp"

namespace hb::parser {

// At most kMaxInspectContainers records, in the JSON's order; `total` counts
// them all. Only `request`'s project and services are matched: the labels
// are compared, never copied.
InspectAnswer read_container_inspect(std::span<const std::uint8_t> json,
                                     const InspectRequest& request);

// "2026-12-02T20:57:25.602731173Z" (or with a +hh:mm offset) as
// nanoseconds since the epoch; 0 for a time before 1970 (podman writes
// year 1 for "never") or text that is not one.
std::int64_t rfc3339_ns(std::string_view text);

}  // namespace hb::parser
