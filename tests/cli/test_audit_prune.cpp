// `hostbridge audit --prune-before` and the journal anchor: pruning writes a
// `pruned` event the verifier starts from, removing a segment without one
// fails verify; journal entries count only when journald's trusted fields
// name the installed executor, and a log cut after the journal saw it fails.
#include <sys/stat.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include "admin/audit/audit_tools.hpp"
#include "admin/audit/audit_verify.hpp"
#include "common/audit_log.hpp"
#include "tests/cli/cli_harness.hpp"
#include "tests/support/utc.hpp"

namespace hb::test {
namespace {

namespace fs = std::filesystem;
using common::AuditEvent;
using common::AuditLog;
using common::AuditRecord;

std::string tomorrow() {
    return utc(std::time(nullptr) + 24 * 60 * 60, true).substr(0, 10);  // YYYY-MM-DD
}

class Prune : public ::testing::Test {
  protected:
    void SetUp() override {
        auto log = AuditLog::open(dir, 600);
        ASSERT_TRUE(log.ok()) << log.error().message;
        log->set_journal_anchor(false);
        AuditRecord installed;
        installed.event = AuditEvent::Installed;
        ASSERT_TRUE(log->append(installed).ok());
        for (int i = 0; i < 20; ++i) {
            AuditRecord r;
            r.event = AuditEvent::Succeeded;
            r.request = "20261129T080000Z-restart-0123456789abcdef.json";
            r.reason = "exit status 0";
            ASSERT_TRUE(log->append(r).ok());
        }
        files = admin::audit_log_files(dir).value();
        ASSERT_GE(files.size(), 5u);
    }
    TempDir tmp{"prune"};
    const std::string dir = tmp.path();
    std::vector<std::string> files;
};

TEST_F(Prune, RemovesOldSegmentsAndVerifyStartsAtThePrunedEvent) {
    auto pruned = admin::prune_audit_log(dir, tomorrow());
    ASSERT_TRUE(pruned.ok()) << pruned.error().message;
    // Every segment but the newest one, oldest first.
    ASSERT_EQ(pruned->removed.size(), files.size() - 1);
    EXPECT_EQ(pruned->removed.front(), "audit.jsonl");
    for (const auto& name : pruned->removed) EXPECT_FALSE(fs::exists(dir + "/" + name)) << name;
    auto report = admin::verify_audit_log(dir);
    ASSERT_TRUE(report.ok()) << report.error().message;
    EXPECT_FALSE(report->first_bad) << *report->first_bad;
    EXPECT_EQ(report->first_seq, pruned->first_seq);
    EXPECT_GT(pruned->first_seq, 1u);
    // The event itself: actor, what went, where the chain now starts.
    const auto j = nlohmann::json::parse(split_lines(read_file(dir + "/" + files.back())).back());
    EXPECT_EQ(j["event"], "pruned");
    EXPECT_EQ(j["actor"], "admin");
    EXPECT_EQ(j["detail"]["first_seq"], pruned->first_seq);
    EXPECT_EQ(j["detail"]["removed"].size(), pruned->removed.size());
}

TEST_F(Prune, NothingBeforeTheDateRemovesNothing) {
    auto pruned = admin::prune_audit_log(dir, "2000-01-01");
    ASSERT_TRUE(pruned.ok()) << pruned.error().message;
    EXPECT_TRUE(pruned->removed.empty());
    EXPECT_EQ(admin::audit_log_files(dir).value(), files);
}

TEST_F(Prune, RemovingSegmentsWithoutThePrunedEventFailsVerify) {
    fs::remove(dir + "/" + files[0]);
    fs::remove(dir + "/" + files[1]);
    auto report = admin::verify_audit_log(dir);
    ASSERT_TRUE(report.ok());
    ASSERT_TRUE(report->first_bad);
    EXPECT_NE(report->first_bad->find("no `pruned` event records their removal"), std::string::npos)
        << *report->first_bad;
}

TEST_F(Prune, APrunedEventDoesNotExcuseMoreMissingSegments) {
    ASSERT_TRUE(admin::prune_audit_log(dir, tomorrow()).ok());
    // Simulate more segments after the prune, then lose the one it kept.
    auto log = AuditLog::open(dir, 600);
    ASSERT_TRUE(log.ok());
    log->set_journal_anchor(false);
    for (int i = 0; i < 6; ++i) {
        AuditRecord r;
        r.event = AuditEvent::Denied;
        r.reason = "rate limited";
        ASSERT_TRUE(log->append(r).ok());
    }
    const auto now = admin::audit_log_files(dir).value();
    ASSERT_GE(now.size(), 3u);
    fs::remove(dir + "/" + now.front());
    auto report = admin::verify_audit_log(dir);
    ASSERT_TRUE(report.ok());
    ASSERT_TRUE(report->first_bad);
}

TEST_F(Prune, RefusesABrokenChainAndABadDate) {
    EXPECT_FALSE(admin::prune_audit_log(dir, "tomorrow").ok());
    fs::remove(dir + "/" + files[2]);
    auto pruned = admin::prune_audit_log(dir, tomorrow());
    ASSERT_FALSE(pruned.ok());
    EXPECT_NE(pruned.error().message.find("not pruning"), std::string::npos);
}

// The options through the real binary: usage, a prune with nothing to do,
// verify's account of where the chain starts, and --journal without one.
TEST(AuditCliPrune, OptionsThroughTheBinary) {
    TempDir root{"cli"};
    Home home{root.path()};
    Project project{root.path(), "demo-app"};
    ASSERT_EQ(home.hostbridge(install_args(project, {"--no-systemd"})).code, 0);
    Ran run = home.hostbridge({"audit", "--slug", "demo-app", "--journal"});
    EXPECT_EQ(run.code, 2) << run.err;
    run = home.hostbridge(
        {"audit", "--slug", "demo-app", "--prune-before", "2000-01-01", "--verify"});
    EXPECT_EQ(run.code, 2) << run.err;
    run = home.hostbridge({"audit", "--slug", "demo-app", "--prune-before", "yesterday"});
    EXPECT_EQ(run.code, 1);
    EXPECT_NE(run.err.find("YYYY-MM-DD"), std::string::npos) << run.err;
    run = home.hostbridge({"audit", "--slug", "demo-app", "--prune-before", tomorrow()});
    EXPECT_EQ(run.code, 0) << run.err;
    EXPECT_NE(run.out.find("nothing to prune"), std::string::npos) << run.out;
    run = home.hostbridge({"audit", "--slug", "demo-app", "--verify"});
    EXPECT_EQ(run.code, 0) << run.err;
    EXPECT_NE(run.out.find("from seq 1 (installed), the first event ever written"),
              std::string::npos)
        << run.out;
    run = home.hostbridge({"doctor", "--slug", "demo-app"});
    EXPECT_NE(run.out.find("audit log size: "), std::string::npos) << run.out;
    struct stat st {};
    if (::stat(common::kJournalSocket, &st) != 0) {
        run = home.hostbridge({"audit", "--slug", "demo-app", "--verify", "--journal"});
        EXPECT_EQ(run.code, 1);
        EXPECT_NE(run.err.find("no journal runs here"), std::string::npos) << run.err;
    }
}

TEST(JournalAnchors, OnlyEntriesWhoseTrustedFieldsNameTheExecutorCount) {
    const std::string hash(64, 'a');
    const std::string lines =
        R"({"_UID":"1000","_EXE":"/lib/hb/hostbridge-executor","HOSTBRIDGE_AUDIT_SEQ":"7","HOSTBRIDGE_AUDIT_HASH":")" +
        hash + "\"}\n" +
        // Same user, another program: anyone can log these fields.
        R"({"_UID":"1000","_EXE":"/usr/bin/logger","HOSTBRIDGE_AUDIT_SEQ":"9","HOSTBRIDGE_AUDIT_HASH":")" +
        hash + "\"}\n" +
        R"({"_UID":"1001","_EXE":"/lib/hb/hostbridge-executor","HOSTBRIDGE_AUDIT_SEQ":"9","HOSTBRIDGE_AUDIT_HASH":")" +
        hash + "\"}\n" + "not json\n";
    const auto got = admin::parse_journal_anchors(lines, "1000", "/lib/hb/hostbridge-executor");
    ASSERT_EQ(got.anchors.size(), 1u);
    EXPECT_EQ(got.anchors[0].first, 7u);
    EXPECT_EQ(got.ignored, 2u);
}

