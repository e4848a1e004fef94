#!/bin/bash
# engine_user.sh BIN_DIR: the engine as its own identity (docs/ENGINE-USER.md,
# issue 30) on real users and a real rootless podman service. As root:
#  1. a throwaway person installs a compose project (podman-compose, an
#     agent container and network for join-network), then root runs
#     `hostbridge engine setup`, which creates the engine user, writes its
#     units and re-runs the person's install with --engine-user; run again,
#     it changes nothing; a user it did not create is refused;
#  2. the engine user's own systemd --user manager (tools/e2e/usermgr.sh)
#     starts hostbridge-engine.socket; the person's drain (`hostbridge-executor
#     watch`) answers up, restart, status, health, down, logs and join-network through the
#     socket: the containers are the engine user's, none is the person's;
#     rebuild builds through the socket and goes live, after the base
#     images' ONBUILD triggers were read from the engine's own store (saved
#     through the socket, read in the sandbox); an image with a trigger
#     there refuses the build, naming it; a Containerfile or a context
#     entry linked to ~person/.ssh is refused before the client (the
#     person's own podman) could read it;
#  3. the socket keeps the person's access across a restart of the service
#     and of the socket (its ACL is granted after every start);
#  4. hostile engine steps, each tried in both postures: a build whose
#     bind mount climbs to the person's home through a link, a container
#     binding ~person/.ssh and the bridge's config dir, and an escaped
#     process (a shell as the engine's identity) reading the key, writing
#     bridge.json and the audit log, opening the person's runtime dir. As
#     the engine user every attempt fails; as the person (the same-user
#     posture) the same attempts succeed, so the test is shown to attack;
#  5. `hostbridge engine remove` re-runs the install without it and deletes
#     the user; tools/e2e/leftovers.sh finds nothing of the run.
# Exit 77, reason printed, where podman, podman-compose, setfacl, a static
# busybox or a user manager is missing.
set -uo pipefail

