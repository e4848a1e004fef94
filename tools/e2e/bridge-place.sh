#!/bin/bash
# bridge-place.sh: makes the place a bridge session runs in, runs it, and
# removes everything afterwards (also on failure and on SIGINT/SIGTERM/SIGHUP),
# then proves with leftovers.sh that nothing of the run is left. Shared by
# ./demo, tests/e2e/bridge_e2e.sh and bench/real_path.sh.
#
# Usage: bridge-place.sh [OPTIONS] KIND BIN_DIR [COMMAND [ARG...]]
#   KIND      root      root's own systemd --user manager, rootful podman
#                       (in watch mode: whoever runs it, with a throwaway HOME)
#             rootless  a throwaway user (tools/e2e/testuser.sh) with its own
#                       manager and rootless podman; no --allow-root
#             compose   rootless, compose backend (podman-compose)
#             engine    compose, with the engine as its own user: `hostbridge
#                       engine setup` makes PREFIX-e, whose own manager serves
#                       its podman socket; the session goes through it
#                       (docs/ENGINE-USER.md); `engine remove` at the end
#   BIN_DIR   holds hostbridge, hostbridge-executor, hostbridge-parser, hostbridge-engine-relay,
#             hostbridge-snapshot
#   COMMAND   default: tools/e2e/bridge-session.sh run; it gets
#             --project DIR --bin BIN_DIR --mode M --backend B --rate-limit R
#             appended. The teardown is always bridge-session.sh teardown.
#             The session's user runs copies (tools/e2e/stage.sh) of the
#             scripts, demo app and binaries, in /tmp/PREFIX.tools, so the
#             checkout may sit in a directory only root enters; --bin names
#             the copies. A COMMAND given here must be reachable by that user.
# OPTIONS
#   --prefix P        names everything of the run (default hb-e2e-KIND-XXXXXX;
#                     a throwaway user's name must start with hb-e2e-)
#   --rate-limit N/S  passed on (default 11/600)
#   --watch-fallback  where no user manager can run (not root, systemd is
#                     PID 1, no cgroup delegation), run in --mode watch
#                     instead of skipping, and say why
#   --force-watch     --mode watch even where a manager could run
# Exit: COMMAND's status; 77 (reason printed) where it cannot run here;
# 1 when something of the run was left behind.
set -uo pipefail

SELF=$(readlink -f -- "${BASH_SOURCE[0]}")
tools=$(dirname -- "$SELF")
readonly SELF tools

usage() {
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$SELF" >&2
    exit 64
}
skip() {
    echo "SKIP: $*"
    exit 77
}

prefix="" rate_limit=11/600 fallback=0 force_watch=0
while [ $# -gt 0 ]; do
    case $1 in
        --prefix) prefix=${2:?}; shift 2 ;;
        --rate-limit) rate_limit=${2:?}; shift 2 ;;
        --watch-fallback) fallback=1; shift ;;
        --force-watch) force_watch=1; fallback=1; shift ;;
        -*) usage ;;
        *) break ;;
    esac
done
[ $# -ge 2 ] || usage
kind=$1 bin=$2
shift 2
case $kind in root | rootless | compose | engine) ;; *) usage ;; esac
[ -d "$bin" ] || { echo "bridge-place: no directory $bin" >&2; exit 64; }
bin=$(readlink -f -- "$bin")
# The executor, parser and engine relay beside hostbridge (a build tree) or in
# ../lib/hostbridge (the package): where hostbridge itself looks.
[ -x "$bin/hostbridge" ] || { echo "bridge-place: $bin/hostbridge is not built" >&2; exit 1; }
for b in hostbridge-executor hostbridge-parser hostbridge-engine-relay hostbridge-snapshot hostbridge-pin; do
    [ -x "$bin/$b" ] || [ -x "$bin/../lib/hostbridge/$b" ] ||
        { echo "bridge-place: $bin/$b is not built" >&2; exit 1; }
done
[ -n "$prefix" ] || prefix=hb-e2e-$kind-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
[[ $prefix =~ ^hb-(e2e|demo)-[a-z0-9-]{1,24}$ ]] || { echo "bridge-place: bad prefix '$prefix'" >&2; exit 64; }

