# Sourced by the e2e scripts that drive one compose install of the bridge
# on a local busybox image through a `hostbridge-executor watch` they start
# (tests/e2e/settle.sh, tests/e2e/recreate.sh): the checks that skip, the
# throwaway checkout and its cleanup, the install, the watch, and the
# request helpers. The script sets `hb` and `repo` first.
# shellcheck shell=bash

# compose_e2e_start NAME: skips (exit 77) without podman, podman-compose,
# python3 or a static busybox; sets t_start, name, work, P (the checkout),
# slug, image, busybox, pname (the compose project install names) and
# CONTAINERS_CONF (examples/demo-app's); removes all of it on exit.
compose_e2e_start() {
    local tool info
    for tool in podman podman-compose python3 git; do
        command -v "$tool" >/dev/null || skip "$tool is not installed"
    done
    busybox=$(command -v busybox) || skip "busybox is not installed"
    [[ $(LC_ALL=C ldd "$busybox" 2>&1) == *"not a dynamic executable"* ]] ||
        skip "$busybox is not statically linked (busybox-static)"
    [ -x "$hb" ] || { echo "no $hb: build first" >&2; exit 1; }
    t_start=$(date +%s)
    name=$1
    work=$(mktemp -d "/tmp/$name.XXXXXX")
    P=$work/$name
    slug=$name
    image=localhost/$name:1
    watch_pid=""
    export CONTAINERS_CONF=$work/containers.conf
    cp "$repo/examples/demo-app/containers.conf" "$CONTAINERS_CONF"
    if ! info=$(podman info 2>&1 >/dev/null); then
        rm -rf -- "$work"
        skip "podman does not work here as $(id -un): $(tail -n 1 <<<"$info")"
    fi
    trap cleanup EXIT
    trap 'echo "interrupted"; exit 130' INT TERM HUP
    # shellcheck source=tests/e2e/verdicts.sh
    . "$repo/tests/e2e/verdicts.sh"
    pname=$(compose_project_of "$P")
    mkdir -p "$work/img/rootfs/bin" "$P" "$work/home" || die "mkdir"
    cp "$busybox" "$work/img/rootfs/bin/busybox"
}

skip() {
    echo "SKIP: $*"
    exit 77
}

cleanup() {
    local ids
    [ -z "$watch_pid" ] || { kill -TERM "$watch_pid" 2>/dev/null && wait "$watch_pid" 2>/dev/null; }
    ids=$(podman ps -aq --filter "label=io.podman.compose.project=${pname:-$name}" 2>/dev/null)
    # shellcheck disable=SC2086 # a list of IDs
    [ -z "$ids" ] || podman rm -f -t 0 $ids >/dev/null 2>&1
    podman network exists "${pname:-$name}_default" 2>/dev/null && podman network rm -f "${pname:-$name}_default" >/dev/null 2>&1
    podman rmi -f "$image" >/dev/null 2>&1
    rm -rf -- "$work"
}

# compose_e2e_commit: the checkout made a git repository, all of it committed.
compose_e2e_commit() {
    git -C "$P" init -q . &&
        git -C "$P" add -A &&
        git -C "$P" -c user.email=t@example.invalid -c user.name=t commit -qm app ||
        die "git init of $P"
}

# compose_e2e_install: the checkout's compose.yaml (committed) installed
# with podman-compose, no systemd, rate limits out of the way; sets bridge
# (the person's environment), root_flag, config, audit, policy and client.
compose_e2e_install() {
    local out
    bridge=(env -u XDG_CONFIG_HOME -u XDG_STATE_HOME -u XDG_CACHE_HOME "HOME=$work/home")
    root_flag=()
    [ "$(id -u)" -eq 0 ] && root_flag=(--allow-root)
    out=$("${bridge[@]}" "$hb" install --project-dir "$P" --backend compose --compose-file compose.yaml \
        --compose-cmd "env CONTAINERS_CONF=$CONTAINERS_CONF podman-compose" --slug "$slug" \
        --rate-limit 1000/600 --read-rate-limit 1000/60 --no-systemd --accept-uncontained-engine \
        "${root_flag[@]}" 2>&1) ||
        die "hostbridge install: $out"
    config=$work/home/.config/hostbridge/$slug/bridge.json
    audit=$work/home/.local/state/hostbridge/$slug/audit.jsonl
    policy=$work/home/.config/hostbridge/$slug/policy.conf
    client=$P/untracked/hostbridge/request
    [ -x "$client" ] || die "install dropped no client at $client"
}

# compose_e2e_watch: the installed executor's `watch`, stopped by cleanup.
compose_e2e_watch() {
    "${bridge[@]}" "$work/home/.local/lib/hostbridge/$slug/hostbridge-executor" watch --config "$config" "${root_flag[@]}" \
        </dev/null >>"$work/watch.log" 2>&1 &
    watch_pid=$!
    echo "installed $slug (compose backend, podman-compose); watch pid $watch_pid"
}

request() { # VERB [ARG]: REQ_RC, REQ_OUT, REQ_ERR, RESP (the response file's JSON)
    "$client" --timeout 300 "$@" >"$work/out" 2>"$work/err"
    REQ_RC=$?
    REQ_OUT=$(cat "$work/out")
    REQ_ERR=$(cat "$work/err")
    RESP=$(cat "$(ls -t "$P"/untracked/hostbridge/responses/*.json | head -n 1)")
}
show() { printf '%s\n%s\n' "$REQ_OUT" "$REQ_ERR" | tail -n 30; }
# q EXPR: a Python expression on the last response `r`, `s` its services by name
q() { python3 -c 'import json,sys; r=json.loads(sys.argv[1]); s={x["service"]: x for x in (r["services"] or [])}; print(eval(sys.argv[2]))' "$RESP" "$1" 2>&1; }
inspect() { podman container inspect --format "$2" "$1" 2>/dev/null; }
