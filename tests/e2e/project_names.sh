#!/bin/bash
# project_names.sh BIN_DIR: a project's engine names are its own (issue 44
# item 3; docs/COMPOSE.md, "The project's name"), against the real podman
# and podman-compose 1.0.3 of Debian 12, driven by the real installed
# executor (`hostbridge install --backend compose --no-systemd`, then a
# `hostbridge-executor watch` this script starts, as build_attacks.sh does).
#
# Two checkouts with the same directory name: A, installed (the agent's),
# and B, a clone the person runs by hand with plain `podman-compose up -d`
# (no -p). Round 4's attack (re-project-collision.sh): both derived one
# project label, image tag and container name from the basename, so A's
# `rebuild app` retagged and removed B's, and A's `logs app` read B's.
# Checked:
#  0. control: the name the old rule gave A (the basename, normalised as
#     podman-compose 1.0.3 does) is the project label, container name and
#     image tag podman-compose gave B by hand: they collided;
#  1. install names A's project <basename>_hb<8 hex of sha256(A's path)>,
#     records it in bridge.json, and prints the -p to use by hand;
#  2. A's rebuild, up, restart, logs and status never touch B: B's
#     container (id, start time), its image tag and its image stay; A's
#     logs show A's container's output and never B's; A's status never
#     names B's container;
#  3. install refuses a project name whose containers another checkout
#     made (B run by hand with -p A's name), naming the clash;
#  4. install notes a stack run by hand in A without -p (the basename's
#     project, not the bridge's) and prints the commands that move it;
#  5. a compose file with `container_name:` in two checkouts, C installed,
#     D run by hand with C's -p: the old logs row (podman-compose logs by
#     name) reads D's container and the settle step's list (by the project
#     label) lists it (the controls); C's logs, status and up (its settle
#     step) never take it for C's: only containers C's rendered file
#     labelled io.hostbridge.project count.
#     C's own carry that label beside the file's (a list, and a mapping on
#     a service that extends).
#
# Rootful podman when run as root (rootless otherwise, or as root with
# --rootless: a throwaway ordinary user); the containers.conf
# of examples/demo-app. Everything made is named after hbpn<pid> and
# removed on exit; tools/e2e/leftovers.sh must then find nothing. Exit 77,
# reason printed, where podman, podman-compose or a static busybox is
# missing.
# shellcheck disable=SC2016
set -uo pipefail

