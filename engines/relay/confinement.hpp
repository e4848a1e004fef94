// The engine relay's seccomp filter: what a byte pump between sockets needs
// and nothing else, loaded by the sandbox's own loader
// (sandbox/seccomp_policy.hpp). No open or openat (it opens no file), no
// exec, no new process, writes only to fd 2; the sockets it makes are unix
// stream sockets. Anything else kills the relay.
#pragma once

#include <sys/types.h>

#include <vector>

#include "ipc/result.hpp"
#include "sandbox/seccomp_policy.hpp"

namespace hb::relay {

// The policy for a relay listening on `listening`, as process `self`; the
// sanitizer runtime's extras only when `sanitizer_runtime`.
std::vector<sandbox::Allowance> relay_policy(int listening, pid_t self,
                                             bool sanitizer_runtime = sandbox::sanitizer_build());

// Loads relay_policy into this process (no_new_privs set too).
Result<void> confine_relay(int listening);

}  // namespace hb::relay
