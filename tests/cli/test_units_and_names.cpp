// Slugs, binary resolution, and the rendered units: escaping that survives
// odd paths, and `systemd-analyze --user verify` with nothing on stderr.
#include <unistd.h>

#include <cstdlib>

#include <gtest/gtest.h>

#include "admin/install/units.hpp"
#include "admin/util/paths.hpp"
#include "admin/util/process.hpp"
#include "admin/util/resolve_binary.hpp"
#include "admin/util/slug.hpp"
#include "tests/cli/cli_harness.hpp"

namespace hb::test {
namespace {

TEST(Slug, DerivedFromTheBasename) {
    EXPECT_EQ(admin::derive_slug("/home/u/Projects/demo-app"), "demo-app");
    EXPECT_EQ(admin::derive_slug("/home/u/My Project.v2/"), "my-project-v2");
    EXPECT_EQ(admin::derive_slug("/x/Café"), "caf-");
    EXPECT_EQ(admin::derive_slug("/x/.hidden"), "-hidden");
    EXPECT_TRUE(admin::is_valid_slug("demo-app"));
    EXPECT_TRUE(admin::is_valid_slug("0"));
    EXPECT_FALSE(admin::is_valid_slug("-hidden"));
    EXPECT_FALSE(admin::is_valid_slug(""));
    EXPECT_FALSE(admin::is_valid_slug("Demo"));
    EXPECT_FALSE(admin::is_valid_slug(std::string(64, 'a')));
    EXPECT_TRUE(admin::is_valid_slug(std::string(63, 'a')));
}

class Resolve : public ::testing::Test {
  protected:
    void SetUp() override {
        write_file(bin + "/tool", "#!/bin/sh\n", 0755);
        write_file(bin + "/data", "not executable\n", 0644);
        write_file(home + "/.bashrc", "alias hbtool='" + bin +
                                          "/tool'\n"
                                          "alias hbhome='~/tool2'\n"
                                          "alias hbpath=sh\n"
                                          "alias hbargs='" +
                                          bin +
                                          "/tool --flag'\n"
                                          "hbfunc() { :; }\n"
                                          "echo noise from bashrc\n");
        write_file(home + "/tool2", "#!/bin/sh\n", 0755);
        ::setenv("HOME", home.c_str(), 1);
        env.path_var = "/usr/bin:/bin";
        env.shell = "/bin/bash";
        env.home = home;
    }
    std::string error_of(const std::string& name) {
        auto r = admin::resolve_binary(name, env);
        return r.ok() ? "resolved to " + *r : r.error().message;
    }
    TempDir root{"cli"};
    std::string bin = root.path() + "/bin";
    std::string home = root.path() + "/home";
    admin::ResolveEnv env;
};

TEST_F(Resolve, PathsNamesOnPathAndAliases) {
    EXPECT_EQ(*admin::resolve_binary(bin + "/tool", env), bin + "/tool");
    EXPECT_EQ(*admin::resolve_binary("sh", env), "/usr/bin/sh");
    EXPECT_EQ(*admin::resolve_binary("hbtool", env), bin + "/tool");
    EXPECT_EQ(*admin::resolve_binary("hbhome", env), home + "/tool2");
    EXPECT_EQ(*admin::resolve_binary("hbpath", env), "/usr/bin/sh");
}

TEST_F(Resolve, RefusesWhatHasNoSinglePath) {
    EXPECT_TRUE(contains(error_of("hbfunc"), "hbfunc is a shell function in /bin/bash"));
    EXPECT_TRUE(contains(error_of("hbargs"), "not a single binary"));
    EXPECT_TRUE(contains(error_of("cd"), "shell builtin"));
    EXPECT_TRUE(contains(error_of("nosuch"), "cannot resolve nosuch"));
    EXPECT_TRUE(contains(error_of(bin + "/data"), "is not an executable file"));
    EXPECT_TRUE(contains(error_of("a;b"), "not a plain command name"));
}

TEST(Units, ExecStartSurvivesOddPaths) {
    admin::HostDirs dirs{"/home/u", "/home/u/cfg $HOME", "/home/u/st 100%", "/home/u/lib \"q\"",
                         "/home/u/.cache"};
    admin::InstallPaths paths = admin::install_paths(dirs, "odd");
    Config config;
    config.slug = "odd";
    config.project_dir = "/p/a b";
    config.spool_dir = "/p/a b/untracked/hostbridge";
    config.state_dir = paths.state_dir;
    config.allow_root = true;
    auto units = admin::render_units(config, paths);
    EXPECT_EQ(admin::parse_exec_start(units.service_unit), admin::exec_start_argv(config, paths));
    EXPECT_TRUE(contains(units.service_unit,
                         "StandardOutput=append:/home/u/st 100%%/hostbridge/odd/service.log"));
    EXPECT_TRUE(contains(units.service_unit, "$$HOME"));
}

// systemd-analyze --user verify: a missing executable, a relative path or a
// bad key shows up on stderr, so stderr must stay empty.
TEST(Units, PassSystemdAnalyzeVerify) {
    if (::access("/usr/bin/systemd-analyze", X_OK) != 0) {
        GTEST_SKIP() << "systemd-analyze is not installed";
    }
    TempDir root{"cli"};
    Home home(root.path());
    Project project(root.path(), "verify-me");
    Ran run = home.hostbridge(install_args(project, {"--no-systemd"}));
    ASSERT_EQ(run.code, 0) << run.err;
    admin::RunOptions options;
    options.env_set = home.env();
    auto verify = admin::run_process({"/usr/bin/systemd-analyze", "--user", "verify",
                                      home.unit_dir() + "/hostbridge-verify-me.path",
                                      home.unit_dir() + "/hostbridge-verify-me.service"},
                                     options);
    ASSERT_TRUE(verify.ok());
    EXPECT_EQ(verify->exit_code, 0) << verify->err;
    EXPECT_EQ(verify->err, "");
}

}  // namespace
}  // namespace hb::test
