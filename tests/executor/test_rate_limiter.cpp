#include "executor/rate_limiter.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/support/files.hpp"

namespace hb::exec {
namespace {

const Window kBig{20, 600};
const Window kRead{120, 60};

std::int64_t boottime_ms() {
    return RateLimiter::boottime_ms();
}

// A clock the test moves by hand: what is checked then depends neither on
// how long the machine has been up (stamps 10 minutes back would be negative
// in the first minutes after boot) nor on how loaded it is.
struct ManualClock {
    std::int64_t now_ms = 3'600'000;  // an hour after boot
    RateLimiter::Clock clock() {
        return [this] { return now_ms; };
    }
};

nlohmann::json state(const test::TempDir& t) {
    return nlohmann::json::parse(t.read(RateLimiter::kStateFile));
}

int admit_n(RateLimiter& rl, RateClass rate, int n) {
    int admitted = 0;
    for (int i = 0; i < n; ++i) admitted += rl.try_admit(rate).admitted() ? 1 : 0;
    return admitted;
}

TEST(RateLimiter, PingIsExemptAndTouchesNothing) {
    test::TempDir t;
    RateLimiter rl(t.path(), {1, 600}, {1, 60});
    for (int i = 0; i < 50; ++i) EXPECT_TRUE(rl.try_admit(RateClass::Exempt).admitted());
    EXPECT_FALSE(std::filesystem::exists(t.path(RateLimiter::kStateFile)));
}

TEST(RateLimiter, AdmitsUpToTheLimitThenSaysWhenToRetry) {
    test::TempDir t;
    RateLimiter rl(t.path(), kBig, kRead);
    EXPECT_EQ(admit_n(rl, RateClass::Mutating, 20), 20);
    const Admission denied = rl.try_admit(RateClass::Mutating);
    EXPECT_EQ(denied.kind, Admission::Kind::OverLimit);
    // The oldest entry leaves 600 s after it was taken, a moment ago.
    EXPECT_GE(denied.retry_after_seconds, 598);
    EXPECT_LE(denied.retry_after_seconds, 600);
    EXPECT_EQ(denied.detail, "retry in " + std::to_string(denied.retry_after_seconds) + " s");
}

TEST(RateLimiter, CountsOnlyWhatItAdmits) {
    test::TempDir t;
    RateLimiter rl(t.path(), {3, 600}, kRead);
    EXPECT_EQ(admit_n(rl, RateClass::Mutating, 10), 3);
    const auto s = state(t);
    EXPECT_EQ(s["mutating"].size(), 3u);
    EXPECT_EQ(s["read_only"].size(), 0u);
    EXPECT_EQ(s["boot_id"], *current_boot_id());
}

TEST(RateLimiter, WindowsAreIndependent) {
    test::TempDir t;
    RateLimiter rl(t.path(), {2, 600}, {5, 60});
    EXPECT_EQ(admit_n(rl, RateClass::Mutating, 4), 2);
    EXPECT_EQ(admit_n(rl, RateClass::ReadOnly, 7), 5);
    EXPECT_FALSE(rl.try_admit(RateClass::Mutating).admitted());
    EXPECT_TRUE(rl.try_admit(RateClass::Exempt).admitted());
}

TEST(RateLimiter, HoldsAcrossProcesses) {
    test::TempDir t;
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        RateLimiter rl(t.path(), kBig, kRead);
        ::_exit(admit_n(rl, RateClass::Mutating, 12));
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 12);
    RateLimiter rl(t.path(), kBig, kRead);  // a later drain: a fresh object
    EXPECT_EQ(admit_n(rl, RateClass::Mutating, 12), 8);
}

TEST(RateLimiter, ConcurrentProcessesShareTheWindowExactly) {
    test::TempDir t;
    constexpr int kProcs = 8;
    constexpr int kTriesEach = 6;  // 48 attempts for 20 slots
    std::vector<pid_t> pids;
    int go[2];
    ASSERT_EQ(::pipe(go), 0);
    for (int i = 0; i < kProcs; ++i) {
        const pid_t pid = ::fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            ::close(go[1]);
            char c;
            (void)!::read(go[0], &c, 1);  // all start together
            RateLimiter rl(t.path(), kBig, kRead);
            ::_exit(admit_n(rl, RateClass::Mutating, kTriesEach));
        }
        pids.push_back(pid);
    }
    ::close(go[0]);
    ::close(go[1]);  // EOF releases every child at once
    int total = 0;
    for (pid_t pid : pids) {
        int status = 0;
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(WIFEXITED(status));
        total += WEXITSTATUS(status);
    }
    EXPECT_EQ(total, 20);
    EXPECT_EQ(state(t)["mutating"].size(), 20u);
    // No temp file was left behind by any racer.
    int files = 0;
    for (const auto& e : std::filesystem::directory_iterator(t.path())) {
        (void)e;
        ++files;
    }
    EXPECT_EQ(files, 2);  // state + lock
}

