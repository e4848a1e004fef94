#!/usr/bin/env bash
# The cold drain against the article's bash watcher, on the same generated
# requests, in one run (docs/PERFORMANCE.md, "Against the bash drain"):
#
#   bench/compare-bash-drain.sh BUILD_DIR [N_OURS] [N_BASH]
#
# Each drain gets a fresh spool of N `ping` requests from
# bench/bash-peer/bench-drain.sh under $TMPDIR (default /tmp: the root
# filesystem here); ours reads a bridge.json written for that spool by
# bench/bash-peer/write-bridge-json.sh. The bash drain costs about 140 ms a
# request, hence the smaller default N for it. Prints both results and the
# ratio of their wall time per request.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$(cd "${1:?usage: compare-bash-drain.sh BUILD_DIR [N_OURS] [N_BASH]}" && pwd)"
n_ours="${2:-1000}"
n_bash="${3:-50}"
export PARSER="$build/bin/hostbridge-parser"

ours="$(CONFIG=bridge.json PREPARE="bash '$here/bash-peer/write-bridge-json.sh'" \
    bash "$here/bash-peer/bench-drain.sh" \
    "'$build/bin/hostbridge-executor' drain --config \"\$BENCH_DIR/bridge.json\" --allow-root" \
    "$n_ours" ping)"
echo "hostbridge-executor:"
echo "$ours"
bash_out="$(bash "$here/bash-peer/bench-drain.sh" "'$here/bash-peer/watcher.bash' drain" \
    "$n_bash" ping)"
echo "watcher.bash:"
echo "$bash_out"
ms() { sed -n 's/.* \([0-9.]*\) ms\/request$/\1/p' <<< "$1" | head -n 1; }
awk -v a="$(ms "$ours")" -v b="$(ms "$bash_out")" \
    'BEGIN { printf "per request: %.3f ms against %.2f ms: %.0fx\n", a, b, b / a }'
