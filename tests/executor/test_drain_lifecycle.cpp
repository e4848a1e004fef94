// Every lifecycle path of docs/PROTOCOL.md, driven through the real
// hostbridge-executor and hostbridge-parser binaries on a temporary spool.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <fstream>

#include "admin/audit/audit_verify.hpp"
#include "common/audit_log.hpp"
#include "executor/drain.hpp"
#include "ipc/sys.hpp"
#include "tests/support/drain_fixture.hpp"

namespace hb::test {
namespace {

void expect_terminal_shape(const json& r) {
    for (const char* key :
         {"state", "request", "verb", "arg", "requested_at", "updated_at", "exit_code", "reason",
          "output", "log", "expires_at", "services", "cursor", "more"}) {
        EXPECT_TRUE(r.contains(key)) << key;
    }
    EXPECT_EQ(r.size(), 14u);
    EXPECT_TRUE(r["expires_at"].is_null());
    EXPECT_TRUE(r["services"].is_null());
    EXPECT_TRUE(r["cursor"].is_null());
    EXPECT_TRUE(r["more"].is_null());
}

TEST(DrainLifecycle, PingIsAnsweredDone) {
    DrainFixture f;
    const std::string body = DrainFixture::body("ping");
    const std::string req = f.publish_as(f.name("ping"), body);
    const Exit e = f.run();
    ASSERT_EQ(e.code, 0) << e.err;
    EXPECT_EQ(e.err, "");
    const auto r = f.response(req);
    ASSERT_TRUE(r);
    expect_terminal_shape(*r);
    EXPECT_EQ((*r)["state"], "done");
    EXPECT_EQ((*r)["request"], req);
    EXPECT_EQ((*r)["verb"], "ping");
    EXPECT_TRUE((*r)["arg"].is_null());
    EXPECT_EQ((*r)["requested_at"], json::parse(body)["requested_at"]);
    EXPECT_EQ((*r)["updated_at"].get<std::string>().size(), 20u);
    EXPECT_TRUE((*r)["exit_code"].is_null());
    EXPECT_TRUE((*r)["reason"].is_null());
    EXPECT_EQ((*r)["output"], "pong");
    EXPECT_TRUE((*r)["log"].is_null());
    EXPECT_EQ(f.list("archive"), std::vector<std::string>{req});
    EXPECT_EQ(f.count("requests"), 0u);
    EXPECT_EQ(f.count("processing"), 0u);
    EXPECT_EQ(f.audit_for(req, "queued").size(), 1u);
    EXPECT_EQ(f.audit_for(req, "succeeded").size(), 1u);
}

// Each answer replaces its `queued` acknowledgement by rename
// (executor/spool.cpp): a burst leaves every answer in place and nothing in
// tmp/.
TEST(DrainLifecycle, ABurstIsAnsweredAndLeavesNothingInTmp) {
    DrainFixture f;
    std::vector<std::string> requests;
    // Twice: the second drain also replaces the diagnostics mirror.
    for (int round = 0; round < 2; ++round) {
        for (int i = 0; i < 40; ++i) requests.push_back(f.publish("ping"));
        const Exit e = f.run();
        ASSERT_EQ(e.code, 0) << e.err;
        for (const std::string& req : requests) EXPECT_EQ(f.state_of(req), "done") << req;
        EXPECT_EQ(f.count("responses"), requests.size());
        EXPECT_EQ(f.list("tmp"), std::vector<std::string>{});
    }
}

TEST(DrainLifecycle, ArgOutsideTheEnumerationIsDeniedWithVerbAndNullArg) {
    DrainFixture f;
    const std::string req = f.publish("logs", "nosuch");
    ASSERT_EQ(f.run().code, 0);
    const auto r = f.response(req);
    ASSERT_TRUE(r);
    expect_terminal_shape(*r);
    EXPECT_EQ((*r)["state"], "denied");
    EXPECT_EQ((*r)["verb"], "logs");
    EXPECT_TRUE((*r)["arg"].is_null());
    EXPECT_FALSE((*r)["reason"].get<std::string>().empty());
    EXPECT_EQ(f.list("archive"), std::vector<std::string>{req});
    ASSERT_EQ(f.audit_for(req, "denied").size(), 1u);
    EXPECT_EQ(f.audit_for(req, "denied")[0]["verb"], "logs");
}

TEST(DrainLifecycle, AcceptedVerbKeepsItsArg) {
    // Whatever the decide step concludes (here: the stack script does not
    // exist), the response names the verb and the arg the parser recognised.
    DrainFixture f;
    const std::string req = f.publish("restart", "api");
    ASSERT_EQ(f.run().code, 0);
    const auto r = f.response(req);
    ASSERT_TRUE(r);
    EXPECT_EQ((*r)["verb"], "restart");
    EXPECT_EQ((*r)["arg"], "api");
    EXPECT_NE((*r)["state"], "queued");
}

TEST(DrainLifecycle, OldRequestIsExpiredAndAFutureOneDenied) {
    DrainFixture f;
    const auto body_at = [](std::time_t t) {
        return json({{"verb", "ping"}, {"requested_at", DrainFixture::utc(t, true)}}).dump();
    };
    const std::time_t now = std::time(nullptr);
    const std::string old = f.publish_as(f.name("ping"), body_at(now - 3600));
    const std::string future = f.publish_as(f.name("ping"), body_at(now + 3600));
    ASSERT_EQ(f.run().code, 0);
    const auto r_old = f.response(old);
    ASSERT_TRUE(r_old);
    EXPECT_EQ((*r_old)["state"], "expired");
    EXPECT_EQ((*r_old)["verb"], "ping");
    EXPECT_TRUE((*r_old)["output"].is_null());
    EXPECT_EQ(f.audit_for(old, "expired").size(), 1u);
    const auto r_future = f.response(future);
    ASSERT_TRUE(r_future);
    EXPECT_EQ((*r_future)["state"], "denied");
    EXPECT_EQ(f.count("archive"), 2u);
}

TEST(DrainLifecycle, EmptyBodyIsDeniedAndArchived) {
    DrainFixture f;
    const std::string req = f.publish_as(f.name("ping"), "");
    ASSERT_EQ(f.run().code, 0);
    const auto r = f.response(req);
    ASSERT_TRUE(r);
    EXPECT_EQ((*r)["state"], "denied");
    EXPECT_EQ((*r)["reason"], "empty request body");
    EXPECT_TRUE((*r)["verb"].is_null());
    EXPECT_EQ(f.list("archive"), std::vector<std::string>{req});
    EXPECT_EQ(f.count("quarantine"), 0u);
}

TEST(DrainLifecycle, MalformedBodiesAreQuarantinedWithADeniedResponse) {
    DrainFixture f;
    const std::string now = DrainFixture::now_rfc3339();
    const std::vector<std::string> bodies = {
        "not json",
        R"({"verb":"ping","verb":"ping","requested_at":")" + now + "\"}",
        R"({"verb":"ping","requested_at":")" + now + "\"} trailing",
        "[1,2]",
        "\xEF\xBB\xBF{\"verb\":\"ping\",\"requested_at\":\"" + now + "\"}",
        std::string("{\"verb\":\"ping\"\0}", 16),
    };
    std::vector<std::string> names;
    for (const auto& body : bodies) names.push_back(f.publish_as(f.name("ping"), body));
    ASSERT_EQ(f.run().code, 0);
    for (const auto& req : names) {
        const auto r = f.response(req);
        ASSERT_TRUE(r) << req;
        EXPECT_EQ((*r)["state"], "denied") << req;
        EXPECT_TRUE((*r)["verb"].is_null());
        EXPECT_TRUE((*r)["arg"].is_null());
        EXPECT_TRUE(fs::exists(f.path("quarantine", req))) << req;
        const auto q = f.audit_for(req, "quarantined");
        ASSERT_EQ(q.size(), 1u) << req;
        // The evidence the agent cannot delete: size and SHA-256.
        EXPECT_NE(q[0]["reason"].get<std::string>().find("sha256 "), std::string::npos);
        EXPECT_NE(q[0]["reason"].get<std::string>().find(" bytes"), std::string::npos);
    }
    EXPECT_EQ(f.count("archive"), 0u);
    EXPECT_EQ(f.count("requests"), 0u);
}