TEST(RateLimiter, WindowSlides) {
    test::TempDir t;
    ManualClock c;
    RateLimiter rl(t.path(), {2, 1}, kRead, c.clock());
    EXPECT_EQ(admit_n(rl, RateClass::Mutating, 2), 2);
    c.now_ms += 999;
    const Admission third = rl.try_admit(RateClass::Mutating);
    EXPECT_EQ(third.kind, Admission::Kind::OverLimit);
    EXPECT_EQ(third.retry_after_seconds, 1);
    c.now_ms += 1;  // the first two entries are now a full second old
    EXPECT_TRUE(rl.try_admit(RateClass::Mutating).admitted());
}

// An entry a drain left a full second ago, dated on the real
// CLOCK_BOOTTIME: out of a one-second window, still inside a minute's.
TEST(RateLimiter, WindowSlidesOnTheRealClock) {
    test::TempDir t;
    const auto admitted = [&t](Window window) {
        const nlohmann::json s = {{"version", 1},
                                  {"boot_id", *current_boot_id()},
                                  {"mutating", {boottime_ms() - 1000}},
                                  {"read_only", nlohmann::json::array()}};
        t.write(RateLimiter::kStateFile, s.dump());
        RateLimiter rl(t.path(), window, kRead);
        return rl.try_admit(RateClass::Mutating).admitted();
    };
    EXPECT_TRUE(admitted({1, 1}));
    EXPECT_FALSE(admitted({1, 60}));
}

