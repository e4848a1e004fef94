#!/bin/bash
# stack-check.sh: drives a copy of examples/demo-app through every `stack`
# verb on real podman, rootful or rootless (whoever runs it), and checks the
# observable facts, including what join-network will rely on: a container
# connected to the application network afterwards reaches http://api:8080/
# by name, with no host port published. Removes everything it made.
#
# Usage: stack-check.sh PROJECT_DIR     (a copy of examples/demo-app whose
#                                        name starts with the run's prefix)
# Run it inside `usermgr.sh run` when rootful podman must share the
# manager's mount namespace; it needs no manager itself.
set -uo pipefail

dir=$(readlink -f -- "${1:?usage: stack-check.sh PROJECT_DIR}")
stack=$dir/stack
[ -x "$stack" ] || { echo "stack-check: no $stack" >&2; exit 64; }
export CONTAINERS_CONF=${CONTAINERS_CONF:-$dir/containers.conf}
project=$(basename -- "$dir")
agent=$project-agent
failures=0

pass() { echo "PASS: $*"; }
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}
now_ns() { date +%s%N; }
timed() { # LABEL CMD...: run, print its time, keep its output in $out
    local t0 rc
    t0=$(now_ns)
    out=$("${@:2}" 2>&1)
    rc=$?
    echo "$1_ms=$((($(now_ns) - t0) / 1000000)) rc=$rc"
    return $rc
}
started() { podman container inspect --format '{{.State.StartedAt}}' "$project-$1" 2>/dev/null; }
image_id() { podman container inspect --format '{{.Image}}' "$project-$1" 2>/dev/null; }

cleanup() {
    podman rm -f -t 0 "$agent" >/dev/null 2>&1
    podman network rm "$agent-net" >/dev/null 2>&1
    "$stack" purge >/dev/null 2>&1 || echo "stack-check: stack purge failed" >&2
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

echo "mode=$([ "$(id -u)" -eq 0 ] && echo rootful || echo rootless) project=$project"
if timed stack_start_cold "$stack" start; then pass "start: $out"; else fail "start: $out"; fi
if timed stack_health "$stack" health; then pass "health"; else fail "health: $out"; fi
timed stack_status "$stack" status && grep -q "^api *running" <<<"$out" &&
    pass "status shows api running" || fail "status: $out"

before=$(started api)
if timed stack_restart_api "$stack" restart api && [ "$(started api)" != "$before" ]; then
    pass "restart api: start time $before -> $(started api)"
else
    fail "restart api: $out (start time $before -> $(started api))"
fi

# A real code change, then build: the new image runs.
old_image=$(image_id web)
sed -i 's|<h1>demo-app web</h1>|<h1>demo-app web</h1><p>changed by stack-check</p>|' "$dir/services/web/index.html.in"
if timed stack_build_web "$stack" build web && [ "$(image_id web)" != "$old_image" ] &&
    podman exec "$project-web" wget -q -O - http://127.0.0.1:80/ | grep -q 'changed by stack-check'; then
    pass "build web: new image runs and serves the change"
else
    fail "build web: $out"
fi
timed stack_build_db "$stack" build db && fail "build db should be refused" || pass "build db refused: $out"
timed stack_restart_bogus "$stack" restart nosuch && fail "restart nosuch accepted" || pass "restart nosuch refused"

if timed stack_logs_api "$stack" logs api && grep -q 'api: listening' <<<"$out"; then
    pass "logs api"
else
    fail "logs api: $out"
fi

# init resets the data: add a record, init, it is gone.
podman exec "$project-db" sh -c 'echo 99,mallory,intruder >>/data/records'
if timed stack_init "$stack" init &&
    [ "$(podman exec "$project-db" sh -c 'wc -l </data/records')" -eq 5 ]; then
    pass "init: db back to its 5 seed records"
else
    fail "init: $out"
fi

# join-network's building block: an agent container, no host port, no
# engine inside, connected afterwards, reaches the api by name. It starts on
# a bridge network of its own: rootless podman's default (slirp4netns)
# cannot be connected to another network ("invalid network mode").
podman network create "$agent-net" >/dev/null || fail "network create $agent-net"
podman run -d --init --name "$agent" --network "$agent-net" "localhost/$project-db:latest" \
    sh -c 'while :; do sleep 1; done' >/dev/null || fail "agent container did not start"
if podman exec "$agent" timeout 3 wget -q -O - http://api:8080/ >/dev/null 2>&1; then
    fail "agent reached the api before joining the network"
fi
if timed network_connect podman network connect "$project-network" "$agent"; then
    answer=$(podman exec "$agent" timeout 5 wget -q -O - http://api:8080/ 2>&1)
    if grep -q '"status":"ok"' <<<"$answer"; then
        pass "agent joined $project-network and reached http://api:8080/: $answer"
    else
        fail "agent joined but http://api:8080/ answered: $answer"
    fi
else
    fail "network connect: $out"
fi

if timed stack_stop "$stack" stop && ! grep -q ' running ' <<<"$("$stack" status)"; then
    pass "stop"
else
    fail "stop: $out"
fi
timed stack_start_warm "$stack" start >/dev/null || fail "start after stop: $out"

echo "failures=$failures"
[ "$failures" -eq 0 ]