[ $# -eq 1 ] || { [ $# -eq 2 ] && [ "$2" = --rootless ]; } ||
    { echo "usage: project_names.sh BIN_DIR [--rootless]" >&2; exit 64; }
bin=$(readlink -f -- "$1")
repo=$(readlink -f -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/../..")
hb=$bin/hostbridge
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

skip() {
    echo "SKIP: $*"
    exit 77
}
# --rootless: as root, the same as a throwaway ordinary user, whose
# rootless podman is what round 4's attack met (re-project-collision.sh).
if [ "${2:-}" = --rootless ]; then
    [ "$(id -u)" -eq 0 ] || skip "already rootless: e2e_project_names runs as $(id -un)"
    command -v setpriv >/dev/null || skip "setpriv is not installed"
    exec "$repo/tools/e2e/run-as-test-user.sh" hb-e2e-pn "$bin" tests/e2e/project_names.sh
fi
for tool in podman podman-compose python3 sha256sum; do
    command -v "$tool" >/dev/null || skip "$tool is not installed"
done
busybox=$(command -v busybox) || skip "busybox is not installed"
[[ $(LC_ALL=C ldd "$busybox" 2>&1) == *"not a dynamic executable"* ]] ||
    skip "$busybox is not statically linked (busybox-static)"
[ -x "$hb" ] || { echo "no $hb: build first" >&2; exit 1; }

t_start=$(date +%s)
name=hbpn$$
work=$(mktemp -d "/tmp/$name.XXXXXX")
A=$work/agent/$name # the installed checkout
B=$work/own/$name   # the person's clone, run by hand: the same basename
slug=$name
own="" # A's project name, once install wrote it
cown="" # C's (section 5)
cwatch_pid=""
watch_pid=""
export CONTAINERS_CONF=$work/containers.conf
cp "$repo/examples/demo-app/containers.conf" "$CONTAINERS_CONF"
if ! podman info >/dev/null 2>&1; then
    rm -rf -- "$work"
    skip "podman does not work here as $(id -un) (podman info fails)"
fi

cleanup() {
    local ids p
    [ -z "$watch_pid" ] || { kill -TERM "$watch_pid" 2>/dev/null && wait "$watch_pid" 2>/dev/null; }
    [ -z "${cwatch_pid:-}" ] || { kill -TERM "$cwatch_pid" 2>/dev/null && wait "$cwatch_pid" 2>/dev/null; }
    for p in "$name" ${own:+"$own"} ${cown:+"$cown"}; do
        ids=$(podman ps -aq --filter "label=io.podman.compose.project=$p" 2>/dev/null)
        # shellcheck disable=SC2086 # a list of IDs
        [ -z "$ids" ] || podman rm -f -t 0 $ids >/dev/null 2>&1
        podman network exists "${p}_default" 2>/dev/null && podman network rm -f "${p}_default" >/dev/null 2>&1
    done
    ids=$(podman images -aq --filter "label=io.hostbridge.test=$name" 2>/dev/null | sort -u)
    # shellcheck disable=SC2086
    [ -z "$ids" ] || podman rmi -f $ids >/dev/null 2>&1
    chmod -R u+rwX "$work" 2>/dev/null
    rm -rf -- "$work"
}
trap cleanup EXIT
trap 'echo "interrupted"; exit 130' INT TERM HUP

# shellcheck source=tests/e2e/verdicts.sh
. "$repo/tests/e2e/verdicts.sh"

# ------------------------------------------------------------------ two checkouts, one name

commit_and_clone() { # DIR CLONE: DIR made a git repository of its files, cloned to CLONE
    {
        git -C "$1" init -q . &&
            git -C "$1" add -A &&
            git -C "$1" -c user.email=t@example.invalid -c user.name=t commit -qm checkout &&
            git clone -q "$1" "$2"
    } || die "git init of $1 and clone to $2"
}

mkdir -p "$A/app/rootfs/bin" "$(dirname -- "$B")" || die "mkdir"
cp "$busybox" "$A/app/rootfs/bin/busybox"
for applet in sh sleep cat; do ln -s busybox "$A/app/rootfs/bin/$applet"; done
echo "CHECKOUT-A-v1" >"$A/app/version.txt"
cat >"$A/app/Containerfile" <<EOF
FROM scratch
LABEL io.hostbridge.test=$name
COPY rootfs/ /
COPY version.txt /version.txt
CMD ["/bin/sh", "-c", "cat /version.txt; exec sleep 100000"]
EOF
cat >"$A/compose.yaml" <<'EOF'
services:
  app:
    build: ./app
    init: true
EOF
commit_and_clone "$A" "$B"
echo "CHECKOUT-B-PERSON" >"$B/app/version.txt"

# The person runs their clone by hand, as podman-compose users do.
(cd "$B" && timeout 120 podman-compose up -d >"$work/b-up.log" 2>&1)
b_c=${name}_app_1
b_id=$(podman container inspect --format '{{.Id}}' "$b_c" 2>/dev/null) ||
    die "podman-compose up in $B made no $b_c: $(tail -5 "$work/b-up.log")"
b_started=$(podman container inspect --format '{{.State.StartedAt}}' "$b_c")
b_image=$(podman container inspect --format '{{.Image}}' "$b_c")
b_label=$(podman container inspect --format '{{index .Config.Labels "com.docker.compose.project"}}' "$b_c")
b_tag_id() { podman image inspect --format '{{.Id}}' "localhost/${name}_app:latest" 2>/dev/null; }
b_tag=$(b_tag_id)

# ------------------------------------------------------------------ 0: the control

# The old rule (admin/compose/build_plan.cpp, compose_project_name of the
# compose dir's basename): lower case, [-_a-z0-9] kept, leading -/_ dropped.
# shellcheck disable=SC2018,SC2019 # project names are ASCII
old_rule=$(basename -- "$A" | tr 'A-Z' 'a-z' | tr -cd 'a-z0-9_-' | sed 's/^[-_]*//')
check "control: the old rule's name for A ($old_rule) is B's hand-run project label ($b_label), container name and image tag" \
    eval '[ "$old_rule" = "$b_label" ] && [ "${old_rule}_app_1" = "$b_c" ] && [ -n "$b_tag" ] && [ "$b_tag" = "$b_image" ]'

# ------------------------------------------------------------------ 1: install names A's own project

bridge=(env -u XDG_CONFIG_HOME -u XDG_STATE_HOME -u XDG_CACHE_HOME "HOME=$work/home")
mkdir -p "$work/home"
root_flag=()
[ "$(id -u)" -eq 0 ] && root_flag=(--allow-root)
install_a() {
    "${bridge[@]}" "$hb" install --project-dir "$A" --backend compose --compose-file compose.yaml \
        --compose-cmd "env CONTAINERS_CONF=$CONTAINERS_CONF podman-compose" --slug "$slug" \
        --rate-limit 1000/600 --read-rate-limit 1000/60 --no-systemd --accept-uncontained-engine \
        "${root_flag[@]}" 2>&1
}
out=$(install_a) || die "hostbridge install: $out"
config=$work/home/.config/hostbridge/$slug/bridge.json
policy=$work/home/.config/hostbridge/$slug/policy.conf
expected=${name}_hb$(printf %s "$A" | sha256sum | cut -c1-8)
own=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["settle"]["project"])' "$config") ||
    die "bridge.json has no settle.project: $(cat "$config")"
check "install: A's project is $expected (basename, _hb, sha256 of its path), not $old_rule" \
    eval '[ "$own" = "$expected" ] && [ "$own" != "$old_rule" ]'
check "install: bridge.json's build names A's image and container after it" \
    python3 -c 'import json,sys; b=json.load(open(sys.argv[1]))["build"]; s=b["services"][0]; assert b["project"]==sys.argv[2] and s["image"]==sys.argv[2]+"_app" and s["container"]==sys.argv[2]+"_app_1", b' \
    "$config" "$own"
check "install: prints the -p to run compose by hand on A's project" grep -q -- "-p $own" <<<"$out"
# Up and rebuild run unattended here, as the person accepted
# (--accept-uncontained-engine; build_attacks.sh does the same): the test is
# about names, not about the person's approval.
sed -i 's/^MODE_up=ask$/MODE_up=auto/; s/^MODE_rebuild=ask$/MODE_rebuild=auto/' "$policy"
client=$A/untracked/hostbridge/request
[ -x "$client" ] || die "install dropped no client at $client"
"${bridge[@]}" "$work/home/.local/lib/hostbridge/$slug/hostbridge-executor" watch --config "$config" "${root_flag[@]}" \
    </dev/null >>"$work/watch.log" 2>&1 &
watch_pid=$!
echo "installed $slug as project $own; watch pid $watch_pid"

request() { # VERB [ARG]: REQ_RC, REQ_OUT
    "$client" --timeout 300 "$@" >"$work/out" 2>"$work/err"
    REQ_RC=$?
    REQ_OUT=$(cat "$work/out" "$work/err")
}
show() { printf '%s\n' "$REQ_OUT" | tail -n 15; }
b_untouched() { # B's container: the same one, not restarted, on its image, still tagged
    [ "$(podman container inspect --format '{{.Id}} {{.State.StartedAt}} {{.Image}} {{.State.Status}}' "$b_c" 2>/dev/null)" = \
        "$b_id $b_started $b_image running" ] && [ "$(b_tag_id)" = "$b_tag" ]
}

# ------------------------------------------------------------------ 2: A's verbs never touch B

echo "CHECKOUT-A-v2" >"$A/app/version.txt"
request rebuild app
check "rebuild app: exit 0" test "$REQ_RC" -eq 0
[ "$REQ_RC" -eq 0 ] || show
check "rebuild app: B's container, image and tag untouched (${name}_app still $b_tag)" b_untouched
check "rebuild app: A's new image is tagged ${own}_app, not ${name}_app" \
    eval '[ "$(podman image inspect --format "{{.Id}}" "localhost/${own}_app:latest" 2>/dev/null)" = "$(podman container inspect --format "{{.Image}}" "${own}_app_1" 2>/dev/null)" ]'

# up never builds (docs/BUILDS.md): after the rebuild, A's image exists.
request up
check "up: exit 0, A's container ${own}_app_1 runs" \
    eval '[ "$REQ_RC" -eq 0 ] && [ "$(podman container inspect --format "{{.State.Status}}" "${own}_app_1" 2>/dev/null)" = running ]'
[ "$REQ_RC" -eq 0 ] || show
check "up: B's container, image and tag untouched" b_untouched

request restart app
check "restart app: exit 0" test "$REQ_RC" -eq 0
[ "$REQ_RC" -eq 0 ] || show
check "restart app: B's container untouched" b_untouched

request logs app
check "logs app: A's container's output (CHECKOUT-A-v2), never B's" \
    eval '[ "$REQ_RC" -eq 0 ] && grep -q CHECKOUT-A-v2 <<<"$REQ_OUT" && ! grep -q CHECKOUT-B-PERSON <<<"$REQ_OUT"'
[ "$REQ_RC" -eq 0 ] || show
request --lines 5 logs app
check "logs --lines 5 app (read by container id, not compose): A's container's output, never B's" \
    eval '[ "$REQ_RC" -eq 0 ] && grep -q CHECKOUT-A-v2 <<<"$REQ_OUT" && ! grep -q CHECKOUT-B-PERSON <<<"$REQ_OUT"'
[ "$REQ_RC" -eq 0 ] || show

request status
# status reads the engine's JSON of A's labelled containers alone (no ps
# text): A's app runs, and nothing of B's (name, id, image) is in it.
check "status: exit 0, A's app running, never B's container ($b_c) or image" \
    eval '[ "$REQ_RC" -eq 0 ] && grep -q "hostbridge: app: running" <<<"$REQ_OUT" &&
          ! grep -q -e "${b_c}" -e "${b_id:0:12}" -e "${b_image:0:12}" <<<"$REQ_OUT"'
[ "$REQ_RC" -eq 0 ] || show
check "after every verb: B's container, image and tag untouched, B still prints its own text" \
    eval 'b_untouched && podman logs "$b_c" 2>&1 | grep -q CHECKOUT-B-PERSON'

# ------------------------------------------------------------------ 3: install refuses a clash

# The person removes A's container and runs B by hand under A's name (with
# A's image): install, run again, refuses the name.
podman rm -f -t 0 "${own}_app_1" >/dev/null 2>&1
(cd "$B" && timeout 120 podman-compose -p "$own" up -d --no-build >"$work/b-clash.log" 2>&1)
check "B runs by hand under A's name (the clash to refuse)" \
    eval '[ "$(podman container inspect --format "{{index .Config.Labels \"com.docker.compose.project.working_dir\"}}" "${own}_app_1" 2>/dev/null)" = "$B" ]'

out=$(install_a)
rc=$?
check "install: refuses A's name while B's containers carry it, naming the clash and -p ($rc)" \
    eval '[ "$rc" -eq 1 ] && grep -q "already has containers this checkout did not make" <<<"$out" && grep -q "from $B" <<<"$out"'
[ "$rc" -eq 1 ] || printf '%s\n' "$out" | tail -n 10

# ------------------------------------------------------------------ 4: a stack run by hand in A

# B's projects gone, the person runs A itself by hand without -p: that is
# the basename's project, not the bridge's, and install says how to move it.
(cd "$B" && timeout 120 podman-compose -p "$own" down >>"$work/b-clash.log" 2>&1)
(cd "$B" && timeout 120 podman-compose down >>"$work/b-clash.log" 2>&1)
(cd "$A" && timeout 120 podman-compose up -d --no-build >"$work/a-hand.log" 2>&1)
out=$(install_a)
rc=$?
check "install: notes that A runs by hand as $old_rule, not as $own, with the commands that move it ($rc)" \
    eval '[ "$rc" -eq 0 ] && grep -q "the stack runs by hand as the compose project $old_rule (${old_rule}_app_1), not as the bridge.s $own" <<<"$out" && grep -q "then up through the bridge" <<<"$out"'
[ "$rc" -eq 0 ] || printf '%s\n' "$out" | tail -n 10
(cd "$A" && timeout 120 podman-compose down >>"$work/a-hand.log" 2>&1)

# ------------------------------------------------------------------ 5: an explicit container_name

# Two checkouts of one compose file that names its containers (and labels
# its service, with a list, and one that extends it, with a mapping): C
# installed, D run by hand with C's -p, as the docs tell a person to run C
# by hand, but in the wrong checkout. D's containers then carry C's project
# label and the very names C's file gives; only the label C's rendered file
# sets (io.hostbridge.project) tells them apart.
C=$work/agent-cn/$name
D=$work/own-cn/$name
cslug=${name}c
mkdir -p "$C/m" "$(dirname -- "$D")" || die "mkdir"
echo "CHECKOUT-C-MARK" >"$C/m/marker.txt"
cat >"$C/compose.yaml" <<COMPOSE
services:
  web:
    image: localhost/${own}_app:latest
    container_name: ${name}-web
    init: true
    command: ["/bin/sh", "-c", "cat /c/m/marker.txt; exec sleep 100000"]
    volumes:
      - .:/c:ro
    labels:
      - tier=web
  side:
    extends: web
    container_name: ${name}-side
    labels:
      role: side
COMPOSE
commit_and_clone "$C" "$D"
echo "CHECKOUT-D-PERSON" >"$D/m/marker.txt"
out=$("${bridge[@]}" "$hb" install --project-dir "$C" --backend compose --compose-file compose.yaml \
    --compose-cmd "env CONTAINERS_CONF=$CONTAINERS_CONF podman-compose" --slug "$cslug" \
    --rate-limit 1000/600 --read-rate-limit 1000/60 --no-systemd --accept-uncontained-engine \
    "${root_flag[@]}" 2>&1) || die "hostbridge install of $C: $out"
cconfig=$work/home/.config/hostbridge/$cslug/bridge.json
cown=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["settle"]["project"])' "$cconfig") ||
    die "bridge.json of $cslug has no settle.project"
