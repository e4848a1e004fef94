#!/bin/bash
# engine_docker.sh BIN_DIR: the docker engine user (docs/DOCKER.md, issue 47
# items 1-2) on real users and a real rootless dockerd. As root:
#  1. `hostbridge engine setup --engine docker` for a throwaway person makes
#     the engine user and its units; run again it reuses them; podman's
#     setup on that user is refused;
#  2. inside the engine user's own systemd --user manager
#     (tools/e2e/usermgr.sh): the person's first `docker version` through
#     ~engine/engine/docker.sock starts the relay and the daemon; every
#     process of the daemon's unit is the engine user's (not root, not the
#     person) and the daemon says it is rootless; `docker run` of a local
#     image prints its output through the relay (the half-close), and the
#     container's root is the engine user on the host; without the socket's
#     ACL the person is refused, and root, who passes any ACL, is refused by
#     the relay, which passes only the person's connections on;
#  3. `hostbridge engine remove` deletes the user, its home and its marker,
#     no process of its uid is left, and tools/e2e/leftovers.sh finds nothing.
# The docker binaries are the ones tools/deps.sh test unpacked, by absolute
# path (`tools/deps.sh docker-root`). Exit 77, reason printed, where that
# docker, rootlesskit, setfacl, a static busybox or a user manager is missing.
set -uo pipefail
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
here=$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")
repo=$(readlink -f -- "$here/../..")
# shellcheck source=tests/e2e/verdicts.sh
. "$here/verdicts.sh"
[ $# -ge 1 ] || { echo "usage: engine_docker.sh BIN_DIR" >&2 && exit 64; }

# ------------------------------------------------------------------ phase 2, inside the engine's manager

if [ "${1:-}" = --inner ]; then
    shift
    stage=$1 person=$2 engine=$3 name=$4 root=$5
    D=$root/usr/bin/docker
    euid=$(id -u "$engine")
    ehome=$(getent passwd "$engine" | cut -d: -f6)
    socket=$ehome/engine/docker.sock
    phome=$(getent passwd "$person" | cut -d: -f6)
    as_person() {
        setpriv --reuid="$person" --regid="$person" --init-groups -- env -i PATH="$PATH" \
            HOME="$phome" USER="$person" LOGNAME="$person" DOCKER_HOST="unix://$socket" "$@"
    }
    as_engine() { "$stage/tools/e2e/usermgr.sh" as-user -- "$@"; }
    # The socket's ACL is granted by ExecStartPost: the unit being active
    # says it is there. 600 s is a hang guard, not a duration under test.
    socket_active() { [ "$(as_engine systemctl --user is-active hostbridge-docker.socket 2>/dev/null)" = active ]; }
    for _ in $(seq 3000); do socket_active && break; sleep 0.2; done
    check "the engine's manager started hostbridge-docker.socket ($socket)" eval 'socket_active && test -S "$socket"'

    t0=$(date +%s.%N)
    out=$(as_person "$D" version --format '{{.Server.Version}}' 2>&1)
    rc=$? t1=$(date +%s.%N)
    check "$person's first docker version through the socket starts the daemon: $out (rc $rc, $(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }") s)" \
        eval '[ "$rc" -eq 0 ] && [[ $out == 26.* ]]'
    [ "$rc" -eq 0 ] || as_engine systemctl --user status hostbridge-dockerd.service hostbridge-docker.service 2>&1 | tail -n 30
    out=$(as_person "$D" info --format '{{json .SecurityOptions}}' 2>&1)
    check "the daemon is rootless ($out)" eval '[[ $out == *name=rootless* ]]'
    # Every process in the daemon's unit: rootlesskit, dockerd, containerd, slirp4netns.
    procs="" bad=""
    for p in /proc/[0-9]*; do
        grep -qs "/hostbridge-dockerd.service" "$p/cgroup" || continue
        grep -qs "$HB_USERMGR_NAME" "$p/cgroup" || continue
        procs="$procs $(cat "$p/comm" 2>/dev/null)"
        [ "$(stat -c %u "$p")" = "$euid" ] || bad="$bad ${p#/proc/}:$(stat -c %u "$p")"
    done
    check "the daemon's processes are all $engine's (uid $euid), not root's or $person's:$procs" \
        eval '[[ " $procs " == *" dockerd "* ]] && [[ " $procs " == *" rootlesskit "* ]] && [ -z "$bad" ]'

    out=$(as_person "$D" import --change 'CMD ["/bin/sh"]' - "$name-img:1" <"$stage/rootfs.tar" 2>&1)
    check "$person imports a local image through the socket" test $? -eq 0
    out=$(as_person "$D" run --rm --pull never "$name-img:1" sh -c "echo RAN-$name; cat /proc/self/uid_map" 2>&1)
    rc=$?
    check "docker run prints the container's output through the relay ($(head -n 1 <<<"$out"), rc $rc)" \
        eval '[ "$rc" -eq 0 ] && [[ $(head -n 1 <<<"$out") == "RAN-$name" ]]'
    check "the container's root is $engine on the host (uid_map: $(sed -n 2p <<<"$out" | tr -s ' '))" \
        eval '[ "$(sed -n 2p <<<"$out" | awk "{print \$1, \$2, \$3}")" = "0 $euid 1" ]'

    setfacl -x "u:$person" "$socket"
    out=$(as_person "$D" version --format '{{.Server.Version}}' 2>&1)
    check "without the socket's ACL $person is refused ($(tail -n 1 <<<"$out" | head -c 120))" \
        eval '[[ $out == *"permission denied"* ]]'
    setfacl -m "u:$person:rw" "$socket"
    out=$(env -i DOCKER_HOST="unix://$socket" HOME=/nonexistent "$D" version --format '{{.Server.Version}}' 2>&1)
    check "root, whom no ACL stops, is refused by the relay ($(tail -n 1 <<<"$out" | head -c 120))" \
        eval '! [[ $out == 26.* ]]'
    out=$(as_person "$D" version --format '{{.Server.Version}}' 2>&1)
    check "with the ACL back, $person reaches it again ($out)" eval '[[ $out == 26.* ]]'
    [ "$failures" -eq 0 ]
    exit $?
