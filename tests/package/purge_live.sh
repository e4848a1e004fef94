#!/bin/bash
# purge_live.sh SOURCE_DIR LOG: run by deb_install.sh as root while the
# package is installed; purges it (`apt-get purge hostbridge`, its output
# to LOG) with a person's install live (issue 48, item 7; docs/PACKAGING.md,
# "Removing the package"):
#   - a throwaway user (tools/e2e/testuser.sh) with a real systemd --user
#     manager (tools/e2e/usermgr.sh) installs /usr/bin/hostbridge in front of
#     a compose project (rootless podman-compose, one service binding ./src,
#     so pinned), the drain units enabled, and the agent's `up` through the
#     spool starts it on the pin;
#   - the purge runs inside the manager's mount namespace, where that user's
#     runtime dir is, as root, as apt does;
# then checks: the prerm named the user's install and said what it did; the
# units are gone and a request in the spool is no longer answered; whatever
# clean-up the prerm printed, run as printed, and then the command it
# printed to start the stack, start the person's stack with podman-compose;
# it survives a stop and a start (its bind source exists).
# Exit: 0 every check passed, 77 (reason printed) where no user manager or
# rootless podman can run here (nothing purged), 1 otherwise (the package
# may be left installed: deb_install.sh purges it on exit).
# shellcheck disable=SC2016
set -uo pipefail

self=$(readlink -f -- "${BASH_SOURCE[0]}")

