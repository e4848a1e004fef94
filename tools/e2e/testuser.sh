#!/bin/bash
# testuser.sh: a throwaway unprivileged user for rootless e2e runs.
#
#   testuser.sh create NAME   useradd -m (which adds /etc/subuid and /etc/subgid
#                             ranges), overlay storage for rootless podman,
#                             /dev/net/tun usable by users (slirp4netns);
#                             prints the home directory
#   testuser.sh delete NAME   kill the user's processes, userdel -r (which
#                             removes its subuid and subgid ranges)
#
# NAME must start with hb-e2e- so that delete can never touch a real account.
# Needs root. Exit 77 (with the reason) where rootless podman cannot work.
set -euo pipefail

die() {
    echo "testuser: $*" >&2
    exit "${2:-1}"
}
skip() {
    echo "SKIP: $*" >&2
    exit 77
}

usage() {
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 64
}

check_name() {
    [[ $1 =~ ^hb-e2e-[a-z0-9-]{1,24}$ ]] || die "bad user name '$1' (want hb-e2e-[a-z0-9-]{1,24})" 64
}

cmd_create() {
    local name=$1
    [ "$(id -u)" -eq 0 ] || skip "needs root to create a user"
    for tool in useradd userdel newuidmap newgidmap; do
        command -v "$tool" >/dev/null || skip "$tool missing (apt-get install passwd uidmap)"
    done
    [ -c /dev/net/tun ] || skip "no /dev/net/tun: rootless podman has no network"
    ! getent passwd "$name" >/dev/null || die "user $name exists already"
    useradd -m -s /bin/sh "$name"
    grep -q "^$name:" /etc/subuid && grep -q "^$name:" /etc/subgid || {
        userdel -r "$name" 2>/dev/null
        die "useradd gave $name no subuid/subgid range (SUB_UID_COUNT in /etc/login.defs?)"
    }
    local home
    home=$(getent passwd "$name" | cut -d: -f6)
    # slirp4netns opens /dev/net/tun as the user; no udev here sets 0666.
    chmod 0666 /dev/net/tun
    # Native overlay in a user namespace (kernel >= 5.11) is much faster than vfs.
    install -d -o "$name" -g "$name" -m 0700 "$home/.config" "$home/.config/containers"
    printf '[storage]\ndriver = "overlay"\n' >"$home/.config/containers/storage.conf"
    chown "$name:" "$home/.config/containers/storage.conf"
    echo "$home"
}

cmd_delete() {
    local name=$1 uid pids
    [ "$(id -u)" -eq 0 ] || die "needs root" 77
    getent passwd "$name" >/dev/null || return 0
    uid=$(id -u "$name")
    # Everything this throwaway user runs was started by the test.
    for sig in TERM KILL; do
        pids=$(pgrep -u "$uid" || true)
        [ -n "$pids" ] || break
        # shellcheck disable=SC2086 # one word per pid
        kill -s "$sig" $pids 2>/dev/null || true
        sleep 0.3
    done
    # Rootless container storage holds files of subordinate ids: root removes them.
    userdel -r "$name" 2>/dev/null || userdel "$name"
    local home=/home/$name
    [ ! -d "$home" ] || rm -rf --one-file-system "$home"
    # userdel removed the subordinate ranges itself, under shadow's lock
    # (/etc/.pwd.lock, an fcntl lock). A `sed -i` here, which takes no lock,
    # could drop the range a concurrent test's useradd had just written.
    ! grep -q "^$name:" /etc/subuid /etc/subgid ||
        die "userdel left a range of $name in /etc/subuid or /etc/subgid"
}

[ $# -eq 2 ] || usage
check_name "$2"
case $1 in
    create) cmd_create "$2" ;;
    delete) cmd_delete "$2" ;;
    *) usage ;;
esac
