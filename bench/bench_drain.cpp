// Executor drain figures for docs/PERFORMANCE.md, "Executor drain", on the
// real hostbridge-executor and hostbridge-parser binaries:
//   1. a cold `drain` of N queued ping requests (requests/s),
//   2. a cold `drain` of an empty spool (wall time),
//   3. publish -> terminal response latency for ping in `watch` mode,
//   4. peak RSS of the executor and the parser.
// A plain program rather than Google Benchmark: each sample is a whole
// process run, and the latency figure needs percentiles.
//
//   bench_drain [--base DIR] [--runs N] [--requests N] [--pings N] [--empty N]
//
// --base picks the filesystem the temporary spool lives on (default /tmp).
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
    int requests = 1000;
    int pings = 1000;
    int empty = 50;
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

void cold_drain(const Options& o) {
    std::vector<double> rates;
    std::vector<double> cpu_us;
    std::vector<double> rss;
    for (int run = 0; run < o.runs; ++run) {
        DrainFixture f(HB_PARSER_BIN, o.base);
        for (int i = 0; i < o.requests; ++i) f.publish("ping");
        const auto t0 = Clock::now();
        const Finished done = wait_for(f, f.start(), t0);
        if (done.status != 0 || f.count("archive") != static_cast<std::size_t>(o.requests)) {
            std::fprintf(stderr, "cold drain run %d did not drain everything\n", run);
            std::exit(1);
        }
        rates.push_back(o.requests / (done.ms / 1000.0));
        cpu_us.push_back(done.cpu_ms * 1000.0 / o.requests);
        rss.push_back(static_cast<double>(done.maxrss_kib));
    }
    char what[64];
    std::snprintf(what, sizeof what, "cold drain of %d pings", o.requests);
    summary(what, rates, "req/s");
    summary("  CPU (user+sys, executor+parser) per request", cpu_us, "us");
    summary("  peak RSS, executor or parser (wait4)", rss, "KiB");
}

void empty_drain(const Options& o) {
    DrainFixture f(HB_PARSER_BIN, o.base);
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
    const pid_t pid = f.start("watch");
    if (!hb::test::wait_until(
            [&] { return hb::test::fs::exists(f.path("diagnostics", "audit.jsonl")); })) {
        std::exit(1);
    }
    const int in = ::inotify_init1(IN_CLOEXEC);
    ::inotify_add_watch(in, f.dir("responses").c_str(), IN_MOVED_TO);
    constexpr int kWarmup = 20;
    std::vector<double> ms;
    alignas(inotify_event) char buf[8192];
    for (int i = 0; i < o.pings + kWarmup; ++i) {
        const std::string name = f.name("ping");
        const std::string response = name + ".response.json";
        const std::string tmp = f.path("tmp", "bench-client");
        hb::test::write_file(tmp, DrainFixture::body("ping"));
        const auto t0 = Clock::now();
        hb::test::fs::rename(tmp, f.path("requests", name));
        for (bool done = false; !done;) {
            const ssize_t n = ::read(in, buf, sizeof buf);
            for (ssize_t at = 0; at < n && !done;) {
                const auto* ev = reinterpret_cast<const inotify_event*>(buf + at);
                at += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
                if (ev->len == 0 || response != ev->name) continue;
                done = hb::test::read_file(f.path("responses", response))
                           .find("\"state\": \"done\"") != std::string::npos;
            }
        }
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
        else if (key == "--requests")
            o.requests = std::stoi(value);
        else if (key == "--pings")
            o.pings = std::stoi(value);
        else if (key == "--empty")
            o.empty = std::stoi(value);
        else {
            std::fprintf(stderr,
                         "usage: bench_drain [--base DIR] [--runs N] [--requests N] "
                         "[--pings N] [--empty N]\n");
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
    cold_drain(o);
    empty_drain(o);
    watch_latency(o);
    std::printf("cpu pressure after:  %s\n", pressure().c_str());
    return 0;
}
