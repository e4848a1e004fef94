// fd hygiene shared by every process that forks: the parser's lockdown, the
// executor's parser client and runner, the admin tool's process runner.
#pragma once

#include "ipc/result.hpp"

namespace hb::sandbox {

// What happens to each fd: closed now, or marked close-on-exec (so a pipe
// that reports an exec failure stays usable until the execve).
enum class FdAction { Close, CloseOnExec };

// Closes every fd >= 3 except `keep` (-1: keep none). Uses close_range(2),
// falling back to walking /proc/self/fd where the kernel lacks it.
// Safe in a forked child: on success nothing is allocated (only building an
// error allocates, so a child should _exit on failure without reading it).
Result<void> close_fds_from_3(int keep = -1, FdAction action = FdAction::Close);

// The fallback on its own (getdents64 on /proc/self/fd, a stack buffer),
// exposed so the tests exercise it on a kernel that has close_range.
Result<void> close_fds_by_proc_walk(int keep = -1, FdAction action = FdAction::Close);

}  // namespace hb::sandbox
