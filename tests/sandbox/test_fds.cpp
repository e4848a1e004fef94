// close_fds_from_3 and its /proc fallback, in forked children: after the
// call exactly 0-2 and `keep` are open, however many fds there were
// (more than one getdents buffer's worth) and wherever `keep` sits.
#include <fcntl.h>
#include <unistd.h>

#include <set>
#include <string>
#include <tuple>

#include <gtest/gtest.h>

#include "locked_child.hpp"
#include "sandbox/fds.hpp"

namespace hb::sandbox::test {
namespace {

constexpr int kHighFd = 1000;  // below the usual soft RLIMIT_NOFILE of 1024
constexpr int kManyFds = 600;  // 600 entries: several 4 KiB getdents buffers

enum class Path { CloseRange, ProcWalk };

std::string open_fd_list() {
    std::string list;
    for (int fd = 0; fd <= kHighFd; ++fd) {
        if (::fcntl(fd, F_GETFD) != -1) list += std::to_string(fd) + " ";
    }
    return list;
}

class CloseFds : public testing::TestWithParam<std::tuple<Path, int>> {};

TEST_P(CloseFds, LeavesOnlyStdioAndKeep) {
    // Not a structured binding: clang 14 cannot capture one in a lambda.
    const Path path = std::get<0>(GetParam());
    const int keep = std::get<1>(GetParam());
    LockedChild child(
        [path, keep] {
            // The child holds fd 3 (the socket) already; add many more.
            for (int i = 0; i < kManyFds; ++i) {
                if (::dup(3) < 0) return kChildSetupFailed;
            }
            if (::dup2(3, kHighFd) < 0) return kChildSetupFailed;
            const auto result =
                path == Path::CloseRange ? close_fds_from_3(keep) : close_fds_by_proc_walk(keep);
            if (!result) return 2;
            std::string expected = "0 1 2 ";
            if (keep >= 3) expected += std::to_string(keep) + " ";
            const std::string actual = open_fd_list();
            if (actual == expected) return 0;
            (void)!::write(2, actual.data(), actual.size());
            return 1;
        },
        {.stderr_pipe = true});
    const int status = child.wait();
    EXPECT_TRUE(exited_with(status, 0))
        << describe_status(status) << "; open fds: " << child.read_stderr();
}

INSTANTIATE_TEST_SUITE_P(Keep, CloseFds,
                         testing::Combine(testing::Values(Path::CloseRange, Path::ProcWalk),
                                          testing::Values(-1, 1, 3, 4, 300, kHighFd)),
                         [](const testing::TestParamInfo<std::tuple<Path, int>>& param) {
                             const int keep = std::get<1>(param.param);
                             return std::string(std::get<0>(param.param) == Path::CloseRange
                                                    ? "CloseRange"
                                                    : "ProcWalk") +
                                    "_keep_" + (keep < 0 ? "none" : std::to_string(keep));
                         });

}  // namespace
}  // namespace hb::sandbox::test
