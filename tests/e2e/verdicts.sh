# Sourced by the e2e attack scripts (tests/e2e/*_attack*.sh): one verdict
# per line, counted; the script ends with `[ "$failures" -eq 0 ]`.
# shellcheck shell=bash
failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}
pass() { echo "PASS: $*"; }
check() { # MESSAGE CMD...
    local msg=$1
    shift
    if "$@"; then pass "$msg"; else fail "$msg"; fi
}
die() {
    echo "FAIL: $*"
    exit 1
}
# compose_project_of DIR: the compose project name `hostbridge install`
# gives a checkout DIR (canonical) whose compose file lies in DIR
# (admin/compose/build_plan.hpp, install_project_name): the basename as
# podman-compose 1.0.3 normalises it, cut to 52, then _hb and 8 hex digits
# of sha256(DIR). Runs by hand on the same project pass -p with it.
compose_project_of() {
    local dir base
    dir=$(readlink -f -- "$1") || dir=$1
    # shellcheck disable=SC2018,SC2019 # project names are ASCII
    base=$(basename -- "$dir" | tr 'A-Z' 'a-z' | tr -cd 'a-z0-9_-' | sed 's/^[-_]*//' | cut -c1-52)
    printf '%s%s\n' "${base:+${base}_}hb" "$(printf %s "$dir" | sha256sum | cut -c1-8)"
}
# finish_e2e NAME RUNTIME: the end of a script whose cleanup ran:
# tools/e2e/leftovers.sh must find nothing named after NAME; prints the
# runtime and the count, and fails when any check did.
finish_e2e() {
    local out rc
    if [ -x "$repo/tools/e2e/leftovers.sh" ]; then
        out=$("$repo/tools/e2e/leftovers.sh" "$1" 2>&1)
        rc=$?
        check "nothing of the run is left (tools/e2e/leftovers.sh $1)" test "$rc" -eq 0
        [ "$rc" -eq 0 ] || printf '%s\n' "$out"
    fi
    echo "runtime: $2"
    if [ "$failures" -eq 0 ]; then echo "every check passed"; else echo "$failures check(s) FAILED"; fi
    [ "$failures" -eq 0 ]
}
# e2e_needs TOOL...: exit 77, the reason printed, unless each TOOL is on
# PATH and busybox is a static one (the test images are made of it); sets
# busybox to its path.
e2e_needs() {
    local tool
    for tool in "$@"; do
        command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
    done
    busybox=$(command -v busybox) || { echo "SKIP: busybox is not installed"; exit 77; }
    [[ $(LC_ALL=C ldd "$busybox" 2>&1) == *"not a dynamic executable"* ]] ||
        { echo "SKIP: $busybox is not statically linked (busybox-static)"; exit 77; }
}
# e2e_bind_app DIR IMAGE ROOTFS: the image IMAGE made of busybox (sh,
# sleep, cat, ls) in ROOTFS, and the checkout DIR, a git repository whose
# compose.yaml runs it as service app binding ./src (which holds a file
# marker reading "checkout") to /srv/src. Needs e2e_needs first.
e2e_bind_app() {
    local dir=$1 image=$2 rootfs=$3 applet
    mkdir -p "$rootfs/bin" "$dir/src" || die "mkdir"
    cp "$busybox" "$rootfs/bin/busybox" || die "cp $busybox"
    for applet in sh sleep cat ls; do ln -s busybox "$rootfs/bin/$applet"; done
    tar -C "$rootfs" -c . | podman import --change 'CMD ["/bin/sleep", "100000"]' - "$image" >/dev/null ||
        die "podman import of a busybox image"
    echo checkout >"$dir/src/marker"
    printf 'services:\n  app:\n    image: %s\n    init: true\n    volumes:\n      - ./src:/srv/src\n' \
        "$image" >"$dir/compose.yaml"
    {
        git -C "$dir" init -q . &&
            git -C "$dir" add -A &&
            git -C "$dir" -c user.email=t@example.invalid -c user.name=t commit -qm app
    } || die "git init of $dir"
}

