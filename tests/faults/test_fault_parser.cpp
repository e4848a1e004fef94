// The parser under a mixed workload: killed at random points of a long
// drain that also runs commands, or replaced by one that answers garbage,
// lies or crashes. test_drain_parser covers each failure with pings; here
// the point is that a failing parser never lets anything run that should
// not, and never costs more than the requests it held.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <random>
#include <thread>

#include "executor/parser_client.hpp"
#include "fault_fixture.hpp"

namespace hb::test {
namespace {

// The drain's children that are the parser (the others are commands).
std::vector<pid_t> parser_children(pid_t drain) {
    std::vector<pid_t> out;
    for (pid_t child : children_of(drain)) {
        std::string comm = read_file("/proc/" + std::to_string(child) + "/comm");
        if (comm.starts_with("hostbridge-pars")) out.push_back(child);
    }
    return out;
}

TEST(ParserFaults, RealParserKilledAtRandomPointsOfAMixedDrain) {
    FaultFixture f;
    std::mt19937 rng(424242);
    const auto batch = f.publish_mixed(rng, 150);
    const pid_t pid = f.start_logged("drain", {}, f.root + "/stderr-kills");
    int kills = 0;
    // Alive and not yet a zombie (it is reaped only by wait_logged below).
    while (process_alive(pid)) {
        std::this_thread::sleep_for(std::chrono::microseconds(2000 + rng() % 20000));
        for (pid_t parser : parser_children(pid)) kills += ::kill(parser, SIGKILL) == 0;
    }
    EXPECT_EQ(f.wait_logged(pid), 0) << read_file(f.root + "/stderr-kills");
    ASSERT_GT(kills, 0) << "the drain ended before a parser could be killed";

    expect_intact(f, batch, "after random parser kills", /*parser_faults=*/true);
    expect_every_run_was_recorded_first(f);
    int failures = 0;
    for (const Planned& p : batch) {
        const auto r = f.response(p.name);
        failures += r && (*r)["reason"] == "parser failure";
    }
    // Each kill costs at most the one request the parser held or got next.
    EXPECT_LE(failures, kills);
    EXPECT_GE(failures, 1);
    auto report = hb::admin::verify_audit_log(f.state);
    ASSERT_TRUE(report) << report.error().message;
    EXPECT_FALSE(report->first_bad) << *report->first_bad;
    std::cout << "parser kills: " << kills << ", requests denied `parser failure`: " << failures
              << " of " << batch.size() << ", commands run: " << f.total_runs() << "\n";
}

// A parser that hangs on one request and crashes on another in the middle
// of a batch (fake-parser-nonce: "5eed…" hangs, "dead…" crashes; it knows
// only `ping`): each costs exactly its own request, the hang 2 s, and the
// pings around them are answered by the replacement parsers.
TEST(ParserFaults, AHangAndACrashMidBatchCostOnlyTheirOwnRequests) {
    FaultFixture f;
    f.config["parser"] = HB_FAKE_PARSER_DIR "/fake-parser-nonce";
    f.write_config();
    std::vector<std::string> pings;
    for (int i = 0; i < 5; ++i) pings.push_back(f.publish("ping"));
    const std::string hangs = f.publish("ping", "", "5eed");
    for (int i = 0; i < 5; ++i) pings.push_back(f.publish("ping"));
    const std::string crashes = f.publish("ping", "", "dead");
    for (int i = 0; i < 5; ++i) pings.push_back(f.publish("ping"));
    const std::string err_path = f.root + "/stderr-hang";
    EXPECT_EQ(f.drain_logged(err_path), 0);
    const std::string err = read_file(err_path);
    const std::string bound =
        std::to_string(hb::exec::ParserClient::kRoundTripTimeout.count()) + " s";
    EXPECT_NE(err.find("parser failure on " + hangs + ": no verdict within " + bound),
              std::string::npos)
        << err;
    EXPECT_NE(err.find("parser failure on " + crashes), std::string::npos) << err;
    EXPECT_EQ(lines_of(err), 2u) << err;
    for (const std::string& name : {hangs, crashes}) {
        EXPECT_EQ(f.state_of(name), "denied") << name;
        EXPECT_EQ(f.response(name).value()["reason"], "parser failure") << name;
    }
    for (const std::string& name : pings) EXPECT_EQ(f.state_of(name), "done") << name;
    EXPECT_EQ(f.count("requests"), 0u);
    EXPECT_EQ(f.count("processing"), 0u);
    EXPECT_EQ(f.total_runs(), 0u);
}

// A parser that answers garbage, short or stale verdicts, accepts every
// request as another verb, or crashes: every request it sees is denied
// "parser failure", none reaches the stack, and the drain completes.
class BrokenParserUnderLoad : public ::testing::TestWithParam<std::string> {};

TEST_P(BrokenParserUnderLoad, NothingRunsAndEveryRequestIsAnswered) {
    FaultFixture f;
    f.config["parser"] = HB_FAKE_PARSER_DIR "/fake-parser-" + GetParam();
    f.write_config();
    std::mt19937 rng(99);
    const auto batch = f.publish_mixed(rng, 24);
    const std::string err_path = f.root + "/stderr-broken";
    EXPECT_EQ(f.drain_logged(err_path), 0) << read_file(err_path);
    EXPECT_EQ(f.total_runs(), 0u) << "a broken parser let a command run";
    for (const Planned& p : batch) {
        SCOPED_TRACE(p.name);
        EXPECT_FALSE(f.exists_in("requests", p.name));
        EXPECT_FALSE(f.exists_in("processing", p.name));
        if (!on_schema(p.kind)) {
            EXPECT_TRUE(f.exists_in("quarantine", p.name));  // judged before any parser
            continue;
        }
        const auto r = f.response(p.name);
        ASSERT_TRUE(r.has_value());
        EXPECT_EQ((*r)["state"], "denied");
        EXPECT_EQ((*r)["reason"], "parser failure");
        EXPECT_TRUE((*r)["verb"].is_null());
    }
    auto report = hb::admin::verify_audit_log(f.state);
    ASSERT_TRUE(report) << report.error().message;
    EXPECT_FALSE(report->first_bad) << *report->first_bad;
}

INSTANTIATE_TEST_SUITE_P(Modes, BrokenParserUnderLoad,
                         ::testing::Values("garbage", "short", "wrongseq", "wrongverb", "crash"),
                         [](const ::testing::TestParamInfo<std::string>& mode) {
                             return mode.param;
                         });

}  // namespace
}  // namespace hb::test
