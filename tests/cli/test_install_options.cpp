// The re-install line doctor prints is derived from the parsed options
// (admin/install/install_options.cpp): parsing it back gives the same options, for
// every option install takes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "admin/install/install_options.hpp"
#include "admin/install/spool_setup.hpp"

namespace hb::admin {
namespace {

Result<InstallOptions> parse(std::vector<std::string> words) {
    words.insert(words.begin(), "install");
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    return parse_install_options(static_cast<int>(argv.size()), argv.data());
}

void expect_same(const InstallOptions& a, const InstallOptions& b) {
    EXPECT_EQ(a.project_dir, b.project_dir);
    EXPECT_EQ(a.spool_rel, b.spool_rel);
    EXPECT_EQ(a.backend, b.backend);
    EXPECT_EQ(a.stack_bin, b.stack_bin);
    EXPECT_EQ(a.compose_file, b.compose_file);
    EXPECT_EQ(a.compose_cmd, b.compose_cmd);
    EXPECT_EQ(a.services, b.services);
    EXPECT_EQ(a.buildable, b.buildable);
    EXPECT_EQ(a.tcb, b.tcb);
    EXPECT_EQ(a.agent_container, b.agent_container);
    EXPECT_EQ(a.network, b.network);
    EXPECT_EQ(a.engine, b.engine);
    EXPECT_EQ(a.rate_limit, b.rate_limit);
    EXPECT_EQ(a.read_rate_limit, b.read_rate_limit);
    EXPECT_EQ(a.ttl_seconds, b.ttl_seconds);
    EXPECT_EQ(a.linger_seconds, b.linger_seconds);
    EXPECT_EQ(a.verb_timeouts, b.verb_timeouts);
    EXPECT_EQ(a.file_mode, b.file_mode);
    EXPECT_EQ(a.agent_gid, b.agent_gid);
    EXPECT_EQ(a.allow_root, b.allow_root);
    EXPECT_EQ(a.no_systemd, b.no_systemd);
}

TEST(InstallOptions, TheReinstallLineParsesBackToTheSameOptions) {
    const std::vector<std::vector<std::string>> cases = {
        {},
        {"--project-dir",
         "/srv/app",
         "--spool",
         "var/bridge/",
         "--backend",
         "stack",
         "--stack-bin",
         "/usr/local/bin/stack",
         "--services",
         "db,api,,api",
         "--buildable",
         "api",
         "--tcb",
         "Makefile",
         "--tcb",
         "env/app.env",
         "--rate-limit",
         "5/60",
         "--read-rate-limit",
         "300/30",
         "--ttl",
         "90",
         "--linger",
         "0",
         "--max-held",
         "3",
         "--verb-timeout",
         "rebuild=3000",
         "--verb-timeout",
         "default=010",
         "--file-mode",
         "640",
         "--agent-gid",
         "1234",
         "--allow-root",
         "--no-systemd",
         "--force"},
        {"--project-dir", "relative/dir", "--backend", "compose", "--compose-file",
         "deploy/compose.yml", "--compose-cmd", "podman  compose --in-pod false",
         "--agent-container", "agent", "--network", "app_net", "--engine", "podman"},
        // Defaults spelled out are left out of the line, and still the same.
        {"--spool", "untracked/hostbridge", "--rate-limit", "60/600", "--ttl", "600", "--file-mode",
         "0644"},
    };
    for (const auto& words : cases) {
        auto first = parse(words);
        ASSERT_TRUE(first) << first.error().message;
        const std::vector<std::string> line = reinstall_args(*first);
        auto again = parse(line);
        ASSERT_TRUE(again) << again.error().message;
        expect_same(*first, *again);
        EXPECT_EQ(reinstall_args(*again), line);
        for (const auto& w : line) EXPECT_NE(w, "--force");
    }
}

TEST(InstallOptions, DefaultsSpelledOutAreNotRepeated) {
    auto o =
        parse({"--project-dir", "/p", "--spool", "untracked/hostbridge", "--rate-limit", "60/600",
               "--read-rate-limit", "120/60", "--ttl", "600", "--file-mode", "0644"});
    ASSERT_TRUE(o) << o.error().message;
    EXPECT_EQ(reinstall_args(*o), (std::vector<std::string>{"--project-dir", "/p"}));
}

// --spool: the plain relative path rule (ipc/path_component.hpp), then only
// [A-Za-z0-9._-/], never inside .git. Each refusal says which.
TEST(SpoolRel, PlainRelativeNamesOnly) {
    for (std::string_view ok : {"untracked/hostbridge", "a", ".spool", "a/b-c_d.e", "x/.gitx"})
        EXPECT_TRUE(validate_spool_rel(ok)) << ok;
    auto says = [](std::string_view rel, std::string_view what) {
        const auto r = validate_spool_rel(rel);
        if (r) return ::testing::AssertionFailure() << rel << " was accepted";
        if (r.error().message.find(what) == std::string::npos)
            return ::testing::AssertionFailure() << rel << ": " << r.error().message;
        return ::testing::AssertionSuccess();
    };
    EXPECT_TRUE(says("", "must be a relative path"));
    EXPECT_TRUE(says("/abs/spool", "must be a relative path"));
    for (std::string_view bad : {"a/", "a//b", ".", "./a", "..", "../out", "a/../b"})
        EXPECT_TRUE(says(bad, "must be a plain relative path")) << bad;
    EXPECT_TRUE(says("a b", "may only use"));
    EXPECT_TRUE(says(std::string_view("a\0b", 3), "may only use"));
    EXPECT_TRUE(says(".git", "inside .git"));
    EXPECT_TRUE(says("x/.git/y", "inside .git"));
}

}  // namespace
}  // namespace hb::admin