TEST(DrainLifecycle, OffSchemaNamesAreQuarantinedWithoutAResponse) {
    DrainFixture f;
    const std::vector<std::string> names = {
        "hello.json", "20261129T080000Z-shell:web-0123456789abcdef.json",
        "20261129T080000Z-ping-0123456789ABCDEF.json", std::string("bad\x01\xff-name")};
    for (const auto& n : names) f.publish_as(n, DrainFixture::body("ping"));
    ASSERT_EQ(f.run().code, 0);
    EXPECT_EQ(f.count("responses"), 0u);
    EXPECT_EQ(f.count("requests"), 0u);
    for (const auto& n : names) EXPECT_TRUE(fs::exists(f.path("quarantine", n))) << n;
    // Non-printable bytes are logged escaped, so the log stays valid JSON.
    EXPECT_EQ(f.audit_for("bad\\x01\\xff-name", "quarantined").size(), 1u);
}

TEST(DrainLifecycle, QuarantineNeverOverwritesAnEarlierFile) {
    DrainFixture f;
    write_file(f.path("quarantine", "bad-name"), "first");
    write_file(f.path("quarantine", "bad-name.1"), "second");
    f.publish_as("bad-name", "third");
    ASSERT_EQ(f.run().code, 0);
    EXPECT_EQ(read_file(f.path("quarantine", "bad-name")), "first");
    EXPECT_EQ(read_file(f.path("quarantine", "bad-name.1")), "second");
    EXPECT_EQ(read_file(f.path("quarantine", "bad-name.2")), "third");
}