TEST(JournalAnchors, AnAnchorPastTheEndOrWithAnotherHashFailsVerify) {
    TempDir root{"cli"};
    const std::string dir = root.path() + "/state";
    fs::create_directories(dir);
    auto log = AuditLog::open(dir);
    ASSERT_TRUE(log.ok());
    log->set_journal_anchor(false);
    AuditRecord r;
    r.event = AuditEvent::Installed;
    ASSERT_TRUE(log->append(r).ok());
    ASSERT_TRUE(log->append(r).ok());
    admin::AuditAnchors past{{3, std::string(64, 'b')}};
    auto report = admin::verify_audit_log(dir, &past);
    ASSERT_TRUE(report.ok());
    ASSERT_TRUE(report->first_bad);
    EXPECT_NE(report->first_bad->find("the log was cut"), std::string::npos) << *report->first_bad;
    admin::AuditAnchors other{{2, std::string(64, 'b')}};
    report = admin::verify_audit_log(dir, &other);
    ASSERT_TRUE(report.ok());
    ASSERT_TRUE(report->first_bad);
    EXPECT_NE(report->first_bad->find("another hash for seq 2"), std::string::npos);
}

// Against the real journal: the installed executor's drain anchors each
// append, `audit --verify --journal` finds them, and cutting the log's tail
// (which the chain alone cannot see) fails.
TEST(JournalAnchors, RealJournalCrossCheck) {
    struct stat st {};
    if (::stat(common::kJournalSocket, &st) != 0)
        GTEST_SKIP() << "no journald here: " << common::kJournalSocket << " does not exist";
    if (::access("/usr/bin/journalctl", X_OK) != 0 && ::access("/bin/journalctl", X_OK) != 0)
        GTEST_SKIP() << "journalctl is not installed";
    TempDir root{"cli"};
    Home home{root.path()};
    Project project{root.path(), "demo-app"};
    ASSERT_EQ(home.hostbridge(install_args(project, {"--no-systemd"})).code, 0);
    const std::string ping = drop_request(project.spool(), "ping");
    Drained drained =
        run_drain_until_answered(exec_start_of(home, "demo-app"), project.spool(), ping);
    ASSERT_EQ(drained.response["state"], "done") << drained.log;
    // journald may take a moment to write what it received.
    Ran run;
    for (int i = 0; i < 50; ++i) {
        run = home.hostbridge({"audit", "--slug", "demo-app", "--verify", "--journal"});
        if (run.code == 0 && run.out.find("journal: 0 anchor") == std::string::npos) break;
        ::usleep(100000);
    }
    ASSERT_EQ(run.code, 0) << run.err;
    if (run.out.find("journal: 0 anchor") != std::string::npos)
        GTEST_SKIP() << "journald does not store this user's entries here: " << run.out;
    // Cut the last line: the chain still verifies, the journal does not agree.
    const std::string log = home.state_dir("demo-app") + "/audit.jsonl";
    std::string text = read_file(log);
    text.erase(text.rfind('\n', text.size() - 2) + 1);
    write_file(log, text);
    EXPECT_EQ(home.hostbridge({"audit", "--slug", "demo-app", "--verify"}).code, 0);
    run = home.hostbridge({"audit", "--slug", "demo-app", "--verify", "--journal"});
    EXPECT_EQ(run.code, 1);
    EXPECT_NE(run.err.find("the log was cut"), std::string::npos) << run.err;
}

