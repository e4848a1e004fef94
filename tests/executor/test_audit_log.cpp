// The audit log on real files: line format and hash (recomputed here with
// OpenSSL directly), chain verification and tamper detection, escaping,
// concurrent appends from forked processes, torn-line recovery, rotation,
// and failure on a read-only state dir.
#include <fcntl.h>
#include <openssl/evp.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "admin/audit/audit_verify.hpp"
#include "common/audit_log.hpp"
#include "tests/support/files.hpp"

namespace {

using hb::admin::verify_audit_log;
using hb::common::AuditEvent;
using hb::common::AuditLog;
using hb::common::AuditRecord;
using hb::test::append_file;
using hb::test::read_file;
using hb::test::split_lines;
using hb::test::write_file;
using nlohmann::ordered_json;

const std::string kZero(64, '0');
const std::vector<std::string> kKeys = {"seq",         "ts",   "event",  "request",
                                        "verb",        "arg",  "reason", "exit_code",
                                        "duration_ms", "prev", "hash"};

std::string sha256(const std::string& data) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EXPECT_EQ(EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr), 1);
    std::string hex;
    char byte[3];
    for (unsigned int i = 0; i < len; ++i) {
        std::snprintf(byte, sizeof byte, "%02x", md[i]);
        hex += byte;
    }
    return hex;
}

