#!/bin/bash
# stage.sh DEST [BIN_DIR]: copies what an e2e run executes or reads as another
# user (a throwaway user, or root's manager with a dropped HOME) to DEST, a
# new root-owned directory of mode 0755: the scripts of tools/e2e, the test
# script tests/cli/e2e_systemd.sh, the attack scripts of tests/e2e, the demo
# app examples/demo-app, and the
# binaries hostbridge, hostbridge-executor, hostbridge-parser, hostbridge-engine-relay,
# hostbridge-snapshot and hostbridge-agent (which install drops into the spool) of BIN_DIR
# (as DEST/bin, if BIN_DIR is given). The checkout and the build tree may sit under a directory
# only root can enter (/root, a `mktemp -d`); the copies are reachable.
# DEST keeps the repository's layout, so scripts find each other the same
# way. DEST should carry the run's prefix: leftovers.sh then finds it if the
# run's cleanup (rm -rf DEST) did not happen. Exit 0, or 1 with the reason.
set -uo pipefail

[ $# -eq 1 ] || [ $# -eq 2 ] || {
    echo "usage: stage.sh DEST [BIN_DIR]" >&2
    exit 64
}
dest=$1 bin=${2:-}
repo=$(readlink -f -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/../..")
fail() {
    echo "stage: $*" >&2
    exit 1
}

umask 022
# mkdir without -p: DEST must be new, so nobody else made it first.
mkdir -m 0755 -- "$dest" || fail "cannot create $dest"
mkdir -p -- "$dest/tools/e2e" "$dest/tests/cli" "$dest/tests/e2e" "$dest/examples" "$dest/bin" || fail "mkdir under $dest"
cp -- "$repo"/tools/e2e/*.sh "$dest/tools/e2e/" || fail "copy tools/e2e"
cp -- "$repo/tests/cli/e2e_systemd.sh" "$dest/tests/cli/" || fail "copy tests/cli/e2e_systemd.sh"
cp -- "$repo"/tests/e2e/*.sh "$dest/tests/e2e/" || fail "copy tests/e2e"
cp -R -- "$repo/examples/demo-app" "$dest/examples/" || fail "copy examples/demo-app"
# A build tree holds the three side by side; an installed layout (the Debian
# package: /usr/bin/hostbridge, /usr/lib/hostbridge/hostbridge-executor) has
# the executor, parser, engine relay and snapshot copy in ../lib/hostbridge, where `hostbridge install`
# also looks (admin/install/versions.hpp). The copies sit side by side either way.
for b in hostbridge hostbridge-executor hostbridge-parser hostbridge-engine-relay hostbridge-snapshot hostbridge-pin hostbridge-agent; do
    [ -n "$bin" ] || break
    src=$bin/$b
    [ -x "$src" ] || [ "$b" = hostbridge ] || src=$bin/../lib/hostbridge/$b
    [ -x "$src" ] || fail "$bin/$b is not built (nor installed in $bin/../lib/hostbridge)"
    cp -- "$src" "$dest/bin/" || fail "copy $b"
done
# Readable (and, where they were, executable) by everyone; writable by the
# owner only, whatever modes the checkout had.
chmod -R u+rwX,go+rX,go-w -- "$dest" || fail "chmod $dest"
