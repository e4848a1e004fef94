#!/bin/bash
# The Debian package, end to end: CPack builds hostbridge_<version>_<arch>.deb
# from the build tree, lintian finds no error in it, `apt-get install` puts
# it in place (its Depends: computed by dpkg-shlibdeps), ./demo runs a real
# agent session against the installed /usr/bin/hostbridge (real systemd and
# podman, see demo), installs left live are uninstalled by the prerm when
# the package is purged (a person's rootless compose install with its drain
# units and pinned stack: purge_live.sh; and root's), and the package is
# purged on every exit, so the machine is left as it was.
# Usage: deb_install.sh SOURCE_DIR BUILD_DIR        (root only; 77 = skipped)
set -uo pipefail
src=$(readlink -f -- "$1") build=$(readlink -f -- "$2")
skip() { echo "SKIP: $*"; exit 77; }
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }

[ "$(id -u)" -eq 0 ] || skip "installing a package needs root"
command -v apt-get >/dev/null && command -v dpkg >/dev/null || skip "not a Debian system"
command -v lintian >/dev/null || { echo "FAIL: lintian missing (tools/deps.sh test)"; exit 1; }
# Two suites on one machine (two checkouts) would install and purge the one
# system package under each other (it happened: one run's purge found the
# package gone, the other's prerm was the other build's): one at a time.
exec 9>/run/lock/hostbridge-package-test.lock || exit 1
flock -w 900 9 || { echo "FAIL: another package test held the lock for 15 minutes"; exit 1; }
# Never replace a hostbridge someone installed: the purge would remove it.
if dpkg-query -W -f='${Status}' hostbridge 2>/dev/null | grep -q 'ok installed' ||
    [ -e /usr/bin/hostbridge ] || [ -e /usr/lib/hostbridge ]; then
    skip "a hostbridge is already installed in /usr; this test would replace it"
fi

