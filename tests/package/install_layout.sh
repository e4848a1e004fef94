#!/bin/bash
# `cmake --install` into a fresh prefix: hostbridge in bin/, the executor and
# parser in lib/hostbridge/, the man pages gzipped in share/man/; and the
# installed hostbridge (no build tree beside it) finds that executor and
# parser and copies them into a project's install.
# Usage: install_layout.sh BUILD_DIR
set -uo pipefail
build=$1
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

cmake --install "$build" --prefix "$work/prefix" >"$work/install.log" 2>&1 ||
    { cat "$work/install.log"; echo "FAIL: cmake --install"; exit 1; }
p=$work/prefix
for f in bin/hostbridge lib/hostbridge/hostbridge-executor lib/hostbridge/hostbridge-parser \
    lib/hostbridge/hostbridge-engine-relay lib/hostbridge/hostbridge-snapshot lib/hostbridge/hostbridge-pin lib/hostbridge/hostbridge-agent \
    share/man/man1/hostbridge.1.gz share/man/man1/hostbridge-request.1.gz \
    share/man/man1/hostbridge-agent.1.gz \
    share/man/man5/hostbridge.json.5.gz share/man/man5/hostbridge-policy.conf.5.gz \
    share/man/man8/hostbridge-executor.8.gz share/doc/hostbridge/copyright \
    share/doc/hostbridge/docs/CONFIG.md; do
    [ -f "$p/$f" ] || fail "cmake --install did not put $f in place"
done
[ -e "$p/bin/hostbridge-executor" ] && fail "the executor is in bin/ (it belongs in lib/hostbridge/)"
zcat "$p/share/man/man1/hostbridge.1.gz" | groff -ww -z -man 2>"$work/groff.log" &&
    [ ! -s "$work/groff.log" ] || fail "the installed hostbridge.1.gz: $(cat "$work/groff.log")"

mkdir "$work/home" "$work/app"
git -C "$work/app" init -q
printf 'services:\n  web:\n    build: .\n' >"$work/app/compose.yaml"
if env -u XDG_CONFIG_HOME -u XDG_STATE_HOME HOME="$work/home" "$p/bin/hostbridge" install \
    --project-dir "$work/app" --stack-bin /bin/true --no-systemd --allow-root \
    >"$work/hb.log" 2>&1; then
    lib=$work/home/.local/lib/hostbridge/app
    for b in hostbridge-executor hostbridge-parser hostbridge-engine-relay hostbridge-snapshot hostbridge-pin; do
        cmp -s "$lib/$b" "$p/lib/hostbridge/$b" ||
            fail "the install's $b is not the one in $p/lib/hostbridge"
    done
else
    cat "$work/hb.log"
    fail "the installed hostbridge could not install a project"
fi
[ "$failures" -eq 0 ] && echo "install layout ok"
[ "$failures" -eq 0 ]
