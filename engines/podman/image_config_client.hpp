// The image-config reader, run in the sandbox: a fresh `hostbridge-parser
// --image-config` (locked down as the request parser is) walks a base image
// saved as a docker-archive tar, through the fd we attach, to its config
// and answers how many ONBUILD triggers it holds (ipc/image_config_wire.hpp).
// The executor reads neither the tar nor the JSON: both are the engine's
// and the image author's.
#pragma once

#include <cstddef>
#include <string>

#include "ipc/result.hpp"

namespace hb::exec {

// Reads the saved image open at `fd` (from its current offset). An error means
// the reader could not answer (crash, hang, garbage) or refused the config:
// the caller refuses the build.
Result<std::size_t> image_triggers_in_sandbox(const std::string& parser_path, int fd);

}  // namespace hb::exec
