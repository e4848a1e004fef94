#!/bin/bash
# smoke.sh root|rootless: the e2e smoke test of the real-systemd groundwork.
# Starts a real user manager (usermgr.sh) for root or for a throwaway user,
# runs path-demo.sh in it (a .path unit triggers a oneshot that restarts a
# podman container through `systemd-run --user --scope`, and the container
# outlives the oneshot), tears everything down and checks with leftovers.sh
# that nothing of the run is left. Exit 77 with the reason printed where
# the host cannot run it (no root, no podman, no cgroup delegation, ...).
set -uo pipefail

here=$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")
mode=${1:-}
iterations=${HB_SMOKE_ITERATIONS:-3}
case $mode in root | rootless) ;; *)
    echo "usage: smoke.sh root|rootless" >&2
    exit 64
    ;;
esac

skip() {
    echo "SKIP: $*"
    exit 77
}
[ "$(id -u)" -eq 0 ] || skip "needs root"
command -v podman >/dev/null || skip "podman missing (tools/deps.sh test)"
command -v runc >/dev/null || skip "runc missing (tools/deps.sh test)"
[ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 || skip "busybox-static missing"
reason=$("$here/usermgr.sh" check 2>&1)
case $? in
    0) ;;
    77) skip "${reason#SKIP: }" ;;
    *) echo "$reason" >&2 && exit 1 ;;
esac

# One prefix names everything this run creates: user, cgroup, container,
# image, temp dir. Short enough for a user name.
prefix=hb-e2e-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
work=/tmp/$prefix
user=root
rc=1

stage=/tmp/$prefix.tools
cleanup() {
    cd / || true # the work dir goes away
    local made_user=()
    [ "$mode" = rootless ] && made_user=(--user)
    "$here/remove-run.sh" "$prefix" "${made_user[@]}" "$work" "$stage" || rc=1
    exit "$rc"
}
trap cleanup EXIT
trap 'rc=130; exit 130' INT TERM HUP

mkdir -m 0755 "$work" "$work/work" || exit 1
home_args=(--home "$work")
# shellcheck source=tools/e2e/as-test-user.sh
. "$here/as-test-user.sh"
[ "$mode" = rootless ] && as_test_user "$prefix" "$work/work"

# The user runs path-demo.sh: a copy it can reach wherever the checkout is.
"$here/stage.sh" "$stage" || exit 1
cd "$work" || exit 1
"$stage/tools/e2e/usermgr.sh" run "${home_args[@]}" --name "$prefix-mgr" \
    --teardown "podman rm -f -t 0 $prefix-ctr >/dev/null 2>&1; podman rmi -f localhost/$prefix-img:latest >/dev/null 2>&1; true" \
    "$user" -- "$stage/tools/e2e/path-demo.sh" --prefix "$prefix" --workdir "$work/work" --iterations "$iterations"
rc=$?
