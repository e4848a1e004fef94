// `hostbridge upgrade`, `list`'s VERSION column and doctor's "older than this
// hostbridge": an install made by an older release (simulated: its executor
// copy prints an older version, its parser copy differs, a unit and the
// spool client are stale) is brought up to the build tree's binaries.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/cli/cli_harness.hpp"

namespace hb::test {
namespace {

ino_t inode_of(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return st.st_ino;
}

class Upgrade : public ::testing::Test {
  protected:
    void SetUp() override {
        Ran v = home.hostbridge({"--version"});
        ASSERT_EQ(v.code, 0);
        ASSERT_EQ(v.out.rfind("hostbridge ", 0), 0u) << v.out;
        version = v.out.substr(11, v.out.find('\n') - 11);
        ASSERT_EQ(home.hostbridge(install_args(alpha, {"--no-systemd"})).code, 0);
        ASSERT_EQ(home.hostbridge(install_args(beta, {"--no-systemd"})).code, 0);
    }
    // What an older release left in alpha's lib dir (written in place).
    void make_alpha_old() {
        write_file(executor(), "#!/bin/sh\necho hostbridge-executor 0.0.1\n", 0755);
        write_file(parser(), read_file(parser()) + "older", 0755);
        write_file(home.unit_dir() + "/hostbridge-alpha.service", "[Unit]\n# old\n");
        ASSERT_EQ(::unlink((alpha.spool() + "/request").c_str()), 0);
    }
    std::string executor() const { return home.lib_dir("alpha") + "/hostbridge-executor"; }
    std::string parser() const { return home.lib_dir("alpha") + "/hostbridge-parser"; }
    std::string list_line(const std::string& slug) const {
        for (const auto& line : split_lines(home.hostbridge({"list"}).out)) {
            if (line.rfind(slug + " ", 0) == 0) return line;
        }
        return "";
    }

