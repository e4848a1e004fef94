#!/bin/bash
# usermgr.sh: runs a command next to a real `systemd --user` manager on hosts
# where systemd is not PID 1 (CI, containers, firecracker VMs), following
# the steps tools/e2e/README.md ("How a user manager runs here") explains:
#   - everything happens in a private mount namespace, where /run/systemd and
#     /run/systemd/system are a tmpfs (systemd's "booted with systemd" check)
#     and /run/user is a tmpfs holding the user's XDG_RUNTIME_DIR;
#   - the manager runs in a delegated cgroup of its own, NAME, in every
#     hierarchy it uses (cgroup2 and name=systemd), never in the root cgroup
#     (started there it would move every process of the host, PID 1 included);
#   - the command runs in NAME/harness, inside the delegated subtree, so
#     `systemd-run --user --scope` works from it;
#   - teardown (also on failure, SIGINT, SIGTERM, SIGHUP): the --teardown
#     hook, `systemctl --user exit`, wait for the manager's PID, kill what is
#     left in NAME (only processes this run started end up there), remove the
#     cgroup directories.
#
# Usage:
#   usermgr.sh check [USER]
#       exit 0 if a manager can run here, else print "SKIP: reason" and exit 77
#   usermgr.sh run [OPTIONS] USER -- COMMAND [ARG...]
#       --home DIR        HOME of the manager and the command (default: USER's)
#       --as user|root    who runs COMMAND (default: user)
#       --teardown CMD    sh command run like COMMAND after it, also when it
#                         fails or is interrupted, before the manager stops
#                         (remove containers here: see "Containers" below)
#       --setenv K=V      extra environment for the manager and COMMAND
#       --name NAME       cgroup name (default: hb-e2e-usermgr-PID); the
#                         leftovers checker finds everything by this prefix
#       --log FILE        keep the manager's log there (units' output goes to
#                         it too); default: a temp file, shown on failure
#       --keep-booted-flag  keep /run/systemd/system once the manager is up
#                         (see "Booted flag" below)
#       exit status: COMMAND's; 77 when a manager cannot run here (reason on
#       stderr); 64 usage; 70 when the manager failed or teardown left
#       something behind
#       HB_USERMGR_TIMING=1 in the environment prints the manager's start
#       and teardown times on stderr
#   usermgr.sh as-user -- COMMAND [ARG...]
#       from inside a run (--as root): run COMMAND as the manager's user with
#       its environment
#
# COMMAND and the hook run in the caller's working directory and get HOME,
# USER, LOGNAME, XDG_RUNTIME_DIR, XDG_CONFIG_HOME of the manager's user, and
# HB_USERMGR_PID, HB_USERMGR_NAME, HB_USERMGR_CGROUPS (the NAME directories,
# space-separated), HB_USERMGR_LOG, HB_USERMGR_USER.
#
# Booted flag: /run/systemd/system is needed only for the manager to start.
# It is removed once the manager is ready, because programs that see it
# assume a system manager too: netavark then starts aardvark-dns through
# `systemd-run` on the system bus, which does not exist here, and rootful
# containers get no DNS (no name resolution on the application network).
#
# Containers: rootful podman must run in the same mount namespace as the
# manager (its overlay and netns mounts live there), so start, restart and
# remove rootful containers from COMMAND or --teardown, never outside.
set -uo pipefail

SELF=$(readlink -f -- "${BASH_SOURCE[0]}")
readonly SELF
readonly SYSTEMD_BIN=/lib/systemd/systemd
readonly SAFE_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
readonly EX_SKIP=77 EX_USAGE=64 EX_SOFTWARE=70

say() { echo "usermgr: $*" >&2; }
die() {
    local code=$1
    shift
    say "$*"
    exit "$code"
}
skip() {
    echo "SKIP: $*" >&2
    exit $EX_SKIP
}

usage() {
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$SELF" >&2
    exit $EX_USAGE
}

