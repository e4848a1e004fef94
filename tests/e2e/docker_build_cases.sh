#!/bin/bash
# docker_build_cases.sh BIN_DIR SCREEN_VERDICTS: what the Dockerfile screen
# fears of BuildKit (docs/DOCKER.md, "What BuildKit does with a
# Dockerfile"), each case first built by plain `docker build` (docker 26,
# buildx 0.13.1) on a docker engine user's real rootless dockerd, where it
# wins, then refused by the screen read as BuildKit reads
# (SCREEN_VERDICTS --buildkit, the test-only tests/parser/screen-verdicts).
# As root:
#  1. `hostbridge engine setup --engine docker` for a throwaway person;
#  2. inside the engine user's systemd --user manager, as the person through
#     the engine's socket: a busybox base image, a "frontend" image whose
#     entrypoint exits 5, a context with a link to a secret file; each case
#     built with `--network none` (and the flags the case names), its log
#     showing the win; the screen's verdict on each, and, where buildah's
#     reading of the same file accepts it, that acceptance (the reason the
#     BuildKit reading exists); a control file the screen accepts builds;
#  3. `hostbridge engine remove`.
# Exit 77, reason printed, where that docker, rootlesskit, setfacl, a static
# busybox or a user manager is missing.
set -uo pipefail
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
here=$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")
repo=$(readlink -f -- "$here/../..")
# shellcheck source=tests/e2e/verdicts.sh
. "$here/verdicts.sh"
[ $# -ge 2 ] || { echo "usage: docker_build_cases.sh BIN_DIR SCREEN_VERDICTS" >&2 && exit 64; }

# ------------------------------------------------------------------ phase 2, inside the engine's manager

if [ "${1:-}" = --inner ]; then
    shift
    stage=$1 person=$2 engine=$3 name=$4 root=$5
    D=$root/usr/bin/docker
    ehome=$(getent passwd "$engine" | cut -d: -f6)
    phome=$(getent passwd "$person" | cut -d: -f6)
    socket=$ehome/engine/docker.sock
    screen=$stage/bin/screen-verdicts
    work=$phome/cases
    as_person() {
        setpriv --reuid="$person" --regid="$person" --init-groups -- env -i PATH="$PATH" \
            HOME="$phome" USER="$person" LOGNAME="$person" DOCKER_HOST="unix://$socket" \
            DOCKER_CONFIG="$phome/.docker" "$@"
    }
    as_engine() { "$stage/tools/e2e/usermgr.sh" as-user -- "$@"; }
    socket_active() { [ "$(as_engine systemctl --user is-active hostbridge-docker.socket 2>/dev/null)" = active ]; }
    for _ in $(seq 3000); do socket_active && break; sleep 0.2; done # a hang guard
    check "the engine's manager started hostbridge-docker.socket" eval 'socket_active && test -S "$socket"'

    base=$name-base:1 fe=$name-fe:1
    out=$(as_person "$D" import --change 'CMD ["/bin/sh"]' - "$base" <"$stage/rootfs.tar" 2>&1) &&
        out=$(as_person "$D" import --change 'ENTRYPOINT ["/bin/sh", "-c", "exit 5"]' - "$fe" <"$stage/rootfs.tar" 2>&1)
    check "$person imports the base and the frontend images through the socket ($out)" test $? -eq 0

    declare -A file=() flags=() proof=() want=() buildah=()
    add() { # NAME 'VERDICT' 'BUILDAH VERDICT' 'PROOF (grep -E of the log)' FLAGS... < Dockerfile
        file[$1]=$(cat)
        want[$1]=$2 buildah[$1]=$3 proof[$1]=$4
        flags[$1]=${*:5}
    }
    # The wire numbers of ipc/screen_wire.hpp: reason line flag.
    add syntax-local "24 1 0" "0 0 0" "exit code: 5" <<EOF
# syntax=$fe
FROM $base
RUN true
EOF
    add syntax-shebang "24 2 0" "0 0 0" "exit code: 5" <<EOF
#!/bin/sh
# syntax=$fe
FROM $base
EOF
    add syntax-upper "24 1 0" "0 0 0" "exit code: 5" <<EOF
#   SYNTAX   =   $fe
FROM $base
EOF
    # Its body and end are LABEL lines to buildah's reading; BuildKit runs
    # the body as cat's input.
    add heredoc-quoted-name "11 2 0" "0 0 0" "^#[0-9]+ [0-9.]+ LABEL heredoc-body-ran" <<EOF
FROM $base
RUN cat <<""LABEL
LABEL heredoc-body-ran
LABEL
EOF
    add heredoc-fd "11 2 0" "11 2 0" "^#[0-9]+ [0-9.]+ BODY-AS-STDIN" <<DF
FROM $base
RUN cat 0<<EOF
BODY-AS-STDIN
EOF
DF
    add add-git-fragment "10 2 0" "10 2 0" "Initialized empty Git repository" <<EOF
FROM $base
ADD example.invalid/x.git#main /src
EOF
    add add-url "10 2 0" "10 2 0" "dial tcp 127.0.0.1:9|127.0.0.1:9" <<EOF
FROM $base
ADD http://127.0.0.1:9/x /x
EOF
    add run-network-host "4 2 2" "4 2 2" "^#[0-9]+ [0-9.]+ +tap0:" --allow network.host <<EOF
FROM $base
RUN --network=host cat /proc/net/dev
EOF
    add mount-secret "5 2 14" "5 2 14" "SECRET-$name" --secret "id=s,src=$work/secret" <<EOF
FROM $base
RUN --mount=type=secret,id=s cat /run/secrets/s
EOF
    add copy-from-image "22 2 4" "22 2 4" "^#[0-9]+ [0-9.]+ STOLEN" <<EOF
FROM $base
COPY --from=$fe /bin/busybox /stolen/echo
RUN /stolen/echo STOLEN
EOF
    add from-missing "22 1 0" "22 1 0" "https://localhost/v2/" <<EOF
FROM localhost/$name-absent:1
EOF
    add control "0 0 0" "0 0 0" "^#[0-9]+ [0-9.]+ CONTROL-RAN" <<EOF
FROM $base
COPY --chmod=0644 x /x
RUN cat /x
EOF

    as_person mkdir -p "$work/ctx" "$work/files" "$work/logs" "$phome/.docker"
    printf '{"cliPluginsExtraDirs":["%s"]}\n' "$root/usr/libexec/docker/cli-plugins" |
        as_person tee "$phome/.docker/config.json" >/dev/null
    echo "SECRET-$name" | as_person tee "$work/secret" >/dev/null
    echo CONTROL-RAN | as_person tee "$work/ctx/x" >/dev/null
    for c in "${!file[@]}"; do printf '%s\n' "${file[$c]}" | as_person tee "$work/files/$c" >/dev/null; done

    # The screen's verdicts: as BuildKit reads, and as buildah reads.
    declare -A got=() got_buildah=()
    while read -r r l f path; do got[$(basename -- "$path")]="$r $l $f"; done \
        < <("$screen" --buildkit --allow "$base" "$work/files"/*)
    while read -r r l f path; do got_buildah[$(basename -- "$path")]="$r $l $f"; done \
        < <("$screen" --allow "$base" "$work/files"/*)

    for c in $(printf '%s\n' "${!file[@]}" | sort); do
        t0=$(date +%s%N)
        # shellcheck disable=SC2086 # the case's flags, words without blanks
        as_person "$D" build --progress=plain --no-cache --network none ${flags[$c]} \
            -t "$name-case" -f "$work/files/$c" "$work/ctx" >"/tmp/$name-log" 2>&1
        rc=$? ms=$((($(date +%s%N) - t0) / 1000000))
        check "plain docker build of $c wins: '${proof[$c]}' in its log (exit $rc, $ms ms)" \
            grep -qE -- "${proof[$c]}" "/tmp/$name-log"
        grep -qE -- "${proof[$c]}" "/tmp/$name-log" || tail -n 8 "/tmp/$name-log"
        check "the screen read as BuildKit: $c ${want[$c]} (got ${got[$c]:-none})" test "${got[$c]:-}" = "${want[$c]}"
        check "read as buildah: $c ${buildah[$c]} (got ${got_buildah[$c]:-none})" test "${got_buildah[$c]:-}" = "${buildah[$c]}"
    done

    rm -f "/tmp/$name-log"
    as_person "$D" image rm -f "$name-case" "$base" "$fe" >/dev/null 2>&1
    as_person "$D" builder prune -af >/dev/null 2>&1
    [ "$failures" -eq 0 ]
    exit
fi

# ------------------------------------------------------------------ phase 1 and 3, as root

bin=$(readlink -f -- "$1")
screen=$(readlink -f -- "$2")
[ -x "$screen" ] || { echo "no $screen: build the screen-verdicts target first" >&2; exit 1; }
cd / || exit 1
e2e_docker_needs # sets root and busybox

t_start=$(date +%s)
name=hb-e2e-dc$$
person=hb-e2e-dc$$p
engine=hb-e2e-dc$$e
slug=hbdc$$
stage=/tmp/$name-stage
cleanup() {
    "$stage/bin/hostbridge" engine remove --slug "$slug" --user "$person" --name "$engine" >/dev/null 2>&1
    for u in "$engine" "$person"; do "$repo/tools/e2e/testuser.sh" delete "$u" >/dev/null 2>&1; done
    rm -rf -- "$stage" "/var/lib/hostbridge/engine-users/$engine" "/tmp/$name-log"
}
trap cleanup EXIT
trap 'echo interrupted; exit 130' INT TERM HUP

"$repo/tools/e2e/stage.sh" "$stage" "$bin" || die "stage"
cp -- "$screen" "$stage/bin/screen-verdicts" && chmod 0755 "$stage/bin/screen-verdicts" || die "stage the screen"
"$repo/tools/e2e/testuser.sh" create "$person" >/dev/null || exit $?
e2e_rootfs_tar "$stage" sh echo cat

out=$("$stage/bin/hostbridge" engine setup --engine docker --slug "$slug" --user "$person" --name "$engine" --docker-root "$root" 2>&1) ||
    die "engine setup --engine docker: $out"
check "the cases through the engine's docker (above)" \
    "$stage/tools/e2e/usermgr.sh" run --name "$name-mgr" --as root "$engine" -- \
    "$stage/tests/e2e/docker_build_cases.sh" --inner "$stage" "$person" "$engine" "$name" "$root"

out=$("$stage/bin/hostbridge" engine remove --slug "$slug" --user "$person" --name "$engine" 2>&1)
check "engine remove: exit 0, the user gone" eval '[ $? -eq 0 ] && ! getent passwd "$engine" >/dev/null'
trap - EXIT
cleanup
finish_e2e "$name" "$(($(date +%s) - t_start)) s"