    TempDir root{"cli"};
    Home home{root.path()};
    Project alpha{root.path(), "alpha"};
    Project beta{root.path(), "beta"};
    std::string version;
};

TEST_F(Upgrade, ListShowsTheVersionEachInstallRuns) {
    Ran list = home.hostbridge({"list"});
    ASSERT_EQ(list.code, 0) << list.err;
    EXPECT_TRUE(contains(split_lines(list.out)[0], "VERSION")) << list.out;
    EXPECT_TRUE(contains(list_line("alpha"), " " + version + " ")) << list.out;
    make_alpha_old();
    EXPECT_TRUE(contains(list_line("alpha"), " 0.0.1 ")) << home.hostbridge({"list"}).out;
    EXPECT_TRUE(contains(list_line("beta"), " " + version + " "));
}

TEST_F(Upgrade, DoctorNamesTheUpgradeForAnOlderInstall) {
    Ran healthy = home.hostbridge({"doctor", "--slug", "alpha"});
    ASSERT_EQ(healthy.code, 0) << healthy.out;
    EXPECT_TRUE(contains(healthy.out, "version " + version)) << healthy.out;
    make_alpha_old();
    Ran sick = home.hostbridge({"doctor", "--slug", "alpha"});
    EXPECT_EQ(sick.code, 1);
    EXPECT_TRUE(
        contains(sick.out, "hostbridge-executor 0.0.1, older than this hostbridge " + version))
        << sick.out;
    EXPECT_TRUE(contains(sick.out, "upgrade --slug alpha\n")) << sick.out;
    // An executor from before --version is older too.
    write_file(executor(), "#!/bin/sh\nexit 2\n", 0755);
    sick = home.hostbridge({"doctor", "--slug", "alpha"});
    EXPECT_TRUE(contains(sick.out, "prints no version: it is older")) << sick.out;
}

TEST_F(Upgrade, ReplacesEveryCopyByRenameAndRendersTheFilesAgain) {
    make_alpha_old();
    const ino_t old_executor = inode_of(executor());
    const ino_t old_parser = inode_of(parser());
    const ino_t beta_executor = inode_of(home.lib_dir("beta") + "/hostbridge-executor");
    // A drain running the old copy: it holds the old inode open.
    int running = ::open(executor().c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(running, 0);

    Ran run = home.hostbridge({"upgrade"});
    ASSERT_EQ(run.code, 0) << run.out << run.err;
    EXPECT_TRUE(contains(run.out, "hostbridge upgrade: alpha (0.0.1 -> " + version + ")"))
        << run.out;
    EXPECT_TRUE(contains(run.out, "2 install(s) at " + version)) << run.out;

    // Same paths, new inodes, the build tree's bytes.
    EXPECT_NE(inode_of(executor()), old_executor);
    EXPECT_NE(inode_of(parser()), old_parser);
    EXPECT_EQ(read_file(executor()), read_file(std::string(HB_BIN_DIR) + "/hostbridge-executor"));
    EXPECT_EQ(read_file(parser()), read_file(std::string(HB_BIN_DIR) + "/hostbridge-parser"));
    EXPECT_EQ(mode_of(executor()), 0755u);
    // beta was current: left as it was.
    EXPECT_EQ(inode_of(home.lib_dir("beta") + "/hostbridge-executor"), beta_executor);
    // The running drain still reads the file it started from.
    char buf[64] = {};
    ASSERT_GT(::pread(running, buf, sizeof buf - 1, 0), 0);
    EXPECT_TRUE(contains(buf, "0.0.1"));
    ::close(running);

    // Units and the spool client rendered again.
    EXPECT_FALSE(contains(read_file(home.unit_dir() + "/hostbridge-alpha.service"), "# old"));
    EXPECT_TRUE(exists(alpha.spool() + "/request"));
    EXPECT_TRUE(contains(list_line("alpha"), " " + version + " "));
    Ran doctor = home.hostbridge({"doctor", "--slug", "alpha"});
    EXPECT_EQ(doctor.code, 0) << doctor.out;

    // Nothing left to do: a second upgrade changes nothing.
    Ran again = home.hostbridge({"upgrade", "--slug", "alpha"});
    EXPECT_EQ(again.code, 0) << again.out << again.err;
    EXPECT_TRUE(contains(again.out, "hostbridge install: nothing changed")) << again.out;
    // ...and writes nothing: the last audit event is still the last upgrade's.
    const auto events_before =
        split_lines(home.hostbridge({"audit", "--slug", "alpha", "--json"}).out);
    Ran third = home.hostbridge({"upgrade", "--slug", "alpha"});
    EXPECT_EQ(third.code, 0) << third.out << third.err;
    EXPECT_EQ(split_lines(home.hostbridge({"audit", "--slug", "alpha", "--json"}).out),
              events_before);
}

// An install from before issue 27 has the old seeded policy (every verb
// auto): upgrade holds up and rebuild for a person and says why, for every
// install, and leaves the rest of each file as the person wrote it.
// Both installs are stacks without an engine user: both are held
// (admin/install/policy_engine_guard.hpp).
TEST_F(Upgrade, HoldsUpAndRebuildForAPersonInEveryStackInstall) {
    for (const std::string& slug : {std::string("alpha"), std::string("beta")}) {
        write_file(home.config_dir(slug) + "/policy.conf",
                   "MODE_ping=auto\nMODE_up=auto\nMODE_rebuild=auto\nMODE_restart=auto\n");
    }
    Ran run = home.hostbridge({"upgrade"});
    ASSERT_EQ(run.code, 0) << run.out << run.err;
    for (const std::string& slug : {std::string("alpha"), std::string("beta")}) {
        EXPECT_EQ(read_file(home.config_dir(slug) + "/policy.conf"),
                  "MODE_ping=auto\nMODE_up=ask\nMODE_rebuild=ask\nMODE_restart=auto\n")
            << slug;
    }
    EXPECT_TRUE(contains(run.out, "MODE_up, MODE_rebuild changed from auto to ask")) << run.out;
    EXPECT_TRUE(contains(run.out, "a stack builds with its own command")) << run.out;
    EXPECT_TRUE(contains(run.out, "up is held for a person (ask): the engine runs as you"))
        << run.out;
}

TEST_F(Upgrade, AnInstallWithoutItsRecordFailsAndTheOthersStillUpgrade) {
    make_alpha_old();
    ASSERT_EQ(::unlink((home.config_dir("beta") + "/install.json").c_str()), 0);
    Ran run = home.hostbridge({"upgrade"});
    EXPECT_EQ(run.code, 1);
    EXPECT_TRUE(contains(run.err, "beta: ")) << run.err;
    EXPECT_TRUE(contains(run.err, "1 of 2 install(s) not upgraded: beta")) << run.err;
    EXPECT_TRUE(contains(list_line("alpha"), " " + version + " "));
    EXPECT_EQ(home.hostbridge({"upgrade", "--slug", "nosuch"}).code, 1);
    EXPECT_EQ(home.hostbridge({"upgrade", "--slug", "Bad/Slug"}).code, 2);
}

}  // namespace
}  // namespace hb::test
