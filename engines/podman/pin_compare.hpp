// The `check-pins` mode of hostbridge-pin (engines/podman/pin_main.cpp): the
// half of the post-start pin check (engines/podman/pin_check.hpp) that runs
// inside the engine's namespaces, by `podman unshare`, where the pins are
// mounted. The executor reads its answer back (parse_check_answer).
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "ipc/result.hpp"

namespace hb::exec {

// Inside the engine's namespaces: for each pair, whether the process `pid`'s
// mount namespace (entered with setns, so a chroot inside the container
// changes nothing) holds at the target, followed with no link, the inode
// now mounted at the source's pin under `run_dir`. One line per pair on
// `out`: "pinned I", "other I ..." or "unreadable I ...". Enters that
// namespace for good: run it in a process of its own (`check-pins`).
enum class AtTarget { Pinned, Other, Unreadable };
std::vector<AtTarget> compare_targets(const std::string& run_dir, pid_t pid,
                                      const std::vector<std::pair<std::string, std::string>>& binds,
                                      std::string& out);

// The `check-pins` mode (argv after "check-pins"): RUN_DIR PID (SOURCE
// TARGET)...; exit 0 when every target holds its pin, 1 when one does not
// or cannot be read (or `confine`, called once the arguments are checked
// and before anything is opened, failed), 2 for a malformed argument.
int run_check_pins(int argc, char** argv, Result<void> (*confine)());

}  // namespace hb::exec
