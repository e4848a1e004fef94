// The allowlist as data: every entry has a reason, nothing on the list of
// dangerous syscalls is ever allowed, the argument-restricted entries keep
// their restriction. docs/EXECUTOR-REVIEW.md's table of them is held to the
// policy by tests/security/test_executor_review.cpp.
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "locked_child.hpp"
#include "sandbox/seccomp_policy.hpp"

namespace hb::sandbox::test {
namespace {

constexpr int kSocket = 3;

constexpr pid_t kSelf = 4242;

std::vector<Allowance> release_policy() {
    return parser_policy(kSocket, kSelf, false);
}
std::vector<Allowance> sanitized_policy() {
    return parser_policy(kSocket, kSelf, true);
}

TEST(SeccompPolicy, EveryAllowanceHasANameANumberAndAReason) {
    for (const Allowance& a : sanitized_policy()) {
        EXPECT_FALSE(a.name.empty());
        EXPECT_GE(a.syscall, 0) << a.name << " is not a syscall of this architecture";
        EXPECT_GE(a.reason.size(), 10U) << a.name << " needs a real reason";
    }
}

TEST(SeccompPolicy, NoDangerousSyscallIsAllowed) {
    const std::set<std::string> never = {"open",
                                         "openat",
                                         "openat2",
                                         "creat",
                                         "open_by_handle_at",
                                         "memfd_create",
                                         "execve",
                                         "execveat",
                                         "socket",
                                         "socketpair",
                                         "connect",
                                         "bind",
                                         "listen",
                                         "accept",
                                         "accept4",
                                         "sendto",
                                         "recvfrom",
                                         "ptrace",
                                         "process_vm_readv",
                                         "process_vm_writev",
                                         "mount",
                                         "umount2",
                                         "pivot_root",
                                         "chroot",
                                         "unshare",
                                         "setns",
                                         "clone",
                                         "clone3",
                                         "fork",
                                         "vfork",
                                         "kill",
                                         "tkill",
                                         "pidfd_open",
                                         "pidfd_getfd",
                                         "pidfd_send_signal",
                                         "bpf",
                                         "io_uring_setup",
                                         "io_uring_enter",
                                         "io_uring_register",
                                         "userfaultfd",
                                         "keyctl",
                                         "add_key",
                                         "request_key",
                                         "perf_event_open",
                                         "mprotect",
                                         "pkey_mprotect",
                                         "personality",
                                         "prctl",
                                         "seccomp",
                                         "ioctl",
                                         "setuid",
                                         "capset",
                                         "init_module",
                                         "finit_module",
                                         "kexec_load",
                                         "reboot"};
    for (const Allowance& a : release_policy())
        EXPECT_EQ(never.count(std::string(a.name)), 0U) << a.name;
}

// The sanitized build's extras are test-only and each is narrowed by its
// arguments (ioctl: TCGETS on fd 2; write: pipe fds, never 0, 1 or 3).
TEST(SeccompPolicy, SanitizerExtrasAreAllArgumentRestricted) {
    PolicyBuilder extras;
    extras.allow_sanitizer_runtime(kSocket);
    for (const Allowance& a : extras.allowances()) {
        EXPECT_FALSE(a.conditions.empty()) << a.name << " must be argument-restricted";
        if (a.name == "write") {
            ASSERT_EQ(a.conditions.size(), 1U);
            EXPECT_EQ(a.conditions[0].op, SCMP_CMP_EQ);
            EXPECT_GE(a.conditions[0].datum_a, 4U);
            EXPECT_LT(a.conditions[0].datum_a, 8U);
        }
    }
}

// These are only safe with their argument filter; losing it would open
// write to any fd, the socket calls to any fd, or signals to anyone.
TEST(SeccompPolicy, RestrictedSyscallsKeepTheirConditions) {
    const std::set<std::string> restricted = {"write", "writev", "recvmsg", "sendmsg",
                                              "mmap",  "tgkill", "futex"};
    for (const Allowance& a : sanitized_policy()) {
        if (restricted.count(std::string(a.name)) == 0) continue;
        EXPECT_FALSE(a.conditions.empty()) << a.name << " must be argument-restricted";
    }
    bool saw_socket_rule = false;
    for (const Allowance& a : sanitized_policy()) {
        if (a.name != "recvmsg" && a.name != "sendmsg") continue;
        saw_socket_rule = true;
        ASSERT_EQ(a.conditions.size(), 1U);
        EXPECT_EQ(a.conditions[0].arg, 0U);
        EXPECT_EQ(a.conditions[0].op, SCMP_CMP_EQ);
        EXPECT_EQ(a.conditions[0].datum_a, static_cast<scmp_datum_t>(kSocket));
    }
    EXPECT_TRUE(saw_socket_rule);
}

TEST(SeccompPolicy, SanitizerAllowancesOnlyInSanitizedBuilds) {
    EXPECT_EQ(parser_policy(kSocket, kSelf).size(),
              sanitizer_build() ? sanitized_policy().size() : release_policy().size());
    EXPECT_GT(sanitized_policy().size(), release_policy().size());
#if defined(__SANITIZE_ADDRESS__)
    EXPECT_TRUE(sanitizer_build()) << "the test is sanitized but the library thinks it is not";
#else
    EXPECT_FALSE(sanitizer_build()) << "a release build must not carry the sanitizer extras";
#endif
}

// libseccomp builds a wrong filter, silently, from a rule that compares
// one argument twice; install_seccomp refuses such a rule before loading.
TEST(SeccompPolicy, ARuleComparingOneArgumentTwiceIsRefused) {
    LockedChild child([] {
        const std::vector<Allowance> bad = {
            {SCMP_SYS(write),
             "write",
             {scmp_arg_cmp{0, SCMP_CMP_GE, 4, 0}, scmp_arg_cmp{0, SCMP_CMP_LE, 7, 0}},
             "two comparisons of argument 0"}};
        return install_seccomp(bad).ok() ? kChildSurvived : 0;
    });
    const int status = child.wait();
    EXPECT_TRUE(exited_with(status, 0)) << describe_status(status);
}

}  // namespace
}  // namespace hb::sandbox::test
