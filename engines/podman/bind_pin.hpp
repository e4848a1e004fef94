// `hostbridge-pin pin PROJECT_DIR RUN_DIR SOURCE...`: the first step of
// every compose command that may start a container, when bridge.json has
// "pins" (common/config.hpp, BindPins). It runs inside rootless podman's own
// user and mount namespaces (`podman unshare`, whose pause process keeps
// them), where runc later resolves the rendered file's bind sources: it
// mounts a fresh tmpfs on <run_dir>/.hostbridge-binds and binds each source,
// opened with no link followed, onto its flat name there. A source swapped
// in the checkout afterwards changes nothing that is mounted (SECURITY.md,
// "bind sources are pinned"; docs/COMPOSE.md).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "ipc/result.hpp"

namespace hb::exec {

struct PinnedSource {
    std::string source;  // as given: "." or relative to the project dir
    dev_t dev = 0;       // of what is now mounted at the pin, checked equal
    ino_t ino = 0;       // to what the no-follow open found
};

// Replaces whatever was pinned before (a pin is made fresh for every
// command). `project_dir` and `run_dir` absolute; each source "." or a
// normal relative path. An error names the source and why; the pins made
// before it stay under the tmpfs, which the next pin replaces.
Result<std::vector<PinnedSource>> pin_bind_sources(const std::string& project_dir,
                                                   const std::string& run_dir,
                                                   const std::vector<std::string>& sources);

// The `pin` mode of hostbridge-pin (argv after "pin"): one line per pin on
// stdout; an error on stderr and exit 1; a malformed argument exit 2.
// `confine` is called once the arguments are checked and before anything
// is opened (engines/podman/pin_main.cpp's seccomp filter); its error is
// exit 1.
int run_pin(int argc, char** argv, Result<void> (*confine)());

}  // namespace hb::exec
