// The parser's lockdown: after lock_down() returns, the process can read
// from fds it already holds, talk on its socket, allocate memory and exit.
// Nothing else. See SECURITY.md for each step and why.
#pragma once

#include "ipc/result.hpp"

namespace hb::sandbox {

struct LockdownReport {
    bool changed_uid = false;      // started as root, now 65534
    bool new_namespaces = false;   // user/net/ipc/mount unshared
};

// In order: close every fd but 0-2 and `socket_fd`; rlimits; drop to
// 65534 when root; unshare namespaces where the kernel allows; clear all
// capabilities (bounding set too); no_new_privs; not dumpable; seccomp
// allowlist with default KILL_PROCESS. Returns an error (and the process
// must then exit) if any mandatory step fails; namespaces are best effort.
Result<LockdownReport> lock_down(int socket_fd);

}  // namespace hb::sandbox
