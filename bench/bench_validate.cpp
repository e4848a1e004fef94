// Throughput of the pure validator on typical valid and invalid requests.
// Target (issue 2): >= 500,000 validations/s of a valid restart on one core.
#include <benchmark/benchmark.h>

#include <string>
#include <string_view>

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

}  // namespace

BENCHMARK_MAIN();
