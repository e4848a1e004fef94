// The rate limiter end to end through the real drain: it holds across
// separate drain processes and across concurrent ones (the recording script
// counts what really ran), the read-only window is separate from the
// mutating one, ping is exempt, only what runs uses a slot (a failing
// command too), it is checked after the integrity gate, and a corrupt state
// file fails closed.
#include <gtest/gtest.h>

#include "tests/executor/decide_fixture.hpp"

namespace {

using hb::test::StackFixture;

// "rate limited: retry in N s" with 1 <= N <= window. (No std::regex: GCC 12
// warns inside it under the sanitizers.)
::testing::AssertionResult is_retry(const std::string& reason, int window) {
    const std::string prefix = "rate limited: retry in ";
    const std::string suffix = " s";
    const bool shaped = reason.size() > prefix.size() + suffix.size() &&
                        reason.compare(0, prefix.size(), prefix) == 0 &&
                        reason.compare(reason.size() - suffix.size(), suffix.size(), suffix) == 0;
    const std::string digits =
        shaped ? reason.substr(prefix.size(), reason.size() - prefix.size() - suffix.size()) : "";
    if (!shaped || digits.empty() || digits.size() > 6 ||
        digits.find_first_not_of("0123456789") != std::string::npos) {
        return ::testing::AssertionFailure() << "not a retry reason: \"" << reason << "\"";
    }
    const int n = std::stoi(digits);
    if (n < 1 || n > window) {
        return ::testing::AssertionFailure() << "retry in " << n << " s outside 1.." << window;
    }
    return ::testing::AssertionSuccess();
}

std::string reason_of(const StackFixture& f, const std::string& name) {
    const auto r = f.response(name);
    if (!r || !(*r)["reason"].is_string()) return "<none>";
    return (*r)["reason"].get<std::string>();
}

void expect_rate_limited(const StackFixture& f, const std::string& name, int window) {
    SCOPED_TRACE(name);
    EXPECT_EQ(f.state_of(name), "denied");
    EXPECT_TRUE(is_retry(reason_of(f, name), window));
    EXPECT_EQ(f.audit_reason(name, "denied"), reason_of(f, name));
    EXPECT_TRUE(f.audit_for(name, "started").empty());
}

TEST(DecideRateLimit, HoldsAcrossSeparateDrainProcesses) {
    StackFixture f;
    f.limits(3, 600, 120, 60);
    std::vector<std::string> names;
    for (int i = 0; i < 5; ++i) {
        names.push_back(f.publish("restart", "api"));
        f.drain();  // one process per request
    }
    for (int i = 0; i < 3; ++i) EXPECT_EQ(f.state_of(names[i]), "done") << i;
    for (int i = 3; i < 5; ++i) expect_rate_limited(f, names[i], 600);
    EXPECT_EQ(f.recorded().size(), 3U);
}

TEST(DecideRateLimit, HoldsAcrossConcurrentDrains) {
    StackFixture f;
    f.limits(5, 600, 120, 60);
    std::vector<std::string> names;
    for (int i = 0; i < 6; ++i) names.push_back(f.publish("restart", "db"));
    std::vector<pid_t> drains;
    for (int i = 0; i < 4; ++i) {
        drains.push_back(f.start());
        // More requests arrive while the drains run, so the late ones find work.
        names.push_back(f.publish("restart", "db"));
        names.push_back(f.publish("restart", "db"));
    }
    for (pid_t pid : drains) {
        const auto e = f.finish(pid);
        EXPECT_EQ(e.code, 0) << e.err;
    }
    // A drain that exited while requests were still arriving left some.
    if (!f.list("requests").empty()) f.drain();

    ASSERT_EQ(names.size(), 14U);
    int done = 0;
    int limited = 0;
    for (const auto& name : names) {
        const std::string state = f.state_of(name);
        if (state == "done") {
            ++done;
        } else {
            expect_rate_limited(f, name, 600);
            ++limited;
        }
        // Exactly one outcome each.
        EXPECT_EQ(f.audit_for(name, "succeeded").size() + f.audit_for(name, "denied").size(), 1U)
            << name;
    }
    EXPECT_EQ(done, 5);
    EXPECT_EQ(limited, 9);
    EXPECT_EQ(f.recorded().size(), 5U);
}

TEST(DecideRateLimit, ReadOnlyWindowIsSeparateAndPingIsExempt) {
    StackFixture f;
    f.limits(2, 600, 3, 300);
    std::vector<std::string> restarts, reads, pings;
    for (int i = 0; i < 3; ++i) restarts.push_back(f.publish("restart", "web"));
    reads.push_back(f.publish("status"));
    reads.push_back(f.publish("health"));
    reads.push_back(f.publish("logs", "api"));
    reads.push_back(f.publish("status"));
    for (int i = 0; i < 10; ++i) pings.push_back(f.publish("ping"));
    f.drain();

    EXPECT_EQ(f.state_of(restarts[0]), "done");
    EXPECT_EQ(f.state_of(restarts[1]), "done");
    expect_rate_limited(f, restarts[2], 600);
    // The full mutating window did not touch the read-only one.
    for (int i = 0; i < 3; ++i) EXPECT_EQ(f.state_of(reads[i]), "done") << i;
    expect_rate_limited(f, reads[3], 300);
    for (const auto& ping : pings) EXPECT_EQ(f.state_of(ping), "done");
    EXPECT_EQ(f.recorded().size(), 5U);

    // And the other way round: a full read-only window leaves mutating
    // verbs alone (a fresh install, so the mutating window is empty).
    StackFixture g;
    g.limits(2, 600, 1, 300);
    const std::string status = g.publish("status");
    const std::string health = g.publish("health");
    const std::string down = g.publish("down");
    g.drain();
    EXPECT_EQ(g.state_of(status), "done");
    expect_rate_limited(g, health, 300);
    EXPECT_EQ(g.state_of(down), "done");
}

TEST(DecideRateLimit, OnlyWhatRunsUsesASlotAndAFailedCommandUsesOne) {
    StackFixture f;
    f.limits(2, 600, 120, 60);
    // Refused before the limiter: none of these uses a slot.
    hb::test::write_file(
        f.root + "/policy.conf",
        "MODE_restart=deny\nMODE_down=auto\nMODE_rebuild=auto\nMODE_join-network=auto\n");
    const std::string by_policy = f.publish("restart", "api");
    const std::string expired = f.publish_at("down", "", std::time(nullptr) - 3600);
    const std::string not_configured = f.publish("join-network");
    const std::string not_buildable = f.publish("rebuild", "db");
    f.drain();
    EXPECT_EQ(f.state_of(by_policy), "denied");
    EXPECT_EQ(f.state_of(expired), "expired");
    EXPECT_EQ(f.state_of(not_configured), "denied");
    EXPECT_EQ(f.state_of(not_buildable), "denied");

    // A command that fails still ran, so it used its slot.
    f.behave("exit=3");
    const std::string failed = f.publish("down");
    f.drain();
    f.behave("");
    EXPECT_EQ(f.state_of(failed), "failed");
    const std::string second = f.publish("down");
    const std::string third = f.publish("down");
    f.drain();
    EXPECT_EQ(f.state_of(second), "done");
    expect_rate_limited(f, third, 600);
    EXPECT_EQ(f.recorded().size(), 2U);
}

TEST(DecideRateLimit, IsCheckedAfterTheIntegrityGate) {
    StackFixture f;
    f.limits(1, 600, 120, 60);
    f.pin({"stack", ".env"});
    const std::string first = f.publish("restart", "api");
    f.drain();
    EXPECT_EQ(f.state_of(first), "done");
    // Window full and the gate broken: the gate's refusal is the answer.
    hb::test::write_file(f.project + "/.env", "X=1\n");
    const std::string gated = f.publish("restart", "api");
    f.drain();
    EXPECT_EQ(reason_of(f, gated),
              "integrity gate: .env exists but was pinned as absent; fix: check the change, then "
              "run `hostbridge approve`");
    hb::test::fs::remove(f.project + "/.env");
    const std::string limited = f.publish("restart", "api");
    f.drain();
    expect_rate_limited(f, limited, 600);
}

TEST(DecideRateLimit, CorruptStateFailsClosedForEveryCountedVerbButPingAnswers) {
    StackFixture f;
    const std::string state_file = f.state + "/ratelimit.json";
    hb::test::write_file(state_file, "{\"version\":1,\"boot_id\":");  // torn
    const std::string status = f.publish("status");
    const std::string restart = f.publish("restart", "api");
    const std::string ping = f.publish("ping");
    f.drain();
    const std::string prefix =
        "rate limited: the rate limiter state " + state_file + " is corrupt or unreadable (";
    for (const auto& name : {status, restart}) {
        EXPECT_EQ(f.state_of(name), "denied");
        EXPECT_EQ(reason_of(f, name).rfind(prefix, 0), 0U) << reason_of(f, name);
        EXPECT_NE(reason_of(f, name).find("commands are refused until a person checks it"),
                  std::string::npos);
    }
    EXPECT_EQ(f.state_of(ping), "done");
    EXPECT_TRUE(f.recorded().empty());
    // Left as evidence.
    EXPECT_EQ(hb::test::read_file(state_file), "{\"version\":1,\"boot_id\":");
}

}  // namespace
