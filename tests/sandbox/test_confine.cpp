// An engine step's confinement (sandbox/confine.hpp), on the real kernel:
// a body that tries every way of writing a file in a stand-in home outside
// the two directories it is confined to is refused each time, at Landlock
// ABI 2 (Debian 12's kernel) and ABI 1; the same body unconfined succeeds
// each time (the control); with the seccomp filter off, ABI 2 leaves
// truncate(2) and O_TRUNC open (the gap the filter closes). Each body runs
// in a forked child (confined_run.hpp); hostbridge-snapshot's answer is
// checked by the executor (tests/executor/test_build_snapshot.cpp).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/openat2.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

#include "ipc/unique_fd.hpp"
#include "sandbox/confine.hpp"
#include "tests/sandbox/confined_run.hpp"
#include "tests/support/files.hpp"
#include "tests/support/write_probe.hpp"

namespace hb::sandbox::test {
namespace {

using hb::test::TempDir;

// <tree>/checkout (read-only to the step), <tree>/run (its run tree),
// <tree>/home (the person's files: nothing).
class Confine : public testing::TestWithParam<int> {
  protected:
    void SetUp() override {
        if (landlock_abi() < 1) GTEST_SKIP() << "this kernel offers no Landlock";
        tree.write("checkout/Containerfile", "FROM scratch\n");
        tree.write("run/.keep", "");
        hb::test::prepare_probe_home(home());
        checkout =
            UniqueFd(::open(tree.path("checkout").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
        run = UniqueFd(::open(tree.path("run").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        ASSERT_TRUE(checkout && run);
    }
    [[nodiscard]] std::string home() const { return tree.path("home"); }
    [[nodiscard]] Confinement confinement(int abi, bool seccomp = true) const {
        return Confinement{checkout.get(), run.get(), abi, seccomp};
    }
    // `body` in a confined child; its answer, or the test fails.
    std::string confined(const Confinement& c, const std::function<std::string()>& body) {
        int abi = -1;
        auto answer = run_confined(
            c, 1u << 16, [&]() -> Result<std::string> { return body(); }, &abi);
        EXPECT_TRUE(answer.ok()) << answer.error().message;
        EXPECT_EQ(abi, std::min({c.max_abi, kLandlockAbi, landlock_abi()}));
        return answer.ok() ? *answer : std::string();
    }

    TempDir tree{"confine"};
    UniqueFd checkout;
    UniqueFd run;
};

INSTANTIATE_TEST_SUITE_P(Abi, Confine, testing::Values(2, 1), [](const auto& param_info) {
    return "Abi" + std::to_string(param_info.param);
});

TEST_P(Confine, EveryWriteToTheHomeIsRefused) {
    const std::string home = this->home();
    const auto attempts = hb::test::decode_attempts(confined(
        confinement(GetParam()), [&] { return encode_attempts(hb::test::try_writes(home)); }));
    ASSERT_GE(attempts.size(), 13u);
    for (const auto& a : attempts) {
        EXPECT_TRUE(a.error == EACCES || a.error == EPERM || a.error == EXDEV)
            << a.what << ": errno " << a.error << " (" << std::strerror(a.error) << ")";
    }
    EXPECT_TRUE(hb::test::probe_home_untouched(home));
}

TEST_P(Confine, TheRunTreeIsWritableAndTheCheckoutReadable) {
    const std::string text = confined(confinement(GetParam()), [&] {
        const int fd = ::openat(run.get(), "copy", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        const bool wrote = fd >= 0 && ::write(fd, "x", 1) == 1 && ::ftruncate(fd, 0) == 0;
        if (fd >= 0) ::close(fd);
        const bool made = ::mkdirat(run.get(), "sub", 0700) == 0 &&
                          ::symlinkat("../copy", run.get(), "sub/link") == 0;
        return std::string(wrote && made ? "wrote " : "no ") +
               hb::test::read_file(tree.path("checkout/Containerfile"));
    });
    EXPECT_EQ(text, "wrote FROM scratch\n");
}

// The checkout is read-only to the step: no write, no O_TRUNC open by
// open or openat2 (ABI 2 lets it through on a file the step may read), no
// link out of it into the run tree (REFER), no removal.
TEST_P(Confine, TheCheckoutIsNotWritable) {
    const std::string file = tree.path("checkout/Containerfile");
    const std::string text = confined(confinement(GetParam()), [&] {
        std::string out;
        auto note = [&](bool failed) {
            out += failed ? (errno == EACCES || errno == EPERM || errno == EXDEV ? "r" : "?") : "W";
        };
        int fd = ::open(file.c_str(), O_WRONLY | O_CLOEXEC);
        note(fd < 0);
        fd = ::open(file.c_str(), O_RDONLY | O_TRUNC | O_CLOEXEC);
        note(fd < 0);
        open_how how{};
        how.flags = O_RDONLY | O_TRUNC | O_CLOEXEC;
        note(::syscall(SYS_openat2, AT_FDCWD, file.c_str(), &how, sizeof how) < 0);
        note(::truncate(file.c_str(), 0) != 0);
        note(::linkat(AT_FDCWD, file.c_str(), run.get(), "hard", 0) != 0);
        note(::unlink(file.c_str()) != 0);
        return out;
    });
    EXPECT_EQ(text, "rrrrrr");
    EXPECT_EQ(hb::test::read_file(file), "FROM scratch\n");
}

// Other processes of the person's uid: no socket to ask them, no signal.
TEST_P(Confine, NoSocketNoSignalToAnotherProcess) {
    const pid_t parent = ::getpid();
    const std::string text = confined(confinement(GetParam()), [&] {
        std::string out;
        out += ::socket(AF_UNIX, SOCK_STREAM, 0) < 0 && errno == EPERM ? "r" : "S";
        out += ::kill(parent, 0) != 0 && errno == EPERM ? "r" : "K";
        out += ::kill(-1, 0) != 0 && errno == EPERM ? "r" : "K";
        out += ::kill(::getpid(), 0) == 0 ? "s" : "?";  // itself: raise() for abort()
        return out;
    });
    EXPECT_EQ(text, "rrrs");
}

// The filter's other forms: open(2) itself with O_TRUNC and creat(2) (glibc
// calls openat), and TIOCSTI on the stderr a child keeps (EPERM from the
// filter, where the kernel would say ENOTTY or type into a terminal).
TEST_P(Confine, RawOpenCreatAndTiocstiAreRefused) {
    const std::string file = tree.path("checkout/Containerfile");
    const std::string text = confined(confinement(GetParam()), [&] {
        std::string out;
        auto note = [&](long rc) { out += rc < 0 && errno == EPERM ? "r" : "?"; };
        note(::syscall(SYS_open, file.c_str(), O_RDONLY | O_TRUNC | O_CLOEXEC));
        note(::syscall(SYS_creat, tree.path("run/made").c_str(), 0600));
        const char c = 'x';
        note(::ioctl(2, TIOCSTI, &c));
        note(::syscall(SYS_socket, AF_INET, SOCK_STREAM, 0));
        return out;
    });
    EXPECT_EQ(text, "rrrr");
    EXPECT_EQ(hb::test::read_file(file), "FROM scratch\n");
}

// The control: the same body, unconfined, does every write; so each
// refusal above is the confinement's.
TEST(ConfineControl, TheSameWritesUnconfinedSucceed) {
    TempDir home("confine-control");
    hb::test::prepare_probe_home(home.path());
    for (const auto& a : hb::test::try_writes(home.path())) {
        EXPECT_EQ(a.error, 0) << a.what << ": " << std::strerror(a.error);
    }
}

// Without the seccomp filter, ABI 2 handles no truncation: the filter is
// what refuses them above (Landlock ABI 3 would, on Linux 6.2 or later).
TEST(ConfineControl, WithoutTheFilterAbi2LeavesTruncation) {
    if (landlock_abi() < 2) GTEST_SKIP() << "this kernel offers no Landlock ABI 2";
    TempDir tree("confine-gap");
    tree.write("checkout/file", "kept");
    tree.write("run/.keep", "");
    tree.write("home/secret", "kept");
    const UniqueFd checkout(
        ::open(tree.path("checkout").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    const UniqueFd run(::open(tree.path("run").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    const std::string secret = tree.path("home/secret");
    const std::string file = tree.path("checkout/file");
    auto answer = run_confined(
        Confinement{checkout.get(), run.get(), 2, false}, 64, [&]() -> Result<std::string> {
            const int fd = ::open(file.c_str(), O_RDONLY | O_TRUNC);
            return std::string(::truncate(secret.c_str(), 0) == 0 ? "t" : "-") +
                   (fd >= 0 ? "o" : "-");
        });
    ASSERT_TRUE(answer.ok()) << answer.error().message;
    EXPECT_EQ(*answer, "to");
    EXPECT_EQ(hb::test::read_file(secret), "");
    EXPECT_EQ(hb::test::read_file(file), "");
}

// A process that cannot be confined (no directories to confine it to) is
// told so before anything is changed, and the forked child reports it.
TEST(ConfineAnswer, AStepWithNoDirectoryIsNotConfined) {
    auto refused = confine_self(Confinement{}, 5);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().message, "confining the step: no directory to confine it to");
    auto nothing =
        run_confined(Confinement{}, 64, []() -> Result<std::string> { return std::string("ran"); });
    ASSERT_FALSE(nothing.ok());
    EXPECT_NE(nothing.error().message.find("could not be confined"), std::string::npos);
}

}  // namespace
}  // namespace hb::sandbox::test
