// The post-start check of pinned bind sources (engines/podman/pin_check.hpp): the
// engine's bind list read strictly, which binds are compared with which pin,
// and the comparison itself against a real process whose private mount
// namespace binds the pin at one target and the "home" at another, as a
// container started while the agent's swap won would. The real engine is
// tests/e2e/bind_pin_attack.sh's; the settle loop's use, test_settle.cpp's.
#include "engines/podman/pin_check.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "common/config.hpp"
#include "tests/support/files.hpp"
#include "tests/support/mounts.hpp"
#include "tests/support/process.hpp"

namespace hb::exec {
namespace {

namespace fs = std::filesystem;
using hb::test::TempDir;

const std::string kId(64, 'a');
const std::string kOther(64, 'b');

TEST(PinCheckList, ReadsEachContainersBindsInOrder) {
    auto list = parse_bind_mounts(
        kId +
        R"( 4242 1796314602691306314 "/run/x/.hostbridge-binds/src" "/srv/src" "/etc/tz" "/etc/localtime")"
        "\n" +
        kOther + " 0 -6795364578871345152\n");
    ASSERT_TRUE(list) << list.error().message;
    ASSERT_EQ(list->size(), 2u);
    EXPECT_EQ((*list)[0].id, kId);
    EXPECT_EQ((*list)[0].pid, 4242u);
    EXPECT_EQ((*list)[0].started_ns, 1796314602691306314);
    ASSERT_EQ((*list)[0].binds.size(), 2u);
    EXPECT_EQ((*list)[0].binds[0].source, "/run/x/.hostbridge-binds/src");
    EXPECT_EQ((*list)[0].binds[0].destination, "/srv/src");
    EXPECT_EQ((*list)[0].binds[1].destination, "/etc/localtime");
    // Never started: podman's zero time.
    EXPECT_EQ((*list)[1].pid, 0u);
    EXPECT_LT((*list)[1].started_ns, 0);
    EXPECT_TRUE((*list)[1].binds.empty());
    // A space inside a quoted path is part of it.
    auto spaced = parse_bind_mounts(kId + R"( 1 2 "/a b" "/c d")"
                                          "\n");
    ASSERT_TRUE(spaced);
    EXPECT_EQ((*spaced)[0].binds[0].source, "/a b");
}

TEST(PinCheckList, AnythingElseIsAnError) {
    for (const std::string& bad : {
             kId + R"( 1 2 "/a" "/b")",        // no newline: cut short
             kId.substr(1) + " 1 2\n",         // a short id
             std::string(64, 'A') + " 1 2\n",  // not lowercase hex
             kId + "\n",                       // no process id nor start time
             kId + " 1\n",                     // no start time
             kId + " -1 2\n",                  // a negative process id
             kId + " 1x 2\n",                  // not a number
             kId + " 1 2 \n",                  // a trailing space
             kId + R"( 1 2 "/a")"
                   "\n",  // no destination
             kId + R"( 1 2 "/a"  "/b")"
                   "\n",  // two spaces
             kId + R"( 1 2 "/a\n/b" "/c")"
                   "\n",  // an escape (a control character)
             kId + R"( 1 2 "/a\"b" "/c")"
                   "\n",  // an escaped quote
             kId + R"( 1 2 "a" "/c")"
                   "\n",  // relative
             kId + R"( 1 2 "/a/../b" "/c")"
                   "\n",  // not normal
             kId + R"( 1 2 "/a" "/c/")"
                   "\n",  // a trailing slash
             kId + R"( 1 2 /a "/c")"
                   "\n",  // not quoted
         }) {
        EXPECT_FALSE(parse_bind_mounts(bad)) << bad;
    }
}

Config pinned_config() {
    Config c;
    c.project_dir = "/home/u/proj";
    c.run_dir = "/home/u/.local/state/hostbridge/p/run";
    c.pins = BindPins{"/usr/bin/podman", "/x/hostbridge-executor", {".", "src", "web/static"}};
    return c;
}

TEST(PinCheckPlan, PinsAreComparedAndPathsOutsideTheCheckoutLeft) {
    const Config c = pinned_config();
    const PinCheckPlan plan =
        plan_pin_check(c, {{bind_pin_path(c.run_dir, "src"), "/srv/src"},
                           {bind_pin_path(c.run_dir, "."), "/app"},
                           {"/etc/localtime", "/etc/localtime"},     // outside the checkout
                           {"/home/u/project-two/src", "/other"}});  // a sibling, not inside
    EXPECT_TRUE(plan.refusal.empty()) << plan.refusal;
    const std::vector<std::pair<std::string, std::string>> want = {{"src", "/srv/src"},
                                                                   {".", "/app"}};
    EXPECT_EQ(plan.compare, want);
}

// Stored by its checkout path (created before pinning, or by hand): every
// start resolves it again, pinned source or not, so it is refused.
TEST(PinCheckPlan, ACheckoutPathIsRefusedNamingItEvenWhereItsSourceIsPinned) {
    const Config c = pinned_config();
    for (const std::string source :
         {"/home/u/proj/web/static", "/home/u/proj/web", "/home/u/proj"}) {
        const PinCheckPlan plan = plan_pin_check(
            c, {{bind_pin_path(c.run_dir, "src"), "/srv/src"}, {source, "/srv/web"}});
        EXPECT_TRUE(plan.compare.empty()) << source;
        EXPECT_NE(plan.refusal.find("it bind-mounts " + source +
                                    " of the checkout at /srv/web by "
                                    "its path, which every start resolves again"),
                  std::string::npos)
            << plan.refusal;
    }
}

TEST(PinCheckAnswer, EachBindOnceInOrder) {
    auto all = parse_check_answer("pinned 0\npinned 1\n", 2);
    ASSERT_TRUE(all);
    EXPECT_TRUE(all->empty());
    auto some = parse_check_answer("pinned 0\nother 1 device 1 inode 2\nunreadable 2 why\n", 3);
    ASSERT_TRUE(some);
    EXPECT_EQ(*some, (std::vector<std::pair<std::size_t, AtTarget>>{{1, AtTarget::Other},
                                                                    {2, AtTarget::Unreadable}}));
    for (const char* bad : {"pinned 0\n", "pinned 1\npinned 0\n", "pinned 0\npinned 1\npinned 2\n",
                            "pinned 0 x\npinned 1\n", "same 0\npinned 1\n", "pinned 0\npinned 10\n",
                            "pinned 0\npinned 1"}) {
        EXPECT_FALSE(parse_check_answer(bad, 2)) << bad;
    }
}

TEST(PinCheckArgs, AMalformedArgumentIsAUsageError) {
    const auto code = [](std::vector<std::string> args) {
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        // A confinement before the arguments are checked would be exit 1.
        return run_check_pins(static_cast<int>(argv.size()), argv.data(),
                              []() -> Result<void> { return make_error("confined"); });
    };
    EXPECT_EQ(code({"/run", "1", "src"}), 2);                 // a source without a target
    EXPECT_EQ(code({"run", "1", "src", "/srv"}), 2);          // a relative run dir
    EXPECT_EQ(code({"/run", "0", "src", "/srv"}), 2);         // no process
    EXPECT_EQ(code({"/run", "1x", "src", "/srv"}), 2);        // not a number
    EXPECT_EQ(code({"/run", "1", "../src", "/srv"}), 2);      // climbs out
    EXPECT_EQ(code({"/run", "1", "src", "srv"}), 2);          // a relative target
    EXPECT_EQ(code({"/run", "1", "src", "/srv/../etc"}), 2);  // not normal
}

// compare_targets enters the container's mount namespace for good: run it
// in a child, as `check-pins` runs in a process of its own.
struct Compared {
    std::vector<AtTarget> at;
    std::string out;
};
Compared compare_in_child(const std::string& run_dir, pid_t pid,
                          const std::vector<std::pair<std::string, std::string>>& binds) {
    const std::string said = hb::test::in_child([&] {
        std::string out;
        std::string codes;
        for (AtTarget a : compare_targets(run_dir, pid, binds, out))
            codes += static_cast<char>('0' + static_cast<int>(a));
        return codes + "|" + out;
    });
    Compared c;
    const std::size_t bar = said.find('|');
    for (std::size_t i = 0; i < std::min(bar, said.size()); ++i)
        c.at.push_back(static_cast<AtTarget>(said[i] - '0'));
    if (bar != std::string::npos) c.out = said.substr(bar + 1);
    return c;
}

// A "container": a child in a private mount namespace that binds the pin at
// one target and the home at another (as if the agent's swap had won
// there), then waits to be killed. With `chroot_decoy`, it also binds the
// pin into a decoy tree at the second target's path and chroots into it,
// as a container's process (CAP_SYS_CHROOT is podman's default) could to
// make its own root show the pin where the home is mounted.
class PinCheckMounts : public ::testing::Test {
  protected:
    void SetUp() override {
        tree_.write("home/id_rsa", "SECRET");
        fs::create_directories(bind_pin_path(tree_.path("run"), "src"));
        fs::create_directories(tree_.path("c/srv/src"));
        fs::create_directories(tree_.path("c/srv/other"));
        fs::create_directories(tree_.path("decoy") + tree_.path("c/srv/other"));
        fs::create_directories(tree_.path("decoy/bin"));
        // A container's process can rename a target's parent and plant a
        // link to another bind of the same source: it must not pass.
        fs::create_directory_symlink(tree_.path("c/srv/src"), tree_.path("c/srv/link"));
        fs::create_directory_symlink(tree_.path("c/srv"), tree_.path("c/alias"));
    }
    void start(bool chroot_decoy) {
        if (::geteuid() != 0) {
            said_ =
                "SKIP: entering another process's mount namespace needs root here "
                "(podman unshare gives it to the check)";
            return;
        }
        int ready[2];
        ASSERT_EQ(::pipe(ready), 0);
        child_ = ::fork();
        if (child_ == 0) {
            ::close(ready[0]);
            const std::string pin = bind_pin_path(tree_.path("run"), "src");
            std::string why = hb::test::enter_private_mounts();
            const auto bind = [&](const std::string& from, const std::string& to) {
                if (why.empty() &&
                    ::mount(from.c_str(), to.c_str(), nullptr, MS_BIND, nullptr) != 0)
                    why = "bind " + to + ": " + std::strerror(errno);
            };
            bind(pin, tree_.path("c/srv/src"));
            bind(tree_.path("home"), tree_.path("c/srv/other"));
            if (chroot_decoy) {
                bind(pin, tree_.path("decoy") + tree_.path("c/srv/other"));
                if (why.empty() && ::chroot(tree_.path("decoy").c_str()) != 0)
                    why = std::string("chroot: ") + std::strerror(errno);
            }
            const std::string said = why.empty() ? "ready" : "SKIP: " + why;
            (void)!::write(ready[1], said.data(), said.size());
            ::close(ready[1]);
            if (!why.empty()) ::_exit(0);
            for (;;) ::pause();
        }
        ::close(ready[1]);
        char buf[512] = {};
        const ssize_t n = ::read(ready[0], buf, sizeof buf - 1);
        ::close(ready[0]);
        said_ = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "no answer";
    }
    void TearDown() override {
        if (child_ > 0) {
            ::kill(child_, SIGKILL);
            ::waitpid(child_, nullptr, 0);
        }
    }
    TempDir tree_;
    pid_t child_ = -1;
    std::string said_;
};

#define START_OR_SKIP(chroot_decoy)                               \
    do {                                                          \
        start(chroot_decoy);                                      \
        if (said_.rfind("SKIP: ", 0) == 0) GTEST_SKIP() << said_; \
        ASSERT_EQ(said_, "ready");                                \
    } while (0)

TEST_F(PinCheckMounts, OnlyTheTargetHoldingThePinPasses) {
    START_OR_SKIP(false);
    const Compared c = compare_in_child(tree_.path("run"), child_,
                                        {{"src", tree_.path("c/srv/src")},
                                         {"src", tree_.path("c/srv/other")},
                                         {"src", tree_.path("c/srv/none")},
                                         {"web", tree_.path("c/srv/src")}});  // no pin of web
    EXPECT_EQ(c.at, (std::vector<AtTarget>{AtTarget::Pinned, AtTarget::Other, AtTarget::Unreadable,
                                           AtTarget::Unreadable}))
        << c.out;
    // In this process's own namespace both targets are the plain dirs: the
    // check reads the container's namespace, not its caller's.
    const Compared here =
        compare_in_child(tree_.path("run"), ::getpid(), {{"src", tree_.path("c/srv/src")}});
    EXPECT_EQ(here.at, std::vector<AtTarget>{AtTarget::Other}) << here.out;
    auto differ = parse_check_answer(c.out, 4);
    ASSERT_TRUE(differ) << c.out;
    EXPECT_EQ(differ->size(), 3u);
}

// The review's attack: the container's process chroots into a tree that
// shows the pin at the target where the home is mounted. /proc/PID/root
// would follow it (the control); the check reads the namespace's root.
TEST_F(PinCheckMounts, AChrootInsideTheContainerDoesNotShowThePin) {
    START_OR_SKIP(true);
    const Compared c =
        compare_in_child(tree_.path("run"), child_, {{"src", tree_.path("c/srv/other")}});
    EXPECT_EQ(c.at, std::vector<AtTarget>{AtTarget::Other}) << c.out;
    // Control: through the process's own root the decoy shows the pin.
    struct stat through {
    }, pinned{};
    ASSERT_EQ(
        ::stat(("/proc/" + std::to_string(child_) + "/root" + tree_.path("c/srv/other")).c_str(),
               &through),
        0);
    ASSERT_EQ(::stat(bind_pin_path(tree_.path("run"), "src").c_str(), &pinned), 0);
    EXPECT_EQ(through.st_ino, pinned.st_ino);
}

TEST_F(PinCheckMounts, ALinkOnTheWayToThePinIsNeverPinned) {
    START_OR_SKIP(false);
    const Compared c =
        compare_in_child(tree_.path("run"), child_,
                         {{"src", tree_.path("c/srv/link")}, {"src", tree_.path("c/alias/src")}});
    // The link itself, not what it names; a link on the way, refused.
    EXPECT_EQ(c.at, (std::vector<AtTarget>{AtTarget::Other, AtTarget::Unreadable})) << c.out;
    // Control: followed in the child's root, both lead to the pin.
    const int root = ::open(("/proc/" + std::to_string(child_) + "/root").c_str(),
                            O_PATH | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(root, 0);
    struct stat pinned {};
    ASSERT_EQ(::stat(bind_pin_path(tree_.path("run"), "src").c_str(), &pinned), 0);
    for (const char* rel : {"c/srv/link", "c/alias/src"}) {
        open_how how{};
        how.flags = O_PATH | O_CLOEXEC;
        how.resolve = RESOLVE_IN_ROOT;
        const std::string path = tree_.path(rel).substr(1);
        const long fd = ::syscall(SYS_openat2, root, path.c_str(), &how, sizeof how);
        ASSERT_GE(fd, 0) << rel;
        struct stat linked {};
        ASSERT_EQ(::fstat(static_cast<int>(fd), &linked), 0);
        ::close(static_cast<int>(fd));
        EXPECT_EQ(linked.st_ino, pinned.st_ino) << rel;
    }
    ::close(root);
}

TEST_F(PinCheckMounts, AGoneProcessIsUnreadableNeverPinned) {
    START_OR_SKIP(false);
    ::kill(child_, SIGKILL);
    ::waitpid(child_, nullptr, 0);
    const pid_t gone = child_;
    child_ = -1;
    // Unreadable, unless the pid was reused at once: then that process's
    // namespace, where the target is a plain dir, not the pin.
    const Compared c =
        compare_in_child(tree_.path("run"), gone, {{"src", tree_.path("c/srv/src")}});
    ASSERT_EQ(c.at.size(), 1u) << c.out;
    EXPECT_NE(c.at[0], AtTarget::Pinned) << c.out;
}

}  // namespace
}  // namespace hb::exec
