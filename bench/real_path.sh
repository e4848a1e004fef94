#!/bin/bash
# real_path.sh [root|rootless] [N]: request publish -> terminal response on
# the real path (a real systemd --user manager's .path unit fires the
# installed drain; real podman restarts the demo's api), p50 over N requests
# (default 20) of `ping` and of `restart api`, cold (the unit activated per
# request) and warm (the drain lingering from the previous request), and
# where the time goes: unit activation, drain, podman. Figures go to
# docs/PERFORMANCE.md, "Real path: systemd + podman".
#
# Needs root (tools/e2e/usermgr.sh; rootless: a throwaway user) and the
# binaries in ${HB_BIN:-build/bin} (./demo or ./run-tests builds them). The
# setup is the e2e session's (tools/e2e/bridge-session.sh setup, in the place
# tools/e2e/bridge-place.sh makes and cleans up); the bridge is installed
# with a rate limit the 2N+1 restarts fit in.
set -uo pipefail

self=$(readlink -f -- "${BASH_SOURCE[0]}")
here=$(dirname -- "$self")
repo=$(dirname -- "$here")

if [ "${1:-}" != --inner ]; then
    kind=${1:-root}
    n=${2:-20}
    case $kind in root | rootless) ;; *) echo "usage: real_path.sh [root|rootless] [N]" >&2 && exit 64 ;; esac
    [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "usage: real_path.sh [root|rootless] [N]" >&2 && exit 64; }
    bin=${HB_BIN:-$repo/build/bin}
    [ -x "$bin/hostbridge" ] || { echo "real_path: build first (./demo or ./run-tests): no $bin/hostbridge" >&2 && exit 1; }
    [ "$(id -u)" -eq 0 ] || { echo "real_path: needs root" >&2 && exit 77; }
    exec "$repo/tools/e2e/bridge-place.sh" --prefix "hb-e2e-bench-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')" \
        --rate-limit "$((2 * n + 10))/600" "$kind" "$bin" "$self" --inner "$n"
fi

# ---- inside the manager's environment, as the bridge's user
n=$2
shift 2
args=("$@") # the session's: --project P --bin B --mode systemd --backend stack --rate-limit R
project=$2
slug=$(basename -- "$project")
spool=$project/untracked/hostbridge
unit=hostbridge-$slug.service
audit=${XDG_STATE_HOME:-$HOME/.local/state}/hostbridge/$slug/audit.jsonl
run_dir=$project.run
export CONTAINERS_CONF=$project/containers.conf

"$repo/tools/e2e/bridge-session.sh" setup "${args[@]}" >"$run_dir.setup.log" 2>&1 || {
    cat "$run_dir.setup.log"
    exit 1
}
rm -f "$run_dir.setup.log"
echo "bench: $(id -un), $([ "$(id -u)" -eq 0 ] && echo rootful || echo rootless) podman, $n requests per series, load $(cut -d' ' -f1-3 /proc/loadavg)"

out=$run_dir/samples.jsonl
for series in "ping cold" "ping warm" "restart:api cold" "restart:api warm"; do
    read -r what regime <<<"$series"
    python3 "$here/real_path.py" "$spool" "$unit" "$audit" "$what" "$n" "$regime" >>"$out" || exit 1
done

# The parts of a restart, run directly (same user, same namespace), 5 each.
ctr=$slug-api
direct() { # LABEL CMD...
    local t0 ms=()
    for _ in 1 2 3 4 5; do
        t0=$(date +%s%N)
        "${@:2}" >/dev/null 2>&1 || { echo "bench: $* failed" >&2 && return 1; }
        ms+=($((($(date +%s%N) - t0) / 1000)))
    done
    printf '{"direct": "%s", "us": [%s]}\n' "$1" "$(IFS=,; echo "${ms[*]}")" >>"$out"
}
direct "systemd-run --user --scope -- true" systemd-run --user --scope --quiet --collect -- true
direct "podman restart -t 5 api" podman restart -t 5 "$ctr"
direct "health probe: podman exec api wget :8080" podman exec "$ctr" timeout 3 wget -q -O - http://127.0.0.1:8080/
direct "./stack restart api (podman restart + health probe)" "$project/stack" restart api

python3 - "$out" <<'EOF'
import json, statistics, sys
def q(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p * (len(v) - 1))))]
def row(label, values):
    if not values:
        return
    print("| %-58s | %7.1f | %7.1f | %7.1f | %3d |" % (label, statistics.median(values), q(values, 0.9), max(values), len(values)))
print("| %-58s | %7s | %7s | %7s | %3s |" % ("ms", "p50", "p90", "max", "n"))
print("|" + "-" * 60 + "|---------|---------|---------|-----|")
for line in open(sys.argv[1]):
    rec = json.loads(line)
    if "direct" in rec:
        row("direct: " + rec["direct"], [u / 1000 for u in rec["us"]])
        continue
    s = rec["samples"]
    name = rec["verb"].replace(":", " ") + ", " + rec["regime"]
    row("**%s: publish -> terminal response**" % name, [x["total"] for x in s])
    for key, label in [("activation", "publish -> drain process started"),
                       ("to_queued", "publish -> queued (acknowledged)"),
                       ("queued_to_answered", "queued -> answered (pong)"),
                       ("queued_to_started", "queued -> command started"),
                       ("command", "command (scope + ./stack restart)"),
                       ("answer_seen", "answer written -> seen by the client")]:
        row("  " + label, [x[key] for x in s if key in x])
EOF