if [ "${1:-}" = __inner ]; then
    # As root, inside usermgr.sh's namespace, beside the user's manager.
    shift
    src=$1 log=$2
    home=$(getent passwd "$HB_USERMGR_USER" | cut -d: -f6)
    tools=$src/tools/e2e
    # shellcheck source=tests/e2e/verdicts.sh
    . "$src/tests/e2e/verdicts.sh"
    asu() { "$tools/usermgr.sh" as-user -- "$@"; }
    name=${HB_USERMGR_USER//-/}
    P=$home/$name
    slug=$name
    pname=$(compose_project_of "$P")
    container=${pname}_app_1
    busybox=$(command -v busybox)
    setup='set -e
        P=$1 name=$2 slug=$3 busybox=$4
        mkdir -p "$HOME/rootfs/bin" "$P/src"
        cp "$busybox" "$HOME/rootfs/bin/busybox"
        for applet in sh sleep cat; do ln -s busybox "$HOME/rootfs/bin/$applet"; done
        tar -C "$HOME/rootfs" -c . | podman import --change "CMD [\"/bin/sleep\", \"100000\"]" - "localhost/$name:1" >/dev/null
        echo checkout >"$P/src/marker"
        printf "services:\n  app:\n    image: localhost/%s:1\n    init: true\n    volumes:\n      - ./src:/srv/src\n" "$name" >"$P/compose.yaml"
        git -C "$P" init -q .
        git -C "$P" add -A
        git -C "$P" -c user.email=t@example.invalid -c user.name=t commit -qm app
        /usr/bin/hostbridge install --project-dir "$P" --backend compose --compose-file compose.yaml \
            --compose-cmd podman-compose --slug "$slug" --accept-uncontained-engine
        "$P/untracked/hostbridge/request" --timeout 300 up
        cp "$P/untracked/hostbridge/request" "$HOME/request.saved"'
    out=$(asu bash -c "$setup" _ "$P" "$name" "$slug" "$busybox" 2>&1) ||
        die "the live install: $(tail -n 30 <<<"$out")"
    check "the live install: the agent's up started $container on the pin" eval \
        '[ "$(asu podman container inspect --format "{{range .Mounts}}{{.Source}}{{end}}" "$container" 2>/dev/null)" = "$home/.cache/hostbridge/run/$slug/.hostbridge-binds/src" ]'
    check "the live install: hostbridge-$slug.path is active" \
        eval '[ "$(asu systemctl --user is-active "hostbridge-$slug.path")" = active ]'

    # The prerm uninstalls every install in every user's home: the other
    # e2e tests' throwaway users (hb-e2e-*), running beside this one, are
    # not the package's to see. In this private mount namespace alone,
    # /etc/passwd lists them not, but this run's user.
    [ "$(readlink /proc/self/ns/mnt)" != "$(readlink /proc/1/ns/mnt)" ] ||
        die "not in a mount namespace of its own: /etc/passwd is left alone"
    users=$(mktemp "/tmp/$HB_USERMGR_USER.passwd.XXXXXX")
    { grep -v '^hb-e2e-' /etc/passwd && grep "^$HB_USERMGR_USER:" /etc/passwd; } >"$users"
    chmod 0644 "$users"
    mount --bind "$users" /etc/passwd || die "cannot hide the other tests' users from the prerm"
    DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq hostbridge >"$log" 2>&1 ||
        fail "apt-get purge hostbridge: $(tail -n 20 "$log")"
    umount /etc/passwd
    rm -f "$users"
    # apt runs dpkg on a pty: its lines end in \r\n.
    sed -i 's/\r$//' "$log"
    sed 's/^/  purge| /' "$log"
    check "prerm: ran uninstall for $HB_USERMGR_USER's install $slug" \
        grep -qF "user $HB_USERMGR_USER, install $slug, project $P: hostbridge uninstall --slug $slug" "$log"
    check "prerm: says it brought $container down" grep -qxF "      stopped and removed $container" "$log"

    check "the units are gone: hostbridge-$slug.path is not loaded" \
        eval '! asu systemctl --user cat "hostbridge-$slug.path" >/dev/null 2>&1 && [ "$(asu systemctl --user is-active "hostbridge-$slug.path")" != active ]'
    check "the agent's request is no longer answered" \
        eval '! asu env HOSTBRIDGE_SPOOL="$P/untracked/hostbridge" "$home/request.saved" --timeout 8 ping >/dev/null 2>&1'

    # The person's clean-up, as the prerm printed it for this install (none
    # when uninstall did it all; the old prerm's rm -rf of the run tree).
    sed -n "/install $slug, project/,/# kept:/p" "$log" | grep '^    rm ' | sed 's/^    //' >"$home/cleanup.sh"
    asu sh -e "$home/cleanup.sh" || fail "the printed clean-up failed: $(cat "$home/cleanup.sh")"
    again=$(grep -A1 -F "start the stack again" "$log" | tail -n 1 | sed 's/^ *//')
    check "prerm: printed the command that starts the stack again" \
        test "$again" = "cd $P && /usr/bin/podman-compose -p $pname -f $P/compose.yaml up -d"
    [ -n "$again" ] || again="cd $P && podman-compose -p $pname -f $P/compose.yaml up -d"
    asu sh -c "$again" >"$home/again.log" 2>&1
    shows_checkout() {
        [ "$(asu podman container inspect --format '{{.State.Running}}' "$container" 2>/dev/null)" = true ] &&
            [ "$(asu podman exec "$container" cat /srv/src/marker 2>/dev/null)" = checkout ]
    }
    check "the person's stack starts with podman-compose after the purge" shows_checkout
    asu podman stop -t 5 "$container" >/dev/null 2>&1
    asu podman start "$container" >>"$home/again.log" 2>&1
    check "and starts again after a stop (its bind source exists)" shows_checkout
    shows_checkout || cat "$home/again.log"
    [ "$failures" -eq 0 ]
    exit
fi
if [ "${1:-}" = __teardown ]; then
    # As root, in the namespace, before the manager stops.
    name=${HB_USERMGR_USER//-/}
    ids=$("$2/tools/e2e/usermgr.sh" as-user -- podman ps -aq 2>/dev/null)
    # shellcheck disable=SC2086 # a list of ids
    [ -z "$ids" ] || "$2/tools/e2e/usermgr.sh" as-user -- podman rm -f -t 0 $ids >/dev/null 2>&1
    "$2/tools/e2e/usermgr.sh" as-user -- podman rmi -f "localhost/$name:1" >/dev/null 2>&1
    exit 0
fi

[ $# -eq 2 ] || { echo "usage: purge_live.sh SOURCE_DIR LOG" >&2; exit 64; }
src=$(readlink -f -- "$1") log=$2
tools=$src/tools/e2e
for tool in podman podman-compose setpriv git; do
    command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
why=$("$tools/usermgr.sh" check 2>&1) || { echo "$why"; exit 77; }
prefix=hb-e2e-pkg-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
out=$("$tools/testuser.sh" create "$prefix" 2>&1)
case $? in
    0) home=$(tail -n 1 <<<"$out") ;;
    77) echo "$out"; exit 77 ;;
    *) echo "FAIL: testuser.sh create: $out"; exit 1 ;;
esac
install -D -o "$prefix" -g "$prefix" -m 0644 "$src/examples/demo-app/containers.conf" \
    "$home/.config/containers/containers.conf" || exit 1
cd "$home" || exit 1
"$tools/usermgr.sh" run --as root --name "$prefix-mgr" \
    --teardown "$(printf '%q ' "$self" __teardown "$src")" "$prefix" -- "$self" __inner "$src" "$log"
rc=$?
cd / || exit 1
"$tools/remove-run.sh" "$prefix" --user || rc=1
exit "$rc"