sed -i 's/^MODE_up=ask$/MODE_up=auto/' "$work/home/.config/hostbridge/$cslug/policy.conf"
"${bridge[@]}" "$work/home/.local/lib/hostbridge/$cslug/hostbridge-executor" watch --config "$cconfig" "${root_flag[@]}" \
    </dev/null >>"$work/watch-c.log" 2>&1 &
cwatch_pid=$!
client=$C/untracked/hostbridge/request
(cd "$D" && timeout 120 podman-compose -p "$cown" up -d >"$work/d-up.log" 2>&1)
# shellcheck disable=SC2034 # d_id and d_before: read in the checks' eval
d_id=$(podman container inspect --format '{{.Id}}' "${name}-web" 2>/dev/null) ||
    die "podman-compose up in $D made no ${name}-web: $(tail -5 "$work/d-up.log")"
d_state() { podman container inspect --format '{{.Id}} {{.State.StartedAt}} {{.State.Status}}' "${name}-web" 2>/dev/null; }
# shellcheck disable=SC2034
d_before=$(d_state)

# The controls: the old rows, as C's executor ran them, read D's web.
old_logs=$(cd "$C" && timeout 120 podman-compose -p "$cown" -f compose.yaml logs --tail 200 web 2>&1)
check "control: the old logs row (podman-compose logs, by container name) reads D's ${name}-web" \
    grep -q CHECKOUT-D-PERSON <<<"$old_logs"
