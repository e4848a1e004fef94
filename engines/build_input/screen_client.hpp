// The build-input screen, run in the sandbox: a fresh `hostbridge-parser
// --screen` (locked down as the request parser is) reads the Containerfile
// through the fd we opened and answers a fixed-size verdict
// (ipc/screen_wire.hpp). The executor never parses a Containerfile itself.
#pragma once

#include <string>
#include <vector>

#include "ipc/result.hpp"
#include "ipc/screen_wire.hpp"

namespace hb::exec {

// Screens the file open at `fd` (read from its current offset); a FROM or
// COPY --from may name `allowed` (canonical, sorted, unique: common/config's
// build_allowed_images). An error means the screen could not answer (crash,
// hang, garbage) or the list does not fit the wire: the build is refused
// then, as for a refusal. `buildkit`: read as docker's BuildKit reads it
// (parser/containerfile_screen.hpp, Builder), else as buildah.
Result<ScreenVerdict> screen_in_sandbox(const std::string& parser_path,
                                        const std::vector<std::string>& allowed, int fd,
                                        bool buildkit);

}  // namespace hb::exec
