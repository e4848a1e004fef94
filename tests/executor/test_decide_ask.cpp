// MODE_<verb>=ask end to end through the real drain and parser: a request
// is checked as usual, then held in <state_dir>/held (answered `pending`);
// a person's decision (written here exactly as `hostbridge allow|deny`
// writes it, through common/held.hpp) is acted on by the next drain,
// which checks the policy, the pins, the gate and the rate limit again.
#include <gtest/gtest.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "admin/audit/held_decision.hpp"
#include "common/held.hpp"
#include "tests/executor/decide_fixture.hpp"

namespace {

using hb::test::StackFixture;
using hb::test::wait_until;
namespace admin = hb::admin;
namespace common = hb::common;
using Calls = std::vector<std::vector<std::string>>;

std::string held_dir(const StackFixture& f) {
    return f.state + "/held";
}

std::vector<std::string> held_entries(const StackFixture& f) {
    std::vector<std::string> names;
    for (const auto& e : hb::test::fs::directory_iterator(held_dir(f))) {
        names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
}

common::HeldRequest held_record(const StackFixture& f, const std::string& name) {
    auto parsed = common::parse_held(hb::test::read_file(held_dir(f) + "/" + name));
    if (!parsed) throw std::runtime_error("held/" + name + ": " + parsed.error().message);
    return *parsed;
}

// Any 32 hex digits: a test's stand-in for the nonce `allow` draws.
const std::string kNonce = "00112233445566778899aabbccddeeff";

// What `hostbridge allow|deny` does to the state dir (admin/commands/held.cpp).
bool decide(const StackFixture& f, const std::string& name, bool allow,
            const std::string& reason = "") {
    const common::HeldRequest held = held_record(f, name);
    auto fd = common::open_held_dir(f.state);
    if (!fd) throw std::runtime_error(fd.error().message);
    auto published =
        common::publish_decision(fd->get(), name,
                                 admin::render_decision({allow, held.generation, reason,
                                                         common::held_digest(held), kNonce}));
    if (!published) throw std::runtime_error(published.error().message);
    return *published;
}

// A TTL of 1 s, and requests dated kAhead seconds ahead (within the
// config's future skew): one is held when a drain takes it up before its
// TTL ends (half of 1 s rounds to nothing: executor/drain_held.cpp), so
// within 4 s of being published (as with the 6 s TTL this replaces), and
// expires then. The test waits for that second, which the held record
// names, not for a fixed time.
constexpr std::time_t kAhead = 3;

void short_ttl(StackFixture& f) {
    f.config["limits"]["ttl_seconds"] = 1;
    f.write_config();
}

std::time_t ahead() {
    return std::time(nullptr) + kAhead;
}

// Until the wall clock reaches the expiry the drain wrote into the held
// record (a drain then expires it: expires_at <= now).
bool wait_for_expiry(const StackFixture& f, const std::string& name) {
    const std::time_t expires_at = held_record(f, name).expires_at;
    return wait_until([&] { return std::time(nullptr) >= expires_at; }, std::chrono::seconds(30));
}

TEST(DecideAsk, IsHeldPendingThenRunsOnceAllowed) {
    StackFixture f;
    f.policy_all_auto_but("MODE_down=ask\n");
    const std::string down = f.publish("down");
    f.drain();
    const auto pending = f.response(down);
    ASSERT_TRUE(pending.has_value());
    EXPECT_EQ((*pending)["state"], "pending");
    EXPECT_EQ(f.reason_of(down), "waiting for a person's approval on the host: `hostbridge allow " +
                                     down + "` runs it, `hostbridge deny " + down + "` refuses it");
    EXPECT_TRUE(f.recorded().empty());
    // The record holds what the person will be shown, off the spool.
    const common::HeldRequest held = held_record(f, down);
    EXPECT_EQ((*pending)["expires_at"], StackFixture::utc(held.expires_at, true));
    EXPECT_EQ(held.verb, hb::Verb::Down);
    EXPECT_EQ(held.command, "$STACK stop");
    EXPECT_EQ(held.generation, common::config_generation(f.parsed_config()));
    EXPECT_EQ(held.expires_at - held.requested_at, 600);
    EXPECT_EQ(f.audit_reason(down, "held"), f.reason_of(down));
    // The request file is archived: a replay of its name is refused.
    EXPECT_TRUE(hb::test::fs::exists(f.path("archive", down)));

    // Another drain changes nothing without a decision.
    f.drain();
    EXPECT_EQ(f.state_of(down), "pending");
    EXPECT_TRUE(f.recorded().empty());

    ASSERT_TRUE(decide(f, down, true));
    f.drain();
    EXPECT_EQ(f.state_of(down), "done");
    EXPECT_EQ(f.recorded(), (Calls{{f.in_tree("stack"), "stop"}}));
    EXPECT_EQ(f.audit_reason(down, "allowed"), "allowed by a person");
    EXPECT_EQ(f.audit_for(down, "started").size(), 1u);
    EXPECT_EQ(f.audit_for(down, "succeeded").size(), 1u);
    // Only the decision it took up stays, as NAME.decided (admin/commands/held.cpp
    // reads its nonce), and the name is not held again while it is there.
    EXPECT_EQ(held_entries(f), std::vector<std::string>{down + ".decided"});
    auto kept = common::parse_decision(hb::test::read_file(held_dir(f) + "/" + down + ".decided"));
    ASSERT_TRUE(kept) << kept.error().message;
    EXPECT_EQ(kept->nonce, kNonce);

    // Single use: the record is gone, nothing runs again.
    f.drain();
    EXPECT_EQ(f.recorded().size(), 1u);
}

// Round 4: a policy line set back to auto by hand (or by a later tool) let
// a build run unattended as the person. Without an engine user the
// executor holds up and rebuild anyway (common/engine_hold.hpp); other
// verbs run as the policy says.
TEST(DecideAsk, EngineVerbsAreHeldForContainmentWhateverThePolicySays) {
    StackFixture f;
    f.config["accept_uncontained_engine"] = false;
    f.write_config();
    f.policy_all_auto_but("MODE_up=auto\n");
    const std::string up = f.publish("up");
    const std::string rebuild = f.publish("rebuild", "api");
    const std::string restart = f.publish("restart", "api");
    f.drain();
    EXPECT_EQ(f.state_of(up), "pending");
    EXPECT_EQ(f.state_of(rebuild), "pending");
    EXPECT_EQ(f.state_of(restart), "done");
    EXPECT_EQ(f.recorded(), (Calls{{f.in_tree("stack"), "restart", "api"}}));
    // A person's allow runs it, as any held request.
    ASSERT_TRUE(decide(f, rebuild, true));
    f.drain();
    EXPECT_EQ(f.state_of(rebuild), "done");
    EXPECT_EQ(f.recorded().size(), 2u);

    // What the person accepted in bridge.json (`install
    // --accept-uncontained-engine`) runs as the policy says.
    f.config["accept_uncontained_engine"] = true;
    f.write_config();
    const std::string again = f.publish("rebuild", "web");
    f.drain();
    EXPECT_EQ(f.state_of(again), "done");
}

// Round 4: what a person allowed was read from the checkout when the build
// ran, after they had looked. The snapshot is taken when the request is
// held, its hash is in the digest they name, and exactly it is built.
TEST(DecideAsk, AHeldBuildRunsTheSnapshotShownNotTheCheckoutOfLater) {
    StackFixture f;
    hb::test::record_stack_build(f, "FROM scratch\nCOPY index.html /www/\n");
    f.policy_all_auto_but("MODE_rebuild=ask\n");
    const std::string name = f.publish("rebuild", "web");
    f.drain();
    ASSERT_EQ(f.state_of(name), "pending") << f.reason_of(name);
    const common::HeldRequest held = held_record(f, name);
    ASSERT_EQ(held.snapshot.size(), 64u);
    const std::string shown = f.root + "/run/.hostbridge-held/" + name + "/web";
    EXPECT_EQ(hb::test::read_file(shown + "/index.html"), "<h1>web</h1>\n");
    EXPECT_TRUE(f.recorded().empty());

    // The agent rewrites the context while the person reads `pending`.
    hb::test::write_file(f.project + "/services/web/index.html", "<h1>evil</h1>\n");
    hb::test::write_file(f.project + "/services/web/Containerfile", "FROM scratch\nCOPY . /www/\n");
    ASSERT_TRUE(decide(f, name, true));
    f.drain();
    EXPECT_EQ(f.state_of(name), "done") << f.reason_of(name);
    EXPECT_EQ(hb::test::read_file(f.root + "/run/.hostbridge-build/web/index.html"),
              "<h1>web</h1>\n");
    const auto done = f.audit_for(name, "succeeded");
    ASSERT_EQ(done.size(), 1U);
    EXPECT_EQ(done[0]["detail"]["snapshot_sha256"], held.snapshot);
    // Its snapshot goes with the hold.
    EXPECT_FALSE(hb::test::fs::exists(f.root + "/run/.hostbridge-held/" + name));
}

TEST(DecideAsk, AHeldBuildWhoseSnapshotChangedIsRefusedAndARefusedOneIsNeverHeld) {
    StackFixture f;
    hb::test::record_stack_build(f, "FROM scratch\nCOPY index.html /www/\n");
    f.policy_all_auto_but("MODE_rebuild=ask\n");
    const std::string name = f.publish("rebuild", "web");
    f.drain();
    ASSERT_EQ(f.state_of(name), "pending") << f.reason_of(name);
    // Changed where only the host writes: not what the person was shown.
    hb::test::write_file(f.root + "/run/.hostbridge-held/" + name + "/web/index.html", "x\n");
    ASSERT_TRUE(decide(f, name, true));
    f.drain();
    EXPECT_EQ(f.state_of(name), "denied");
    EXPECT_NE(f.reason_of(name).find("the snapshot held for a person is not the one shown"),
              std::string::npos)
        << f.reason_of(name);
    EXPECT_TRUE(f.recorded().empty());

    // A Containerfile the screen refuses is answered at once: no person is
    // asked about a build that would be refused.
    hb::test::write_file(f.project + "/services/web/Containerfile",
                         "FROM scratch\nRUN --mount=type=cache,target=/c true\n");
    const std::string refused = f.publish("rebuild", "web");
    f.drain();
    EXPECT_EQ(f.state_of(refused), "denied");
    EXPECT_NE(f.reason_of(refused).find("RUN --mount is refused"), std::string::npos)
        << f.reason_of(refused);
    EXPECT_FALSE(hb::test::fs::exists(held_dir(f) + "/" + refused));
    EXPECT_FALSE(hb::test::fs::exists(f.root + "/run/.hostbridge-held/" + refused));
}

TEST(DecideAsk, APersonsDenialIsTheAnswerWithTheirReason) {
    StackFixture f;
    f.policy_all_auto_but("MODE_restart.db=ask\n");
    const std::string db = f.publish("restart", "db");
    const std::string api = f.publish("restart", "api");
    f.drain();
    EXPECT_EQ(f.state_of(db), "pending");
    EXPECT_EQ(f.state_of(api), "done");  // the more specific key wins
    ASSERT_TRUE(decide(f, db, false, "not during the demo"));
    f.drain();
    EXPECT_EQ(f.state_of(db), "denied");
    EXPECT_EQ(f.reason_of(db), "denied by a person on the host: not during the demo");
    EXPECT_EQ(f.audit_reason(db, "denied"), f.reason_of(db));
    EXPECT_EQ(f.recorded(), (Calls{{f.in_tree("stack"), "restart", "api"}}));
}

// Less than half its TTL (or a minute) left: it would expire before a
// person could act, and each would add a line to the service log.
TEST(DecideAsk, TooLittleOfItsTtlLeftIsExpiredNotHeld) {
    StackFixture f;
    f.policy_all_auto_but("MODE_down=ask\n");
    const std::string down = f.publish_at("down", "", std::time(nullptr) - 590);
    const auto e = f.run();
    EXPECT_EQ(e.code, 0) << e.err;
    EXPECT_EQ(f.state_of(down), "expired");
    EXPECT_EQ(f.reason_of(down).rfind("request expired: ", 0), 0u) << f.reason_of(down);
    EXPECT_NE(f.reason_of(down).find("too little for a person to act"), std::string::npos);
    EXPECT_TRUE(hb::test::fs::is_empty(held_dir(f)));
    EXPECT_EQ(e.err.find("held "), std::string::npos) << e.err;
}

// The agent owns archive/ and responses/: it can make a held name look
// unused and send it again, for another service.
TEST(DecideAsk, ANameAlreadyHeldIsNotHeldAgain) {
    StackFixture f;
    f.policy_all_auto_but("MODE_restart=ask\n");
    const std::string name = f.publish("restart", "api");
    f.drain();
    const common::HeldRequest shown = held_record(f, name);
    hb::test::fs::remove(f.path("archive", name));
    hb::test::fs::remove(f.path("responses", name + ".response.json"));
    f.publish_as(name, StackFixture::body("restart", "db"));
    f.drain();
    EXPECT_EQ(f.state_of(name), "denied");
    EXPECT_EQ(f.reason_of(name), "request name already used");
    EXPECT_EQ(held_record(f, name), shown);
    ASSERT_TRUE(decide(f, name, true));
    f.drain();
    EXPECT_EQ(f.recorded(), (Calls{{f.in_tree("stack"), "restart", "api"}}));
}

// The person looked at a request that expired before their `allow` landed;
// meanwhile the agent had the name held again for another service. The
// decision names the record shown, so it is not applied to the new one.
TEST(DecideAsk, ADecisionIsForTheRecordShownNotForItsName) {
    StackFixture f;
    short_ttl(f);
    f.policy_all_auto_but("MODE_restart=ask\n");
    const std::string name = f.publish_at("restart", "api", ahead());
    f.drain();
    const common::HeldRequest shown = held_record(f, name);  // `allow` read it
    ASSERT_TRUE(wait_for_expiry(f, name));
    f.drain();  // expired
    ASSERT_EQ(f.state_of(name), "expired");
    // The usual TTL again (the limits are not part of what a person
    // approved, common/held.cpp): what follows needs no hurry.
    f.config["limits"]["ttl_seconds"] = 600;
    f.write_config();
    hb::test::fs::remove(f.path("archive", name));
    hb::test::fs::remove(f.path("responses", name + ".response.json"));
    // The expired hold left a tombstone: the name is not held again.
    f.publish_as(name, StackFixture::body("restart", "db"));
    f.drain();
    ASSERT_EQ(f.state_of(name), "denied");
    EXPECT_EQ(f.reason_of(name), "request name already used");
    // Past TTL + skew settle_held prunes it; then the name can be held
    // again, and the decision's digest is what keeps it apart.
    hb::test::fs::remove(held_dir(f) + "/" + common::held_name(name, common::HeldFile::Gone));
    hb::test::fs::remove(f.path("archive", name));
    hb::test::fs::remove(f.path("responses", name + ".response.json"));
    f.publish_as(name, StackFixture::body("restart", "db"));
    f.drain();
    ASSERT_EQ(f.state_of(name), "pending");
    // ... and now the person's `allow` of what they were shown lands.
    auto fd = common::open_held_dir(f.state);
    ASSERT_TRUE(fd);
    ASSERT_TRUE(*common::publish_held_file(
        fd->get(), common::held_name(name, common::HeldFile::Decision),
        admin::render_decision({true, shown.generation, "", common::held_digest(shown), kNonce}),
        true));
    const auto e = f.run();
    EXPECT_NE(e.err.find("was made for another request of this name"), std::string::npos) << e.err;
    EXPECT_TRUE(f.recorded().empty());
    EXPECT_EQ(f.state_of(name), "pending");
}

// An allowed request is left for the next drain when its command could
// outlast the drain's time budget (as a new request is: drain step 7).
TEST(DecideAsk, AnAllowedRequestThatCouldOutlastTheBudgetWaitsForTheNextDrain) {
    StackFixture f;
    // The budget no longer than the timeout: after its first second, a
    // drain has no room for any command (drain.cpp, over_budget).
    f.config["timeouts"] = {{"default", 5}, {"rebuild", 5}};
    f.config["drain"]["time_budget_seconds"] = 5;
    f.write_config();
    f.policy_all_auto_but("MODE_down=ask\n");
    const std::string down = f.publish("down");
    f.drain();
    ASSERT_EQ(f.state_of(down), "pending");
    // A lingering drain at least 1 s into its budget: its clock starts
    // before it answers the ping (executor/drain.cpp), and the budget is
    // counted in whole seconds of that clock, so one second more it is.
    hb::test::SpawnOptions linger;
    linger.extra = {"--linger", "5"};
    const std::string ping = f.publish("ping");
    const pid_t pid = f.start("drain", linger);
    ASSERT_TRUE(wait_until([&] { return f.state_of(ping) == "done"; }));
    std::this_thread::sleep_for(std::chrono::seconds(1));
    ASSERT_TRUE(decide(f, down, true));
    // It wakes for the decision, leaves it and ends (budget reached).
    const auto e = f.finish(pid);
    EXPECT_EQ(e.code, 0) << e.err;
    EXPECT_EQ(f.state_of(down), "pending");
    EXPECT_TRUE(f.recorded().empty());
    f.drain();
    EXPECT_EQ(f.state_of(down), "done");
    EXPECT_EQ(f.recorded().size(), 1u);
}

TEST(DecideAsk, ADecisionIsPublishedOnceEvenWhenTwoRace) {
    StackFixture f;
    f.policy_all_auto_but("MODE_down=ask\n");
    const std::string down = f.publish("down");
    f.drain();
    std::atomic<int> won{0};
    std::vector<std::thread> racers;
    for (int i = 0; i < 8; ++i) {
        racers.emplace_back([&, i] {
            if (decide(f, down, i % 2 == 0)) ++won;
        });
    }
    for (auto& t : racers) t.join();
    EXPECT_EQ(won.load(), 1);
    f.drain();
    f.drain();
    EXPECT_LE(f.recorded().size(), 1u);
    const std::string state = f.state_of(down);
    EXPECT_TRUE(state == "done" || state == "denied") << state;
}

TEST(DecideAsk, ExpiresWithItsTtlWhileNoDrainRuns) {
    StackFixture f;
    short_ttl(f);
    f.policy_all_auto_but("MODE_down=ask\n");
    const std::string down = f.publish_at("down", "", ahead());
    f.drain();
    ASSERT_EQ(f.state_of(down), "pending");
    // Nothing runs now: no drain, no watch. The next activation (any
    // request) answers it.
    ASSERT_TRUE(wait_for_expiry(f, down));
    const std::string ping = f.publish_at("ping", "", ahead());
    f.drain();
    EXPECT_EQ(f.state_of(ping), "done");
    EXPECT_EQ(f.state_of(down), "expired");
    EXPECT_EQ(f.reason_of(down), "request expired: no person allowed it within 1 s");
    EXPECT_EQ(f.audit_reason(down, "expired"), f.reason_of(down));
    // Only its tombstone is left (held/NAME.gone, common/held.hpp).
    std::vector<std::string> left;
    for (const auto& e : hb::test::fs::directory_iterator(held_dir(f)))
        left.push_back(e.path().filename().string());
    EXPECT_EQ(left, (std::vector<std::string>{common::held_name(down, common::HeldFile::Gone)}));
    EXPECT_TRUE(f.recorded().empty());
}

TEST(DecideAsk, WatchAnswersAnExpiryAndADecisionByItself) {
    StackFixture f;
    short_ttl(f);
    f.policy_all_auto_but("MODE_down=ask\nMODE_restart=ask\n");
    const pid_t pid = f.start("watch");
    // Dated 2 kAhead ahead: its 1 s TTL must outlast the watch's start and
    // its taking up of both requests, or it is answered expired without
    // ever being held (the one margin here load can eat; it failed once).
    const std::string down = f.publish_at("down", "", ahead() + kAhead);
    // Dated ahead (within the skew): it waits well past the other's expiry.
    const std::string restart = f.publish_at("restart", "api", std::time(nullptr) + 60);
    ASSERT_TRUE(wait_until([&] { return f.state_of(restart) == "pending"; }));
    ASSERT_EQ(f.state_of(down), "pending");
    // Nothing but the clock wakes it for the expiry.
    EXPECT_TRUE(wait_until([&] { return f.state_of(down) == "expired"; }));
    // A decision wakes it (inotify on held/).
    ASSERT_TRUE(decide(f, restart, true));
    EXPECT_TRUE(wait_until([&] { return f.state_of(restart) == "done"; }));
    ::kill(pid, SIGTERM);
    EXPECT_EQ(f.finish(pid).code, 0);
    EXPECT_EQ(f.recorded(), (Calls{{f.in_tree("stack"), "restart", "api"}}));
}

TEST(DecideAsk, NewPinsBetweenHoldAndAllowAreRefused) {
    StackFixture f;
    f.policy_all_auto_but("MODE_down=ask\n");
    const std::string down = f.publish("down");
    f.drain();
    ASSERT_TRUE(decide(f, down, true));
    // `hostbridge approve` pinned another file after the person looked.
    hb::test::write_file(f.project + "/.env", "A=1\n");
    f.pin({"stack", ".env"});
    f.drain();
    EXPECT_EQ(f.state_of(down), "denied");
    EXPECT_EQ(f.reason_of(down),
              "the install changed since the request was held: a re-install or `hostbridge "
              "approve` came between; send it again");
    EXPECT_TRUE(f.recorded().empty());
}

TEST(DecideAsk, AReinstallThatRenumberedServicesIsRefused) {
    StackFixture f;
    f.policy_all_auto_but("MODE_restart=ask\n");
    const std::string db = f.publish("restart", "db");
    f.drain();
    ASSERT_TRUE(decide(f, db, true));
    f.config["services"] = {"api", "cache", "db", "web"};
    f.write_config();
    f.drain();
    EXPECT_EQ(f.state_of(db), "denied");
    EXPECT_NE(f.reason_of(db).find("the install changed since the request was held"),
              std::string::npos);
    EXPECT_TRUE(f.recorded().empty());
}

TEST(DecideAsk, AnAllowedRequestMeetsThePolicyTheGateAndTheRateLimitAgain) {
    {
        StackFixture f;
        f.policy_all_auto_but("MODE_down=ask\n");
        const std::string down = f.publish("down");
        f.drain();
        ASSERT_TRUE(decide(f, down, true));
        f.policy_all_auto_but("MODE_down=deny\n");
        f.drain();
        EXPECT_EQ(f.reason_of(down), "verb is denied by policy: MODE_down=deny in policy.conf");
        EXPECT_TRUE(f.recorded().empty());
    }
    {
        StackFixture f;
        f.policy_all_auto_but("MODE_down=ask\n");
        const std::string down = f.publish("down");
        f.drain();
        ASSERT_TRUE(decide(f, down, true));
        hb::test::write_file(f.stack, "#!/bin/sh\necho swapped\n");
        f.drain();
        EXPECT_EQ(f.state_of(down), "denied");
        EXPECT_EQ(f.reason_of(down).rfind("integrity gate: ", 0), 0u) << f.reason_of(down);
        EXPECT_TRUE(f.recorded().empty());
    }
    {
        StackFixture f;
        f.limits(1, 600, 120, 60);
        f.policy_all_auto_but("MODE_down=ask\n");
        const std::string down = f.publish("down");
        f.drain();
        const std::string restart = f.publish("restart", "api");  // uses the one slot
        f.drain();
        ASSERT_TRUE(decide(f, down, true));
        f.drain();
        EXPECT_EQ(f.state_of(restart), "done");
        EXPECT_EQ(f.reason_of(down).rfind("rate limited", 0), 0u) << f.reason_of(down);
        EXPECT_EQ(f.recorded().size(), 1u);
    }
}

TEST(DecideAsk, TheSameRequestIsMergedAndAnsweredOnce) {
    StackFixture f;
    f.policy_all_auto_but("MODE_restart=ask\n");
    const std::string first = f.publish("restart", "db");
    const std::string again = f.publish("restart", "db");
    const std::string other = f.publish("restart", "api");
    f.drain();
    EXPECT_EQ(f.state_of(again), "pending");
    EXPECT_NE(f.reason_of(again).find("together with " + first), std::string::npos)
        << f.reason_of(again);
    EXPECT_EQ(held_record(f, first).merged, (std::vector<std::string>{again}));
    EXPECT_EQ(f.state_of(other), "pending");  // another service: its own hold
    ASSERT_TRUE(decide(f, first, true));
    f.drain();
    EXPECT_EQ(f.state_of(first), "done");
    EXPECT_EQ(f.state_of(again), "done");
    EXPECT_EQ(f.state_of(other), "pending");
    EXPECT_EQ(f.recorded(), (Calls{{f.in_tree("stack"), "restart", "db"}}));
}

TEST(DecideAsk, HoldsAtMostTheConfiguredNumber) {
    StackFixture f;
    f.config["limits"]["max_held"] = 2;
    f.write_config();
    f.policy_all_auto_but("MODE_restart=ask\nMODE_down=ask\n");
    const std::string a = f.publish("restart", "api");
    const std::string b = f.publish("restart", "db");
    const std::string c = f.publish("down");
    f.drain();
    EXPECT_EQ(f.state_of(a), "pending");
    EXPECT_EQ(f.state_of(b), "pending");
    EXPECT_EQ(f.state_of(c), "denied");
    EXPECT_EQ(f.reason_of(c),
              "too many requests are waiting for a person's approval: 2 already wait; "
              "`hostbridge pending` lists them");
    EXPECT_EQ(std::distance(hb::test::fs::directory_iterator(held_dir(f)),
                            hb::test::fs::directory_iterator()),
              2);
}

TEST(DecideAsk, OneTakenUpByACrashedDrainFailsAndNeverRuns) {
    StackFixture f;
    f.policy_all_auto_but("MODE_down=ask\n");
    const std::string down = f.publish("down");
    f.drain();
    ASSERT_TRUE(decide(f, down, true));
    // As a drain leaves it when it dies between taking it up and finishing.
    hb::test::fs::rename(held_dir(f) + "/" + down, held_dir(f) + "/" + down + ".taken");
    hb::test::fs::remove(held_dir(f) + "/" + down + ".decision");
    f.drain();
    EXPECT_EQ(f.state_of(down), "failed");
    EXPECT_EQ(f.reason_of(down), "interrupted");
    EXPECT_TRUE(f.recorded().empty());
    EXPECT_TRUE(hb::test::fs::is_empty(held_dir(f)));
}

TEST(DecideAsk, OneWhoseDecisionWasTakenButNotTheRecordFailsAndNeverRuns) {
    StackFixture f;
    f.policy_all_auto_but("MODE_down=ask\n");
    const std::string down = f.publish("down");
    f.drain();
    ASSERT_TRUE(decide(f, down, true));
    // A drain that died between its two renames (executor/drain_held.cpp).
    hb::test::fs::rename(held_dir(f) + "/" + down + ".decision",
                         held_dir(f) + "/" + down + ".decided");
    f.drain();
    EXPECT_EQ(f.state_of(down), "failed");
    EXPECT_EQ(f.reason_of(down), "interrupted");
    EXPECT_TRUE(f.recorded().empty());
    EXPECT_EQ(held_entries(f), std::vector<std::string>{down + ".decided"});
}

TEST(DecideAsk, ADecidedNameIsNeverHeldAgainAndItsTombstoneIsPrunedLate) {
    StackFixture f;
    f.policy_all_auto_but("MODE_down=ask\n");
    const std::string down = f.publish("down");
    f.drain();
    ASSERT_TRUE(decide(f, down, false));
    f.drain();
    ASSERT_EQ(f.state_of(down), "denied");
    // The agent deletes the archived request and its answer and sends the
    // name again: refused while held/NAME.decided is there.
    hb::test::fs::remove(f.path("archive", down));
    hb::test::fs::remove(f.path("responses", down + ".response.json"));
    f.publish_as(down, StackFixture::body("down"));
    f.drain();
    EXPECT_EQ(f.state_of(down), "denied");
    EXPECT_EQ(f.reason_of(down), "request name already used") << f.reason_of(down);
    EXPECT_TRUE(f.recorded().empty());
    // Pruned once a TTL and the skew have passed since the decision.
    const std::string decided = held_dir(f) + "/" + down + ".decided";
    const std::time_t old = std::time(nullptr) - 600 - 120 - 5;
    const timeval times[2] = {{old, 0}, {old, 0}};
    ASSERT_EQ(::utimes(decided.c_str(), times), 0);
    f.drain();
    EXPECT_FALSE(hb::test::fs::exists(decided));
}

TEST(DecideAsk, ARecordThatDoesNotParseIsNeverActedOn) {
    StackFixture f;
    f.policy_all_auto_but("MODE_down=ask\n");
    const std::string down = f.publish("down");
    f.drain();
    ASSERT_TRUE(decide(f, down, true));
    hb::test::write_file(held_dir(f) + "/" + down, "{\"request\": 1}");
    const auto e = f.run();
    EXPECT_EQ(e.code, 0) << e.err;
    EXPECT_NE(e.err.find("cannot be read"), std::string::npos) << e.err;
    EXPECT_TRUE(f.recorded().empty());
    EXPECT_TRUE(hb::test::fs::exists(held_dir(f) + "/.unreadable-" + down));
}

// The person is told on the desktop (where install found notify-send and
// the drain has a session bus): a fixed argv, no markup, at most once a
// minute, not for a merged request.
TEST(DecideAsk, ThePersonIsToldOnTheDesktopAtMostOncePerMinute) {
    StackFixture f;
    const std::string notify = f.root + "/notify-send";
    const std::string told = f.root + "/told";
    hb::test::write_file(
        notify,
        "#!/bin/sh\nprintf '%s\\n' \"$@\" \"bus $DBUS_SESSION_BUS_ADDRESS\" >>" + told + "\n");
    hb::test::fs::permissions(notify, hb::test::fs::perms(0755));
    f.config["systemd"]["notify_send"] = notify;
    f.write_config();
    f.policy_all_auto_but("MODE_down=ask\nMODE_restart=ask\n");
    const std::string down = f.publish("down");
    const std::string again = f.publish("down");        // merged into the first
    const std::string db = f.publish("restart", "db");  // held, within the minute
    f.drain_with_env({"DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/0/bus"});
    EXPECT_EQ(f.state_of(again), "pending");
    EXPECT_EQ(f.state_of(db), "pending");
    EXPECT_EQ(hb::test::read_file(told),
              "--app-name=hostbridge\n--urgency=normal\n--\n"
              "hostbridge drain-test: down waits for you\n"
              "hostbridge allow " +
                  down + " " + common::held_short_digest(held_record(f, down)) +
                  "  (or deny, see hostbridge pending)\n"
                  "bus unix:path=/run/user/0/bus\n");
    const std::string log = hb::test::read_file(f.root + "/stderr-env");
    EXPECT_NE(log.find("held " + down + " for a person: would run $STACK stop; "),
              std::string::npos)
        << log;
    EXPECT_NE(log.find("desktop notification sent"), std::string::npos) << log;
    EXPECT_NE(log.find("no desktop notification: one went out less than 60 s ago"),
              std::string::npos)
        << log;
}

TEST(DecideAsk, WithoutASessionBusTheServiceLogSaysWhyThereIsNoNotification) {
    StackFixture f;
    const std::string notify = f.root + "/notify-send";
    hb::test::write_file(notify, "#!/bin/sh\ntouch " + f.root + "/told\n");
    hb::test::fs::permissions(notify, hb::test::fs::perms(0755));
    f.config["systemd"]["notify_send"] = notify;
    f.write_config();
    f.policy_all_auto_but("MODE_down=ask\n");
    const std::string down = f.publish("down");
    const auto e = f.run();  // an empty environment, as in CI
    EXPECT_EQ(e.code, 0) << e.err;
    EXPECT_EQ(f.state_of(down), "pending");
    EXPECT_NE(e.err.find("no desktop notification: no session bus"), std::string::npos) << e.err;
    EXPECT_FALSE(hb::test::fs::exists(f.root + "/told"));
}

}  // namespace
