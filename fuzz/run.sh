#!/bin/sh
# Builds the libFuzzer targets with clang in build-fuzz/ and runs each for
# DURATION_SECONDS (default 60), starting from the committed seed corpus.
# Any crash, leak, sanitizer report or broken invariant fails the script;
# the crashing input is left in build-fuzz/fuzz-artifacts/ (add it to
# fuzz/corpus/ as a regression seed once fixed).
# Usage: fuzz/run.sh [DURATION_SECONDS | --build-only]
set -eu
cd "$(dirname "$0")/.."
duration="${1:-60}"
build=build-fuzz

cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHB_WERROR=ON -DHB_FUZZ=ON -DHB_TESTS=OFF -DHB_BENCH=OFF >/dev/null
cmake --build "$build" --target fuzz_validate fuzz_wire fuzz_screen fuzz_loglines fuzz_mcp \
    fuzz_image -j "$(nproc)"
# .ci/run builds ahead, while the tests of its first step run.
[ "$duration" != --build-only ] || exit 0

artifacts="$build/fuzz-artifacts"
logs="$build/fuzz-logs"
mkdir -p "$artifacts" "$logs"
# One target per core at a time: each still gets DURATION_SECONDS of a
# whole core, and .ci/run's fuzz step takes a third of the time on two
# cores (docs/PERFORMANCE.md, "Where CI's time goes").
fuzz_one() {
    what=$1
    # New inputs go to a scratch corpus; the committed seeds are read-only.
    # The MCP reader also starts from the parser's corpus (JSON bodies), and
    # takes inputs long enough to nest past its bound (ipc/json_depth.hpp).
    work="$build/fuzz-corpus/$what"
    mkdir -p "$work"
    seeds="fuzz/corpus/$what"
    max_len=8192
    if [ "$what" = mcp ]; then seeds="$seeds fuzz/corpus/validate"; max_len=300000; fi
    # shellcheck disable=SC2086
    "$build/fuzz/fuzz_$what" -max_total_time="$duration" -max_len="$max_len" -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/$what-" \
        "$work" $seeds >"$logs/$what.log" 2>&1
}
# Waits for the batch's targets; prints each one's end, or its whole log
# when it failed.
failed=""
finish_batch() {
    for entry in $batch; do
        what=${entry%%:*}
        if wait "${entry#*:}"; then
            echo "=== fuzz_$what: ${duration} s, no crash"
            tail -n 12 "$logs/$what.log"
        else
            echo "=== fuzz_$what FAILED (its log, $logs/$what.log):"
            cat "$logs/$what.log"
            failed="$failed $what"
        fi
    done
    batch=""
}
batch=""
running=0
for what in validate wire screen loglines mcp image; do
    echo "=== fuzz_$what for ${duration} s"
    fuzz_one "$what" &
    batch="$batch $what:$!"
    running=$((running + 1))
    if [ "$running" -ge "$(nproc)" ]; then
        finish_batch
        running=0
    fi
done
finish_batch
if [ -n "$failed" ]; then
    echo "fuzz: FAILED:$failed"
    exit 1
fi
echo "fuzz: no crash"
