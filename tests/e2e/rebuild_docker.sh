#!/bin/bash
# rebuild_docker.sh BIN_DIR: `rebuild` on docker compose v2 through a docker
# engine user (docs/DOCKER.md, issue 47 item 3), on real users, a real
# rootless dockerd and the real drain (`hostbridge-executor watch`). As root:
#  1. `hostbridge engine setup --engine docker` for a throwaway person; the
#     person installs a compose project whose web service builds from the
#     checkout (`build: .`, FROM a base image listed with --base-image);
#     one whose build.args name BUILDKIT_SYNTAX is refused;
#  2. inside the engine user's systemd --user manager: `rebuild web` builds
#     from the snapshot and goes live (the answer names the image web's
#     container runs, its log the checkout's message); the agent changes
#     the message: `rebuild web` again, a new image, the new message; a
#     Dockerfile whose `# syntax=` names a local image: plain `docker
#     compose build` runs that image as the frontend (it exits 5), the
#     bridge refuses it and web keeps its image; a FROM of a listed base
#     image the daemon does not hold: refused before any pull; every request ran
#     unattended (auto);
#  3. `hostbridge engine remove`; tools/e2e/leftovers.sh finds nothing.
# Exit 77, reason printed, where that docker, rootlesskit, setfacl, a static
# busybox or a user manager is missing.
set -uo pipefail
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
here=$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")
repo=$(readlink -f -- "$here/../..")
# shellcheck source=tests/e2e/verdicts.sh
. "$here/verdicts.sh"
[ $# -ge 1 ] || { echo "usage: rebuild_docker.sh BIN_DIR" >&2 && exit 64; }

# ------------------------------------------------------------------ phase 2, inside the engine's manager

if [ "${1:-}" = --inner ]; then
    shift
    e2e_docker_session "$@"
    out=$(remote import --change 'CMD ["/bin/sh"]' - "$name-img:1" <"$stage/rootfs.tar" 2>&1) &&
        out=$(remote import --change 'ENTRYPOINT ["/bin/sh", "-c", "exit 5"]' - "$name-fe:1" <"$stage/rootfs.tar" 2>&1)
    check "$person imports the base and a would-be frontend image through the socket ($out)" test $? -eq 0
    web=$(printf '%s-web-1' "$pname")
    image_of_web() { remote inspect --format '{{.Image}}' "$web" 2>/dev/null; }
    # The answer's image for web (12 hex digits) is the one its container runs.
    answer_names() { [ -n "$1" ] && [ "$(q '[c["image"] for s in r["services"] for c in s["containers"]]')" = "['${1:7:12}']" ]; }
    shown() { remote logs "$web" 2>&1 | grep -c "^$1\$"; }

    t0=$(date +%s%N)
    request rebuild web
    ms=$((($(date +%s%N) - t0) / 1000000))
    first=$(image_of_web)
    check "rebuild web: done in $ms ms ($(q 'r["state"]')), web runs the image the answer names ($first)" \
        eval '[ "$REQ_RC" -eq 0 ] && answer_names "$first"'
    [ "$REQ_RC" -eq 0 ] || { printf '%s\n%s\n' "$REQ_OUT" "$REQ_ERR" | tail -n 20; tail -n 20 "/tmp/$name-watch.log"; }
    for _ in $(seq 50); do [ "$(shown MSG-ONE)" -ge 1 ] && break; sleep 0.2; done
    check "web's log: the checkout's message (MSG-ONE)" test "$(shown MSG-ONE)" -ge 1

    as_person sh -c "echo MSG-TWO >$P/msg"
    t0=$(date +%s%N)
    request rebuild web
    ms=$((($(date +%s%N) - t0) / 1000000))
    second=$(image_of_web)
    check "the agent's change, rebuild web: done in $ms ms, a new image live ($first -> $second)" \
        eval '[ "$REQ_RC" -eq 0 ] && [ "$second" != "$first" ] && answer_names "$second"'
    [ "$REQ_RC" -eq 0 ] || printf '%s\n%s\n' "$REQ_OUT" "$REQ_ERR" | tail -n 20
    for _ in $(seq 50); do [ "$(shown MSG-TWO)" -ge 1 ] && break; sleep 0.2; done
    check "web's log: the new message (MSG-TWO)" test "$(shown MSG-TWO)" -ge 1

    # The attack: a syntax directive naming a local image. Plain docker
    # compose build (the person's own, on a copy) runs it as the frontend.
    as_person sh -c "cp -r $P /tmp/$name-plain && cd /tmp/$name-plain && { echo '# syntax=$name-fe:1'; cat Dockerfile; } >D2 && mv D2 Dockerfile"
    out=$(as_person env DOCKER_HOST="unix://$socket" "$root/usr/bin/docker-compose" -p "$name-plain" \
        -f /tmp/$name-plain/compose.yaml build web 2>&1)
    check "control: plain docker compose build runs the image a syntax line names as the frontend ($(grep -o 'exit code: 5' <<<"$out" | head -n 1))" \
        eval '[[ $out == *"exit code: 5"* ]]'
    rm -rf "/tmp/$name-plain"
    as_person sh -c "cd $P && { echo '# syntax=$name-fe:1'; cat Dockerfile; } >D2 && mv D2 Dockerfile"
    request rebuild web
    check "rebuild web with that syntax line: denied by the screen ($(q 'r.get("reason","")' | head -c 120)), web's image unchanged" \
        eval '[ "$(q "r[\"state\"]")" = denied ] && [[ $(q "r.get(\"reason\",\"\")") == *"syntax directive"* ]] && [ "$(image_of_web)" = "$second" ]'
    # A base image the person listed but the daemon does not hold: docker's
    # build would pull it (from registry-1.docker.io).
    as_person sh -c "cd $P && printf 'FROM $name-gone:1\nCOPY msg /msg\n' >Dockerfile"
    request rebuild web
    check "rebuild web FROM a listed image the daemon lacks: denied before a pull ($(q 'r.get("reason","")' | sed 's/.*(the daemon/(the daemon/'))" \
        eval '[ "$(q "r[\"state\"]")" = denied ] && [[ $(q "r.get(\"reason\",\"\")") == *"does not hold"*"$name-gone:1"* ]] && ! grep -q "registry-1.docker.io" "/tmp/$name-watch.log" && ! grep -q "registry-1.docker.io" <<<"$REQ_OUT$REQ_ERR"'
    check "no request waited for a person" \
        eval '! grep -lq "\"state\": *\"pending\"" "$P"/untracked/hostbridge/responses/*.json'

    e2e_docker_session_end
fi

# ------------------------------------------------------------------ phase 1 and 3, as root

bin=$(readlink -f -- "$1")
cd / || exit 1
e2e_docker_needs python3 git # sets root and busybox

t_start=$(date +%s)
name=hb-e2e-rd$$
person=hb-e2e-rd$$p
engine=hb-e2e-rd$$e
slug=hbrd$$
stage=/tmp/$name-stage
cleanup() {
    "$stage/bin/hostbridge" engine remove --slug "$slug" --user "$person" --name "$engine" >/dev/null 2>&1
    for u in "$engine" "$person"; do "$repo/tools/e2e/testuser.sh" delete "$u" >/dev/null 2>&1; done
    rm -rf -- "$stage" "/var/lib/hostbridge/engine-users/$engine" "/tmp/$name-watch.log" "/tmp/$name-err" "/tmp/$name-plain"
}
trap cleanup EXIT
trap 'echo interrupted; exit 130' INT TERM HUP

"$repo/tools/e2e/stage.sh" "$stage" "$bin" || die "stage"
phome=$("$repo/tools/e2e/testuser.sh" create "$person") || exit $?
P=$phome/$name
as_person() {
    setpriv --reuid="$person" --regid="$person" --init-groups -- env -i PATH="$root/usr/bin:$PATH" \
        HOME="$phome" USER="$person" LOGNAME="$person" "$@"
}
e2e_rootfs_tar "$stage" sh echo cat sleep

out=$("$stage/bin/hostbridge" engine setup --engine docker --slug "$slug" --user "$person" --name "$engine" --docker-root "$root" 2>&1) ||
    die "engine setup --engine docker: $out"
# The docker client finds its buildx plugin in the prefix through the
# person's client config (docs/DOCKER.md, "Which builder").
as_person sh -c "mkdir -p $phome/.docker && printf '{\"cliPluginsExtraDirs\":[\"%s\"]}\n' $root/usr/libexec/docker/cli-plugins >$phome/.docker/config.json"
as_person sh -c "mkdir -p $P && cd $P && echo MSG-ONE >msg && cat >Dockerfile && cat >compose.yaml <<EOF
services:
  web:
    build: .
    command: [\"/bin/sh\", \"-c\", \"trap 'exit 0' TERM; cat /msg; while :; do sleep 1; done\"]
EOF" <<EOF
FROM $name-img:1
COPY msg /msg
EOF
as_person sh -c "cd $P && sed 's/build: ./build: {context: ., args: {BUILDKIT_SYNTAX: $name-fe:1}}/' compose.yaml >args.yaml" ||
    die "args.yaml"
as_person sh -c "cd $P && git init -q . && git add -A && git -c user.email=t@example.invalid -c user.name=t commit -qm app" ||
    die "git init of $P"
install_as() { # SLUG FILE
    as_person "$stage/bin/hostbridge" install --project-dir "$P" --backend compose --compose-file "$2" \
        --compose-cmd "$root/usr/bin/docker-compose" --slug "$1" --engine-user "$engine" \
        --base-image "$name-img:1" --base-image "$name-gone:1" --rate-limit 1000/600 --read-rate-limit 1000/60 --no-systemd 2>&1
}
out=$(install_as "${slug}a" args.yaml)
check "install with build.args BUILDKIT_SYNTAX on docker: refused ($(tail -n 1 <<<"$out" | head -c 160))" \
    eval '[[ $out == *"BUILDKIT_SYNTAX"* ]] && [ ! -e "$phome/.config/hostbridge/${slug}a" ]'
out=$(install_as "$slug" compose.yaml)
rc=$?
check "install of a build on docker compose v2 with the engine user: exit 0" test "$rc" -eq 0
[ "$rc" -eq 0 ] || printf '%s\n' "$out" | tail -n 20
policy=$phome/.config/hostbridge/$slug/policy.conf
check "rebuild is auto (contained: the engine user): $(grep -E '^MODE_rebuild=' "$policy")" \
    grep -qx "MODE_rebuild=auto" "$policy"

check "the session through the engine's docker (above)" \
    "$stage/tools/e2e/usermgr.sh" run --name "$name-mgr" --as root "$engine" -- \
    "$stage/tests/e2e/rebuild_docker.sh" --inner "$stage" "$person" "$engine" "$slug" "$name" "$root"

out=$("$stage/bin/hostbridge" engine remove --slug "$slug" --user "$person" --name "$engine" 2>&1)
check "engine remove: exit 0, the user gone" eval '[ $? -eq 0 ] && ! getent passwd "$engine" >/dev/null'
trap - EXIT
cleanup
finish_e2e "$name" "$(($(date +%s) - t_start)) s"
