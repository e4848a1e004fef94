#!/bin/bash
# bridge-session.sh: the whole hostbridge story on real components, shared by
# ./demo, the e2e tests (tests/e2e/) and bench/real_path.sh. It brings the
# demo application up on podman, installs the bridge in front of it, starts
# an agent container (busybox, the checkout bind-mounted, no engine binary,
# no socket) and plays an agent session from inside it with the `request`
# client the installer dropped into the spool, checking on the host what
# each step really did. Every check prints "ok" or "FAIL"; any FAIL fails
# the run.
#
# Usage (as the user whose bridge it is; rootful podman when that is root):
#   bridge-session.sh run      OPTIONS   setup + session + final checks
#   bridge-session.sh setup    OPTIONS   project copy, stack up, agent, install
#   bridge-session.sh teardown OPTIONS   remove everything setup made
# OPTIONS:
#   --project DIR       the throwaway project to create (a copy of
#                       examples/demo-app; its basename names containers,
#                       network, images and the bridge's slug)
#   --bin DIR           directory holding hostbridge, hostbridge-executor,
#                       hostbridge-parser and hostbridge-snapshot
#   --mode systemd|watch  who drains: the .path unit of a reachable systemd
#                       --user manager (run inside tools/e2e/usermgr.sh), or
#                       a `hostbridge-executor watch` this script starts
#   --backend stack|compose   the bridge's backend (compose: podman-compose)
#   --rate-limit N/S    mutating requests per window (default 11/600: the
#                       session's burst meets it after one more restart)
#   --engine-user NAME  the engine is NAME's rootless podman service, made by
#                       `hostbridge engine setup` (docs/ENGINE-USER.md): every
#                       podman call here goes through its socket
#                       (CONTAINER_HOST), and install gets --engine-user NAME
#
# Run it inside `usermgr.sh run` for --mode systemd: rootful podman must share
# the manager's mount namespace. teardown is what usermgr's --teardown hook
# runs (and what ./demo's trap runs in watch mode); it kills only the watch
# process this script started (its PID file), nothing by name.
# The checks pass their conditions to eval in single quotes on purpose.
# shellcheck disable=SC2016
set -uo pipefail

SELF=$(readlink -f -- "${BASH_SOURCE[0]}")
REPO=$(readlink -f -- "$(dirname -- "$SELF")/../..")
readonly SELF REPO
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

usage() {
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$SELF" >&2
    exit 64
}

# ------------------------------------------------------------------ options

cmd=${1:-}
[ $# -ge 1 ] && shift
project_dir="" bin="" mode=systemd backend=stack rate_limit=11/600 engine_user=""
while [ $# -gt 0 ]; do
    case $1 in
        --project) project_dir=${2:?}; shift 2 ;;
        --bin) bin=${2:?}; shift 2 ;;
        --mode) mode=${2:?}; shift 2 ;;
        --backend) backend=${2:?}; shift 2 ;;
        --rate-limit) rate_limit=${2:?}; shift 2 ;;
        --engine-user) engine_user=${2:?}; shift 2 ;;
        *) usage ;;
    esac
done
case $cmd in run | setup | teardown) ;; *) usage ;; esac
case $mode in systemd | watch) ;; *) usage ;; esac
case $backend in stack | compose) ;; *) usage ;; esac
[[ $rate_limit =~ ^([0-9]+)/([0-9]+)$ ]] || usage
rate_count=${BASH_REMATCH[1]}
# The compose session's loop (compose_loop) uses two mutating requests more:
# the install gets two more slots, so the burst meets the limit as before.
loop_mutating=0
# And its hand-over (hand_over_stack) one more: the bridge's up.
handover_mutating=0
if [ "$backend" = compose ]; then
    handover_mutating=1
    rate_count=$((rate_count + 2 + handover_mutating))
fi
# A build held for a person takes a slot when it is held (its snapshot is
# taken then) and another when it runs (executor/drain_held.cpp): the stack
# session holds one rebuild, the compose loop three; with an engine user
# they run unattended. The install gets those slots too.
held_builds=0
if [ -z "$engine_user" ]; then
    held_builds=1
    [ "$backend" = compose ] && held_builds=3
fi
rate_count=$((rate_count + held_builds))
rate_limit=$rate_count/${BASH_REMATCH[2]}
[ -n "$project_dir" ] || usage
case $project_dir in /*) ;; *) project_dir=$PWD/$project_dir ;; esac

P=$project_dir
project=$(basename -- "$P")
slug=$project
[[ $project =~ ^[a-z0-9][a-z0-9-]{0,62}$ ]] || { echo "bad project name '$project'" >&2; exit 64; }
run_dir=$(dirname -- "$P")/$project.run # scratch files of this session
spool=$P/untracked/hostbridge
client=$spool/request
agent=$project-agent
agent_net=$project-agent-net
agent_img=localhost/$project-agent:latest
mcp_ctr=$project-mcp # the agent container holding nothing but hostbridge-agent
mcp_img=localhost/$project-mcp:latest
label=io.hostbridge.demo.project=$project
service=hostbridge-$slug.service
path_unit=hostbridge-$slug.path
# HB_BRIDGE_HOME (watch mode): a throwaway HOME for the bridge's own files
# only. podman keeps the real HOME: the drain runs commands with HOME from
# the password database, and rootless podman's storage lives there.
if [ -n "${HB_BRIDGE_HOME:-}" ]; then
    hostbridge() { env -u XDG_CONFIG_HOME -u XDG_STATE_HOME HOME="$HB_BRIDGE_HOME" "$bin/hostbridge" "$@"; }
    config_dir=$HB_BRIDGE_HOME/.config/hostbridge/$slug
    state_dir=$HB_BRIDGE_HOME/.local/state/hostbridge/$slug
    lib_dir=$HB_BRIDGE_HOME/.local/lib/hostbridge/$slug
else
    hostbridge() { "$bin/hostbridge" "$@"; }
    config_dir=${XDG_CONFIG_HOME:-$HOME/.config}/hostbridge/$slug
    state_dir=${XDG_STATE_HOME:-$HOME/.local/state}/hostbridge/$slug
    lib_dir=$HOME/.local/lib/hostbridge/$slug
fi
watch_pidfile=$run_dir/watch.pid
rootful=0
[ "$(id -u)" -eq 0 ] && rootful=1
# The podman settings these hosts need, for the harness's own podman calls
# (the stack script sets the same file for itself).
export CONTAINERS_CONF=$P/containers.conf
# With an engine user, this script's podman, podman-compose and the stack
# are clients of its service, as the drain's commands are.
engine_socket=""
if [ -n "$engine_user" ]; then
    engine_socket=$(getent passwd "$engine_user" | cut -d: -f6)/engine/podman.sock
    export CONTAINER_HOST=unix://$engine_socket
fi
if [ "$backend" = compose ]; then
    # The compose project install names the checkout (docs/COMPOSE.md, "The
    # project's name"): the basename, _hb, 8 hex digits of sha256 of its path.
    # The session's own compose run passes it with -p, as a person would.
    cproject=${project}_hb$(printf %s "$(readlink -f -- "$P")" | sha256sum | cut -c1-8)
    app_net=${cproject}_default
    ctr() { printf '%s_%s_1' "$cproject" "$1"; }
else
    app_net=$project-network
    ctr() { printf '%s-%s' "$project" "$1"; }
fi

# ------------------------------------------------------------------ output

failures=0
facts=() # what happened, in a few lines, for the summary
t_start=$(date +%s%N)
fact() { facts+=("$*"); }
say() { printf '%s\n' "$*"; }
section() { printf '\n== %s\n' "$*"; }
ok() { printf '   ok    %s\n' "$*"; }
fail() {
    printf '   FAIL  %s\n' "$*"
    failures=$((failures + 1))
}
check() { # MESSAGE CMD...: ok or FAIL
    local msg=$1
    shift
    if "$@"; then ok "$msg"; else fail "$msg"; fi
}
indent() { sed 's/^/         /'; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
secs() { # MS -> "1.23 s"
    printf '%d.%02d s' $(($1 / 1000)) $((($1 % 1000) / 10))
}
die() {
    fail "$*"
    exit 1
}

# ------------------------------------------------------------------ host-side probes

started_at() { podman container inspect --format '{{.State.StartedAt}}' "$(ctr "$1")" 2>/dev/null; }
state_of() { podman container inspect --format '{{.State.Status}}' "$(ctr "$1")" 2>/dev/null || echo missing; }
conmon_pid() { podman container inspect --format '{{.State.ConmonPid}}' "$(ctr "$1")" 2>/dev/null; }
serves() { # SERVICE: its HTTP answer from inside its own container (no host port)
    case $1 in
        api) podman exec "$(ctr api)" timeout 3 wget -q -O - http://127.0.0.1:8080/ 2>/dev/null ;;
        web) podman exec "$(ctr web)" timeout 3 wget -q -O - http://127.0.0.1:80/ 2>/dev/null ;;
    esac
}
wait_for() { # SECONDS CMD...: poll until CMD succeeds
    local deadline=$(($(date +%s) + $1))
    shift
    until "$@"; do
        [ "$(date +%s)" -lt "$deadline" ] || return 1
        sleep 0.2
    done
}
api_healthy() { serves api | grep -q '"status":"ok"'; }
unit_prop() { systemctl --user show "$service" -p "$1" --value 2>/dev/null; }
drain_idle() { [ "$(systemctl --user is-active "$service" 2>/dev/null)" = inactive ]; }
# The scope a process runs in (name=systemd or cgroup2 line), or "".
scope_of() {
    sed -n 's|.*/\(hostbridge-[^/]*\.scope\).*|\1|p' "/proc/$1/cgroup" 2>/dev/null | head -n 1
}
watch_running() { # any hostbridge-executor watch of this bridge
    pgrep -f "hostbridge-executor watch --config $config_dir/bridge.json" >/dev/null
}

