// The bind pin (engines/podman/bind_pin.hpp) against real files and real mounts:
// each case runs in a child with a private mount namespace of its own (as
// root, or in a user namespace of its own), as `podman unshare` gives the
// pin rootless podman's. The agent's moves are real renames and links in
// the "checkout"; what a container would get is read through the pin path.
// The race against the real engine is tests/e2e/bind_pin_attack.sh.
#include "engines/podman/bind_pin.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>

#include "common/config.hpp"
#include "tests/support/files.hpp"
#include "tests/support/mounts.hpp"
#include "tests/support/process.hpp"

namespace {

namespace fs = std::filesystem;
using hb::test::enter_private_mounts;
using hb::test::TempDir;

// Runs `body` in a child with private mounts; returns what it reported
// ("SKIP: ..." when the namespace cannot be made here).
std::string in_private_mounts(const std::function<std::string()>& body) {
    return hb::test::in_child([&] {
        const std::string why = enter_private_mounts();
        return why.empty() ? body() : "SKIP: " + why;
    });
}

class BindPin : public ::testing::Test {
  protected:
    void SetUp() override {
        tree_.write("project/src/marker", "checkout");
        tree_.write("project/web/src/marker", "web checkout");
        tree_.write("project/secrets/token", "app token");
        tree_.write("home/id_rsa", "SECRET");
        fs::create_directories(run_dir());
    }
    std::string project() const { return tree_.path("project"); }
    std::string run_dir() const { return tree_.path("run"); }
    std::string home() const { return tree_.path("home"); }
    std::string pin(const std::string& rel) const { return hb::bind_pin_path(run_dir(), rel); }

