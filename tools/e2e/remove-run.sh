#!/bin/bash
# remove-run.sh PREFIX [--user] DIR...: the end of every e2e run (smoke.sh,
# bridge-place.sh). Deletes the throwaway user PREFIX (with --user), removes
# the run's directories without leaving the filesystem, and, as root, proves
# with leftovers.sh that nothing named PREFIX is left. Exit 1 (and says so)
# when something is.
set -uo pipefail

here=$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")
prefix=${1:?usage: remove-run.sh PREFIX [--user] DIR...}
shift
if [ "${1:-}" = --user ]; then
    shift
    "$here/testuser.sh" delete "$prefix" >/dev/null 2>&1
fi
[ $# -eq 0 ] || rm -rf --one-file-system "$@"
# Only root can look everywhere (other users' processes, cgroups, images).
if [ "$(id -u)" -eq 0 ] && ! "$here/leftovers.sh" "$prefix"; then
    echo "FAIL: the run left things behind"
    exit 1
fi
exit 0
