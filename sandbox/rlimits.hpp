// Resource limits of the locked-down parser.
#pragma once

#include <sys/resource.h>

#include "ipc/result.hpp"

namespace hb::sandbox {

// RLIMIT_NOFILE for a process whose highest open fd is `highest_fd`: the
// fds it holds plus room for the request fds that arrive by SCM_RIGHTS
// (the parser holds one at a time; a little slack, never hundreds).
rlim_t nofile_limit_for(int highest_fd);

// Lowers soft and hard limits (lowering never needs privilege): no core
// dumps, NOFILE as above, FSIZE 0, NPROC 0, MEMLOCK 0, MSGQUEUE 0. Also
// ignores SIGXFSZ, so a diagnostic written to a stderr that happens to be
// a regular file fails with EFBIG instead of killing the parser.
Result<void> apply_parser_rlimits(int highest_fd);

}  // namespace hb::sandbox
