#!/bin/bash
# bind_pin_attack.sh BIN_DIR: a bind source of the approved compose file
# cannot be swapped for a link to the host user's home (issue 27, item 5;
# docs/COMPOSE.md, "Bind sources are pinned"). Rootless podman 4.3.1, runc
# and podman-compose 1.0.3 of Debian 12, as an ordinary user (as root, the
# script makes a throwaway one with tools/e2e/testuser.sh and runs itself
# as it), driven by the real installed executor (`hostbridge install
# --backend compose`, then `hostbridge-executor watch`; no systemd).
#
# One service, app, binds ./src to /srv/src. A "secret" dir stands for the
# user's home: the agent wins a try when the running container shows the
# secret's file under /srv/src. The compose CLI the install records is a
# wrapper around the real podman-compose that, when armed, swaps src for a
# link to the secret dir just before the engine starts, and holds it until
# the command ends: after the bridge's walk and pin, the most favourable
# moment an agent could ever win. Checked:
#
#  1. the harness attacks: plain podman-compose on the checkout, same
#     wrapper, restart app 50 times: the secret is mounted in at least 40;
#  2. install and doctor name the control's container (created before pinning, it
#     stores the checkout path); through the bridge, restart app 50 times:
#     never; the container's
#     stored bind source is the pin (<run_dir>/.hostbridge-binds/src), not
#     the checkout, even when `up` created it with the swap in place;
#  3. fail closed: app stopped and the engine's pause process killed
#     between the pin and the start (its namespaces, and the pin with them,
#     are gone; a running container's conmon would have kept them): the
#     container does not run with an empty /srv/src; the next request pins
#     again and app runs with the checkout's files.
#  4. a container created before pinning (its stored source the checkout
#     path, without the install's label) restarted through the bridge,
#     once without and three times with the swap won: never started, and
#     the answer and the audit say app has no container of the bridge's;
#     started outside the bridge with the swap, doctor names it; removed,
#     up creates it pinned.
#
# Everything made is named after hbbp<pid> and removed on exit. Exit 77,
# reason printed, where rootless podman, podman-compose or a static busybox
# is missing.
# shellcheck disable=SC2016
set -uo pipefail

