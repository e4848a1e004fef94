#!/bin/bash
# agent_verbs.sh [compose|engine] [N]: the agent's loop as it sees it, in
# both postures: N MCP `tools/call`s each of ping, status, health and
# restart api (and rebuild api where it runs unattended: with an engine
# user), through hostbridge-agent's MCP server, the real drain (a systemd
# --user manager's .path unit), podman-compose and podman, p50 / p90 / max;
# beside them the engine's own restart of api's container (podman restart,
# the same client the drain's commands are). `compose`: the engine runs as
# the person; `engine`: as its own user (docs/ENGINE-USER.md). Figures go
# to docs/PERFORMANCE.md, "The agent's loop".
#
# Needs root (tools/e2e/bridge-place.sh makes the throwaway users and
# cleans up) and the binaries in ${HB_BIN:-build/bin}.
set -uo pipefail

self=$(readlink -f -- "${BASH_SOURCE[0]}")
here=$(dirname -- "$self")
repo=$(dirname -- "$here")

if [ "${1:-}" != --inner ]; then
    kind=${1:-compose}
    n=${2:-10}
    case $kind in compose | engine) ;; *) echo "usage: agent_verbs.sh [compose|engine] [N]" >&2 && exit 64 ;; esac
    [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "usage: agent_verbs.sh [compose|engine] [N]" >&2 && exit 64; }
    bin=${HB_BIN:-$repo/build/bin}
    [ -x "$bin/hostbridge" ] || { echo "agent_verbs: build first (./demo or ./run-tests): no $bin/hostbridge" >&2 && exit 1; }
    [ "$(id -u)" -eq 0 ] || { echo "agent_verbs: needs root" >&2 && exit 77; }
    exec "$repo/tools/e2e/bridge-place.sh" --prefix "hb-e2e-av-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')" \
        --rate-limit "$((4 * n + 20))/600" "$kind" "$bin" "$self" --inner "$n"
fi

# ---- inside the manager's environment, as the bridge's user
n=$2
shift 2
args=("$@") # the session's: --project P --bin B --mode M --backend B --rate-limit R [--engine-user U]
project="" engine_user=""
while [ $# -gt 0 ]; do
    case $1 in
        --project) project=$2; shift 2 ;;
        --engine-user) engine_user=$2; shift 2 ;;
        *) shift ;;
    esac
done
[ -n "$project" ] || { echo "agent_verbs: no --project" >&2 && exit 64; }
slug=$(basename -- "$project")
spool=$project/untracked/hostbridge
run_dir=$project.run
export CONTAINERS_CONF=$project/containers.conf
if [ -n "$engine_user" ]; then
    export CONTAINER_HOST=unix://$(getent passwd "$engine_user" | cut -d: -f6)/engine/podman.sock
fi
cproject=${slug}_hb$(printf %s "$(readlink -f -- "$project")" | sha256sum | cut -c1-8)
api=${cproject}_api_1

"$repo/tools/e2e/bridge-session.sh" setup "${args[@]}" >"$run_dir.setup.log" 2>&1 || {
    cat "$run_dir.setup.log"
    exit 1
}
rm -f "$run_dir.setup.log"
policy=${XDG_CONFIG_HOME:-$HOME/.config}/hostbridge/$slug/policy.conf
verbs=(ping status health restart:api)
rebuild=0
grep -qx 'MODE_rebuild=auto' "$policy" 2>/dev/null && rebuild=1
echo "bench: $(id -un), $([ -n "$engine_user" ] && echo "engine user $engine_user" || echo "engine as the person"), $n calls per verb, load $(cut -d' ' -f1-3 /proc/loadavg)"
[ "$rebuild" -eq 1 ] || echo "bench: rebuild api is held for a person here (policy: $(grep '^MODE_rebuild=' "$policy")): not timed"

out=$run_dir/samples.jsonl
agent=$spool/bin/hostbridge-agent
python3 "$here/agent_verbs.py" "$agent" "$spool" "$n" "${verbs[@]}" >>"$out" || exit 1
if [ "$rebuild" -eq 1 ]; then
    # The first rebuild may build what up left; the timed ones change nothing.
    python3 "$here/agent_verbs.py" "$agent" "$spool" 1 rebuild:api >/dev/null || exit 1
    python3 "$here/agent_verbs.py" "$agent" "$spool" "$n" rebuild:api >>"$out" || exit 1
fi
ms=()
for _ in 1 2 3 4 5; do
    t0=$(date +%s%N)
    podman restart "$api" >/dev/null 2>&1 || { echo "bench: podman restart $api failed" >&2 && exit 1; }
    ms+=("$((($(date +%s%N) - t0) / 1000000))")
done
printf '{"verb": "direct: podman restart api", "ms": [%s]}\n' "$(IFS=,; echo "${ms[*]}")" >>"$out"

python3 - "$out" <<'EOF'
import json, statistics, sys
def q(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p * (len(v) - 1))))]
print("| %-34s | %7s | %7s | %7s | %3s |" % ("ms", "p50", "p90", "max", "n"))
print("|" + "-" * 36 + "|---------|---------|---------|-----|")
for line in open(sys.argv[1]):
    rec = json.loads(line)
    v = rec["ms"]
    print("| %-34s | %7.0f | %7.0f | %7.0f | %3d |" % (rec["verb"].replace(":", " "), statistics.median(v), q(v, 0.9), max(v), len(v)))
EOF
