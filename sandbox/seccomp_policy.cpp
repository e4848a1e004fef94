// The parser's syscall allowlist. Read it as a list: one syscall a line,
// with the reason it is there. Everything else kills the process.
#include "sandbox/seccomp_policy.hpp"

#include "sandbox/rlimits.hpp"

#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>

namespace hb::sandbox {
namespace {

// A syscall's number and its name, from one token.
#define HB_SYSCALL(name) SCMP_SYS(name), #name

scmp_arg_cmp arg_equals(unsigned arg, scmp_datum_t value) {
    return scmp_arg_cmp{arg, SCMP_CMP_EQ, value, 0};
}
// (argument & mask) == 0: none of the bits in `mask` set.
scmp_arg_cmp arg_lacks(unsigned arg, scmp_datum_t mask) {
    return scmp_arg_cmp{arg, SCMP_CMP_MASKED_EQ, mask, 0};
}
// (argument & mask) == mask: every bit in `mask` set.
scmp_arg_cmp arg_has(unsigned arg, scmp_datum_t mask) {
    return scmp_arg_cmp{arg, SCMP_CMP_MASKED_EQ, mask, mask};
}

struct ContextDeleter {
    void operator()(scmp_filter_ctx ctx) const { seccomp_release(ctx); }
};
using Context = std::unique_ptr<void, ContextDeleter>;

Error seccomp_error(const std::string& what, int rc) {
    return make_error("seccomp: " + what + ": " + std::strerror(-rc));
}

}  // namespace

PolicyBuilder& PolicyBuilder::allow(int nr, std::string_view name, std::string_view reason,
                                    std::vector<scmp_arg_cmp> conditions) {
    list_.push_back(Allowance{nr, name, std::move(conditions), reason});
    return *this;
}

PolicyBuilder& PolicyBuilder::allow_exit() {
    return allow(HB_SYSCALL(exit_group),
                 "the end of the process: return from main, exit(), _exit()");
}

PolicyBuilder& PolicyBuilder::allow_memory() {
    // W^X: no new executable memory. Anonymous memory only: the parser maps no file.
    const scmp_arg_cmp no_exec = arg_lacks(2, PROT_EXEC);
    return allow(HB_SYSCALL(brk), "malloc grows the main heap")
        .allow(HB_SYSCALL(mmap), "malloc of large blocks; anonymous and never PROT_EXEC",
               {no_exec, arg_has(3, MAP_ANONYMOUS)})
        .allow(HB_SYSCALL(munmap), "free of large blocks")
        .allow(HB_SYSCALL(mremap), "realloc of large blocks (keeps the protection it had)");
}

PolicyBuilder& PolicyBuilder::allow_read_inherited_fds() {
    return allow(HB_SYSCALL(read), "the request body, from the fd the executor sent")
        .allow(HB_SYSCALL(close), "drop each request fd once read");
}

PolicyBuilder& PolicyBuilder::allow_socket_io(int socket_fd) {
    const auto sock = static_cast<scmp_datum_t>(socket_fd);
    return allow(HB_SYSCALL(recvmsg), "startup message and (name, fd) requests; this socket only",
                 {arg_equals(0, sock)})
        .allow(HB_SYSCALL(sendmsg), "the fixed-size verdict; this socket only",
               {arg_equals(0, sock)});
}

PolicyBuilder& PolicyBuilder::allow_stderr_write() {
    return allow(HB_SYSCALL(write), "diagnostics on fd 2 (the executor's stderr) only",
                 {arg_equals(0, 2)})
        .allow(HB_SYSCALL(writev), "glibc's fatal-error messages (malloc corruption) on fd 2 only",
               {arg_equals(0, 2)});
}

PolicyBuilder& PolicyBuilder::allow_once_wake() {
    // glibc's pthread_once wakes waiters unconditionally when an init
    // finishes (the unwinder's, on the first C++ throw). Wake only, private
    // only: with one thread nobody waits, and no other futex op is reachable.
    return allow(HB_SYSCALL(futex), "pthread_once's wake after a one-time init (first throw)",
                 {arg_equals(1, FUTEX_WAKE_PRIVATE)});
}

PolicyBuilder& PolicyBuilder::allow_self_abort(pid_t self) {
    // abort(), std::terminate, assert, _FORTIFY_SOURCE and the stack
    // protector all end in raise(SIGABRT). The process dies either way;
    // allowing exactly this keeps "crashed" (SIGABRT) apart from "tried a
    // forbidden syscall" (SIGSYS) for whoever reads the exit status.
    const auto pid = static_cast<scmp_datum_t>(self);
    return allow(HB_SYSCALL(rt_sigprocmask), "raise() blocks signals around tgkill; own mask only")
        .allow(HB_SYSCALL(getpid), "raise() asks for its own pid")
        .allow(HB_SYSCALL(gettid), "raise() asks for its own tid")
        .allow(HB_SYSCALL(tgkill), "raise(SIGABRT): SIGABRT to itself, nothing else",
               {arg_equals(0, pid), arg_equals(1, pid), arg_equals(2, SIGABRT)});
}

PolicyBuilder& PolicyBuilder::allow_sanitizer_runtime(int socket_fd) {
    // Only in -fsanitize=address,undefined builds (tests and CI), never in
    // a release parser. Found by strace of the sanitized sandbox tests.
    allow(HB_SYSCALL(pipe2), "UBSan vptr check: the pipe of its memory probe (no flags)",
          {arg_equals(1, 0)});
    // UBSan's vptr check probes memory by writing it into that pipe
    // (IsAccessibleMemoryRange). The pipe can only be a free fd below
    // RLIMIT_NOFILE: never 0-2 or the socket, which stay unwritable here too.
    const auto limit = static_cast<int>(nofile_limit_for(socket_fd));
    for (int fd = 3; fd < limit; ++fd) {
        if (fd == socket_fd) continue;
        allow(HB_SYSCALL(write), "UBSan vptr check: the probed bytes, into its pipe",
              {arg_equals(0, static_cast<scmp_datum_t>(fd))});
    }
    return allow(HB_SYSCALL(sigaltstack), "ASan asks where its signal stack is (query only)",
                 {arg_equals(0, 0)})
        .allow(HB_SYSCALL(madvise), "ASan's allocator: no huge pages in a new region",
               {arg_equals(2, MADV_NOHUGEPAGE)})
        .allow(HB_SYSCALL(madvise), "ASan's allocator: keep a new region out of core dumps",
               {arg_equals(2, MADV_DONTDUMP)})
        .allow(HB_SYSCALL(ioctl), "an ASan report asks whether fd 2 is a terminal (colour)",
               {arg_equals(0, 2), arg_equals(1, TCGETS)});
}

PolicyBuilder& PolicyBuilder::allow_stdout_write() {
    return allow(HB_SYSCALL(write), "the answer on fd 1 (the caller's pipe) only",
                 {arg_equals(0, 1)});
}

PolicyBuilder& PolicyBuilder::allow_look_up() {
    // No flag that writes, creates or truncates: the pins are looked up,
    // never changed. openat2's flags are in memory the filter cannot read:
    // SECURITY.md says what that leaves.
    // glibc's __O_TMPFILE holds O_DIRECTORY too: only its own bit here.
    const scmp_datum_t writes =
        O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND | (__O_TMPFILE & ~O_DIRECTORY);
    return allow(HB_SYSCALL(openat), "open a dir or file to look at it (O_PATH, O_RDONLY) only",
                 {arg_lacks(2, writes)})
        .allow(HB_SYSCALL(openat2), "a bind source beneath the checkout, a target in a container")
        .allow(HB_SYSCALL(close), "drop what it opened")
        .allow(HB_SYSCALL(fstat), "device and inode of what it opened")
        .allow(HB_SYSCALL(newfstatat), "glibc's fstat (AT_EMPTY_PATH)")
        .allow(HB_SYSCALL(statx), "glibc's fstat on some kernels")
        .allow(HB_SYSCALL(fstatfs), "the pins' root is the tmpfs just mounted")
        .allow(HB_SYSCALL(fcntl), "fdopendir asks how the dir fd was opened",
               {arg_equals(1, F_GETFL)})
        .allow(HB_SYSCALL(fcntl), "fdopendir marks the dir fd close-on-exec",
               {arg_equals(1, F_SETFD)})
        .allow(HB_SYSCALL(getdents64), "the pins' host-side dir must be empty")
        .allow(HB_SYSCALL(geteuid), "the pins' host-side dir must be this user's");
}

PolicyBuilder& PolicyBuilder::allow_pin_mounts() {
    return allow(HB_SYSCALL(umount2), "detach the last command's tmpfs, never following a link",
                 {arg_equals(1, MNT_DETACH | UMOUNT_NOFOLLOW)})
        .allow(HB_SYSCALL(mount), "a fresh tmpfs for the pins (nosuid, nodev, noexec)",
               {arg_equals(3, MS_NOSUID | MS_NODEV | MS_NOEXEC)})
        .allow(HB_SYSCALL(mount), "bind a source, by its fd, onto its name in that tmpfs",
               {arg_equals(3, MS_BIND | MS_REC)})
        .allow(HB_SYSCALL(mkdirat), "the pins' host-side dir (0500)", {arg_equals(2, 0500)})
        .allow(HB_SYSCALL(mkdirat), "an empty dir in the tmpfs to bind a dir onto (0700)",
               {arg_equals(2, 0700)})
        .allow(HB_SYSCALL(mknodat), "an empty file in the tmpfs to bind a file onto",
               {arg_equals(2, S_IFREG | 0600)})
        .allow(HB_SYSCALL(fchmod), "the pins' host-side dir back to 0500", {arg_equals(1, 0500)});
}

PolicyBuilder& PolicyBuilder::allow_enter_mount_namespace() {
    return allow(HB_SYSCALL(setns), "check-pins: the container's mount namespace, nothing else",
                 {arg_equals(1, CLONE_NEWNS)});
}

bool sanitizer_build() {
#if defined(__SANITIZE_ADDRESS__) || defined(HB_SANITIZE_BUILD)
    return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
    return true;
#else
    return false;
#endif
#else
    return false;
#endif
}

std::vector<Allowance> parser_policy(int socket_fd, pid_t self, bool sanitizer_runtime) {
    PolicyBuilder policy;
    policy.allow_exit()
        .allow_memory()
        .allow_read_inherited_fds()
        .allow_socket_io(socket_fd)
        .allow_stderr_write()
        .allow_once_wake()
        .allow_self_abort(self);
    if (sanitizer_runtime) policy.allow_sanitizer_runtime(socket_fd);
    return policy.allowances();
}

std::vector<Allowance> pin_policy(pid_t self, bool sanitizer_runtime) {
    PolicyBuilder policy;
    policy.allow_exit()
        .allow_memory()
        .allow_stdout_write()
        .allow_stderr_write()
        .allow_look_up()
        .allow_pin_mounts()
        .allow_enter_mount_namespace()
        .allow_once_wake()
        .allow_self_abort(self);
    if (sanitizer_runtime) policy.allow_sanitizer_runtime(2);
    return policy.allowances();
}

Result<void> install_seccomp(const std::vector<Allowance>& allowances) {
    // seccomp_init adds the native architecture only: a syscall made
    // through another ABI (int 0x80 on x86_64) meets the bad-arch action.
    Context ctx(seccomp_init(SCMP_ACT_KILL_PROCESS));
    if (!ctx) return make_error("seccomp_init failed");
    int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
    if (rc != 0) return seccomp_error("bad-arch action", rc);
    rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_NNP, 1);
    if (rc != 0) return seccomp_error("no_new_privs attribute", rc);

    for (const Allowance& a : allowances) {
        // libseccomp compares each argument at most once per rule; a second
        // comparison of the same argument builds a wrong filter, silently.
        unsigned seen = 0;
        for (const scmp_arg_cmp& c : a.conditions) {
            if ((seen & (1U << c.arg)) != 0) {
                return make_error("seccomp: rule for " + std::string(a.name) +
                                  " compares one argument twice; split it into two rules");
            }
            seen |= 1U << c.arg;
        }
        rc = seccomp_rule_add_array(ctx.get(), SCMP_ACT_ALLOW, a.syscall,
                                    static_cast<unsigned>(a.conditions.size()),
                                    a.conditions.empty() ? nullptr : a.conditions.data());
        if (rc != 0) return seccomp_error("rule for " + std::string(a.name), rc);
    }
    rc = seccomp_load(ctx.get());
    if (rc != 0) return seccomp_error("load", rc);
    return {};
}

}  // namespace hb::sandbox