[ $# -eq 1 ] || { echo "usage: bind_pin_attack.sh BIN_DIR" >&2; exit 64; }
bin=$(readlink -f -- "$1")
self=$(readlink -f -- "${BASH_SOURCE[0]}")
repo=$(readlink -f -- "$(dirname -- "$self")/../..")
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

skip() {
    echo "SKIP: $*"
    exit 77
}
for tool in podman podman-compose python3 setpriv; do
    command -v "$tool" >/dev/null || skip "$tool is not installed"
done
busybox=$(command -v busybox) || skip "busybox is not installed"
[[ $(LC_ALL=C ldd "$busybox" 2>&1) == *"not a dynamic executable"* ]] ||
    skip "$busybox is not statically linked (busybox-static)"
[ -x "$bin/hostbridge" ] || { echo "no $bin/hostbridge: build first" >&2; exit 1; }

# ------------------------------------------------------------------ as root: a throwaway user

if [ "$(id -u)" -eq 0 ]; then
    command -v setpriv >/dev/null || skip "setpriv is not installed"
    exec "$repo/tools/e2e/run-as-test-user.sh" hb-e2e-pin "$bin" tests/e2e/bind_pin_attack.sh
fi

# ------------------------------------------------------------------ as the user

[ -n "${XDG_RUNTIME_DIR:-}" ] || skip "XDG_RUNTIME_DIR is not set (rootless podman needs it)"
hb=$bin/hostbridge
name=hbbp$$
work=$(mktemp -d "$HOME/$name.XXXXXX")
P=$work/$name # the checkout; install names its compose project after it (pname, below)
slug=$name
container="" # app's, once pname is known
watch_pid=""
export CONTAINERS_CONF=$work/containers.conf
cp "$repo/examples/demo-app/containers.conf" "$CONTAINERS_CONF"
if ! info=$(podman info 2>&1 >/dev/null); then
    rm -rf -- "$work"
    skip "rootless podman does not work here as $(id -un) (podman info: $(tail -n 3 <<<"$info"))"
fi

cleanup() {
    [ -z "$watch_pid" ] || { kill -TERM "$watch_pid" 2>/dev/null && wait "$watch_pid" 2>/dev/null; }
    podman rm -f -t 0 "$container" >/dev/null 2>&1
    podman network exists "${pname:-$name}_default" 2>/dev/null && podman network rm -f "${pname:-$name}_default" >/dev/null 2>&1
    podman rmi -f "localhost/$name:1" >/dev/null 2>&1
    [ -e "$P/src.real" ] && rm -f "$P/src" && mv "$P/src.real" "$P/src"
    rm -rf -- "$work"
}
trap cleanup EXIT
trap 'echo "interrupted"; exit 130' INT TERM HUP

# shellcheck source=tests/e2e/verdicts.sh
. "$repo/tests/e2e/verdicts.sh"
# The compose project install names; the harness's own compose runs use it
# (-p), as a person's runs by hand on the bridge's project do (docs/COMPOSE.md).
pname=$(compose_project_of "$P")
container=${pname}_app_1

# ------------------------------------------------------------------ the home, the project, the image

secret=$work/secret
mkdir -p "$secret" || die "mkdir"
token="SECRET-$name-$RANDOM$RANDOM"
echo "$token" >"$secret/id_rsa"

e2e_bind_app "$P" "localhost/$name:1" "$work/rootfs"

# The compose CLI and the engine the bridge runs: the real ones, after the
# swap when armed. The bridge's `restart S` is the engine's own restart
# (docs/ARGV-TABLE.md), so the engine is wrapped as the compose CLI is:
# install records the first podman on its PATH.
race=$work/race
mkdir -p "$race" "$work/racebin"
cat >"$work/racebin/hook" <<EOF
if [ -e $race/armed ]; then
    mv $P/src $P/src.real && ln -s $secret $P/src
fi
if [ -e $race/kill-pause ]; then
    # Nothing left in the engine's namespaces (a running container's
    # conmon would keep them): as after a reboot or podman system migrate.
    /usr/bin/podman stop -t 0 $container >/dev/null 2>&1
    kill -KILL "\$(cat $XDG_RUNTIME_DIR/libpod/tmp/pause.pid)"
fi
EOF
cat >"$work/racebin/podman-compose" <<EOF
#!/bin/bash
case " \$* " in *" restart "* | *" up "* | *" start "*) . $work/racebin/hook ;; esac
exec env CONTAINERS_CONF=$CONTAINERS_CONF /usr/bin/podman-compose "\$@"
EOF
cat >"$work/racebin/podman" <<EOF
#!/bin/bash
case " \$* " in *" restart "*) . $work/racebin/hook ;; esac
exec /usr/bin/podman "\$@"
EOF
chmod 0755 "$work/racebin/podman-compose" "$work/racebin/podman"
restore() { # the agent's swap undone after each try
    rm -f "$race/armed"
    if [ -L "$P/src" ]; then rm -f "$P/src" && mv "$P/src.real" "$P/src"; fi
}
# What the running app shows under /srv/src: "secret", "checkout" or "none".
seen() {
    local got
    got=$(podman exec "$container" cat /srv/src/id_rsa /srv/src/marker 2>/dev/null)
    case $got in
        *"$token"*) echo secret ;;
        *checkout*) echo checkout ;;
        *) echo none ;;
    esac
}
running() { [ "$(podman container inspect --format '{{.State.Running}}' "$container" 2>/dev/null)" = true ]; }
stored_source() {
    podman container inspect --format '{{range .Mounts}}{{if eq .Destination "/srv/src"}}{{.Source}}{{end}}{{end}}' \
        "$container" 2>/dev/null
}

# ------------------------------------------------------------------ 1. the harness attacks

compose=("$work/racebin/podman-compose" -p "$pname" -f "$P/compose.yaml")
"${compose[@]}" up -d >"$work/control.log" 2>&1 || die "control: podman-compose up: $(tail -5 "$work/control.log")"
[ "$(seen)" = checkout ] || die "control: app does not show the checkout's src after up ($(seen))"
# The tries restart app as `podman-compose restart app` does and as the
# bridge's restart does (docs/ARGV-TABLE.md): the engine's own restart of
# the container; podman-compose 1.0.3 adds only a 1 s sleep after it,
# which cost this test 50 s.
won=0
for _ in $(seq 50); do
    : >"$race/armed"
    "$work/racebin/podman" restart "$container" >>"$work/control.log" 2>&1
    restore
    [ "$(seen)" = secret ] && won=$((won + 1))
done
echo "control: the engine's restart of the container podman-compose made on the checkout mounted the secret in $won of 50 restarts"
if [ "$won" -ge 40 ]; then pass "the harness wins against the unprotected path ($won/50)"; else
    fail "the harness won only $won of 50 against the engine's plain restart: it does not attack"; fi

# ------------------------------------------------------------------ 2. through the bridge

out=$(PATH=$work/racebin:$PATH "$hb" install --project-dir "$P" --backend compose --compose-file compose.yaml \
    --compose-cmd "$work/racebin/podman-compose" --slug "$slug" \
    --rate-limit 1000/600 --read-rate-limit 1000/60 --no-systemd --accept-uncontained-engine 2>&1) ||
    die "hostbridge install: $out"
