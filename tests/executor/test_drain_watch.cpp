// Waiting for work: `drain --linger` and `watch`, both on inotify, both
// leaving cleanly on SIGTERM/SIGINT.
#include <gtest/gtest.h>

#include "tests/support/drain_fixture.hpp"

namespace hb::test {
namespace {

TEST(DrainWatch, LingerPicksUpARequestPublishedDuringTheLinger) {
    DrainFixture f;
    SpawnOptions linger;
    linger.extra = {"--linger", "3"};
    const pid_t pid = f.start("drain", linger);
    // Once the first (empty) drain mirrored its audit log, it is lingering.
    ASSERT_TRUE(wait_until([&] { return fs::exists(f.path("diagnostics", "audit.jsonl")); }));
    const std::string req = f.publish("ping");
    EXPECT_TRUE(wait_until([&] { return f.state_of(req) == "done"; }));
    const Exit e = f.finish(pid);
    EXPECT_EQ(e.code, 0) << e.err;
    EXPECT_EQ(f.state_of(req), "done");
}

TEST(DrainWatch, WithoutLingerADrainDoesNotWait) {
    DrainFixture f;
    const Exit e = f.run();
    EXPECT_EQ(e.code, 0) << e.err;
    const std::string req = f.publish("ping");
    EXPECT_EQ(f.state_of(req), "");  // nobody is watching
}

class WatchSignal : public ::testing::TestWithParam<int> {};

TEST_P(WatchSignal, ServesRequestsAndExitsZero) {
    DrainFixture f;
    const std::string early = f.publish("ping");
    const pid_t pid = f.start("watch");
    ASSERT_TRUE(wait_until([&] { return f.state_of(early) == "done"; }));  // a drain at start
    for (int i = 0; i < 3; ++i) {
        const std::string req = f.publish("ping");
        ASSERT_TRUE(wait_until([&] { return f.state_of(req) == "done"; })) << i;
    }
    ASSERT_EQ(::kill(pid, GetParam()), 0);
    const Exit e = f.finish(pid, std::chrono::seconds(10));
    EXPECT_EQ(e.code, 0) << e.err;
    EXPECT_EQ(e.err, "");
}

INSTANTIATE_TEST_SUITE_P(Signals, WatchSignal, ::testing::Values(SIGTERM, SIGINT),
                         [](const auto& param_info) {
                             return std::string(param_info.param == SIGTERM ? "SIGTERM" : "SIGINT");
                         });

TEST(DrainWatch, LingerEndsOnSigterm) {
    DrainFixture f;
    SpawnOptions linger;
    linger.extra = {"--linger", "600"};
    const pid_t pid = f.start("drain", linger);
    ASSERT_TRUE(wait_until([&] { return fs::exists(f.path("diagnostics", "audit.jsonl")); }));
    ASSERT_EQ(::kill(pid, SIGTERM), 0);
    const Exit e = f.finish(pid, std::chrono::seconds(10));
    EXPECT_EQ(e.code, 0) << e.err;
}

}  // namespace
}  // namespace hb::test