// --since's forms, against a fixed clock: 2026-12-03T10:20:30Z.
TEST(SinceCutoff, EachFormIsTheLogsOwnTimestamp) {
    const std::time_t now = 1796293230;
    EXPECT_EQ(*admin::since_cutoff("today", now), "2026-12-03T00:00:00.000Z");
    EXPECT_EQ(*admin::since_cutoff("2026-11-30", now), "2026-11-30T00:00:00.000Z");
    EXPECT_EQ(*admin::since_cutoff("2026-12-01T23:59:59Z", now), "2026-12-01T23:59:59.000Z");
    EXPECT_EQ(*admin::since_cutoff("90m", now), "2026-12-03T08:50:30.000Z");
    EXPECT_EQ(*admin::since_cutoff("7d", now), "2026-11-26T10:20:30.000Z");
    EXPECT_EQ(*admin::since_cutoff("30s", now), "2026-12-03T10:20:00.000Z");
    for (const char* bad :
         {"", "d", "7", "7w", "-7d", "99999999d", "2026-13-01", "2026-02-29",
          "2026-12-03T24:00:00Z", "2026-12-03 10:00:00Z", "2026-12-3", "today ", "Today"}) {
        EXPECT_FALSE(admin::since_cutoff(bad, now)) << bad;
    }
}

}  // namespace
}  // namespace hb::test