config=$HOME/.config/hostbridge/$slug/bridge.json
policy=$HOME/.config/hostbridge/$slug/policy.conf
# Rootless podman-compose with every bind pinned: the binds hold nothing,
# but the engine runs as the person (common/engine_hold.hpp); the person
# accepted that here, so install seeds up auto and says what it means.
if grep -qx MODE_up=auto "$policy" && grep -q "WARNING: --accept-uncontained-engine: up and rebuild run unattended" <<<"$out" &&
    ! grep -q "unpinned" <<<"$out"; then
    pass "a rootless podman-compose install with pinned binds, the uncontained engine accepted, seeds MODE_up=auto and warns"
else
    fail "the seeded policy holds up or install said nothing: $(grep '^MODE_up' "$policy"); $out"
fi
python3 - "$config" <<'PY' || die "bridge.json pins no bind source: $(cat "$config")"
import json, sys
pins = json.load(open(sys.argv[1]))["pins"]
assert pins["sources"] == ["src"], pins
assert pins["engine"].endswith("/racebin/podman"), pins
assert pins["binary"].endswith("/hostbridge-pin"), pins
PY
run_dir=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_dir"])' "$config")
pin=$run_dir/.hostbridge-binds/src
grep -rqs -- "$pin" "$HOME/.local/state/hostbridge/$slug/rendered" ||
    fail "the rendered compose file does not name the pin $pin"
# The control's container stores the checkout path: install names it, with
# the line that removes it (issue 48: it said nothing, then doctor exited 1),
# and so does doctor.
if [[ $out == *"container $container bind-mounts $P/src, which is neither a pin"* ]] &&
    grep -qE "^/[^ ]*/podman rm -f $container\$" <<<"$out"; then
    pass "install names the container created before pinning, and how to remove it"
else
    fail "install does not name $container, which bind-mounts $P/src unpinned: $out"
fi
doctor=$("$hb" doctor --slug "$slug" 2>&1)
if [[ $doctor == *"container $container bind-mounts $P/src, which is neither a pin"* ]]; then
    pass "doctor names the container created before pinning"
else
    fail "doctor does not name $container, which bind-mounts $P/src unpinned: $doctor"
fi
podman rm -f -t 0 "$container" >/dev/null 2>&1
client=$P/untracked/hostbridge/request
[ -x "$client" ] || die "install dropped no client at $client"
"$HOME/.local/lib/hostbridge/$slug/hostbridge-executor" watch --config "$config" \
    </dev/null >>"$work/watch.log" 2>&1 &
watch_pid=$!
echo "installed $slug (compose backend, rootless podman-compose); watch pid $watch_pid"

request() { # VERB [ARG]: REQ_RC, REQ_OUT
    REQ_OUT=$("$client" --timeout 300 "$@" 2>&1)
    REQ_RC=$?
}

# up creates app with the swap in place: the container stores the pin.
: >"$race/armed"
request up
restore
[ "$REQ_RC" -eq 0 ] || die "bridge up failed ($REQ_RC): $(printf '%s' "$REQ_OUT" | tail -n 12)"
if [ "$(stored_source)" = "$pin" ]; then pass "up stores the pin as app's bind source"; else
    fail "app's stored bind source is '$(stored_source)', not the pin $pin"; fi
now=$(seen)
if [ "$now" = checkout ]; then pass "up with src swapped mounts the checkout's src"; else
    fail "up with src swapped: app shows '$now' under /srv/src"; fi

won=0 restarted=0
for _ in $(seq 50); do
    started=$(podman container inspect --format '{{.State.StartedAt}}' "$container" 2>/dev/null)
    : >"$race/armed"
    request restart app
    restore
    [ "$REQ_RC" -eq 0 ] || fail "bridge restart app failed ($REQ_RC): $(printf '%s' "$REQ_OUT" | tail -n 5)"
    # A try counts only if the engine really started app again (podman-compose
    # answers 0 after a refused start too).
    running && [ "$(podman container inspect --format '{{.State.StartedAt}}' "$container")" != "$started" ] &&
        restarted=$((restarted + 1))
    [ "$(seen)" = secret ] && won=$((won + 1))
done
echo "through the bridge: the secret was mounted in $won of 50 restarts ($restarted really started app again)"
[ "$restarted" -eq 50 ] || fail "only $restarted of 50 bridge restarts started app again: the tries do not all attack"
if [ "$won" -eq 0 ]; then pass "a pinned bind source cannot be swapped (0/50)"; else
    fail "the agent's swap reached the container $won times of 50"; fi
[ "$(seen)" = checkout ] || fail "after the tries, app does not show the checkout's src ($(seen))"

# ------------------------------------------------------------------ 3. fail closed

