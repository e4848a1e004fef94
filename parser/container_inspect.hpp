// Reads the engine's `container inspect` JSON (podman 4.3 or docker) into
// fixed records (ipc/inspect_wire.hpp), in the sandboxed parser process
// (`hostbridge-parser --inspect`): the JSON carries text the agent chose,
// which never reaches the executor. Pure: no I/O.
#pragma once

#include <cstdint>
#include <span>

#include "ipc/inspect_wire.hpp"
#include "ipc/rfc3339.hpp"

namespace hb::parser {

// At most kMaxInspectContainers records, in the JSON's order; `total` counts
// them all. Only `request`'s project and services are matched: the labels
// are compared, never copied.
InspectAnswer read_container_inspect(std::span<const std::uint8_t> json,
                                     const InspectRequest& request);

// The start time is read with ipc/rfc3339.hpp (the executor reads log
// stamps with the same function).
using hb::rfc3339_ns;

}  // namespace hb::parser