work=$(mktemp -d /tmp/hb-deb-XXXXXX) || exit 1
chmod 0755 "$work"  # apt's _apt user reads the .deb from here
installed=0
cleanup() {
    if [ -n "${slug:-}" ] && [ -n "${live_home:-}" ]; then
        rm -rf "$live_home/.local/state/hostbridge/$slug" "$live_home/.config/hostbridge/$slug" \
            "$live_home/.local/lib/hostbridge/$slug" "$live_home/.cache/hostbridge/run/$slug" \
            "$live_home/.config/systemd/user/hostbridge-$slug.path" \
            "$live_home/.config/systemd/user/hostbridge-$slug.service"
    fi
    if [ "$installed" -eq 1 ]; then
        DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq hostbridge >"$work/purge.log" 2>&1 ||
            { cat "$work/purge.log"; echo "FAIL: apt-get purge hostbridge"; }
    fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

version=$("$build/bin/hostbridge" --version | awk '{print $2}')
arch=$(dpkg --print-architecture)
deb=$work/hostbridge_${version}_${arch}.deb

# --- build and inspect
if ! cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work" >"$work/cpack.log" 2>&1; then
    cat "$work/cpack.log"
    echo "FAIL: cpack"
    exit 1
fi
[ -f "$deb" ] && pass "cpack built $(basename "$deb")" || { ls "$work"; echo "FAIL: no $deb"; exit 1; }
depends=$(dpkg-deb -f "$deb" Depends)
recommends=$(dpkg-deb -f "$deb" Recommends)
suggests=$(dpkg-deb -f "$deb" Suggests)
echo "Depends: $depends"
for lib in libc6 libseccomp2 libcap-ng0 libssl3 libyaml-cpp; do
    # libssl's and yaml-cpp's package names carry an ABI suffix: match the stem.
    grep -q "${lib}" <<<"$depends" || fail "Depends: lacks $lib (from dpkg-shlibdeps)"
done
# buildah: without it every podman rebuild is refused (docs/BUILDS.md); no
# docker: a docker compose install runs nothing yet (docs/COMPOSE.md).
grep -q podman <<<"$recommends" && grep -q buildah <<<"$recommends" &&
    grep -q podman-compose <<<"$recommends" && ! grep -q docker <<<"$recommends$suggests" &&
    pass "Recommends: $recommends" || fail "Recommends: '$recommends'"
grep -q systemd <<<"$suggests" && pass "Suggests: $suggests" || fail "Suggests: '$suggests'"
# The description says which posture runs builds unattended (SECURITY.md,
# "Two postures").
description=$(dpkg-deb -f "$deb" Description)
grep -q 'sudo hostbridge engine setup' <<<"$description" &&
    grep -q 'wait for a person' <<<"$description" &&
    pass "Description: names the engine user and what waits without one" ||
    fail "Description: '$description'"
contents=$(dpkg-deb -c "$deb" | awk '{print $6}')
for f in ./usr/bin/hostbridge ./usr/lib/hostbridge/hostbridge-executor \
    ./usr/lib/hostbridge/hostbridge-parser ./usr/lib/hostbridge/hostbridge-engine-relay \
    ./usr/lib/hostbridge/hostbridge-snapshot \
    ./usr/lib/hostbridge/hostbridge-agent \
    ./usr/share/man/man1/hostbridge.1.gz \
    ./usr/share/man/man1/hostbridge-request.1.gz ./usr/share/man/man1/hostbridge-agent.1.gz \
    ./usr/share/man/man5/hostbridge.json.5.gz \
    ./usr/share/man/man5/hostbridge-policy.conf.5.gz ./usr/share/man/man8/hostbridge-executor.8.gz \
    ./usr/share/doc/hostbridge/copyright ./usr/share/doc/hostbridge/changelog.gz \
    ./usr/share/doc/hostbridge/SECURITY.md; do
    grep -qxF "$f" <<<"$contents" || fail "the package lacks $f"
done
if lintian --fail-on error --no-tag-display-limit "$deb" >"$work/lintian.log" 2>&1; then
    pass "lintian: no errors ($(grep -c '^W:' "$work/lintian.log") warnings)"
else
    cat "$work/lintian.log"
    fail "lintian reports errors"
fi

# --- install, use, purge
if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$deb" \
    >"$work/install.log" 2>&1; then
    cat "$work/install.log"
    echo "FAIL: apt-get install $deb"
    exit 1
fi
installed=1
pass "apt-get install ./$(basename "$deb")"
grep -q 'hostbridge upgrade' "$work/install.log" && pass "postinst names hostbridge upgrade" ||
    fail "postinst did not say to run hostbridge upgrade"
for b in /usr/bin/hostbridge /usr/lib/hostbridge/hostbridge-executor /usr/lib/hostbridge/hostbridge-parser \
    /usr/lib/hostbridge/hostbridge-snapshot; do
    got=$("$b" --version 2>&1)
    [ "$got" = "$(basename "$b") $version" ] && pass "$b --version" || fail "$b --version: '$got'"
done
page=$(man -w hostbridge 2>/dev/null)
[ "$page" = /usr/share/man/man1/hostbridge.1.gz ] && pass "man -w hostbridge: $page" ||
    fail "man -w hostbridge: '$page'"
warnings=$(MANWIDTH=80 man --warnings hostbridge.json 2>&1 >/dev/null)
[ -z "$warnings" ] && pass "man --warnings hostbridge.json: none" || fail "man: $warnings"

# ./demo against the installed binary (HB_BIN_DIR): a whole agent session,
# its first (the stack's, rootful). Its second, on the compose backend, is
# e2e_bridge_compose's session on the same binaries (cpack packs this build
# tree), and a compose install of the package's own runs below
# (purge_live.sh): playing it here too cost about 136 s of .ci/run's CPU
# (docs/PERFORMANCE.md, "Where CI's time goes").
HB_BIN_DIR=/usr/bin HB_DEMO_COMPOSE=0 "$src/demo" 2>&1 | tee "$work/demo.log" | sed 's/^/  demo| /'
rc=${PIPESTATUS[0]}
if [ "$rc" -eq 0 ]; then
    grep -q "using /usr/bin/hostbridge (hostbridge $version)" "$work/demo.log" &&
        pass "./demo ran against /usr/bin/hostbridge" || fail "./demo did not use /usr/bin/hostbridge"
elif [ "$rc" -eq 77 ]; then
    echo "note: ./demo cannot run here (SKIP above); the package checks still count"
else
    fail "./demo against the package exited $rc"
fi

# --- an install left live when the package goes: prerm names it and the
# commands that remove it without the package, which must work.
slug=hbdeb$$
live_home=$(getent passwd root | cut -d: -f6)
mkdir -p "$work/live" && printf '#!/bin/sh\nexit 0\n' >"$work/live/stack" && chmod 0755 "$work/live/stack" &&
    git -C "$work/live" init -q
if env -u XDG_CONFIG_HOME -u XDG_STATE_HOME -u XDG_CACHE_HOME HOME="$live_home" \
    /usr/bin/hostbridge install --project-dir "$work/live" --stack-bin "$work/live/stack" \
    --services api --slug "$slug" --no-systemd --allow-root >"$work/live.log" 2>&1; then
    live=1
    pass "a live install $slug for the prerm to find"
else
    cat "$work/live.log"
    fail "hostbridge install of the live install"
fi

# --- an engine user `hostbridge engine setup` recorded (docs/ENGINE-USER.md):
# prerm names it and how to remove it. Only root's record is made here.
engine_marker=/var/lib/hostbridge/engine-users/hbdeb$$e
if [ ! -e "$engine_marker" ]; then
    mkdir -p /var/lib/hostbridge/engine-users &&
        printf 'person=root\nslug=%s\n' "$slug" >"$engine_marker"
fi

# --- purge now, with a person's install live (purge_live.sh: a throwaway
# user's manager, the drain units, a compose stack on its pins; it says what
# it checks), or plainly where that cannot run here; the trap purges on
# failure. Then prove nothing is left.
"$src/tests/package/purge_live.sh" "$src" "$work/purge.log" 2>&1 | sed 's/^/  live| /'
case ${PIPESTATUS[0]} in
    0) pass "purged with a person's live install: its units gone, its stack starts" ;;
    77) echo "note: no live rootless install here (SKIP above): a plain purge" ;;
    *) fail "the purge with a person's live install (above)" ;;
