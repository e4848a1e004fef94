#!/bin/bash
# bridge_docker.sh BIN_DIR: the bridge on docker compose v2 through a docker
# engine user (docs/DOCKER.md, issue 47), on real users, a real rootless
# dockerd and the real drain (`hostbridge-executor watch`). As root:
#  1. `hostbridge engine setup --engine docker` for a throwaway person; the
#     person installs an image-only compose project with the docker packages'
#     docker compose v2 and --engine-user; a compose file with a bind is
#     refused, naming what docker does not support yet;
#  2. inside the engine user's own systemd --user manager: up, status,
#     health, restart web (a new StartedAt), logs web with --lines and a
#     cursor, then --since it (only what is new), rebuild and join-network
#     denied; web broken (it exits 3 on its next start): restart answered
#     failed with its log line; every verb ran unattended (auto);
#  3. `hostbridge engine remove`; tools/e2e/leftovers.sh finds nothing.
# Exit 77, reason printed, where that docker, rootlesskit, setfacl, a static
# busybox or a user manager is missing.
set -uo pipefail
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
here=$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")
repo=$(readlink -f -- "$here/../..")
# shellcheck source=tests/e2e/verdicts.sh
. "$here/verdicts.sh"
[ $# -ge 1 ] || { echo "usage: bridge_docker.sh BIN_DIR" >&2 && exit 64; }

# ------------------------------------------------------------------ phase 2, inside the engine's manager

if [ "${1:-}" = --inner ]; then
    shift
    e2e_docker_session "$@"
    out=$(remote import --change 'CMD ["/bin/sh"]' - "$name-img:1" <"$stage/rootfs.tar" 2>&1)
    check "$person imports the image through the socket ($out)" test $? -eq 0
    web=$(printf '%s-web-1' "$pname")
    started() { remote inspect --format '{{.State.StartedAt}}' "$web" 2>/dev/null; }

    request up
    check "up: done ($(q 'r["state"]')), web running as $engine's container" \
        eval '[ "$REQ_RC" -eq 0 ] && [ "$(remote inspect --format "{{.State.Running}}" "$web")" = true ]'
    [ "$REQ_RC" -eq 0 ] || { printf '%s\n%s\n' "$REQ_OUT" "$REQ_ERR" | tail -n 20; tail -n 20 "/tmp/$name-watch.log"; }
    request status
    check "status: done, web ok, read from docker's inspect JSON in the sandbox ($(q '[(s["service"], s["settled"]) for s in r["services"] or []]'))" \
        eval '[ "$REQ_RC" -eq 0 ] && [ "$(q "[s[\"settled\"] for s in r[\"services\"]]")" = "['"'"'ok'"'"']" ]'
    request health
    check "health: done ($(q 'r["state"]'))" test "$REQ_RC" -eq 0
    before=$(started)
    request restart web
    after=$(started)
    check "restart web: done, web started again ($before -> $after)" \
        eval '[ "$REQ_RC" -eq 0 ] && [ -n "$after" ] && [ "$after" != "$before" ]'
    request --lines 2 logs web
    first=$REQ_OUT
    cursor=$(sed -n 's/^cursor: //p' <<<"$REQ_ERR")
    check "logs --lines 2 web: two lines and a cursor ($cursor)" \
        eval '[ "$REQ_RC" -eq 0 ] && [ "$(grep -c . <<<"$first")" -eq 2 ] && [ -n "$cursor" ]'
    n0=$(remote logs "$web" 2>&1 | grep -c .)
    for _ in $(seq 100); do [ "$(remote logs "$web" 2>&1 | grep -c .)" -gt "$n0" ] && break; sleep 0.2; done
    request --since "$cursor" logs web
    check "logs --since CURSOR web: only lines written since ($(grep -c . <<<"$REQ_OUT") line(s))" \
        eval '[ "$REQ_RC" -eq 0 ] && [ -n "$REQ_OUT" ] && ! grep -qxF -f <(printf "%s\n" "$first") <<<"$REQ_OUT"'
    request rebuild web
    check "rebuild web: denied on docker ($(q 'r.get("reason","")' | head -c 80))" \
        eval '[ "$REQ_RC" -ne 0 ] && [ "$(q "r[\"state\"]")" = denied ]'
    out=$(remote exec "$web" touch /broken 2>&1)
    check "the agent breaks web: /broken in its container ($out)" test $? -eq 0
    request restart web
    check "web broken (it exits 3): restart answered failed with its log line" \
        eval '[ "$REQ_RC" -ne 0 ] && [ "$(q "r[\"state\"]")" = failed ] && grep -q "WEB-BROKEN" <<<"$REQ_OUT$REQ_ERR"'
    [ "$REQ_RC" -ne 0 ] || printf '%s\n%s\n' "$REQ_OUT" "$REQ_ERR" | tail -n 10
    check "no request waited for a person (held: $(grep -c '"pending"' "$P"/untracked/hostbridge/responses/*.json | grep -vc ':0$'))" \
        eval '! grep -lq "\"state\": *\"pending\"" "$P"/untracked/hostbridge/responses/*.json'

    e2e_docker_session_end
fi

# ------------------------------------------------------------------ phase 1 and 3, as root

bin=$(readlink -f -- "$1")
cd / || exit 1
e2e_docker_needs python3 git # sets root and busybox

t_start=$(date +%s)
name=hb-e2e-bd$$
person=hb-e2e-bd$$p
engine=hb-e2e-bd$$e
slug=hbbd$$
stage=/tmp/$name-stage
cleanup() {
    "$stage/bin/hostbridge" engine remove --slug "$slug" --user "$person" --name "$engine" >/dev/null 2>&1
    for u in "$engine" "$person"; do "$repo/tools/e2e/testuser.sh" delete "$u" >/dev/null 2>&1; done
    rm -rf -- "$stage" "/var/lib/hostbridge/engine-users/$engine" "/tmp/$name-watch.log" "/tmp/$name-err"
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
e2e_rootfs_tar "$stage" sh echo cat sleep touch date

out=$("$stage/bin/hostbridge" engine setup --engine docker --slug "$slug" --user "$person" --name "$engine" --docker-root "$root" 2>&1) ||
    die "engine setup --engine docker: $out"
# web ticks every second; it exits 3 on a start once /broken exists in it.
as_person sh -c "mkdir -p $P && cat >$P/compose.yaml" <<EOF
services:
  web:
    image: $name-img:1
    command: ["/bin/sh", "-c", "trap 'exit 0' TERM; echo WEB-UP; if [ -e /broken ]; then echo WEB-BROKEN; exit 3; fi; while :; do echo tick; sleep 1; done"]
EOF
as_person sh -c "cat >$P/bind.yaml" <<EOF
services:
  web:
    image: $name-img:1
    volumes:
      - ./data:/data
EOF
as_person sh -c "mkdir -p $P/data && cd $P && git init -q . && git add -A && git -c user.email=t@example.invalid -c user.name=t commit -qm app" ||
    die "git init of $P"
install_as() { # SLUG FILE
    as_person "$stage/bin/hostbridge" install --project-dir "$P" --backend compose --compose-file "$2" \
        --compose-cmd "$root/usr/bin/docker-compose" --slug "$1" --engine-user "$engine" \
        --rate-limit 1000/600 --read-rate-limit 1000/60 --no-systemd 2>&1
}
out=$(install_as "${slug}b" bind.yaml)
check "install of a compose file with a bind on docker: refused, naming what is not supported ($(tail -n 1 <<<"$out" | head -c 160))" \
    eval '[[ $out == *"Not yet supported on docker: bind mounts"* ]] && [ ! -e "$phome/.config/hostbridge/${slug}b" ]'
out=$(install_as "$slug" compose.yaml)
rc=$?
check "install on docker compose v2 with the engine user: exit 0, what runs said" \
    eval '[ "$rc" -eq 0 ] && [[ $out == *"compose flavour: docker"* ]] && [[ $out == *"through $engine'"'"'s rootless dockerd"* ]]'
[ "$rc" -eq 0 ] || printf '%s\n' "$out" | tail -n 20
policy=$phome/.config/hostbridge/$slug/policy.conf
check "every verb it runs is auto (contained: the engine user): $(grep -E '^MODE_(up|restart|status|logs)=' "$policy" | tr '\n' ' ')" \
    eval 'grep -qx "MODE_up=auto" "$policy" && ! grep -qE "^MODE_(up|restart|status|health|logs)=ask" "$policy"'

check "the session through the engine's docker (above)" \
    "$stage/tools/e2e/usermgr.sh" run --name "$name-mgr" --as root "$engine" -- \
    "$stage/tests/e2e/bridge_docker.sh" --inner "$stage" "$person" "$engine" "$slug" "$name" "$root"

out=$("$stage/bin/hostbridge" engine remove --slug "$slug" --user "$person" --name "$engine" 2>&1)
check "engine remove: exit 0, the user gone" eval '[ $? -eq 0 ] && ! getent passwd "$engine" >/dev/null'
trap - EXIT
cleanup
finish_e2e "$name" "$(($(date +%s) - t_start)) s"
