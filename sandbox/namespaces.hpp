// Fresh namespaces for the parser: best effort, the kernel may refuse.
#pragma once

namespace hb::sandbox {

// unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWNS), all
// or nothing. Returns 0 on success, else the errno (EPERM, EINVAL, ENOSPC
// where unprivileged user namespaces are disabled or exhausted). Must run
// after the uid change: the new user namespace belongs to whoever creates it.
int try_unshare_namespaces();

}  // namespace hb::sandbox
