#!/bin/bash
# build_attacks.sh BIN_DIR: `rebuild` builds from a host-owned snapshot whose
# Containerfile was screened in the sandbox (docs/BUILDS.md), against the
# real podman, buildah and podman-compose of Debian 12, driven by the real
# installed executor (`hostbridge install --backend compose`, then a
# `hostbridge-executor watch` this script starts; no systemd). Issue 27.
#
# A two-service project (app builds from ./app, db from ./db; app
# depends_on db; a busybox image, nothing pulled). A "secret" directory
# outside the checkout stands for the host user's home: the agent wins if
# its bytes reach a build log or anything lands in it. Checked:
#
#  1. an honest `rebuild app` goes live: the audit records the snapshot's
#     hash and the image id, app's container runs that image, db's
#     container is the same one as before;
#  2. each attack of the engine-facts list is refused before the builder
#     runs, and the secret dir is untouched: a bind mount through a context
#     symlink to the secret dir; the same mount without a link (the screen
#     alone); a cache mount whose id climbs to the secret dir; the same id
#     through an ARG; a "heredoc" whose body is a RUN --mount line; ADD of a
#     URL; the context dir itself swapped for a link; a FIFO in the
#     context; a link that escapes through another link (sub/d -> ..);
#     a .containerignore, a .dockerignore or the Containerfile that is a
#     link out of the context (a link inside is kept and builds); the
#     Containerfile rewritten in place between an honest and a hostile
#     text during six rebuilds (each built the honest one or was refused);
#     a context that grows past the file budget while it is copied;
#  3. a build that fails is reported failed, and app keeps running its
#     image (podman-compose would have answered exit 0);
#  3b. a build step gets no network (the host's 127.0.0.1 service it
#     calls through 10.0.2.2 sees nothing) and no base image is pulled
#     (an absent FROM fails; a control shows a docker-format base image's
#     ONBUILD trigger escapes the same way as the screened lines, and with
#     that image on the host the bridge builds nothing, naming it);
#  4. `up` never builds: with app's image deleted, `up` leaves no image;
#  5. the detectors are live: plain `podman build` on the checkout with the
#     symlink attack prints the secret, and with the cache-id attack writes
#     into the secret dir.
#
# Rootful podman when run as root (rootless otherwise); the containers.conf
# of examples/demo-app. Everything made is named after hbba<pid> and
# removed on exit; tools/e2e/leftovers.sh must then find nothing. Exit 77,
# reason printed, where podman, podman-compose or a static busybox is
# missing.
# shellcheck disable=SC2016
set -uo pipefail

