#!/bin/bash
# uninstall_stack.sh BIN_DIR: `hostbridge uninstall` leaves the person's
# stack startable (issue 48, item 7; docs/COMPOSE.md, "Bind sources are
# pinned"). Rootless podman 4.3 and podman-compose 1.0.3 of Debian 12, as an
# ordinary user (as root, a throwaway one made by tools/e2e/testuser.sh),
# driven by the real installed executor (`hostbridge install --backend
# compose --no-systemd`, then `hostbridge-executor watch`, as
# bind_pin_attack.sh does). The units' half is the package test's
# (tests/package/purge_live.sh, a real user manager).
#
# One service, app, binds ./src to /srv/src; the bridge's `up` creates it
# with the pin (<run_dir>/.hostbridge-binds/src). Checked:
#  1. where the engine does not answer, uninstall keeps the run tree (the
#     pins' mount points) and the config, and says to run it again; then
#     it names app's container, brings it down (stopped and removed) and
#     prints the command that starts the stack again;
#  2. that command, run as printed, starts app with the checkout's src
#     mounted, and app survives a stop and a start (the old uninstall
#     removed the run tree under the running container: its next start
#     failed, "stat ... no such file or directory");
#  3. the run tree is gone; a container of another project is untouched.
#
# Everything made is named after hbun<pid> and removed on exit. Exit 77,
# reason printed, where rootless podman, podman-compose or a static busybox
# is missing.
# shellcheck disable=SC2016
set -uo pipefail

