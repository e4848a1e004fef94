#!/bin/bash
# recreate.sh BIN_DIR: `up` applies what the person approved (issue 48,
# item 2; docs/COMPOSE.md, "Applying an approved edit") against the real
# podman and podman-compose of Debian 12, driven by the installed executor
# (`hostbridge install --backend compose`, then a `hostbridge-executor
# watch` this script starts; no systemd). Two image-only services on a
# local busybox image, app (environment MARK=one) and other:
#  1. `up` is done; bridge.json records both services' definitions and
#     each container carries its own as the io.hostbridge.definition label;
#  2. the person edits app's environment (MARK=two) and approves it; `up`
#     is done, says `recreated (definition changed)` for app and
#     `unchanged` for other (in `services` and in the text); app's
#     container is a new one whose environment has MARK=two, other's is the
#     same container, never restarted (podman-compose 1.0.3's `up -d`
#     alone keeps app's old container: on the code before this, the answer
#     says nothing of it and app still runs MARK=one);
#  3. `up` again says `unchanged` for both and recreates nothing.
# Rootful podman as root, rootless otherwise; examples/demo-app's
# containers.conf. Everything is named after hbrc<pid> and removed on exit.
# Exit 77, reason printed, where podman, podman-compose or a static busybox
# is missing.
set -uo pipefail

[ $# -eq 1 ] || { echo "usage: recreate.sh BIN_DIR" >&2; exit 64; }
bin=$(readlink -f -- "$1")
repo=$(readlink -f -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/../..")
hb=$bin/hostbridge
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# shellcheck source=tests/e2e/compose_bridge.sh
. "$repo/tests/e2e/compose_bridge.sh"
compose_e2e_start "hbrc$$"

# ------------------------------------------------------------------ the image and the project

for applet in sh sleep printenv; do ln -s busybox "$work/img/rootfs/bin/$applet"; done
printf 'FROM scratch\nCOPY rootfs/ /\nCMD ["/bin/sleep", "100000"]\n' >"$work/img/Containerfile"
out=$(podman build -q -t "$image" "$work/img" 2>&1) || die "podman build: $out"

compose() { # MARK: the compose file with app's environment MARK
    cat >"$P/compose.yaml" <<EOF
services:
  app:
    image: $image
    command: ["/bin/sleep", "100000"]
    environment:
      MARK: $1
  other:
    image: $image
    command: ["/bin/sleep", "100001"]
EOF
}
compose one
compose_e2e_commit

# ------------------------------------------------------------------ the bridge

compose_e2e_install
# This test measures what `up` applies, not who approves it: up runs
# unattended, as the person accepted (--accept-uncontained-engine).
sed -i 's/^MODE_up=ask$/MODE_up=auto/' "$policy"
compose_e2e_watch

# container SERVICE: the id of the service's one container
container() {
    podman ps -aq --no-trunc --filter "label=com.docker.compose.project=$pname" \
        --filter "label=com.docker.compose.service=$1"
}
mark_of() { inspect "$1" '{{range .Config.Env}}{{println .}}{{end}}' | sed -n 's/^MARK=//p'; }
recorded() { # SERVICE: bridge.json's settle.definitions entry
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["settle"].get("definitions", {}).get(sys.argv[2], ""))' "$config" "$1" 2>/dev/null
}

# ------------------------------------------------------------------ 1: up

request up
check "up: done (state $(q 'r["state"]'), rc $REQ_RC)" test "$(q 'r["state"]')" = done -a "$REQ_RC" -eq 0
[ "$REQ_RC" -eq 0 ] || show
app1=$(container app)
other1=$(container other)
check "app and other each have one container ($app1, $other1)" \
    test "$(wc -w <<<"$app1")" -eq 1 -a "$(wc -w <<<"$other1")" -eq 1
def_one=$(recorded app)
other_def=$(recorded other)
check "bridge.json records app's definition ($def_one) and other's" \
    eval '[[ $def_one =~ ^[0-9a-f]{64}$ && $other_def =~ ^[0-9a-f]{64}$ ]]'
check "app's container carries it as its label" \
    test -n "$def_one" -a "$(inspect "$app1" '{{index .Config.Labels "io.hostbridge.definition"}}')" = "$def_one"
check "app runs MARK=one" test "$(mark_of "$app1")" = one

# ------------------------------------------------------------------ 2: an approved edit, then up

compose two
request up
check "up before the edit is approved: refused (state $(q 'r["state"]'))" test "$(q 'r["state"]')" = denied
check "app still runs its container, MARK=one" test "$(container app)" = "$app1" -a "$(mark_of "$app1")" = one
out=$(cd "$P" && "${bridge[@]}" "$hb" approve --slug "$slug" --yes 2>&1)
check "the person approves the edit" test $? -eq 0
def_two=$(recorded app)
check "bridge.json records app's new definition ($def_two), other's unchanged" \
    eval '[[ $def_two =~ ^[0-9a-f]{64}$ && $def_two != "$def_one" && $(recorded other) == "$other_def" ]]'
request up
check "up after the approved edit: done (state $(q 'r["state"]'), rc $REQ_RC)" \
    test "$(q 'r["state"]')" = done -a "$REQ_RC" -eq 0
[ "$REQ_RC" -eq 0 ] || show
check "app: recreated (definition changed); other: unchanged ($(q 's["app"].get("definition"), s["other"].get("definition")'))" \
    test "$(q 's["app"].get("definition"), s["other"].get("definition")')" = "('recreated (definition changed)', 'unchanged')"
check "both settled ok ($(q 's["app"]["settled"], s["other"]["settled"]'))" \
    test "$(q 's["app"]["settled"], s["other"]["settled"]')" = "('ok', 'ok')"
check "the text says it per service" \
    eval 'grep -q "app: .*; recreated (definition changed)" "$work/out" && grep -q "other: .*; unchanged" "$work/out"'
[ "$failures" -eq 0 ] || show
app2=$(container app)
check "app's container is a new one ($app1 -> $app2)" test -n "$app2" -a "$app2" != "$app1"
check "app really runs the new environment: MARK=$(mark_of "$app2")" test "$(mark_of "$app2")" = two
check "it carries the new definition" \
    test -n "$def_two" -a "$(inspect "$app2" '{{index .Config.Labels "io.hostbridge.definition"}}')" = "$def_two"
other_started=$(inspect "$other1" '{{.State.StartedAt}}')
check "other is the same container, running" \
    test "$(container other)" = "$other1" -a "$(inspect "$other1" '{{.State.Status}}')" = running

# ------------------------------------------------------------------ 3: up again

request up
check "up again: done, unchanged for both ($(q 's["app"].get("definition"), s["other"].get("definition")'))" \
    test "$(q 'r["state"], s["app"].get("definition"), s["other"].get("definition")')" = "('done', 'unchanged', 'unchanged')"
check "nothing was recreated or restarted" \
    test "$(container app)" = "$app2" -a "$(container other)" = "$other1" \
    -a "$(inspect "$other1" '{{.State.StartedAt}}')" = "$other_started"

# ------------------------------------------------------------------ nothing left

trap - EXIT
cleanup
finish_e2e "$name" "$(($(date +%s) - t_start)) s"
