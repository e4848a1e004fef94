#!/bin/sh
# Measures every figure in docs/PERFORMANCE.md again, together, in one run,
# and writes them with the machine they ran on (nproc, CPU model, kernel,
# load average and CPU pressure at the start) to one results file.
#
# Builds RelWithDebInfo in build-bench/, then runs, in the order of
# PERFORMANCE.md's sections: bench_validate, bench_client_latency,
# bench_decide (state on the root fs and on tmpfs), bench_drain and
# bench_status (each on tmpfs, a fresh journaled ext4 and the root fs; the
# drain as measured and under chrt), then the real systemd+podman path
# (bench/real_path.sh root|rootless, bench/agent_verbs.sh compose|engine,
# and the groundwork of
# tools/e2e/smoke.sh root|rootless) where root and podman are there.
#
# Usage: bench/run-all.sh [--quick] [--out FILE]
#   --quick  fewer repetitions and runs (a check that everything runs; its
#            figures are not for the document)
#   --out    the results file (default build-bench/results-<UTC stamp>.txt)
# Needs root for the ext4 loop mount, chrt and the real path; without root
# those parts are skipped, each with a line saying so.
set -eu
cd "$(dirname "$0")/.."
repo=$(pwd)
build=build-bench
quick=0
out=
while [ $# -gt 0 ]; do
    case $1 in
        --quick) quick=1 ;;
        --out) shift; out=$1 ;;
        *) echo "usage: bench/run-all.sh [--quick] [--out FILE]" >&2; exit 2 ;;
    esac
    shift
done
stamp=$(date -u +%Y%m%dT%H%M%SZ)
# How long it took goes into the results file: docs/PERFORMANCE.md quotes it.
run_started=$(date +%s)
[ -n "$out" ] || out="$build/results-$stamp.txt"
mkdir -p "$build" "$(dirname "$out")"
: > "$out"

reps=5; runs=5
[ "$quick" = 1 ] && { reps=1; runs=1; }
root=0
[ "$(id -u)" = 0 ] && root=1

say() { printf '%s\n' "$*" | tee -a "$out"; }
# Runs a command with its output (stdout and stderr) into the results file.
measure() {
    say ""
    say "### $*"
    { "$@" 2>&1 || echo "!!! exit status $?"; } | tee -a "$out"
}
skip() { say ""; say "### skipped: $*"; }

# --- the machine, before anything of ours runs ------------------------------
say "# hostbridge bench/run-all.sh, $stamp"
say "commit:      $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (plus uncommitted changes)')"
say "nproc:       $(nproc)"
say "cpu:         $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1) ($(sed -n 's/^cpu MHz[[:space:]]*: //p' /proc/cpuinfo | head -n 1) MHz)"
say "kernel:      $(uname -sr)"
say "os:          $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
say "memory:      $(sed -n 's/^MemTotal:[[:space:]]*//p' /proc/meminfo)"
say "loadavg:     $(cat /proc/loadavg) (at start)"
[ -r /proc/pressure/cpu ] && say "cpu pressure: $(head -n 1 /proc/pressure/cpu) (at start)"
say "root fs:     $(findmnt -no FSTYPE,OPTIONS --target /tmp 2>/dev/null || echo unknown) (/tmp)"
say "compiler:    $(c++ --version | head -n 1)"
say "mode:        $([ "$quick" = 1 ] && echo quick || echo full), $reps repetitions, $runs runs"

# --- build ------------------------------------------------------------------
say ""
say "### build ($build, RelWithDebInfo)"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHB_BENCH=ON -DHB_TESTS=ON >/dev/null
cmake --build "$build" -j "$(nproc)" --target bench_validate bench_decide bench_client_latency \
    bench_drain bench_status hostbridge hostbridge-executor hostbridge-parser >/dev/null
say "built"
b="$build/bench"
aggregates="--benchmark_repetitions=$reps --benchmark_report_aggregates_only=true"