# ------------------------------------------------------------------ the agent side

# request [--quiet] VERB [ARG]: runs the dropped client INSIDE the agent
# container; sets REQ_RC, REQ_OUT, REQ_ERR, REQ_MS and prints one line.
request() {
    local quiet=0
    [ "$1" = --quiet ] && quiet=1 && shift
    local t0
    t0=$(now_ms)
    podman exec "$agent" "$client" --timeout "${REQ_TIMEOUT:-60}" "$@" >"$run_dir/out" 2>"$run_dir/err"
    REQ_RC=$?
    REQ_MS=$(($(now_ms) - t0))
    REQ_OUT=$(cat "$run_dir/out")
    REQ_ERR=$(cat "$run_dir/err")
    [ "$quiet" -eq 1 ] && return 0
    local first
    first=$(printf '%s\n' "$REQ_OUT" | grep -v '^[[:space:]]*$' | tail -n 1)
    printf 'agent$ request %s\n' "$*"
    if [ "$REQ_RC" -eq 0 ]; then
        printf '         -> done (exit 0, %s): %s\n' "$(secs "$REQ_MS")" "${first:0:110}"
    else
        printf '         -> exit %s (%s): %s\n' "$REQ_RC" "$(secs "$REQ_MS")" \
            "$(printf '%s' "$REQ_ERR" | tail -n 1 | cut -c1-110)"
    fi
}
in_agent() { podman exec "$agent" sh -c "$1"; }