TEST(RateLimiter, RetryCountsFromTheEntryThatMustLeave) {
    // A limit lowered since the entries were taken: 3 in the window, limit 2.
    test::TempDir t;
    ManualClock c;
    const std::int64_t now = c.now_ms;
    nlohmann::json s = {{"version", 1},
                        {"boot_id", *current_boot_id()},
                        {"mutating", {now - 590'000, now - 300'000, now - 100'000}},
                        {"read_only", nlohmann::json::array()}};
    t.write(RateLimiter::kStateFile, s.dump());
    RateLimiter rl(t.path(), {2, 600}, kRead, c.clock());
    const Admission a = rl.try_admit(RateClass::Mutating);
    EXPECT_EQ(a.kind, Admission::Kind::OverLimit);
    EXPECT_EQ(a.retry_after_seconds, 300);
}

TEST(RateLimiter, EntriesOutsideTheWindowAreDropped) {
    test::TempDir t;
    ManualClock c;
    const std::int64_t now = c.now_ms;
    nlohmann::json s = {{"version", 1},
                        {"boot_id", *current_boot_id()},
                        {"mutating", nlohmann::json::array()},
                        {"read_only", {now - 120'000, now - 61'000, now - 10'000}}};
    t.write(RateLimiter::kStateFile, s.dump());
    RateLimiter rl(t.path(), kBig, {2, 60}, c.clock());
    EXPECT_EQ(admit_n(rl, RateClass::ReadOnly, 3), 1);
    EXPECT_EQ(state(t)["read_only"].size(), 2u);
}

TEST(RateLimiter, ANewBootStartsEmptyWindows) {
    test::TempDir t;
    {
        RateLimiter rl(t.path(), kBig, kRead);
        EXPECT_EQ(admit_n(rl, RateClass::Mutating, 20), 20);
        EXPECT_FALSE(rl.try_admit(RateClass::Mutating).admitted());
    }
    // The same file as if written during another boot (whose clock ran further).
    nlohmann::json s = state(t);
    s["boot_id"] = "00000000-0000-0000-0000-000000000000";
    s["mutating"].push_back(boottime_ms() + 10'000'000);
    t.write(RateLimiter::kStateFile, s.dump());
    RateLimiter rl(t.path(), kBig, kRead);
    EXPECT_EQ(admit_n(rl, RateClass::Mutating, 25), 20);
    EXPECT_EQ(state(t)["boot_id"], *current_boot_id());
}

class CorruptState : public ::testing::TestWithParam<std::string> {};

TEST_P(CorruptState, FailsClosedForEveryCountedVerb) {
    test::TempDir t;
    t.write(RateLimiter::kStateFile, GetParam());
    RateLimiter rl(t.path(), kBig, kRead);
    for (RateClass rate : {RateClass::Mutating, RateClass::ReadOnly}) {
        const Admission a = rl.try_admit(rate);
        EXPECT_EQ(a.kind, Admission::Kind::StateUnusable);
        EXPECT_NE(a.detail.find("is corrupt"), std::string::npos) << a.detail;
        EXPECT_NE(a.detail.find(t.path(RateLimiter::kStateFile)), std::string::npos) << a.detail;
    }
    EXPECT_TRUE(rl.try_admit(RateClass::Exempt).admitted());
    EXPECT_EQ(t.read(RateLimiter::kStateFile), GetParam());  // left as evidence
}

std::string with_boot(const std::string& windows) {
    return R"({"version":1,"boot_id":")" + *current_boot_id() + "\"," + windows + "}";
}

INSTANTIATE_TEST_SUITE_P(
    RateLimiter, CorruptState,
    ::testing::Values("", "garbage", "{\"version\":1", "[]", "{}",
                      with_boot(R"("mutating":[1,2])"),                  // a window missing
                      with_boot(R"("mutating":[1],"read_only":["2"])"),  // not an integer
                      with_boot(R"("mutating":[1.5],"read_only":[])"),   // not an integer
                      with_boot(R"("mutating":{},"read_only":[])"),      // not an array
                      with_boot(R"("mutating":[-1],"read_only":[])"),    // negative
                      with_boot(R"("mutating":[9223372036854775807],"read_only":[])"),  // future
                      with_boot(R"("mutating":[],"read_only":[],"extra":1)"),  // unknown key
                      R"({"version":2,"boot_id":"x","mutating":[],"read_only":[]})",
                      R"({"version":"1","boot_id":"x","mutating":[],"read_only":[]})",
                      R"({"version":1,"boot_id":7,"mutating":[],"read_only":[]})"));

TEST(RateLimiter, SymlinkOrDirectoryInPlaceOfTheStateFails) {
    test::TempDir t;
    t.write("elsewhere.json", with_boot(R"("mutating":[],"read_only":[])"));
    std::filesystem::create_symlink(t.path("elsewhere.json"), t.path(RateLimiter::kStateFile));
    RateLimiter rl(t.path(), kBig, kRead);
    Admission a = rl.try_admit(RateClass::Mutating);
    EXPECT_EQ(a.kind, Admission::Kind::StateUnusable);
    EXPECT_NE(a.detail.find("symlink"), std::string::npos) << a.detail;

    std::filesystem::remove(t.path(RateLimiter::kStateFile));
    std::filesystem::create_directory(t.path(RateLimiter::kStateFile));
    a = rl.try_admit(RateClass::ReadOnly);
    EXPECT_EQ(a.kind, Admission::Kind::StateUnusable);
    EXPECT_NE(a.detail.find("not a regular file"), std::string::npos) << a.detail;
}

TEST(RateLimiter, MissingStateDirFailsClosed) {
    test::TempDir t;
    RateLimiter rl(t.path("does-not-exist"), kBig, kRead);
    const Admission a = rl.try_admit(RateClass::Mutating);
    EXPECT_EQ(a.kind, Admission::Kind::StateUnusable);
    EXPECT_NE(a.detail.find("does-not-exist"), std::string::npos) << a.detail;
}

TEST(RateLimiter, ConfigConstructorUsesTheConfiguredWindows) {
    test::TempDir t;
    Config c;
    c.state_dir = t.path();
    c.limits.mutating = {1, 600};
    c.limits.read_only = {2, 60};
    RateLimiter rl(c);
    EXPECT_EQ(admit_n(rl, RateClass::Mutating, 3), 1);
    EXPECT_EQ(admit_n(rl, RateClass::ReadOnly, 3), 2);
}

}  // namespace
}  // namespace hb::exec