# --- what this host can do
command -v podman >/dev/null || skip "podman missing (tools/deps.sh test)"
command -v runc >/dev/null || skip "runc missing (tools/deps.sh test)"
{ [ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1; } || skip "busybox-static missing (tools/deps.sh test)"
if [ "$kind" = compose ] || [ "$kind" = engine ]; then
    command -v podman-compose >/dev/null || skip "podman-compose missing (tools/deps.sh test)"
fi
if [ "$kind" = engine ]; then
    command -v setfacl >/dev/null || skip "setfacl missing (tools/deps.sh test: acl)"
fi
mode=systemd why=""
if [ "$force_watch" -eq 1 ]; then
    mode=watch why="asked for"
elif [ "$(id -u)" -ne 0 ]; then
    mode=watch why="starting a user manager of its own needs root"
elif ! why=$("$tools/usermgr.sh" check 2>&1); then
    mode=watch why=${why#SKIP: }
fi
if [ "$mode" = watch ] && [ "$fallback" -eq 0 ]; then
    skip "$why"
fi
if [ "$kind" != root ] && [ "$mode" = watch ]; then
    skip "$why (the watch fallback runs as the caller, not as a throwaway user)"
fi

work=/tmp/$prefix
project=$work/$prefix
# What the session's user runs and reads: a copy it can reach wherever the
# checkout and the build tree are (a directory of mode 0700, as /root).
stage=/tmp/$prefix.tools
sbin=$stage/bin
stools=$stage/tools/e2e
backend=stack
[ "$kind" = compose ] || [ "$kind" = engine ] && backend=compose
session_args=(--project "$project" --bin "$sbin" --mode "$mode" --backend "$backend" --rate-limit "$rate_limit")
user=$(id -un)
made_user=0
rc=1
engine_user=$prefix-e engine_mgr="" engine_hold=/tmp/$prefix.engine-hold

cleanup() {
    trap '' INT TERM HUP
    cd / || true # the work dir goes away
    # In systemd mode usermgr.sh ran the teardown inside its namespace.
    if [ "$mode" = watch ] && [ -d "$work" ]; then
        HB_BRIDGE_HOME=$work/home "$stools/bridge-session.sh" teardown "${session_args[@]}"
    fi
    # The engine user's manager goes after the session's teardown (which
    # removed the containers through its socket), then the user itself.
    if [ "$kind" = engine ]; then
        rm -f "$engine_hold"
        if [ -n "$engine_mgr" ] && ! wait "$engine_mgr"; then
            echo "bridge-place: $engine_user's manager did not end cleanly"
            rc=1
        fi
        "$sbin/hostbridge" engine remove --slug "$prefix" --user "$user" --name "$engine_user" \
            >"/tmp/$prefix.engine-remove.log" 2>&1 ||
            { cat "/tmp/$prefix.engine-remove.log"; rc=1; }
        rm -f "/tmp/$prefix.engine-remove.log" "/tmp/$prefix.engine-setup.log"
    fi
    local delete_user=()
    [ "$made_user" -eq 0 ] || delete_user=(--user)
    "$tools/remove-run.sh" "$prefix" "${delete_user[@]}" "$work" "$stage" || rc=1
    exit "$rc"
}
trap cleanup EXIT
trap 'rc=130; exit 130' INT TERM HUP

mkdir -m 0755 "$work" || exit 1
"$tools/stage.sh" "$stage" "$bin" || exit 1
[ $# -gt 0 ] || set -- "$stools/bridge-session.sh" run
home_args=()
if [ "$kind" = root ]; then
    # A throwaway HOME: the bridge's config, state, units and binaries.
    mkdir -m 0700 "$work/home" || exit 1
    home_args=(--home "$work/home")
else
    out=$("$tools/testuser.sh" create "$prefix" 2>&1)
    case $? in
        0) ;;
        77) rc=77 && skip "${out#SKIP: }" ;;
        *) echo "$out" >&2 && exit 1 ;;
    esac
    made_user=1
    user=$prefix
    chown "$user:" "$work"
fi

if [ "$kind" = engine ]; then
    # Before the install (the session installs with --engine-user): setup
    # then makes the user and its units and says to install with it.
    echo "engine user: hostbridge engine setup --slug $prefix --user $user --name $engine_user"
    if ! "$sbin/hostbridge" engine setup --slug "$prefix" --user "$user" --name "$engine_user" \
        --containers-conf "$stage/examples/demo-app/containers.conf" >"/tmp/$prefix.engine-setup.log" 2>&1; then
        cat "/tmp/$prefix.engine-setup.log"
        exit 1
    fi
    sed 's/^/   /' "/tmp/$prefix.engine-setup.log"
    # The agent's container runs there too; the person shares the checkout
    # with it through the engine user's group (docs/ENGINE-USER.md).
    usermod -a -G "$(id -gn "$engine_user")" "$user" || exit 1
    # Its own systemd --user manager, kept running for the whole session:
    # it starts hostbridge-engine.socket (systemd is not PID 1 here).
    touch "$engine_hold"
    "$stools/usermgr.sh" run --name "$prefix-emgr" "$engine_user" -- \
        sh -c "while [ -e '$engine_hold' ]; do sleep 0.5; done" &
    engine_mgr=$!
    socket=$(getent passwd "$engine_user" | cut -d: -f6)/engine/podman.sock
    # The person's ACL is set after systemd binds the socket (ExecStartPost):
    # wait for it, not for the file. 600 s: a hang guard on a loaded machine.
    granted() { getfacl -p "$socket" 2>/dev/null | grep -qx "user:$user:rw-"; }
    for _ in $(seq 3000); do granted && break; sleep 0.2; done
    granted || { echo "bridge-place: $engine_user's manager gave $user no socket $socket" >&2; exit 1; }
    session_args+=(--engine-user "$engine_user")
fi

# The session runs in the work dir: it must be the user's cwd, not the caller's.
cd "$work" || exit 1
if [ "$mode" = systemd ]; then
    teardown=$(printf '%q ' "$stools/bridge-session.sh" teardown "${session_args[@]}")
    "$stools/usermgr.sh" run "${home_args[@]}" --name "$prefix-mgr" --teardown "$teardown" \
        "$user" -- "$@" "${session_args[@]}"
    rc=$?
else
    echo "no user manager here ($why): hostbridge-executor watch drains the spool instead"
    # The bridge's files go to a throwaway HOME; podman keeps the real one.
    HB_BRIDGE_HOME=$work/home "$@" "${session_args[@]}"
    rc=$?
fi