std::string canonical(const ordered_json& j) {
    return j.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

std::string join_lines(const std::vector<std::string>& lines) {
    std::string out;
    for (const auto& line : lines) out += line + "\n";
    return out;
}

AuditRecord record(AuditEvent event,
                   std::string request = "20261129T080000Z-ping-0123456789abcdef.json") {
    AuditRecord r;
    r.event = event;
    r.request = std::move(request);
    return r;
}

AuditRecord full_record() {
    AuditRecord r;
    r.event = AuditEvent::Failed;
    r.request = "20261129T080000Z-restart-0123456789abcdef.json";
    r.verb = hb::Verb::Restart;
    r.arg = "api";
    r.reason = "exit status 3";
    r.exit_code = 3;
    r.duration_ms = 1234;
    return r;
}

class AuditLogTest : public ::testing::Test {
  protected:
    void SetUp() override { log_path_ = dir_ + "/audit.jsonl"; }

    AuditLog open_log(std::uint64_t rotate_bytes = hb::common::kAuditRotateBytes) {
        auto log = AuditLog::open(dir_, rotate_bytes);
        EXPECT_TRUE(log.ok()) << log.error().message;
        return std::move(log).value();
    }

    void append(AuditLog& log, const AuditRecord& r) {
        auto appended = log.append(r);
        ASSERT_TRUE(appended.ok()) << appended.error().message;
    }

    hb::admin::AuditVerifyReport verify() {
        auto report = verify_audit_log(dir_);
        EXPECT_TRUE(report.ok()) << report.error().message;
        return report.ok() ? *report : hb::admin::AuditVerifyReport{};
    }

    void expect_verifies(std::uint64_t lines, std::uint64_t torn = 0) {
        auto report = verify();
        EXPECT_FALSE(report.first_bad.has_value()) << *report.first_bad;
        EXPECT_EQ(report.lines, lines);
        EXPECT_EQ(report.torn_fragments, torn);
    }

    void expect_bad(const std::string& prefix) {
        auto report = verify();
        ASSERT_TRUE(report.first_bad.has_value()) << "verify passed, expected " << prefix;
        EXPECT_EQ(report.first_bad->rfind(prefix, 0), 0u) << *report.first_bad;
    }

    hb::test::TempDir tmp_{"audit"};  // removed even when a test left it read-only
    std::string dir_ = tmp_.path();
    std::string log_path_;
};

// --- format ---------------------------------------------------------------

TEST_F(AuditLogTest, OpenFailsClearlyWhenStateDirIsMissing) {
    auto log = AuditLog::open(dir_ + "/missing");
    ASSERT_FALSE(log.ok());
    EXPECT_NE(log.error().message.find("does not exist"), std::string::npos) << log.error().message;
}

TEST_F(AuditLogTest, LogIsOwnerOnlyWhateverTheUmask) {
    const mode_t old = ::umask(0);
    auto log = AuditLog::open(dir_);
    ::umask(old);
    ASSERT_TRUE(log.ok()) << log.error().message;
    struct stat st {};
    ASSERT_EQ(::stat(log_path_.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600u);
}

TEST_F(AuditLogTest, LoosenedModeIsTightenedOnOpen) {
    write_file(log_path_, "");
    ASSERT_EQ(::chmod(log_path_.c_str(), 0644), 0);
    open_log();
    struct stat st {};
    ASSERT_EQ(::stat(log_path_.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600u);
}

TEST_F(AuditLogTest, RefusesASymlinkedLog) {
    const std::string target = dir_ + "/elsewhere";
    write_file(target, "untouched");
    ASSERT_EQ(::symlink(target.c_str(), log_path_.c_str()), 0);
    auto log = AuditLog::open(dir_);
    ASSERT_FALSE(log.ok());
    EXPECT_NE(log.error().message.find("symlink"), std::string::npos) << log.error().message;
    EXPECT_EQ(read_file(target), "untouched");
}

TEST_F(AuditLogTest, FirstLineHasEveryKeyInOrderAndTheDocumentedHash) {
    auto log = open_log();
    append(log, full_record());
    const std::string text = read_file(log_path_);
    ASSERT_FALSE(text.empty());
    ASSERT_EQ(text.back(), '\n');
    const auto lines = split_lines(text);
    ASSERT_EQ(lines.size(), 1u);
    const auto j = ordered_json::parse(lines[0]);
    std::vector<std::string> keys;
    for (const auto& item : j.items()) keys.push_back(item.key());
    EXPECT_EQ(keys, kKeys);
    EXPECT_EQ(j["seq"], 1);
    EXPECT_EQ(j["event"], "failed");
    EXPECT_EQ(j["request"], "20261129T080000Z-restart-0123456789abcdef.json");
    EXPECT_EQ(j["verb"], "restart");
    EXPECT_EQ(j["arg"], "api");
    EXPECT_EQ(j["reason"], "exit status 3");
    EXPECT_EQ(j["exit_code"], 3);
    EXPECT_EQ(j["duration_ms"], 1234);
    EXPECT_EQ(j["prev"], kZero);
    const std::string ts = j["ts"];
    ASSERT_EQ(ts.size(), 24u) << ts;
    EXPECT_EQ(ts[4], '-');
    EXPECT_EQ(ts[10], 'T');
    EXPECT_EQ(ts[19], '.');
    EXPECT_EQ(ts[23], 'Z');

    // hash = SHA-256(prev "\n" compact-text-without-hash); the line on disk
    // is that same text with hash appended as the last key.
    const std::string hash = j["hash"];
    const std::string suffix = ",\"hash\":\"" + hash + "\"}";
    ASSERT_GT(lines[0].size(), suffix.size());
    ASSERT_EQ(lines[0].substr(lines[0].size() - suffix.size()), suffix);
    const std::string without_hash = lines[0].substr(0, lines[0].size() - suffix.size()) + "}";
    EXPECT_EQ(hash, sha256(kZero + "\n" + without_hash));
    EXPECT_EQ(without_hash, canonical(ordered_json::parse(without_hash)));  // compact
}

TEST_F(AuditLogTest, AbsentFieldsAreNullNotMissing) {
    auto log = open_log();
    AuditRecord r;
    r.event = AuditEvent::Installed;
    append(log, r);
    const auto j = ordered_json::parse(split_lines(read_file(log_path_))[0]);
    std::vector<std::string> keys;
    for (const auto& item : j.items()) keys.push_back(item.key());
    EXPECT_EQ(keys, kKeys);
    for (const char* key : {"request", "verb", "arg", "reason", "exit_code", "duration_ms"})
        EXPECT_TRUE(j[key].is_null()) << key;
    expect_verifies(1);
}

TEST_F(AuditLogTest, EveryEventNameRoundTrips) {
    for (int i = static_cast<int>(AuditEvent::Installed);
         i <= static_cast<int>(AuditEvent::Recovered); ++i) {
        const auto event = static_cast<AuditEvent>(i);
        const auto name = hb::common::audit_event_name(event);
        EXPECT_EQ(hb::admin::audit_event_from_name(name), event) << name;
    }
    EXPECT_FALSE(hb::admin::audit_event_from_name("exploded").has_value());
}

TEST_F(AuditLogTest, OffSchemaNamesAreEscapedAsBackslashXHH) {
    auto log = open_log();
    append(log, record(AuditEvent::Quarantined, std::string("a\nb\xff\\c\x01\"d", 9)));
    const std::string line = split_lines(read_file(log_path_))[0];
    // In the JSON text the backslash of \xHH is itself escaped.
    EXPECT_NE(line.find(R"("request":"a\\x0ab\\xff\\x5cc\\x01\"d")"), std::string::npos) << line;
    const auto j = ordered_json::parse(line);
    EXPECT_EQ(j["request"], "a\\x0ab\\xff\\x5cc\\x01\"d");
    expect_verifies(1);
}

TEST_F(AuditLogTest, InvalidUtf8InFreeTextStillLogsValidJson) {
    auto log = open_log();
    AuditRecord r = record(AuditEvent::Denied);
    r.reason = std::string("bad \xc3\x28 bytes");
    r.arg = std::string("\xff");
    append(log, r);
    const auto j = ordered_json::parse(split_lines(read_file(log_path_))[0]);
    EXPECT_EQ(j["reason"], "bad \xef\xbf\xbd( bytes");
    expect_verifies(1);
}

// --- chain and tampering --------------------------------------------------

TEST_F(AuditLogTest, ChainOfManyLinesVerifies) {
    auto log = open_log();
    for (int i = 0; i < 50; ++i) {
        AuditRecord r = i % 2 == 0 ? full_record() : record(AuditEvent::Queued);
        append(log, r);
    }
    const auto lines = split_lines(read_file(log_path_));
    ASSERT_EQ(lines.size(), 50u);
    std::string prev = kZero;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const auto j = ordered_json::parse(lines[i]);
        EXPECT_EQ(j["seq"], i + 1);
        EXPECT_EQ(j["prev"], prev);
        prev = j["hash"];
    }
    expect_verifies(50);
}

// A line another writer (or a crash's fragment) added since this
// appender's last line is what its next line chains to.
TEST_F(AuditLogTest, AnAppendAfterAnotherWritersLineOrAFragmentChainsToIt) {
    auto first = open_log();
    auto second = open_log();
    append(first, record(AuditEvent::Queued, "a"));
    append(second, record(AuditEvent::Queued, "b"));
    append(first, record(AuditEvent::Queued, "c"));
    append_file(log_path_, "{\"seq\":4,\"torn");
    append(first, record(AuditEvent::Queued, "d"));
    const auto lines = split_lines(read_file(log_path_));
    ASSERT_EQ(lines.size(), 6u);  // a, b, c, the fragment, recovered, d
    EXPECT_EQ(ordered_json::parse(lines[2])["prev"], ordered_json::parse(lines[1])["hash"]);
    EXPECT_EQ(ordered_json::parse(lines[4])["event"], "recovered");
    EXPECT_EQ(ordered_json::parse(lines[5])["seq"], 5);
    expect_verifies(5, 1);
}

TEST_F(AuditLogTest, NoLogVerifiesAsEmpty) {
    expect_verifies(0);
}

TEST_F(AuditLogTest, ChangingAnyFieldOfAnyLineIsReportedOnThatLine) {
    auto log = open_log();
    for (int i = 0; i < 4; ++i)
        append(log, i % 2 == 0 ? full_record() : record(AuditEvent::Queued));
    const std::string original = read_file(log_path_);
    const auto lines = split_lines(original);

    for (std::size_t n = 0; n < lines.size(); ++n) {
        for (const std::string& key : kKeys) {
            auto j = ordered_json::parse(lines[n]);
            ordered_json& v = j[key];
            if (key == "seq") {
                v = v.get<std::uint64_t>() + 1;
            } else if (key == "ts") {
                std::string ts = v;
                ts[22] = ts[22] == '0' ? '1' : '0';
                v = ts;
            } else if (key == "event") {
                v = v == "queued" ? "denied" : "queued";
            } else if (key == "verb") {
                v = v.is_null() ? "ping" : "status";
            } else if (key == "exit_code" || key == "duration_ms") {
                v = v.is_null() ? 0 : v.get<int>() + 1;
            } else if (key == "prev" || key == "hash") {
                std::string h = v;
                h[0] = h[0] == 'a' ? 'b' : 'a';
                v = h;
            } else {
                v = v.is_null() ? ordered_json("x") : ordered_json(v.get<std::string>() + "x");
            }
            auto tampered = lines;
            tampered[n] = canonical(j);
            write_file(log_path_, join_lines(tampered));
            SCOPED_TRACE("line " + std::to_string(n + 1) + " key " + key);
            expect_bad("audit.jsonl line " + std::to_string(n + 1) + ": ");
        }
    }
    write_file(log_path_, original);
    expect_verifies(4);
}

TEST_F(AuditLogTest, ReorderedKeysAreReported) {
    auto log = open_log();
    append(log, record(AuditEvent::Queued));
    append(log, record(AuditEvent::Queued));
    auto lines = split_lines(read_file(log_path_));
    auto j = ordered_json::parse(lines[1]);
    ordered_json swapped;
    for (const auto& item : j.items()) {
        if (item.key() == "verb") continue;
        swapped[item.key()] = item.value();
        if (item.key() == "arg") swapped["verb"] = j["verb"];
    }
    lines[1] = canonical(swapped);
    write_file(log_path_, join_lines(lines));
    expect_bad("audit.jsonl line 2: key \"arg\" where \"verb\" belongs");
}

TEST_F(AuditLogTest, NonCanonicalSpacingIsReported) {
    auto log = open_log();
    append(log, record(AuditEvent::Queued));
    auto lines = split_lines(read_file(log_path_));
    lines[0] = ordered_json::parse(lines[0]).dump(1);
    lines[0].erase(std::remove(lines[0].begin(), lines[0].end(), '\n'), lines[0].end());
    write_file(log_path_, join_lines(lines));
    expect_bad("audit.jsonl line 1: not in canonical form");
}

TEST_F(AuditLogTest, DeletedLineIsReportedWhereTheGapIs) {
    auto log = open_log();
    for (int i = 0; i < 5; ++i) append(log, record(AuditEvent::Queued));
    auto lines = split_lines(read_file(log_path_));
    lines.erase(lines.begin() + 2);
    write_file(log_path_, join_lines(lines));
    expect_bad("audit.jsonl line 3: seq 4, expected 3");
}

TEST_F(AuditLogTest, DeletedHeadIsReported) {
    auto log = open_log();
    for (int i = 0; i < 3; ++i) append(log, record(AuditEvent::Queued));
    auto lines = split_lines(read_file(log_path_));
    lines.erase(lines.begin());
    write_file(log_path_, join_lines(lines));
    expect_bad("audit.jsonl line 1: the chain does not start at seq 1");
}

TEST_F(AuditLogTest, CorruptLastLineFailsClosed) {
    auto log = open_log();
    append(log, record(AuditEvent::Queued));
    append_file(log_path_, "this is not a record\n");
    auto appended = log.append(record(AuditEvent::Queued));
    ASSERT_FALSE(appended.ok());
    EXPECT_NE(appended.error().message.find("not an audit record"), std::string::npos)
        << appended.error().message;
}

// --- concurrency ------------------------------------------------------------

// Each child opens its own AuditLog (as separate drains do) and appends.
void run_children(const std::string& dir, int children, int per_child, std::uint64_t rotate_bytes,
                  bool open_before_fork) {
    std::optional<AuditLog> shared;
    if (open_before_fork) {
        auto log = AuditLog::open(dir, rotate_bytes);
        ASSERT_TRUE(log.ok()) << log.error().message;
        shared.emplace(std::move(log).value());
    }
    std::vector<pid_t> pids;
    for (int c = 0; c < children; ++c) {
        const pid_t pid = ::fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            auto own = open_before_fork ? hb::Result<AuditLog>(std::move(*shared))
                                        : AuditLog::open(dir, rotate_bytes);
            if (!own.ok()) ::_exit(2);
            for (int i = 0; i < per_child; ++i) {
                AuditRecord r = record(AuditEvent::Queued,
                                       "child-" + std::to_string(c) + "-" + std::to_string(i));
                if (!own->append(r).ok()) ::_exit(3);
            }
            ::_exit(0);
        }
        pids.push_back(pid);
    }
    for (pid_t pid : pids) {
        int status = 0;
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(WIFEXITED(status));
        EXPECT_EQ(WEXITSTATUS(status), 0);
    }
}

// Every line of every file, oldest first, parsed.
std::vector<ordered_json> all_records(const std::string& dir) {
    std::vector<ordered_json> out;
    auto files = hb::admin::audit_log_files(dir);
    EXPECT_TRUE(files.ok()) << files.error().message;
    if (!files.ok()) return out;
    for (const auto& name : *files) {
        for (const auto& line : split_lines(read_file(dir + "/" + name)))
            out.push_back(ordered_json::parse(line));
    }
    return out;
}

void expect_every_child_line_once(const std::vector<ordered_json>& records, int children,
                                  int per_child) {
    std::set<std::string> requests;
    for (std::size_t i = 0; i < records.size(); ++i) {
        EXPECT_EQ(records[i]["seq"], i + 1);
        requests.insert(records[i]["request"].get<std::string>());
    }
    EXPECT_EQ(records.size(), static_cast<std::size_t>(children * per_child));
    EXPECT_EQ(requests.size(), static_cast<std::size_t>(children * per_child));
}

TEST_F(AuditLogTest, ConcurrentAppendsFromEightProcessesKeepTheChain) {
    run_children(dir_, 8, 200, hb::common::kAuditRotateBytes, false);
    expect_verifies(1600);
    expect_every_child_line_once(all_records(dir_), 8, 200);
}

TEST_F(AuditLogTest, ALogOpenedBeforeForkStillExcludesAcrossProcesses) {
    // A forked child shares the parent's open file description, and with it
    // the flock: the log must reopen in the child for the lock to work.
    run_children(dir_, 4, 200, hb::common::kAuditRotateBytes, true);
    expect_verifies(800);
    expect_every_child_line_once(all_records(dir_), 4, 200);
}

TEST_F(AuditLogTest, ConcurrentAppendsAcrossRotationsKeepTheChain) {
    run_children(dir_, 8, 200, 96 * 1024, false);
    EXPECT_TRUE(std::filesystem::exists(dir_ + "/audit-000003.jsonl"));
    expect_verifies(1600);
    expect_every_child_line_once(all_records(dir_), 8, 200);
}

// --- torn lines -------------------------------------------------------------

TEST_F(AuditLogTest, TornLastLineIsRecoveredAndVerifies) {
    auto log = open_log();
    append(log, record(AuditEvent::Queued));
    append(log, record(AuditEvent::Started));
    const auto before = split_lines(read_file(log_path_));
    const std::string last_hash = ordered_json::parse(before[1])["hash"];
    const std::string fragment = before[1].substr(0, 37);  // a crash mid-write
    append_file(log_path_, fragment);
    expect_bad("audit.jsonl line 3: torn line of 37 bytes");

    append(log, record(AuditEvent::Succeeded));
    const auto lines = split_lines(read_file(log_path_));
    ASSERT_EQ(lines.size(), 5u);
    EXPECT_EQ(lines[2], fragment);  // kept as evidence, on a line of its own
    const auto recovered = ordered_json::parse(lines[3]);
    EXPECT_EQ(recovered["event"], "recovered");
    EXPECT_EQ(recovered["reason"], "torn line of 37 bytes");
    EXPECT_EQ(recovered["seq"], 3);
    EXPECT_EQ(recovered["prev"], last_hash);
    const auto next = ordered_json::parse(lines[4]);
    EXPECT_EQ(next["seq"], 4);
    EXPECT_EQ(next["event"], "succeeded");
    EXPECT_EQ(next["prev"], recovered["hash"]);
    expect_verifies(4, 1);
}

TEST_F(AuditLogTest, TornLineThatIsACompleteRecordIsStillRecovered) {
    // The crash cut only the newline: the fragment parses, but the writer
    // after it must not chain onto a line it cannot know was complete.
    auto log = open_log();
    append(log, record(AuditEvent::Queued));
    const std::string text = read_file(log_path_);
    append(log, record(AuditEvent::Queued));
    const std::string second = split_lines(read_file(log_path_))[1];
    write_file(log_path_, text + second);
    append(log, record(AuditEvent::Denied));
    const auto lines = split_lines(read_file(log_path_));
    ASSERT_EQ(lines.size(), 4u);
    EXPECT_EQ(ordered_json::parse(lines[2])["reason"],
              "torn line of " + std::to_string(second.size()) + " bytes");
    expect_verifies(3, 1);
}

TEST_F(AuditLogTest, FileWithOnlyATornFragmentStartsTheChain) {
    write_file(log_path_, "{\"seq\":1,\"ts\":\"20");
    auto log = open_log();
    append(log, record(AuditEvent::Queued));
    const auto lines = split_lines(read_file(log_path_));
    ASSERT_EQ(lines.size(), 3u);
    const auto recovered = ordered_json::parse(lines[1]);
    EXPECT_EQ(recovered["seq"], 1);
    EXPECT_EQ(recovered["prev"], kZero);
    EXPECT_EQ(recovered["reason"], "torn line of 17 bytes");
    expect_verifies(2, 1);
}

TEST_F(AuditLogTest, TornFragmentAnywhereElseFailsVerify) {
    auto log = open_log();
    for (int i = 0; i < 3; ++i) append(log, record(AuditEvent::Queued));
    auto lines = split_lines(read_file(log_path_));
    auto with_fragment = lines;
    with_fragment.insert(with_fragment.begin() + 1, lines[1].substr(0, 20));
    write_file(log_path_, join_lines(with_fragment));
    expect_bad("audit.jsonl line 2: not valid JSON");
}

TEST_F(AuditLogTest, RecoveredEventWithTheWrongLengthDoesNotExcuseAFragment) {
    auto log = open_log();
    append(log, record(AuditEvent::Queued));
    append_file(log_path_, "{\"seq\":2,\"ts");
    append(log, record(AuditEvent::Queued));
    // Lengthen the fragment after the fact: the recovered event no longer
    // matches it, so the fragment is just a bad line.
    auto lines = split_lines(read_file(log_path_));
    ASSERT_EQ(lines.size(), 4u);
    lines[1] += "X";
    write_file(log_path_, join_lines(lines));
    expect_bad("audit.jsonl line 2: not valid JSON");
}

TEST_F(AuditLogTest, VerifyWaitsForAnAppendInProgress) {
    auto log = open_log();
    append(log, record(AuditEvent::Queued));
    append(log, record(AuditEvent::Started));
    const std::string text = read_file(log_path_);
    const std::size_t cut = text.find('\n') + 21;
    write_file(log_path_, text.substr(0, cut));  // the second line half-written...
    const int fd = ::open(log_path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::flock(fd, LOCK_EX), 0);  // ...by a writer holding the lock
    std::optional<hb::admin::AuditVerifyReport> report;
    std::thread verifier([&] {
        auto r = verify_audit_log(dir_);
        if (r.ok()) report = *r;
    });
    // Give an unlocked verify time to read the half line (it must not).
    ::usleep(100 * 1000);
    const std::string rest = text.substr(cut);
    ASSERT_EQ(::write(fd, rest.data(), rest.size()), static_cast<ssize_t>(rest.size()));
    ::flock(fd, LOCK_UN);
    ::close(fd);
    verifier.join();
    ASSERT_TRUE(report.has_value());
    EXPECT_FALSE(report->first_bad.has_value()) << *report->first_bad;
    EXPECT_EQ(report->lines, 2u);
}

// --- rotation ---------------------------------------------------------------

TEST_F(AuditLogTest, RotationRunsTheChainAcrossFiles) {
    auto log = open_log(2000);
    for (int i = 0; i < 30; ++i) append(log, full_record());
    // Segments keep their names: audit.jsonl is still the first one.
    const std::string seg2 = dir_ + "/audit-000002.jsonl";
    const std::string seg3 = dir_ + "/audit-000003.jsonl";
    ASSERT_TRUE(std::filesystem::exists(seg3));
    ASSERT_FALSE(std::filesystem::exists(dir_ + "/audit.jsonl.1"));  // nothing renamed
    struct stat st {};
    ASSERT_EQ(::stat(seg2.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600u);
    // The first line of a new segment continues the one before.
    const auto first = split_lines(read_file(log_path_));
    const auto second = split_lines(read_file(seg2));
    const auto last_first = ordered_json::parse(first.back());
    const auto first_second = ordered_json::parse(second.front());
    EXPECT_EQ(first_second["prev"], last_first["hash"]);
    EXPECT_EQ(first_second["seq"], last_first["seq"].get<std::uint64_t>() + 1);
    EXPECT_EQ(ordered_json::parse(first.front())["seq"], 1);
    expect_verifies(30);
    // A segment is closed only once it reached the threshold.
    EXPECT_GE(std::filesystem::file_size(log_path_), 2000u);
}

TEST_F(AuditLogTest, RotationDropsNothingAndVerifiesFromTheFirstEvent) {
    auto log = open_log(600);  // about two lines a segment
    for (int i = 0; i < 40; ++i) append(log, full_record());
    auto files = hb::admin::audit_log_files(dir_);
    ASSERT_TRUE(files.ok());
    EXPECT_GE(files->size(), 15u);
    EXPECT_EQ(files->front(), "audit.jsonl");
    const auto records = all_records(dir_);
    ASSERT_EQ(records.size(), 40u);  // every line kept
    EXPECT_EQ(records.front()["seq"], 1);
    EXPECT_EQ(records.back()["seq"], 40);
    expect_verifies(40);
}

TEST_F(AuditLogTest, InstanceOpenedBeforeRotationAppendsToTheNewFile) {
    auto first = open_log(2000);
    auto second = open_log(2000);
    append(second, full_record());
    const std::string seg2 = dir_ + "/audit-000002.jsonl";
    // The append that rotates writes its record into the fresh segment.
    while (!std::filesystem::exists(seg2)) append(first, full_record());
    const auto sealed_size = std::filesystem::file_size(log_path_);
    append(second, record(AuditEvent::Denied));
    EXPECT_EQ(std::filesystem::file_size(log_path_), sealed_size);
    const auto current = split_lines(read_file(seg2));
    ASSERT_EQ(current.size(), 2u);
    EXPECT_EQ(ordered_json::parse(current[1])["event"], "denied");
    auto report = verify();
    EXPECT_FALSE(report.first_bad.has_value()) << *report.first_bad;
    EXPECT_EQ(report.lines, all_records(dir_).size());
}

TEST_F(AuditLogTest, InstanceOpenedBeforeRotationCanStartTheNewFile) {
    auto first = open_log(2000);
    auto second = open_log(2000);
    const std::string seg2 = dir_ + "/audit-000002.jsonl";
    while (!std::filesystem::exists(seg2)) append(first, full_record());
    // `first` rotated and wrote the first line of the new segment; empty it
    // as if the rotation had just happened, and let `second` start it.
    write_file(seg2, "");
    const auto before = all_records(dir_);
    append(second, record(AuditEvent::Denied));
    const auto current = split_lines(read_file(seg2));
    ASSERT_EQ(current.size(), 1u);
    const auto sealed = split_lines(read_file(log_path_));
    EXPECT_EQ(ordered_json::parse(current[0])["prev"], ordered_json::parse(sealed.back())["hash"]);
    expect_verifies(before.size() + 1);
}

// --- tail -------------------------------------------------------------------

TEST_F(AuditLogTest, TailReturnsWholeLinesOnly) {
    auto log = open_log();
    auto empty = log.tail(1024);
    ASSERT_TRUE(empty.ok()) << empty.error().message;
    EXPECT_EQ(*empty, "");
    for (int i = 0; i < 10; ++i) append(log, full_record());
    const std::string text = read_file(log_path_);
    const auto lines = split_lines(text);

    auto all = log.tail(1 << 20);
    ASSERT_TRUE(all.ok());
    EXPECT_EQ(*all, text);

    const std::size_t line_size = lines[0].size() + 1;
    auto some = log.tail(2 * line_size + line_size / 2);
    ASSERT_TRUE(some.ok());
    EXPECT_EQ(*some, join_lines({lines[8], lines[9]}));
    auto exact = log.tail(lines[8].size() + lines[9].size() + 2);
    ASSERT_TRUE(exact.ok());
    EXPECT_EQ(*exact, join_lines({lines[8], lines[9]}));
    auto tiny = log.tail(10);
    ASSERT_TRUE(tiny.ok());
    EXPECT_EQ(*tiny, "");

    append_file(log_path_, "{\"seq\":11,\"t");  // torn: left out of the mirror
    auto torn = log.tail(1 << 20);
    ASSERT_TRUE(torn.ok());
    EXPECT_EQ(*torn, text);
}

// --- a state dir that cannot be written -----------------------------------

// In a child with its own mount namespace: a tmpfs on the state dir,
// remounted read-only. Root ignores mode bits, so chmod would prove nothing.
// Exit 0: open failed as it must; 77: namespaces unavailable; else failed.
int open_in_read_only_dir(const std::string& dir, bool with_existing_log) {
    if (::unshare(CLONE_NEWNS) != 0) return 77;
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return 77;
    if (::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=1m") != 0) return 77;
    if (with_existing_log) {
        const int fd = ::open((dir + "/audit.jsonl").c_str(), O_CREAT | O_WRONLY, 0600);
        if (fd < 0) return 3;
        ::close(fd);
    }
    if (::mount(nullptr, dir.c_str(), nullptr, MS_REMOUNT | MS_RDONLY, nullptr) != 0) return 77;
    auto log = AuditLog::open(dir);
    if (log.ok()) return 1;
    return log.error().message.find("Read-only file system") != std::string::npos ? 0 : 2;
}

void expect_open_fails_read_only(const std::string& dir, bool with_existing_log) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) ::_exit(open_in_read_only_dir(dir, with_existing_log));
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    if (WEXITSTATUS(status) == 77)
        GTEST_SKIP() << "needs a private mount namespace (unshare(CLONE_NEWNS) as root)";
    EXPECT_EQ(WEXITSTATUS(status), 0) << "1: open succeeded; 2: wrong error; 3: setup failed";
}

TEST_F(AuditLogTest, OpenFailsWhenTheStateDirIsReadOnly) {
    expect_open_fails_read_only(dir_, false);
}

TEST_F(AuditLogTest, OpenFailsWhenTheLogIsOnAReadOnlyMount) {
    expect_open_fails_read_only(dir_, true);
}

}  // namespace
