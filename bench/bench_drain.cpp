// Executor drain figures for docs/PERFORMANCE.md, on the real
// hostbridge-executor and hostbridge-parser binaries:
//   1. a ping behind a flood: N junk requests (on-schema names dated to sort
//      first, malformed bodies) are queued when a cold `drain` starts, and a
//      legitimate `ping` is published right after; publish -> its `done`
//      ("A ping behind a flood"),
//   2. a cold `drain` of an empty spool (wall time),
//   3. publish -> terminal response latency for ping in `watch` mode,
//   4. peak RSS of the executor and the parser.
// A plain program rather than Google Benchmark: each sample is a whole
// process run, and the latency figure needs percentiles.
//
//   bench_drain [--base DIR] [--runs N] [--junk N] [--pings N] [--empty N]
//               [--executor PATH]
//
// --base picks the filesystem the temporary spool lives on (default /tmp);
// a count of 0 (--runs, --pings, --empty) leaves that figure out;
// --executor runs another build's hostbridge-executor (before and after).
#include <poll.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/support/drain_fixture.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using hb::test::DrainFixture;

struct Options {
    std::string base = "/tmp";
    int runs = 5;
    int junk = 10000;
    int pings = 1000;
    int empty = 50;
    std::string executor = HB_EXECUTOR_BIN;  // another build's, to compare
};

double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double percentile(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    const auto i = static_cast<std::size_t>(p / 100.0 * static_cast<double>(v.size() - 1) + 0.5);
    return v[std::min(i, v.size() - 1)];
}

void summary(const char* what, const std::vector<double>& v, const char* unit) {
    std::printf("%-44s median %8.2f  min %8.2f  max %8.2f %s  (n=%zu)\n", what, percentile(v, 50),
                *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end()), unit,
                v.size());
}

// Runs the started executor to its end; its rusage (ru_maxrss covers the
// parser too: wait4 reports the maximum over the child and what it reaped).
struct Finished {
    double ms = 0;
    double cpu_ms = 0;  // user + system of the executor and its reaped parser
    long maxrss_kib = 0;
    int status = 0;
};
Finished wait_for(DrainFixture& f, pid_t pid, Clock::time_point t0) {
    Finished out;
    rusage ru{};
    ::wait4(pid, &out.status, 0, &ru);
    out.ms = ms_since(t0);
    out.maxrss_kib = ru.ru_maxrss;
    const auto tv_ms = [](const timeval& tv) { return tv.tv_sec * 1000.0 + tv.tv_usec / 1000.0; };
    out.cpu_ms = tv_ms(ru.ru_utime) + tv_ms(ru.ru_stime);
    f.reap(pid);
    return out;
}

// Waits for (and reads) the next events on `in`; false past `timeout_ms`.
bool await_event(int in, int timeout_ms) {
    alignas(inotify_event) char buf[8192];
    pollfd p{in, POLLIN, 0};
    return ::poll(&p, 1, timeout_ms) == 1 && ::read(in, buf, sizeof buf) > 0;
}

// Waits on `in` (an inotify watch on responses/) until `response` says
// done; false past `timeout_ms` without an event.
bool await_done(int in, const DrainFixture& f, const std::string& response, int timeout_ms) {
    alignas(inotify_event) char buf[8192];
    for (;;) {
        pollfd p{in, POLLIN, 0};
        if (::poll(&p, 1, timeout_ms) != 1) return false;
        const ssize_t n = ::read(in, buf, sizeof buf);
        for (ssize_t at = 0; at < n;) {
            const auto* ev = reinterpret_cast<const inotify_event*>(buf + at);
            at += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
            if (ev->len == 0 || response != ev->name) continue;
            if (hb::test::read_file(f.path("responses", response)).find("\"state\": \"done\"") !=
                std::string::npos)
                return true;
        }
    }
}

// A name as a client gives a request it publishes now: this second's stamp,
// so every junk name (DrainFixture::name dates them a day back) sorts first.
std::string fresh_name(const std::string& verb) {
    char nonce[17];
    std::snprintf(nonce, sizeof nonce, "%016llx",
                  static_cast<unsigned long long>(Clock::now().time_since_epoch().count()));
    return DrainFixture::utc(std::time(nullptr), false) + "-" + verb + "-" + nonce + ".json";
}

