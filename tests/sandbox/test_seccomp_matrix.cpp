// issue 8, item 4: after lock_down(), each dangerous syscall kills the
// process with SIGSYS. Each case makes the real call with arguments that
// would be harmless (or fail cleanly) without the filter; the Control
// suite runs every case without lockdown and proves it is not SIGSYS
// there, so the SIGSYS below comes from the filter and nothing else.
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/keyctl.h>
#include <linux/openat2.h>
#include <linux/perf_event.h>
#include <linux/reboot.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/user.h>
#include <unistd.h>

#include <cctype>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "locked_child.hpp"

namespace hb::sandbox::test {
namespace {

// The x32 ABI marks its syscall numbers with this bit.
constexpr long kX32Bit = 0x40000000;

struct ForbiddenCase {
    const char* name;
    long (*attempt)();
    bool safe_without_filter = true;  // false: the Control suite skips it
};

// In a child that survives a process-creating call: leave at once.
long leave_if_child(long rc) {
    if (rc == 0) ::_exit(0);
    return rc;
}

alignas(4096) char g_page[4096];

long attempt_int80_getpid() {
    // The i386 ABI on x86_64: getpid is 20 there. Another architecture
    // token, so the filter's bad-arch action applies.
    long rc = 20;
    asm volatile("int $0x80" : "+a"(rc) : : "memory");
    return rc;
}

const std::vector<ForbiddenCase>& forbidden_cases() {
    static const std::vector<ForbiddenCase> cases = {
        // Files: the parser may not open anything.
        {"open", [] { return ::syscall(SYS_open, "/dev/null", O_RDONLY); }},
        {"openat", [] { return ::syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY); }},
        {"openat2",
         [] {
             open_how how{};
             how.flags = O_RDONLY;
             return ::syscall(SYS_openat2, AT_FDCWD, "/dev/null", &how, sizeof how);
         }},
        {"creat", [] { return ::syscall(SYS_creat, "/nonexistent-hb-dir/x", 0600); }},
        {"open_by_handle_at",
         [] { return ::syscall(SYS_open_by_handle_at, AT_FDCWD, nullptr, 0); }},
        {"memfd_create", [] { return ::syscall(SYS_memfd_create, "hb", 0); }},
        {"unlinkat", [] { return ::syscall(SYS_unlinkat, AT_FDCWD, "/nonexistent-hb-dir", 0); }},
        {"mknodat",
         [] {
             return ::syscall(SYS_mknodat, AT_FDCWD, "/nonexistent-hb-dir/x", S_IFIFO | 0600, 0);
         }},
        // Programs.
        {"execve",
         [] {
             const char* argv[] = {"/bin/true", nullptr};
             return ::syscall(SYS_execve, "/bin/true", argv, environ);
         }},
        {"execveat",
         [] {
             const char* argv[] = {"/bin/true", nullptr};
             return ::syscall(SYS_execveat, AT_FDCWD, "/bin/true", argv, environ, 0);
         }},
        // Network and other sockets.
        {"socket", [] { return ::syscall(SYS_socket, AF_UNIX, SOCK_STREAM, 0); }},
        {"socketpair",
         [] {
             int sv[2];
             return ::syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM, 0, sv);
         }},
        {"connect",
         [] {
             sockaddr_un addr{};
             addr.sun_family = AF_UNIX;
             std::strcpy(addr.sun_path, "/nonexistent-hb-socket");
             return ::syscall(SYS_connect, 3, &addr, sizeof addr);
         }},
        {"bind",
         [] {
             sockaddr_un addr{};
             addr.sun_family = AF_UNIX;
             return ::syscall(SYS_bind, 3, &addr, sizeof(sa_family_t));
         }},
        {"listen", [] { return ::syscall(SYS_listen, 3, 1); }},
        {"sendto on the socket", [] { return ::syscall(SYS_sendto, 3, "x", 1, 0, nullptr, 0); }},
        {"sendmsg on another fd",
         [] {
             msghdr msg{};
             return ::syscall(SYS_sendmsg, 0, &msg, 0);
         }},
        {"recvmsg on another fd",
         [] {
             msghdr msg{};
             return ::syscall(SYS_recvmsg, 0, &msg, MSG_DONTWAIT);
         }},
        {"write to fd 1", [] { return ::syscall(SYS_write, 1, "", 0); }},
        // The kernel reads fds as 32 bits: 2^32 + 2 is fd 2 to it, not to the filter.
        {"write to fd 2 spelled with high bits",
         [] { return ::syscall(SYS_write, (1L << 32) | 2, "", 0); }},
        {"ioctl (TIOCSTI and the like)",
         [] {
             int n = 0;
             return ::syscall(SYS_ioctl, 3, FIONREAD, &n);
         }},
        // Other processes.
        {"ptrace",
         [] {
             user_regs_struct regs{};
             return ::syscall(SYS_ptrace, PTRACE_GETREGS, ::getpid(), nullptr, &regs);
         }},
        {"process_vm_readv",
         [] { return ::syscall(SYS_process_vm_readv, ::getpid(), nullptr, 0, nullptr, 0, 0); }},
        {"process_vm_writev",
         [] { return ::syscall(SYS_process_vm_writev, ::getpid(), nullptr, 0, nullptr, 0, 0); }},
        {"kill", [] { return ::syscall(SYS_kill, ::getpid(), 0); }},
        {"tkill", [] { return ::syscall(SYS_tkill, ::gettid(), 0); }},
        {"tgkill with a signal other than SIGABRT",
         [] { return ::syscall(SYS_tgkill, ::getpid(), ::gettid(), 0); }},
        {"tgkill aimed at another process", [] { return ::syscall(SYS_tgkill, 1, 1, 0); }},
        {"pidfd_open", [] { return ::syscall(SYS_pidfd_open, ::getpid(), 0); }},
        {"pidfd_getfd", [] { return ::syscall(SYS_pidfd_getfd, -1, 0, 0); }},
        {"pidfd_send_signal", [] { return ::syscall(SYS_pidfd_send_signal, -1, 0, nullptr, 0); }},
        // New processes and namespaces.
        {"fork", [] { return leave_if_child(::syscall(SYS_fork)); }},
        {"vfork", [] { return leave_if_child(::syscall(SYS_vfork)); }, false},
        {"clone", [] { return leave_if_child(::syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0)); }},
        {"clone with new namespaces",
         [] {
             return leave_if_child(
                 ::syscall(SYS_clone, CLONE_NEWUSER | CLONE_NEWNET | SIGCHLD, 0, 0, 0, 0));
         }},
        {"clone3",
         [] {
             clone_args args{};
             args.exit_signal = SIGCHLD;
             return leave_if_child(::syscall(SYS_clone3, &args, sizeof args));
         }},
        {"unshare", [] { return ::syscall(SYS_unshare, 0); }},
        {"setns", [] { return ::syscall(SYS_setns, -1, 0); }},
        // Mounts.
        {"mount",
         [] { return ::syscall(SYS_mount, "none", "/nonexistent-hb-dir", "tmpfs", 0, nullptr); }},
        {"umount2", [] { return ::syscall(SYS_umount2, "/nonexistent-hb-dir", 0); }},
        {"pivot_root",
         [] { return ::syscall(SYS_pivot_root, "/nonexistent-hb-a", "/nonexistent-hb-b"); }},
        {"chroot", [] { return ::syscall(SYS_chroot, "/nonexistent-hb-dir"); }},
        // Kernel attack surface.
        {"bpf", [] { return ::syscall(SYS_bpf, BPF_MAP_CREATE, nullptr, 0); }},
        {"io_uring_setup", [] { return ::syscall(SYS_io_uring_setup, 1, nullptr); }},
        {"io_uring_enter", [] { return ::syscall(SYS_io_uring_enter, -1, 0, 0, 0, nullptr, 0); }},
        {"io_uring_register", [] { return ::syscall(SYS_io_uring_register, -1, 0, nullptr, 0); }},
        {"userfaultfd", [] { return ::syscall(SYS_userfaultfd, 0); }},
        {"keyctl",
         [] { return ::syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0); }},
        {"add_key", [] { return ::syscall(SYS_add_key, nullptr, nullptr, nullptr, 0, 0); }},
        {"request_key", [] { return ::syscall(SYS_request_key, nullptr, nullptr, nullptr, 0); }},
        {"perf_event_open", [] { return ::syscall(SYS_perf_event_open, nullptr, 0, -1, -1, 0); }},
        {"init_module", [] { return ::syscall(SYS_init_module, nullptr, 0, ""); }},
        {"finit_module", [] { return ::syscall(SYS_finit_module, -1, "", 0); }},
        {"reboot (bad magic)", [] { return ::syscall(SYS_reboot, 0, 0, 0, nullptr); }},
        {"seccomp",
         [] {
             unsigned action = SECCOMP_RET_KILL_PROCESS;
             return ::syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action);
         }},
        // Executable memory and the switches around it.
        {"mmap with PROT_EXEC",
         [] {
             return reinterpret_cast<long>(
                 ::mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
         }},
        {"mmap of a file",
         [] {
             return reinterpret_cast<long>(::mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE, 0, 0));
         }},
        {"mprotect",
         [] { return ::syscall(SYS_mprotect, g_page, sizeof g_page, PROT_READ | PROT_EXEC); }},
        {"pkey_mprotect",
         [] {
             return ::syscall(SYS_pkey_mprotect, g_page, sizeof g_page, PROT_READ | PROT_EXEC, -1);
         }},
        {"personality (READ_IMPLIES_EXEC)",
         [] { return ::syscall(SYS_personality, READ_IMPLIES_EXEC); }},
        {"prctl (PR_SET_DUMPABLE)",
         [] { return ::syscall(SYS_prctl, PR_SET_DUMPABLE, 1, 0, 0, 0); }},
        // Identity.
        {"setuid", [] { return ::syscall(SYS_setuid, ::getuid()); }},
        {"capset", [] { return ::syscall(SYS_capset, nullptr, nullptr); }},
        // Other ABIs.
        {"i386 ABI syscall (int 0x80)", [] { return attempt_int80_getpid(); }},
        {"x32 ABI syscall", [] { return ::syscall(kX32Bit | SYS_getpid); }},
    };
    return cases;
}

