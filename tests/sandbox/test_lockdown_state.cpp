// What the kernel says about a locked-down process, read by the parent
// from /proc/<pid> while the child waits on a pipe: no capabilities in any
// set, no_new_privs, a seccomp filter, uid/gid 65534 when started as root,
// fresh namespaces where the kernel allows, the rlimits, only fds 0-3
// open, not dumpable. Also: a non-root start, and failing closed.
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "locked_child.hpp"
#include "proc_status.hpp"
#include "sandbox/lockdown.hpp"

namespace hb::sandbox::test {
namespace {

constexpr const char* kNoCaps = "0000000000000000";

// The child: lock down, report, then block until the parent closes fd 0.
int lock_and_wait() {
    lock_or_exit();
    char byte;
    return ::read(0, &byte, 1) == 0 ? 0 : 1;
}

// As root: become 65534 by hand first, like a parser started by a user.
int become_nobody_then_lock_and_wait() {
    if (::geteuid() == 0) {
        if (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 ||
            ::setresuid(65534, 65534, 65534) != 0) {
            return kChildSetupFailed;
        }
    }
    return lock_and_wait();
}

void expect_no_capabilities(const std::map<std::string, std::string>& status, bool bounding_too) {
    EXPECT_EQ(status.at("CapInh"), kNoCaps);
    EXPECT_EQ(status.at("CapPrm"), kNoCaps);
    EXPECT_EQ(status.at("CapEff"), kNoCaps);
    EXPECT_EQ(status.at("CapAmb"), kNoCaps);
    if (bounding_too) {
        EXPECT_EQ(status.at("CapBnd"), kNoCaps);
    }
}

class LockdownState : public testing::Test {
  protected:
    void TearDown() override {
        if (child_) {
            child_->stdin_w().reset();  // releases the child
            const int status = child_->wait();
            EXPECT_TRUE(exited_with(status, 0)) << describe_status(status);
        }
    }
    LockdownReport start(int (*body)()) {
        child_ = std::make_unique<LockedChild>(
            body, ChildOptions{.stdin_pipe = true, .stderr_pipe = true});
        auto report = child_->wait_ready();
        if (!report) {
            child_->stdin_w().reset();
            ADD_FAILURE() << "lock_down failed: " << child_->read_stderr();
            return {};
        }
        return *report;
    }
    std::unique_ptr<LockedChild> child_;
};

TEST_F(LockdownState, NoCapabilitiesNoNewPrivsSeccompFilter) {
    const LockdownReport report = start(lock_and_wait);
    ASSERT_FALSE(HasFailure());
    const auto status = proc_status(child_->pid());
    expect_no_capabilities(status, report.bounding_set_cleared);
    EXPECT_EQ(status.at("NoNewPrivs"), "1");
    EXPECT_EQ(status.at("Seccomp"), "2");
    EXPECT_EQ(status.at("Seccomp_filters"), "1");
    if (!report.bounding_set_cleared) {
        EXPECT_FALSE(running_as_root()) << "root can always clear its bounding set";
        GTEST_SKIP() << "bounding set not clearable here (not root, no user namespace): "
                     << std::strerror(report.namespaces_errno);
    }
}

TEST_F(LockdownState, RootBecomesNobody) {
    if (!running_as_root()) GTEST_SKIP() << "needs root: checks the drop from uid 0 to 65534";
    const LockdownReport report = start(lock_and_wait);
    ASSERT_FALSE(HasFailure());
    EXPECT_TRUE(report.changed_uid);
    EXPECT_TRUE(report.bounding_set_cleared);
    const auto status = proc_status(child_->pid());
    // Seen from the parent's (the initial) user namespace.
    EXPECT_EQ(status.at("Uid"), "65534\t65534\t65534\t65534");
    EXPECT_EQ(status.at("Gid"), "65534\t65534\t65534\t65534");
    EXPECT_EQ(status.at("Groups"), "");
    expect_no_capabilities(status, true);
}

TEST_F(LockdownState, FreshNamespacesWhereTheKernelAllows) {
    const LockdownReport report = start(lock_and_wait);
    ASSERT_FALSE(HasFailure());
    if (!report.new_namespaces) {
        GTEST_SKIP() << "the kernel refused unshare(NEWUSER|NEWNET|NEWIPC|NEWNS): "
                     << std::strerror(report.namespaces_errno);
    }
    const std::string theirs = proc_namespace(child_->pid(), "user");
    if (theirs.empty()) {
        // Non-root cannot read a non-dumpable process's ns links; uid_map
        // is readable: a fresh user namespace has no mapping written.
        EXPECT_EQ(read_proc_file(child_->pid(), "uid_map"), "");
        GTEST_SKIP() << "user namespace checked through uid_map only: /proc/<pid>/ns/* of a "
                        "non-dumpable process needs root";
    }
    for (const char* ns : {"user", "net", "ipc", "mnt"}) {
        EXPECT_NE(proc_namespace(::getpid(), ns), proc_namespace(child_->pid(), ns)) << ns;
    }
}

TEST_F(LockdownState, ResourceLimits) {
    start(lock_and_wait);
    ASSERT_FALSE(HasFailure());
    const pid_t pid = child_->pid();
    EXPECT_EQ(proc_soft_limit(pid, "Max core file size"), "0");
    EXPECT_EQ(proc_soft_limit(pid, "Max open files"), "8");
    EXPECT_EQ(proc_soft_limit(pid, "Max file size"), "0");
    EXPECT_EQ(proc_soft_limit(pid, "Max processes"), "0");
    EXPECT_EQ(proc_soft_limit(pid, "Max locked memory"), "0");
    EXPECT_EQ(proc_soft_limit(pid, "Max msgqueue size"), "0");
    // SIGXFSZ ignored: a write to a file-backed fd 2 fails instead of killing.
    const auto status = proc_status(pid);
    const unsigned long ignored = std::stoul(status.at("SigIgn"), nullptr, 16);
    EXPECT_NE(ignored & (1UL << (SIGXFSZ - 1)), 0UL) << status.at("SigIgn");
}

TEST_F(LockdownState, OnlyStdioAndTheSocketStayOpen) {
    // Inherited by accident: a high fd and one just above the socket.
    child_ = std::make_unique<LockedChild>(
        [] {
            if (::dup2(3, 4) < 0 || ::dup2(3, 200) < 0) return kChildSetupFailed;
            return lock_and_wait();
        },
        ChildOptions{.stdin_pipe = true, .stderr_pipe = true});
    ASSERT_TRUE(child_->wait_ready().has_value()) << child_->read_stderr();
    const auto fds = proc_fds(child_->pid());
    if (!fds) GTEST_SKIP() << "cannot list /proc/<pid>/fd of a non-dumpable process (not root)";
    EXPECT_EQ(*fds, (std::set<int>{0, 1, 2, 3}));
}

// Any uid change resets "dumpable" by itself, so the child first makes
// itself dumpable again: only lock_down's PR_SET_DUMPABLE 0 can then
// hand its /proc files to root.
int dumpable_then_lock_and_wait() {
    if (::geteuid() == 0 &&
        (::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0)) {
        return kChildSetupFailed;
    }
    if (::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0) return kChildSetupFailed;
    return lock_and_wait();
}

TEST_F(LockdownState, NotDumpable) {
    start(dumpable_then_lock_and_wait);
    ASSERT_FALSE(HasFailure());
    ASSERT_NE(proc_status(child_->pid()).at("Uid").substr(0, 2), "0\t")
        << "the child must not be root";
    struct stat st {};
    ASSERT_EQ(::stat(("/proc/" + std::to_string(child_->pid()) + "/status").c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 0U) << "a dumpable process's /proc files belong to its own uid";
}

TEST_F(LockdownState, StartedAsNonRootTheBoundingSetIsStillCleared) {
    const LockdownReport report = start(become_nobody_then_lock_and_wait);
    ASSERT_FALSE(HasFailure());
    EXPECT_FALSE(report.changed_uid) << "lock_down saw root although the child dropped it first";
    const auto status = proc_status(child_->pid());
    EXPECT_EQ(status.at("Uid").substr(0, 5),
              running_as_root() ? "65534" : status.at("Uid").substr(0, 5));
    expect_no_capabilities(status, false);
    EXPECT_EQ(status.at("NoNewPrivs"), "1");
    EXPECT_EQ(status.at("Seccomp"), "2");
    if (!report.new_namespaces) {
        EXPECT_FALSE(report.bounding_set_cleared);
        GTEST_SKIP() << "no user namespace (" << std::strerror(report.namespaces_errno)
                     << "): a non-root process cannot clear its bounding set without one";
    }
    EXPECT_TRUE(report.bounding_set_cleared);
    EXPECT_EQ(status.at("CapBnd"), kNoCaps);
}

// A kernel without unprivileged user namespaces, simulated for this child
// alone: a first filter makes unshare fail with EPERM.
bool refuse_unshare() {
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (ctx == nullptr) return false;
    const bool ok = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 0) == 0 &&
                    seccomp_load(ctx) == 0;
    seccomp_release(ctx);
    return ok;
}

int without_userns_lock_and_wait() {
    return refuse_unshare() ? lock_and_wait() : kChildSetupFailed;
}

int without_userns_as_nobody_lock_and_wait() {
    return refuse_unshare() ? become_nobody_then_lock_and_wait() : kChildSetupFailed;
}

// Root needs no namespace to clear everything: it holds CAP_SETPCAP.
TEST_F(LockdownState, WithoutUserNamespacesRootStillClearsEverything) {
    if (!running_as_root()) GTEST_SKIP() << "needs root";
    const LockdownReport report = start(without_userns_lock_and_wait);
    ASSERT_FALSE(HasFailure());
    EXPECT_FALSE(report.new_namespaces);
    EXPECT_EQ(report.namespaces_errno, EPERM);
    EXPECT_TRUE(report.changed_uid);
    EXPECT_TRUE(report.bounding_set_cleared);
    const auto status = proc_status(child_->pid());
    expect_no_capabilities(status, true);
    EXPECT_EQ(status.at("Uid"), "65534\t65534\t65534\t65534");
    EXPECT_EQ(proc_namespace(::getpid(), "user"), proc_namespace(child_->pid(), "user"));
}

// Non-root without a namespace of its own cannot shrink its bounding set:
// lock_down says so and still clears every other set (the bounding set is
// inert under no_new_privs with execve forbidden).
TEST_F(LockdownState, WithoutUserNamespacesNonRootKeepsOnlyTheBoundingSet) {
    const LockdownReport report = start(without_userns_as_nobody_lock_and_wait);
    ASSERT_FALSE(HasFailure());
    EXPECT_FALSE(report.new_namespaces);
    EXPECT_FALSE(report.bounding_set_cleared);
    const auto status = proc_status(child_->pid());
    expect_no_capabilities(status, false);
    EXPECT_NE(status.at("CapBnd"), kNoCaps);
    EXPECT_EQ(status.at("NoNewPrivs"), "1");
    EXPECT_EQ(status.at("Seccomp"), "2");
}

TEST(LockdownFailsClosed, NegativeSocketFdIsRefused) {
    // In a child: were it to go ahead, it would lock this test process down.
    LockedChild child([] { return lock_down(-1).ok() ? kChildSurvived : 0; });
    const int status = child.wait();
    EXPECT_TRUE(exited_with(status, 0)) << describe_status(status);
}

// Root that cannot become 65534 (a user namespace mapping only uid 0)
// must not go on as root: lock_down fails and the parser would exit.
TEST(LockdownFailsClosed, RootThatCannotDropIsAnError) {
    if (!running_as_root())
        GTEST_SKIP() << "needs root to build a namespace where only uid 0 exists";
    LockedChild child(
        [] {
            if (::unshare(CLONE_NEWUSER) != 0) return 50;
            const auto write_file = [](const char* path, const char* text) {
                std::ofstream out(path);
                out << text;
                out.flush();
                return static_cast<bool>(out);
            };
            if (!write_file("/proc/self/setgroups", "deny") ||
                !write_file("/proc/self/uid_map", "0 0 1") ||
                !write_file("/proc/self/gid_map", "0 0 1")) {
                return 51;
            }
            auto report = lock_down(3);
            if (report) return kChildSurvived;
            const std::string& why = report.error().message;
            (void)!::write(2, why.data(), why.size());
            return kChildLockdownFailed;
        },
        {.stderr_pipe = true});
    const int status = child.wait();
    if (exited_with(status, 50) || exited_with(status, 51)) {
        GTEST_SKIP() << "cannot build a user namespace with only uid 0 mapped here";
    }
    EXPECT_TRUE(exited_with(status, kChildLockdownFailed)) << describe_status(status);
    EXPECT_NE(child.read_stderr().find("65534"), std::string::npos);
}

}  // namespace
}  // namespace hb::sandbox::test
