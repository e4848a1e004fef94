// The integrity gate end to end through the real drain, on a project that is
// a real git repository: an uncommitted change, a committed one, a change
// hidden from git with --skip-worktree or --assume-unchanged, a symlink
// swapped in, a deleted file and a .env pinned absent that appears. Each
// refuses every command-running verb (read-only ones too) with the file named
// and the fix, lets ping through, and allows again once the condition is
// gone.
#include <gtest/gtest.h>

#include <csignal>

#include "common/sha256.hpp"
#include "tests/executor/decide_fixture.hpp"

namespace {

using hb::test::StackFixture;

const std::string kProxy = "conf/proxy.conf";
const std::string kProxyText = "upstream api 127.0.0.1:8080;\n";
const std::string kFix = "; fix: check the change, then run `hostbridge approve`";

std::string short_sha(const std::string& content) {
    return hb::common::sha256_hex(content).substr(0, 12) + "...";
}

std::string changed(const std::string& path, const std::string& now, const std::string& pinned) {
    return "integrity gate: " + path + " changed since it was approved (sha256 " + short_sha(now) +
           ", approved " + short_sha(pinned) + ")" + kFix;
}

class Gate : public ::testing::Test {
  protected:
    void SetUp() override {
        try {
            hb::test::run_program({"git", "--version"});
        } catch (const std::exception&) {
            GTEST_SKIP()
                << "git is not installed: the gate-versus-git cases need a real repository";
        }
        hb::test::fs::create_directories(f.project + "/conf");
        hb::test::write_file(f.project + "/" + kProxy, kProxyText);
        f.git_init();
        f.pin({"stack", kProxy, ".env"});
        stack_text = hb::test::read_file(f.stack);
        // Allowed while nothing changed.
        expect_allowed();
    }

    // A read-only and a mutating verb both run, and ping answers.
    void expect_allowed() {
        const std::size_t before = f.recorded().size();
        const std::string status = f.publish("status");
        const std::string restart = f.publish("restart", "web");
        f.drain();
        EXPECT_EQ(f.state_of(status), "done") << f.response(status)->dump();
        EXPECT_EQ(f.state_of(restart), "done") << f.response(restart)->dump();
        EXPECT_EQ(f.recorded().size(), before + 2);
    }

    // Every command-running verb is refused with `reason`; ping still answers.
    void expect_refused(const std::string& reason) {
        const std::size_t before = f.recorded().size();
        const std::string status = f.publish("status");
        const std::string restart = f.publish("restart", "web");
        const std::string ping = f.publish("ping");
        f.drain();
        for (const auto& name : {status, restart}) {
            SCOPED_TRACE(name);
            const auto r = f.response(name);
            ASSERT_TRUE(r.has_value());
            EXPECT_EQ((*r)["state"], "denied");
            EXPECT_EQ((*r)["reason"], reason);
            EXPECT_EQ(f.audit_reason(name, "denied"), reason);
            EXPECT_TRUE(f.audit_for(name, "started").empty());
        }
        EXPECT_EQ(f.state_of(ping), "done");
        EXPECT_EQ(f.recorded().size(), before);
    }

    void write(const std::string& rel, const std::string& content) const {
        hb::test::write_file(f.project + "/" + rel, content);
    }