check "control: the settle step's list row (the project label alone) lists D's ${name}-web: only its reader's label check tells it from C's" \
    eval 'grep -qx "$d_id" <<<"$(podman ps -a -q --no-trunc --filter "label=com.docker.compose.project=$cown")"'
check "control: D's containers lack C's install label" \
    eval '[ -z "$(podman ps -a -q --filter "label=io.hostbridge.project=$cown")" ]'

request logs web
check "logs web: C has no container of its own yet (failed), D's output never read" \
    eval '[ "$REQ_RC" -ne 0 ] && grep -q "web has no container" <<<"$REQ_OUT" && ! grep -q CHECKOUT-D-PERSON <<<"$REQ_OUT"'
show
request status
check "status: never names D's ${name}-web, and finds no container for web" \
    eval '! grep -q "${name}-web" <<<"$REQ_OUT" && grep -q "no container" <<<"$REQ_OUT"'
show
# podman-compose 1.0.3's up, finding the name taken, starts the container
# of that name: the settle step must not take D's for C's.
request up
check "up (the names are D's): not done, D's web not taken for C's, D untouched" \
    eval '[ "$REQ_RC" -ne 0 ] && grep -q "no container" <<<"$REQ_OUT" && [ "$(d_state)" = "$d_before" ]'
show

