#!/bin/bash
# pin_check.sh BIN_DIR [RUNS]: what the post-start check of pinned bind
# sources (engines/podman/pin_check.hpp) costs per container, on rootless podman
# (docs/PERFORMANCE.md, "Bind pins"). As root it makes a throwaway user
# (tools/e2e/testuser.sh) and runs itself as it. One busybox container binds
# a pinned dir; then RUNS times each (after 3 warm-up runs):
#   the binds row   podman container inspect --format <kBindMountsFormat> ID
#   the check       podman unshare hostbridge-pin check-pins RUN PID src /srv/src
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
# shellcheck source=bench/rootless.sh
. "$repo/bench/rootless.sh"
command -v podman >/dev/null || skip "podman is not installed"
busybox=$(command -v busybox) || skip "busybox is not installed"

as_rootless hb-e2e-pcb bench/pin_check.sh

name=hbpc$$
trap 'podman rm -f -t 0 $name >/dev/null 2>&1; podman rmi -f localhost/$name:1 >/dev/null 2>&1; rm -rf -- "$work"' EXIT
mkdir -p "$work/rootfs/bin" "$work/project/src" "$work/run"
cp "$busybox" "$work/rootfs/bin/busybox" && ln -s busybox "$work/rootfs/bin/sleep"
tar -C "$work/rootfs" -c . | podman import - "localhost/$name:1" >/dev/null 2>&1 || skip "podman import fails here"
podman unshare "$bin/hostbridge-pin" pin "$work/project" "$work/run" src >/dev/null || exit 1
pin=$work/run/.hostbridge-binds/src
podman run -d --name "$name" -v "$pin:/srv/src" "localhost/$name:1" /bin/sleep 100000 >/dev/null || exit 1
id=$(podman container inspect --format '{{.Id}}' "$name")
pid=$(podman container inspect --format '{{.State.Pid}}' "$name")
format='{{.Id}} {{.State.Pid}} {{.State.StartedAt.UnixNano}}{{range .Mounts}}{{if eq .Type "bind"}} {{printf "%q" .Source}} {{printf "%q" .Destination}}{{end}}{{end}}'
podman unshare "$bin/hostbridge-pin" check-pins "$work/run" "$pid" src /srv/src | grep -qx "pinned 0" ||
    { echo "the check does not pass on a pinned container" >&2; exit 1; }

echo "binds row:  $(mean_ms podman container inspect --format "$format" "$id") ms"
echo "check:      $(mean_ms podman unshare "$bin/hostbridge-pin" check-pins "$work/run" "$pid" src /srv/src) ms"
echo "floor:      $(mean_ms podman unshare true) ms (podman unshare true)"
echo "($runs runs each, load average $(cut -d' ' -f1 /proc/loadavg))"
