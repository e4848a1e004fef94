#!/bin/bash
# base_triggers.sh BIN_DIR [RUNS]: what the check of base images' ONBUILD
# triggers before a podman build (engines/podman/base_triggers.hpp) costs, on
# rootless podman (docs/PERFORMANCE.md, "Base images' triggers"). As root it
# runs itself as a throwaway user (tools/e2e/run-as-test-user.sh). One
# docker-format busybox image with a trigger; then RUNS times each (after 3
# warm-up runs):
#   the list        podman images -a --no-trunc --format {{.ID}}   (every build)
#   one image       buildah inspect --type image --format '{{len .Docker.Config.OnBuild}}' ID
#                   (once per image id ever seen)
# and prints the mean of each in milliseconds, and the count it read (1).
# Exit 77 where rootless podman, buildah or a static busybox is missing.
set -uo pipefail

[ $# -ge 1 ] || { echo "usage: base_triggers.sh BIN_DIR [RUNS]" >&2; exit 64; }
bin=$(readlink -f -- "$1")
runs=${2:-20}
repo=$(readlink -f -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/..")
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# shellcheck source=bench/rootless.sh
. "$repo/bench/rootless.sh"
for tool in podman buildah; do command -v "$tool" >/dev/null || skip "$tool is not installed"; done
busybox=$(command -v busybox) || skip "busybox is not installed"

as_rootless hb-e2e-btb bench/base_triggers.sh

name=hbbt$$
trap 'podman rmi -f localhost/$name:1 >/dev/null 2>&1; rm -rf -- "$work"' EXIT
mkdir -p "$work/ctx"
cp "$busybox" "$work/ctx/busybox"
printf 'FROM scratch\nCOPY busybox /bin/busybox\nONBUILD RUN ["/bin/busybox", "true"]\n' >"$work/ctx/Containerfile"
podman build -q --format docker -t "localhost/$name:1" "$work/ctx" >/dev/null 2>&1 || skip "podman build fails here"
id=$(podman image inspect --format '{{.Id}}' "localhost/$name:1")
count=$(buildah inspect --type image --format '{{len .Docker.Config.OnBuild}}' "$id")

echo "list:       $(mean_ms podman images -a --no-trunc --format '{{.ID}}') ms ($(podman images -aq | wc -l) images)"
echo "one image:  $(mean_ms buildah inspect --type image --format '{{len .Docker.Config.OnBuild}}' "$id") ms (it has $count trigger)"
echo "($runs runs each, load average $(cut -d' ' -f1 /proc/loadavg))"
