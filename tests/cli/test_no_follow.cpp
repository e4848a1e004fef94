// The admin tool follows no link planted in the checkout (issue 12): each
// spool directory, and untracked/ itself, swapped for a symlink to a
// directory outside the checkout (holding a sentinel, a `request` and an
// `AGENT.md`), then install, uninstall, uninstall --purge and doctor. Each
// must fail with a message naming the link, and leave the outside
// directory exactly as it was.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "tests/cli/cli_harness.hpp"

namespace hb::test {
namespace {

// Relative to the project: untracked/, the spool, its subdirectories.
const std::vector<std::string> kTargets = {
    "untracked",
    "untracked/hostbridge",
    "untracked/hostbridge/tmp",
    "untracked/hostbridge/requests",
    "untracked/hostbridge/processing",
    "untracked/hostbridge/responses",
    "untracked/hostbridge/archive",
    "untracked/hostbridge/quarantine",
    "untracked/hostbridge/diagnostics",
};
const std::vector<std::string> kCommands = {"install", "uninstall", "purge", "doctor"};

std::map<std::string, std::string> snapshot(const std::string& dir) {
    std::map<std::string, std::string> out;
    for (const auto& rel : tree(dir)) {
        struct stat st {};
        ::lstat((dir + "/" + rel).c_str(), &st);
        out[rel] = S_ISREG(st.st_mode) ? read_file(dir + "/" + rel) : "(not a file)";
    }
    return out;
}

class NoFollow : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {
  protected:
    void SetUp() override {
        Ran run = home.hostbridge(install_args(project, {"--no-systemd"}));
        ASSERT_EQ(run.code, 0) << run.out << run.err;
        outside = root.path() + "/outside";
        write_file(outside + "/sentinel", "keep me\n");
        write_file(outside + "/request", "not the client\n");
        write_file(outside + "/AGENT.md", "not the doc\n");
        write_file(outside + "/sub/deep", "deep\n");
    }

    TempDir root{"cli"};
    Home home{root.path()};
    Project project{root.path(), "demo-app"};
    std::string outside;
};

TEST_P(NoFollow, RefusesAndLeavesTheOutsideDirectoryAlone) {
    const auto& [target, command] = GetParam();
    const std::string link = project.dir + "/" + target;
    // The real directory is moved aside (its content is the agent's anyway).
    ASSERT_EQ(::rename(link.c_str(), (root.path() + "/moved-aside").c_str()), 0);
    ASSERT_EQ(::symlink(outside.c_str(), link.c_str()), 0);
    const auto before = snapshot(outside);

    Ran run;
    if (command == "install") {
        run = home.hostbridge(install_args(project, {"--no-systemd"}));
    } else if (command == "uninstall") {
        run = home.hostbridge({"uninstall", "--slug", "demo-app"});
    } else if (command == "purge") {
        run = home.hostbridge({"uninstall", "--slug", "demo-app", "--purge"});
    } else {
        run = home.hostbridge({"doctor", "--slug", "demo-app"});
    }
    EXPECT_EQ(run.code, 1) << run.out << run.err;
    EXPECT_TRUE(contains(run.out + run.err, link + " is a symlink")) << run.out << run.err;
    EXPECT_EQ(snapshot(outside), before) << command << " touched " << outside;
    EXPECT_EQ(read_file(outside + "/sentinel"), "keep me\n");
    // The link itself is left for the person to look at.
    struct stat st {};
    EXPECT_EQ(::lstat(link.c_str(), &st), 0);
    EXPECT_TRUE(S_ISLNK(st.st_mode));
    if (command != "install" && command != "doctor") {
        // Refused before anything was removed.
        EXPECT_TRUE(exists(home.config_dir("demo-app") + "/bridge.json")) << run.out;
    }
}

INSTANTIATE_TEST_SUITE_P(EverySpoolDirAndCommand, NoFollow,
                         ::testing::Combine(::testing::ValuesIn(kTargets),
                                            ::testing::ValuesIn(kCommands)),
                         [](const auto& param_info) {
                             std::string name = std::get<1>(param_info.param) + "_" +
                                                std::get<0>(param_info.param);
                             for (char& c : name) {
                                 if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                             }
                             return name;
                         });

// A link swapped in for the client itself is replaced, never written through.
TEST(NoFollowFiles, InstallReplacesALinkedClientWithoutWritingThroughIt) {
    TempDir root{"cli"};
    Home home{root.path()};
    Project project{root.path(), "demo-app"};
    ASSERT_EQ(home.hostbridge(install_args(project, {"--no-systemd"})).code, 0);
    write_file(root.path() + "/outside/target", "outside\n");
    for (const char* name : {"request", "AGENT.md"}) {
        const std::string path = project.spool() + "/" + name;
        ASSERT_EQ(::unlink(path.c_str()), 0);
        ASSERT_EQ(::symlink((root.path() + "/outside/target").c_str(), path.c_str()), 0);
    }
    Ran run = home.hostbridge(install_args(project, {"--no-systemd"}));
    ASSERT_EQ(run.code, 0) << run.out << run.err;
    EXPECT_EQ(read_file(root.path() + "/outside/target"), "outside\n");
    EXPECT_FALSE(S_ISLNK(mode_of(project.spool() + "/request")));
    struct stat st {};
    ASSERT_EQ(::lstat((project.spool() + "/request").c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode));
    // And uninstall removes the entries, never what a link points at.
    for (const char* name : {"request", "AGENT.md"}) {
        const std::string path = project.spool() + "/" + name;
        ASSERT_EQ(::unlink(path.c_str()), 0);
        ASSERT_EQ(::symlink((root.path() + "/outside/target").c_str(), path.c_str()), 0);
    }
    ASSERT_EQ(home.hostbridge({"uninstall", "--slug", "demo-app", "--purge"}).code, 0);
    EXPECT_EQ(read_file(root.path() + "/outside/target"), "outside\n");
    EXPECT_FALSE(exists(project.spool()));
}

}  // namespace
}  // namespace hb::test

