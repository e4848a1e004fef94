// Issue 5 "Done when": install --no-systemd into a temporary home, run the
// generated unit's ExecStart on a dropped request, and doctor says healthy.
// Also two projects side by side, each served only by its own bridge.
#include <unistd.h>

#include <gtest/gtest.h>

#include "admin/util/process.hpp"
#include "tests/cli/cli_harness.hpp"

namespace hb::test {
namespace {

class EndToEnd : public ::testing::Test {
  protected:
    TempDir root{"cli"};
    Home home{root.path()};
};

// Publishes a request with the client install dropped into the spool.
std::string publish_with_client(const Home& home, const Project& project, const std::string& verb,
                                const std::string& arg = "") {
    std::vector<std::string> argv = {"/bin/sh", project.spool() + "/request", "--no-wait", verb};
    if (!arg.empty()) argv.push_back(arg);
    admin::RunOptions options;
    options.cwd = project.dir;
    options.env_set = home.env();
    auto ran = admin::run_process(argv, options);
    if (!ran || !ran->ok()) return {};
    std::string name = ran->out.substr(0, ran->out.find('\n'));
    auto slash = name.rfind('/');
    return slash == std::string::npos ? name : name.substr(slash + 1);
}

TEST_F(EndToEnd, DoneWhen) {
    Project project(root.path(), "demo-app");
    std::vector<std::string> args = {"install",
                                     "--project-dir",
                                     project.dir,
                                     "--stack-bin",
                                     project.dir + "/stack",
                                     "--compose-file",
                                     project.dir + "/compose.yaml",
                                     "--no-systemd"};
    // The drain refuses to run as root without it (CI runs as root).
    if (::geteuid() == 0) args.push_back("--allow-root");
    Ran install = home.hostbridge(args);
    ASSERT_EQ(install.code, 0) << install.out << install.err;

    const std::vector<std::string> exec_start = exec_start_of(home, "demo-app");
    ASSERT_GE(exec_start.size(), 6u);
    EXPECT_EQ(exec_start[0], home.lib_dir("demo-app") + "/hostbridge-executor");
    EXPECT_EQ(exec_start[1], "drain");

    const std::string name = publish_with_client(home, project, "restart", "api");
    ASSERT_FALSE(name.empty());
    Drained drained = run_drain_until_answered(exec_start, project.spool(), name);
    ASSERT_TRUE(drained.response.is_object()) << drained.log;
    EXPECT_EQ(drained.response["state"], "done") << drained.response.dump() << drained.log;
    EXPECT_EQ(drained.exit_code, 0) << drained.log;
    EXPECT_EQ(read_file(project.calls), "restart api\n");
    // A change that went live: the stack's text is in its log, not the answer.
    EXPECT_EQ(drained.response["output"], "") << drained.response.dump();
    EXPECT_TRUE(
        contains(read_file(project.spool() + "/" + drained.response["log"].get<std::string>()),
                 "stack ran: restart api"));

    Ran doctor = home.hostbridge({"doctor"}, project.dir);
    EXPECT_EQ(doctor.code, 0) << doctor.out;
    EXPECT_TRUE(has_line(doctor.out, "healthy"));
}

TEST_F(EndToEnd, TwoProjectsNeverSeeEachOthersRequests) {
    Project alpha(root.path(), "alpha");
    Project beta(root.path() + "/other", "beta");
    write_file(beta.compose, "services:\n  only-beta:\n    image: x\n");
    ASSERT_EQ(home.hostbridge(install_args(alpha, {"--no-systemd"})).code, 0);
    ASSERT_EQ(home.hostbridge(install_args(beta, {"--no-systemd"})).code, 0);
    EXPECT_NE(home.bridge_json("alpha")["spool_dir"], home.bridge_json("beta")["spool_dir"]);
    EXPECT_NE(exec_start_of(home, "alpha"), exec_start_of(home, "beta"));

    const std::string for_alpha = drop_request(alpha.spool(), "restart", "api");
    const std::string for_beta = drop_request(beta.spool(), "restart", "only-beta");
    Drained a = run_drain_until_answered(exec_start_of(home, "alpha"), alpha.spool(), for_alpha);
    EXPECT_EQ(a.response["state"], "done") << a.response.dump() << a.log;
    // Alpha's drain left beta's request alone.
    EXPECT_TRUE(exists(beta.spool() + "/requests/" + for_beta));
    EXPECT_FALSE(exists(beta.calls));
    EXPECT_FALSE(exists(alpha.spool() + "/responses/" + for_beta + ".response.json"));

    Drained b = run_drain_until_answered(exec_start_of(home, "beta"), beta.spool(), for_beta);
    EXPECT_EQ(b.response["state"], "done") << b.response.dump() << b.log;
    EXPECT_EQ(read_file(alpha.calls), "restart api\n");
    EXPECT_EQ(read_file(beta.calls), "restart only-beta\n");
    // A service of one project is not a service of the other.
    const std::string cross = drop_request(alpha.spool(), "restart", "only-beta");
    Drained c = run_drain_until_answered(exec_start_of(home, "alpha"), alpha.spool(), cross);
    EXPECT_EQ(c.response["state"], "denied") << c.response.dump();
    EXPECT_EQ(home.hostbridge({"doctor", "--slug", "alpha"}).code, 0);
    EXPECT_EQ(home.hostbridge({"doctor", "--slug", "beta"}).code, 0);
}

}  // namespace
}  // namespace hb::test
