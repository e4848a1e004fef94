#!/bin/bash
# run-as-test-user.sh PREFIX BIN_DIR SCRIPT [ARGS...]: run as root, runs the
# repository script SCRIPT (a path relative to the repository, e.g.
# tests/e2e/build_attacks.sh) as a throwaway ordinary user PREFIX-<pid>, so
# it meets rootless podman as a person's install does: SCRIPT and BIN_DIR's
# binaries are staged where the user can read them (stage.sh: the checkout
# and the build tree may sit under a directory only root can enter), the
# user is made by testuser.sh with its own XDG_RUNTIME_DIR, and SCRIPT runs
# as `bash STAGE/SCRIPT STAGE/bin ARGS...` in a clean environment. The
# user, its runtime dir and the stage are removed afterwards. Exit status:
# SCRIPT's; 77 (reason printed) where no such user can be made; 1 when
# staging or the removal fails.
set -uo pipefail

[ $# -ge 3 ] || { echo "usage: run-as-test-user.sh PREFIX BIN_DIR SCRIPT [ARGS...]" >&2; exit 64; }
[ "$(id -u)" -eq 0 ] || { echo "run-as-test-user.sh: run as root" >&2; exit 64; }
prefix=$1 bin=$2 script=$3
shift 3
repo=$(readlink -f -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/../..")
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

user=$prefix-$$
rt=$(mktemp -d "/tmp/$user-rt.XXXXXX") || exit 1
stage=/tmp/$user-stage
out=$("$repo/tools/e2e/stage.sh" "$stage" "$bin" 2>&1) || {
    rm -rf -- "$rt" "$stage"
    echo "FAIL: $out"
    exit 1
}
# stage.sh copies tests/ and tools/; a script from elsewhere (bench/) comes
# with the scripts beside it, which it may source.
if [ ! -e "$stage/$script" ]; then
    mkdir -p -- "$stage/$(dirname -- "$script")" &&
        cp -- "$repo/$(dirname -- "$script")"/*.sh "$stage/$(dirname -- "$script")/" || exit 1
fi
out=$("$repo/tools/e2e/testuser.sh" create "$user" 2>&1)
case $? in
    0) home=$(printf '%s\n' "$out" | tail -n 1) ;;
    77)
        rm -rf -- "$rt" "$stage"
        echo "SKIP: ${out#SKIP: }"
        exit 77
        ;;
    *)
        rm -rf -- "$rt" "$stage"
        echo "FAIL: testuser.sh create: $out"
        exit 1
        ;;
esac
chown "$user:" "$rt" && chmod 0700 "$rt"
# Nor may the user's working directory be one it cannot enter: podman
# fails outright there.
cd "$home" || exit 1
setpriv --reuid="$user" --regid="$user" --init-groups \
    env -i "HOME=$home" "USER=$user" "LOGNAME=$user" "PATH=$PATH" "XDG_RUNTIME_DIR=$rt" \
    bash "$stage/$script" "$stage/bin" "$@"
rc=$?
"$repo/tools/e2e/testuser.sh" delete "$user" || rc=1
rm -rf -- "$rt" "$stage"
exit "$rc"
