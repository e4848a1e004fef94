#!/bin/bash
# adopt.sh BIN_DIR: `hostbridge install` adopts the project's containers made
# before the bridge's up, with the person's yes (issue 48, item 7; issue 44
# item 3's naming rule; docs/COMPOSE.md, "Adopting the containers made
# before"). Rootless podman 4.3 and podman-compose 1.0.3 of Debian 12, as an
# ordinary user (as root, a throwaway one made by tools/e2e/testuser.sh),
# `install --backend compose --no-systemd`, as uninstall_stack.sh does.
#
# Two services: app binds ./src to /srv/src; worker is built. Before
# install the person ran the checkout by hand twice: plainly
# (`podman-compose up`, the basename's project, worker built under its
# name) and app with the bridge's -p (unlabelled, its bind unpinned: what
# doctor names). Beside them, containers the install must never touch:
# another project whose name shares the prefix, and another checkout's
# container of the basename's project (another working_dir). Checked:
#  1. install with no terminal and no --adopt-containers lists the three,
#     changes nothing, and prints how to do it (the old install said
#     nothing of the plain run); on a terminal it asks, and "n" changes
#     nothing either;
#  2. "y" on a terminal removes them and the bridge's up makes
#     worker (the image it ran by hand tagged with the bridge's name) and
#     app again: labelled, its bind on the pin, the checkout's src inside;
#     doctor names no container; the other two still run, the same ids;
#     install --adopt-containers again finds nothing to adopt;
#  3. an up that fails after the removal (the image's tag gone) exits 1,
#     names app as down and prints the rows, which start app once the tag
#     is back.
#
# Everything made is named after hbad<pid> and removed on exit. Exit 77,
# reason printed, where rootless podman, podman-compose or a static busybox
# is missing.
# shellcheck disable=SC2016
set -uo pipefail

