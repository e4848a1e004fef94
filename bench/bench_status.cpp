// Decide and run end to end (docs/PERFORMANCE.md, "Decide and run: end to
// end"), on the real hostbridge-executor and hostbridge-parser binaries:
//   1. the command's own cost: the trivial stack script (`#!/bin/sh` +
//      `exit 0`) forked and exec'd directly by this program, stdout to a
//      file, N times; and the same through the executor's runner
//      (run_command: new session, pidfd, exec-error pipe, close_range);
//   2. cold drains of N queued `ping` requests (the request's lifecycle,
//      nothing runs) and of an empty spool (process start);
//   3. cold drains of N queued `status` requests running that script;
// and from these the cost the bridge adds per request on top of the
// command's own fork+exec. Every spool, state dir and log lives under
// --base (default: /tmp, then /dev/shm when it exists, to show what the
// fdatasyncs cost on a disk against tmpfs).
//
//   bench_status [--base DIR]... [--runs N] [--requests N]
//   bench_status --profile "perf record -g -o /tmp/hb.perf" [--base DIR] [--requests N]
//
// --profile runs one status drain under the given command (split at blanks;
// the executor's argv is appended) and reports only its wall time.
#include <fcntl.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "executor/runner.hpp"
#include "tests/support/drain_fixture.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using hb::test::DrainFixture;

struct Options {
    std::vector<std::string> bases;
    int runs = 5;
    int requests = 1000;
    std::vector<std::string> profile;  // a command line the drain runs under
};

double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

void row(const char* what, const std::vector<double>& v, const char* unit) {
    std::printf("  %-52s median %8.3f  min %8.3f  max %8.3f %s\n", what, median(v),
                *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end()), unit);
}

// A fixture whose stack is the trivial script, with limits the benchmark
// never reaches.
struct Install {
    explicit Install(const std::string& base) : f(HB_PARSER_BIN, base) {
        stack = f.project + "/stack";
        hb::test::write_file(stack, "#!/bin/sh\nexit 0\n");
        hb::test::fs::permissions(stack, hb::test::fs::perms(0755));
        f.config["limits"]["mutating"] = {{"count", 1000000}, {"seconds", 600}};
        f.config["limits"]["read_only"] = {{"count", 1000000}, {"seconds", 60}};
        // Pinned, as install pins it: every command runs from its approved
        // copy in the run tree (executor/run_tree.hpp), rebuilt each time.
        f.pin({"stack"});
    }
    DrainFixture f;
    std::string stack;
};

// The loops below run in a fresh process (this binary re-executed with
// --loop), like the drain: a long-running, busy parent is scheduled less
// favourably on a loaded machine, which would flatter the drain.

// fork, dup the log onto 1 and 2, execve the script, waitpid; n times.
int direct_loop(const std::string& script, const std::string& log, int n) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    std::string arg0 = script, arg1 = "status";
    char* argv[] = {arg0.data(), arg1.data(), nullptr};
    std::string path_env = "PATH=/usr/local/bin:/usr/bin:/bin";
    char* envp[] = {path_env.data(), nullptr};
    for (int i = 0; i < n; ++i) {
        const pid_t pid = ::fork();
        if (pid == 0) {
            ::dup2(fd, 1);
            ::dup2(fd, 2);
            ::execve(argv[0], argv, envp);
            ::_exit(127);
        }
        int status = 0;
        ::waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
    }
    return 0;
}