    std::string run(const std::function<std::string()>& body) {
        std::string out = in_private_mounts(body);
        if (out.rfind("SKIP: ", 0) == 0) skipped_ = out;
        return out;
    }
    TempDir tree_;
    std::string skipped_;
};

#define SKIP_IF_NO_NAMESPACE()                           \
    do {                                                 \
        if (!skipped_.empty()) GTEST_SKIP() << skipped_; \
    } while (0)

TEST_F(BindPin, APinnedSourceStaysTheOpenedDirectoryWhenTheAgentSwapsItForALink) {
    const std::string out = run([&] {
        auto pinned = hb::exec::pin_bind_sources(project(), run_dir(), {"secrets/token", "src"});
        if (!pinned) return "pin failed: " + pinned.error().message;
        // The agent's swap, after the pin: what runc would meet at the pin.
        fs::rename(project() + "/src", project() + "/src.real");
        fs::create_directory_symlink(home(), project() + "/src");
        fs::rename(project() + "/secrets", project() + "/secrets.real");
        fs::create_directory_symlink(home(), project() + "/secrets");
        return hb::test::read_file(pin("src") + "/marker") + "|" +
               hb::test::read_file(pin("secrets/token")) + "|" +
               (fs::exists(pin("src") + "/id_rsa") ? "home" : "no home");
    });
    SKIP_IF_NO_NAMESPACE();
    EXPECT_EQ(out, "checkout|app token|no home");
}

TEST_F(BindPin, ASourceThatIsALinkOrLiesUnderOneIsRefusedNamingIt) {
    fs::rename(project() + "/web", project() + "/web.real");
    fs::create_directory_symlink(project() + "/web.real", project() + "/web");
    const std::string under = run([&] {
        auto pinned = hb::exec::pin_bind_sources(project(), run_dir(), {"web/src"});
        return pinned ? std::string("pinned") : pinned.error().message;
    });
    SKIP_IF_NO_NAMESPACE();
    EXPECT_EQ(under, "web/src (a bind source) is a symlink or lies under one");

    fs::rename(project() + "/src", project() + "/src.real");
    fs::create_directory_symlink(home(), project() + "/src");
    const std::string link = run([&] {
        auto pinned = hb::exec::pin_bind_sources(project(), run_dir(), {"src"});
        return pinned ? std::string("pinned") : pinned.error().message;
    });
    EXPECT_EQ(link, "src (a bind source) is a symlink or lies under one");
}

TEST_F(BindPin, AFifoIsRefusedAndNothingIsMountedForIt) {
    ASSERT_EQ(::mkfifo((project() + "/pipe").c_str(), 0600), 0);
    const std::string out = run([&] {
        auto pinned = hb::exec::pin_bind_sources(project(), run_dir(), {"pipe"});
        return (pinned ? std::string("pinned") : pinned.error().message) + "|" +
               (fs::exists(pin("pipe")) ? "made" : "absent");
    });
    SKIP_IF_NO_NAMESPACE();
    EXPECT_EQ(out, "pipe (a bind source) is neither a directory nor a regular file|absent");
}

// Each pin replaces the last; without the tmpfs (the engine's namespace is
// gone) a pin path is "no such file" under an empty 0500 dir, so a
// container is refused its start instead of given an empty directory.
TEST_F(BindPin, APinReplacesTheLastAndWithoutItThePathIsMissingUnderA0500Dir) {
    const std::string out = run([&] {
        std::string seen;
        auto first = hb::exec::pin_bind_sources(project(), run_dir(), {".", "src"});
        if (!first) return "first: " + first.error().message;
        seen += hb::test::read_file(pin(".") + "/src/marker") + "|";
        auto second = hb::exec::pin_bind_sources(project(), run_dir(), {"web/src"});
        if (!second) return "second: " + second.error().message;
        seen += std::string(fs::exists(pin("src")) ? "old pin left" : "old pin gone") + "|" +
                hb::test::read_file(pin("web/src") + "/marker") + "|";
        if (::umount2(hb::bind_pin_root(run_dir()).c_str(), MNT_DETACH) != 0)
            return std::string("umount: ") + std::strerror(errno);
        struct stat st {};
        ::stat(hb::bind_pin_root(run_dir()).c_str(), &st);
        seen += std::string(fs::exists(pin("web/src")) ? "present" : "missing") + "|" +
                std::to_string(st.st_mode & 07777);
        return seen;
    });
    SKIP_IF_NO_NAMESPACE();
    EXPECT_EQ(out, "checkout|old pin gone|web checkout|missing|" + std::to_string(0500));
}

// A host file the agent hard-linked into the checkout has its inode, not
// its path: the pin refuses any file with a second name.
TEST_F(BindPin, AFileWithASecondNameIsRefused) {
    ASSERT_EQ(::link((home() + "/id_rsa").c_str(), (project() + "/secrets/key").c_str()), 0);
    const std::string out = run([&] {
        auto pinned = hb::exec::pin_bind_sources(project(), run_dir(), {"secrets/key"});
        return pinned ? std::string("pinned") : pinned.error().message;
    });
    SKIP_IF_NO_NAMESPACE();
    EXPECT_EQ(out,
              "secrets/key (a bind source) has 2 hard links: a file bound into a container must "
              "have one name");
}

// What is left in the host-side dir would be mounted once the tmpfs is
// gone: the pin refuses rather than leave it there.
TEST_F(BindPin, SomethingLeftInTheHostSideDirIsRefused) {
    fs::create_directories(hb::bind_pin_root(run_dir()) + "/src");
    const std::string out = run([&] {
        auto pinned = hb::exec::pin_bind_sources(project(), run_dir(), {"src"});
        return pinned ? std::string("pinned") : pinned.error().message;
    });
    SKIP_IF_NO_NAMESPACE();
    EXPECT_EQ(out, hb::bind_pin_root(run_dir()) +
                       " holds src, which a container would get once the pins are gone: remove "
                       "it (it must stay empty)");
}

// The agent flips web (with web/src in it) and a link to the home with
// RENAME_EXCHANGE as fast as it can while the pin runs 200 times: each pin
// either refuses or holds the checkout's web/src, never the home; the same
// flipping hands a path-following stat the home (the control).
TEST_F(BindPin, AParentFlippedWithALinkDuringThePinNeverPinsTheHome) {
    fs::create_directories(home() + "/src");
    ASSERT_EQ(::symlink(home().c_str(), (project() + "/web.link").c_str()), 0);
    const std::string out = run([&] {
        const pid_t flipper = ::fork();
        if (flipper == 0) {
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlives the test's child
            const std::string a = project() + "/web", b = project() + "/web.link";
            for (;;) ::renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE);
        }
        // The control: a path-following open (what runc does with a path)
        // meets the home under the same flipping.
        struct stat home_src {};
        ::stat((home() + "/src").c_str(), &home_src);
        // Until it does once (the flipper may wait for a core): 60 s is a
        // hang guard, it takes microseconds.
        long stats = 0;
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        for (bool met = false; !met && std::chrono::steady_clock::now() < give_up;) {
            struct stat st {};
            ++stats;
            met = ::stat((project() + "/web/src").c_str(), &st) == 0 &&
                  st.st_ino == home_src.st_ino && st.st_dev == home_src.st_dev;
        }
        const bool followed_home = std::chrono::steady_clock::now() < give_up;
        int refused = 0, checkout = 0, other = 0;
        for (int i = 0; i < 200; ++i) {
            auto pinned = hb::exec::pin_bind_sources(project(), run_dir(), {"web/src"});
            if (!pinned) {
                ++refused;
                continue;
            }
            const std::string seen = hb::test::read_file(pin("web/src") + "/marker");
            (seen == "web checkout" ? checkout : other) += 1;
        }
        ::kill(flipper, SIGKILL);
        ::waitpid(flipper, nullptr, 0);
        return "other " + std::to_string(other) + ", pinned " + std::to_string(checkout) +
               ", refused " + std::to_string(refused) + "; a path-following stat " +
               (followed_home ? "met the home after " + std::to_string(stats) + " tries"
                              : std::string("never met the home"));
    });
    SKIP_IF_NO_NAMESPACE();
    EXPECT_EQ(out.rfind("other 0,", 0), 0u) << out;
    EXPECT_EQ(out.find("never met the home"), std::string::npos) << out;
    std::cout << "parent flipped during the pin: " << out << "\n";
}