# A person in the loop (docs/DECIDE-AND-RUN.md, "Held for a person"): with
# MODE_down=ask the agent's `down` waits as `pending` until the person runs
# `hostbridge allow` (then it runs) or `hostbridge deny` (then it is refused).
# POLICY_FILE SAVED: the policy file and the text to put back.
ask_down() { # the agent's `down` in the background; its exit code lands in /tmp/ask.rc
    in_agent "rm -f /tmp/ask.*; $client --timeout 60 down >/tmp/ask.out 2>/tmp/ask.err; echo \$? >/tmp/ask.rc" \
        >/dev/null 2>&1 &
}
held_name() { # the name `hostbridge pending` lists, or fails
    local listed
    listed=$(cd "$P" && hostbridge pending 2>/dev/null) || return 1
    sed -n 's/^request: *//p' <<<"$listed" | head -n 1 | grep .
}
ask_answered() { in_agent 'test -s /tmp/ask.rc' 2>/dev/null; }
# VERB [ARG]: up or rebuild as the seeded policy has it: where it holds the
# verb for a person (admin/install/policy_engine_guard.hpp), request_allowed; else the
# agent's request runs at once.
request_engine() {
    if grep -qx "MODE_$1=ask" "$config_dir/policy.conf"; then
        request_allowed "$@"
    else
        REQ_TIMEOUT=300 request "$@"
    fi
}
# VERB [ARG]: the agent's request of a verb the seeded policy holds for a
# person, allowed by the person as soon as `hostbridge pending` lists it;
# sets REQ_RC and REQ_ERR as request() does.
request_allowed() {
    local name digest out rc t0
    t0=$(now_ms)
    in_agent "rm -f /tmp/held.*; $client --timeout 300 $* >/tmp/held.out 2>/tmp/held.err; echo \$? >/tmp/held.rc" \
        >/dev/null 2>&1 &
    printf 'agent$ request %s   (held for a person: the seeded policy has it ask)\n' "$*"
    REQ_RC=99 REQ_ERR="never held for a person"
    wait_for 30 is_held || return 0
    name=$(held_name)
    digest=$(held_digest "$name")
    out=$(cd "$P" && hostbridge allow "$name" "$digest" 2>&1)
    rc=$?
    printf 'host$ hostbridge allow %s %s\n' "$name" "$digest"
    printf '%s\n' "$out" | indent
    REQ_ERR="hostbridge allow exited $rc"
    # allow exits 1 when what it allowed failed (docs/COMMANDS.md, "pending,
    # allow, deny"): a failed run is the agent's answer to check, not a
    # refused decision, so only an allow that handed nothing over stops here.
    [ "$rc" -eq 0 ] || { [ "$rc" -eq 1 ] && grep -q "handed to the executor" <<<"$out"; } || return 0
    wait_for 300 held_answered || { REQ_ERR="no answer after the person allowed it"; return 0; }
    REQ_RC=$(in_agent 'cat /tmp/held.rc')
    REQ_OUT=$(in_agent 'cat /tmp/held.out')
    REQ_ERR=$(in_agent 'cat /tmp/held.err')
    REQ_MS=$(($(now_ms) - t0))
    printf '         -> exit %s (%s)\n' "$REQ_RC" "$(secs "$REQ_MS")"
    in_agent 'rm -f /tmp/held.*'
}
held_answered() { in_agent 'test -s /tmp/held.rc' 2>/dev/null; }
said_approve_once() { [ "$(in_agent 'grep -c "a person must approve" /tmp/ask.err' 2>/dev/null)" = 1 ]; }
# NAME: the digest `hostbridge pending` shows for it (the line after its
# `request:` line), which `allow NAME DIGEST` names.
held_digest() {
    (cd "$P" && hostbridge pending 2>/dev/null) |
        awk -v n="$1" '$1 == "request:" && $2 == n { getline; if ($1 == "digest:") print $2 }'
}
is_held() { held_name >/dev/null; }
web_serves() { serves web >/dev/null 2>&1; }
ask_session() {
    local policy_file=$1 policy_saved=$2 name digest out rc
    sed 's/^MODE_down=.*$/MODE_down=ask/' <<<"$policy_saved" >"$policy_file"
    say "host\$ the person sets MODE_down=ask in policy.conf"
    ask_down
    say "agent\$ request down   (in the background: it waits for a person)"
    check "the host holds it: hostbridge pending lists it" wait_for 30 is_held
    name=$(held_name)
    out=$(cd "$P" && hostbridge pending 2>&1)
    printf 'host$ hostbridge pending\n'
    printf '%s\n' "$out" | indent
    check "pending shows what would run" grep -q 'would run: \$[A-Z]' <<<"$out"
    # The host lists it as soon as it is held; the agent's client says so when
    # it next reads its answer, which a loaded machine delays (a check made at
    # once failed one package run): waited for, and still exactly once.
    check "the agent's client said once that a person must approve it" wait_for 30 said_approve_once
    digest=$(held_digest "$name")
    check "pending shows the digest an allow names" test -n "$digest"
    out=$(cd "$P" && hostbridge allow "$name" "$digest" 2>&1)
    rc=$?
    printf 'host$ hostbridge allow %s %s\n' "$name" "$digest"
    printf '%s\n' "$out" | indent
    check "allow NAME DIGEST: exit 0" test "$rc" -eq 0
    check "the agent's down ends: exit 0" eval 'wait_for 120 ask_answered && [ "$(in_agent "cat /tmp/ask.rc")" = 0 ]'
    check "and the stack is down: web no longer serves" eval '! serves web >/dev/null 2>&1'
    fact "ask: down was held as pending, listed by hostbridge pending, allowed by the person, and ran"

    ask_down
    say "agent\$ request down   (again)"
    check "held again" wait_for 30 is_held
    name=$(held_name)
    digest=$(held_digest "$name")
    out=$(cd "$P" && hostbridge deny --reason "not now" "$name" "$digest" 2>&1)
    rc=$?
    printf 'host$ hostbridge deny --reason "not now" %s %s\n' "$name" "$digest"
    printf '%s\n' "$out" | indent
    check "deny: exit 0" test "$rc" -eq 0
    check "the agent's down is refused by the person: exit 70" \
        eval 'wait_for 60 ask_answered && [ "$(in_agent "cat /tmp/ask.rc")" = 70 ] && in_agent "grep -q \"denied by a person on the host: not now\" /tmp/ask.err"'
    fact "ask: a second down was denied by the person; the agent got their reason"
    in_agent 'rm -f /tmp/ask.*'
    printf '%s\n' "$policy_saved" >"$policy_file"

    request_engine up
    check "up: exit 0, web serves again" eval '[ "$REQ_RC" -eq 0 ] && wait_for 60 web_serves'
}

# The agent's loop on the compose backend (docs/COMPOSE.md, "Verified
# outcomes"; docs/PROTOCOL.md, "Following logs"): a rebuild that breaks a
# service is answered failed with its log lines although podman-compose
# exits 0, the fix goes live, and `logs --since` gives only what is new.
# Two mutating requests more than the stack session (loop_mutating).
compose_loop() {
    local run_sh=$P/services/worker/run.sh
    cp "$run_sh" "$run_dir/worker-run.sh" || die "cannot keep worker's run.sh"
    in_agent "printf '#!/bin/sh\necho \"worker: cannot start (broken by the agent)\"\nexit 3\n' >$run_sh"
    say "agent: breaks services/worker/run.sh (it now exits 3 at once)"
    request_engine rebuild worker
    check "rebuild worker (broken): failed, worker exited with status 3, its log line in the answer" \
        eval '[ "$REQ_RC" -ne 0 ] && grep -q "did not settle: worker: exited with status 3" <<<"$REQ_ERR" && grep -q "^hostbridge: worker | worker: cannot start (broken by the agent)" <<<"$REQ_OUT"'
    cp "$run_dir/worker-run.sh" "$run_sh" || die "cannot put worker's run.sh back"
    say "agent: puts services/worker/run.sh back"
    request_engine rebuild worker
    check "rebuild worker (fixed): done, worker settled ok and running" \
        eval '[ "$REQ_RC" -eq 0 ] && grep -q "^hostbridge: worker: running" <<<"$REQ_OUT" && [ "$(state_of worker)" = running ]'
    fact "rebuild worker: a broken run.sh was answered failed with its log line; the fix went live"
    follow_logs
    loop_mutating=2
}

# Following worker's log (docs/PROTOCOL.md, "Following logs"), either
# backend: a window of two lines and a cursor, then, once worker wrote
# another line (one job every few seconds), only what is new. Read-only.
follow_logs() {
    local first cursor lines_before
    request --lines 2 logs worker
    first=$REQ_OUT
    cursor=$(sed -n 's/^cursor: //p' <<<"$REQ_ERR")
    check "logs --lines 2 worker: two lines and a cursor ($cursor)" \
        eval '[ "$REQ_RC" -eq 0 ] && [ "$(grep -c . <<<"$first")" -eq 2 ] && [ -n "$cursor" ]'
    worker_lines() { podman logs "$(ctr worker)" 2>&1 | grep -c .; }
    lines_before=$(worker_lines)
    worker_wrote() { [ "$(worker_lines)" -gt "$lines_before" ]; }
    wait_for 60 worker_wrote || true
    request --since "$cursor" logs worker
    check "logs --since CURSOR worker: only lines written after the two before" \
        eval '[ "$REQ_RC" -eq 0 ] && [ -n "$REQ_OUT" ] && ! grep -qxF -f <(printf "%s\n" "$first") <<<"$REQ_OUT"'
    fact "logs worker: --lines 2 gave a cursor; --since it gave only the $(grep -c . <<<"$REQ_OUT") line(s) written since"
}

# ------------------------------------------------------------------ setup