# D's stack gone, C's up makes C's own: labelled, the file's labels kept.
(cd "$D" && timeout 120 podman-compose -p "$cown" down >>"$work/d-up.log" 2>&1)
request up
check "up: exit 0 once the names are free" test "$REQ_RC" -eq 0
[ "$REQ_RC" -eq 0 ] || show
label_of() { podman container inspect --format "{{index .Config.Labels \"$2\"}}" "$1" 2>/dev/null; }
check "C's web and side carry io.hostbridge.project=$cown beside the file's labels (a list; a mapping on extends)" \
    eval '[ "$(label_of "${name}-web" io.hostbridge.project) $(label_of "${name}-web" tier)" = "$cown web" ] &&
          [ "$(label_of "${name}-side" io.hostbridge.project) $(label_of "${name}-side" tier) $(label_of "${name}-side" role)" = "$cown web side" ]'
request logs web
check "logs web: C's own container's output" \
    eval '[ "$REQ_RC" -eq 0 ] && grep -q CHECKOUT-C-MARK <<<"$REQ_OUT"'
[ "$REQ_RC" -eq 0 ] || show
kill -TERM "$cwatch_pid" 2>/dev/null && wait "$cwatch_pid" 2>/dev/null
cwatch_pid=""

echo "project_names: $(($(date +%s) - t_start)) s"
[ "$failures" -eq 0 ]
