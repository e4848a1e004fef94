// Throughput of the pure validator on typical valid and invalid requests.
// Target (issue 2): >= 500,000 validations/s of a valid restart on one core.
#include <benchmark/benchmark.h>

#include <string>
#include <string_view>

#include "ipc/rfc3339.hpp"
#include "parser/log_lines.hpp"
#include "parser/validate.hpp"

namespace {

const hb::Startup& enums() {
    static const hb::Startup s{{"api", "db", "web", "worker"}, {"api", "web"}};
    return s;
}

void run(benchmark::State& state, std::string_view name, std::string_view body) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(body.data());
    const std::span<const std::uint8_t> bytes(p, body.size());
    for (auto _ : state) {
        hb::Verdict v = hb::parser::validate(name, bytes, enums());
        benchmark::DoNotOptimize(v);
    }
    state.SetItemsProcessed(state.iterations());
}

// Typical valid and invalid requests: the verb as the name spells it, the
// body's keys before requested_at, and what follows requested_at.
struct Case {
    const char* benchmark;
    const char* name_verb;
    const char* fields;
    const char* end;
};
constexpr Case kCases[] = {
    {"BM_ValidRestart", "restart", R"("verb":"restart","arg":"api",)", "}\n"},
    {"BM_ValidPing", "ping", R"("verb":"ping",)", "}\n"},
    {"BM_DeniedUnknownVerb", "reboot", R"("verb":"reboot",)", "}\n"},
    {"BM_MalformedBody", "restart", R"("verb":"restart","arg":"api",)", ",}\n"},
    {"BM_QuarantinedName", "shell:web", R"("verb":"restart","arg":"api",)", "}\n"},
};

[[maybe_unused]] const bool kRegistered = [] {
    for (const Case& c : kCases) {
        const std::string name =
            std::string("20261129T080000Z-") + c.name_verb + "-0123456789abcdef.json";
        const std::string body =
            std::string("{") + c.fields + R"("requested_at":"2026-11-29T08:00:00Z")" + c.end;
        benchmark::RegisterBenchmark(c.benchmark, run, name, body);
    }
    return true;
}();

// A windowed logs' choice of lines, in the sandbox (parser/log_lines.cpp),
// over the most the executor reads of one answer (kMaxEngineLogBytes = 8 MiB of 80-byte
// lines, three to a stamp). Arg 0: `lines` 1000 alone, the whole buffer
// scanned; arg 1: `since` the start, stopped at the 16 KiB budget.
void BM_SelectLines(benchmark::State& state) {
    std::string log;
    const std::string text(48, 'x');
    for (std::int64_t i = 0; log.size() < (8u << 20) - 128; ++i) {
        log += hb::rfc3339_utc_ns(1796245045602731173 + i / 3) + " " + text + "\n";
    }
    hb::LogWindow window;
    if (state.range(0) == 0) {
        window.lines = 1000;
    } else {
        window.since_ns = 0;
    }
    for (auto _ : state) {
        benchmark::DoNotOptimize(hb::parser::select_lines(log, false, window, 16384));
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * log.size()));
}
BENCHMARK(BM_SelectLines)->Arg(0)->Arg(1);

}  // namespace

BENCHMARK_MAIN();