esac
if dpkg-query -W -f='${Status}' hostbridge 2>/dev/null | grep -q 'ok installed'; then
    DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq hostbridge >"$work/purge.log" 2>&1 ||
        { cat "$work/purge.log"; fail "apt-get purge hostbridge"; }
fi
installed=0
grep -qF "hostbridge engine remove --slug $slug --user root --name hbdeb$$e" "$work/purge.log" &&
    pass "prerm names the engine user and the command that removes it" ||
    { cat "$work/purge.log"; fail "prerm did not name engine user hbdeb$$e"; }
rm -f "$engine_marker"
rmdir /var/lib/hostbridge/engine-users /var/lib/hostbridge 2>/dev/null || true
if [ "${live:-0}" -eq 1 ]; then
    grep -qF "user root, install $slug, project $work/live" "$work/purge.log" &&
        pass "prerm names the live install and its project" ||
        { cat "$work/purge.log"; ls -la "$live_home/.config/hostbridge" "$live_home/.config/hostbridge/$slug"; fail "prerm did not name install $slug"; }
    # The prerm ran its uninstall (as root, root's): nothing of it is left
    # but its audit log.
    left=""
    for f in "$live_home/.config/hostbridge/$slug" "$live_home/.local/lib/hostbridge/$slug" \
        "$live_home/.cache/hostbridge/run/$slug" "$live_home/.config/systemd/user/hostbridge-$slug.path"; do
        [ -e "$f" ] && left="$left $f"
    done
    [ -z "$left" ] && [ -d "$live_home/.local/state/hostbridge/$slug" ] &&
        pass "prerm's uninstall removed the install (the audit log kept)" ||
        fail "left after the prerm's uninstall:$left (or no audit log kept)"
    rm -rf "$live_home/.local/state/hostbridge/$slug" "$live_home/.config/hostbridge/$slug" \
        "$live_home/.local/lib/hostbridge/$slug" "$live_home/.cache/hostbridge/run/$slug" \
        "$live_home/.config/systemd/user/hostbridge-$slug.path" \
        "$live_home/.config/systemd/user/hostbridge-$slug.service"
fi
left=""
for f in /usr/bin/hostbridge /usr/lib/hostbridge /usr/share/doc/hostbridge \
    /usr/share/man/man1/hostbridge.1.gz; do
    [ -e "$f" ] && left="$left $f"
done
dpkg-query -W -f='${Status}' hostbridge 2>/dev/null | grep -q installed && left="$left (dpkg status)"
[ -z "$left" ] && pass "purged: nothing of the package left" || fail "left after purge:$left"

[ "$failures" -eq 0 ] && echo "package ok" || echo "$failures failure(s)"
[ "$failures" -eq 0 ]