prepare_project() {
    local src=$REPO/examples/demo-app
    [ ! -e "$P" ] || die "$P exists already"
    mkdir -p "$run_dir" || die "cannot create $run_dir"
    # A fresh copy as its own git repository, like a developer's checkout.
    if ! cp -a "$src" "$P"; then die "cannot copy $src"; fi
    rm -rf "$P/.rootfs" "$P/untracked"
    # The health deadline is a hang guard, not a duration under test: the
    # suite runs this session with every core busy (docs/TESTING.md), where
    # four services took longer than the stack's default 30 s.
    echo "STACK_WAIT_SECONDS=300" >>"$P/.env" || die "cannot write $P/.env"
    {
        git -C "$P" init -q . &&
            git -C "$P" add -A &&
            git -C "$P" -c user.name=hostbridge-demo -c user.email=demo@localhost \
                commit -q -m "demo-app, as the agent found it"
    } || die "git init of $P failed"
    if [ -n "$engine_user" ]; then
        # The agent's container runs on the engine user's engine (join-network
        # needs one engine): its root is that user, who writes the checkout
        # through its group, which the person joined (docs/ENGINE-USER.md,
        # "The agent's container").
        local group
        group=$(id -gn "$engine_user")
        {
            chgrp -R "$group" "$P" && chmod -R g+w "$P" &&
                find "$P" -type d -exec chmod g+s {} +
        } || die "cannot share $P with the group $group (is $(id -un) a member?)"
    fi
}

stack_up() {
    local t0 log=$run_dir/stack-up.log
    t0=$(now_ms)
    if [ "$backend" = stack ]; then
        "$P/stack" start >"$log" 2>&1 || { indent <"$log"; die "./stack start failed"; }
        ok "./stack start: $(tail -n 1 "$log") ($(secs $(($(now_ms) - t0))))"
    else
        # podman-compose sets COMPOSE_PROJECT_NAME to the -p it runs under,
        # which compose.yaml's db image names: prepare builds it so.
        COMPOSE_PROJECT_NAME=$cproject "$P/stack" prepare >"$log" 2>&1 ||
            { indent <"$log"; die "./stack prepare failed"; }
        podman-compose -p "$cproject" -f "$P/compose.yaml" up -d >>"$log" 2>&1 ||
            { tail -n 30 "$log" | indent; die "podman-compose up -d failed"; }
        wait_for 60 api_healthy || { tail -n 30 "$log" | indent; die "api not serving after compose up"; }
        ok "podman-compose -p $cproject -f compose.yaml up -d: db, api, worker, web up ($(secs $(($(now_ms) - t0))))"
    fi
}

# A busybox image of its own (the stack's rootfs), labelled with the project
# so `./stack purge` removes it with the rest.
agent_up() {
    tar -C "$P/.rootfs" -cf "$run_dir/agent-rootfs.tar" . || die "tar of the rootfs failed"
    podman import -q --change "LABEL $label" --change 'CMD ["/bin/sh"]' \
        "$run_dir/agent-rootfs.tar" "$agent_img" >/dev/null || die "podman import of the agent image failed"
    rm -f "$run_dir/agent-rootfs.tar"
    # A bridge network of its own: rootless podman cannot connect a
    # slirp4netns container to another network later (join-network).
    podman network create --label "$label" "$agent_net" >/dev/null || die "network create $agent_net"
    podman run -d --init --name "$agent" --network "$agent_net" --label "$label" \
        -v "$P:$P" -w "$P" "$agent_img" sleep 86400 >/dev/null || die "the agent container did not start"
    ok "agent container $agent: busybox, $P bind-mounted at the same path, network $agent_net only"
    check "inside it: no container engine binary and no socket of any kind" \
        in_agent 'for b in podman docker buildah runc crun conmon nerdctl; do
                      command -v $b >/dev/null && exit 1; done
                  [ -z "$(find / -type s 2>/dev/null | head -n 1)" ]'
}

install_bridge() {
    # --linger 2: the session waits three times for the oneshot to exit
    # after its linger; at the default 10 s that was about 30 s of each
    # systemd session (docs/PERFORMANCE.md, "Where CI's time goes").
    local -a args=(--project-dir "$P" --agent-container "$agent" --network "$app_net"
        --engine podman --rate-limit "$rate_limit" --linger 2)
    if [ "$backend" = stack ]; then
        # The stack reads containers.conf beside itself: pinned, so the run
        # tree holds the approved copy (the agent's edit is never read).
        args+=(--stack-bin "$P/stack" --compose-file "$P/compose.yaml" --tcb containers.conf)
        # The stack labels its containers as compose does: the bridge checks
        # how they settled (docs/COMPOSE.md, "A stack's services").
        args+=(--stack-project "$project")
        # rebuild hands the stack a screened snapshot of the context
        # (docs/BUILDS.md, "The stack backend"); it never builds from the checkout.
        local svc
        for svc in api web worker; do
            args+=(--build-context "$svc=." --containerfile "$svc=services/$svc/Containerfile")
        done
    else
        args+=(--backend compose --compose-cmd podman-compose --compose-file compose.yaml)
        # The drain runs podman-compose with a fixed environment (no
        # CONTAINERS_CONF): rootless podman reads the user's own file.
        if [ "$rootful" -eq 0 ] && [ ! -e "$HOME/.config/containers/containers.conf" ]; then
            install -D -m 0644 "$P/containers.conf" "$HOME/.config/containers/containers.conf"
        fi
    fi
    [ "$rootful" -eq 1 ] && args+=(--allow-root)
    [ -n "$engine_user" ] && args+=(--engine-user "$engine_user" --agent-gid "$(id -g "$engine_user")")
    [ "$mode" = watch ] && args+=(--no-systemd)
    say "host\$ hostbridge install ${args[*]}"
    local out
    out=$(hostbridge install "${args[@]}" 2>&1)
    local rc=$?
    printf '%s\n' "$out" >"$run_dir/install.log"
    if [ "$rc" -ne 0 ]; then
        indent <"$run_dir/install.log"
        die "hostbridge install failed (exit $rc)"
    fi
    # The gist; every line it printed is in install.log.
    grep -E '^hostbridge install: |^compose flavour: |enabled and started|pin [^ ]*: pinned$|request: created' \
        "$run_dir/install.log" | sed 's/^ *//' | indent
    [ -x "$client" ] || die "install dropped no client at $client"
    if [ "$backend" = compose ]; then
        check "install told podman-compose by its version (bridge.json backend.flavour)" \
            grep -qx 'compose flavour: podman-compose (from `version`)' "$run_dir/install.log"
    fi
    # What the seeded policy holds for a person (admin/install/policy_engine_guard.hpp):
    # without an engine user the engine runs as the person, and up and
    # rebuild wait for a person; with one, both run unattended (a stack's
    # rebuild still waits: its build is its own command).
    local want_up=ask want_rebuild=ask
    if [ -n "$engine_user" ]; then
        want_up=auto
        [ "$backend" = stack ] || want_rebuild=auto
    fi
    check "the seeded policy has MODE_up=$want_up and MODE_rebuild=$want_rebuild" \
        eval 'grep -qx "MODE_up=$want_up" "$config_dir/policy.conf" && grep -qx "MODE_rebuild=$want_rebuild" "$config_dir/policy.conf"'
    if [ "$mode" = systemd ]; then
        check "$path_unit enabled and watching the spool" \
            test "$(systemctl --user is-active "$path_unit")" = active
        check "$service has never run yet" test -z "$(unit_prop InvocationID)"
    else
        local -a watch_args=(--config "$config_dir/bridge.json")
        [ "$rootful" -eq 1 ] && watch_args+=(--allow-root)
        # setsid: the watcher keeps its own session; teardown kills it by PID.
        setsid "$lib_dir/hostbridge-executor" watch "${watch_args[@]}" \
            </dev/null >>"$run_dir/watch.log" 2>&1 &
        echo $! >"$watch_pidfile"
        ok "hostbridge-executor watch started (pid $!), in place of a user manager"
    fi
}