void flood(const Options& o) {
    std::vector<double> ping_ms;
    std::vector<double> drain_ms;
    std::vector<double> cpu_us;
    std::vector<double> rss;
    for (int run = 0; run < o.runs; ++run) {
        DrainFixture f(HB_PARSER_BIN, o.base);
        f.executor_bin = o.executor;
        std::vector<std::string> junk;
        for (int i = 0; i < o.junk; ++i) {
            // Malformed (the object never closes), each body its own.
            junk.push_back(f.publish_as(
                f.name("ping"), R"({"verb": "ping", "requested_at": )" + std::to_string(i)));
        }
        const std::string ping = fresh_name("ping");
        const std::string tmp = f.path("tmp", "bench-client");
        hb::test::write_file(tmp, DrainFixture::body("ping"));
        const int in = ::inotify_init1(IN_CLOEXEC);
        ::inotify_add_watch(in, f.dir("responses").c_str(), IN_MOVED_TO);
        const auto started = Clock::now();
        const pid_t pid = f.start();
        // Right after the drain started: once its first acknowledgement
        // shows it has listed the backlog.
        if (!await_event(in, 60 * 1000)) {
            std::fprintf(stderr, "flood run %d: the drain acknowledged nothing\n", run);
            std::exit(1);
        }
        const auto t0 = Clock::now();
        hb::test::fs::rename(tmp, f.path("requests", ping));
        const bool answered = await_done(in, f, ping + ".response.json", 600 * 1000);
        const double ms = ms_since(t0);
        ::close(in);
        const Finished done = wait_for(f, pid, started);
        // Nothing lost: every junk request quarantined with its `denied`
        // answer, the ping archived.
        bool all = answered && done.status == 0 &&
                   f.count("quarantine") == static_cast<std::size_t>(o.junk) &&
                   f.count("archive") == 1 && f.count("requests") == 0;
        for (std::size_t i = 0; all && i < junk.size(); ++i) all = f.state_of(junk[i]) == "denied";
        if (!all) {
            std::fprintf(stderr, "flood run %d: not everything was answered and moved\n", run);
            std::exit(1);
        }
        ping_ms.push_back(ms);
        drain_ms.push_back(done.ms);
        cpu_us.push_back(done.cpu_ms * 1000.0 / (o.junk + 1));
        rss.push_back(static_cast<double>(done.maxrss_kib));
    }
    char what[64];
    std::snprintf(what, sizeof what, "ping behind %d junk: publish -> done", o.junk);
    summary(what, ping_ms, "ms");
    summary("  the whole drain", drain_ms, "ms");
    summary("  CPU (user+sys, executor+parser) per request", cpu_us, "us");
    summary("  peak RSS, executor or parser (wait4)", rss, "KiB");
}

void empty_drain(const Options& o) {
    DrainFixture f(HB_PARSER_BIN, o.base);
    f.executor_bin = o.executor;
    std::vector<double> ms;
    std::vector<double> cpu;
    for (int i = 0; i <= o.empty; ++i) {
        const auto t0 = Clock::now();
        const Finished done = wait_for(f, f.start(), t0);
        if (done.status != 0) std::exit(1);
        if (i == 0) continue;  // the first run warms the page cache
        ms.push_back(done.ms);
        cpu.push_back(done.cpu_ms);
    }
    summary("cold drain of an empty spool", ms, "ms");
    summary("  CPU (user+sys)", cpu, "ms");
}

long vm_hwm_kib(pid_t pid) {
    const std::string status = hb::test::read_file("/proc/" + std::to_string(pid) + "/status");
    const auto at = status.find("VmHWM:");
    return at == std::string::npos ? -1 : std::strtol(status.c_str() + at + 6, nullptr, 10);
}

void watch_latency(const Options& o) {
    DrainFixture f(HB_PARSER_BIN, o.base);
    f.executor_bin = o.executor;
    const pid_t pid = f.start("watch");
    if (!hb::test::wait_until(
            [&] { return hb::test::fs::exists(f.path("diagnostics", "audit.jsonl")); })) {
        std::exit(1);
    }
    const int in = ::inotify_init1(IN_CLOEXEC);
    ::inotify_add_watch(in, f.dir("responses").c_str(), IN_MOVED_TO);
    constexpr int kWarmup = 20;
    std::vector<double> ms;
    for (int i = 0; i < o.pings + kWarmup; ++i) {
        const std::string name = f.name("ping");
        const std::string tmp = f.path("tmp", "bench-client");
        hb::test::write_file(tmp, DrainFixture::body("ping"));
        const auto t0 = Clock::now();
        hb::test::fs::rename(tmp, f.path("requests", name));
        if (!await_done(in, f, name + ".response.json", 60 * 1000)) std::exit(1);
        if (i >= kWarmup) ms.push_back(ms_since(t0));
    }
    ::close(in);
    std::printf("%-44s p50 %6.3f  p99 %6.3f  max %6.3f ms  (n=%zu)\n",
                "watch: publish -> done (ping)", percentile(ms, 50), percentile(ms, 99),
                *std::max_element(ms.begin(), ms.end()), ms.size());
    const auto kids = hb::test::children_of(pid);
    std::printf("%-44s executor %ld KiB, parser %ld KiB\n", "  peak RSS in watch (VmHWM)",
                vm_hwm_kib(pid), kids.empty() ? -1L : vm_hwm_kib(kids[0]));
    ::kill(pid, SIGTERM);
    if (f.finish(pid).code != 0) std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string key = argv[i];
        const std::string value = argv[i + 1];
        if (key == "--base")
            o.base = value;
        else if (key == "--runs")
            o.runs = std::stoi(value);
        else if (key == "--executor")
            o.executor = value;
        else if (key == "--junk")
            o.junk = std::stoi(value);
        else if (key == "--pings")
            o.pings = std::stoi(value);
        else if (key == "--empty")
            o.empty = std::stoi(value);
        else {
            std::fprintf(stderr,
                         "usage: bench_drain [--base DIR] [--runs N] [--junk N] "
                         "[--pings N] [--empty N] [--executor PATH]\n");
            return 2;
        }
    }
    utsname u{};
    ::uname(&u);
    std::printf("bench_drain: %s %s, %ld CPUs, spool under %s\n", u.sysname, u.release,
                ::sysconf(_SC_NPROCESSORS_ONLN), o.base.c_str());
    // Other work on the machine shows here: "some" is the share of time
    // runnable tasks waited for a CPU.
    const auto pressure = [] {
        const std::string psi = hb::test::read_file("/proc/pressure/cpu");
        return psi.substr(0, psi.find('\n'));
    };
    std::printf("cpu pressure before: %s\n", pressure().c_str());
    if (o.runs > 0) flood(o);
    if (o.empty > 0) empty_drain(o);
    if (o.pings > 0) watch_latency(o);
    std::printf("cpu pressure after:  %s\n", pressure().c_str());
    return 0;
}
