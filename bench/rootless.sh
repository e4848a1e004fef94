# shellcheck shell=bash disable=SC2154 # bin, runs and repo are the caller's
# Sourced by the timings of rootless podman (bench/pin_check.sh,
# bench/base_triggers.sh), which set `bin`, `runs` and `repo` first.

skip() {
    echo "SKIP: $*"
    exit 77
}

# as_rootless PREFIX SCRIPT: as root, runs SCRIPT (relative to the
# repository) again as a throwaway user (tools/e2e/run-as-test-user.sh);
# as that user, makes `work` under $HOME with the demo's containers.conf.
as_rootless() {
    if [ "$(id -u)" -eq 0 ]; then
        exec "$repo/tools/e2e/run-as-test-user.sh" "$1" "$bin" "$2" "$runs"
    fi
    work=$(mktemp -d "$HOME/$1.XXXXXX")
    export CONTAINERS_CONF=$work/containers.conf
    cp "$repo/examples/demo-app/containers.conf" "$CONTAINERS_CONF"
}

# mean_ms COMMAND...: the mean wall time of `runs` runs after 3 warm-ups.
mean_ms() {
    local i start end
    for i in 1 2 3; do "$@" >/dev/null 2>&1; done
    start=$(date +%s%N)
    for ((i = 0; i < runs; i++)); do "$@" >/dev/null 2>&1; done
    end=$(date +%s%N)
    echo $(((end - start) / runs / 1000000))
}
