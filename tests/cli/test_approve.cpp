// `hostbridge approve`: the diff, the confirmation (--yes, a terminal, or
// nothing changes), the re-pin of exactly what was shown, the `approved`
// event, and a mutating verb that runs again afterwards.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <thread>

#include "tests/cli/cli_harness.hpp"

namespace hb::test {
namespace {

class Approve : public ::testing::Test {
  protected:
    void SetUp() override {
        Ran run = home.hostbridge(install_args(project, {"--no-systemd"}));
        ASSERT_EQ(run.code, 0) << run.out << run.err;
    }
    std::string pin_of(const std::string& rel) const {
        const nlohmann::json config = home.bridge_json("demo-app");
        for (const auto& pin : config["tcb"]) {
            if (pin["path"] == rel)
                return pin["sha256"].is_null() ? "absent" : pin["sha256"].get<std::string>();
        }
        return "unpinned";
    }

    TempDir root{"cli"};
    Home home{root.path()};
    Project project{root.path(), "demo-app"};
};

TEST_F(Approve, NothingToApproveIsSuccess) {
    Ran run = home.hostbridge({"approve", "--slug", "demo-app"});
    EXPECT_EQ(run.code, 0);
    EXPECT_TRUE(contains(run.out, "nothing to approve")) << run.out;
}

TEST_F(Approve, WithoutATerminalAndWithoutYesNothingChanges) {
    write_file(project.stack, read_file(project.stack) + "echo changed\n", 0755);
    const std::string before = read_file(home.config_dir("demo-app") + "/bridge.json");
    Ran run = home.hostbridge({"approve", "--slug", "demo-app"});
    EXPECT_EQ(run.code, 1);
    EXPECT_TRUE(has_line(run.out, "+echo changed")) << run.out;
    EXPECT_TRUE(contains(run.err, "re-run with --yes")) << run.err;
    EXPECT_TRUE(
        has_line(run.err, std::string(HB_BIN_DIR) + "/hostbridge approve --slug demo-app --yes"))
        << run.err;
    EXPECT_EQ(read_file(home.config_dir("demo-app") + "/bridge.json"), before);
}

TEST_F(Approve, YesRePinsStoresTheCopyAndAudits) {
    const std::string old_pin = pin_of("compose.yaml");
    write_file(project.compose, read_file(project.compose) + "  cache:\n    image: redis\n");
    Ran run = home.hostbridge({"approve", "--slug", "demo-app", "--yes"});
    ASSERT_EQ(run.code, 0) << run.out << run.err;
    EXPECT_TRUE(has_line(run.out, "--- approved/compose.yaml")) << run.out;
    EXPECT_TRUE(has_line(run.out, "+++ compose.yaml"));
    EXPECT_TRUE(has_line(run.out, "+  cache:"));
    EXPECT_NE(pin_of("compose.yaml"), old_pin);
    EXPECT_EQ(read_file(home.state_dir("demo-app") + "/approved/compose.yaml"),
              read_file(project.compose));
    Ran audit = home.hostbridge({"audit", "--slug", "demo-app", "--json", "--tail", "1"});
    auto event = nlohmann::json::parse(split_lines(audit.out).at(0));
    EXPECT_EQ(event["event"], "approved");
    EXPECT_TRUE(contains(event["reason"].get<std::string>(), "compose.yaml"));
    EXPECT_EQ(home.hostbridge({"doctor", "--slug", "demo-app"}).code, 0);
    // Installing again picks the new service up now that it is approved.
    ASSERT_EQ(home.hostbridge(install_args(project, {"--no-systemd"})).code, 0);
    EXPECT_EQ(home.bridge_json("demo-app")["services"],
              nlohmann::json::array({"api", "cache", "db", "web", "worker"}));
}

TEST_F(Approve, AFileCreatedWherePinnedAbsentIsShownAndPinned) {
    write_file(project.dir + "/.env", "TAG=1\n");
    Ran run = home.hostbridge({"approve", "--slug", "demo-app", "--yes"});
    ASSERT_EQ(run.code, 0) << run.err;
    EXPECT_TRUE(contains(run.out, ".env: created")) << run.out;
    EXPECT_TRUE(has_line(run.out, "+TAG=1"));
    EXPECT_NE(pin_of(".env"), "absent");
}

TEST_F(Approve, PinsAFileTheApprovedComposeFileNewlyIncludes) {
    write_file(project.dir + "/extra.yaml", "services:\n  extra:\n    image: x\n");
    write_file(project.compose, "include:\n  - extra.yaml\n" + read_file(project.compose));
    Ran run = home.hostbridge({"approve", "--slug", "demo-app", "--yes"});
    ASSERT_EQ(run.code, 0) << run.err;
    EXPECT_TRUE(contains(run.out, "extra.yaml: newly pulled in")) << run.out;
    EXPECT_NE(pin_of("extra.yaml"), "unpinned");
    // The gate now covers it: an edit is a problem.
    write_file(project.dir + "/extra.yaml", "services:\n  extra:\n    image: evil\n");
    EXPECT_EQ(home.hostbridge({"doctor", "--slug", "demo-app"}).code, 1);
}

TEST_F(Approve, RefusesASymlinkedTrustedFile) {
    ASSERT_EQ(::unlink(project.stack.c_str()), 0);
    write_file(project.dir + "/real-stack", "#!/bin/sh\n", 0755);
    ASSERT_EQ(::symlink("real-stack", project.stack.c_str()), 0);
    Ran run = home.hostbridge({"approve", "--slug", "demo-app", "--yes"});
    EXPECT_EQ(run.code, 1);
    EXPECT_TRUE(contains(run.err, project.stack + " is a symlink")) << run.err;
}

TEST_F(Approve, AsksOnATerminal) {
    write_file(project.stack, read_file(project.stack) + "echo v2\n", 0755);
    for (const char* answer : {"n\n", "y\n"}) {
        const Prompted asked =
            home.hostbridge_on_a_terminal({"approve", "--slug", "demo-app"}, answer);
        ASSERT_TRUE(contains(asked.shown, "+echo v2")) << asked.shown;
        EXPECT_EQ(asked.code, answer[0] == 'y' ? 0 : 1) << answer;
        EXPECT_EQ(home.hostbridge({"doctor", "--slug", "demo-app"}).code, answer[0] == 'y' ? 0 : 1);
    }
}

TEST_F(Approve, AMutatingVerbRunsAgainOnceApproved) {
    write_file(project.stack, read_file(project.stack) + "# reviewed change\n", 0755);
    const auto drain = exec_start_of(home, "demo-app");
    ASSERT_FALSE(drain.empty());

    const std::string refused = drop_request(project.spool(), "restart", "api");
    Drained before = run_drain_until_answered(drain, project.spool(), refused);
    ASSERT_TRUE(before.response.is_object()) << before.log;
    EXPECT_EQ(before.response["state"], "denied") << before.response.dump();
    EXPECT_TRUE(contains(before.response["reason"].get<std::string>(), "stack"))
        << before.response.dump();
    EXPECT_FALSE(exists(project.calls));

    ASSERT_EQ(home.hostbridge({"approve", "--slug", "demo-app", "--yes"}).code, 0);
    const std::string allowed = drop_request(project.spool(), "restart", "api");
    Drained after = run_drain_until_answered(drain, project.spool(), allowed);
    ASSERT_TRUE(after.response.is_object()) << after.log;
    EXPECT_EQ(after.response["state"], "done") << after.response.dump() << after.log;
    EXPECT_EQ(read_file(project.calls), "restart api\n");
}

}  // namespace
}  // namespace hb::test
