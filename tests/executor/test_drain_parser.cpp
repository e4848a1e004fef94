// Parser supervision: whatever the parser does (crash, hang, garbage, lies,
// killed from outside), that one request is denied `parser failure`, the
// parser is restarted, and the drain completes.
#include <gtest/gtest.h>

#include "tests/support/drain_fixture.hpp"

namespace hb::test {
namespace {

std::string fake(const std::string& mode) {
    return HB_FAKE_PARSER_DIR "/fake-parser-" + mode;
}

class BrokenParser : public ::testing::TestWithParam<std::string> {};

// What the executor says of each stand-in's failure (executor/parser_client.cpp):
// proof that the one fake parser took the behaviour its name gives it.
std::string failure_of(const std::string& mode) {
    if (mode == "garbage" || mode == "short") return "garbage verdict";
    if (mode == "wrongseq") return "verdict for another request";
    if (mode == "wrongverb") return "accepted a verb other than the name's";
    return "the parser exited";
}

TEST_P(BrokenParser, EveryRequestIsDeniedAndTheDrainCompletes) {
    DrainFixture f(fake(GetParam()));
    std::vector<std::string> names;
    for (int i = 0; i < 3; ++i) names.push_back(f.publish("ping"));
    const Exit e = f.run();
    EXPECT_EQ(e.code, 0) << e.err;
    for (const auto& n : names) {
        const auto r = f.response(n);
        ASSERT_TRUE(r) << n;
        EXPECT_EQ((*r)["state"], "denied");
        EXPECT_EQ((*r)["reason"], "parser failure");
        EXPECT_TRUE((*r)["verb"].is_null());
        EXPECT_TRUE(fs::exists(f.path("archive", n)));
    }
    EXPECT_EQ(f.count("requests"), 0u);
    EXPECT_EQ(f.count("processing"), 0u);
    EXPECT_NE(e.err.find("parser failure"), std::string::npos);
    EXPECT_NE(e.err.find(failure_of(GetParam())), std::string::npos) << e.err;
}

INSTANTIATE_TEST_SUITE_P(Modes, BrokenParser,
                         ::testing::Values("garbage", "short", "wrongseq", "wrongverb", "crash"));

TEST(DrainParser, HangingParserCostsOneRequestTwoSecondsThenIsReplaced) {
    DrainFixture f(fake("hang"));
    const std::string req = f.publish("ping");
    const Exit e = f.run();
    EXPECT_EQ(e.code, 0) << e.err;
    EXPECT_EQ(f.state_of(req), "denied");
    EXPECT_NE(e.err.find("no verdict"), std::string::npos) << e.err;
}

TEST(DrainParser, CrashIsContainedToOneRequestAndTheParserRestarts) {
    DrainFixture f(fake("nonce"));
    const std::string before = f.publish("ping");
    const std::string crashing = f.publish("ping", "", "dead");
    const std::string after = f.publish("ping");
    const Exit e = f.run();
    EXPECT_EQ(e.code, 0) << e.err;
    EXPECT_EQ(f.state_of(before), "done");
    EXPECT_EQ(f.state_of(crashing), "denied");
    EXPECT_EQ(f.response(crashing).value()["reason"], "parser failure");
    EXPECT_EQ(f.state_of(after), "done");
}

TEST(DrainParser, ParserKilledFromOutsideMidRequest) {
    DrainFixture f(fake("nonce"));
    const std::string before = f.publish("ping");
    const std::string stalled = f.publish("ping", "", "5eed");
    const std::string after = f.publish("ping");
    const pid_t pid = f.start();
    ASSERT_TRUE(
        wait_until([&] { return f.list("processing") == std::vector<std::string>{stalled}; }));
    std::vector<pid_t> kids;
    ASSERT_TRUE(wait_until([&] { return !(kids = children_of(pid)).empty(); }));
    ASSERT_EQ(kids.size(), 1u);
    ASSERT_EQ(::kill(kids[0], SIGKILL), 0);
    const Exit e = f.finish(pid);
    EXPECT_EQ(e.code, 0) << e.err;
    EXPECT_EQ(f.state_of(before), "done");
    EXPECT_EQ(f.response(stalled).value()["reason"], "parser failure");
    EXPECT_EQ(f.state_of(after), "done");
}

TEST(DrainParser, RealParserKilledFromOutsideMidDrain) {
    DrainFixture f;
    std::vector<std::string> names;
    for (int i = 0; i < 1000; ++i) names.push_back(f.publish("ping"));
    const pid_t pid = f.start();
    ASSERT_TRUE(wait_until([&] { return f.count("archive") >= 10; }));
    std::vector<pid_t> kids = children_of(pid);
    ASSERT_EQ(kids.size(), 1u) << "the parser should be the drain's only child";
    ASSERT_GT(f.count("requests"), 0u) << "the drain finished before the kill";
    ASSERT_EQ(::kill(kids[0], SIGKILL), 0);
    const Exit e = f.finish(pid);
    EXPECT_EQ(e.code, 0) << e.err;
    std::size_t failures = 0;
    for (const auto& n : names) {
        const std::string state = f.state_of(n);
        if (state == "denied") {
            EXPECT_EQ(f.response(n).value()["reason"], "parser failure");
            ++failures;
        } else {
            EXPECT_EQ(state, "done") << n;
        }
    }
    EXPECT_EQ(failures, 1u);
    EXPECT_EQ(f.count("requests"), 0u);
    EXPECT_EQ(f.count("processing"), 0u);
}

}  // namespace
}  // namespace hb::test