# --- a journaled ext4 of its own, for the filesystem comparisons ------------
ext4=
img=
cleanup() {
    if [ -n "$ext4" ]; then umount "$ext4" 2>/dev/null || true; rmdir "$ext4" 2>/dev/null || true; fi
    [ -n "$img" ] && rm -f "$img"
    return 0
}
trap cleanup EXIT INT TERM
if [ "$root" = 1 ] && command -v mkfs.ext4 >/dev/null; then
    img=$(mktemp /var/tmp/hb-bench-ext4-XXXXXX.img)
    truncate -s 1G "$img"
    mkfs.ext4 -q -F "$img"
    ext4=$(mktemp -d /mnt/hb-bench-ext4-XXXXXX 2>/dev/null || mktemp -d /tmp/hb-bench-ext4-XXXXXX)
    if ! mount -o loop "$img" "$ext4"; then
        rmdir "$ext4"; ext4=
    fi
fi
bases="/dev/shm"
[ -n "$ext4" ] && bases="$bases $ext4"
bases="$bases /tmp"
[ -n "$ext4" ] || say "(no journaled ext4: needs root and mkfs.ext4; tmpfs and /tmp only)"

# --- Parser validation --------------------------------------------------------
measure taskset -c 1 "$b/bench_validate" $aggregates

# --- Agent clients --------------------------------------------------------------
if [ "$quick" = 1 ]; then
    measure "$b/bench_client_latency" --benchmark_min_time=0.01
else
    measure "$b/bench_client_latency"
fi

# --- Decide and run (in process) ------------------------------------------------
measure taskset -c 1 "$b/bench_decide" $aggregates
measure env TMPDIR=/dev/shm taskset -c 1 "$b/bench_decide" \
    --benchmark_filter='RateLimiter|Decide' $aggregates

# --- Executor drain --------------------------------------------------------------
for base in $bases; do
    measure "$b/bench_drain" --base "$base" --runs "$runs"
    if [ "$root" = 1 ]; then
        measure chrt -f 10 "$b/bench_drain" --base "$base" --runs "$runs"
    else
        skip "chrt -f 10 bench_drain --base $base (needs root)"
    fi
done

# --- Decide and run: end to end ------------------------------------------------
for base in $bases; do
    if [ "$root" = 1 ]; then
        measure chrt -f 50 "$b/bench_status" --runs "$runs" --base "$base"
    else
        measure "$b/bench_status" --runs "$runs" --base "$base"
    fi
done

# --- Real systemd and podman ------------------------------------------------------
if [ -x bench/real_path.sh ] && [ "$root" = 1 ]; then
    real_n=20
    [ "$quick" = 1 ] && real_n=2
    measure env HB_BIN="$repo/$build/bin" bench/real_path.sh root "$real_n"
    measure env HB_BIN="$repo/$build/bin" bench/real_path.sh rootless "$real_n"
    # The agent's loop through MCP, in both postures.
    measure env HB_BIN="$repo/$build/bin" bench/agent_verbs.sh compose "$real_n"
    measure env HB_BIN="$repo/$build/bin" bench/agent_verbs.sh engine "$real_n"
else
    skip "bench/real_path.sh (the real systemd+podman path: needs root and the script)"
fi
if [ "$root" = 1 ] && [ -x tools/e2e/smoke.sh ] && command -v podman >/dev/null; then
    iterations=20
    [ "$quick" = 1 ] && iterations=2
    measure env HB_SMOKE_ITERATIONS=$iterations tools/e2e/smoke.sh root
    measure env HB_SMOKE_ITERATIONS=$iterations tools/e2e/smoke.sh rootless
else
    skip "tools/e2e/smoke.sh (needs root, podman and tools/e2e)"
fi

say ""
say "whole run:   $(($(date +%s) - run_started)) s"
say "loadavg:     $(cat /proc/loadavg) (at the end)"
[ -r /proc/pressure/cpu ] && say "cpu pressure: $(head -n 1 /proc/pressure/cpu) (at the end)"
case $out in /*) ;; *) out="$repo/$out" ;; esac
say "results:     $out"