TEST(BindPinNames, EachSourceHasOneFlatNameAndNoTwoSourcesShareOne) {
    EXPECT_EQ(hb::bind_pin_path("/r", "."), "/r/.hostbridge-binds/%2E");
    EXPECT_EQ(hb::bind_pin_path("/r", "web/src"), "/r/.hostbridge-binds/web%2Fsrc");
    EXPECT_EQ(hb::bind_pin_path("/r", "web%2Fsrc"), "/r/.hostbridge-binds/web%252Fsrc");
    EXPECT_EQ(hb::bind_pin_path("/r", "%2E"), "/r/.hostbridge-binds/%252E");
}

// `pin` is a step of the argv table; what it is handed is checked again.
TEST(BindPinArgs, APathThatIsNotNormalOrNotAbsoluteIsAUsageError) {
    auto run_pin = [](std::vector<std::string> words) {
        std::vector<char*> argv;
        for (auto& w : words) argv.push_back(w.data());
        // A confinement before the arguments are checked would be exit 1.
        return hb::exec::run_pin(static_cast<int>(argv.size()), argv.data(),
                                 []() -> hb::Result<void> { return hb::make_error("confined"); });
    };
    EXPECT_EQ(run_pin({"/p", "/r", "../etc"}), 2);
    EXPECT_EQ(run_pin({"/p", "/r", "src/../../x"}), 2);
    EXPECT_EQ(run_pin({"/p", "/r", "/etc"}), 2);
    EXPECT_EQ(run_pin({"/p", "/r", "src//x"}), 2);
    EXPECT_EQ(run_pin({"p", "/r", "src"}), 2);
    EXPECT_EQ(run_pin({"/p", "/r"}), 2);
}

}  // namespace
