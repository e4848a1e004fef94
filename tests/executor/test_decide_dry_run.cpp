// MODE_<verb>=dry-run end to end through the real drain and parser: the
// request meets expiry, policy, the argv table and the integrity gate as
// usual, then nothing runs, no rate-limit slot is used, and the answer is
// `denied` with what would have run in docs/ARGV-TABLE.md's names.
#include <gtest/gtest.h>

#include "tests/executor/decide_fixture.hpp"

namespace {

using hb::test::StackFixture;

TEST(DecideDryRun, AnswersWhatWouldRunAndRunsNothing) {
    StackFixture f;
    f.policy_all_auto_but("MODE_restart.db=dry-run\nMODE_logs=dry-run\n");
    const std::string restart_db = f.publish("restart", "db");
    const std::string logs = f.publish("logs", "web");
    const std::string restart_api = f.publish("restart", "api");
    f.drain();
    EXPECT_EQ(f.state_of(restart_db), "denied");
    EXPECT_EQ(f.reason_of(restart_db), "dry run: would run $STACK restart db");
    EXPECT_EQ(f.reason_of(logs), "dry run: would run $STACK logs web");
    // No host path in the answer: the agent learns the shape, not the host.
    EXPECT_EQ(f.reason_of(logs).find('/'), std::string::npos);
    EXPECT_EQ(f.audit_reason(restart_db, "denied"), "dry run: would run $STACK restart db");
    EXPECT_TRUE(f.audit_for(restart_db, "started").empty());
    EXPECT_EQ(f.state_of(restart_api), "done");
    EXPECT_EQ(f.recorded(),
              (std::vector<std::vector<std::string>>{{f.in_tree("stack"), "restart", "api"}}));
}

TEST(DecideDryRun, UsesNoRateLimitSlot) {
    StackFixture f;
    f.limits(1, 600, 120, 60);
    f.policy_all_auto_but("MODE_down=dry-run\n");
    std::vector<std::string> dry;
    for (int i = 0; i < 3; ++i) dry.push_back(f.publish("down"));
    f.drain();
    for (const auto& name : dry) {
        EXPECT_EQ(f.reason_of(name), "dry run: would run $STACK stop") << name;
    }
    // The window of one mutating command is still whole.
    f.policy_all_auto_but("");
    const std::string real = f.publish("down");
    f.drain();
    EXPECT_EQ(f.state_of(real), "done") << f.reason_of(real);
    EXPECT_EQ(f.recorded(), (std::vector<std::vector<std::string>>{{f.in_tree("stack"), "stop"}}));
}

TEST(DecideDryRun, StillMeetsTheArgvTableAndTheIntegrityGate) {
    StackFixture f;
    f.git_init();
    f.pin({"stack"});
    f.policy_all_auto_but("MODE_rebuild=dry-run\nMODE_status=dry-run\n");
    const std::string not_buildable = f.publish("rebuild", "db");
    const std::string buildable = f.publish("rebuild", "web");
    f.drain();
    EXPECT_EQ(f.reason_of(not_buildable), "arg is not a buildable service");
    EXPECT_EQ(f.reason_of(buildable), "dry run: would run $STACK build web");

    hb::test::write_file(f.stack, hb::test::read_file(f.stack) + "# edited by the agent\n");
    const std::string gated = f.publish("status");
    f.drain();
    EXPECT_EQ(f.reason_of(gated).rfind("integrity gate: stack changed", 0), 0u)
        << f.reason_of(gated);
    EXPECT_TRUE(f.recorded().empty());
}

// ping runs nothing: under dry-run it is still the agent's liveness check.
TEST(DecideDryRun, PingStillAnswersPong) {
    StackFixture f;
    f.policy_all_auto_but("MODE_ping=dry-run\n");
    const std::string ping = f.publish("ping");
    f.drain();
    EXPECT_EQ(f.state_of(ping), "done") << f.reason_of(ping);
    EXPECT_EQ((*f.response(ping))["output"], "pong");
}

TEST(DecideDryRun, AnExpiredRequestIsExpiredNotDryRun) {
    StackFixture f;
    f.policy_all_auto_but("MODE_down=dry-run\n");
    const std::string old = f.publish_at("down", "", std::time(nullptr) - 3600);
    f.drain();
    EXPECT_EQ(f.state_of(old), "expired");
}

}  // namespace
