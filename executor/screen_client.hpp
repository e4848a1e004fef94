// The build-input screen, run in the sandbox: a fresh `hostbridge-parser
// --screen` (locked down as the request parser is) reads the Containerfile
// through the fd we opened and answers a fixed-size verdict
// (ipc/screen_wire.hpp). The executor never parses a Containerfile itself.
#pragma once

#include <string>

#include "ipc/result.hpp"
#include "ipc/screen_wire.hpp"

namespace hb::exec {

// Screens the file open at `fd` (read from its current offset). An error
// means the screen could not answer (crash, hang, garbage): the build is
// refused then, as for a refusal.
Result<ScreenVerdict> screen_in_sandbox(const std::string& parser_path, int fd);

}  // namespace hb::exec
