#include "sandbox/namespaces.hpp"

#include <sched.h>

#include <cerrno>

namespace hb::sandbox {

int try_unshare_namespaces() {
    // A user namespace of our own lets an unprivileged process create the
    // others. Inside: no network interfaces but a downed loopback, no SysV
    // IPC shared with the host, a private copy of the mount table.
    constexpr int kFlags = CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWNS;
    return ::unshare(kFlags) == 0 ? 0 : errno;
}

}  // namespace hb::sandbox
