#include "engines/podman/engine_relay.hpp"
#include "executor/runner.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <thread>

#include "tests/support/files.hpp"

namespace hb::exec {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Tests run /bin/sh -c on purpose: only executor/ and common/ must never use a shell.
Argv sh(const std::string& script) {
    return {"/bin/sh", "-c", script};
}

class Runner : public ::testing::Test {
  protected:
    void SetUp() override {
        // Orphans (a killed command's grandchildren) come back to us, so a
        // test can reap them and see how they died.
        ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
        log_ = UniqueFd(::open(t.path("cmd.log").c_str(),
                               O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
        ASSERT_TRUE(log_.valid());
    }
    RunResult run(const Argv& argv, milliseconds timeout = seconds(20),
                  milliseconds grace = milliseconds(300)) {
        return run_command(argv, log_.get(), timeout, grace);
    }
    std::string output() const { return t.read("cmd.log"); }
    std::vector<std::string> output_lines() const {
        std::vector<std::string> lines;
        std::istringstream in(output());
        for (std::string line; std::getline(in, line);) lines.push_back(line);
        return lines;
    }
    // The pid a script printed with `echo $!`, once it shows up in the log.
    pid_t wait_for_printed_pid() const {
        for (int i = 0; i < 500; ++i) {
            const std::string out = output();
            if (!out.empty() && out.back() == '\n') return std::stoi(out);
            std::this_thread::sleep_for(milliseconds(10));
        }
        return -1;
    }
    // How an orphaned grandchild ended: its wait status, or -1 if it was
    // still running after a bounded wait (then it is killed).
    static int reap_orphan(pid_t pid) {
        for (int i = 0; i < 500; ++i) {
            int status = 0;
            const pid_t r = ::waitpid(pid, &status, WNOHANG);
            if (r == pid) return status;
            if (r < 0) return -2;  // not our child: it was reaped elsewhere
            std::this_thread::sleep_for(milliseconds(10));
        }
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
        return -1;
    }

    test::TempDir t;
    UniqueFd log_;
};

TEST_F(Runner, ExitCodeIsPropagated) {
    const RunResult r = run(sh("echo hello; echo oops >&2; exit 7"));
    EXPECT_EQ(r.status, RunResult::Status::Exited);
    EXPECT_EQ(r.exit_code, 7);
    EXPECT_EQ(output(), "hello\noops\n");  // stdout and stderr, one log
    EXPECT_GE(r.duration_ms, 0);
}

TEST_F(Runner, ExitZero) {
    const RunResult r = run({"/bin/true"});
    EXPECT_EQ(r.status, RunResult::Status::Exited);
    EXPECT_EQ(r.exit_code, 0);
}

TEST_F(Runner, DeathBySignalIsReported) {
    const RunResult r = run(sh("kill -SEGV $$"));
    EXPECT_EQ(r.status, RunResult::Status::Signaled);
    EXPECT_EQ(r.signal, SIGSEGV);
}

TEST_F(Runner, NonexistentBinaryIsASpawnFailure) {
    const RunResult r = run({"/nonexistent/hostbridge-no-such-binary", "x"});
    EXPECT_EQ(r.status, RunResult::Status::SpawnFailed);
    EXPECT_NE(r.error.find("cannot execute /nonexistent/hostbridge-no-such-binary"),
              std::string::npos)
        << r.error;
    EXPECT_NE(r.error.find("No such file or directory"), std::string::npos) << r.error;
}

TEST_F(Runner, NonExecutableFileIsASpawnFailure) {
    t.write("not-executable", "#!/bin/sh\necho hi\n");
    ::chmod(t.path("not-executable").c_str(), 0644);
    const RunResult r = run({t.path("not-executable")});
    EXPECT_EQ(r.status, RunResult::Status::SpawnFailed);
    EXPECT_NE(r.error.find("Permission denied"), std::string::npos) << r.error;
}

TEST_F(Runner, RelativePathIsRefusedWithoutLookingUpPath) {
    for (const Argv& argv : {Argv{"sh", "-c", "true"}, Argv{"./stack"}, Argv{""}, Argv{}}) {
        const RunResult r = run(argv);
        EXPECT_EQ(r.status, RunResult::Status::SpawnFailed);
        EXPECT_NE(r.error.find("not an absolute path"), std::string::npos) << r.error;
    }
}

TEST_F(Runner, LogMustBeARegularFile) {
    int p[2];
    ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
    UniqueFd rd(p[0]), wr(p[1]);
    const RunResult r = run_command({"/bin/true"}, wr.get(), seconds(5));
    EXPECT_EQ(r.status, RunResult::Status::SpawnFailed);
    EXPECT_NE(r.error.find("not a regular file"), std::string::npos) << r.error;
}

TEST_F(Runner, OnlyFds012AreInheritedStdinIsDevNull) {
    // Leaks waiting to happen: fds without O_CLOEXEC, as a careless caller might hold.
    const int leak1 = ::open("/dev/null", O_RDONLY);
    int leak_pipe[2];
    ASSERT_EQ(::pipe(leak_pipe), 0);
    const int leak_dir = ::open(t.path().c_str(), O_RDONLY | O_DIRECTORY);
    ASSERT_GE(leak1, 3);
    ASSERT_GE(leak_dir, 3);

    const RunResult r = run({HB_TEST_PROBE});
    ::close(leak1);
    ::close(leak_pipe[0]);
    ::close(leak_pipe[1]);
    ::close(leak_dir);
    ASSERT_EQ(r.status, RunResult::Status::Exited) << r.error;
    ASSERT_EQ(r.exit_code, 0);

    std::vector<std::string> fds;
    for (const std::string& line : output_lines()) {
        if (line.rfind("fd ", 0) == 0) fds.push_back(line);
    }
    std::sort(fds.begin(), fds.end());
    const std::string log = t.path("cmd.log");
    EXPECT_EQ(fds,
              (std::vector<std::string>{"fd 0 -> /dev/null", "fd 1 -> " + log, "fd 2 -> " + log}));
}

TEST_F(Runner, SignalsStartCleanAndTheCommandLeadsItsOwnSession) {
    // A drain may block or ignore signals; the command must not inherit that.
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGUSR1);
    ASSERT_EQ(::sigprocmask(SIG_BLOCK, &block, &old), 0);
    struct sigaction ign {
    }, old_int{};
    ign.sa_handler = SIG_IGN;
    ::sigaction(SIGINT, &ign, &old_int);

    const RunResult r = run({HB_TEST_PROBE});
    ::sigprocmask(SIG_SETMASK, &old, nullptr);
    ::sigaction(SIGINT, &old_int, nullptr);
    ASSERT_EQ(r.status, RunResult::Status::Exited) << r.error;

    const auto lines = output_lines();
    EXPECT_NE(std::find(lines.begin(), lines.end(), "SigBlk:\t0000000000000000"), lines.end())
        << output();
    EXPECT_NE(std::find(lines.begin(), lines.end(), "SigIgn:\t0000000000000000"), lines.end())
        << output();
    // sid == pgid == pid: a new session, so the timeout can kill exactly its group.
    const auto ids = std::find_if(lines.begin(), lines.end(),
                                  [](const std::string& l) { return l.rfind("sid ", 0) == 0; });
    ASSERT_NE(ids, lines.end());
    int sid = 0, pgid = 0, pid = 0;
    ASSERT_EQ(std::sscanf(ids->c_str(), "sid %d pgid %d pid %d", &sid, &pgid, &pid), 3);
    EXPECT_EQ(sid, pid);
    EXPECT_EQ(pgid, pid);
}

TEST_F(Runner, EnvironmentIsExactlyTheFixedOne) {
    ::setenv("HB_TEST_SECRET", "must-not-leak", 1);
    ::setenv("HOME", "/tmp/not-the-real-home", 1);
    ::setenv("PATH", "/tmp/evil:/usr/bin", 1);
    ::setenv("XDG_RUNTIME_DIR", "/run/user/4242", 1);
    ::setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/tmp/bus", 1);
    const RunResult r = run({"/usr/bin/env"});
    ASSERT_EQ(r.status, RunResult::Status::Exited) << r.error;

    const passwd* pw = ::getpwuid(::getuid());
    ASSERT_NE(pw, nullptr);
    const std::vector<std::string> want = {
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        std::string("HOME=") + pw->pw_dir, "XDG_RUNTIME_DIR=/run/user/4242", "LANG=C.UTF-8"};
    EXPECT_EQ(output_lines(), want);
    EXPECT_EQ(child_environment(), want);
}

// Without an engine user nothing names an engine to a command, whatever
// the drain's own environment says; with one, tests/executor/
// test_engine_socket.cpp.
TEST_F(Runner, NoEngineUserGivesNoContainerHost) {
    ::setenv("CONTAINER_HOST", "unix:///tmp/from-our-own-environment.sock", 1);
    hb::Config config;
    auto engine = engine_environment(config);
    ASSERT_TRUE(engine.ok());
    EXPECT_TRUE(engine->env.empty());
    auto out = scratch_file("hb-test-env");
    ASSERT_TRUE(out.ok());
    const RunResult r = run_query(config, {"/usr/bin/env"}, out->get(), out->get(), seconds(10));
    EXPECT_EQ(r.status, RunResult::Status::Exited) << r.error;
    auto text = read_scratch(out->get(), 65536);
    ASSERT_TRUE(text.ok());
    EXPECT_EQ(text->find("CONTAINER_HOST"), std::string::npos) << *text;
    ::unsetenv("CONTAINER_HOST");
}

TEST_F(Runner, RelativeXdgRuntimeDirIsNotPassed) {
    ::setenv("XDG_RUNTIME_DIR", "run/user/1", 1);
    const auto env = child_environment();
    EXPECT_EQ(
        std::count_if(env.begin(), env.end(),
                      [](const std::string& e) { return e.rfind("XDG_RUNTIME_DIR=", 0) == 0; }),
        0);
    ::unsetenv("XDG_RUNTIME_DIR");
    EXPECT_EQ(child_environment().size(), 3u);  // PATH, HOME, LANG
}

TEST_F(Runner, ADaemonKeepingTheLogOpenDoesNotHangUs) {
    // The command exits at once; the daemon it started holds stdout for 30 s.
    const RunResult r = run(sh("/bin/sleep 30 & echo $!"), seconds(20));
    EXPECT_EQ(r.status, RunResult::Status::Exited);  // not TimedOut
    EXPECT_EQ(r.exit_code, 0);
    const pid_t daemon = wait_for_printed_pid();
    ASSERT_GT(daemon, 0);
    EXPECT_EQ(::kill(daemon, 0), 0) << "a normal exit leaves what the command started running";
    ::kill(daemon, SIGKILL);
    reap_orphan(daemon);
}

TEST_F(Runner, TimeoutKillsTheWholeGroup) {
    const RunResult r = run(sh("/bin/sleep 60 & echo $!; wait"), milliseconds(300));
    EXPECT_EQ(r.status, RunResult::Status::TimedOut);
    EXPECT_EQ(r.signal, SIGTERM);
    EXPECT_EQ(r.exit_code, -1);
    const pid_t grandchild = std::stoi(output());
    const int status = reap_orphan(grandchild);
    ASSERT_GE(status, 0) << "the grandchild survived the timeout";
    EXPECT_TRUE(WIFSIGNALED(status));
}

TEST_F(Runner, TimeoutEscalatesToSigkillWhenTermIsIgnored) {
    const RunResult r = run(sh("trap '' TERM; /bin/sleep 60 & echo $!; wait"), milliseconds(300),
                            milliseconds(200));
    EXPECT_EQ(r.status, RunResult::Status::TimedOut);
    EXPECT_EQ(r.signal, SIGKILL);
    const int status = reap_orphan(std::stoi(output()));
    ASSERT_GE(status, 0) << "the grandchild survived the timeout";
    EXPECT_TRUE(WIFSIGNALED(status));
    EXPECT_EQ(WTERMSIG(status), SIGKILL);
}

TEST_F(Runner, DestroyingAChildKillsItsGroup) {
    pid_t grandchild = -1;
    {
        auto child = Child::spawn(sh("/bin/sleep 60 & echo $!; wait"), log_.get());
        ASSERT_TRUE(child.ok()) << child.error().message;
        grandchild = wait_for_printed_pid();
        ASSERT_GT(grandchild, 0);
        Child moved = std::move(child.value());  // ownership moves, no double kill
        EXPECT_GT(moved.pid(), 0);
    }
    const int status = reap_orphan(grandchild);
    ASSERT_GE(status, 0) << "the grandchild survived";
    EXPECT_TRUE(WIFSIGNALED(status));
}

TEST_F(Runner, OutputTailIsTheLast16KiB) {
    const RunResult r = run({"/usr/bin/seq", "1", "20000"});
    ASSERT_EQ(r.status, RunResult::Status::Exited);
    std::string all;
    for (int i = 1; i <= 20000; ++i) all += std::to_string(i) + "\n";
    ASSERT_EQ(output(), all);
    const UniqueFd fd(::open(t.path("cmd.log").c_str(), O_RDONLY | O_CLOEXEC));
    auto tail = read_tail(fd.get());
    ASSERT_TRUE(tail.ok()) << tail.error().message;
    EXPECT_EQ(tail.value(), all.substr(all.size() - 16384));
    EXPECT_EQ(read_tail(fd.get(), 1 << 20).value(), all);
    EXPECT_EQ(read_tail(fd.get(), 5).value(), "0000\n");
}

TEST_F(Runner, TailOfAnEmptyLogIsEmpty) {
    EXPECT_EQ(read_tail(log_.get()).value(), "");
}

// --- long-lived verbs and systemd ----------------------------------------

Config scope_config() {
    Config c;
    c.slug = "demo-app";
    c.systemd = {true, "/usr/bin/systemd-run", ""};
    return c;
}

TEST(Scope, LongLivedVerbsRunInAUserScope) {
    const Argv argv = {"/p/stack", "restart", "api"};
    EXPECT_EQ(scoped_argv(argv, Verb::Restart, scope_config(), "0123456789abcdef", true),
              (Argv{"/usr/bin/systemd-run", "--user", "--scope", "--quiet", "--collect",
                    "--unit=hostbridge-demo-app-restart-0123456789abcdef", "--", "/p/stack",
                    "restart", "api"}));
    EXPECT_EQ(scoped_argv(argv, Verb::Up, scope_config(), "ab", true)[5],
              "--unit=hostbridge-demo-app-up-ab");
    EXPECT_EQ(scoped_argv(argv, Verb::Init, scope_config(), "ab", true)[5],
              "--unit=hostbridge-demo-app-init-ab");
    // A stack's build may replace the running container: it must not stay
    // in the drain's cgroup either.
    EXPECT_EQ(scoped_argv(argv, Verb::Rebuild, scope_config(), "ab", true)[5],
              "--unit=hostbridge-demo-app-rebuild-ab");
}

TEST(Scope, EverythingElseRunsAsItIs) {
    const Argv argv = {"/p/stack", "x"};
    for (Verb verb : {Verb::Status, Verb::Health, Verb::Logs, Verb::Down, Verb::JoinNetwork}) {
        EXPECT_EQ(scoped_argv(argv, verb, scope_config(), "ab", true), argv);
    }
    Config disabled = scope_config();
    disabled.systemd.enabled = false;
    EXPECT_EQ(scoped_argv(argv, Verb::Up, disabled, "ab", true), argv);
    Config no_binary = scope_config();
    no_binary.systemd.systemd_run.clear();
    EXPECT_EQ(scoped_argv(argv, Verb::Up, no_binary, "ab", true), argv);
    EXPECT_EQ(scoped_argv(argv, Verb::Up, scope_config(), "ab", false), argv);
}

TEST(Scope, UserManagerReachableMeansItsPrivateSocketExists) {
    test::TempDir t;
    ::setenv("XDG_RUNTIME_DIR", t.path().c_str(), 1);
    EXPECT_FALSE(user_manager_reachable());
    std::filesystem::create_directory(t.path("systemd"));
    t.write("systemd/private", "a regular file is not a manager");
    EXPECT_FALSE(user_manager_reachable());
    std::filesystem::remove(t.path("systemd/private"));

    const int sock = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(sock, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    const std::string path = t.path("systemd/private");
    ASSERT_LT(path.size(), sizeof addr.sun_path);
    std::strcpy(addr.sun_path, path.c_str());
    ASSERT_EQ(::bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_TRUE(user_manager_reachable());
    ::close(sock);

    ::setenv("XDG_RUNTIME_DIR", "relative", 1);
    EXPECT_FALSE(user_manager_reachable());
    ::unsetenv("XDG_RUNTIME_DIR");
    EXPECT_FALSE(user_manager_reachable());
}

}  // namespace
}  // namespace hb::exec