[ $# -eq 1 ] || { echo "usage: adopt.sh BIN_DIR" >&2; exit 64; }
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
e2e_needs podman podman-compose python3 setpriv script
[ -x "$bin/hostbridge" ] || { echo "no $bin/hostbridge: build first" >&2; exit 1; }

if [ "$(id -u)" -eq 0 ]; then
    exec "$repo/tools/e2e/run-as-test-user.sh" hb-e2e-ad "$bin" tests/e2e/adopt.sh
fi

[ -n "${XDG_RUNTIME_DIR:-}" ] || skip "XDG_RUNTIME_DIR is not set (rootless podman needs it)"
t_start=$(date +%s)
hb=$bin/hostbridge
name=hbad$$
work=$(mktemp -d "$HOME/$name.XXXXXX")
P=$work/$name
slug=$name
image=localhost/$name:1
mkdir -p "$HOME/.config/containers" &&
    cp "$repo/examples/demo-app/containers.conf" "$HOME/.config/containers/containers.conf" || exit 1
if ! info=$(podman info 2>&1 >/dev/null); then
    rm -rf -- "$work"
    skip "rootless podman does not work here as $(id -un) (podman info: $(tail -n 3 <<<"$info"))"
fi

own=$(compose_project_of "$P")
plain=$name                     # podman-compose 1.0.3's name for the directory $name
prefixed=${name}-b_app_1        # another project, whose name shares the prefix
clone=${name}_app_9             # the basename's project, from another checkout

cleanup() {
    podman rm -f -t 0 "${plain}_app_1" "${own}_app_1" "${plain}_worker_1" "${own}_worker_1" \
        "$prefixed" "$clone" >/dev/null 2>&1
    local net
    for net in "${plain}_default" "${own}_default"; do
        podman network exists "$net" 2>/dev/null && podman network rm -f "$net" >/dev/null 2>&1
    done
    podman rmi -f "localhost/${plain}_worker" "localhost/${own}_worker" "$image" >/dev/null 2>&1
    "$hb" uninstall --slug "$slug" --purge >/dev/null 2>&1
    rm -rf -- "$work"
}
trap cleanup EXIT
trap 'echo "interrupted"; exit 130' INT TERM HUP

e2e_bind_app "$P" "$image" "$work/rootfs"
# worker: built from the checkout, which the hand run does under its own
# project's name (localhost/<project>_worker), not the bridge's.
{
    mkdir -p "$P/w" && printf 'FROM %s\nLABEL role=worker\n' "$image" >"$P/w/Containerfile" &&
        printf '  worker:\n    build: ./w\n    init: true\n' >>"$P/compose.yaml" &&
        git -C "$P" add -A && git -C "$P" -c user.email=t@example.invalid -c user.name=t commit -qm worker
} || die "cannot add worker to $P"
(cd "$P" && timeout 120 podman-compose up -d >"$work/hand.log" 2>&1) ||
    die "podman-compose up by hand: $(tail -n 5 "$work/hand.log")"
(cd "$P" && timeout 120 podman-compose -p "$own" up -d --no-build app >>"$work/hand.log" 2>&1) ||
    die "podman-compose -p $own up by hand: $(tail -n 5 "$work/hand.log")"
podman run -d --init --name "$prefixed" --label "com.docker.compose.project=${name}-b" \
    --label "com.docker.compose.project.working_dir=$work/${name}-b" \
    --label com.docker.compose.service=app "$image" >/dev/null || die "podman run $prefixed"
podman run -d --init --name "$clone" --label "com.docker.compose.project=$plain" \
    --label "com.docker.compose.project.working_dir=$work/clone/$name" \
    --label com.docker.compose.service=app "$image" >/dev/null || die "podman run $clone"
id_of() { podman container inspect --format '{{.Id}}' "$1" 2>/dev/null; }
running() { [ "$(podman container inspect --format '{{.State.Running}}' "$1" 2>/dev/null)" = true ]; }
others_untouched() {
    [ "$(id_of "$prefixed")" = "$prefixed_id" ] && [ "$(id_of "$clone")" = "$clone_id" ] &&
        running "$prefixed" && running "$clone"
}
prefixed_id=$(id_of "$prefixed")
clone_id=$(id_of "$clone")
plain_id=$(id_of "${plain}_app_1")
worker_id=$(id_of "${plain}_worker_1")
worker_image=$(podman container inspect --format '{{.Image}}' "${plain}_worker_1" 2>/dev/null)
hand_id=$(id_of "${own}_app_1")
{ [ -n "$plain_id" ] && [ -n "$hand_id" ] && [ -n "$worker_id" ] && [ -n "$worker_image" ]; } ||
    die "the hand runs made no ${plain}_app_1, ${plain}_worker_1 or ${own}_app_1"

install_argv=("$hb" install --project-dir "$P" --backend compose --compose-file compose.yaml
    --compose-cmd podman-compose --slug "$slug" --rate-limit 1000/600 --read-rate-limit 1000/60
    --no-systemd --accept-uncontained-engine)
hb_install() { "${install_argv[@]}" "$@" 2>&1 </dev/null; }
shown() { printf '%s\n' "$out" | sed -n '/^containers of this project made before/,$p' | sed 's/^/  install| /'; }
# hb_install_shown [OPTION]: hb_install into $out and $rc, its adoption part shown.
hb_install_shown() {
    out=$(hb_install "$@")
    rc=$?
    shown
}
# on_terminal ANSWER: the same install on a pseudo-terminal (script(1)),
# where the person types ANSWER; into $out (without the terminal's \r) and $rc.
on_terminal() {
    printf '%s\n' "$1" | script -qec "$(printf '%q ' "${install_argv[@]}")" /dev/null >"$work/tty.out" 2>&1
    rc=$?
    out=$(tr -d '\r' <"$work/tty.out")
    shown
}

# ------------------------------------------------------------------ 1. no yes

hb_install_shown
check "install without a yes: exit 0, lists ${plain}_app_1, ${plain}_worker_1 and ${own}_app_1 with their service, and says they are left" \
    eval '[ "$rc" -eq 0 ] && grep -q "^  ${plain}_worker_1 (service worker, ${worker_id:0:12}): podman-compose made it" <<<"$out" && grep -q "^  ${plain}_app_1 (service app, ${plain_id:0:12}): podman-compose made it from the checkout by hand" <<<"$out" && grep -q "^  ${own}_app_1 (service app, ${hand_id:0:12}): it lacks the bridge.s label" <<<"$out" && grep -q "no terminal to confirm on (and no --adopt-containers); the containers above are left as they are" <<<"$out"'
check "install without a yes: prints the rm line by id and the install line with --adopt-containers" \
    eval 'rm_line=$(grep -E "^/[^ ]*/podman rm -f( [0-9a-f]{12}){3}\$" <<<"$out") && for id in "$plain_id" "$hand_id" "$worker_id"; do grep -q " ${id:0:12}" <<<"$rm_line" || exit 1; done && grep -qE "install .*--slug $slug --adopt-containers\$" <<<"$out"'
check "install without a yes: lists neither $prefixed nor $clone" \
    eval '! grep -qE "^  ($prefixed|$clone) " <<<"$out"'
check "install without a yes: nothing changed (the three still run, the same ids; the others too)" \
    eval '[ "$(id_of "${plain}_app_1")" = "$plain_id" ] && [ "$(id_of "${plain}_worker_1")" = "$worker_id" ] && [ "$(id_of "${own}_app_1")" = "$hand_id" ] && running "${plain}_app_1" && running "${own}_app_1" && others_untouched'
# On a terminal it asks; "n" changes nothing either.
on_terminal n
check "install on a terminal: asks, and on n says not confirmed (exit 0)" \
    eval '[ "$rc" -eq 0 ] && grep -q "Adopt them now? \[y/N\]" <<<"$out" && grep -q "not confirmed; the containers above are left as they are" <<<"$out"'
check "install on a terminal, n: nothing changed" \
    eval '[ "$(id_of "${plain}_app_1")" = "$plain_id" ] && [ "$(id_of "${plain}_worker_1")" = "$worker_id" ] && [ "$(id_of "${own}_app_1")" = "$hand_id" ] && others_untouched'
doctor=$("$hb" doctor --slug "$slug" 2>&1)
check "doctor before adopting names ${own}_app_1 (a bind unpinned)" \
    grep -q "container ${own}_app_1 bind-mounts $P/src" <<<"$doctor"

# ------------------------------------------------------------------ 2. yes

config=$HOME/.config/hostbridge/$slug/bridge.json
run_dir=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_dir"])' "$config") ||
    die "no run_dir in $config"
on_terminal y
check "install on a terminal, y: exit 0, says it removed the three and adopted them" \
    eval '[ "$rc" -eq 0 ] && grep -qxF "  removed ${plain}_app_1 (app)" <<<"$out" && grep -qxF "  removed ${own}_app_1 (app)" <<<"$out" && grep -qxF "  removed ${plain}_worker_1 (worker)" <<<"$out" && grep -q "^adopted 3 container(s): the bridge.s up made them again" <<<"$out"'
check "install, y: the image worker ran by hand is tagged ${own}_worker, and ${own}_worker_1 runs it, labelled" \
    eval 'grep -q "  tagged the image worker ran (${worker_image:0:12}) ${own}_worker," <<<"$out" && ! podman container exists "${plain}_worker_1" && running "${own}_worker_1" && [ "$(podman container inspect --format "{{.Image}} {{index .Config.Labels \"io.hostbridge.project\"}}" "${own}_worker_1")" = "$worker_image $own" ]'
check "install, y: ${plain}_app_1 is gone, ${own}_app_1 is a new container" \
    eval '! podman container exists "${plain}_app_1" && running "${own}_app_1" && [ "$(id_of "${own}_app_1")" != "$hand_id" ]'
check "the new ${own}_app_1 carries io.hostbridge.project=$own" \
    test "$(podman container inspect --format '{{index .Config.Labels "io.hostbridge.project"}}' "${own}_app_1" 2>/dev/null)" = "$own"
source_of() {
    podman container inspect --format '{{range .Mounts}}{{if eq .Destination "/srv/src"}}{{.Source}}{{end}}{{end}}' \
        "${own}_app_1" 2>/dev/null
}
check "the new ${own}_app_1 binds the pin $run_dir/.hostbridge-binds/src, which shows the checkout's src" \
    eval '[ "$(source_of)" = "$run_dir/.hostbridge-binds/src" ] && [ "$(podman exec "${own}_app_1" cat /srv/src/marker 2>/dev/null)" = checkout ]'
check "install, y: $prefixed and $clone still run, the same ids" others_untouched
doctor=$("$hb" doctor --slug "$slug" 2>&1)
check "doctor after adopting names no container" eval '! grep -q "container .* bind-mounts\|cannot .* container\|container .* is running and" <<<"$doctor"'
grep -q "container " <<<"$doctor" && grep "container " <<<"$doctor" | sed 's/^/  doctor| /'
out=$(hb_install --adopt-containers)
rc=$?
check "install --adopt-containers again: nothing to adopt, ${own}_app_1 kept" \
    eval '[ "$rc" -eq 0 ] && ! grep -q "^containers of this project made before" <<<"$out" && running "${own}_app_1"'

# ------------------------------------------------------------------ 3. an up that fails

# A plain run again; then app's image loses its one name (the container
# keeps it by id): the bridge's up cannot find localhost/...:1 after the
# removal. worker's image keeps the bridge's name: not tagged again.
(cd "$P" && timeout 120 podman-compose up -d --no-build >>"$work/hand.log" 2>&1) ||
    die "podman-compose up by hand again: $(tail -n 5 "$work/hand.log")"
podman rm -f -t 0 "${own}_app_1" >/dev/null 2>&1
image_id=$(podman image inspect --format '{{.Id}}' "$image") || die "no image $image"
podman untag "$image" "$image" || die "podman untag $image"
hb_install_shown --adopt-containers
[ "$rc" -eq 1 ] || echo "  (install exited $rc)"
check "install --adopt-containers, up failing: exit 1, names app (not worker) as down and prints the rows; worker's image not tagged again" \
    eval '[ "$rc" -eq 1 ] && ! grep -q "tagged the image" <<<"$out" && grep -q "adopting the containers failed: .*; down now: app\. Start them with the bridge.s rows" <<<"$out" && grep -q "^cd .* && env .* sh -c .*hostbridge-pin.* pin .*podman-compose.* up -d --no-build" <<<"$out"'
check "install --adopt-containers, up failing: ${plain}_app_1 was removed, no app runs" \
    eval '! podman container exists "${plain}_app_1" && ! running "${own}_app_1"'
podman tag "$image_id" "$image" || die "podman tag $image"
rows=$(grep "^cd .* && env .* sh -c " <<<"$out" | tail -n 1)
sh -c "$rows" >"$work/rows.log" 2>&1
check "the printed rows start app on the pin once the tag is back" \
    eval 'running "${own}_app_1" && [ "$(source_of)" = "$run_dir/.hostbridge-binds/src" ]'
running "${own}_app_1" || sed 's/^/  rows| /' "$work/rows.log"
check "$prefixed and $clone still run, the same ids" others_untouched

cleanup
trap - EXIT
finish_e2e "$name" "$(($(date +%s) - t_start)) s"
