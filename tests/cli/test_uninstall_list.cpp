// `hostbridge list` and `hostbridge uninstall [--purge]`.
#include <gtest/gtest.h>

#include "tests/cli/cli_harness.hpp"

namespace hb::test {
namespace {

class Lifecycle : public ::testing::Test {
  protected:
    TempDir root{"cli"};
    Home home{root.path()};
    Project alpha{root.path(), "alpha"};
    Project beta{root.path(), "beta"};
};

TEST_F(Lifecycle, ListShowsEveryInstall) {
    EXPECT_TRUE(contains(home.hostbridge({"list"}).out, "no installs"));
    ASSERT_EQ(home.hostbridge(install_args(alpha, {"--no-systemd"})).code, 0);
    ASSERT_EQ(home.hostbridge(install_args(beta)).code, 0);
    Ran run = home.hostbridge({"list"});
    ASSERT_EQ(run.code, 0) << run.err;
    auto lines = split_lines(run.out);
    ASSERT_EQ(lines.size(), 3u) << run.out;
    EXPECT_TRUE(contains(lines[1], "alpha") && contains(lines[1], alpha.dir) &&
                contains(lines[1], "no-systemd") && lines[1].ends_with("  -"))
        << lines[1];  // no request yet: install's own event is not the agent's
    // No manager here, and nobody ran `enable`: disabled.
    EXPECT_TRUE(contains(lines[2], "beta") && contains(lines[2], "disabled")) << lines[2];
}

TEST_F(Lifecycle, UninstallLeavesOnlyTheState) {
    ASSERT_EQ(home.hostbridge(install_args(alpha, {"--no-systemd"})).code, 0);
    ASSERT_EQ(home.hostbridge(install_args(beta, {"--no-systemd"})).code, 0);
    // As if `systemctl --user enable` had run without a manager to ask.
    write_file(home.unit_dir() + "/default.target.wants/keep", "");
    ASSERT_EQ(::symlink((home.unit_dir() + "/hostbridge-alpha.path").c_str(),
                        (home.unit_dir() + "/default.target.wants/hostbridge-alpha.path").c_str()),
              0);
    Ran run = home.hostbridge({"uninstall"}, alpha.dir);  // found from the cwd
    ASSERT_EQ(run.code, 0) << run.out << run.err;
    for (const std::string& gone :
         {home.unit_dir() + "/hostbridge-alpha.path", home.unit_dir() + "/hostbridge-alpha.service",
          home.unit_dir() + "/default.target.wants/hostbridge-alpha.path", home.lib_dir("alpha"),
          home.config_dir("alpha"), alpha.spool() + "/request", alpha.spool() + "/AGENT.md"}) {
        EXPECT_FALSE(exists(gone)) << gone;
    }
    EXPECT_TRUE(exists(home.state_dir("alpha") + "/audit.jsonl"));
    EXPECT_TRUE(exists(home.state_dir("alpha") + "/approved/stack"));
    // The other project is untouched.
    EXPECT_EQ(home.hostbridge({"doctor", "--slug", "beta"}).code, 0);
    // Nothing of alpha's is left in the home but its state.
    for (const auto& entry : tree(root.path())) {
        if (!contains(entry, "alpha")) continue;
        EXPECT_TRUE(entry.rfind("alpha", 0) == 0 ||  // the project itself
                    entry.rfind("xdg-state/hostbridge/alpha", 0) == 0)
            << entry;
    }
}

TEST_F(Lifecycle, PurgeLeavesNothing) {
    ASSERT_EQ(home.hostbridge(install_args(alpha, {"--no-systemd"})).code, 0);
    drop_request(alpha.spool(), "ping");
    Ran run = home.hostbridge({"uninstall", "--slug", "alpha", "--purge"});
    ASSERT_EQ(run.code, 0) << run.err;
    EXPECT_FALSE(exists(home.state_dir("alpha")));
    EXPECT_FALSE(exists(alpha.spool()));
    for (const std::string& dir : {home.config_home, home.state_home, home.home}) {
        for (const auto& entry : tree(dir)) {
            EXPECT_FALSE(contains(entry, "hostbridge")) << dir << "/" << entry;
        }
    }
    EXPECT_TRUE(contains(home.hostbridge({"list"}).out, "no installs"));
}

TEST_F(Lifecycle, UninstallOfAnUnknownSlugFails) {
    Ran run = home.hostbridge({"uninstall", "--slug", "nosuch"});
    EXPECT_EQ(run.code, 1);
    EXPECT_TRUE(contains(run.err, "no install named nosuch"));
    Ran nowhere = home.hostbridge({"uninstall"}, root.path());
    EXPECT_EQ(nowhere.code, 1);
    EXPECT_TRUE(contains(nowhere.err, "pass --slug")) << nowhere.err;
}

}  // namespace
}  // namespace hb::test
