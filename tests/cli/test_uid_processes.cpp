// `engine remove` ends the engine user's processes and those running as its
// subordinate ids (admin/util/uid_processes.hpp): a container running as a
// non-root user is a host process of a subordinate id, which `pkill -u`
// never matched. Real processes, real /proc.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "admin/util/uid_processes.hpp"

namespace hb::admin {
namespace {

// A child that becomes UID (all four ids) and sleeps, ignoring SIGTERM as a
// process that will not stop politely; reaped by the caller.
pid_t sleeper_as(uid_t uid) {
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        ::signal(SIGTERM, SIG_IGN);
        if (::setresgid(uid, uid, uid) != 0 || ::setresuid(uid, uid, uid) != 0) ::_exit(3);
        for (;;) ::pause();
    }
    return pid;
}

bool listed(pid_t pid, const std::vector<UidRange>& ranges) {
    const auto found = processes_with_uid_in(ranges);
    return std::find(found.begin(), found.end(), pid) != found.end();
}

TEST(UidProcesses, RangesAreReadByNameOrUidAndNothingElse) {
    const std::string text =
        "hb-x:100000:65536\n"
        "other:200000:65536\n"
        "1234:300000:10\n"
        "hb-x:bad:1\n"
        "hb-x:400000:0\n"
        "hb-x\n";
    const auto r = subordinate_ranges(text, "hb-x", 1234);
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0].first, 100000u);
    EXPECT_EQ(r[0].count, 65536u);
    EXPECT_EQ(r[1].first, 300000u);
    EXPECT_TRUE(r[0].contains(165535));
    EXPECT_FALSE(r[0].contains(165536));
    EXPECT_FALSE(r[0].contains(99999));
}

TEST(UidProcesses, AProcessOfASubordinateIdThatIgnoresSigtermIsEnded) {
    if (::geteuid() != 0) GTEST_SKIP() << "becoming another uid needs root";
    // Ids no account on a test machine uses, as a subordinate range's are.
    const std::vector<UidRange> range{{3900000000u, 65536}};
    const pid_t inside = sleeper_as(3900000000u + 999);
    const pid_t outside = sleeper_as(3900000000u + 65536);
    ASSERT_GT(inside, 0);
    ASSERT_GT(outside, 0);
    // Its ids change after fork: wait until /proc shows them.
    for (int i = 0; i < 100 && !listed(inside, range); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_TRUE(listed(inside, range));
    EXPECT_FALSE(listed(outside, range));

    EXPECT_TRUE(end_processes_with_uid_in(range, 300));
    int status = 0;
    ASSERT_EQ(::waitpid(inside, &status, 0), inside);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
    // The one past the range runs on.
    EXPECT_EQ(::waitpid(outside, &status, WNOHANG), 0);
    ::kill(outside, SIGKILL);
    ::waitpid(outside, &status, 0);
}

}  // namespace
}  // namespace hb::admin