pause_pid() { cat "$XDG_RUNTIME_DIR/libpod/tmp/pause.pid" 2>/dev/null; }
pause_before=$(pause_pid)
pause_start=$(awk '{ print $22 }' "/proc/$pause_before/stat" 2>/dev/null)
: >"$race/kill-pause"
request restart app
rm -f "$race/kill-pause"
echo "restart with the pause process killed answered $REQ_RC: $(printf '%s' "$REQ_OUT" | tail -n 6)"
# The same process (pid and start time), not a zombie: without systemd as
# PID 1 nothing may have reaped the killed one yet, and its pid may be reused.
alive() { [ -r "/proc/$1/stat" ] && awk -v t="$2" '$22 == t && $3 != "Z" { ok = 1 } END { exit !ok }' "/proc/$1/stat"; }
if [ -z "$pause_before" ] || [ -z "$pause_start" ] || [ "$(pause_pid)" = "$pause_before" ] || alive "$pause_before" "$pause_start"; then
    fail "the pause process ($pause_before) was not replaced (now $(pause_pid))"
fi
if running && [ "$(seen)" != checkout ]; then
    fail "with the pin gone, app runs showing '$(seen)' under /srv/src"
else
    pass "with the pin gone, app does not run on an empty bind (running: $(running && echo yes || echo no))"
fi
request restart app
if running && [ "$(seen)" = checkout ]; then pass "the next request pins again: app runs on the checkout's src"; else
    fail "after the pause process came back, app is not running on the checkout's src ($REQ_RC): $(printf '%s' "$REQ_OUT" | tail -n 8)"; fi

# ------------------------------------------------------------------ 4. checked after each start

# A container created before pinning (plain podman-compose on the checkout,
# as in 1) stores the checkout path, which runc resolves again at every
# start: there the swap wins. It lacks the install's label, and the
# bridge's restart is the engine's restart of the install's labelled
# containers (docs/ARGV-TABLE.md): through the bridge it is never started,
# swap or not, and the answer says app has no container of the bridge's;
# install and doctor name it (above); removed, up creates it with the pin.
podman rm -f -t 0 "$container" >/dev/null 2>&1
"${compose[@]}" up -d >>"$work/control.log" 2>&1 || die "control: podman-compose up again: $(tail -5 "$work/control.log")"
[ "$(stored_source)" = "$P/src" ] || die "the control's container stores '$(stored_source)', not $P/src"
podman stop -t 0 "$container" >/dev/null 2>&1
audit=$HOME/.local/state/hostbridge/$slug/audit.jsonl
untouched=0
for try in 0 1 2 3; do
    [ "$try" -eq 0 ] || : >"$race/armed" # the first without the swap
    request restart app
    restore
    if [ "$REQ_RC" -ne 0 ] && [[ $REQ_OUT == *"app: no container"* ]] && ! running; then
        untouched=$((untouched + 1))
    else
        echo "try $try: answered $REQ_RC, running: $(running && echo yes || echo no): $(printf '%s' "$REQ_OUT" | tail -n 8)"
    fi
done
if [ "$untouched" -eq 4 ]; then pass "a container the bridge did not make is never started by its restart, 4 of 4 (3 with the swap won), and the answer says so"; else
    fail "the bridge's restart started or misreported the container it did not make in $((4 - untouched)) of 4 tries"; fi
if [ "$(grep -c '"reason":"did not settle: app: no container"' "$audit")" -ge 4 ]; then pass "the audit records each refusal"; else
    fail "the audit does not record the refusals: $(tail -n 2 "$audit")"; fi
# Started outside the bridge with the swap in place (the control's path):
# doctor names it.
: >"$race/armed"
"${compose[@]}" start app >>"$work/control.log" 2>&1
restore
if [ "$(seen)" = secret ]; then
    doctor=$("$hb" doctor --slug "$slug" 2>&1)
    if [[ $doctor == *"container $container bind-mounts $P/src, which is neither a pin"* ]]; then
        pass "doctor names the running container that stores the checkout path"
    else
        fail "doctor does not name $container, which runs with the secret at /srv/src: $doctor"
    fi
else
    fail "control: a plain start with the swap in place did not mount the secret ($(seen)): the doctor check is not attacked"
fi
# What the answer says to do: remove it, and up creates it with the pin.
podman rm -f -t 0 "$container" >/dev/null 2>&1
request up
if [ "$REQ_RC" -eq 0 ] && [ "$(stored_source)" = "$pin" ] && [ "$(seen)" = checkout ]; then
    pass "removed, up creates it with the pin and it passes the check"
else
    fail "after removing it, up answered $REQ_RC, source '$(stored_source)': $(printf '%s' "$REQ_OUT" | tail -n 6)"
fi

if grep -rqs -- "$token" "$P/untracked"; then fail "the secret reached the agent's files"; fi
echo "$failures failure(s)"
[ "$failures" -eq 0 ]