[ $# -ge 1 ] || { echo "usage: engine_user.sh BIN_DIR" >&2; exit 64; }
skip() {
    echo "SKIP: $*"
    exit 77
}
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
here=$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")
repo=$(readlink -f -- "$here/../..")
# shellcheck source=tests/e2e/verdicts.sh
. "$here/verdicts.sh"

# ------------------------------------------------------------------ phase 2-4, inside the engine's manager

if [ "${1:-}" = --inner ]; then
    shift
    stage=$1 person=$2 engine=$3 slug=$4 name=$5
    phome=$(getent passwd "$person" | cut -d: -f6)
    ehome=$(getent passwd "$engine" | cut -d: -f6)
    puid=$(id -u "$person")
    P=$phome/$name
    pname=$(compose_project_of "$P") # the compose project install names
    socket=$ehome/engine/podman.sock
    config=$phome/.config/hostbridge/$slug/bridge.json
    audit=$phome/.local/state/hostbridge/$slug/audit.jsonl
    # /run/user is this namespace's tmpfs: the person's runtime dir is made here.
    install -d -o "$person" -g "$person" -m 0700 "/run/user/$puid"
    as_person() {
        setpriv --reuid="$person" --regid="$person" --init-groups -- env -i PATH="$PATH" \
            HOME="$phome" USER="$person" LOGNAME="$person" XDG_RUNTIME_DIR="/run/user/$puid" "$@"
    }
    remote() { as_person env CONTAINER_HOST="unix://$socket" podman "$@"; }
    as_engine() { "$stage/tools/e2e/usermgr.sh" as-user -- "$@"; }

    # The socket file appears when systemd binds it, the person's ACL only
    # after ExecStartPost ran: the unit's being active says both are done.
    # 600 s is a hang guard for a loaded machine, not a duration under test.
    socket_active() { [ "$(as_engine systemctl --user is-active hostbridge-engine.socket 2>/dev/null)" = active ]; }
    for _ in $(seq 3000); do socket_active && break; sleep 0.2; done
    check "the engine's manager started hostbridge-engine.socket ($socket)" eval 'socket_active && test -S "$socket"'
    acl=$(getfacl -p "$socket" 2>/dev/null | grep "^user:$person:")
    check "the socket's ACL lets $person read and write it ($acl)" test "$acl" = "user:$person:rw-"
    check "$person reaches the engine user's podman through it" eval 'remote info --format "{{.Host.Security.Rootless}}" >/dev/null'
    check "no other user can: the socket is 0600 with only $person named (others: $(stat -c %A "$socket"))" \
        test "$(stat -c %a "$socket")" = 660 -o "$(stat -c %a "$socket")" = 600

    # doctor, as the person: which identity runs the engine, and what of
    # the person's home it can read (docs/ENGINE-USER.md, "Your home").
    hmode=$(stat -c %a "$phome")
    chmod 0711 "$phome"
    doc=$(as_person "$stage/bin/hostbridge" doctor --slug "$slug" 2>&1)
    check "doctor: the engine runs as $engine ($(grep -m1 'engine runs as' <<<"$doc"))" \
        eval '[[ $doc == *"ok:      the engine runs as $engine, through $socket"* ]]'
    line=$(grep -m1 "can pass your home" <<<"$doc")
    check "doctor, home 0711: $engine can pass it, and what it reads is named, ~/.ssh not ($line)" \
        eval '[[ $line == WARNING:*"$engine can pass your home $phome"*"$name/ ("* ]] && [[ $line != *".ssh"* ]]'
    chmod 0700 "$phome"
    doc=$(as_person "$stage/bin/hostbridge" doctor --slug "$slug" 2>&1)
    check "doctor, home 0700: $engine cannot pass it" \
        eval '[[ $doc == *"ok:      $engine cannot pass your home $phome"* ]]'
    chmod "$hmode" "$phome"
    # web binds ./data, which the engine user resolves by path: it needs to
    # pass the directories above it (docs/ENGINE-USER.md, "Bind sources").
    setfacl -m "u:$engine:x" "$phome" "$P"

    # The image and the agent's container live in the engine's storage.
    out=$(remote build -q -t "localhost/$name:1" "$stage/engine-img" 2>&1) || die "build of the image through the socket: $out"
    out=$(remote network create "$name-agent-net" 2>&1) || die "network create: $out"
    out=$(remote run -d --init --network "$name-agent-net" --name "$name-agent" "localhost/$name:1" 2>&1) ||
        die "agent container: $out"
    # The same image in the person's own store, for the same-user posture.
    out=$(as_person env CONTAINERS_CONF="$stage/examples/demo-app/containers.conf" podman build -q \
        -t "localhost/$name:1" "$stage/engine-img" 2>&1) || die "build in $person's own store: $out"

    as_person "$phome/.local/lib/hostbridge/$slug/hostbridge-executor" watch --config "$config" \
        </dev/null >>"/tmp/$name-watch.log" 2>&1 &
    watch=$!
    request() { # VERB [ARG]: REQ_RC, REQ_OUT, RESP
        REQ_OUT=$(as_person "$P/untracked/hostbridge/request" --timeout 300 "$@" 2>&1)
        REQ_RC=$?
        RESP=$(cat "$(ls -t "$P"/untracked/hostbridge/responses/*.json | head -n 1)")
    }
    q() { python3 -c 'import json,sys; r=json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$RESP" "$1" 2>&1; }
    # up is held for a person here: web's bind is accepted unpinned
    # (common/engine_hold.cpp). The person allows what `pending` shows.
    request_up() { # REQ_RC, REQ_OUT, RESP, HELD (the name pending listed)
        as_person "$P/untracked/hostbridge/request" --timeout 300 up >"/tmp/$name-up.out" 2>&1 &
        local client=$! listed="" digest
        HELD=""
        for _ in $(seq 3000); do # 300 s: a hang guard
            listed=$(as_person "$stage/bin/hostbridge" pending --slug "$slug" 2>/dev/null)
            HELD=$(sed -n 's/^request: *//p' <<<"$listed" | head -n 1)
            [ -n "$HELD" ] && break
            sleep 0.1
        done
        digest=$(awk -v n="$HELD" '$1 == "request:" && $2 == n { getline; if ($1 == "digest:") print $2 }' <<<"$listed")
        as_person "$stage/bin/hostbridge" allow --slug "$slug" "$HELD" "$digest" >/dev/null 2>&1
        wait "$client"
        REQ_RC=$?
        REQ_OUT=$(cat "/tmp/$name-up.out")
        RESP=$(cat "$(ls -t "$P"/untracked/hostbridge/responses/*.json | head -n 1)")
    }

    request_up
    check "up is held for a person (a bind accepted unpinned: ${HELD:-never listed by pending})" test -n "$HELD"
    check "up through the socket, once allowed: done (rc $REQ_RC, $(q 'r["state"]'))" test "$REQ_RC" -eq 0
    [ "$REQ_RC" -eq 0 ] || printf '%s\n' "$REQ_OUT" | tail -n 20
    web=${pname}_web_1
    check "web's container is the engine user's" eval 'remote container exists "$web"'
    check "and not the person's own (their own podman has no such container)" \
        eval '! as_person podman container exists "$web" 2>/dev/null'
    owner=$(ps -o user= -p "$(remote inspect --format '{{.State.Pid}}' "$web")" 2>/dev/null)
    check "web runs as the engine's identity, not as $person (process owner: ${owner:-none})" \
        eval '[ -n "$owner" ] && [ "$owner" != "$person" ] && [ "$owner" != root ]'
    before=$(remote inspect --format '{{.State.StartedAt}}' "$web")
    request restart web
    after=$(remote inspect --format '{{.State.StartedAt}}' "$web")
    check "restart web: done, and the container restarted ($before -> $after)" \
        eval '[ "$REQ_RC" -eq 0 ] && [ "$after" != "$before" ]'
    request status
    check "status: done, web ok ($(q '[s["settled"] for s in r["services"] or []]'))" \
        eval '[ "$REQ_RC" -eq 0 ] && [ "$(q "[s[\"settled\"] for s in r[\"services\"]]")" = "['"'"'ok'"'"']" ]'
    request health
    check "health: done, web runs ($(q 'r["state"]'))" test "$REQ_RC" -eq 0
    request down
    check "down (compose stop) through the socket: done, web's container stopped" \
        eval '[ "$REQ_RC" -eq 0 ] && [ "$(remote inspect --format "{{.State.Running}}" "$web")" = false ]'
    request_up
    check "up again (allowed): done, web running" \
        eval '[ "$REQ_RC" -eq 0 ] && [ "$(remote inspect --format "{{.State.Running}}" "$web")" = true ]'
    request ping
    check "ping: done" test "$REQ_RC" -eq 0
    request logs web
    check "logs web: done, with web's marker line" eval '[ "$REQ_RC" -eq 0 ] && [[ $REQ_OUT == *ENGINE-WEB-UP* ]]'
    request join-network
    nets=$(remote inspect --format '{{range $k, $v := .NetworkSettings.Networks}}{{$k}} {{end}}' "$name-agent")
    check "join-network: done, the agent's container joined ${pname}_default ($nets)" \
        eval '[ "$REQ_RC" -eq 0 ] && [[ " $nets" == *" ${pname}_default "* ]]'
    [ "$REQ_RC" -eq 0 ] || printf '%s\n' "$REQ_OUT" | tail -n 10
    # An image with a trigger in the engine's store refuses every build;
    # removed, the build runs, and web runs the new image.
    out=$(remote build -q --format docker -t "localhost/$name-trigger:1" "$stage/trigger-img" 2>&1) ||
        die "the trigger image: $out"
    trigger_id=$(remote image inspect --format '{{.Id}}' "localhost/$name-trigger:1" | cut -c 1-12)
    request rebuild web
    check "rebuild with a trigger image in the engine's store: refused, naming it ($(q 'r["reason"]' | head -c 160))" \
        eval '[ "$REQ_RC" -ne 0 ] && [[ $(q "r[\"reason\"]") == *"image $trigger_id on this host has 1 ONBUILD trigger"* ]]'
    remote rmi "localhost/$name-trigger:1" >/dev/null 2>&1
    image_before=$(remote inspect --format '{{.Image}}' "$web")
    request rebuild web
    image_after=$(remote inspect --format '{{.Image}}' "$web")
    check "rebuild web through the socket: done, web runs the new image (${image_before:0:12} -> ${image_after:0:12})" \
        eval '[ "$REQ_RC" -eq 0 ] && [ -n "$image_after" ] && [ "$image_after" != "$image_before" ]'
    [ "$REQ_RC" -eq 0 ] || printf '%s\n' "$REQ_OUT" | tail -n 20
    check "the new image is the engine user's, not in $person's own store" \
        eval '! as_person env CONTAINERS_CONF="$stage/examples/demo-app/containers.conf" podman image exists "$image_after"'
    # The podman client still runs as the person: it is handed the snapshot
    # only, and a link out of the context never becomes part of one.
    as_person sh -c "cd '$P' && mv Containerfile Containerfile.real && ln -s '$phome/.ssh/id_ed25519' Containerfile"
    request rebuild web
    check "a Containerfile linked to ~/.ssh/id_ed25519: refused before the client reads it ($(q 'r["reason"]' | head -c 140))" \
        eval '[ "$REQ_RC" -ne 0 ] && [[ $(q "r[\"reason\"]") == *"outside the context"* ]]'
    as_person sh -c "cd '$P' && rm Containerfile && mv Containerfile.real Containerfile && ln -s '$phome/.ssh' keys"
    request rebuild web
    check "a context entry linked to ~/.ssh: refused ($(q 'r["reason"]' | head -c 140))" \
        eval '[ "$REQ_RC" -ne 0 ] && [[ $(q "r[\"reason\"]") == *"outside the context"* ]]'
    as_person rm -f "$P/keys"
    check "no saved image is left in the run dir" \
        eval '! ls -d "$phome"/.cache/hostbridge/run/"$slug"/.hostbridge-build/.image-config 2>/dev/null'

    # 3: the person's access survives restarts of the service and the socket.
    as_engine systemctl --user restart hostbridge-engine.service
    request status
    check "after a restart of the service: status done" test "$REQ_RC" -eq 0
    as_engine systemctl --user stop hostbridge-engine.service hostbridge-engine.socket
    as_engine systemctl --user start hostbridge-engine.socket
    request status
    check "after the socket was made anew: status done (ACL $(getfacl -p "$socket" 2>/dev/null | grep "^user:$person:"))" \
        test "$REQ_RC" -eq 0

    # 4: hostile engine steps, in both postures. The key and the bridge's
    # files are the person's; "same user" runs each step as the person.
    key=$phome/.ssh/id_ed25519
    escape() { # WHO: the attempts an escaped engine process makes; prints what it reached
        local who=$1 run
        if [ "$who" = engine ]; then run=(as_engine); else run=(as_person); fi
        "${run[@]}" sh -c "cat '$key' 2>/dev/null | grep -q KEY-$name && echo read-key
            echo evil >>'$config' 2>/dev/null && echo wrote-config
            echo '{}' >>'$audit' 2>/dev/null && echo wrote-audit
            ls /run/user/$puid >/dev/null 2>&1 && echo opened-runtime-dir" 2>/dev/null | tr '\n' ' '
    }
    cp -p "$config" "/tmp/$name-config" && cp -p "$audit" "/tmp/$name-audit"
    reached=$(escape engine)
    check "an escaped process as the engine user reaches nothing of $person's (reached: '${reached}')" test -z "$reached"
    reached=$(escape person)
    check "the same attempts as $person (same-user posture) reach all four ('$reached')" \
        test "$reached" = "read-key wrote-config wrote-audit opened-runtime-dir "
    cp -p "/tmp/$name-config" "$config" && cp -p "/tmp/$name-audit" "$audit"

    # An escape as the engine user owns ~/engine: it puts a link to the
    # person's own podman API socket (Podman Desktop, podman.socket) where
    # its socket was. The person's podman client, given that name, reaches
    # the person's own engine (the control); the drain connects only to the
    # socket it opened without following a link, owned by the engine user
    # (common/engine_socket.hpp): refused, and doctor names it.
    own=/run/user/$puid/podman/hb-own.sock
    as_person mkdir -p "/run/user/$puid/podman"
    # --time: it ends by itself too; rootless podman re-executes itself, so
    # the pid below is not the service's (pkill below), and a service left
    # running would hold whatever fds this script inherited.
    as_person podman system service --time=60 "unix://$own" >/dev/null 2>&1 &
    own_svc=$!
    for _ in $(seq 300); do [ -S "$own" ] && break; sleep 0.1; done
    as_engine sh -c "mv '$socket' '$socket.real' && ln -s '$own' '$socket'"
    root=$(as_person env CONTAINER_HOST="unix://$socket" podman info --format '{{.Store.GraphRoot}}' 2>&1)
    check "control: through the linked name, $person's podman client reaches $person's own engine ($root)" \
        eval '[[ $root == "$phome"/* ]]'
    request restart web
    check "restart web with the engine's socket a link to $person's own: refused, naming it ($(q 'r.get("reason","")' | head -c 140))" \
        eval '[ "$REQ_RC" -ne 0 ] && [[ $(q "r.get(\"reason\",\"\")") == *"is a link, which the bridge never follows"* ]]'
    doc=$(as_person "$stage/bin/hostbridge" doctor --slug "$slug" 2>&1)
    check "doctor names the link as a problem" eval '[[ $doc == *"PROBLEM"*"is a link, which the bridge never follows"* ]]'
    as_engine sh -c "rm '$socket' && mv '$socket.real' '$socket'"
    kill "$own_svc" 2>/dev/null
    pkill -u "$person" -f "podman system service --time=60 unix://$own" 2>/dev/null
    wait "$own_svc" 2>/dev/null
    request status
    check "the socket back: status done" test "$REQ_RC" -eq 0

    # A build whose bind mount climbs to the person's home through a link
    # in its context, and a container binding the key's and the bridge's dirs.
    ctx=$phome/$name-hostile
    read_build() { # podman ARGS...: the key's text if the build printed it
        "$@" build --no-cache -f "$ctx/Containerfile" "$ctx" 2>&1 | grep -c "KEY-$name"
    }
    n=$(read_build remote)
    check "through the engine: a build's bind mount aimed at ~$person/.ssh reads nothing ($n lines)" test "$n" -eq 0
    n=$(read_build as_person env CONTAINERS_CONF="$stage/examples/demo-app/containers.conf" podman)
    check "the same build on $person's own podman reads the key ($n lines)" test "$n" -ge 1
    cdir=$(dirname "$config")
    bind() { # podman ARGS...: what a container binding the two dirs reached
        "$@" run --rm -v "$phome/.ssh:/k" -v "$cdir:/c" "localhost/$name:1" \
            sh -c "cat /k/id_ed25519 2>/dev/null | grep -q KEY-$name && echo read-key; echo x >>/c/bridge.json 2>/dev/null && echo wrote-config" 2>/dev/null | tr '\n' ' '
    }
    got=$(bind remote)
    check "through the engine: a container binding ~/.ssh and the config dir reaches neither ('$got')" test -z "$got"
    got=$(bind as_person env CONTAINERS_CONF="$stage/examples/demo-app/containers.conf" podman)
    check "the same container on $person's own podman reads the key and writes bridge.json ('$got')" \
        test "$got" = "read-key wrote-config "
    cp -p "/tmp/$name-config" "$config"

    # web's bind source ./data is accepted unpinned. The agent swaps it for
    # a link as the engine starts (the engine's wrapper, armed with the
    # link's target: restart is the engine's own restart, docs/ARGV-TABLE.md,
    # and engine setup re-ran install with a fixed PATH, so bridge.json's
    # settle.engine is pointed at the wrapper for this request alone).
    # restart runs unattended: to the person's ~/.ssh, the
    # engine user's container reads no key, while the person's own podman,
    # given the same path, reads it. up waits for a person: podman-compose,
    # run as the person, makes the directories a swapped source names
    # (measured by hand below, as the drain would run it).
    request down
    settle_engine() { python3 - "$config" "$1" <<'PY'
import json, sys
path, engine = sys.argv[1], sys.argv[2]
with open(path) as f:
    c = json.load(f)
old = c["settle"]["engine"]
c["settle"]["engine"] = engine
with open(path, "r+") as f:
    f.truncate(0)
    json.dump(c, f, indent=2)
print(old)
PY
    }
    rewatch() { # the watch reads bridge.json when it starts: the old one ended first
        local running="hostbridge-executor watch --config $config"
        pkill -TERM -u "$person" -f "$running"
        for _ in $(seq 300); do pgrep -u "$person" -f "$running" >/dev/null || break; sleep 0.1; done
        ! pgrep -u "$person" -f "$running" >/dev/null || die "the watch did not end"
        as_person "$phome/.local/lib/hostbridge/$slug/hostbridge-executor" watch --config "$config" \
            </dev/null >>"/tmp/$name-watch.log" 2>&1 &
        watch=$!
    }
    engine_was=$(settle_engine "$stage/racebin/podman")
    rewatch
    printf '%s' "$phome/.ssh" >"$stage/race-armed"
    REQ_OUT=$(as_person "$P/untracked/hostbridge/request" --timeout 120 restart web 2>&1)
    rm -f "$stage/race-armed"
    settle_engine "$engine_was" >/dev/null
    rewatch
    RESP=$(cat "$(ls -t "$P"/untracked/hostbridge/responses/*.json | head -n 1)")
    state=$(q 'r["state"]')
    seen=$(remote exec "$web" cat /data/id_ed25519 2>&1)
    swapped=$(test -L "$P/data" && echo swapped)
    check "restart with ./data swapped for a link to ~/.ssh as the engine starts (${swapped:-not swapped}): answered unattended ($state), no key in the answer or the container (it saw: ${seen:0:80})" \
        eval '[ "$swapped" = swapped ] && [[ $state == done || $state == failed ]] && [[ $REQ_OUT$RESP$seen != *KEY-$name* ]]'
    n=$(as_person env CONTAINERS_CONF="$stage/examples/demo-app/containers.conf" podman run --rm \
        -v "$P/data:/data" "localhost/$name:1" cat /data/id_ed25519 2>&1 | grep -c "KEY-$name")
    check "the same bind on $person's own podman reads the key ($n lines)" test "$n" -ge 1
    as_person sh -c "cd '$P' && rm data && mv data.real data"
    # A held request keeps its client waiting until it expires: sent
    # without waiting, its answer read once the drain decided. A drain
    # first answers `queued` (docs/PROTOCOL.md), which a loaded machine
    # showed here (CI): only a state past queued and running is read.
    held=$(as_person "$P/untracked/hostbridge/request" --no-wait up 2>/dev/null | tail -n 1)
    for _ in $(seq 3000); do # 300 s: a hang guard, not a duration under test
        RESP=$(cat "$P/untracked/hostbridge/responses/$held.response.json" 2>/dev/null) &&
            [[ $(q 'r["state"]') != queued && $(q 'r["state"]') != running ]] && break
        sleep 0.1
    done
    check "up with a bind accepted unpinned: held for a person ($(q 'r["state"]'))" \
        test "$(q 'r["state"]')" = pending
    made=$phome/$name-made/by/compose
    printf '%s' "$made" >"$stage/race-armed"
    as_person sh -c "cd '$P' && CONTAINER_HOST=unix://$socket '$stage/racebin/podman-compose' -p '$pname' up -d" \
        >/dev/null 2>&1
    rm -f "$stage/race-armed"
    check "why: podman-compose up with ./data swapped for a link to a path that is not there makes it, as $person ($(stat -c %U "$made" 2>&1))" \
        test "$(stat -c %U "$made" 2>/dev/null)" = "$person"
    as_person sh -c "cd '$P' && if [ -L data ]; then rm data && mv data.real data; fi; rm -rf '$phome/$name-made'"

    kill -TERM "$watch" 2>/dev/null
    wait "$watch" 2>/dev/null
    ids=$(remote ps -aq 2>/dev/null)
    # shellcheck disable=SC2086 # a list of ids
    [ -z "$ids" ] || remote rm -f -t 0 $ids >/dev/null 2>&1
    remote network rm -f "$name-agent-net" >/dev/null 2>&1
    remote network rm -f "${pname}_default" >/dev/null 2>&1
    rm -f "/tmp/$name-config" "/tmp/$name-audit" "/tmp/$name-watch.log" "/tmp/$name-up.out"
    [ "$failures" -eq 0 ]
    exit
fi

# ------------------------------------------------------------------ phase 1 and 5, as root

bin=$(readlink -f -- "$1")
# ctest starts this in the build tree, which CI's 0700 checkout (.ci/run)
# closes to the throwaway users; podman, run as them, fails to chdir there.
# usermgr.sh runs phase 2-4 in this working directory too.
cd / || exit 1
[ "$(id -u)" -eq 0 ] || skip "needs root (it creates two users)"
for tool in podman podman-compose setfacl getfacl setpriv python3; do
    command -v "$tool" >/dev/null || skip "$tool is not installed"
done
busybox=$(command -v busybox) || skip "busybox is not installed"
[[ $(LC_ALL=C ldd "$busybox" 2>&1) == *"not a dynamic executable"* ]] || skip "$busybox is not statically linked"
"$repo/tools/e2e/usermgr.sh" check || exit 77

t_start=$(date +%s)
name=hb-e2e-en$$
person=hb-e2e-en$$p
engine=hb-e2e-en$$e
slug=hbeng$$
stage=/tmp/$name-stage
cleanup() {
    "$stage/bin/hostbridge" engine remove --slug "$slug" --user "$person" --name "$engine" >/dev/null 2>&1
    "$repo/tools/e2e/testuser.sh" delete "$engine" >/dev/null 2>&1
    "$repo/tools/e2e/testuser.sh" delete "$person" >/dev/null 2>&1
    rm -f "/var/lib/hostbridge/engine-users/$engine"
    rm -rf -- "$stage" "/tmp/$name-watch.log" "/tmp/$name-config" "/tmp/$name-audit" "/tmp/$name-up.out"
}
trap cleanup EXIT
trap 'echo interrupted; exit 130' INT TERM HUP

"$repo/tools/e2e/stage.sh" "$stage" "$bin" || die "stage"
phome=$("$repo/tools/e2e/testuser.sh" create "$person") || exit $?
P=$phome/$name
pname=$(compose_project_of "$P") # the compose project install names
as_person() {
    setpriv --reuid="$person" --regid="$person" --init-groups -- env -i PATH="$PATH" \
        HOME="$phome" USER="$person" LOGNAME="$person" "$@"
}

# The image's rootfs, a marker web prints, and a hostile build context
# whose link `h` names the person's home.
mkdir -p "$stage/engine-img/rootfs/bin"
cp "$busybox" "$stage/engine-img/rootfs/bin/busybox"
for applet in sh sleep cat echo grep; do ln -s busybox "$stage/engine-img/rootfs/bin/$applet"; done
printf 'FROM scratch\nCOPY rootfs/ /\nCMD ["/bin/sleep", "100000"]\n' >"$stage/engine-img/Containerfile"
chmod -R go+rX "$stage/engine-img"
as_person sh -c "mkdir -p ~/.ssh $P $phome/$name-hostile/rootfs && chmod 0700 ~/.ssh &&
    echo KEY-$name >~/.ssh/id_ed25519 && chmod 0600 ~/.ssh/id_ed25519 &&
    cp -R '$stage/engine-img/rootfs/bin' $phome/$name-hostile/rootfs/ && ln -s '$phome' $phome/$name-hostile/h" ||
    die "the person's files"
printf 'FROM scratch\nCOPY rootfs/ /\nRUN --mount=type=bind,source=h,target=/h cat /h/.ssh/id_ed25519 || true\n' |
    as_person sh -c "cat >$phome/$name-hostile/Containerfile"
as_person sh -c "cat >$P/compose.yaml" <<EOF
services:
  web:
    image: localhost/$name:1
    init: true
    build:
      context: .
      dockerfile: Containerfile
    command: ["/bin/sh", "-c", "echo ENGINE-WEB-UP; exec sleep 100000"]
    volumes:
      - ./data:/data
EOF
as_person sh -c "mkdir -p $P/data && echo DATA-$name >$P/data/marker" || die "the bind source"
printf 'FROM localhost/%s:1\nRUN echo rebuilt >/rebuilt\n' "$name" | as_person sh -c "cat >$P/Containerfile"
# The compose CLI install records: the real one, after the agent's swap of
# ./data for a link to the path the armed file names (phase 4;
# tests/e2e/bind_pin_attack.sh races the same way).
mkdir -p "$stage/racebin"
cat >"$stage/racebin/swap" <<EOF
if [ -e $stage/race-armed ]; then mv $P/data $P/data.real && ln -s "\$(cat $stage/race-armed)" $P/data; fi
EOF
cat >"$stage/racebin/podman-compose" <<EOF
#!/bin/sh
case " \$* " in *" restart "* | *" up "* | *" start "*) . $stage/racebin/swap ;; esac
exec /usr/bin/podman-compose "\$@"
EOF
cat >"$stage/racebin/podman" <<EOF
#!/bin/sh
case " \$* " in *" restart "*) . $stage/racebin/swap ;; esac
exec /usr/bin/podman "\$@"
EOF
chmod 0755 "$stage/racebin" "$stage/racebin/podman-compose" "$stage/racebin/podman"
mkdir -p "$stage/trigger-img"
printf 'FROM localhost/%s:1\nONBUILD RUN echo TRIGGERED\n' "$name" >"$stage/trigger-img/Containerfile"
chmod -R go+rX "$stage/trigger-img"
as_person sh -c "cd $P && git init -q . && git add -A && git -c user.email=t@example.invalid -c user.name=t commit -qm app" ||
    die "git init of $P"