fi

# ------------------------------------------------------------------ phase 1 and 3, as root

bin=$(readlink -f -- "$1")
cd / || exit 1
e2e_docker_needs # sets root and busybox

t_start=$(date +%s)
name=hb-e2e-dk$$
person=hb-e2e-dk$$p
engine=hb-e2e-dk$$e
slug=hbdk$$
stage=/tmp/$name-stage
cleanup() {
    "$stage/bin/hostbridge" engine remove --slug "$slug" --user "$person" --name "$engine" >/dev/null 2>&1
    for u in "$engine" "$person"; do "$repo/tools/e2e/testuser.sh" delete "$u" >/dev/null 2>&1; done
    rm -rf -- "$stage" "/var/lib/hostbridge/engine-users/$engine"
}
trap cleanup EXIT
trap 'echo interrupted; exit 130' INT TERM HUP

"$repo/tools/e2e/stage.sh" "$stage" "$bin" || die "stage"
"$repo/tools/e2e/testuser.sh" create "$person" >/dev/null || exit $?
# A busybox image's root file system, which the person's client streams.
e2e_rootfs_tar "$stage" sh echo cat

# 1: setup, again, and podman's setup on the docker user.
setup() { "$stage/bin/hostbridge" engine setup --engine docker --slug "$slug" --user "$person" --name "$engine" --docker-root "$root" 2>&1; }
out=$(setup)
rc=$?
check "engine setup --engine docker: exit 0, the user made, the install left alone" \
    eval '[ "$rc" -eq 0 ] && [[ $out == *"engine: run: "*useradd* ]] && [[ $out == *"install is not changed"* ]]'
[ "$rc" -eq 0 ] || printf '%s\n' "$out" | tail -n 30
ehome=$(getent passwd "$engine" | cut -d: -f6)
euid=$(id -u "$engine" 2>/dev/null)
units=$ehome/.config/systemd/user
check "its three units are there, the socket enabled" eval 'test -L "$units/sockets.target.wants/hostbridge-docker.socket" &&
    test -f "$units/hostbridge-docker.service" && test -f "$units/hostbridge-dockerd.service"'
check "the daemon's unit runs the docker of $root with slirp4netns and no host loopback" \
    eval 'grep -qx "ExecStart=$root/usr/share/docker.io/contrib/dockerd-rootless.sh" "$units/hostbridge-dockerd.service" &&
          grep -qx "Environment=DOCKERD_ROOTLESS_ROOTLESSKIT_DISABLE_HOST_LOOPBACK=true" "$units/hostbridge-dockerd.service"'
check "the engine's home is closed to all but $person, who may only pass it" \
    eval 'facl=$(getfacl -p "$ehome") && grep -qx "user:$person:--x" <<<"$facl" && grep -qx "other::---" <<<"$facl"'
out=$(setup)
check "engine setup again: exit 0, the user reused" eval '[[ $out == *"user $engine exists"* ]]'
out=$("$stage/bin/hostbridge" engine setup --engine docker --slug "$slug" --user "$person" --name "$engine" \
    --docker-root "$root
ExecStartPre=/bin/true" 2>&1)
check "a --docker-root that would add a line to the units is refused ($(tail -n 1 <<<"$out" | head -c 100))" \
    eval '[[ $out == *"--docker-root must be an absolute path of letters"* ]] && ! grep -q ExecStartPre "$units/hostbridge-dockerd.service"'
out=$("$stage/bin/hostbridge" engine setup --slug "$slug" --user "$person" --name "$engine" 2>&1)
check "podman's setup on the docker engine user is refused ($(tail -n 1 <<<"$out" | head -c 100))" \
    eval '[[ $out == *"runs docker, not podman"* ]]'

# 2: inside the engine user's own manager.
check "the person's docker through the engine's socket (above)" \
    "$stage/tools/e2e/usermgr.sh" run --name "$name-mgr" --as root "$engine" -- \
    "$stage/tests/e2e/engine_docker.sh" --inner "$stage" "$person" "$engine" "$name" "$root"

# 3: remove.
out=$("$stage/bin/hostbridge" engine remove --slug "$slug" --user "$person" --name "$engine" 2>&1)
rc=$?
check "engine remove: exit 0; the user, its home and its marker gone; no process of uid $euid" \
    eval '[ "$rc" -eq 0 ] && ! getent passwd "$engine" >/dev/null && [ ! -e "$ehome" ] &&
          [ ! -e "/var/lib/hostbridge/engine-users/$engine" ] && ! pgrep -u "$euid" >/dev/null'
[ "$rc" -eq 0 ] || printf '%s\n' "$out" | tail -n 20

trap - EXIT
cleanup
finish_e2e "$name" "$(($(date +%s) - t_start)) s"