TEST(DrainLifecycle, ReplayIsQuarantinedAuditedAndNotAnswered) {
    DrainFixture f;
    const std::string req = f.publish("ping");
    ASSERT_EQ(f.run().code, 0);
    const std::string first_response = read_file(f.path("responses", req + ".response.json"));
    f.publish_as(req, DrainFixture::body("ping"));
    ASSERT_EQ(f.run().code, 0);
    EXPECT_EQ(read_file(f.path("responses", req + ".response.json")), first_response);
    EXPECT_TRUE(fs::exists(f.path("quarantine", req)));
    EXPECT_TRUE(fs::exists(f.path("archive", req)));
    const auto denied = f.audit_for(req, "denied");
    ASSERT_EQ(denied.size(), 1u);
    EXPECT_EQ(denied[0]["reason"].get<std::string>().rfind("request name already used", 0), 0u);
    EXPECT_EQ(f.audit_for(req, "queued").size(), 1u);  // the replay is not acknowledged
    EXPECT_EQ(f.audit_for(req, "succeeded").size(), 1u);
}

TEST(DrainLifecycle, LeftoverInProcessingIsFailedInterruptedAndNeverRun) {
    DrainFixture f;
    const std::string req = f.name("ping");
    write_file(f.path("processing", req), DrainFixture::body("ping"));
    const std::string next = f.publish("ping");
    ASSERT_EQ(f.run().code, 0);
    const auto r = f.response(req);
    ASSERT_TRUE(r);
    EXPECT_EQ((*r)["state"], "failed");
    EXPECT_EQ((*r)["reason"], "interrupted");
    EXPECT_TRUE(fs::exists(f.path("archive", req)));
    EXPECT_EQ(f.count("processing"), 0u);
    EXPECT_EQ(f.audit_for(req, "interrupted").size(), 1u);
    EXPECT_EQ(f.audit_for(req, "succeeded").size(), 0u);
    EXPECT_EQ(f.state_of(next), "done");
}

