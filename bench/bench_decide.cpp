// The cost per request of deciding and running (docs/PERFORMANCE.md,
// "Decide and run"): the argv table, the policy, the integrity gate, the
// rate limiter, and the runner's own fork+exec for comparison. State files go
// to a temp dir under /tmp; put TMPDIR on the state dir's filesystem to
// measure its fdatasync.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "admin/audit/argv_table_render.hpp"
#include "admin/install/config_write.hpp"
#include "common/integrity_gate.hpp"
#include "common/policy.hpp"
#include "common/sha256.hpp"
#include "engines/argv_table.hpp"
#include "executor/rate_limiter.hpp"
#include "executor/runner.hpp"
#include "ipc/unique_fd.hpp"

namespace {

using namespace hb;
using namespace hb::exec;
using namespace hb::common;
using hb::admin::default_policy_text;

class Scratch {
  public:
    Scratch() {
        const char* tmp = std::getenv("TMPDIR");
        std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/hb-bench-XXXXXX";
        if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp");
        root_ = tmpl;
    }
    ~Scratch() { std::filesystem::remove_all(root_); }
    std::string path(const std::string& rel) const { return root_ + "/" + rel; }
    void write(const std::string& rel, const std::string& text) const {
        std::filesystem::create_directories(std::filesystem::path(path(rel)).parent_path());
        std::ofstream(path(rel), std::ios::binary) << text;
    }
    const std::string& root() const { return root_; }

  private:
    std::string root_;
};

// A project like the demo: a 2 KiB stack script, a 4 KiB compose file, a
// 1 KiB proxy config, and .env pinned as absent.
struct Project {
    Scratch dir;
    Config config;
    Project() {
        const std::string stack(2048, 's'), compose(4096, 'c'), proxy(1024, 'p');
        dir.write("project/stack", stack);
        dir.write("project/compose.yaml", compose);
        dir.write("project/conf/proxy.conf", proxy);
        dir.write("policy.conf", std::string(default_policy_text()));
        std::filesystem::create_directory(dir.path("state"));
        config.slug = "bench";
        config.project_dir = dir.path("project");
        config.state_dir = dir.path("state");
        config.policy_file = dir.path("policy.conf");
        config.backend = {*backend_kind_named("stack"), {dir.path("project/stack")}, ""};
        config.services = {"api", "db", "web", "worker"};
        config.buildable = {"api", "web", "worker"};
        config.tcb = {{"stack", sha256_hex(stack)},
                      {"compose.yaml", sha256_hex(compose)},
                      {"conf/proxy.conf", sha256_hex(proxy)},
                      {".env", std::nullopt}};
        config.limits.read_only = {100, 60};
    }
};

void BM_ArgvFor(benchmark::State& state) {
    Project p;
    for (auto _ : state) benchmark::DoNotOptimize(argv_for(Verb::Restart, 2, p.config));
}
BENCHMARK(BM_ArgvFor);

void BM_PolicyLoad(benchmark::State& state) {  // once per drain
    Project p;
    for (auto _ : state) benchmark::DoNotOptimize(load_policy(p.config.policy_file));
}
BENCHMARK(BM_PolicyLoad);

void BM_PolicyLookup(benchmark::State& state) {  // once per request
    Project p;
    const Policy policy = load_policy(p.config.policy_file);
    for (auto _ : state) benchmark::DoNotOptimize(policy.mode(Verb::Restart));
}
BENCHMARK(BM_PolicyLookup);

void BM_IntegrityGate(benchmark::State& state) {
    Project p;
    const auto resolver = state.range(0) == 0 ? Resolver::Openat2 : Resolver::ComponentWise;
    for (auto _ : state) {
        const GateReport r = check_tcb(p.config.project_dir, p.config.tcb, resolver);
        if (!r.passed()) state.SkipWithError(r.detail().c_str());
    }
    state.SetLabel(resolver == Resolver::Openat2 ? "openat2, 4 pins" : "component-wise, 4 pins");
}
BENCHMARK(BM_IntegrityGate)->Arg(0)->Arg(1);

// Admits read-only requests until the window (100) is full, then starts
// over from an empty state file (untimed), so the file holds 50 entries on
// average.
class Admitter {
  public:
    explicit Admitter(const Config& config)
        : limiter_(config), state_file_(config.state_dir + "/" + RateLimiter::kStateFile) {}
    bool admit(benchmark::State& state) {
        if (in_window_ == 100) {
            state.PauseTiming();
            std::filesystem::remove(state_file_);
            in_window_ = 0;
            state.ResumeTiming();
        }
        ++in_window_;
        return limiter_.try_admit(RateClass::ReadOnly).admitted();
    }

  private:
    RateLimiter limiter_;
    std::string state_file_;
    int in_window_ = 0;
};

void BM_RateLimiterAdmit(benchmark::State& state) {
    Project p;
    Admitter admitter(p.config);
    for (auto _ : state) {
        if (!admitter.admit(state)) state.SkipWithError("refused");
    }
}
BENCHMARK(BM_RateLimiterAdmit);

void BM_RateLimiterRefuse(benchmark::State& state) {  // window full: nothing written
    Project p;
    RateLimiter limiter(p.config);
    for (int i = 0; i < 100; ++i) limiter.try_admit(RateClass::ReadOnly);
    for (auto _ : state) {
        if (limiter.try_admit(RateClass::ReadOnly).admitted()) state.SkipWithError("admitted");
    }
}
BENCHMARK(BM_RateLimiterRefuse);

// Everything the executor adds between a verdict and the spawn, in drain
// order: policy lookup, argv table, integrity gate, rate limiter (admitting).
void BM_DecidePerRequest(benchmark::State& state) {
    Project p;
    const Policy policy = load_policy(p.config.policy_file);
    Admitter admitter(p.config);
    for (auto _ : state) {
        if (policy.mode(Verb::Logs) != Mode::Auto) state.SkipWithError("policy");
        const ArgvOutcome argv = argv_for(Verb::Logs, 0, p.config);
        benchmark::DoNotOptimize(argv);
        if (!check_tcb(p.config.project_dir, p.config.tcb).passed()) state.SkipWithError("gate");
        if (!admitter.admit(state)) state.SkipWithError("limit");
    }
}
BENCHMARK(BM_DecidePerRequest);

// For scale: the runner spawning /bin/true into a log file and reaping it.
void BM_RunTrue(benchmark::State& state) {
    Scratch s;
    UniqueFd log(::open(s.path("log").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
    for (auto _ : state) {
        const RunResult r = run_command({"/bin/true"}, log.get(), std::chrono::seconds(10));
        if (r.status != RunResult::Status::Exited) state.SkipWithError("spawn");
    }
}
BENCHMARK(BM_RunTrue)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
