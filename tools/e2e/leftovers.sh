#!/bin/bash
# leftovers.sh: lists what an e2e run left behind, found by the name prefix
# the run gave everything it created; exit 1 if anything is left, 0 if not.
#
# Usage: leftovers.sh PREFIX
#
# Looks for: processes (command line or cgroup naming PREFIX, or owned by a
# user whose name starts with PREFIX), podman containers, images (by name,
# or by the demo's io.hostbridge.demo.project label), networks and volumes
# (rootful storage; a throwaway user's rootless storage goes with its home),
# mounts in any mount namespace, cgroups, users and their homes, and
# temporary files in /tmp, /run and $TMPDIR.
set -uo pipefail

usage() {
    echo "usage: leftovers.sh PREFIX   (PREFIX: [a-z0-9][a-z0-9_.-]{5,})" >&2
    exit 64
}
[ $# -eq 1 ] || usage
prefix=$1
# A short prefix would match things this run never made.
[[ $prefix =~ ^[a-z0-9][a-z0-9_.-]{5,}$ ]] || usage

found=0
report() { # KIND WHAT
    echo "leftover $1: $2"
    found=1
}

# Our own ancestors and helpers name the prefix in their command lines.
declare -A mine=([$$]=1)
pid=$$
while [ "$pid" -gt 1 ]; do
    pid=$(awk '/^PPid:/ { print $2 }' "/proc/$pid/status" 2>/dev/null) || break
    [ -n "$pid" ] || break
    mine[$pid]=1
done
descends_from_me() {
    local p=$1 n
    for ((n = 0; n < 64 && p > 1; n++)); do
        [ "$p" -eq $$ ] && return 0
        p=$(awk '/^PPid:/ { print $2 }' "/proc/$p/status" 2>/dev/null) || return 1
        [ -n "$p" ] || return 1
    done
    return 1
}

declare -A prefix_uids=()
while IFS=: read -r name _ uid _; do
    case $name in "$prefix"*)
        prefix_uids[$uid]=1
        report user "$name (uid $uid)"
        ;;
    esac
done < <(getent passwd)
for d in /home/"$prefix"*; do
    [ -e "$d" ] && report home "$d"
done

# --- processes (bash builtins only: forking per process would take seconds)
status_field() { # DIR FIELD: sets $field to its first value
    local k v _
    field=""
    while read -r k v _; do
        [ "$k" = "$2:" ] && { field=$v; return 0; }
    done <"$1/status"
    return 1
} 2>/dev/null
for dir in /proc/[0-9]*; do
    p=${dir#/proc/}
    [ -n "${mine[$p]:-}" ] && continue
    args=()
    mapfile -d '' -t args 2>/dev/null <"$dir/cmdline" || continue
    [ ${#args[@]} -gt 0 ] || continue # kernel threads
    cmd="${args[*]}"
    why=""
    if [[ $cmd == *"$prefix"* ]]; then
        why="command line"
    else
        cg=""
        { IFS= read -r -d '' cg <"$dir/cgroup"; } 2>/dev/null
        if [[ $cg == *"/$prefix"* ]]; then
            why="cgroup"
        else
            status_field "$dir" Uid || continue
            [ -n "${prefix_uids[$field]:-}" ] && why="owned by uid $field"
        fi
    fi
    [ -n "$why" ] || continue
    descends_from_me "$p" && continue
    report process "$p ($why): ${cmd:0:160}"
done

# --- podman objects (rootful storage)
if command -v podman >/dev/null && [ "$(id -u)" -eq 0 ]; then
    # The caller's CONTAINERS_CONF is often in its work dir, removed by its
    # cleanup before this runs: podman then fails, and every list below was
    # empty (tests/e2e/rebuild_unchanged.sh left an image each run, unseen).
    [ -r "${CONTAINERS_CONF:-}" ] ||
        CONTAINERS_CONF=$(dirname -- "$(readlink -f -- "$0")")/../../examples/demo-app/containers.conf
    export CONTAINERS_CONF
    # A list can fail for a moment while another test's container is torn
    # down (podman ps: "joining network namespace of container ...: unknown
    # FS magic", seen in .ci/run): asked again for up to 10 s; a podman that
    # cannot list all that time is reported.
    for _ in $(seq 50); do
        podman_err=$(podman ps -a -q 2>&1 >/dev/null) && podman_err="" && break
        sleep 0.2
    done
    [ -z "$podman_err" ] || report podman "cannot list what is left: $podman_err"
    while read -r name; do
        case $name in "$prefix"*) report container "$name" ;; esac
    done < <(podman ps -a --format '{{.Names}}' 2>/dev/null)
    while read -r id repo labels; do
        case "$repo" in "localhost/$prefix"* | "$prefix"*)
            report image "$repo ($id)"
            continue
            ;;
        esac
        case "$labels" in *"io.hostbridge.demo.project:$prefix"*) report image "$id (label io.hostbridge.demo.project=$prefix...)" ;; esac
    done < <(podman images -a --format '{{.ID}} {{.Repository}} {{.Labels}}' 2>/dev/null)
    while read -r name; do
        case $name in "$prefix"*) report network "$name" ;; esac
    done < <(podman network ls --format '{{.Name}}' 2>/dev/null)
    while read -r name; do
        case $name in "$prefix"*) report volume "$name" ;; esac
    done < <(podman volume ls --format '{{.Name}}' 2>/dev/null)
fi

# --- mounts, in every mount namespace that is still alive
declare -A seen_ns=()
for dir in /proc/[0-9]*; do
    ns=$(readlink "$dir/ns/mnt" 2>/dev/null) || continue
    [ -n "${seen_ns[$ns]:-}" ] && continue
    seen_ns[$ns]=1
    while read -r line; do
        report mount "$line (mount namespace $ns, seen from pid ${dir#/proc/})"
    done < <(awk -v p="$prefix" 'index($5, p) || index($4, p) { print $5 " (" $4 ")" }' "$dir/mountinfo" 2>/dev/null)
done

# --- cgroups
for h in /sys/fs/cgroup /sys/fs/cgroup/*/; do
    for d in "${h%/}/$prefix"*; do
        [ -d "$d" ] && report cgroup "$d"
    done
done

# --- temporary files
declare -A seen_file=()
for base in /tmp /run /run/user "${TMPDIR:-/tmp}"; do
    for f in "${base%/}/$prefix"*; do
        [ -e "$f" ] || [ -L "$f" ] || continue
        [ -n "${seen_file[$f]:-}" ] && continue
        seen_file[$f]=1
        report file "$f"
    done
done

if [ "$found" -eq 0 ]; then
    echo "leftovers: none for prefix $prefix"
fi
exit "$found"