// A refusal must leave the spool exactly as it was.
void expect_untouched(const DrainFixture& f, const std::string& req) {
    EXPECT_EQ(f.list("requests"), std::vector<std::string>{req});
    for (const char* sub :
         {"tmp", "processing", "responses", "archive", "quarantine", "diagnostics"}) {
        EXPECT_EQ(f.count(sub), 0u) << sub;
    }
}

TEST(DrainLifecycle, RootWithoutAllowRootIsRefusedAndTouchesNothing) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to test the root refusal";
    DrainFixture f;
    const std::string req = f.publish("ping");
    SpawnOptions no_flag;
    no_flag.allow_root_flag = false;
    const Exit e = f.run("drain", no_flag);
    EXPECT_EQ(e.code, 1);
    EXPECT_EQ(lines_of(e.err), 1u) << e.err;
    EXPECT_NE(e.err.find("--allow-root"), std::string::npos) << e.err;
    expect_untouched(f, req);
    EXPECT_FALSE(fs::exists(f.state + "/audit.jsonl"));
    EXPECT_EQ(f.run("watch", no_flag).code, 1);
    expect_untouched(f, req);
}

TEST(DrainLifecycle, RootNeedsAllowRootInTheConfigToo) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to test the root refusal";
    DrainFixture f;
    f.config["allow_root"] = false;
    f.write_config();
    const std::string req = f.publish("ping");
    const Exit e = f.run();
    EXPECT_EQ(e.code, 1);
    EXPECT_EQ(lines_of(e.err), 1u) << e.err;
    EXPECT_NE(e.err.find("allow_root"), std::string::npos) << e.err;
    expect_untouched(f, req);
}

TEST(DrainLifecycle, BadConfigIsRefusedNamingTheKey) {
    DrainFixture f;
    f.config["surprise"] = 1;
    f.write_config();
    const std::string req = f.publish("ping");
    const Exit e = f.run();
    EXPECT_EQ(e.code, 1);
    EXPECT_EQ(lines_of(e.err), 1u) << e.err;
    EXPECT_NE(e.err.find("surprise"), std::string::npos) << e.err;
    expect_untouched(f, req);
}

TEST(DrainLifecycle, UsageErrorsExit2) {
    DrainFixture f;
    const std::vector<std::vector<std::string>> bad = {
        {},
        {"drain"},
        {"drain", "--config"},
        {"frob", "--config", f.config_path},
        {"watch", "--config", f.config_path, "--linger", "3"},
        {"drain", "--config", f.config_path, "--linger", "soon"},
        {"drain", "--config", f.config_path, "--what"}};
    for (const auto& args : bad) {
        Command command;
        command.argv = {HB_EXECUTOR_BIN};
        command.argv.insert(command.argv.end(), args.begin(), args.end());
        EXPECT_EQ(run(command), 2) << args.size();
    }
}

TEST(DrainLifecycle, MissingSpoolSubdirectoryIsRefused) {
    DrainFixture f;
    const std::string req = f.publish("ping");
    fs::remove(f.dir("diagnostics"));
    const Exit e = f.run();
    EXPECT_EQ(e.code, 1);
    EXPECT_EQ(lines_of(e.err), 1u) << e.err;
    EXPECT_EQ(f.list("requests"), std::vector<std::string>{req});
    EXPECT_EQ(f.count("responses"), 0u);
}

TEST(DrainLifecycle, UnwritableAuditLogIsRefusedBeforeTouchingTheSpool) {
    DrainFixture f;
    fs::create_directories(f.state + "/audit.jsonl");  // cannot be opened for writing
    const std::string req = f.publish("ping");
    const Exit e = f.run();
    EXPECT_EQ(e.code, 1);
    EXPECT_EQ(lines_of(e.err), 1u) << e.err;
    EXPECT_NE(e.err.find("audit"), std::string::npos) << e.err;
    expect_untouched(f, req);
}