out=$(as_person "$stage/bin/hostbridge" install --project-dir "$P" --backend compose --compose-file compose.yaml \
    --compose-cmd "$stage/racebin/podman-compose" --slug "$slug" --agent-container "$name-agent" --network "${pname}_default" \
    --rate-limit 1000/600 --read-rate-limit 1000/60 --unpinned-bind data --no-systemd 2>&1) ||
    die "install as $person: $out"
# install asked the person's own podman which containers carry the project's
# name (admin/commands/install.cpp): its first podman call here, outside the
# namespace whose /run/user the session gives the person, so podman's store
# recorded run dirs the session cannot use (its builds then failed "mkdir
# /run/user/...: permission denied"). The store starts again, empty as it
# was; a person's login session has one runtime dir throughout.
rm -rf "$phome/.local/share/containers" "/tmp/containers-user-$(id -u "$person")" \
    "/tmp/podman-run-$(id -u "$person")"
policy=$phome/.config/hostbridge/$slug/policy.conf
sed -i 's/=ask$/=auto/' "$policy"

# 1: setup, twice, and a user it did not make.
out=$("$stage/bin/hostbridge" engine setup --slug "$slug" --user "$person" --name "$engine" \
    --containers-conf "$stage/examples/demo-app/containers.conf" 2>&1)