[ $# -eq 1 ] || { echo "usage: uninstall_stack.sh BIN_DIR" >&2; exit 64; }
bin=$(readlink -f -- "$1")
self=$(readlink -f -- "${BASH_SOURCE[0]}")
repo=$(readlink -f -- "$(dirname -- "$self")/../..")
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

skip() {
    echo "SKIP: $*"
    exit 77
}
# shellcheck source=tests/e2e/verdicts.sh
. "$repo/tests/e2e/verdicts.sh"
e2e_needs podman podman-compose python3 setpriv
[ -x "$bin/hostbridge" ] || { echo "no $bin/hostbridge: build first" >&2; exit 1; }

if [ "$(id -u)" -eq 0 ]; then
    exec "$repo/tools/e2e/run-as-test-user.sh" hb-e2e-un "$bin" tests/e2e/uninstall_stack.sh
fi

[ -n "${XDG_RUNTIME_DIR:-}" ] || skip "XDG_RUNTIME_DIR is not set (rootless podman needs it)"
t_start=$(date +%s)
hb=$bin/hostbridge
name=hbun$$
work=$(mktemp -d "$HOME/$name.XXXXXX")
P=$work/$name
slug=$name
watch_pid=""
# The person's own podman configuration, where the printed command finds it.
mkdir -p "$HOME/.config/containers" &&
    cp "$repo/examples/demo-app/containers.conf" "$HOME/.config/containers/containers.conf" || exit 1
if ! info=$(podman info 2>&1 >/dev/null); then
    rm -rf -- "$work"
    skip "rootless podman does not work here as $(id -un) (podman info: $(tail -n 3 <<<"$info"))"
fi

pname=$(compose_project_of "$P")
container=${pname}_app_1
other=$name-other

cleanup() {
    [ -z "$watch_pid" ] || { kill -TERM "$watch_pid" 2>/dev/null && wait "$watch_pid" 2>/dev/null; }
    podman rm -f -t 0 "$container" "$other" >/dev/null 2>&1
    podman network exists "${pname}_default" 2>/dev/null && podman network rm -f "${pname}_default" >/dev/null 2>&1
    podman rmi -f "localhost/$name:1" >/dev/null 2>&1
    "$hb" uninstall --slug "$slug" --purge >/dev/null 2>&1
    rm -rf -- "$work"
}
trap cleanup EXIT
trap 'echo "interrupted"; exit 130' INT TERM HUP

e2e_bind_app "$P" "localhost/$name:1" "$work/rootfs"
# Another project's container, which uninstall must leave alone.
podman run -d --init --name "$other" "localhost/$name:1" >/dev/null || die "podman run $other"

out=$("$hb" install --project-dir "$P" --backend compose --compose-file compose.yaml \
    --compose-cmd podman-compose --slug "$slug" --rate-limit 1000/600 --read-rate-limit 1000/60 \
    --no-systemd --accept-uncontained-engine 2>&1) || die "hostbridge install: $out"
config=$HOME/.config/hostbridge/$slug/bridge.json
run_dir=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_dir"])' "$config")
"$HOME/.local/lib/hostbridge/$slug/hostbridge-executor" watch --config "$config" </dev/null >>"$work/watch.log" 2>&1 &
watch_pid=$!
HOSTBRIDGE_SPOOL=$P/untracked/hostbridge "$P/untracked/hostbridge/request" --timeout 300 up >"$work/up.log" 2>&1 ||
    die "up through the bridge: $(tail -n 15 "$work/up.log")"
stored_source() {
    podman container inspect --format '{{range .Mounts}}{{if eq .Destination "/srv/src"}}{{.Source}}{{end}}{{end}}' \
        "$container" 2>/dev/null
}
[ "$(stored_source)" = "$run_dir/.hostbridge-binds/src" ] ||
    die "up did not create $container on the pin: its source is '$(stored_source)'"
kill -TERM "$watch_pid" && wait "$watch_pid" 2>/dev/null
watch_pid=""

# ------------------------------------------------------------------ 1. uninstall

# The engine not answering (pins.engine made /bin/false): which containers
# mount the pins is unknown, so nothing they may mount is deleted, and the
# config stays for uninstall to run again.
cp "$config" "$work/bridge.json.saved" || die "cp $config"
python3 - "$config" <<'PY' || die "cannot edit $config"
import json, sys
j = json.load(open(sys.argv[1]))
j["pins"]["engine"] = "/bin/false"
json.dump(j, open(sys.argv[1], "w"), indent=2)
PY
out=$("$hb" uninstall --slug "$slug" 2>&1)
rc=$?
check "uninstall, the engine not answering: exit 1, the run tree (and its pins' dir) and the config kept, app still running, and it says to run it again" \
    eval '[ "$rc" -eq 1 ] && [ -d "$run_dir/.hostbridge-binds" ] && [ -f "$config" ] && grep -q "uninstall --slug $slug\$" <<<"$out" && [ "$(podman container inspect --format "{{.State.Running}}" "$container")" = true ]'
[ "$rc" -eq 1 ] || printf '%s\n' "$out" | sed 's/^/  uninstall| /'
cp "$work/bridge.json.saved" "$config" || die "cp back $config"

out=$("$hb" uninstall --slug "$slug" 2>&1)
rc=$?
printf '%s\n' "$out" | sed 's/^/  uninstall| /'
check "uninstall: exit 0" test "$rc" -eq 0
check "uninstall: names $container and says it stopped and removed it" \
    grep -qxF "  stopped and removed $container" <<<"$out"
check "uninstall: $container is gone, $other still runs" \
    eval '! podman container exists "$container" && [ "$(podman container inspect --format "{{.State.Running}}" "$other")" = true ]'
again=$(grep -A1 -F "start the stack again" <<<"$out" | tail -n 1)
expected="cd $P && /usr/bin/podman-compose -p $pname -f $P/compose.yaml up -d"
check "uninstall: prints the command that starts the stack again ($expected)" test "$again" = "$expected"
check "uninstall: the run tree $run_dir is gone" test ! -e "$run_dir"

# ------------------------------------------------------------------ 2. the stack starts again

# As printed; the documented one where uninstall printed none (the old code).
[ "$again" = "$expected" ] || again="cd $P && podman-compose -p $pname -f $P/compose.yaml up -d"
sh -c "$again" >"$work/again.log" 2>&1
shows_checkout() {
    [ "$(podman container inspect --format '{{.State.Running}}' "$container" 2>/dev/null)" = true ] &&
        [ "$(podman exec "$container" cat /srv/src/marker 2>/dev/null)" = checkout ]
}
check "the printed command starts app with the checkout's src" shows_checkout
podman stop -t 5 "$container" >/dev/null 2>&1
podman start "$container" >"$work/start.log" 2>&1
check "app starts again after a stop (its bind source exists)" shows_checkout
shows_checkout || { cat "$work/again.log" "$work/start.log"; }
check "app's bind source is the checkout, no pin" test "$(stored_source)" = "$P/src"

cleanup
trap - EXIT
finish_e2e "$name" "$(($(date +%s) - t_start)) s"
