#!/bin/bash
# rebuild_unchanged.sh BIN_DIR: a `rebuild` whose snapshot and image are
# unchanged builds and recreates nothing and says so (issue 48, item 1;
# docs/BUILDS.md, "An unchanged rebuild"), against the real podman and
# podman-compose of Debian 12, driven by the installed executor (`hostbridge
# install --backend compose`, then a `hostbridge-executor watch` this script
# starts; no systemd). One buildable service, app, whose build context is
# app/ (FROM scratch, a static busybox and a marker file):
#  1. `rebuild app` builds and creates app's container;
#  2. `rebuild app` again: done, the text and `services` say unchanged,
#     nothing recreated, the same container, never restarted; the audit
#     records `unchanged`;
#  3. `restart app` is the engine's own restart (no podman-compose line in
#     its log), then `rebuild app` is still unchanged;
#  4. one byte appended to the marker: `rebuild app` builds again, a new
#     container, no `unchanged`; a rebuild after it is unchanged again.
# Rootful podman as root, rootless otherwise; examples/demo-app's
# containers.conf. Everything is named after hbru<pid> and removed on exit.
# Exit 77, reason printed, where podman, podman-compose or a static busybox
# is missing.
set -uo pipefail

[ $# -eq 1 ] || { echo "usage: rebuild_unchanged.sh BIN_DIR" >&2; exit 64; }
bin=$(readlink -f -- "$1")
repo=$(readlink -f -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/../..")
hb=$bin/hostbridge
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# shellcheck source=tests/e2e/compose_bridge.sh
. "$repo/tests/e2e/compose_bridge.sh"
compose_e2e_start "hbru$$"
# The image the bridge builds goes too, before the base cleanup removes
# $work and the containers.conf that CONTAINERS_CONF names (podman fails
# without it: every run left its tag behind).
eval "base_$(declare -f cleanup)"
cleanup() {
    podman rmi -f "localhost/${pname:-$name}_app" >/dev/null 2>&1
    base_cleanup
}

# ------------------------------------------------------------------ the project

mkdir -p "$P/app/rootfs/bin" || die "mkdir"
cp "$busybox" "$P/app/rootfs/bin/busybox" || die "cp busybox"
for applet in sh sleep; do ln -s busybox "$P/app/rootfs/bin/$applet"; done
echo one >"$P/app/rootfs/marker"
printf 'FROM scratch\nCOPY rootfs/ /\nCMD ["/bin/sleep", "100000"]\n' >"$P/app/Containerfile"
cat >"$P/compose.yaml" <<EOF
services:
  app:
    build:
      context: app
    command: ["/bin/sleep", "100000"]
EOF
compose_e2e_commit

# ------------------------------------------------------------------ the bridge

compose_e2e_install
# This test measures what rebuild does, not who approves it: rebuild and
# restart run unattended, as the person accepted (--accept-uncontained-engine).
sed -i 's/^MODE_rebuild=ask$/MODE_rebuild=auto/; s/^MODE_restart=ask$/MODE_restart=auto/' "$policy"
compose_e2e_watch

container() { podman ps -aq --no-trunc --filter "label=com.docker.compose.project=$pname" --filter "label=com.docker.compose.service=app"; }
said_unchanged() { grep -q "^hostbridge: app: running.*; unchanged: its snapshot and image are the ones it runs, nothing recreated$" "$work/out"; }
last_audit_unchanged() {
    python3 - "$audit" <<'PY'
import json, sys
last = [e for e in map(json.loads, open(sys.argv[1])) if e.get("verb") == "rebuild" and e["event"] == "succeeded"][-1]
sys.exit(0 if (last.get("detail") or {}).get("unchanged") is True else 1)
PY
}

# ------------------------------------------------------------------ 1: the first rebuild builds

request rebuild app
check "rebuild app: done (state $(q 'r["state"]'), rc $REQ_RC)" test "$(q 'r["state"]')" = done -a "$REQ_RC" -eq 0
[ "$REQ_RC" -eq 0 ] || show
c1=$(container)
check "app has one container ($c1)" test "$(wc -w <<<"$c1")" -eq 1
check "the first rebuild says nothing of unchanged" eval '! said_unchanged && [ "$(q "s[\"app\"].get(\"build\")")" = None ]'
started1=$(inspect "$c1" '{{.State.StartedAt}}')

# ------------------------------------------------------------------ 2: again, nothing changed

t0=$(date +%s%N)
request rebuild app
ms=$((($(date +%s%N) - t0) / 1000000))
check "rebuild app again: done (state $(q 'r["state"]'), rc $REQ_RC, $ms ms through the client)" \
    test "$(q 'r["state"]')" = done -a "$REQ_RC" -eq 0
check "its text says unchanged, nothing recreated" said_unchanged
[ "$failures" -eq 0 ] || show
check "services says build unchanged, settled ok ($(q 's["app"].get("build"), s["app"]["settled"]'))" \
    test "$(q 's["app"].get("build"), s["app"]["settled"]')" = "('unchanged', 'ok')"
check "the same container, never restarted" \
    test "$(container)" = "$c1" -a "$(inspect "$c1" '{{.State.StartedAt}}')" = "$started1"
check "the audit records the rebuild as unchanged" last_audit_unchanged

# ------------------------------------------------------------------ 3: restart, then rebuild

request restart app
check "restart app: done, the same container restarted" \
    eval '[ "$REQ_RC" -eq 0 ] && [ "$(container)" = "$c1" ] && [ "$(inspect "$c1" "{{.State.StartedAt}}")" != "$started1" ]'
restart_log=$P/untracked/hostbridge/$(q 'r["log"]')
check "restart app is the engine's own restart: no podman-compose line in its log" \
    eval 'test -f "$restart_log" && ! grep -q "^exit code: \|podman-compose" "$restart_log"'
request rebuild app
check "rebuild app after the restart: still unchanged, the same container" \
    eval '[ "$REQ_RC" -eq 0 ] && said_unchanged && [ "$(container)" = "$c1" ]'

# ------------------------------------------------------------------ 4: one byte more builds

printf x >>"$P/app/rootfs/marker"
request rebuild app
c2=$(container)
before=$failures
check "one byte appended to the context: rebuild app builds, a new container ($c1 -> $c2)" \
    eval '[ "$REQ_RC" -eq 0 ] && ! said_unchanged && [ -n "$c2" ] && [ "$c2" != "$c1" ]'
[ "$failures" -eq "$before" ] || { echo "  its answer (exit $REQ_RC):"; show; }
request rebuild app
check "and a rebuild after it is unchanged again" \
    eval '[ "$REQ_RC" -eq 0 ] && said_unchanged && [ "$(container)" = "$c2" ]'

# ------------------------------------------------------------------ nothing left

trap - EXIT
cleanup
finish_e2e "$name" "$(($(date +%s) - t_start)) s"
