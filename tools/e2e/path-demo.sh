#!/bin/bash
# path-demo.sh: the mechanism hostbridge relies on, shown on real parts and
# timed. Run it inside `usermgr.sh run` (it needs the user manager), as the
# manager's user, rootful (root) or rootless:
#
#   a .path unit watches DIR/requests/*.req; a file appearing there starts a
#   oneshot .service, which runs `systemd-run --user --scope -- podman
#   restart CTR`; the container restarts and keeps running after the oneshot
#   exits.
#
# Usage: path-demo.sh --prefix P --workdir DIR [--iterations N] [--contrast]
#   --contrast  also show why the scope is needed: the same restart run
#               directly in the oneshot dies with it
# Prints key=value figures (milliseconds) and PASS/FAIL lines; exit 0 only
# if every check passed. Cleans up its units, container and image.
set -uo pipefail

here=$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")
prefix="" work="" iterations=5 contrast=0
while [ $# -gt 0 ]; do
    case $1 in
        --prefix) prefix=${2:?}; shift 2 ;;
        --workdir) work=${2:?}; shift 2 ;;
        --iterations) iterations=${2:?}; shift 2 ;;
        --contrast) contrast=1; shift ;;
        *) echo "usage: path-demo.sh --prefix P --workdir DIR [--iterations N] [--contrast]" >&2; exit 64 ;;
    esac
done
[[ $prefix =~ ^[a-z0-9][a-z0-9-]{5,40}$ ]] || { echo "path-demo: bad --prefix" >&2; exit 64; }
[[ $iterations =~ ^[1-9][0-9]{0,2}$ ]] || { echo "path-demo: bad --iterations" >&2; exit 64; }
if [ -z "$work" ] || [ ! -d "$work" ] || [ ! -w "$work" ]; then
    echo "path-demo: --workdir must be a writable directory" >&2
    exit 64
fi
work=$(readlink -f -- "$work")
[ -n "${XDG_RUNTIME_DIR:-}" ] || { echo "path-demo: run me inside usermgr.sh run" >&2; exit 64; }

export CONTAINERS_CONF=${CONTAINERS_CONF:-$here/../../examples/demo-app/containers.conf}
CONTAINERS_CONF=$(readlink -f -- "$CONTAINERS_CONF")
PODMAN=$(command -v podman) || { echo "SKIP: podman missing" >&2; exit 77; }
unit=$prefix-trigger
ctr=$prefix-ctr
image=localhost/$prefix-img:latest
unitdir=${XDG_CONFIG_HOME:-$HOME/.config}/systemd/user
failures=0

now_ns() { date +%s%N; }
ms() { echo $(((${2} - ${1}) / 1000000)); } # START_NS END_NS
pass() { echo "PASS: $*"; }
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'; }
summary() { # NAME < values
    local values
    values=$(cat)
    echo "$1_ms_median=$(median <<<"$values") $1_ms_min=$(sort -n <<<"$values" | head -1) $1_ms_max=$(sort -n <<<"$values" | tail -1) n=$(wc -l <<<"$values")"
}
started_at() { "$PODMAN" container inspect --format '{{.State.StartedAt}}' "$ctr" 2>/dev/null; }
running() { [ "$("$PODMAN" container inspect --format '{{.State.Running}}' "$ctr" 2>/dev/null)" = true ]; }

cleanup() {
    systemctl --user stop "$unit.path" "$unit.service" 2>/dev/null
    rm -f "$unitdir/$unit.path" "$unitdir/$unit.service"
    systemctl --user daemon-reload 2>/dev/null
    "$PODMAN" rm -f -t 0 "$ctr" >/dev/null 2>&1
    "$PODMAN" rmi -f "$image" >/dev/null 2>&1
    rm -rf "$work/requests" "$work/claimed" "$work/done" "$work/tmp" "$work/rootfs" \
        "$work/rootfs.tar" "$work/handler.sh" "$work/handler.log"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

mode=rootful
[ "$(id -u)" -eq 0 ] || mode=rootless
echo "mode=$mode user=$(id -un) podman=$("$PODMAN" --version | awk '{ print $3 }')"

# --- an image from nothing but busybox, and a container to restart
mkdir -p "$work/rootfs/bin" "$work/rootfs/tmp" "$work/requests" "$work/claimed" "$work/done" "$work/tmp"
cp /bin/busybox "$work/rootfs/bin/busybox"
ln -s busybox "$work/rootfs/bin/sh"
ln -s busybox "$work/rootfs/bin/sleep"
tar -C "$work/rootfs" -cf "$work/rootfs.tar" .
t0=$(now_ns)
"$PODMAN" import -q --change 'CMD ["/bin/sh", "-c", "while :; do sleep 1; done"]' \
    "$work/rootfs.tar" "$image" >/dev/null || { fail "podman import"; exit 1; }
echo "podman_import_ms=$(ms "$t0" "$(now_ns)")"
t0=$(now_ns)
"$PODMAN" run -d --init --name "$ctr" "$image" >/dev/null || { fail "podman run"; exit 1; }
echo "podman_run_d_ms=$(ms "$t0" "$(now_ns)")"

# --- the units under test
cat >"$work/handler.sh" <<EOF
#!/bin/sh
# oneshot: claims every request; each names how to restart: scope or direct.
set -x
start=\$(date +%s%N)
for f in "$work"/requests/*.req; do
    [ -e "\$f" ] || continue
    b=\${f##*/}
    mv "\$f" "$work/claimed/\$b" || continue
    how=\$(cat "$work/claimed/\$b")
    s0=\$(date +%s%N)
    if [ "\$how" = direct ]; then
        "$PODMAN" restart -t 2 "$ctr" >/dev/null
    else
        systemd-run --user --scope --quiet -- "$PODMAN" restart -t 2 "$ctr" >/dev/null
    fi
    rc=\$?
    echo "\$rc \$start \$s0 \$(date +%s%N)" >"$work/done/\$b.tmp"
    mv "$work/done/\$b.tmp" "$work/done/\$b.result"
