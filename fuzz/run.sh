#!/bin/sh
# Builds the libFuzzer targets with clang in build-fuzz/ and runs each for
# DURATION_SECONDS (default 60), starting from the committed seed corpus.
# Any crash, leak, sanitizer report or broken invariant fails the script;
# the crashing input is left in build-fuzz/fuzz-artifacts/ (add it to
# fuzz/corpus/ as a regression seed once fixed).
# Usage: fuzz/run.sh [DURATION_SECONDS]
set -eu
cd "$(dirname "$0")/.."
duration="${1:-60}"
build=build-fuzz

cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHB_WERROR=ON -DHB_FUZZ=ON -DHB_TESTS=OFF -DHB_BENCH=OFF >/dev/null
cmake --build "$build" --target fuzz_validate fuzz_wire fuzz_screen fuzz_loglines fuzz_mcp \
    fuzz_image -j "$(nproc)"

artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"
for what in validate wire screen loglines mcp image; do
    # New inputs go to a scratch corpus; the committed seeds are read-only.
    # The MCP reader also starts from the parser's corpus (JSON bodies), and
    # takes inputs long enough to nest past its bound (cli/json_depth.hpp).
    work="$build/fuzz-corpus/$what"
    mkdir -p "$work"
    seeds="fuzz/corpus/$what"
    max_len=8192
    if [ "$what" = mcp ]; then seeds="$seeds fuzz/corpus/validate"; max_len=300000; fi
    echo "=== fuzz_$what for ${duration} s"
    # shellcheck disable=SC2086
    "$build/fuzz/fuzz_$what" -max_total_time="$duration" -max_len="$max_len" -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/$what-" \
        "$work" $seeds
done
echo "fuzz: no crash"