# e2e_docker_needs TOOL...: for the docker engine user's tests (docs/DOCKER.md),
# as root: exit 77, the reason printed, without root, the docker of
# tools/deps.sh (sets root to its prefix), a user manager or each TOOL
# (e2e_needs, which sets busybox).
e2e_docker_needs() {
    [ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (it creates two users)"; exit 77; }
    root=$("$repo/tools/deps.sh" docker-root) || {
        echo "SKIP: no docker of the pinned versions here (tools/deps.sh test gets it on Debian 12 and 13; docs/DOCKER.md)"
        exit 77
    }
    e2e_needs setfacl getfacl setpriv rootlesskit slirp4netns "$@"
    "$repo/tools/e2e/usermgr.sh" check || exit 77
}

# e2e_docker_session STAGE PERSON ENGINE SLUG NAME ROOT: the inner phase of
# the bridge's docker e2e scripts (bridge_docker.sh, rebuild_docker.sh),
# run as root inside the engine user's manager: sets D, ehome, phome, puid,
# P (the checkout $phome/NAME), pname, socket, config; defines as_person,
# remote (the person's docker through the engine's socket), as_engine,
# socket_active, request (VERB [ARG]: REQ_RC, REQ_OUT, REQ_ERR, RESP) and
# q (a Python expression on RESP as r); waits for the engine's socket, and
# starts the person's drain (watch, its pid; its log /tmp/NAME-watch.log).
e2e_docker_session() {
    stage=$1 person=$2 engine=$3 slug=$4 name=$5 root=$6
    D=$root/usr/bin/docker
    ehome=$(getent passwd "$engine" | cut -d: -f6)
    phome=$(getent passwd "$person" | cut -d: -f6)
    puid=$(id -u "$person")
    P=$phome/$name
    pname=$(compose_project_of "$P")
    socket=$ehome/engine/docker.sock
    config=$phome/.config/hostbridge/$slug/bridge.json
    install -d -o "$person" -g "$person" -m 0700 "/run/user/$puid"
    as_person() {
        setpriv --reuid="$person" --regid="$person" --init-groups -- env -i PATH="$root/usr/bin:$PATH" \
            HOME="$phome" USER="$person" LOGNAME="$person" XDG_RUNTIME_DIR="/run/user/$puid" "$@"
    }
    remote() { as_person env DOCKER_HOST="unix://$socket" "$D" "$@"; }
    as_engine() { "$stage/tools/e2e/usermgr.sh" as-user -- "$@"; }
    socket_active() { [ "$(as_engine systemctl --user is-active hostbridge-docker.socket 2>/dev/null)" = active ]; }
    request() { # [--lines N|--since C] VERB [ARG]
        REQ_OUT=$(as_person "$P/untracked/hostbridge/request" --timeout 120 "$@" 2>"/tmp/$name-err")
        REQ_RC=$?
        REQ_ERR=$(cat "/tmp/$name-err")
        RESP=$(cat "$(ls -t "$P"/untracked/hostbridge/responses/*.json | head -n 1)")
    }
    q() { python3 -c 'import json,sys; r=json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$RESP" "$1" 2>&1; }
    for _ in $(seq 3000); do socket_active && break; sleep 0.2; done # a hang guard
    check "the engine's manager started hostbridge-docker.socket" eval 'socket_active && test -S "$socket"'
    as_person "$phome/.local/lib/hostbridge/$slug/hostbridge-executor" watch --config "$config" \
        </dev/null >>"/tmp/$name-watch.log" 2>&1 &
    watch=$!
}

# e2e_docker_session_end: the end of that inner phase: the drain stopped,
# the engine's containers and the project's network removed, the temp
# files gone; exits with the checks' verdict.
e2e_docker_session_end() {
    kill -TERM "$watch" 2>/dev/null
    wait "$watch" 2>/dev/null
    local ids
    ids=$(remote ps -aq 2>/dev/null)
    # shellcheck disable=SC2086 # a list of ids
    [ -z "$ids" ] || remote rm -f $ids >/dev/null 2>&1
    remote network rm "${pname}_default" >/dev/null 2>&1
    rm -f "/tmp/$name-watch.log" "/tmp/$name-err"
    [ "$failures" -eq 0 ]
    exit
}

# e2e_rootfs_tar DIR APPLET...: DIR/rootfs.tar, a busybox image's root file
# system with those applets, readable by the throwaway users.
e2e_rootfs_tar() {
    local dir=$1 applet
    shift
    mkdir -p "$dir/rootfs/bin" && cp "$busybox" "$dir/rootfs/bin/busybox" || die "the image's rootfs"
    for applet in "$@"; do ln -s busybox "$dir/rootfs/bin/$applet"; done
    tar -C "$dir/rootfs" -cf "$dir/rootfs.tar" . && chmod 0644 "$dir/rootfs.tar" || die "the image's tar"
}