TEST(DrainLifecycle, FullAuditLogFailsClosed) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to mount a small tmpfs";
    DrainFixture f;
    if (::mount("tmpfs", f.state.c_str(), "tmpfs", 0, "size=64k") != 0) {
        GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
    }
    struct Unmount {
        std::string path;
        ~Unmount() { ::umount2(path.c_str(), MNT_DETACH); }
    } unmount{f.state};
    {
        // Fill it: the log can be opened, but no line can be appended.
        std::ofstream fill(f.state + "/fill", std::ios::binary);
        const std::string block(4096, 'x');
        for (int i = 0; i < 64 && fill; ++i) fill << block << std::flush;
    }
    const std::string req = f.publish("ping");
    const Exit e = f.run();
    EXPECT_EQ(e.code, 1);
    EXPECT_EQ(lines_of(e.err), 1u) << e.err;
    EXPECT_NE(e.err.find("audit log"), std::string::npos) << e.err;
    // Nothing was taken up: the request waits, acknowledged at most.
    EXPECT_EQ(f.list("requests"), std::vector<std::string>{req});
    EXPECT_EQ(f.count("archive"), 0u);
    EXPECT_NE(f.state_of(req), "done");
}

TEST(DrainLifecycle, PublishedFilesAreMode0644WhateverTheUmask) {
    DrainFixture f;
    const std::string req = f.publish("ping");
    SpawnOptions strict;
    strict.umask = 077;
    ASSERT_EQ(f.run("drain", strict).code, 0);
    const auto mode = [](const std::string& p) {
        return fs::status(p).permissions() & fs::perms::mask;
    };
    const auto want = fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                      fs::perms::others_read;
    EXPECT_EQ(mode(f.path("responses", req + ".response.json")), want);
    EXPECT_EQ(mode(f.path("diagnostics", "audit.jsonl")), want);
}

TEST(DrainLifecycle, FileModeAndAgentGidFromTheConfig) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to chgrp to another group";
    DrainFixture f;
    f.config["file_mode"] = "0640";
    f.config["agent_gid"] = 65534;
    f.write_config();
    const std::string req = f.publish("ping");
    ASSERT_EQ(f.run().code, 0);
    struct stat st {};
    ASSERT_EQ(::stat(f.path("responses", req + ".response.json").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0640u);
    EXPECT_EQ(st.st_gid, 65534u);
}

// A drain run while another drain holds the single-flight lock (a record
// lock, as the executor takes it: executor/drain.cpp).
Exit run_while_locked(DrainFixture& f) {
    const int lock = ::open((f.state + "/drain.lock").c_str(), O_RDWR | O_CREAT, 0600);
    if (lock < 0 || !hb::sys::try_record_lock(lock)) throw std::runtime_error("drain.lock");
    const Exit e = f.run();
    ::close(lock);
    return e;
}

TEST(DrainLifecycle, BusyDrainOnlyAcknowledgesAndNeverOverwritesAnAnswer) {
    DrainFixture f;
    const std::string answered = f.publish("ping");
    const std::string fresh = f.publish("ping");
    const std::string given = R"({"state":"done","request":")" + answered + "\"}";
    write_file(f.path("responses", answered + ".response.json"), given);
    const Exit e = run_while_locked(f);
    EXPECT_EQ(e.code, 0) << e.err;
    EXPECT_EQ(read_file(f.path("responses", answered + ".response.json")), given);
    EXPECT_EQ(f.state_of(fresh), "queued");
    EXPECT_EQ(f.audit_for(fresh, "queued").size(), 1u);
    EXPECT_EQ(f.audit_for(answered, "queued").size(), 0u);
    EXPECT_EQ(f.count("requests"), 2u);  // the lock holder's work
}

