// Entries the host did not create (issue 12): `.stuck-*` names planted in
// requests/ by the thousand leave it for quarantine/ in bounded batches with
// one audit record each, instead of being listed again by every drain; and
// `watch` wakes for every way an entry can appear in requests/.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "executor/drain.hpp"
#include "tests/support/drain_fixture.hpp"

namespace hb::test {
namespace {

std::size_t count_prefix(const std::vector<std::string>& names, const std::string& prefix) {
    return static_cast<std::size_t>(std::count_if(
        names.begin(), names.end(), [&](const std::string& n) { return n.starts_with(prefix); }));
}

// The size of every batch the audit log records.
std::vector<std::size_t> batches(const DrainFixture& f) {
    std::vector<std::size_t> out;
    for (const auto& line : f.audit()) {
        const std::string reason =
            line["reason"].is_string() ? line["reason"].get<std::string>() : "";
        if (line["event"] == "quarantined" && line["request"].is_null() &&
            reason.find(" .stuck-* entries moved") != std::string::npos) {
            out.push_back(std::stoul(reason));
        }
    }
    return out;
}

std::size_t sum(const std::vector<std::size_t>& v) {
    std::size_t total = 0;
    for (auto n : v) total += n;
    return total;
}

TEST(DrainPlanted, PlantedStuckNamesAreQuarantinedInBoundedBatches) {
    constexpr std::size_t kPlanted = 20000;
    const std::size_t batch = exec::kStuckBatch;
    ASSERT_LT(2 * batch, kPlanted);
    DrainFixture f;
    for (std::size_t i = 0; i < kPlanted; ++i) {
        const std::string p = f.path("requests", ".stuck-planted-" + std::to_string(i));
        const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        ASSERT_GE(fd, 0) << p;
        ::close(fd);
    }
    // A name sorting before ".stuck-" must not hide them.
    f.publish_as("-early-junk", "x");
    const std::string ping = f.publish("ping");

    const Exit first = f.run();
    ASSERT_EQ(first.code, 0) << first.err;
    EXPECT_EQ(f.state_of(ping), "done");  // served in the same drain
    // One batch per listing of requests/ (this drain listed it twice: the
    // second listing found no request), one audit record per batch.
    std::vector<std::size_t> seen = batches(f);
    ASSERT_EQ(seen, (std::vector<std::size_t>{batch, batch}));
    EXPECT_EQ(count_prefix(f.list("quarantine"), ".stuck-planted-"), 2 * batch);
    EXPECT_EQ(count_prefix(f.list("requests"), ".stuck-planted-"), kPlanted - 2 * batch);

    // The next drain takes the rest; then nothing is left to look at.
    ASSERT_EQ(f.run().code, 0);
    seen = batches(f);
    EXPECT_EQ(seen, (std::vector<std::size_t>{batch, batch, kPlanted - 2 * batch}));
    EXPECT_EQ(sum(seen), kPlanted);
    EXPECT_EQ(count_prefix(f.list("quarantine"), ".stuck-planted-"), kPlanted);
    EXPECT_EQ(f.list("requests"), std::vector<std::string>{});
    ASSERT_EQ(f.run().code, 0);
    EXPECT_EQ(batches(f).size(), 3u);
}

// watch must wake for an entry made by link(2), symlink(2) or mkfifo(3):
// none of them is a rename or a close after writing.
class WatchWakes : public ::testing::TestWithParam<std::string> {};

TEST_P(WatchWakes, OnEveryWayAnEntryAppears) {
    DrainFixture f;
    const pid_t pid = f.start("watch");
    // Idle once the start-up drain mirrored its audit log.
    ASSERT_TRUE(wait_until([&] { return fs::exists(f.path("diagnostics", "audit.jsonl")); }));
    const std::string entry = f.name("ping");
    const std::string target = f.path("requests", entry);
    if (GetParam() == "link") {
        const std::string source = f.path("tmp", "linked");
        write_file(source, DrainFixture::body("ping"));
        ASSERT_EQ(::link(source.c_str(), target.c_str()), 0);
    } else if (GetParam() == "symlink") {
        ASSERT_EQ(::symlink("/etc/passwd", target.c_str()), 0);
    } else {
        ASSERT_EQ(::mkfifo(target.c_str(), 0644), 0);
    }
    // Woken, the drain takes the entry out of requests/ (to quarantine/)
    // and answers it; nothing else happens in the spool meanwhile.
    EXPECT_TRUE(wait_until([&] { return f.state_of(entry) == "denied"; }))
        << GetParam() << " did not wake watch";
    EXPECT_FALSE(fs::exists(fs::symlink_status(target)));
    ASSERT_EQ(::kill(pid, SIGTERM), 0);
    const Exit e = f.finish(pid, std::chrono::seconds(10));
    EXPECT_EQ(e.code, 0) << e.err;
}

INSTANTIATE_TEST_SUITE_P(Kinds, WatchWakes, ::testing::Values("link", "symlink", "mkfifo"),
                         [](const auto& param_info) { return param_info.param; });

}  // namespace
}  // namespace hb::test