[ $# -eq 1 ] || { [ $# -eq 2 ] && [ "$2" = --rootless ]; } ||
    { echo "usage: build_attacks.sh BIN_DIR [--rootless]" >&2; exit 64; }
bin=$(readlink -f -- "$1")
repo=$(readlink -f -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/../..")
hb=$bin/hostbridge
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

skip() {
    echo "SKIP: $*"
    exit 77
}
# --rootless: as root, the same attacks as a throwaway ordinary user, whose
# rootless podman is what a person's install meets.
if [ "${2:-}" = --rootless ]; then
    [ "$(id -u)" -eq 0 ] || skip "already rootless: e2e_build_attacks runs as $(id -un)"
    command -v setpriv >/dev/null || skip "setpriv is not installed"
    exec "$repo/tools/e2e/run-as-test-user.sh" hb-e2e-ba "$bin" tests/e2e/build_attacks.sh
fi
for tool in podman podman-compose python3; do
    command -v "$tool" >/dev/null || skip "$tool is not installed"
done
busybox=$(command -v busybox) || skip "busybox is not installed"
[[ $(LC_ALL=C ldd "$busybox" 2>&1) == *"not a dynamic executable"* ]] ||
    skip "$busybox is not statically linked (busybox-static)"
[ -x "$hb" ] || { echo "no $hb: build first" >&2; exit 1; }

t_start=$(date +%s)
name=hbba$$
work=$(mktemp -d "/tmp/$name.XXXXXX")
P=$work/$name # the checkout; install names its compose project after it (pname, below)
slug=$name
watch_pid="" http_pid=""
export CONTAINERS_CONF=$work/containers.conf
cp "$repo/examples/demo-app/containers.conf" "$CONTAINERS_CONF"
if ! podman info >/dev/null 2>&1; then
    rm -rf -- "$work"
    skip "podman does not work here as $(id -un) (podman info fails)"
fi

cleanup() {
    local ids
    local pid
    for pid in $watch_pid $http_pid; do
        kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    done
    ids=$(podman ps -aq --filter "label=io.podman.compose.project=${pname:-$name}" 2>/dev/null)
    # shellcheck disable=SC2086 # a list of IDs
    [ -z "$ids" ] || podman rm -f -t 0 $ids >/dev/null 2>&1
    podman network exists "${pname:-$name}_default" 2>/dev/null && podman network rm -f "${pname:-$name}_default" >/dev/null 2>&1
    ids=$(podman images -aq --filter "label=io.hostbridge.test=$name" 2>/dev/null | sort -u)
    # shellcheck disable=SC2086
    [ -z "$ids" ] || podman rmi -f $ids >/dev/null 2>&1
    chmod -R u+rwX "$work" 2>/dev/null
    rm -rf -- "$work"
}
trap cleanup EXIT
trap 'echo "interrupted"; exit 130' INT TERM HUP

# shellcheck source=tests/e2e/verdicts.sh
. "$repo/tests/e2e/verdicts.sh"
pname=$(compose_project_of "$P") # the compose project install names

# ------------------------------------------------------------------ the host's secrets

secret=$work/secret
mkdir -p "$secret" || die "mkdir"
token="SECRET-$name-$RANDOM$RANDOM"
echo "$token" >"$secret/id_rsa"
secret_state() { (cd "$secret" && find . -printf '%p %s %T@\n' | sort); }
secret_before=$(secret_state)

# ------------------------------------------------------------------ the project

mkdir -p "$P/app/rootfs/bin" "$P/db" || die "mkdir"
cp "$busybox" "$P/app/rootfs/bin/busybox"
# nc, not wget: Debian 12's static busybox `wget -q -T 5` died of SIGSEGV in
# a rootless build here, so a call that never left looked like one refused.
for applet in sh sleep cat ls touch nc printf ln; do ln -s busybox "$P/app/rootfs/bin/$applet"; done
cp -a "$P/app/rootfs" "$P/db/rootfs"
echo v1 >"$P/app/version.txt"
honest_app() {
    cat >"$P/app/Containerfile" <<EOF
FROM scratch
LABEL io.hostbridge.test=$name
COPY rootfs/ /
RUN ls /
COPY version.txt /version.txt
CMD ["/bin/sleep", "100000"]
EOF
}
honest_app
cat >"$P/db/Containerfile" <<EOF
FROM scratch
LABEL io.hostbridge.test=$name
COPY rootfs/ /
CMD ["/bin/sleep", "100000"]
EOF
cat >"$P/compose.yaml" <<'EOF'
services:
  app:
    build: ./app
    init: true
    depends_on: [db]
  db:
    build: ./db
    init: true
EOF
{
    git -C "$P" init -q . &&
        git -C "$P" add -A &&
        git -C "$P" -c user.email=t@example.invalid -c user.name=t commit -qm app
} || die "git init of $P"

# ------------------------------------------------------------------ the bridge

bridge=(env -u XDG_CONFIG_HOME -u XDG_STATE_HOME -u XDG_CACHE_HOME "HOME=$work/home")
mkdir -p "$work/home"
root_flag=()
[ "$(id -u)" -eq 0 ] && root_flag=(--allow-root)
out=$("${bridge[@]}" "$hb" install --project-dir "$P" --backend compose --compose-file compose.yaml \
    --compose-cmd "env CONTAINERS_CONF=$CONTAINERS_CONF podman-compose" --slug "$slug" \
    --rate-limit 1000/600 --read-rate-limit 1000/60 --no-systemd "${root_flag[@]}" \
    --base-image "localhost/${name}_base:latest" --base-image "localhost/${name}_evilbase:latest" \
    --base-image "docker.io/hostbridge-test/${name}-absent:latest" 2>&1) ||
    die "hostbridge install: $out"
check "install shows the base images a build may name" \
    grep -q "base images a build may name: .*localhost/${name}_base:latest" <<<"$out"
config=$work/home/.config/hostbridge/$slug/bridge.json
run_dir=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_dir"])' "$config") ||
    die "bridge.json names no run_dir"
audit=$work/home/.local/state/hostbridge/$slug/audit.jsonl
policy=$work/home/.config/hostbridge/$slug/policy.conf
# What install seeds (admin/install/policy_engine_guard.hpp): without an
# engine user the engine runs as the person, so up and rebuild are held
# for a person whatever the bridge makes safe, and install says why; rootful
# podman's reason comes first (it resolves bind sources by path).
if [ "$(id -u)" -eq 0 ]; then
    check "rootful podman: install seeds up and rebuild ask, saying why" \
        eval 'grep -qx MODE_up=ask "$policy" && grep -qx MODE_rebuild=ask "$policy" && grep -q "up and rebuild are held for a person (ask): with rootful podman" <<<"$out"'
else
    check "rootless podman-compose, no engine user: install seeds up and rebuild ask, saying why" \
        eval 'grep -qx MODE_up=ask "$policy" && grep -qx MODE_rebuild=ask "$policy" && grep -q "up and rebuild are held for a person (ask): the engine runs as you" <<<"$out"'
    check "install prints the one root command that contains the engine" \
        grep -q "sudo hostbridge engine setup --slug $slug --user $(id -un)" <<<"$out"
fi
# Set back to auto by hand: the executor still holds them for a person,
# since no engine user contains an escape (common/engine_hold.hpp).
sed -i 's/^MODE_up=ask$/MODE_up=auto/; s/^MODE_rebuild=ask$/MODE_rebuild=auto/' "$policy"
grep -qx MODE_rebuild=auto "$policy" || die "cannot set MODE_rebuild=auto in $policy"
client=$P/untracked/hostbridge/request
"${bridge[@]}" "$work/home/.local/lib/hostbridge/$slug/hostbridge-executor" drain --config "$config" "${root_flag[@]}" \
    </dev/null >>"$work/watch.log" 2>&1
held_name=$("$client" --no-wait rebuild app 2>&1)
held_name=${held_name##*/}
"${bridge[@]}" "$work/home/.local/lib/hostbridge/$slug/hostbridge-executor" drain --config "$config" "${root_flag[@]}" \
    </dev/null >>"$work/watch.log" 2>&1
check "MODE_rebuild=auto set by hand: the executor holds the rebuild for a person all the same" \
    grep -q '"state": *"pending"' "$P/untracked/hostbridge/responses/$held_name.response.json"
# This test is about what a build may read, not about the person's approval:
# the person accepts an uncontained engine, and up and rebuild run unattended.
out=$("${bridge[@]}" "$hb" install --project-dir "$P" --backend compose --compose-file compose.yaml \
    --compose-cmd "env CONTAINERS_CONF=$CONTAINERS_CONF podman-compose" --slug "$slug" \
    --rate-limit 1000/600 --read-rate-limit 1000/60 --no-systemd --accept-uncontained-engine \
    "${root_flag[@]}" 2>&1) || die "hostbridge install --accept-uncontained-engine: $out"
check "install --accept-uncontained-engine says what it accepts" \
    grep -q "WARNING: --accept-uncontained-engine: up and rebuild run unattended" <<<"$out"
python3 -c 'import json,sys; b=json.load(open(sys.argv[1]))["build"]; assert [s["service"] for s in b["services"]] == ["app", "db"], b' \
    "$config" || die "bridge.json records no build for app and db: $(cat "$config")"
client=$P/untracked/hostbridge/request
[ -x "$client" ] || die "install dropped no client at $client"
"${bridge[@]}" "$work/home/.local/lib/hostbridge/$slug/hostbridge-executor" watch --config "$config" "${root_flag[@]}" \
    </dev/null >>"$work/watch.log" 2>&1 &
watch_pid=$!
echo "installed $slug (compose backend, podman-compose); watch pid $watch_pid"

request() { # VERB [ARG]: REQ_RC, REQ_OUT, REQ_ERR
    "$client" --timeout 300 "$@" >"$work/out" 2>"$work/err"
    REQ_RC=$?
    REQ_OUT=$(cat "$work/out")
    REQ_ERR=$(cat "$work/err")
}
show() { printf '%s\n%s\n' "$REQ_OUT" "$REQ_ERR" | tail -n 15; }
inspect() { podman container inspect --format "$2" "$1" 2>/dev/null; }
image_id() { podman image inspect --format '{{.Id}}' "$1" 2>/dev/null; }
leaked() { grep -rqs -- "$token" "$P/untracked" "$work/watch.log"; }
secret_same() { [ "$(secret_state)" = "$secret_before" ]; }
last_audit() { # EVENT: the detail of the last such rebuild event, as JSON
    python3 - "$audit" "$1" <<'PY'
import json, sys
last = None
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("verb") == "rebuild" and e["event"] == sys.argv[2]:
        last = e
print(json.dumps(last["detail"] if last and last.get("detail") else {}))
PY
}

# ------------------------------------------------------------------ 1: honest rebuilds go live

request rebuild db
check "rebuild db: exit 0" test "$REQ_RC" -eq 0
[ "$REQ_RC" -eq 0 ] || show
request rebuild app
check "rebuild app: exit 0" test "$REQ_RC" -eq 0
[ "$REQ_RC" -eq 0 ] || show
app_c=${pname}_app_1 db_c=${pname}_db_1
db_id=$(inspect "$db_c" '{{.Id}}')
detail=$(last_audit succeeded)
audited_image=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get("image_id",""))' "$detail")
check "the audit records the snapshot's hash and the image id ($detail)" \
    eval '[[ $detail == *snapshot_sha256* ]] && [ -n "$audited_image" ]'
check "app runs the audited image (${audited_image:7:12})" \
    test -n "$audited_image" -a "$(inspect "$app_c" '{{.Image}}')" = "${audited_image#sha256:}"
echo v2 >"$P/app/version.txt"
request rebuild app
new_image=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get("image_id",""))' "$(last_audit succeeded)")
content=$(podman exec "$app_c" cat /version.txt 2>&1)
check "a second rebuild app goes live: exit 0, app runs a new image holding v2 ($content)" \
    test "$REQ_RC" -eq 0 -a "$new_image" != "$audited_image" -a "$content" = v2 \
    -a "$(inspect "$app_c" '{{.Image}}')" = "${new_image#sha256:}"
check "db's container was not replaced (${db_id:0:12})" \
    test -n "$db_id" -a "$(inspect "$db_c" '{{.Id}}')" = "$db_id"

# ------------------------------------------------------------------ 2: the attacks

running_image=$(inspect "$app_c" '{{.Image}}')
refused() { # MESSAGE EXPECTED-TEXT: the last request was refused, nothing leaked
    local msg=$1 want=$2
    if [ "$REQ_RC" -eq 70 ] && grep -q "build input refused" <<<"$REQ_ERR" &&
        grep -qF -- "$want" <<<"$REQ_ERR" && ! leaked && secret_same &&
        [ "$(inspect "$app_c" '{{.Image}}')" = "$running_image" ]; then
        pass "$msg: refused ($(grep -o 'build input refused.*' <<<"$REQ_ERR" | head -c 160))"
    else
        fail "$msg"
        show
        leaked && echo "the secret reached the agent's files"
        secret_same || echo "the secret dir changed"
    fi
}
attack_file() { # the Containerfile, from stdin
    cat >"$P/app/Containerfile"
}
reset_app() {
    honest_app
    rm -rf "$P/app/h" "$P/app/sub" "$P/app/fifo"
}

ln -s "$secret" "$P/app/h"
attack_file <<EOF
FROM scratch
COPY rootfs/ /
RUN --mount=type=bind,source=h,target=/h,rw=true cat /h/id_rsa
EOF
request rebuild app
refused "bind mount through a context symlink to the secret dir" "app/h"
rm "$P/app/h"
request rebuild app
refused "the same bind mount without a link (the screen alone)" "Containerfile line 3: type="

attack_file <<EOF
FROM scratch
COPY rootfs/ /
RUN --mount=type=cache,id=../../../../../../../..$secret,target=/c touch /c/pwned
EOF
request rebuild app
refused "a cache mount whose id climbs to the secret dir" "line 3: id="

attack_file <<EOF
FROM scratch
ARG X=../../../../../../../..$secret
COPY rootfs/ /
RUN --mount=type=cache,id=\$X,target=/c touch /c/pwned
EOF
request rebuild app
refused "the same id through an ARG" "line 4"

attack_file <<EOF
FROM scratch
COPY rootfs/ /
RUN cat <<HEREDOC
RUN --mount=type=cache,id=../../../../../../../..$secret,target=/c touch /c/pwned
HEREDOC
EOF
request rebuild app
refused "a heredoc whose body is a RUN --mount line" "line 3"

# Round 4's escape: the first step plants a link to the secret dir in
# buildah's cache dir on the host, the second mounts the cache below it and
# buildah follows the link (the control in part 5 shows it). Every mount
# is refused, a clean type=cache too.
attack_file <<EOF
FROM scratch
COPY rootfs/ /
RUN --mount=type=cache,target=/c ln -sfn $secret /c/h
RUN --mount=type=cache,target=/c/h cat /c/h/id_rsa
EOF
request rebuild app
refused "a cache mount that plants a link for the next one to follow" "line 3: --mount: RUN --mount is refused"
attack_file <<EOF
FROM scratch
COPY rootfs/ /
RUN --mount=type=cache,target=/c,sharing=locked ls /c
EOF
request rebuild app
refused "a plain type=cache with sharing=locked (its lock file sits in the same dir)" "line 3: --mount"
attack_file <<EOF
FROM scratch AS trap
COPY rootfs/ /
ONBUILD RUN --mount=type=cache,target=/c ln -sfn $secret /c/h
FROM trap
RUN true
EOF
request rebuild app
refused "a cache mount smuggled through an ONBUILD of the file's own stage" "line 3: --mount"

attack_file <<EOF
FROM scratch
ADD http://127.0.0.1:9/x /x
EOF
request rebuild app
refused "ADD of a URL" "line 2"

reset_app
mkdir -p "$P/app/sub"
ln -s .. "$P/app/sub/d"
ln -s d/../../secret "$P/app/sub/a"
request rebuild app
refused "a link that is inside by its spelling but escapes through sub/d -> .." "sub/a"
reset_app

mkfifo "$P/app/fifo"
request rebuild app
refused "a FIFO in the context" "fifo"
reset_app

# A gibibyte that costs the agent nothing: a plain copy would write it
# all to the host's disk (round 4: 1 GiB kept and 20 s of the drain).
truncate -s 1000M "$P/app/sparse"
t0=$(date +%s%N)
request rebuild app
sparse_ms=$((($(date +%s%N) - t0) / 1000000))
refused "a 1000 MiB sparse file in the context (answered in $sparse_ms ms)" "app/sparse: a sparse file"
check "nothing of the sparse file was written to the host (no snapshot left)" \
    eval '[ -z "$(find "$run_dir/.hostbridge-build" -name sparse 2>/dev/null)" ]'
# The control: a copy that reads and writes every byte, as the snapshot
# once did, puts the whole gibibyte on the host's disk.
cat "$P/app/sparse" >"$work/sparse-copy"
written=$(du -m "$work/sparse-copy" | cut -f1)
check "control: a byte-for-byte copy of it writes $written MiB to the host's disk" test "$written" -ge 1000
rm -f "$work/sparse-copy"
rm -f "$P/app/sparse"

# A link planted in the build's TMPDIR before the drain runs (as a cache
# step would have left it): each build starts from an empty TMPDIR and
# none outlives its build. buildah 1.28 keeps a cache in
# $TMPDIR/buildah-cache as root (measured) and buildah-cache-<uid> where
# rootless (round 4): planted in both, as the control in part 5 does.
plant_cache_link() { # TMPDIR
    local dir
    for dir in buildah-cache "buildah-cache-$(id -u)"; do
        mkdir -p "$1/$dir/c" && ln -sfn "$secret" "$1/$dir/c/h"
    done
}
plant_cache_link "$run_dir/.hostbridge-tmp"
request rebuild app
check "a link planted in the build's TMPDIR: the honest rebuild goes through, the TMPDIR is gone after it" \
    eval '[ "$REQ_RC" -eq 0 ] && [ ! -e "$run_dir/.hostbridge-tmp" ] && [ ! -L "$run_dir/.hostbridge-tmp" ] && secret_same'
[ "$REQ_RC" -eq 0 ] || show
running_image=$(inspect "$app_c" '{{.Image}}')

mv "$P/app" "$work/app-moved" && ln -s "$secret" "$P/app"
request rebuild app
# The checkout walk (executor/run_tree.cpp) refuses it first, as the
# integrity gate; the snapshot would too.
if [ "$REQ_RC" -eq 70 ] && grep -q "app" <<<"$REQ_ERR" && ! leaked && secret_same; then
    pass "the context dir swapped for a link to the secret dir: refused ($(tail -n 1 <<<"$REQ_ERR" | head -c 160))"
else
    fail "the context dir swapped for a link to the secret dir"
    show
fi
rm "$P/app" && mv "$work/app-moved" "$P/app"

# Issue 44 item 4 (round 4, re-build-misc.sh b): the build runs as the
# person, so a FROM or COPY --from could read any image in their store; a
# token baked into another project's private image reached the build log.
# The screen lets a build name only its stages, scratch, the services' own
# images and the listed base images (docs/BUILDS.md, "What a build may name").
private=localhost/${name}_private:latest
ptoken="PRIVATE-$name-$RANDOM$RANDOM"
mkdir -p "$work/private"
echo "$ptoken" >"$work/private/token"
printf 'FROM scratch\nLABEL io.hostbridge.test=%s\nCOPY token /token\n' "$name" >"$work/private/Containerfile"
podman build -q -t "$private" "$work/private" >/dev/null 2>&1 || die "cannot build $private"
private_id=$(image_id "$private")
ptoken_leaked() { grep -rqs -- "$ptoken" "$P/untracked" "$work/watch.log"; }
attack_file <<EOF
FROM scratch
LABEL io.hostbridge.test=$name
COPY rootfs/ /
COPY --from=$private /token /token
RUN ["/bin/cat", "/token"]
EOF
control=$(podman build --no-cache -t "localhost/${name}_control:latest" "$P/app" 2>&1)
check "control: plain podman build with COPY --from=$private prints the private image's token" \
    grep -qF -- "$ptoken" <<<"$control"
podman rmi -f "localhost/${name}_control:latest" >/dev/null 2>&1
request rebuild app
refused "COPY --from another project's private image" "line 4: --from: FROM and COPY --from may name only"
check "the private image's token never reached the agent's files" eval '! ptoken_leaked'
for ref in "$private" "${name}_private" "$private_id"; do
    attack_file <<EOF
FROM $ref
LABEL io.hostbridge.test=$name
RUN ["/bin/cat", "/token"]
EOF
    request rebuild app
    refused "FROM the private image as ${ref:0:40}" "line 1: FROM and COPY --from may name only"
done
attack_file <<EOF
FROM scratch AS $name
COPY --from=$name /token /token
EOF
request rebuild app
refused "COPY --from its own stage's name (buildah reads it as an image)" "line 2: --from:"
check "the private image's token never reached the agent's files" eval '! ptoken_leaked'
# A base the person listed (install --base-image) still builds, in either spelling.
mkdir -p "$work/base"
cp -a "$P/app/rootfs" "$work/base/rootfs"
printf 'FROM scratch\nLABEL io.hostbridge.test=%s\nCOPY rootfs/ /\n' "$name" >"$work/base/Containerfile"
podman build -q -t "localhost/${name}_base:latest" "$work/base" >/dev/null 2>&1 || die "cannot build the base"
for ref in "localhost/${name}_base:latest" "${name}_base"; do
    attack_file <<EOF
FROM $ref
LABEL io.hostbridge.test=$name
COPY version.txt /version.txt
CMD ["/bin/sleep", "100000"]
EOF
    request rebuild app
    check "FROM $ref, a listed base image: the rebuild goes live (exit $REQ_RC)" test "$REQ_RC" -eq 0
    [ "$REQ_RC" -eq 0 ] || show
done
running_image=$(inspect "$app_c" '{{.Image}}')
reset_app

# ------------------------------------------------------------------ 2b: variations

# An ignore file or the Containerfile itself as a link out of the context:
# the snapshot keeps a link only where it resolves inside the snapshot.
ln -s "$secret/id_rsa" "$P/app/.containerignore"
request rebuild app
refused "a .containerignore that is a link to the secret file" ".containerignore"
rm "$P/app/.containerignore"
ln -s "$secret/id_rsa" "$P/app/.dockerignore"
request rebuild app
refused "a .dockerignore that is a link to the secret file" ".dockerignore"
rm "$P/app/.dockerignore"
cat >"$secret/Containerfile" <<EOF
FROM scratch
COPY rootfs/ /
RUN --mount=type=cache,id=../../../../../../../..$secret,target=/c touch /c/pwned
EOF
secret_before=$(secret_state)
mv "$P/app/Containerfile" "$work/Containerfile.kept" && ln -s "$secret/Containerfile" "$P/app/Containerfile"
request rebuild app
refused "the Containerfile itself a link to one outside the context" "Containerfile"
rm "$P/app/Containerfile" && mv "$work/Containerfile.kept" "$P/app/Containerfile"
# A link that stays inside is kept: the snapshot does not refuse links as such.
ln -s version.txt "$P/app/version-link"
request rebuild app
check "a link inside the context is kept and the build goes through (exit $REQ_RC)" test "$REQ_RC" -eq 0
[ "$REQ_RC" -eq 0 ] || show
rm "$P/app/version-link"
running_image=$(inspect "$app_c" '{{.Image}}')

# The Containerfile rewritten in place (same inode) between an honest and a
# hostile text, as fast as the agent can, while the bridge rebuilds: the
# screen and the builder read the same host-owned copy, so each rebuild
# either builds the honest text or is refused; the hostile line never runs.
# (The product has no "screen the checkout, then build it" path to race as
# a control: the copy is what is screened and built.)
honest_app
cp "$P/app/Containerfile" "$work/flip.honest"
cat >"$work/flip.hostile" <<EOF
FROM scratch
LABEL io.hostbridge.test=$name
COPY rootfs/ /
RUN --mount=type=cache,id=../../../../../../../..$secret,target=/c touch /c/pwned
COPY version.txt /version.txt
CMD ["/bin/sleep", "100000"]
EOF
python3 - "$P/app/Containerfile" "$work/flip.honest" "$work/flip.hostile" "$work/flip.stop" "$work/flip.count" <<'PY' &
import os, sys
path, a, b, stop, count = sys.argv[1:]
texts = [open(a, "rb").read(), open(b, "rb").read()]
n = 0
fd = os.open(path, os.O_WRONLY)
while not os.path.exists(stop):
    os.ftruncate(fd, 0)
    os.pwrite(fd, texts[n % 2], 0)
    n += 1
open(count, "w").write(str(n))
PY
flip_pid=$!
flip_done=0 flip_refused=0 flip_failed=0 flip_other=0
for _ in 1 2 3 4 5 6; do
    request rebuild app
    if [ "$REQ_RC" -eq 0 ]; then
        flip_done=$((flip_done + 1))
    elif [ "$REQ_RC" -eq 70 ] && grep -q "build input refused" <<<"$REQ_ERR"; then
        flip_refused=$((flip_refused + 1))
    elif [ "$REQ_RC" -ne 0 ] && grep -q "failed: exited with status" <<<"$REQ_ERR"; then
        # The copy caught the file between ftruncate and pwrite (empty or
        # cut short: likelier the busier the machine), and the builder
        # refused that text: a build that fails ran nothing hostile either.
        flip_failed=$((flip_failed + 1))
    else
        flip_other=$((flip_other + 1))
        show
    fi
done
touch "$work/flip.stop"
wait "$flip_pid"
check "rewritten in place $(cat "$work/flip.count" 2>/dev/null) times during 6 rebuilds: $flip_done built, $flip_refused refused, $flip_failed failed to build (a torn text), $flip_other otherwise; the hostile line never ran" \
    eval '[ "$flip_other" -eq 0 ] && ! leaked && secret_same && [ ! -e "$secret/pwned" ] && [ "$(cat "$work/flip.count")" -gt 100 ]'
honest_app
running_image=$(inspect "$app_c" '{{.Image}}')

# A context that grows while it is copied: the file budget
# (build.max_files, 20,000 by default) ends the copy with a refusal naming
# it; nothing hangs and nothing is built.
python3 - "$P/app/grow" "$work/grow.stop" <<'PY' &
import os, sys
d, stop = sys.argv[1:]
os.mkdir(d)
n = 0
while not os.path.exists(stop) and n < 200000:
    open(os.path.join(d, "f%06d" % n), "w").close()
    n += 1
PY
grow_pid=$!
# Past the budget before the request, still growing during the copy: a
# copy that outran the writer below 20,000 would build, and whether it
# does was a race on a loaded machine. Waited for while the writer lives.
while kill -0 "$grow_pid" 2>/dev/null &&
    [ "$(find "$P/app/grow" -maxdepth 1 2>/dev/null | wc -l)" -le 20500 ]; do
    sleep 0.1
done
request rebuild app
touch "$work/grow.stop"
wait "$grow_pid"
refused "a context that grows during the copy (past 20,500 entries, still growing)" "max_files"
rm -rf "$P/app/grow"

# ------------------------------------------------------------------ 3: a failed build

attack_file <<EOF
FROM scratch
COPY rootfs/ /
RUN /bin/sh -c 'exit 3'
EOF
request rebuild app
check "a build that fails answers failed, exited with status 3 (exit $REQ_RC), and app keeps its image" \
    eval '[ "$REQ_RC" -ne 0 ] && grep -q "failed: exited with status 3" <<<"$REQ_ERR" && [ "$(inspect "$app_c" "{{.Image}}")" = "$running_image" ]'
grep -q 'exited with status 3' <<<"$REQ_ERR" || show
reset_app

# ------------------------------------------------------------------ 3b: no network, no pull

# A service the host binds to 127.0.0.1 only; rootless builds reach the
# host's loopback as 10.0.2.2 through slirp4netns unless run with none.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server --bind 127.0.0.1 "$port" --directory "$work" >"$work/http.log" 2>&1 &
http_pid=$!
attack_file <<EOF
FROM scratch
LABEL io.hostbridge.test=$name
COPY rootfs/ /
RUN printf 'GET /from-the-build HTTP/1.0\\r\\n\\r\\n' | nc 10.0.2.2 $port
EOF
request rebuild app
check "a build step that calls the host's 127.0.0.1 (10.0.2.2:$port): the build fails, the service saw nothing" \
    eval '[ "$REQ_RC" -ne 0 ] && ! grep -q from-the-build "$work/http.log"'
if [ "$(id -u)" -ne 0 ]; then
    podman build --no-cache -t "localhost/${name}_control:latest" "$P/app" >"$work/control-net.log" 2>&1
    check "control: plain podman build (rootless, slirp4netns) reaches the host's 127.0.0.1 service" \
        grep -q from-the-build "$work/http.log"
    grep -q from-the-build "$work/http.log" || tail -n 5 "$work/control-net.log"
else
    echo "SKIP control: rootful podman builds do not go through slirp4netns (no 10.0.2.2); the loopback reach was measured rootless"
fi
kill "$http_pid" 2>/dev/null
wait "$http_pid" 2>/dev/null

# A base image named from a registry is never pulled: its ONBUILD triggers
# would run unscreened. (No registry is reached at all: --pull=never.)
attack_file <<EOF
FROM docker.io/hostbridge-test/${name}-absent:latest
RUN true
EOF
request rebuild app
check "FROM an image that is not on the host: the build fails without pulling it" \
    eval '[ "$REQ_RC" -ne 0 ] && ! podman image exists "docker.io/hostbridge-test/${name}-absent:latest"'
# The class that rule closes, shown on a trigger image made here (standing
# for one pulled from a registry): buildah runs a docker-format base image's
# ONBUILD RUN --mount with no screen in between.
mkdir -p "$work/evilbase"
cp "$busybox" "$work/evilbase/busybox"
cat >"$work/evilbase/Containerfile" <<EOF
FROM scratch
LABEL io.hostbridge.test=$name
COPY busybox /bin/busybox
ONBUILD RUN --mount=type=cache,id=../../../../../../../..$secret,target=/c ["/bin/busybox", "touch", "/c/pwned-by-trigger"]
EOF
printf 'FROM localhost/%s_evilbase:latest\nLABEL io.hostbridge.test=%s\nRUN ["/bin/busybox", "true"]\n' \
    "$name" "$name" >"$work/evilbase/Child"
podman build -q --format docker -t "localhost/${name}_evilbase:latest" "$work/evilbase" >/dev/null 2>&1
podman build -q --no-cache -f "$work/evilbase/Child" -t "localhost/${name}_control:latest" \
    "$work/evilbase" >/dev/null 2>&1
check "control: a docker-format base image's ONBUILD trigger writes into the secret dir" \
    test -e "$secret/pwned-by-trigger"
rm -f "$secret/pwned-by-trigger"
secret_before=$(secret_state)
podman rmi -f "localhost/${name}_control:latest" >/dev/null 2>&1
# Through the bridge, with that image on the host: buildah inspect reads its
# trigger, and no build runs while it is there, whichever FROM it names.
# shellcheck disable=SC2034 # read inside the eval below
evil_id=$(image_id "localhost/${name}_evilbase:latest")
cp "$work/evilbase/Child" "$P/app/Containerfile"
request rebuild app
check "a base image with an ONBUILD trigger on the host: rebuild refused, naming it" \
    eval '[ "$REQ_RC" -ne 0 ] && grep -q "image ${evil_id:0:12} on this host has 1 ONBUILD trigger" "$work/out" "$work/err"'
check "the trigger never ran (secret dir unchanged)" secret_same
honest_app
request rebuild app
check "an honest rebuild is refused too while the trigger image is there" \
    eval '[ "$REQ_RC" -ne 0 ] && grep -q "ONBUILD trigger" "$work/out" "$work/err"'
podman rmi -f "localhost/${name}_evilbase:latest" >/dev/null 2>&1
request rebuild app
check "the trigger image removed: the honest rebuild runs again" eval '[ "$REQ_RC" -eq 0 ]'
reset_app

# ------------------------------------------------------------------ 4: up never builds

podman rm -f -t 0 "$app_c" >/dev/null 2>&1
podman rmi -f "localhost/${pname}_app:latest" >/dev/null 2>&1
request up
check "up with app's image deleted builds nothing: no ${pname}_app image afterwards" \
    eval '[ -z "$(image_id "localhost/${pname}_app:latest")" ]'

# ------------------------------------------------------------------ 5: the detectors are live

ln -s "$secret" "$P/app/h"
attack_file <<EOF
FROM scratch
LABEL io.hostbridge.test=$name
COPY rootfs/ /
RUN --mount=type=bind,source=h,target=/h,rw=true cat /h/id_rsa
EOF
control=$(podman build --no-cache -t "localhost/${name}_control:latest" "$P/app" 2>&1)
check "control: plain podman build on the checkout prints the secret through app/h" \
    grep -qF -- "$token" <<<"$control"
rm "$P/app/h"
attack_file <<EOF
FROM scratch
LABEL io.hostbridge.test=$name
COPY rootfs/ /
RUN --mount=type=cache,id=../../../../../../../..$secret,target=/c touch /c/pwned
EOF
control=$(podman build --no-cache -t "localhost/${name}_control:latest" "$P/app" 2>&1)
check "control: plain podman build with the climbing cache id writes into the secret dir" \
    test -e "$secret/pwned"
rm -f "$secret/pwned"
# Round 4's escape won against the screen as it was (a clean type=cache
# accepted): plain podman build with its own TMPDIR, as the bridge had it.
attack_file <<EOF
FROM scratch
LABEL io.hostbridge.test=$name
COPY rootfs/ /
RUN --mount=type=cache,target=/c ln -sfn $secret /c/h
RUN --mount=type=cache,target=/c/h cat /c/h/id_rsa
EOF
mkdir -p "$work/control-tmp"
control=$(TMPDIR=$work/control-tmp podman build --no-cache -t "localhost/${name}_control:latest" "$P/app" 2>&1)
check "control: plain podman build with two clean cache mounts prints the secret through a planted link" \
    grep -qF -- "$token" <<<"$control"
grep -qF -- "$token" <<<"$control" || tail -n 5 <<<"$control"
podman unshare rm -rf "$work/control-tmp" 2>/dev/null || rm -rf "$work/control-tmp"
# A link left in a kept TMPDIR (round 4: one rebuild planted it, a later
# one followed it), planted as part 2 plants it in the bridge's: a later
# build with a single clean cache mount reads through it.
plant_cache_link "$work/control-tmp"
attack_file <<EOF
FROM scratch
LABEL io.hostbridge.test=$name
COPY rootfs/ /
RUN --mount=type=cache,target=/c/h cat /c/h/id_rsa
EOF
control=$(TMPDIR=$work/control-tmp podman build --no-cache -t "localhost/${name}_control:latest" "$P/app" 2>&1)
check "control: a link planted in a kept TMPDIR, a later build with one clean cache mount prints the secret" \
    grep -qF -- "$token" <<<"$control"
grep -qF -- "$token" <<<"$control" || tail -n 5 <<<"$control"
podman unshare rm -rf "$work/control-tmp" 2>/dev/null || rm -rf "$work/control-tmp"
podman rmi -f "localhost/${name}_control:latest" >/dev/null 2>&1

# ------------------------------------------------------------------ nothing left

trap - EXIT
cleanup
finish_e2e "$name" "$(($(date +%s) - t_start)) s"