// A flood gets kAcknowledgeAtMost acknowledgements, the first names in
// name order; the lock holder answers the rest without one.
TEST(DrainLifecycle, AFloodIsAcknowledgedOnlyUpToTheBound) {
    DrainFixture f;
    std::vector<std::string> names;
    for (std::size_t i = 0; i < exec::kAcknowledgeAtMost + 20; ++i)
        names.push_back(f.publish("ping"));
    const Exit busy = run_while_locked(f);
    ASSERT_EQ(busy.code, 0) << busy.err;
    for (std::size_t i = 0; i < names.size(); ++i) {
        EXPECT_EQ(f.state_of(names[i]), i < exec::kAcknowledgeAtMost ? "queued" : "") << i;
    }
    ASSERT_EQ(f.run().code, 0);
    for (const std::string& name : names) EXPECT_EQ(f.state_of(name), "done") << name;
}

TEST(DrainLifecycle, RetentionPrunesOnlyOldFilesAndSymlinks) {
    DrainFixture f;
    const auto age = [](const std::string& p, int days) {
        const std::time_t t = std::time(nullptr) - days * 86400 - 60;
        const timeval times[2] = {{t, 0}, {t, 0}};
        ASSERT_EQ(::lutimes(p.c_str(), times), 0) << p;
    };
    const std::string outside = f.root + "/outside";
    write_file(outside, "keep me");
    write_file(f.path("archive", "old.json"), "x");
    age(f.path("archive", "old.json"), 8);
    write_file(f.path("archive", "recent.json"), "x");
    age(f.path("archive", "recent.json"), 6);
    fs::create_symlink(outside, f.path("archive", "old-link"));
    age(f.path("archive", "old-link"), 8);
    fs::create_directories(f.path("archive", "old-dir/inner"));
    write_file(f.path("archive", "old-dir/inner/file"), "x");
    age(f.path("archive", "old-dir/inner/file"), 30);
    age(f.path("archive", "old-dir"), 30);
    write_file(f.path("responses", "old.response.json"), "x");
    age(f.path("responses", "old.response.json"), 2);
    write_file(f.path("responses", "new.response.json"), "x");
    write_file(f.path("quarantine", "ancient"), "x");
    age(f.path("quarantine", "ancient"), 365);
    // tmp/: what a crashed drain left (its own prefix) goes after a day;
    // the agent's own files there are the agent's.
    write_file(f.path("tmp", ".hb-0123456789abcdef"), "x");
    age(f.path("tmp", ".hb-0123456789abcdef"), 1);
    write_file(f.path("tmp", ".hb-fedcba9876543210"), "x");
    write_file(f.path("tmp", "agent-draft"), "x");
    age(f.path("tmp", "agent-draft"), 30);
    fs::create_symlink(outside, f.path("tmp", ".hb-link"));
    age(f.path("tmp", ".hb-link"), 2);
    ASSERT_EQ(f.run().code, 0);
    EXPECT_FALSE(fs::exists(f.path("tmp", ".hb-0123456789abcdef")));
    EXPECT_TRUE(fs::exists(f.path("tmp", ".hb-fedcba9876543210")));
    EXPECT_TRUE(fs::exists(f.path("tmp", "agent-draft")));
    EXPECT_FALSE(fs::is_symlink(f.path("tmp", ".hb-link")));
    EXPECT_FALSE(fs::exists(f.path("archive", "old.json")));
    EXPECT_TRUE(fs::exists(f.path("archive", "recent.json")));
    EXPECT_FALSE(fs::is_symlink(f.path("archive", "old-link")));
    EXPECT_EQ(read_file(outside), "keep me");
    EXPECT_TRUE(fs::exists(f.path("archive", "old-dir/inner/file")));
    EXPECT_FALSE(fs::exists(f.path("responses", "old.response.json")));
    EXPECT_TRUE(fs::exists(f.path("responses", "new.response.json")));
    EXPECT_TRUE(fs::exists(f.path("quarantine", "ancient")));  // never pruned
}

