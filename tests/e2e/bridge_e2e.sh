#!/bin/bash
# bridge_e2e.sh BIN_DIR rootless|compose|root: the README's demo session as
# a test (ctest label e2e). tools/e2e/bridge-session.sh does the work, the
# same script ./demo runs; this wrapper only makes the place for it:
#   rootless  a throwaway user with its own systemd --user manager and
#             rootless podman installs the bridge (no --allow-root), stack
#             backend: how a developer runs it;
#   compose   the same user setup, compose backend through Debian's
#             podman-compose (rootless: the drain's podman-compose reads the
#             user's ~/.config/containers/containers.conf; as root it would
#             need /etc/containers changed);
#   root      root's own manager and rootful podman, as ./demo runs here.
# The session asserts the observable facts (start times, scopes, the .path
# unit's activations, the audit log and its verification); afterwards
# tools/e2e/leftovers.sh must find nothing of the run. Exit 77, reason
# printed, where podman, systemd or cgroup delegation is unavailable.
set -uo pipefail

self=$(readlink -f -- "${BASH_SOURCE[0]}")
tools=$(readlink -f -- "$(dirname -- "$self")/../../tools/e2e")
bin=${1:?usage: bridge_e2e.sh BIN_DIR rootless|compose|root}
kind=${2:?usage: bridge_e2e.sh BIN_DIR rootless|compose|root}
case $kind in rootless | compose | root) ;; *)
    echo "usage: bridge_e2e.sh BIN_DIR rootless|compose|root" >&2
    exit 64
    ;;
esac
bin=$(readlink -f -- "$bin")

skip() {
    echo "SKIP: $*"
    exit 77
}
[ "$(id -u)" -eq 0 ] || skip "needs root (to create a user, a cgroup and a mount namespace)"
for b in hostbridge hostbridge-executor hostbridge-parser; do
    [ -x "$bin/$b" ] || { echo "FAIL: $bin/$b is not built" && exit 1; }
done
command -v podman >/dev/null || skip "podman missing (tools/deps.sh test)"
command -v runc >/dev/null || skip "runc missing (tools/deps.sh test)"
{ [ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1; } || skip "busybox-static missing"
if [ "$kind" = compose ]; then
    command -v podman-compose >/dev/null || skip "podman-compose missing (tools/deps.sh test)"
fi
reason=$("$tools/usermgr.sh" check 2>&1)
case $? in
    0) ;;
    77) skip "${reason#SKIP: }" ;;
    *) echo "$reason" >&2 && exit 1 ;;
esac

# One prefix names everything of the run: user, project (so containers,
# images, networks and the bridge's slug), cgroups, temp dir.
prefix=hb-e2e-$kind-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
work=/tmp/$prefix
project=$work/$prefix
backend=stack
[ "$kind" = compose ] && backend=compose
args=(--project "$project" --bin "$bin" --mode systemd --backend "$backend" --rate-limit 6/600)
user=root
rc=1

cleanup() {
    trap '' INT TERM HUP
    [ "$user" = root ] || "$tools/testuser.sh" delete "$prefix" >/dev/null 2>&1
    rm -rf --one-file-system "$work"
    if ! "$tools/leftovers.sh" "$prefix"; then
        echo "FAIL: the run left things behind"
        rc=1
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'rc=130; exit 130' INT TERM HUP

mkdir -m 0755 "$work" || exit 1
home_args=()
if [ "$kind" = root ]; then
    mkdir -m 0700 "$work/home" || exit 1
    home_args=(--home "$work/home")
else
    out=$("$tools/testuser.sh" create "$prefix" 2>&1)
    case $? in
        0) ;;
        77) rc=77 && skip "${out#SKIP: }" ;;
        *) echo "$out" >&2 && exit 1 ;;
    esac
    user=$prefix
    chown "$user:" "$work"
fi

teardown=$(printf '%q ' "$tools/bridge-session.sh" teardown "${args[@]}")
# The session runs in the work dir: it must be the user's cwd, not ctest's.
cd "$work" || exit 1
"$tools/usermgr.sh" run "${home_args[@]}" --name "$prefix-mgr" --teardown "$teardown" \
    "$user" -- "$tools/bridge-session.sh" run "${args[@]}"
rc=$?
