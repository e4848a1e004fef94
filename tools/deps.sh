#!/bin/sh
# Installs the Debian packages hostbridge needs, when missing.
# Usage: tools/deps.sh build|test|demo
# As root it runs apt-get; otherwise it prints the exact command and fails.
set -eu

build="cmake g++ make pkg-config clang clang-format libclang-rt-14-dev libseccomp-dev \
libcap-ng-dev nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev libssl-dev \
libyaml-cpp-dev"
test_extra="git dash busybox-static util-linux procps systemd dbus-user-session podman runc \
podman-compose uidmap iproute2 passwd e2fsprogs gawk original-awk mawk netavark aardvark-dns \
iptables catatonit slirp4netns tar python3 groff-base man-db dpkg-dev file lintian acl curl"
# podman only recommends netavark's DNS, an --init binary and rootless
# networking: the e2e session and ./demo need them; python3 runs bench/real_path.py.
# groff-base and man-db check the man pages; dpkg-dev (dpkg-shlibdeps), file
# and lintian build and check the Debian package (tests/package); acl's
# setfacl is what `hostbridge engine setup` runs (tests/e2e/engine_user.sh);
# curl posts a held request's summary in tests/executor/test_notify_command.cpp.

case "${1:-build}" in
    build) want="$build" ;;
    test | demo) want="$build $test_extra" ;;
    *) echo "usage: tools/deps.sh build|test|demo" >&2; exit 2 ;;
esac

missing=""
for p in $want; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "hostbridge needs these Debian packages; install them as root:" >&2
    echo "apt-get install -y$missing" >&2
    exit 1
fi
echo "installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq $missing >/dev/null
