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

void BM_ValidRestart(benchmark::State& state) {
    run(state, "20261129T080000Z-restart-0123456789abcdef.json",
        "{\"verb\":\"restart\",\"arg\":\"api\",\"requested_at\":\"2026-11-29T08:00:00Z\"}\n");
}
void BM_ValidPing(benchmark::State& state) {
    run(state, "20261129T080000Z-ping-0123456789abcdef.json",
        "{\"verb\":\"ping\",\"requested_at\":\"2026-11-29T08:00:00Z\"}\n");
}
void BM_DeniedUnknownVerb(benchmark::State& state) {
    run(state, "20261129T080000Z-reboot-0123456789abcdef.json",
        "{\"verb\":\"reboot\",\"requested_at\":\"2026-11-29T08:00:00Z\"}\n");
}
void BM_MalformedBody(benchmark::State& state) {
    run(state, "20261129T080000Z-restart-0123456789abcdef.json",
        "{\"verb\":\"restart\",\"arg\":\"api\",\"requested_at\":\"2026-11-29T08:00:00Z\",}\n");
}
void BM_QuarantinedName(benchmark::State& state) {
    run(state, "20261129T080000Z-shell:web-0123456789abcdef.json",
        "{\"verb\":\"restart\",\"arg\":\"api\",\"requested_at\":\"2026-11-29T08:00:00Z\"}\n");
}

BENCHMARK(BM_ValidRestart);
BENCHMARK(BM_ValidPing);
BENCHMARK(BM_DeniedUnknownVerb);
BENCHMARK(BM_MalformedBody);
BENCHMARK(BM_QuarantinedName);

}  // namespace

BENCHMARK_MAIN();