    StackFixture f;
    std::string stack_text;
};

TEST_F(Gate, UncommittedChange) {
    const std::string edited = kProxyText + "upstream evil 10.0.0.1:80;\n";
    write(kProxy, edited);
    EXPECT_FALSE(f.git_status().empty());
    expect_refused(changed(kProxy, edited, kProxyText));
    write(kProxy, kProxyText);
    expect_allowed();
}

TEST_F(Gate, CommittedChange) {
    const std::string edited = stack_text + "# harmless looking\n";
    write("stack", edited);
    f.commit("tweak the stack script");
    EXPECT_TRUE(f.git_status().empty());  // git sees nothing to report
    expect_refused(changed("stack", edited, stack_text));
    write("stack", stack_text);
    f.commit("back");
    expect_allowed();
}

TEST_F(Gate, ChangeHiddenWithSkipWorktree) {
    f.git({"update-index", "--skip-worktree", kProxy});
    const std::string edited = "upstream evil 10.0.0.1:80;\n";
    write(kProxy, edited);
    EXPECT_TRUE(f.git_status().empty());  // hidden from git
    expect_refused(changed(kProxy, edited, kProxyText));
    write(kProxy, kProxyText);
    expect_allowed();
}

TEST_F(Gate, ChangeHiddenWithAssumeUnchanged) {
    f.git({"update-index", "--assume-unchanged", "stack"});
    const std::string edited = stack_text + "echo pwned\n";
    write("stack", edited);
    EXPECT_TRUE(f.git_status().empty());  // hidden from git
    expect_refused(changed("stack", edited, stack_text));
    write("stack", stack_text);
    expect_allowed();
}

TEST_F(Gate, SymlinkSwappedInEvenWithIdenticalContent) {
    // A copy outside the project, byte for byte the approved script.
    const std::string outside = f.root + "/stack-copy";
    hb::test::write_file(outside, stack_text);
    hb::test::fs::permissions(outside, hb::test::fs::perms(0755));
    hb::test::fs::remove(f.stack);
    hb::test::fs::create_symlink(outside, f.stack);
    expect_refused(
        "integrity gate: stack is a symlink or lies under one (pinned files must be regular "
        "files)" +
        kFix);
    // A symlinked directory on the path is refused the same way.
    hb::test::fs::remove(f.stack);
    hb::test::fs::copy_file(outside, f.stack);
    hb::test::fs::rename(f.project + "/conf", f.root + "/conf-real");
    hb::test::fs::create_directory_symlink(f.root + "/conf-real", f.project + "/conf");
    expect_refused("integrity gate: " + kProxy +
                   " is a symlink or lies under one (pinned files must be regular files)" + kFix);
    hb::test::fs::remove(f.project + "/conf");
    hb::test::fs::rename(f.root + "/conf-real", f.project + "/conf");
    expect_allowed();
}

TEST_F(Gate, DeletedFile) {
    hb::test::fs::remove(f.project + "/" + kProxy);
    expect_refused("integrity gate: " + kProxy + " is missing" + kFix);
    write(kProxy, kProxyText);
    expect_allowed();
}

TEST_F(Gate, EnvAppearsWherePinnedAbsent) {
    write(".env", "");  // even empty
    expect_refused("integrity gate: .env exists but was pinned as absent" + kFix);
    hb::test::fs::remove(f.project + "/.env");
    expect_allowed();
}

// Issue 45: the agent's `truncate -s 4G .env` (no disk used) was hashed
// whole by the drain for every command request, 30 s each. It is refused,
// named, and never read.
TEST_F(Gate, ASparseEnvPinnedAbsentIsRefusedUnread) {
    write(".env", "");
    hb::test::fs::resize_file(f.project + "/.env", 4ull << 30);
    const hb::test::ReadWatch watch(f.project + "/.env");
    expect_refused("integrity gate: .env exists but was pinned as absent" + kFix);
    EXPECT_FALSE(watch.read_since());
    hb::test::fs::remove(f.project + "/.env");
    expect_allowed();
}

TEST_F(Gate, EveryProblemIsNamed) {
    const std::string edited = "changed\n";
    write(kProxy, edited);
    write(".env", "SECRET=1\n");
    hb::test::fs::remove(f.stack);
    expect_refused("integrity gate: stack is missing; " + kProxy +
                   " changed since it was approved (sha256 " + short_sha(edited) + ", approved " +
                   short_sha(kProxyText) + "); .env exists but was pinned as absent" + kFix);
}

TEST_F(Gate, ARePinWithTheNewContentAllowsAgain) {
    const std::string edited = "upstream api 127.0.0.1:9090;\n";
    write(kProxy, edited);
    expect_refused(changed(kProxy, edited, kProxyText));
    f.pin({"stack", kProxy, ".env"});  // what `hostbridge approve` records
    expect_allowed();
}

// A drain that was already running (lingering, or `watch`) when a person
// approved uses the new pins: approve rewrites bridge.json, not the process.
TEST_F(Gate, AnApprovalReachesADrainThatIsAlreadyRunning) {
    const pid_t pid = f.start("watch");
    const std::string edited = "upstream api 127.0.0.1:9090;\n";
    write(kProxy, edited);
    const std::string refused = f.publish("status");
    ASSERT_TRUE(hb::test::wait_until([&] { return f.state_of(refused) == "denied"; }))
        << f.state_of(refused);
    f.pin({"stack", kProxy, ".env"});  // what `hostbridge approve` records
    const std::string allowed = f.publish("status");
    EXPECT_TRUE(hb::test::wait_until([&] { return f.state_of(allowed) == "done"; }))
        << f.state_of(allowed) << " " << f.audit_reason(allowed, "denied");
    ASSERT_EQ(::kill(pid, SIGTERM), 0);
    const hb::test::Exit e = f.finish(pid, std::chrono::seconds(10));
    EXPECT_EQ(e.code, 0) << e.err;
}

// The same for the compose backend, where approve also rewrites the rendered
// compose file and its pin (admin/commands/approve.cpp): a running drain takes both.
TEST(GateRendered, AnApprovedComposeChangeReachesADrainThatIsAlreadyRunning) {
    hb::test::StackFixture f;
    f.use_compose("services:\n  api:\n    image: x\n");
    const pid_t pid = f.start("watch");
    const std::string before = f.publish("status");
    ASSERT_TRUE(hb::test::wait_until([&] { return f.state_of(before) == "done"; }))
        << f.state_of(before) << " " << f.audit_reason(before, "denied");
    // What approve writes: the new approved and rendered copies, then the pins.
    f.use_compose("services:\n  api:\n    image: y\n");
    const std::string after = f.publish("status");
    EXPECT_TRUE(hb::test::wait_until([&] { return f.state_of(after) == "done"; }))
        << f.state_of(after) << " " << f.audit_reason(after, "denied");
    ASSERT_EQ(::kill(pid, SIGTERM), 0);
    const hb::test::Exit e = f.finish(pid, std::chrono::seconds(10));
    EXPECT_EQ(e.code, 0) << e.err;
}

}  // namespace
