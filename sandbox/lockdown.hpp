// The parser's lockdown: after lock_down() returns, the process can read
// from fds it already holds, talk on its socket, allocate memory and exit.
// Nothing else. See docs/SANDBOX.md for each step and why.
#pragma once

#include "ipc/result.hpp"

namespace hb::sandbox {

struct LockdownReport {
    bool changed_uid = false;     // started as root, now 65534
    bool new_namespaces = false;  // user/net/ipc/mount unshared
    int namespaces_errno = 0;     // why unshare failed, when it did
    // False only when the process never held CAP_SETPCAP (not root, and no
    // user namespace of its own): the kernel then forbids shrinking the
    // bounding set. Harmless under no_new_privs with execve forbidden.
    bool bounding_set_cleared = false;
};

// In order: close every fd but 0-2 and `socket_fd`; rlimits; drop to
// 65534 when root; unshare namespaces where the kernel allows; clear all
// capabilities (bounding set too); no_new_privs; not dumpable; seccomp
// allowlist with default KILL_PROCESS. Returns an error (and the process
// must then exit) if any mandatory step fails; namespaces are best effort.
// Call it while the process has one thread.
Result<LockdownReport> lock_down(int socket_fd);

}  // namespace hb::sandbox