done
EOF
chmod 0755 "$work/handler.sh"
mkdir -p "$unitdir"
cat >"$unitdir/$unit.path" <<EOF
[Unit]
Description=path-demo: watch $work/requests

[Path]
PathExistsGlob=$work/requests/*.req
Unit=$unit.service
EOF
cat >"$unitdir/$unit.service" <<EOF
[Unit]
Description=path-demo: handle requests
# One start per request: the default limit (5 starts in 10 s) fails a burst.
StartLimitIntervalSec=0

[Service]
Type=oneshot
Environment=CONTAINERS_CONF=$CONTAINERS_CONF
ExecStart=$work/handler.sh
# Bounds the contrast case: what the oneshot leaves behind is killed at its stop.
TimeoutStopSec=10
StandardOutput=append:$work/handler.log
StandardError=append:$work/handler.log
EOF
# systemd-analyze warns without failing: any output is a failure.
lint=$(systemd-analyze --user verify "$unitdir/$unit.path" "$unitdir/$unit.service" 2>&1)
if [ -z "$lint" ]; then pass "units lint clean"; else fail "systemd-analyze verify: $lint"; fi
systemctl --user daemon-reload
systemctl --user start "$unit.path" || { fail "start $unit.path"; exit 1; }

# wait_request NAME: until the oneshot has handled NAME and exited.
wait_request() {
    local i state
    for ((i = 0; i < 600; i++)); do
        [ -e "$work/done/$1.result" ] && break
        sleep 0.02
    done
    [ -e "$work/done/$1.result" ] || return 1
    for ((i = 0; i < 750; i++)); do
        state=$(systemctl --user is-active "$unit.service")
        case $state in active | activating | deactivating | reloading) sleep 0.02 ;; *) return 0 ;; esac
    done
    return 1
}

publish() { # NAME CONTENT: atomically, as the bridge's clients do
    printf '%s\n' "$2" >"$work/tmp/$1"
    mv "$work/tmp/$1" "$work/requests/$1"
}

: >"$work/trigger.ms"
: >"$work/scope_restart.ms"
: >"$work/roundtrip.ms"
for ((n = 1; n <= iterations; n++)); do
    req=req-$n.req
    before=$(started_at)
    t0=$(now_ns)
    publish "$req" scope
    if ! wait_request "$req"; then
        fail "request $n: no answer from the .path unit"
        continue
    fi
    t1=$(now_ns)
    read -r rc start s0 s1 <"$work/done/$req.result"
    echo $(((start - t0) / 1000000)) >>"$work/trigger.ms"
    echo $(((s1 - s0) / 1000000)) >>"$work/scope_restart.ms"
    echo $(((t1 - t0) / 1000000)) >>"$work/roundtrip.ms"
    [ "$rc" -eq 0 ] || fail "request $n: systemd-run --scope podman restart exited $rc"
    # The oneshot is gone now; the container must have restarted and stay up.
    sleep 0.3
    after=$(started_at)
    if running && [ "$after" != "$before" ]; then
        pass "request $n: restarted by the .path-triggered oneshot, still running after it exited"
    else
        fail "request $n: container running=$(running && echo yes || echo no), started before=$before after=$after"
    fi
done
summary path_trigger_to_oneshot_start <"$work/trigger.ms"
summary scope_podman_restart <"$work/scope_restart.ms"
summary publish_to_oneshot_exit <"$work/roundtrip.ms"

# --- the costs on their own, from the harness (inside the delegated subtree)
: >"$work/scope.ms"
: >"$work/restart.ms"
for ((n = 1; n <= iterations; n++)); do
    t0=$(now_ns)
    systemd-run --user --scope --quiet -- true || fail "systemd-run --user --scope true"
    echo $((($(now_ns) - t0) / 1000000)) >>"$work/scope.ms"
    t0=$(now_ns)
    "$PODMAN" restart -t 2 "$ctr" >/dev/null || fail "podman restart"
    echo $((($(now_ns) - t0) / 1000000)) >>"$work/restart.ms"
done
summary systemd_run_scope_true <"$work/scope.ms"
summary podman_restart <"$work/restart.ms"
rm -f "$work"/*.ms

# --- the contrast: without the scope the container dies with the oneshot
if [ "$contrast" -eq 1 ]; then
    publish direct.req direct
    if wait_request direct.req; then
        sleep 0.5
        state=$("$PODMAN" container inspect --format '{{.State.Status}} {{.State.ExitCode}}' "$ctr")
        if running; then
            echo "contrast: restarted directly in the oneshot, the container survived ($state)"
        else
            pass "contrast: restarted directly in the oneshot, the container died with it ($state)"
        fi
    else
        fail "contrast request not handled: $(systemctl --user show -p ActiveState -p Result "$unit.service" | tr '\n' ' '), log: $(tail -15 "$work/handler.log" 2>/dev/null)"
    fi
fi

echo "failures=$failures"
[ "$failures" -eq 0 ]