# The cgroup hierarchies the manager uses: pure cgroup2, or the hybrid layout
# (cgroup2 at unified/ plus the name=systemd v1 hierarchy).
cgroup_hierarchies() {
    if [ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then
        echo /sys/fs/cgroup
        return
    fi
    if [ "$(stat -f -c %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ]; then
        echo /sys/fs/cgroup/unified
    fi
    if awk '$9 == "cgroup" && $5 == "/sys/fs/cgroup/systemd" { found = 1 } END { exit !found }' \
        /proc/self/mountinfo; then
        echo /sys/fs/cgroup/systemd
    fi
}

# Environment problems are skips (the caller's test prints the reason);
# bad arguments are usage errors.
check_host() {
    local user=$1 h probe
    [ "$(id -u)" -eq 0 ] || skip "needs root (it creates cgroups and a mount namespace)"
    [ -x "$SYSTEMD_BIN" ] || skip "$SYSTEMD_BIN missing (apt-get install systemd)"
    for tool in systemctl unshare setpriv mount findmnt; do
        command -v "$tool" >/dev/null || skip "$tool missing"
    done
    # On a host run by systemd the real user manager is the right tool; a
    # second manager in a hand-made cgroup would fight it.
    [ ! -d /run/systemd/system ] || skip "systemd is PID 1 here: use its own user manager (loginctl enable-linger)"
    local hierarchies
    hierarchies=$(cgroup_hierarchies)
    [ -n "$hierarchies" ] || skip "no cgroup2 and no name=systemd hierarchy under /sys/fs/cgroup"
    if [ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" != cgroup2fs ] &&
        ! grep -qx /sys/fs/cgroup/systemd <<<"$hierarchies"; then
        skip "hybrid cgroups without a name=systemd hierarchy"
    fi
    probe=hb-e2e-usermgr-probe-$$
    for h in $hierarchies; do
        mkdir "$h/$probe" 2>/dev/null || skip "cannot create a cgroup in $h (read-only?)"
        rmdir "$h/$probe"
    done
    unshare --mount --propagation private true 2>/dev/null || skip "cannot create a mount namespace (unshare --mount)"
    getent passwd "$user" >/dev/null || die $EX_USAGE "no such user: $user"
}

cmd_check() {
    [ $# -le 1 ] || usage
    check_host "${1:-root}"
    echo "usermgr: a systemd user manager can run here for ${1:-root}"
}

# ---------------------------------------------------------------- outer side

cmd_run() {
    local home="" as=user teardown="" name="hb-e2e-usermgr-$$" log="" keep_log=0 keep_flag=0
    local -a setenv=()
    while [ $# -gt 0 ]; do
        case $1 in
            --home) home=${2:?}; shift 2 ;;
            --as) as=${2:?}; shift 2 ;;
            --teardown) teardown=${2:?}; shift 2 ;;
            --setenv) setenv+=("${2:?}"); shift 2 ;;
            --name) name=${2:?}; shift 2 ;;
            --log) log=${2:?}; keep_log=1; shift 2 ;;
            --keep-booted-flag) keep_flag=1; shift ;;
            --) usage ;;
            -*) usage ;;
            *) break ;;
        esac
    done
    if [ $# -lt 3 ] || [ "$2" != -- ]; then usage; fi
    local user=$1
    shift 2
    case $as in user | root) ;; *) usage ;; esac
    [[ $name =~ ^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$ ]] || die $EX_USAGE "bad --name '$name'"
    local kv
    for kv in "${setenv[@]}"; do
        [[ $kv =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die $EX_USAGE "bad --setenv '$kv' (want K=V)"
    done
    check_host "$user"

    local uid gid
    uid=$(id -u "$user") gid=$(id -g "$user")
    [ -n "$home" ] || home=$(getent passwd "$user" | cut -d: -f6)
    [ -d "$home" ] || die $EX_USAGE "home $home does not exist"
    home=$(readlink -f -- "$home")
    if [ -z "$log" ]; then
        log=$(mktemp "${TMPDIR:-/tmp}/$name.XXXXXX.log") || die $EX_SOFTWARE "mktemp failed"
    fi
    if ! { : >>"$log" && chmod 0644 "$log"; }; then die $EX_SOFTWARE "cannot write $log"; fi

    local h
    for h in $(cgroup_hierarchies); do
        [ ! -e "$h/$name" ] || die $EX_USAGE "cgroup $h/$name exists already: another run, or a leftover"
    done

    # The inner half gets its settings through the environment (no quoting
    # games); COMMAND's own arguments stay an argv.
    export HBUM_USER=$user HBUM_UID=$uid HBUM_GID=$gid HBUM_HOME=$home HBUM_AS=$as \
        HBUM_TEARDOWN=$teardown HBUM_NAME=$name HBUM_LOG=$log HBUM_KEEP_FLAG=$keep_flag
    HBUM_SETENV=$(printf '%s\n' "${setenv[@]}")
    export HBUM_SETENV

    # SIGINT/SIGTERM/SIGHUP here are forwarded as SIGTERM: the inner half
    # runs its teardown, and we wait for it.
    local inner rc
    trap 'kill -TERM "$inner" 2>/dev/null' INT TERM HUP
    unshare --mount --propagation private -- "$SELF" __inner "$@" <&0 &
    inner=$!
    while :; do
        wait "$inner"
        rc=$?
        kill -0 "$inner" 2>/dev/null || break
    done
    trap - INT TERM HUP

    # Safety net: if the inner half died without cleaning up, its cgroup
    # directories are still here; what runs in them is ours.
    if ! reap_cgroups "$name"; then
        say "could not remove every cgroup $name"
        [ "$rc" -ne 0 ] || rc=$EX_SOFTWARE
    fi
    if [ "$rc" -ne 0 ] && [ "$rc" -ne $EX_SKIP ] && [ -s "$log" ]; then
        say "manager log ($log), last 40 lines:"
        tail -n 40 "$log" >&2
    fi
    [ "$keep_log" -eq 1 ] || rm -f "$log"
    return "$rc"
}

# Kill whatever still runs in NAME (in every hierarchy), then remove the
# directories bottom-up. Everything in NAME was started by this run.
reap_cgroups() {
    local name=$1 h dirs
    dirs=""
    for h in $(cgroup_hierarchies); do
        [ -d "$h/$name" ] && dirs="$dirs $h/$name"
    done
    [ -n "$dirs" ] || return 0
    local sig
    for sig in TERM TERM KILL KILL KILL; do
        local pids
        # shellcheck disable=SC2086 # one word per directory
        pids=$(find $dirs -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u)
        [ -n "$pids" ] || break
        say "killing leftover processes of this run (SIG$sig): ${pids//$'\n'/ }"
        # shellcheck disable=SC2086 # one word per pid
        kill -s "$sig" $pids 2>/dev/null
        for _ in 1 2 3 4 5 6 7 8 9 10; do
            # shellcheck disable=SC2086
            [ -z "$(find $dirs -name cgroup.procs -exec cat {} + 2>/dev/null)" ] && break
            sleep 0.2
        done
    done
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        # shellcheck disable=SC2086
        find $dirs -depth -type d -exec rmdir {} + 2>/dev/null
        local left=0 d
        for d in $dirs; do [ -d "$d" ] && left=1; done
        [ "$left" -eq 0 ] && return 0
        sleep 0.2
    done
    return 1
}

# ---------------------------------------------------------------- inner side
# Runs as root inside the private mount namespace.

MGR_PID="" CMD_PID="" TORN_DOWN=0 STOPPING=0 CMD_RC=0
declare -A ORIG_CGROUP=()

# The manager's runtime and config dirs, plus --setenv: NUL-separated K=V.
session_env() {
    printf '%s\0' XDG_RUNTIME_DIR="/run/user/$HBUM_UID" XDG_CONFIG_HOME="$HBUM_HOME/.config"
    local kv
    while IFS= read -r kv; do [ -z "$kv" ] || printf '%s\0' "$kv"; done <<<"$HBUM_SETENV"
}

# The argv prefix that runs a command as the manager's user (or as root for
# --as root), NUL-separated; callers append the command.
prefix_for() { # user|root
    local -a env
    mapfile -d '' -t env < <(session_env)
    if [ "$1" = user ]; then
        env=(HOME="$HBUM_HOME" USER="$HBUM_USER" LOGNAME="$HBUM_USER" "${env[@]}")
        if [ "$(id -u)" -ne "$HBUM_UID" ]; then
            printf '%s\0' setpriv --reuid="$HBUM_UID" --regid="$HBUM_GID" --init-groups
        fi
    fi
    printf '%s\0' env -u DBUS_SESSION_BUS_ADDRESS "${env[@]}"
}

as_user() {
    local -a prefix
    mapfile -d '' -t prefix < <(prefix_for user)
    "${prefix[@]}" "$@"
}

as_caller() {
    local -a prefix
    mapfile -d '' -t prefix < <(prefix_for "$HBUM_AS")
    "${prefix[@]}" "$@"
}

alive() { # PID: running and not a zombie
    local state
    state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
    [ -n "$state" ] && [ "$state" != Z ]
}

wait_gone() { # PID TENTHS
    local i
    for ((i = 0; i < $2; i++)); do
        alive "$1" || return 0
        sleep 0.1
    done
    return 1
}

start_manager() {
    local h cg_dirs=""
    for h in $(cgroup_hierarchies); do
        mkdir "$h/$HBUM_NAME" "$h/$HBUM_NAME/harness" || return 1
        cg_dirs="$cg_dirs $h/$HBUM_NAME"
        if [ "$HBUM_UID" -ne 0 ]; then
            chown -R "$HBUM_UID:$HBUM_GID" "$h/$HBUM_NAME" || return 1
        fi
    done
    export HB_USERMGR_CGROUPS=${cg_dirs# }

    # Remember where we came from, then move into NAME/harness: inside the
    # delegated subtree, but not where the manager will live.
    local id ctrl path
    for h in $(cgroup_hierarchies); do
        while IFS=: read -r id ctrl path; do
            case "$h|$id|$ctrl" in
                */systemd\|*\|name=systemd | */unified\|0\| | /sys/fs/cgroup\|0\|) ORIG_CGROUP[$h]=$path ;;
            esac
        done </proc/self/cgroup
        echo $$ >"$h/$HBUM_NAME/harness/cgroup.procs" || return 1
    done

    # The mount points, where a host has none yet (no logind made /run/user):
    # empty directories, the only trace on the host's own /run.
    mkdir -p /run/systemd /run/user || return 1
    mount -t tmpfs -o mode=0755 tmpfs /run/systemd || return 1
    mkdir /run/systemd/system || return 1
    mount -t tmpfs -o mode=0755 tmpfs /run/user || return 1
    install -d -m 0700 -o "$HBUM_UID" -g "$HBUM_GID" "/run/user/$HBUM_UID" || return 1

    local -a env
    mapfile -d '' -t env < <(session_env)
    env=(HOME="$HBUM_HOME" USER="$HBUM_USER" LOGNAME="$HBUM_USER" "${env[@]}")
    local -a drop=()
    if [ "$HBUM_UID" -ne 0 ]; then
        drop=(setpriv --reuid="$HBUM_UID" --regid="$HBUM_GID" --init-groups)
    fi
    # The subshell moves itself into NAME and checks it got there before it
    # becomes the manager: a manager started in the root cgroup would take
    # over every process of the host. setsid keeps terminal signals away
    # from it; teardown stops it in order.
    (
        for h in $(cgroup_hierarchies); do
            echo "$BASHPID" >"$h/$HBUM_NAME/cgroup.procs" || exit 1
        done
        checked=0
        while IFS=: read -r id ctrl path; do
            if [ "$id|$ctrl" = "0|" ] || [ "$ctrl" = name=systemd ]; then
                [ "$path" = "/$HBUM_NAME" ] || {
                    echo "usermgr: refusing to start the manager in cgroup $id:$ctrl:$path" >&2
                    exit 1
                }
                checked=$((checked + 1))
            fi
        done </proc/self/cgroup
        [ "$checked" -eq "$(cgroup_hierarchies | wc -l)" ] || {
            echo "usermgr: refusing to start the manager: not in $HBUM_NAME everywhere" >&2
            exit 1
        }
        cd / || exit 1
        exec setsid "${drop[@]}" env -i PATH="$SAFE_PATH" SHELL=/bin/sh LANG=C.UTF-8 "${env[@]}" \
            "$SYSTEMD_BIN" --user --log-target=console --log-level=info \
            --default-standard-output=inherit --default-standard-error=inherit
    ) </dev/null >>"$HBUM_LOG" 2>&1 &
    MGR_PID=$!
    export HB_USERMGR_PID=$MGR_PID

    # Ready: default.target active (about 0.2 s here).
    local i
    for ((i = 0; i < 150; i++)); do
        alive "$MGR_PID" || {
            say "systemd --user exited during startup"
            return 1
        }
        if as_user systemctl --user --quiet is-active default.target 2>/dev/null; then
            # setsid must not have forked: MGR_PID has to be the manager itself.
            [ "$(cat "/proc/$MGR_PID/comm")" = systemd ] || {
                say "pid $MGR_PID is not the manager"
                return 1
            }
            [ "$HBUM_KEEP_FLAG" -eq 1 ] || rmdir /run/systemd/system || return 1
            return 0
        fi
        sleep 0.1
    done
    say "systemd --user not ready after 15 s"
    return 1
}

stop_manager() {
    [ -n "$MGR_PID" ] || return 0
    if alive "$MGR_PID"; then
        as_user timeout 10 systemctl --user exit 2>/dev/null
        if ! wait_gone "$MGR_PID" 150; then
            say "manager $MGR_PID did not exit; SIGTERM"
            kill -TERM "$MGR_PID" 2>/dev/null
            wait_gone "$MGR_PID" 50 || kill -KILL "$MGR_PID" 2>/dev/null
        fi
    fi
    wait "$MGR_PID" 2>/dev/null
    MGR_PID=""
}

teardown() {
    [ "$TORN_DOWN" -eq 0 ] || return 0
    TORN_DOWN=1
    trap '' INT TERM HUP
    local ok=0
    if [ -n "$CMD_PID" ] && alive "$CMD_PID"; then
        kill -TERM "$CMD_PID" 2>/dev/null
        wait_gone "$CMD_PID" 100 || kill -KILL "$CMD_PID" 2>/dev/null
    fi
    if [ -n "$HBUM_TEARDOWN" ] && [ -n "$MGR_PID" ]; then
        as_caller timeout 120 sh -c "$HBUM_TEARDOWN" </dev/null >&2 ||
            say "teardown hook failed (exit $?)"
    fi
    stop_manager
    # Back to where we came from, so NAME can go.
    local h
    for h in "${!ORIG_CGROUP[@]}"; do
        echo $$ >"$h${ORIG_CGROUP[$h]%/}/cgroup.procs" 2>/dev/null || echo $$ >"$h/cgroup.procs"
    done
    if grep -q "/$HBUM_NAME\(/\|\$\)" /proc/self/cgroup; then
        say "could not leave cgroup $HBUM_NAME; the outer half will remove it"
        ok=1
    elif ! reap_cgroups "$HBUM_NAME"; then
        say "could not remove every cgroup $HBUM_NAME"
        ok=1
    fi
    umount /run/user 2>/dev/null
    umount /run/systemd 2>/dev/null
    return $ok
}

on_signal() {
    STOPPING=1
    say "interrupted: tearing down"
    [ -z "$CMD_PID" ] || kill -TERM "$CMD_PID" 2>/dev/null
}

# HB_USERMGR_TIMING=1: print how long the manager took to come up and to go.
timing() { # WHAT START_NS
    [ "${HB_USERMGR_TIMING:-0}" = 1 ] || return 0
    say "timing: $1 $((($(date +%s%N) - $2) / 1000000)) ms"
}

cmd_inner() {
    trap on_signal INT TERM HUP
    local rc t0
    t0=$(date +%s%N)
    if ! start_manager; then
        teardown
        exit $EX_SOFTWARE
    fi
    # Belt and braces for the DANGER in the recipe: PID 1 must not have moved.
    if grep -q 'init.scope' /proc/1/cgroup; then
        say "DANGER: PID 1 is in an init.scope now; stopping"
        teardown
        exit $EX_SOFTWARE
    fi
    timing "manager ready" "$t0"
    export HB_USERMGR_NAME=$HBUM_NAME HB_USERMGR_LOG=$HBUM_LOG HB_USERMGR_USER=$HBUM_USER
    if [ "$STOPPING" -eq 0 ]; then
        local -a prefix
        mapfile -d '' -t prefix < <(prefix_for "$HBUM_AS")
        # exec: CMD_PID is the command itself, so a signal reaches it.
        exec_cmd() { exec "${prefix[@]}" "$@"; }
        exec_cmd "$@" <&0 &
        CMD_PID=$!
        wait_cmd
        rc=$CMD_RC
    else
        rc=130
    fi
    t0=$(date +%s%N)
    teardown || { [ "$rc" -ne 0 ] || rc=$EX_SOFTWARE; }
    timing "teardown" "$t0"
    exit "$rc"
}

wait_cmd() {
    while :; do
        wait "$CMD_PID"
        CMD_RC=$?
        alive "$CMD_PID" || break
    done
}

cmd_as_user() {
    if [ "${1:-}" != -- ] || [ $# -lt 2 ]; then usage; fi
    shift
    [ -n "${HBUM_USER:-}" ] || die $EX_USAGE "as-user works only inside usermgr.sh run"
    as_user "$@"
}

case ${1:-} in
    check) shift && cmd_check "$@" ;;
    run) shift && cmd_run "$@" ;;
    as-user) shift && cmd_as_user "$@" ;;
    __inner) shift && cmd_inner "$@" ;;
    *) usage ;;
esac
