#!/bin/bash
# pin_check.sh BIN_DIR [RUNS]: what the post-start check of pinned bind
# sources (executor/pin_check.hpp) costs per container, on rootless podman
# (docs/PERFORMANCE.md, "Bind pins"). As root it makes a throwaway user
# (tools/e2e/testuser.sh) and runs itself as it. One busybox container binds
# a pinned dir; then RUNS times each (after 3 warm-up runs):
#   the binds row   podman container inspect --format <kBindMountsFormat> ID
#   the check       podman unshare hostbridge-executor check-pins RUN PID src /srv/src
#   the floor       podman unshare true
# and prints the mean of each in milliseconds. Exit 77 where rootless
# podman or a static busybox is missing.
set -uo pipefail

[ $# -ge 1 ] || { echo "usage: pin_check.sh BIN_DIR [RUNS]" >&2; exit 64; }
bin=$(readlink -f -- "$1")
runs=${2:-20}
self=$(readlink -f -- "${BASH_SOURCE[0]}")
repo=$(readlink -f -- "$(dirname -- "$self")/..")
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
skip() { echo "SKIP: $*"; exit 77; }
command -v podman >/dev/null || skip "podman is not installed"
busybox=$(command -v busybox) || skip "busybox is not installed"

if [ "$(id -u)" -eq 0 ]; then
    user=hb-e2e-pcb-$$
    rt=$(mktemp -d /tmp/hbpc-rt.XXXXXX)
    stage=/tmp/$user-stage
    "$repo/tools/e2e/stage.sh" "$stage" "$bin" >/dev/null || exit 1
    install -D -m 0755 "$self" "$stage/bench/pin_check.sh" || exit 1
    out=$("$repo/tools/e2e/testuser.sh" create "$user" 2>&1)
    case $? in
        0) home=$(printf '%s\n' "$out" | tail -n 1) ;;
        77) rm -rf -- "$rt" "$stage"; skip "${out#SKIP: }" ;;
        *) rm -rf -- "$rt" "$stage"; echo "testuser.sh: $out" >&2; exit 1 ;;
    esac
    chown "$user:" "$rt" && chmod 0700 "$rt"
    cd "$home" || exit 1
    setpriv --reuid="$user" --regid="$user" --init-groups \
        env -i "HOME=$home" "USER=$user" "LOGNAME=$user" "PATH=$PATH" "XDG_RUNTIME_DIR=$rt" \
        bash "$stage/bench/pin_check.sh" "$stage/bin" "$runs"
    rc=$?
    "$repo/tools/e2e/testuser.sh" delete "$user" || rc=1
    rm -rf -- "$rt" "$stage"
    exit "$rc"
fi

work=$(mktemp -d "$HOME/hbpc.XXXXXX")
export CONTAINERS_CONF=$work/containers.conf
cp "$repo/examples/demo-app/containers.conf" "$CONTAINERS_CONF"
name=hbpc$$
trap 'podman rm -f -t 0 $name >/dev/null 2>&1; podman rmi -f localhost/$name:1 >/dev/null 2>&1; rm -rf -- "$work"' EXIT
mkdir -p "$work/rootfs/bin" "$work/project/src" "$work/run"
cp "$busybox" "$work/rootfs/bin/busybox" && ln -s busybox "$work/rootfs/bin/sleep"
tar -C "$work/rootfs" -c . | podman import - "localhost/$name:1" >/dev/null 2>&1 || skip "podman import fails here"
podman unshare "$bin/hostbridge-executor" pin "$work/project" "$work/run" src >/dev/null || exit 1
pin=$work/run/.hostbridge-binds/src
podman run -d --name "$name" -v "$pin:/srv/src" "localhost/$name:1" /bin/sleep 100000 >/dev/null || exit 1
id=$(podman container inspect --format '{{.Id}}' "$name")
pid=$(podman container inspect --format '{{.State.Pid}}' "$name")
format='{{.Id}} {{.State.Pid}} {{.State.StartedAt.UnixNano}}{{range .Mounts}}{{if eq .Type "bind"}} {{printf "%q" .Source}} {{printf "%q" .Destination}}{{end}}{{end}}'
podman unshare "$bin/hostbridge-executor" check-pins "$work/run" "$pid" src /srv/src | grep -qx "pinned 0" ||
    { echo "the check does not pass on a pinned container" >&2; exit 1; }

mean_ms() { # COMMAND...: mean wall time of RUNS runs after 3 warm-ups
    local i start end
    for i in 1 2 3; do "$@" >/dev/null 2>&1; done
    start=$(date +%s%N)
    for ((i = 0; i < runs; i++)); do "$@" >/dev/null 2>&1; done
    end=$(date +%s%N)
    echo $(((end - start) / runs / 1000000))
}
echo "binds row:  $(mean_ms podman container inspect --format "$format" "$id") ms"
echo "check:      $(mean_ms podman unshare "$bin/hostbridge-executor" check-pins "$work/run" "$pid" src /srv/src) ms"
echo "floor:      $(mean_ms podman unshare true) ms (podman unshare true)"
echo "($runs runs each, load average $(cut -d' ' -f1 /proc/loadavg))"
