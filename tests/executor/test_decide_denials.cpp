// Every refusal before the integrity gate, end to end through the real drain
// and parser: policy (deny, a per-service deny, missing key, duplicate key,
// a line not understood, an unreadable file), policy edits on the next drain, expiry and the future
// skew, and the parser's own refusals. Each one with its exact reason in the
// response and the audit log, and the recording stack never called.
#include <gtest/gtest.h>

#include "tests/executor/decide_fixture.hpp"

namespace {

using hb::test::StackFixture;

const std::string kPolicyPrefix = "verb is denied by policy: ";

// Every verb auto except the lines given, which replace or add to them.
std::string policy_text(const std::vector<std::string>& lines) {
    std::string text = "# hostbridge policy (test)\n\n";
    for (const auto& line : lines) text += line + "\n";
    return text;
}

void write_policy(const StackFixture& f, const std::string& text) {
    hb::test::write_file(f.root + "/policy.conf", text);
}

void expect_refused(const StackFixture& f, const std::string& name, const std::string& state,
                    const std::string& reason) {
    SCOPED_TRACE(name);
    const auto r = f.response(name);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ((*r)["state"], state);
    EXPECT_EQ((*r)["reason"], reason);
    EXPECT_TRUE((*r)["exit_code"].is_null());
    EXPECT_TRUE((*r)["log"].is_null());
    EXPECT_TRUE((*r)["output"].is_null());
    const std::string event = state == "expired" ? "expired" : "denied";
    EXPECT_EQ(f.audit_reason(name, event), reason);
    EXPECT_TRUE(f.audit_for(name, "started").empty());
    EXPECT_TRUE(hb::test::fs::exists(f.path("archive", name)));
}

TEST(DecideDenials, PolicyDenyMissingAndDuplicateKeyEachSayWhy) {
    StackFixture f;
    write_policy(f, policy_text({"MODE_ping=auto", "MODE_status=auto", "MODE_health=auto",
                                 "MODE_health=auto", "MODE_logs=auto", "MODE_up=deny",
                                 "MODE_restart=auto", "MODE_restart.db=deny", "MODE_rebuild=auto",
                                 "MODE_init=auto", "MODE_join-network=auto"}));
    const std::string status = f.publish("status");
    const std::string health = f.publish("health");
    const std::string up = f.publish("up");
    const std::string down = f.publish("down");
    const std::string restart_api = f.publish("restart", "api");
    const std::string restart_db = f.publish("restart", "db");
    const std::string rebuild = f.publish("rebuild", "web");
    f.drain();

    EXPECT_EQ(f.state_of(status), "done");
    EXPECT_EQ(f.state_of(restart_api), "done");
    EXPECT_EQ(f.state_of(rebuild), "done");
    expect_refused(f, health, "denied",
                   kPolicyPrefix + "MODE_health appears more than once in policy.conf");
    expect_refused(f, up, "denied", kPolicyPrefix + "MODE_up=deny in policy.conf");
    expect_refused(f, down, "denied", kPolicyPrefix + "MODE_down is missing from policy.conf");
    expect_refused(f, restart_db, "denied", kPolicyPrefix + "MODE_restart.db=deny in policy.conf");
    EXPECT_EQ(f.recorded(),
              (std::vector<std::vector<std::string>>{{f.in_tree("stack"), "status"},
                                                     {f.in_tree("stack"), "restart", "api"},
                                                     {f.in_tree("stack"), "build", "web"}}));
}

// What a newer hostbridge may write (a `confirm` mode, a key for a verb this
// one lacks) or a typo of a rule meant to deny: this executor cannot tell
// which, so no command runs until the file is fixed; ping still answers.
TEST(DecideDenials, ALineTheExecutorDoesNotUnderstandDeniesEveryCommand) {
    for (const std::string& line :
         {std::string("MODE_restart=confirm"), std::string("MODE_restart.dbb=deny"),
          std::string("MODE_deploy=auto"), std::string("MODE_init=AUTO")}) {
        SCOPED_TRACE(line);
        StackFixture f;
        write_policy(
            f, policy_text({"MODE_ping=auto", "MODE_status=auto", "MODE_restart=auto", line}));
        const std::string ping = f.publish("ping");
        const std::string status = f.publish("status");
        const std::string restart = f.publish("restart", "db");
        f.drain();
        EXPECT_EQ(f.state_of(ping), "done");
        const std::string why = kPolicyPrefix + "policy.conf line 6: ";
        for (const std::string& name : {status, restart}) {
            const auto r = f.response(name);
            ASSERT_TRUE(r.has_value());
            EXPECT_EQ((*r)["state"], "denied");
            const std::string reason = (*r)["reason"];
            EXPECT_EQ(reason.rfind(why, 0), 0u) << reason;
            EXPECT_NE(reason.find("every command is denied until it is fixed"), std::string::npos);
            EXPECT_EQ(f.audit_reason(name, "denied"), reason);
        }
        EXPECT_TRUE(f.recorded().empty());
    }
}

TEST(DecideDenials, PolicyEditsTakeEffectOnTheNextDrainBothWays) {
    StackFixture f;
    write_policy(f, policy_text({"MODE_ping=auto", "MODE_status=auto", "MODE_restart=deny"}));
    const std::string first = f.publish("restart", "db");
    f.drain();
    expect_refused(f, first, "denied", kPolicyPrefix + "MODE_restart=deny in policy.conf");

    write_policy(f, policy_text({"MODE_ping=auto", "MODE_status=auto", "MODE_restart=auto"}));
    const std::string second = f.publish("restart", "db");
    f.drain();
    EXPECT_EQ(f.state_of(second), "done");

    write_policy(f, policy_text({"MODE_ping=auto", "MODE_status=deny", "MODE_restart=auto"}));
    const std::string third = f.publish("status");
    f.drain();
    expect_refused(f, third, "denied", kPolicyPrefix + "MODE_status=deny in policy.conf");
    EXPECT_EQ(f.recorded(),
              (std::vector<std::vector<std::string>>{{f.in_tree("stack"), "restart", "db"}}));
}

TEST(DecideDenials, AMissingOrSymlinkedPolicyFileDeniesEveryVerbPingIncluded) {
    StackFixture f;
    const std::string policy = f.root + "/policy.conf";
    hb::test::fs::remove(policy);
    const std::string ping = f.publish("ping");
    const std::string status = f.publish("status");
    f.drain();
    expect_refused(f, ping, "denied", kPolicyPrefix + "policy.conf could not be read");
    expect_refused(f, status, "denied", kPolicyPrefix + "policy.conf could not be read");

    // A symlink to a permissive file is not followed.
    hb::test::write_file(f.root + "/elsewhere.conf", policy_text({"MODE_status=auto"}));
    hb::test::fs::create_symlink(f.root + "/elsewhere.conf", policy);
    const std::string again = f.publish("status");
    f.drain();
    expect_refused(f, again, "denied", kPolicyPrefix + "policy.conf could not be read");
    EXPECT_TRUE(f.recorded().empty());
}

TEST(DecideDenials, ExpiredAndFutureRequestsAreRefusedAndTheEdgesAllowed) {
    StackFixture f;
    const std::time_t now = std::time(nullptr);
    const std::string old = f.publish_at("status", "", now - 700);
    const std::string future = f.publish_at("status", "", now + 400);
    // Well inside both limits even if the drain starts seconds later.
    const std::string recent = f.publish_at("status", "", now - 500);
    const std::string ahead = f.publish_at("health", "", now + 60);
    f.drain();
    expect_refused(f, old, "expired", "request expired: older than 600 s");
    expect_refused(f, future, "denied",
                   "requested_at is too far in the future: more than 120 s ahead of the host "
                   "clock");
    EXPECT_EQ(f.state_of(recent), "done");
    EXPECT_EQ(f.state_of(ahead), "done");
    EXPECT_EQ(f.recorded().size(), 2U);
}

TEST(DecideDenials, TtlAndSkewComeFromTheConfig) {
    StackFixture f;
    f.config["limits"]["ttl_seconds"] = 60;
    f.config["limits"]["future_skew_seconds"] = 10;
    f.write_config();
    const std::time_t now = std::time(nullptr);
    const std::string old = f.publish_at("status", "", now - 120);
    const std::string future = f.publish_at("status", "", now + 60);
    f.drain();
    expect_refused(f, old, "expired", "request expired: older than 60 s");
    expect_refused(f, future, "denied",
                   "requested_at is too far in the future: more than 10 s ahead of the host "
                   "clock");
    EXPECT_TRUE(f.recorded().empty());
}

TEST(DecideDenials, ExpiryIsCheckedBeforePolicy) {
    StackFixture f;
    write_policy(f, policy_text({"MODE_status=deny"}));
    const std::string old = f.publish_at("status", "", std::time(nullptr) - 3600);
    f.drain();
    expect_refused(f, old, "expired", "request expired: older than 600 s");
}

TEST(DecideDenials, TheParsersRefusalsNeverReachTheStack) {
    StackFixture f;
    struct Case {
        std::string verb, arg, reason;
    };
    const std::vector<Case> cases = {
        {"exec", "", "verb is never allowed"},
        {"reset-db", "", "verb is never allowed"},
        {"shell-web", "", "verb is never allowed"},
        {"frobnicate", "", "unknown verb"},
        {"restart", "nosuch", "arg is not a known service"},
        {"rebuild", "db", "arg is not a buildable service"},
        {"logs", "", "verb needs an arg"},
        {"status", "api", "verb takes no arg"},
        {"restart", "Api", "arg has an invalid shape"},
    };
    std::vector<std::string> names;
    for (const auto& c : cases) names.push_back(f.publish(c.verb, c.arg));
    const std::string empty = f.publish_as(f.name("status"), "");
    f.drain();
    for (std::size_t i = 0; i < cases.size(); ++i) {
        SCOPED_TRACE(cases[i].verb + " " + cases[i].arg);
        const auto r = f.response(names[i]);
        ASSERT_TRUE(r.has_value());
        EXPECT_EQ((*r)["state"], "denied");
        EXPECT_EQ((*r)["reason"], cases[i].reason);
        EXPECT_TRUE((*r)["arg"].is_null());
        EXPECT_EQ(f.audit_reason(names[i], "denied"), cases[i].reason);
    }
    EXPECT_EQ(f.state_of(empty), "denied");
    EXPECT_EQ(f.response(empty).value()["reason"], "empty request body");
    EXPECT_TRUE(f.recorded().empty());
}

}  // namespace