namespace hb::test {
namespace {

// The host-side request client (`hostbridge request`), run by a person on
// the host, with tmp/, requests/ or the spool itself swapped for a link to
// a directory outside the checkout (issue 28: the request file was created
// and renamed there, as the host user, 3 of 3): refused, nothing written.
class RequestNoFollow : public ::testing::TestWithParam<std::string> {};

TEST_P(RequestNoFollow, TheHostSideClientRefusesALinkedSpool) {
    TempDir root{"cli"};
    Home home{root.path()};
    Project project{root.path(), "demo-app"};
    ASSERT_EQ(home.hostbridge(install_args(project, {"--no-systemd"})).code, 0);
    const std::string outside = root.path() + "/outside";
    write_file(outside + "/sentinel", "keep me\n");
    // Shaped as a spool, so only the link gives it away.
    for (const char* dir : {"tmp", "requests", "responses"})
        write_file(outside + "/" + dir + "/x", "");
    const std::string link = project.dir + "/" + GetParam();
    ASSERT_EQ(::rename(link.c_str(), (root.path() + "/moved-aside").c_str()), 0);
    ASSERT_EQ(::symlink(outside.c_str(), link.c_str()), 0);
    const auto before = snapshot(outside);
    const Ran run = home.hostbridge({"request", "--project-dir", project.dir, "--no-wait", "ping"},
                                    project.dir);
    EXPECT_NE(run.code, 0) << run.out << run.err;
    EXPECT_TRUE(contains(run.err, "symlink")) << run.err;
    EXPECT_EQ(snapshot(outside), before) << "the client wrote through " << link;
}

INSTANTIATE_TEST_SUITE_P(SpoolDirs, RequestNoFollow,
                         ::testing::Values("untracked/hostbridge", "untracked/hostbridge/tmp",
                                           "untracked/hostbridge/requests",
                                           "untracked/hostbridge/responses"),
                         [](const auto& param_info) {
                             std::string name = param_info.param;
                             for (char& c : name) {
                                 if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                             }
                             return name;
                         });

}  // namespace
}  // namespace hb::test