TEST(DrainLifecycle, DiagnosticsMirrorTheAuditLogAndTheChainVerifies) {
    DrainFixture f;
    for (int i = 0; i < 5; ++i) f.publish("ping");
    f.publish_as("odd-name", "x");
    ASSERT_EQ(f.run().code, 0);
    const std::string log = read_file(f.state + "/audit.jsonl");
    EXPECT_EQ(read_file(f.path("diagnostics", "audit.jsonl")), log);
    auto report = hb::admin::verify_audit_log(f.state);
    ASSERT_TRUE(report) << report.error().message;
    EXPECT_FALSE(report->first_bad) << *report->first_bad;
    EXPECT_EQ(report->lines, 11u);  // 5 queued + 5 succeeded + 1 quarantined

    // A drain with nothing to do leaves a current mirror alone; the next
    // event refreshes it.
    const auto inode = [&] {
        struct stat st {};
        ::stat(f.path("diagnostics", "audit.jsonl").c_str(), &st);
        return st.st_ino;
    };
    const auto before = inode();
    ASSERT_EQ(f.run().code, 0);
    EXPECT_EQ(inode(), before);
    f.publish("ping");
    ASSERT_EQ(f.run().code, 0);
    EXPECT_NE(inode(), before);
    EXPECT_EQ(read_file(f.path("diagnostics", "audit.jsonl")), read_file(f.state + "/audit.jsonl"));
}

TEST(DrainLifecycle, TimeBudgetLeavesLongRequestsForTheNextDrain) {
    DrainFixture f(HB_FAKE_PARSER_DIR "/fake-parser-nonce");
    // A budget of 2 s with 2 s verb timeouts: after a 2 s parser hang, no
    // request that could run a command fits any more.
    f.config["drain"]["time_budget_seconds"] = 2;
    f.config["timeouts"] = {{"default", 2}, {"rebuild", 2}};
    f.write_config();
    const std::string slow = f.publish("ping", "", "5eed");
    const std::string later = f.publish("status");
    const Exit e = f.run();
    EXPECT_EQ(e.code, 0) << e.err;
    EXPECT_EQ(f.state_of(slow), "denied");
    EXPECT_EQ(f.list("requests"), std::vector<std::string>{later});
    EXPECT_EQ(f.state_of(later), "queued");
    ASSERT_EQ(f.run().code, 0);  // a fresh drain has a fresh budget
    EXPECT_EQ(f.count("requests"), 0u);
    // The fake parser calls everything ping: the executor sees the name says
    // status and refuses to believe it.
    EXPECT_EQ(f.response(later).value()["reason"], "parser failure");
}

// The agent dates the names: a backlog dated to sort first must not keep a
// request published after the drain started waiting for all of it, and
// what arrives meanwhile takes turns with the backlog. A nonce starting
// with 5eed hangs the parser (2 s), longer than the drain waits between
// looks at requests/ (executor/drain.cpp, kLookEvery).
TEST(DrainLifecycle, RequestsPublishedMidDrainTakeTurnsWithTheBacklog) {
    DrainFixture f(HB_FAKE_PARSER_DIR "/fake-parser-nonce");
    const std::string slow = f.publish("ping", "", "5eed");
    const std::string waiting = f.publish("ping");
    const pid_t pid = f.start();
    ASSERT_TRUE(wait_until([&] { return f.list("processing") == std::vector<std::string>{slow}; }));
    // Dated after the backlog, in this order.
    const std::string fresh_slow = f.publish("ping", "", "5eed");
    const std::string fresh = f.publish("ping");
    const Exit e = f.finish(pid);
    ASSERT_EQ(e.code, 0) << e.err;
    std::vector<std::string> order;
    for (const json& line : f.audit()) {
        if (line["event"] == "succeeded" || line["event"] == "denied")
            order.push_back(line["request"]);
    }
    EXPECT_EQ(order, (std::vector<std::string>{slow, fresh_slow, waiting, fresh}));
    EXPECT_EQ(f.response(fresh_slow).value()["reason"], "parser failure");
}

}  // namespace
}  // namespace hb::test