cmd_setup() {
    local how
    if [ "$mode" = systemd ]; then
        systemctl --user --quiet is-active default.target 2>/dev/null ||
            die "--mode systemd needs a reachable systemd --user manager (run inside usermgr.sh)"
        how="a real systemd --user manager fires the drain (.path unit, oneshot service)"
    else
        how="no user manager: hostbridge-executor watch drains the spool"
    fi
    section "hostbridge on real components: $([ "$rootful" -eq 1 ] && echo rootful || echo rootless) podman as $(id -un), $backend backend; $how"
    prepare_project
    ok "project $P: a copy of examples/demo-app, its own git repository"
    section "the application (db, api, worker, web), as a developer starts it"
    stack_up
    section "the agent's container"
    agent_up
    section "the bridge"
    install_bridge
    [ "$backend" = compose ] && hand_over_stack
}

# The containers the developer started by hand lack the label the bridge's
# rendered compose file sets (docs/COMPOSE.md, "The project's name"): the
# bridge reads none of them. The person brings them down, and the bridge's
# own up makes them again.
hand_over_stack() {
    section "the stack, handed to the bridge"
    if [ -z "$engine_user" ]; then
        # (An engine user's store is not the person's: install does not list it.)
        check "install: the hand-started containers lack the bridge's label, and how to remove them" \
            eval 'grep -q "lack the label io.hostbridge.project=$cproject" "$run_dir/install.log" && grep -q " rm -f .*$(ctr api)" "$run_dir/install.log"'
    fi
    say "host\$ podman-compose -p $cproject -f compose.yaml down"
    (cd "$P" && podman-compose -p "$cproject" -f compose.yaml down >>"$run_dir/stack-up.log" 2>&1) ||
        die "podman-compose down failed"
    request_engine up
    check "up through the bridge: exit 0, api serves" eval '[ "$REQ_RC" -eq 0 ] && wait_for 60 api_healthy'
    [ "$REQ_RC" -eq 0 ] || printf '%s\n%s\n' "$REQ_OUT" "$REQ_ERR" | tail -n 20 | indent
    check "the bridge's containers carry io.hostbridge.project=$cproject" \
        test "$(podman container inspect --format '{{index .Config.Labels "io.hostbridge.project"}}' "$(ctr api)" 2>/dev/null)" = "$cproject"
}

# ------------------------------------------------------------------ the session

gate_edit() { # the agent edits a pinned file
    in_agent "sed -i 's/WORKER_INTERVAL_SECONDS:-3/WORKER_INTERVAL_SECONDS:-2/' $P/compose.yaml"
}

# Round 4's escape through the stack's own build: one cache mount plants a
# link to the person's files, the next follows it; held `ask`, `pending`
# showed `$STACK build api` and a person allowed it. The screen now reads
# the snapshot when the rebuild is held (docs/BUILDS.md): it is answered
# denied at once and never shown to a person. The control builds the same
# Containerfile as the stack does by hand, with a TMPDIR of its own.
stack_cache_link() {
    local cf=$P/services/api/Containerfile saved secret=$run_dir/stack-secret
    local token=STACK-SECRET-$$ out
    saved=$(cat "$cf")
    mkdir -p "$secret" && echo "$token" >"$secret/id_rsa"
    printf 'FROM scratch\nCOPY .rootfs/ /\nRUN --mount=type=cache,target=/c ln -sfn %s /c/h\nRUN --mount=type=cache,target=/c/h cat /c/h/id_rsa\n' \
        "$secret" >"$cf"
    say "agent: services/api/Containerfile plants a link in a cache mount and reads through it in the next"
    request rebuild api
    check "rebuild api: denied at once, naming the --mount line, never held for a person ($REQ_ERR)" \
        eval '[ "$REQ_RC" -eq 70 ] && grep -q "line 3: --mount" <<<"$REQ_ERR" && ! is_held'
    check "the answer carries nothing of the secret" eval '[[ $REQ_OUT$REQ_ERR != *$token* ]]'
    mkdir -p "$run_dir/stack-tmp"
    out=$(cd "$P" && TMPDIR=$run_dir/stack-tmp podman build --no-cache --network=none \
        -t "localhost/$project-control:latest" -f services/api/Containerfile . 2>&1)
    check "control: the same Containerfile built as the stack builds it prints the secret" \
        grep -qF -- "$token" <<<"$out"
    podman rmi -f "localhost/$project-control:latest" >/dev/null 2>&1
    podman unshare rm -rf "$run_dir/stack-tmp" 2>/dev/null || rm -rf "$run_dir/stack-tmp"
    rm -rf "$secret"
    printf '%s\n' "$saved" >"$cf"
    fact "the cache-link escape through the stack's build: denied when held, never shown to a person; the control printed the secret"
}

# ------------------------------------------------------------------ the agent over MCP

# mcp_send JSON: one line to the server. mcp_recv ID: reads lines until the
# answer with that id (MCP_LINE), up to 90 s; notifications are skipped.
mcp_send() { printf '%s\n' "$1" >&"${MCP[1]}"; }
mcp_recv() {
    local line
    MCP_LINE=
    while IFS= read -r -t 90 line <&"${MCP[0]}"; do
        case $line in "{\"id\":$1,"*) MCP_LINE=$line; return 0 ;; esac
    done
    return 1
}

