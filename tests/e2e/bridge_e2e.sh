#!/bin/bash
# bridge_e2e.sh BIN_DIR rootless|compose|root|engine: the README's demo session as
# a test (ctest label e2e). tools/e2e/bridge-session.sh plays it (the same
# script ./demo runs) and tools/e2e/bridge-place.sh makes its place:
#   rootless  a throwaway user with its own systemd --user manager and
#             rootless podman installs the bridge (no --allow-root), stack
#             backend: how a developer runs it;
#   compose   the same, compose backend through Debian's podman-compose
#             (rootless: the drain's podman-compose reads the user's
#             ~/.config/containers/containers.conf; as root it would need
#             /etc/containers changed);
#   root      root's own manager and rootful podman, as ./demo runs here;
#   engine    compose, with the engine as its own user (docs/ENGINE-USER.md):
#             every verb of the session through its podman service's
#             socket, as ./demo --engine-user runs it.
# The session asserts the observable facts (start times, scopes, the .path
# unit's activations, the audit log and its verification); afterwards
# tools/e2e/leftovers.sh must find nothing of the run. Exit 77, reason
# printed, where podman, systemd or cgroup delegation is unavailable.
set -uo pipefail
tools=$(readlink -f -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/../../tools/e2e")
[ $# -eq 2 ] || { echo "usage: bridge_e2e.sh BIN_DIR rootless|compose|root|engine" >&2; exit 64; }
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (a user, a cgroup and a mount namespace)"; exit 77; }
exec "$tools/bridge-place.sh" "$2" "$1"