// The same through the executor's runner, exactly as the drain calls it.
int runner_loop(const std::string& script, const std::string& log, const std::string& workdir,
                int n) {
    hb::UniqueFd fd(::open(log.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    for (int i = 0; i < n; ++i) {
        const auto r = hb::exec::run_command({script, "status"}, fd.get(), std::chrono::seconds(60),
                                             hb::exec::kDefaultKillGrace, workdir);
        if (r.status != hb::exec::RunResult::Status::Exited || r.exit_code != 0) return 1;
    }
    return 0;
}

// Runs `args` in a child (argv[0] on PATH unless it has a slash) and waits
// for it: its wait status.
int run_and_wait(std::vector<std::string> args) {
    const pid_t pid = ::fork();
    if (pid == 0) {
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        ::execvp(argv[0], argv.data());
        ::_exit(127);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return status;
}

// ms per run of `kind` ("direct" or "runner") in a fresh process.
double fresh_loop_ms(const std::string& kind, const std::string& base, int n) {
    Install in(base);
    std::vector<std::string> args = {
        "/proc/self/exe", "--loop",         kind, in.stack, in.f.root + "/" + kind + ".log",
        in.f.project,     std::to_string(n)};
    const auto t0 = Clock::now();
    const int status = run_and_wait(args);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::fprintf(stderr, "%s loop failed\n", kind.c_str());
        std::exit(1);
    }
    return ms_since(t0) / n;
}

// Wall time of one cold drain of `n` queued requests of `verb`.
double drain_ms(const std::string& base, const std::string& verb, int n) {
    Install in(base);
    for (int i = 0; i < n; ++i) in.f.publish(verb);
    const auto t0 = Clock::now();
    const auto exit = in.f.finish(in.f.start(), std::chrono::seconds(3600));
    const double ms = ms_since(t0);
    const auto archived = in.f.count("archive");
    // status leaves the request and its log in archive/.
    const std::size_t expected = static_cast<std::size_t>(verb == "status" ? 2 * n : n);
    if (exit.code != 0 || archived != expected) {
        std::fprintf(stderr, "drain of %d %s: exit %d, %zu archived: %s\n", n, verb.c_str(),
                     exit.code, archived, exit.err.c_str());
        std::exit(1);
    }
    if (n > 0) {
        for (const auto& line : in.f.audit()) {
            if (line["event"] == "denied" || line["event"] == "failed") {
                std::fprintf(stderr, "unexpected %s\n", line.dump().c_str());
                std::exit(1);
            }
        }
    }
    return ms;
}

// One status drain run under `wrapper` (a profiler); its wall time.
double profiled_drain_ms(const std::string& base, int n, const std::vector<std::string>& wrapper) {
    Install in(base);
    for (int i = 0; i < n; ++i) in.f.publish("status");
    std::vector<std::string> args = wrapper;
    const auto drain = in.f.argv_for("drain", {});
    args.insert(args.end(), drain.begin(), drain.end());
    const auto t0 = Clock::now();
    const int status = run_and_wait(args);
    const double ms = ms_since(t0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        in.f.count("archive") != static_cast<std::size_t>(2 * n)) {
        std::fprintf(stderr, "profiled drain failed (status %d)\n", status);
        std::exit(1);
    }
    return ms;
}

void bench_base(const Options& o, const std::string& base) {
    std::printf("\nspool, state and logs under %s\n", base.c_str());
    std::vector<double> direct, runner, empty, ping, status;
    for (int run = 0; run < o.runs; ++run) {
        direct.push_back(fresh_loop_ms("direct", base, o.requests));
        runner.push_back(fresh_loop_ms("runner", base, o.requests));
        empty.push_back(drain_ms(base, "ping", 0));
        ping.push_back(drain_ms(base, "ping", o.requests));
        status.push_back(drain_ms(base, "status", o.requests));
    }
    const double n = o.requests;
    std::vector<double> status_rate, status_per, ping_per, bridge, decide;
    for (int run = 0; run < o.runs; ++run) {
        status_rate.push_back(n / (status[run] / 1000.0));
        status_per.push_back((status[run] - empty[run]) / n);
        ping_per.push_back((ping[run] - empty[run]) / n);
        bridge.push_back(status_per.back() - direct[run]);
        decide.push_back(status_per.back() - ping_per.back() - runner[run]);
    }
    char what[96];
    std::snprintf(what, sizeof what, "cold drain of %d status (throughput)", o.requests);
    row(what, status_rate, "req/s");
    row("  per status request (minus an empty drain)", status_per, "ms");
    row("the script's own fork+exec+wait, direct", direct, "ms");
    row("bridge cost per request (status - direct)", bridge, "ms");
    row("  of which: request lifecycle (per ping)", ping_per, "ms");
    row("  of which: the runner's spawn+wait of the script", runner, "ms");
    row("  of which: decide+log+started(sync)+running (rest)", decide, "ms");
    row("cold drain of an empty spool (process start)", empty, "ms");
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 7 && std::string(argv[1]) == "--loop") {
        const std::string kind = argv[2];
        const int n = std::stoi(argv[6]);
        return kind == "direct" ? direct_loop(argv[3], argv[4], n)
                                : runner_loop(argv[3], argv[4], argv[5], n);
    }
    Options o;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string key = argv[i];
        const std::string value = argv[i + 1];
        if (key == "--base") {
            o.bases.push_back(value);
        } else if (key == "--runs") {
            o.runs = std::stoi(value);
        } else if (key == "--requests") {
            o.requests = std::stoi(value);
        } else if (key == "--profile") {
            std::istringstream words(value);
            for (std::string w; words >> w;) o.profile.push_back(w);
        } else {
            std::fprintf(stderr,
                         "usage: bench_status [--base DIR]... [--runs N] [--requests N] "
                         "[--profile COMMAND]\n");
            return 2;
        }
    }
    if (o.bases.empty()) {
        o.bases.push_back("/tmp");
        if (::access("/dev/shm", W_OK) == 0) o.bases.push_back("/dev/shm");
    }
    utsname u{};
    ::uname(&u);
    std::printf("bench_status: %s %s, %ld CPUs, %d runs of %d requests\n", u.sysname, u.release,
                ::sysconf(_SC_NPROCESSORS_ONLN), o.runs, o.requests);
    const auto pressure = [] {
        const std::string psi = hb::test::read_file("/proc/pressure/cpu");
        return psi.substr(0, psi.find('\n'));
    };
    std::printf("cpu pressure before: %s\n", pressure().c_str());
    if (!o.profile.empty()) {
        const double ms = profiled_drain_ms(o.bases[0], o.requests, o.profile);
        std::printf("profiled drain of %d status under %s: %.1f ms\n", o.requests,
                    o.bases[0].c_str(), ms);
        return 0;
    }
    for (const auto& base : o.bases) bench_base(o, base);
    std::printf("\ncpu pressure after:  %s\n", pressure().c_str());
    return 0;
}