# An agent container whose root filesystem is hostbridge-agent and nothing
# else (no libc, no shell; `podman import` of a one-file tarball, since no
# registry is reachable) lists and calls the bridge's tools over MCP; then
# the busybox agent runs the same binary's `request`.
mcp_session() {
    local root=$run_dir/mcp-rootfs before after files
    section "an agent container holding nothing but hostbridge-agent, over MCP"
    rm -rf "$root" && mkdir -p "$root" && cp "$spool/bin/hostbridge-agent" "$root/" ||
        die "cannot copy $spool/bin/hostbridge-agent (did install drop it?)"
    tar -C "$root" -cf "$run_dir/mcp-rootfs.tar" hostbridge-agent || die "tar of the MCP rootfs failed"
    podman import -q --change "LABEL $label" --change 'ENTRYPOINT ["/hostbridge-agent"]' \
        "$run_dir/mcp-rootfs.tar" "$mcp_img" >/dev/null || die "podman import of the MCP agent image failed"
    rm -rf "$root" "$run_dir/mcp-rootfs.tar"
    podman create -q --name "$mcp_ctr-probe" --label "$label" "$mcp_img" mcp >/dev/null &&
        files=$(podman export "$mcp_ctr-probe" | tar -tvf - | grep -v '^d' | awk '{ print $NF }' | tr '\n' ' ')
    podman rm -f "$mcp_ctr-probe" >/dev/null 2>&1
    check "its root filesystem holds one file: $files" test "$files" = "hostbridge-agent "

    coproc MCP { exec podman run --rm -i --name "$mcp_ctr" --label "$label" --network none \
        -e HOSTBRIDGE_SPOOL="$spool" -v "$P:$P" "$mcp_img" mcp 2>"$run_dir/mcp.err"; }
    local mcp_pid=$MCP_PID
    mcp_send '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bridge-session","version":"1"}}}'
    mcp_recv 1
    check "initialize: $(grep -o '"protocolVersion":"[^"]*"' <<<"$MCP_LINE")" \
        grep -q '"protocolVersion":"2025-11-25"' <<<"$MCP_LINE"
    mcp_send '{"jsonrpc":"2.0","method":"notifications/initialized"}'
    mcp_send '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
    mcp_recv 2
    check "tools/list: $(grep -o '"name":"[a-z-]*"' <<<"$MCP_LINE" | cut -d'"' -f4 | tr '\n' ' ')" \
        eval 'grep -q "\"name\":\"restart\"" <<<"$MCP_LINE" && grep -q "\"enum\":\[\"api\"" <<<"$MCP_LINE"'
    mcp_send '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ping","arguments":{}}}'
    mcp_recv 3
    check "tools/call ping: pong" grep -q '"text":"pong"' <<<"$MCP_LINE"
    before=$(started_at api)
    local t0
    t0=$(now_ms)
    mcp_send '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"restart","arguments":{"service":"api"}}}'
    mcp_recv 4
    after=$(started_at api)
    check "tools/call restart api: done in $(secs $(($(now_ms) - t0))), isError false" \
        eval 'grep -q "\"isError\":false" <<<"$MCP_LINE" && grep -q "\"state\":\"done\"" <<<"$MCP_LINE"'
    check "api really restarted: started $before -> $after" test -n "$after" -a "$after" != "$before"
    exec {MCP[1]}>&-
    local rc=0
    wait "$mcp_pid" || rc=$?
    check "the MCP server exited $rc when its stdin closed" test "$rc" -eq 0
    [ "$rc" -eq 0 ] || indent <"$run_dir/mcp.err"
    fact "MCP: a container holding only hostbridge-agent listed the tools and restarted api through the bridge"

    before=$(started_at api)
    podman exec "$agent" "$spool/bin/hostbridge-agent" request --timeout 60 restart api \
        >"$run_dir/out" 2>"$run_dir/err"
    rc=$?
    after=$(started_at api)
    check "busybox agent: hostbridge-agent request restart api: exit $rc" test "$rc" -eq 0
    check "api really restarted: started $before -> $after" test -n "$after" -a "$after" != "$before"
    [ "$rc" -eq 0 ] || indent <"$run_dir/err"
    if [ "$mode" = systemd ]; then check "the oneshot exited again" wait_for 30 drain_idle; fi
}

cmd_session() {
    local before after inv_first
    section "the agent's session: every 'agent\$' line runs inside $agent"

    request ping
    check "ping answered: pong" test "$REQ_RC" -eq 0 -a "$REQ_OUT" = pong
    if [ "$mode" = systemd ]; then
        inv_first=$(unit_prop InvocationID)
        check "the .path unit started $service (invocation ${inv_first:0:12}); no watch process exists" \
            eval '[ -n "$inv_first" ] && ! watch_running'
    fi
    fact "ping: pong in $(secs "$REQ_MS") (publish, $([ "$mode" = systemd ] && echo ".path unit -> oneshot drain" || echo "watch"), answer, as seen from the agent)"

    request status
    if [ "$backend" = stack ]; then
        check "status: the stack's table, api running" grep -Eq "^api +running" <<<"$REQ_OUT"
    else
        # The engine's JSON of the install's own containers alone, a line per
        # service (docs/COMPOSE.md, "Structured status and health").
        check "status: a line per service from the engine, api running" \
            grep -q "hostbridge: api: running" <<<"$REQ_OUT"
    fi

    before=$(started_at api)
    request restart api
    after=$(started_at api)
    check "restart api: exit 0" test "$REQ_RC" -eq 0
    check "api really restarted: started $before -> $after" test -n "$after" -a "$after" != "$before"
    if [ -n "$engine_user" ]; then
        # The engine user's service starts conmon: the drain's scope holds
        # only the client, and the container is not the person's.
        local cpid owner
        cpid=$(conmon_pid api)
        owner=$(ps -o uid= -p "$cpid" 2>/dev/null | tr -d ' ')
        check "api's conmon (pid $cpid) is $engine_user's (uid ${owner:-none}), not $(id -un)'s" \
            test "$owner" = "$(id -u "$engine_user")"
        check "after the oneshot exited api still runs and serves: $(serves api | tr -d '\n' | cut -c1-60)" \
            eval 'wait_for 30 drain_idle; [ "$(state_of api)" = running ] && api_healthy'
        fact "restart api: the container restarted, as the engine user $engine_user (docs/ENGINE-USER.md)"
    elif [ "$mode" = systemd ]; then
        local cpid scope
        cpid=$(conmon_pid api)
        scope=$(scope_of "$cpid")
        check "api's conmon (pid $cpid) runs in ${scope:-no scope}, not in the oneshot" \
            eval '[[ $scope == hostbridge-$slug-restart-*.scope ]]'
        local t0 waited
        t0=$(now_ms)
        wait_for 30 drain_idle
        waited=$(($(now_ms) - t0))
        check "the oneshot exited, $(secs "$waited") after the answer (it lingers for more requests)" drain_idle
        check "after the oneshot exited api still runs and serves: $(serves api | tr -d '\n' | cut -c1-60)" \
            eval '[ "$(state_of api)" = running ] && api_healthy'
        check "its scope is still listed: $(systemctl --user list-units --no-legend --plain 'hostbridge-*.scope' | awk '{ print $1 }' | tr '\n' ' ')" \
            eval 'systemctl --user list-units --no-legend --plain "hostbridge-*.scope" | grep -q "^$scope "'
        fact "restart api: the container restarted, and kept running and serving after the oneshot drain exited (its own systemd scope)"
    else
        fact "restart api: the container restarted and serves"
    fi

    mcp_session

    in_agent "sed -i 's|<h1>demo-app web</h1>|<h1>demo-app web</h1><p>rebuilt by the agent</p>|' $P/services/web/index.html.in"
    say "agent: edits services/web/index.html.in (a code change, not a trusted file)"
    local img_before img_after
    if [ "$backend" = stack ]; then
        img_before=$(podman container inspect --format '{{.Image}}' "$(ctr web)")
        request_engine rebuild web
        img_after=$(podman container inspect --format '{{.Image}}' "$(ctr web)")
        check "rebuild web: exit 0, new image ${img_after:0:12} (was ${img_before:0:12}) runs and serves the change" \
            eval '[ "$REQ_RC" -eq 0 ] && [ "$img_after" != "$img_before" ] && serves web | grep -q "rebuilt by the agent"'
        # The stack got a screened snapshot (install --build-context), and
        # the audit names it (docs/BUILDS.md, "The stack backend").
        check "rebuild web: the stack built from a snapshot, its hash in the audit" \
            eval 'grep "\"verb\":\"rebuild\"" "$state_dir"/audit*.jsonl | grep "\"event\":\"succeeded\"" | grep -q "\"snapshot_sha256\":\"[0-9a-f]\{64\}\""'
        # The stack wrote the id (HOSTBRIDGE_IIDFILE), and the bridge asked
        # podman how web settled (install --stack-project).
        check "rebuild web: the audit names the image the stack built, ${img_after:0:12}" \
            eval 'grep "\"verb\":\"rebuild\"" "$state_dir"/audit*.jsonl | grep "\"event\":\"succeeded\"" | grep -q "\"image_id\":\"sha256:$img_after\""'
        check "rebuild web: the answer says web settled, running ${img_after:0:12}" \
            grep -q "hostbridge: web: running, no healthcheck, image ${img_after:0:12}" <<<"$REQ_OUT"
        request status
        check "status: the stack's own table, then a line per service from the engine" \
            eval '[ "$REQ_RC" -eq 0 ] && grep -q "^web " <<<"$REQ_OUT" && grep -q "^hostbridge: db: running" <<<"$REQ_OUT" && grep -q "^hostbridge: worker: running" <<<"$REQ_OUT"'
        follow_logs
        if [ "$mode" = systemd ]; then
            # rebuild runs in a scope of its own (docs/DECIDE-AND-RUN.md, "`rebuild`
            # runs in a scope too"): the new container's conmon is there, not in the
            # drain's unit.
            say "         web's new container: conmon in $(sed -n 's/^[0-9]*:name=systemd://p; s/^0:://p' \
                "/proc/$(conmon_pid web)/cgroup" 2>/dev/null | head -n 1)"
        fi
    else
        img_before=$(podman container inspect --format '{{.Image}}' "$(ctr web)" 2>/dev/null)
        request_engine rebuild web
        img_after=$(podman container inspect --format '{{.Image}}' "$(ctr web)" 2>/dev/null)
        # rebuild builds from a host-owned snapshot, then replaces web's
        # container alone (docs/BUILDS.md).
        check "rebuild web: exit 0, web's container runs the new image ${img_after:0:12} (was ${img_before:0:12}) and serves the change" \
            eval '[ "$REQ_RC" -eq 0 ] && [ -n "$img_after" ] && [ "$img_after" != "$img_before" ] && serves web | grep -q "rebuilt by the agent"'
        # The answer says how web settled, as the engine saw it (docs/COMPOSE.md,
        # "Verified outcomes"), not only the compose CLI's exit code.
        check "rebuild web: the answer says web settled, running ${img_after:0:12}" \
            grep -q "hostbridge: web: running, no healthcheck, image ${img_after:0:12}" <<<"$REQ_OUT"
        compose_loop
    fi

    if [ "$backend" = stack ]; then
        fact "rebuild web: built by the stack from a snapshot of the context, the container replaced and serving it"
    else
        fact "rebuild web: built from a snapshot of the context, web's container replaced and serving it"
    fi

    request logs api
    # With compose, install recorded the podman-compose flavour, whose logs
    # row has no --no-color (podman-compose 1.0.3 refuses it).
    check "logs api: the api's own log lines" eval '[ "$REQ_RC" -eq 0 ] && grep -q "api: listening" <<<"$REQ_OUT"'

    request exec
    check "exec: denied, exit 70 ($REQ_ERR)" eval '[ "$REQ_RC" -eq 70 ] && grep -q "denied: verb is never allowed" <<<"$REQ_ERR"'
    fact "exec: denied (never allowed, whatever the policy says)"

    gate_edit
    say "agent: edits compose.yaml (WORKER_INTERVAL_SECONDS default 3 -> 2), a file the bridge pinned"
    request restart api
    check "restart api: denied by the integrity gate, exit 70" \
        eval '[ "$REQ_RC" -eq 70 ] && grep -q "integrity gate" <<<"$REQ_ERR"'
    say "host\$ hostbridge approve --yes   (a person reviews the diff and approves it)"
    local out
    out=$(cd "$P" && hostbridge approve --yes 2>&1)
    local rc=$?
    printf '%s\n' "$out" | indent
    check "approve: exit 0, the diff shows the change" \
        eval '[ "$rc" -eq 0 ] && grep -q "WORKER_INTERVAL_SECONDS:-2" <<<"$out"'
    before=$(started_at api)
    request restart api
    check "restart api after approval: allowed, api restarted" \
        eval '[ "$REQ_RC" -eq 0 ] && [ "$(started_at api)" != "$before" ]'
    fact "the agent edited compose.yaml: every command refused by the integrity gate until a person ran 'hostbridge approve'"

    check "before join-network the agent cannot reach http://api:8080/" \
        eval '! in_agent "timeout 3 wget -q -O - http://api:8080/" >/dev/null 2>&1'
    request join-network
    check "join-network: exit 0" test "$REQ_RC" -eq 0
    local answer
    answer=$(in_agent 'timeout 5 wget -q -O - http://api:8080/' 2>&1)
    check "the agent reaches http://api:8080/ by name: $(tr -d '\n' <<<"$answer" | cut -c1-70)" \
        grep -q '"status":"ok"' <<<"$answer"
    check "with no host port published by api" \
        eval '[ -z "$(podman port "$(ctr api)" 2>/dev/null)" ]'
    fact "join-network: the agent container reached http://api:8080/ by name; no host port is open"

    # A person's rules in policy.conf (docs/DECIDE-AND-RUN.md, "Policy"): a
    # per-service rule refuses `restart db` while `restart api` runs, and
    # `down` under dry-run is checked and answered, never run. Edited in
    # place (same inode and owner), then put back byte for byte.
    local policy_file="$config_dir/policy.conf" policy_saved
    policy_saved=$(cat "$policy_file")
    { sed 's/^MODE_down=.*$/MODE_down=dry-run/' <<<"$policy_saved"; echo 'MODE_restart.db=deny'; } \
        >"$policy_file"
    say "host\$ the person sets MODE_down=dry-run and adds MODE_restart.db=deny to policy.conf"
    request restart db
    check "restart db: denied by the per-service rule, exit 70 ($REQ_ERR)" \
        eval '[ "$REQ_RC" -eq 70 ] && grep -q "MODE_restart.db=deny" <<<"$REQ_ERR"'
    before=$(started_at api)
    request restart api
    check "restart api: still allowed, api restarted" \
        eval '[ "$REQ_RC" -eq 0 ] && [ "$(started_at api)" != "$before" ]'
    request down
    check "down: a dry run, exit 70, says what would run ($REQ_ERR); web still serves" \
        eval '[ "$REQ_RC" -eq 70 ] && grep -q "dry run: would run" <<<"$REQ_ERR" && serves web >/dev/null'
    printf '%s\n' "$policy_saved" >"$policy_file"
    fact "policy: restart db refused by a per-service rule while restart api ran; down under dry-run answered what it would run, and nothing stopped"

    ask_session "$policy_file" "$policy_saved"
    [ "$backend" = stack ] && stack_cache_link

    # Mutating requests so far that used a slot: restart, the MCP restart,
    # the hostbridge-agent request restart, rebuild, the restart the
    # integrity gate refused (probing the gate is not free:
    # docs/DECIDE-AND-RUN.md), restart, join-network, restart api under the
    # per-service rule, the `down` a person allowed, the `up` after it, the
    # compose hand-over's `up` (handover_mutating); and
    # one more for each build held for a person (held_builds). The dry-run
    # `down`, the refused `restart db` and the held `down` the person denied
    # used none. The stack's hostile rebuild (stack_cache_link) took one
    # when its snapshot was taken.
    local used=$((10 + loop_mutating + handover_mutating + held_builds))
    [ "$backend" = stack ] && used=$((used + 1))
    local allowed=$((rate_count - used)) burst
    [ "$allowed" -ge 0 ] || allowed=0
    burst=$((allowed + 1))
    say "agent: $burst restarts at once (the limit is $rate_count mutating requests; $used used so far)"
    in_agent "i=0; while [ \$i -lt $burst ]; do i=\$((i + 1));
                  ( $client --timeout 60 restart api >/dev/null 2>/tmp/burst.\$i; echo \$? >/tmp/burst.\$i.rc ) &
              done; wait" >/dev/null 2>&1
    local done_n limited_n
    done_n=$(in_agent 'cat /tmp/burst.*.rc' | grep -cx 0)
    limited_n=$(in_agent 'cat /tmp/burst.*[0-9]' | grep -c 'denied: rate limited')
    in_agent 'cat /tmp/burst.*[0-9]' | sort | uniq -c | sed 's/^ */         /'
    check "burst: $done_n done, $limited_n denied 'rate limited' (exit 70)" \
        eval '[ "$done_n" -eq "$allowed" ] && [ "$limited_n" -eq 1 ]'
    fact "burst of $burst restarts: $done_n ran, $limited_n refused by the rate limit ($rate_limit for this run; the default is 60/600)"
    in_agent 'rm -f /tmp/burst.*'

    if [ "$mode" = systemd ]; then
        check "the oneshot exited again" wait_for 30 drain_idle
        local inv_last
        inv_last=$(unit_prop InvocationID)
        check "the .path unit fired the service again when requests came (invocation ${inv_first:0:12} -> ${inv_last:0:12}); no test loop, no watch" \
            eval '[ -n "$inv_last" ] && [ "$inv_last" != "$inv_first" ] && ! watch_running'
        check "the service never failed: $(unit_prop Result), exit status $(unit_prop ExecMainStatus)" \
            eval '[ "$(unit_prop Result)" = success ] && [ "$(unit_prop ExecMainStatus)" = 0 ]'
    fi
    check "after the drain exited: api, web, worker, db all running" \
        eval '[ "$(state_of api)$(state_of web)$(state_of worker)$(state_of db)" = runningrunningrunningrunning ]'
    check "api still serves" api_healthy
}

# Every step of the session is in the audit log, in order, and the chain verifies.
cmd_audit() {
    section "the audit log (host side, outside the agent's reach)"
    say "host\$ hostbridge audit"
    (cd "$P" && hostbridge audit) | indent
    local json
    json=$(cd "$P" && hostbridge audit --json)
    audited() { # EVENT VERB [REASON]: count matching lines
        grep '"event":"'"$1"'"' <<<"$json" | grep '"verb":'"$2" | grep -c "${3:-.}"
    }
    local -a expect=(
        'installed null . 1' 'succeeded "ping" . 1' 'succeeded "status" . 1'
        'succeeded "restart" . 3' 'succeeded "rebuild" . 1' 'succeeded "logs" . 1'
        'denied null never 1' 'denied "restart" integrity 1' 'approved null . 1'
        'succeeded "join-network" . 1' 'denied "restart" rate 1'
        'held "down" . 2' 'allowed "down" . 1' 'succeeded "down" . 1'
        'succeeded "up" . 1' 'denied "down" by.a.person 1')
    # up and rebuild went through a person where the seeded policy holds them.
    local v
    for v in up rebuild; do
        grep -qx "MODE_$v=ask" "$config_dir/policy.conf" &&
            expect+=("held \"$v\" . 1" "allowed \"$v\" . 1")
    done
    local e ev verb reason want got missing=""
    for e in "${expect[@]}"; do
        read -r ev verb reason want <<<"$e"
        got=$(audited "$ev" "$verb" "$reason")
        [ "$got" -ge "$want" ] || missing="$missing [$ev $verb $reason: $got < $want]"
    done
    check "the audit log holds every step of the session$missing" test -z "$missing"
    say "host\$ hostbridge audit --verify"
    local out
    out=$(cd "$P" && hostbridge audit --verify 2>&1)
    local rc=$?
    printf '%s\n' "$out" | indent
    check "the hash chain verifies" test "$rc" -eq 0
    fact "audit: $(grep -c . <<<"$json") events, every step recorded; hash chain verified"

    # What the person was told of the held requests, off the agent's reach
    # (the unit appends the drain's stderr to service.log).
    if [ "$mode" = systemd ]; then
        local told
        told=$(grep -c "held .* for a person: would run \\\$[A-Z].* stop" "$state_dir/service.log" 2>/dev/null)
        check "the service log told the person of both held downs ($(grep -m1 -o '[a-z ]*desktop notification[^;]*' "$state_dir/service.log" | sed 's/^ *//'))" \
            test "${told:-0}" -ge 2
    fi

    # A policy learned from this session's use (docs/ADMIN-TOOL.md).
    say "host\$ hostbridge policy suggest"
    out=$(cd "$P" && hostbridge policy suggest 2>&1)
    rc=$?
    grep '^MODE_' <<<"$out" | indent
    check "policy suggest: exit 0; down (which ran) is ask, never auto; restart api (the only one restarted) is auto" \
        eval '[ "$rc" -eq 0 ] && grep -qx "MODE_down=ask" <<<"$out" && grep -qx "MODE_restart.api=auto" <<<"$out"'
    fact "policy suggest: learned from the audit log, down suggested as ask"
}

# ------------------------------------------------------------------ teardown

cmd_teardown() {
    local pid
    if [ -f "$watch_pidfile" ]; then
        pid=$(cat "$watch_pidfile")
        # Only the watcher this script started: its PID, checked by command line.
        if [ -n "$pid" ] && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "hostbridge-executor watch"; then
            kill -TERM "$pid" 2>/dev/null
            for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        fi
        rm -f "$watch_pidfile"
    fi
    podman rm -f -t 0 "$agent" >/dev/null 2>&1
    podman rm -f -t 0 "$mcp_ctr" >/dev/null 2>&1
    podman rm -f -t 0 "$mcp_ctr-probe" >/dev/null 2>&1
    podman network rm -f "$agent_net" >/dev/null 2>&1
    if [ -x "$P/stack" ]; then
        # Everything either backend made for this project: containers,
        # networks, the volume, images (the agent's too: it has the label).
        "$P/stack" purge >/dev/null 2>&1 || echo "teardown: stack purge failed" >&2
    fi
    podman rmi -f "$agent_img" >/dev/null 2>&1
    podman rmi -f "$mcp_img" >/dev/null 2>&1
    true
}

# ------------------------------------------------------------------ main

mkdir -p "$run_dir" 2>/dev/null
# Interrupted: stop at once; the caller's teardown removes what was made.
[ "$cmd" = teardown ] || trap 'echo "interrupted"; exit 130' INT TERM HUP
case $cmd in
    setup)
        cmd_setup
        [ "$failures" -eq 0 ]
        exit $?
        ;;
    teardown)
        cmd_teardown
        exit 0
        ;;
esac

cmd_setup
cmd_session
cmd_audit
section "summary ($(secs $(($(now_ms) - t_start / 1000000))))"
for f in "${facts[@]}"; do say "- $f"; done
if [ "$failures" -eq 0 ]; then
    say "every check passed"
else
    say "$failures check(s) FAILED"
fi
[ "$failures" -eq 0 ]
