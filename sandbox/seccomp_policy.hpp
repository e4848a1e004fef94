// The parser's seccomp allowlist, as data, and the code that loads it; the
// pin binary's (engines/podman/pin_main.cpp) is built from the same parts.
//
// Composable allowances in the manner of sandbox2's PolicyBuilder: each
// adds the syscalls one capability needs, every syscall on its own line
// with its reason (seccomp_policy.cpp). Anything not listed kills the
// process (SCMP_ACT_KILL_PROCESS); so does any non-native architecture.
#pragma once

#include <seccomp.h>
#include <sys/types.h>

#include <string_view>
#include <vector>

#include "ipc/result.hpp"

namespace hb::sandbox {

// One allowed syscall: the native syscall number, the argument conditions
// that must all hold (none: any arguments), and why the parser needs it.
// Each argument may appear in at most one condition (a libseccomp rule);
// several allowances for one syscall are alternatives.
struct Allowance {
    int syscall = 0;
    std::string_view name;
    std::vector<scmp_arg_cmp> conditions;
    std::string_view reason;
};

class PolicyBuilder {
  public:
    PolicyBuilder& allow_exit();                            // return from main, _exit
    PolicyBuilder& allow_memory();                          // malloc/new; never executable memory
    PolicyBuilder& allow_read_inherited_fds();              // read and close what is already open
    PolicyBuilder& allow_socket_io(int socket_fd);          // the executor's socket, nothing else
    PolicyBuilder& allow_stderr_write();                    // diagnostics on fd 2 only
    PolicyBuilder& allow_once_wake();                       // pthread_once ends with a futex wake
    PolicyBuilder& allow_self_abort(pid_t self);            // abort() ends in SIGABRT, not SIGSYS
    PolicyBuilder& allow_sanitizer_runtime(int socket_fd);  // only in -fsanitize builds
    // hostbridge-pin's (engines/podman/bind_pin.hpp, pin_compare.hpp):
    PolicyBuilder& allow_stdout_write();  // its answer on fd 1 only
    PolicyBuilder& allow_look_up();       // open to look (O_PATH, read), stat, list; no write
    PolicyBuilder& allow_pin_mounts();    // the pins' tmpfs, its empty names, the binds
    PolicyBuilder& allow_enter_mount_namespace();  // setns(CLONE_NEWNS): check-pins

    [[nodiscard]] const std::vector<Allowance>& allowances() const { return list_; }

  private:
    PolicyBuilder& allow(int nr, std::string_view name, std::string_view reason,
                         std::vector<scmp_arg_cmp> conditions = {});
    std::vector<Allowance> list_;
};

// True in a build with AddressSanitizer (and UBSan beside it), whose
// runtime needs a few more syscalls; see allow_sanitizer_runtime().
bool sanitizer_build();

// The parser's whole policy: exactly the allowances above, for the socket
// on `socket_fd` and the process `self` (its pid, which is also its only
// tid); the sanitizer runtime's extras only when `sanitizer_runtime`.
std::vector<Allowance> parser_policy(int socket_fd, pid_t self,
                                     bool sanitizer_runtime = sanitizer_build());

// hostbridge-pin's whole policy, both modes: look up and stat files, make
// the pins (mounts, empty names in its own tmpfs), enter a mount
// namespace, write fds 1 and 2; never exec, a socket, a write to a file,
// an unlink, a signal to another process.
std::vector<Allowance> pin_policy(pid_t self, bool sanitizer_runtime = sanitizer_build());

// Builds the filter (native architecture only; default and bad-arch
// action KILL_PROCESS; NO_NEW_PRIVS set) and loads it into this process.
Result<void> install_seccomp(const std::vector<Allowance>& allowances);

}  // namespace hb::sandbox
