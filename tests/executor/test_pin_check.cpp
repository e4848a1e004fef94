// The post-start check of pinned bind sources (executor/pin_check.hpp): the
// engine's bind list read strictly, which binds are compared with which pin,
// and the comparison itself against a real process whose private mount
// namespace binds the pin at one target and the "home" at another, as a
// container started while the agent's swap won would. The real engine is
// tests/e2e/bind_pin_attack.sh's; the settle loop's use, test_settle.cpp's.
#include "executor/pin_check.hpp"

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
#include "tests/executor/private_mounts.hpp"
#include "tests/executor/temp_tree.hpp"

namespace hb::exec {
namespace {

namespace fs = std::filesystem;
using hb::test::TempTree;

const std::string kId(64, 'a');
const std::string kOther(64, 'b');

TEST(PinCheckList, ReadsEachContainersBindsInOrder) {
    auto list =
        parse_bind_mounts(kId +
                          R"( "/run/x/.hostbridge-binds/src" "/srv/src" "/etc/tz" "/etc/localtime")"
                          "\n" +
                          kOther + "\n");
    ASSERT_TRUE(list) << list.error().message;
    ASSERT_EQ(list->size(), 2u);
    EXPECT_EQ((*list)[0].id, kId);
    ASSERT_EQ((*list)[0].binds.size(), 2u);
    EXPECT_EQ((*list)[0].binds[0].source, "/run/x/.hostbridge-binds/src");
    EXPECT_EQ((*list)[0].binds[0].destination, "/srv/src");
    EXPECT_EQ((*list)[0].binds[1].destination, "/etc/localtime");
    EXPECT_TRUE((*list)[1].binds.empty());
    // A space inside a quoted path is part of it.
    auto spaced = parse_bind_mounts(kId + R"( "/a b" "/c d")"
                                          "\n");
    ASSERT_TRUE(spaced);
    EXPECT_EQ((*spaced)[0].binds[0].source, "/a b");
}

TEST(PinCheckList, AnythingElseIsAnError) {
    for (const std::string& bad : {
             kId + R"( "/a" "/b")",        // no newline: cut short
             kId.substr(1) + "\n",         // a short id
             std::string(64, 'A') + "\n",  // not lowercase hex
             kId + R"( "/a")"
                   "\n",  // no destination
             kId + R"( "/a"  "/b")"
                   "\n",  // two spaces
             kId + R"( "/a\n/b" "/c")"
                   "\n",  // an escape (a control character)
             kId + R"( "/a\"b" "/c")"
                   "\n",  // an escaped quote
             kId + R"( "a" "/c")"
                   "\n",  // relative
             kId + R"( "/a/../b" "/c")"
                   "\n",  // not normal
             kId + R"( "/a" "/c/")"
                   "\n",  // a trailing slash
             kId + R"( /a "/c")"
                   "\n",   // not quoted
             kId + "x\n",  // something after the id
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

TEST(PinCheckPlan, PinsAndTheirCheckoutPathsAreComparedOthersAreLeft) {
    const Config c = pinned_config();
    const PinCheckPlan plan =
        plan_pin_check(c, {{bind_pin_path(c.run_dir, "src"), "/srv/src"},
                           {"/home/u/proj/web/static", "/srv/static"},  // created before pinning
                           {"/home/u/proj", "/app"},
                           {"/etc/localtime", "/etc/localtime"},     // outside the checkout
                           {"/home/u/project-two/src", "/other"}});  // a sibling, not inside
    EXPECT_TRUE(plan.refusal.empty()) << plan.refusal;
    const std::vector<std::pair<std::string, std::string>> want = {
        {"src", "/srv/src"}, {"web/static", "/srv/static"}, {".", "/app"}};
    EXPECT_EQ(plan.compare, want);
}

TEST(PinCheckPlan, ACheckoutPathNothingPinsIsRefusedNamingIt) {
    const Config c = pinned_config();
    const PinCheckPlan plan = plan_pin_check(
        c, {{bind_pin_path(c.run_dir, "src"), "/srv/src"}, {"/home/u/proj/web", "/srv/web"}});
    EXPECT_TRUE(plan.compare.empty());
    EXPECT_NE(plan.refusal.find("/home/u/proj/web of the checkout at /srv/web, which nothing pins"),
              std::string::npos)
        << plan.refusal;
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
        return run_check_pins(static_cast<int>(argv.size()), argv.data());
    };
    EXPECT_EQ(code({"/run", "1", "src"}), 2);                 // a source without a target
    EXPECT_EQ(code({"run", "1", "src", "/srv"}), 2);          // a relative run dir
    EXPECT_EQ(code({"/run", "0", "src", "/srv"}), 2);         // no process
    EXPECT_EQ(code({"/run", "1x", "src", "/srv"}), 2);        // not a number
    EXPECT_EQ(code({"/run", "1", "../src", "/srv"}), 2);      // climbs out
    EXPECT_EQ(code({"/run", "1", "src", "srv"}), 2);          // a relative target
    EXPECT_EQ(code({"/run", "1", "src", "/srv/../etc"}), 2);  // not normal
}

// A "container": a child in a private mount namespace that binds the pin at
// one target and the home at another, then waits to be killed.
class PinCheckMounts : public ::testing::Test {
  protected:
    void SetUp() override {
        tree_.write("home/id_rsa", "SECRET");
        fs::create_directories(bind_pin_path(tree_.path("run"), "src"));
        fs::create_directories(tree_.path("c/srv/src"));
        fs::create_directories(tree_.path("c/srv/other"));
        // A container's process can rename a target's parent and plant a
        // link to another bind of the same source: it must not pass.
        fs::create_directory_symlink(tree_.path("c/srv/src"), tree_.path("c/srv/link"));
        fs::create_directory_symlink(tree_.path("c/srv"), tree_.path("c/alias"));
        int ready[2];
        ASSERT_EQ(::pipe(ready), 0);
        child_ = ::fork();
        if (child_ == 0) {
            ::close(ready[0]);
            std::string why = hb::test::enter_private_mounts();
            if (why.empty() &&
                (::mount(bind_pin_path(tree_.path("run"), "src").c_str(),
                         tree_.path("c/srv/src").c_str(), nullptr, MS_BIND, nullptr) != 0 ||
                 ::mount(tree_.path("home").c_str(), tree_.path("c/srv/other").c_str(), nullptr,
                         MS_BIND, nullptr) != 0)) {
                why = std::string("bind: ") + std::strerror(errno);
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
    TempTree tree_;
    pid_t child_ = -1;
    std::string said_;
};

TEST_F(PinCheckMounts, OnlyTheTargetHoldingThePinPasses) {
    if (said_.rfind("SKIP: ", 0) == 0) GTEST_SKIP() << said_;
    ASSERT_EQ(said_, "ready");
    std::string out;
    const std::vector<AtTarget> at =
        compare_targets(tree_.path("run"), child_,
                        {{"src", tree_.path("c/srv/src")},
                         {"src", tree_.path("c/srv/other")},
                         {"src", tree_.path("c/srv/none")},
                         {"web", tree_.path("c/srv/src")}},  // no pin of web at all
                        out);
    EXPECT_EQ(at, (std::vector<AtTarget>{AtTarget::Pinned, AtTarget::Other, AtTarget::Unreadable,
                                         AtTarget::Unreadable}))
        << out;
    // In this process's own mounts both targets are the plain dirs: the
    // check reads the child's namespace, not its caller's.
    std::string own;
    const std::vector<AtTarget> here =
        compare_targets(tree_.path("run"), ::getpid(), {{"src", tree_.path("c/srv/src")}}, own);
    EXPECT_EQ(here, std::vector<AtTarget>{AtTarget::Other}) << own;
    auto differ = parse_check_answer(out, 4);
    ASSERT_TRUE(differ) << out;
    EXPECT_EQ(differ->size(), 3u);
}

TEST_F(PinCheckMounts, ALinkOnTheWayToThePinIsNeverPinned) {
    if (said_.rfind("SKIP: ", 0) == 0) GTEST_SKIP() << said_;
    ASSERT_EQ(said_, "ready");
    std::string out;
    const std::vector<AtTarget> at = compare_targets(
        tree_.path("run"), child_,
        {{"src", tree_.path("c/srv/link")}, {"src", tree_.path("c/alias/src")}}, out);
    // The link itself, not what it names; a link on the way, refused.
    EXPECT_EQ(at, (std::vector<AtTarget>{AtTarget::Other, AtTarget::Unreadable})) << out;
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
    if (said_.rfind("SKIP: ", 0) == 0) GTEST_SKIP() << said_;
    ::kill(child_, SIGKILL);
    ::waitpid(child_, nullptr, 0);
    const pid_t gone = child_;
    child_ = -1;
    std::string out;
    // Unreadable, unless the pid was reused at once: then that process's
    // root, where the target is a plain dir, not the pin.
    const auto at =
        compare_targets(tree_.path("run"), gone, {{"src", tree_.path("c/srv/src")}}, out);
    ASSERT_EQ(at.size(), 1u);
    EXPECT_NE(at[0], AtTarget::Pinned) << out;
}

}  // namespace
}  // namespace hb::exec