rc=$?
check "engine setup: exit 0, every step printed" eval '[ "$rc" -eq 0 ] && [[ $out == *"engine: run: "*useradd* ]] && [[ $out == *"re-running $person"* ]]'
[ "$rc" -eq 0 ] || printf '%s\n' "$out" | tail -n 30
ehome=$(getent passwd "$engine" | cut -d: -f6)
check "bridge.json names the engine user, its socket and the installed relay" python3 -c '
import json, os, sys
p = sys.argv[1]
e = json.load(open(p))["engine"]
relay = os.path.dirname(p).replace("/.config/", "/.local/lib/") + "/hostbridge-engine-relay"
assert e == {"user": sys.argv[2], "socket": sys.argv[3] + "/engine/podman.sock", "relay": relay}, e
assert os.access(relay, os.X_OK), relay' \
    "$phome/.config/hostbridge/$slug/bridge.json" "$engine" "$ehome"
check "the engine's home is closed to all but $person, who may only pass it ($(getfacl -p "$ehome" 2>/dev/null | grep "^user:$person"))" \
    eval 'facl=$(getfacl -p "$ehome") && grep -qx "user:$person:--x" <<<"$facl" &&
          grep -qx "group::---" <<<"$facl" && grep -qx "other::---" <<<"$facl"'