// "ioctl (TIOCSTI and the like)" -> "ioctl_TIOCSTI_and_the_like".
std::string case_name(const testing::TestParamInfo<ForbiddenCase>& info) {
    std::string name;
    for (const char* p = info.param.name; *p != '\0'; ++p) {
        if (std::isalnum(static_cast<unsigned char>(*p))) {
            name += *p;
        } else if (!name.empty() && name.back() != '_') {
            name += '_';
        }
    }
    while (!name.empty() && name.back() == '_') name.pop_back();
    return name;
}

class ForbiddenAfterLockdown : public testing::TestWithParam<ForbiddenCase> {};

// A kernel without ia32 emulation (ia32_emulation=0, or built without it)
// faults `int 0x80` with SIGSEGV before any seccomp filter sees it: that
// case then cannot reach the filter at all, and says so.
bool i386_entry_faults_unfiltered() {
    LockedChild child([] {
        attempt_int80_getpid();
        return 0;
    });
    return killed_by(child.wait(), SIGSEGV);
}

TEST_P(ForbiddenAfterLockdown, KillsWithSigsys) {
    const ForbiddenCase& c = GetParam();
    if (std::string(c.name).starts_with("i386") && i386_entry_faults_unfiltered()) {
        GTEST_SKIP() << c.name << ": this kernel has no i386 syscall entry (ia32 emulation "
                     << "off), int 0x80 faults with SIGSEGV before any filter runs";
    }
    LockedChild child(
        [&c] {
            lock_or_exit();
            c.attempt();
            return kChildSurvived;
        },
        {.stderr_pipe = true});
    ASSERT_TRUE(child.wait_ready().has_value()) << "lock_down failed: " << child.read_stderr();
    const int status = child.wait();
    EXPECT_TRUE(killed_by(status, SIGSYS)) << c.name << ": " << describe_status(status);
}

INSTANTIATE_TEST_SUITE_P(Matrix, ForbiddenAfterLockdown, testing::ValuesIn(forbidden_cases()),
                         case_name);

// Without the filter the same call is not SIGSYS: the test above measures
// the filter, not a case that kills itself.
class ForbiddenControl : public testing::TestWithParam<ForbiddenCase> {};

TEST_P(ForbiddenControl, IsNotSigsysWithoutLockdown) {
    const ForbiddenCase& c = GetParam();
    if (!c.safe_without_filter) GTEST_SKIP() << c.name << " cannot be tried safely unfiltered";
    LockedChild child([&c] {
        c.attempt();
        return 0;
    });
    const int status = child.wait();
    EXPECT_FALSE(killed_by(status, SIGSYS)) << c.name << ": " << describe_status(status);
}

INSTANTIATE_TEST_SUITE_P(Matrix, ForbiddenControl, testing::ValuesIn(forbidden_cases()), case_name);

}  // namespace
}  // namespace hb::sandbox::test