check "its units are there, the socket enabled" \
    test -L "$ehome/.config/systemd/user/sockets.target.wants/hostbridge-engine.socket"
again=$("$stage/bin/hostbridge" engine setup --slug "$slug" --user "$person" --name "$engine" \
    --containers-conf "$stage/examples/demo-app/containers.conf" 2>&1)
check "engine setup again: exit 0, the user reused, the install unchanged" \
    eval '[[ $again == *"user $engine exists"* ]] && [[ $again == *"nothing changed"* ]]'
out=$("$stage/bin/hostbridge" engine setup --slug "$slug" --user "$person" --name "$person" 2>&1)
check "the person as their own engine user is refused" eval '[[ $out == *"must not be the person"* ]]'
out=$("$stage/bin/hostbridge" engine setup --slug "$slug" --user "$person" --name nobody 2>&1)
check "setup refuses a user it did not create ($(tail -n 1 <<<"$out" | head -c 120))" \
    eval '[[ $out == *"was not created by \`hostbridge engine setup\`"* ]]'
out=$("$stage/bin/hostbridge" engine remove --slug "$slug" --user "$person" --name nobody 2>&1)
check "remove refuses a user it did not create ($(tail -n 1 <<<"$out" | head -c 120))" \
    eval '[[ $out == *"was not created by \`hostbridge engine setup\`"* ]] && getent passwd nobody >/dev/null'

# 2-4: inside the engine user's own manager.
"$stage/tools/e2e/usermgr.sh" run --name "$name-mgr" --as root "$engine" -- \
    "$stage/tests/e2e/engine_user.sh" --inner "$stage" "$person" "$engine" "$slug" "$name"
rc=$?
check "the session through the engine's socket (above)" test "$rc" -eq 0

# 5: remove.
out=$("$stage/bin/hostbridge" engine remove --slug "$slug" --user "$person" --name "$engine" 2>&1)
rc=$?
check "engine remove: exit 0, the user gone, bridge.json has no engine" \
    eval '[ "$rc" -eq 0 ] && ! getent passwd "$engine" >/dev/null &&
          python3 -c "import json,sys; sys.exit(1 if \"engine\" in json.load(open(sys.argv[1])) else 0)" \
              "$phome/.config/hostbridge/$slug/bridge.json"'
[ "$rc" -eq 0 ] || printf '%s\n' "$out" | tail -n 20

trap - EXIT
cleanup
finish_e2e "$name" "$(($(date +%s) - t_start)) s"
