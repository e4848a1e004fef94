#!/bin/sh
# Installs the Debian packages hostbridge needs, when missing.
# Usage: tools/deps.sh build|test|demo|demo-docker
#        tools/deps.sh docker-root   prints where the docker the tests run
#                                    lives (/ or the private prefix), or
#                                    exits 1 when there is none
# As root it runs apt-get; otherwise it prints the exact command and fails.
# `test` (and `demo-docker`, for ./demo --engine docker) also gets the
# docker the tests run (docs/DOCKER.md, "The docker the tests run"), or says
# why it cannot and goes on without it.
set -eu

build="cmake g++ make pkg-config clang clang-format libclang-rt-14-dev libseccomp-dev \
libcap-ng-dev nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev libssl-dev \
libyaml-cpp-dev"
test_extra="git dash busybox-static util-linux procps systemd dbus-user-session podman runc \
podman-compose uidmap iproute2 passwd e2fsprogs gawk original-awk mawk netavark aardvark-dns \
iptables catatonit slirp4netns tar python3 groff-base man-db dpkg-dev file lintian acl curl \
rootlesskit"
# podman only recommends netavark's DNS, an --init binary and rootless
# networking: the e2e session and ./demo need them; python3 runs bench/real_path.py.
# groff-base and man-db check the man pages; dpkg-dev (dpkg-shlibdeps), file
# and lintian build and check the Debian package (tests/package); acl's
# setfacl is what `hostbridge engine setup` runs (tests/e2e/engine_user.sh);
# curl posts a held request's summary in tests/executor/test_notify_command.cpp.
# rootlesskit runs the engine user's rootless dockerd (docs/DOCKER.md).

# Debian 13's docker, pinned (docs/DOCKER.md says why these and how they
# are checked). runc and tini's dynamic binary need glibc 2.38: Debian
# 12's runc (above) runs the containers, trixie's tini-static is
# docker-init.
docker_pins="docker.io=26.1.5+dfsg1-9+deb13u1+b1 docker-cli=26.1.5+dfsg1-9+deb13u1+b1 \
docker-compose=2.26.1-4 docker-buildx=0.13.1+ds1-3 containerd=1.7.24~ds1-6+deb13u1 tini=0.19.0-3+b8"
docker_prefix=/opt/hostbridge-test/docker
debian_release=$(. /etc/os-release 2>/dev/null && echo "${ID:-}-${VERSION_ID:-}")

# Where the docker the tests run lives: Debian 13's own, or the prefix.
docker_root() {
    if [ "$debian_release" = debian-13 ]; then
        [ -x /usr/sbin/dockerd ] && echo / && return 0
    elif [ -x "$docker_prefix/root/usr/sbin/dockerd" ] &&
        [ "$(cat "$docker_prefix/pins" 2>/dev/null)" = "$docker_pins" ]; then
        echo "$docker_prefix/root" && return 0
    fi
    return 1
}

# Debian 12: the pinned trixie packages, unpacked into the prefix by apt
# and dpkg-deb alone. apt reads a sources.list, lists and archive of the
# prefix's own (the Dir::* options), never /etc/apt or /var/lib/apt, so
# what the host's apt installs or upgrades does not change.
docker_prefix_fetch() {
    if [ "$debian_release" != debian-12 ]; then
        echo "docker for the tests: skipped: this is $debian_release; the private prefix is made for Debian 12, and Debian 13 installs docker.io itself" >&2
        return 0
    fi
    [ "$(dpkg --print-architecture)" = amd64 ] || {
        echo "docker for the tests: skipped: the pins are amd64's, this is $(dpkg --print-architecture)" >&2
        return 0
    }
    docker_root >/dev/null && return 0
    if [ "$(id -u)" -ne 0 ]; then
        echo "docker for the tests: skipped: making $docker_prefix needs root (run tools/deps.sh test as root)" >&2
        return 0
    fi
    apt_dir=$docker_prefix/apt
    rm -rf "$docker_prefix/root" "$docker_prefix/pins"
    mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$apt_dir/debs" "$docker_prefix/root"
    echo 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main' \
        >"$apt_dir/sources.list"
    # apt downloads as _apt, who must be able to write there.
    chown _apt "$apt_dir/debs" "$apt_dir/lists/partial" "$apt_dir/archives/partial" 2>/dev/null || true
    set -- -o "Dir::Etc::sourcelist=$apt_dir/sources.list" -o Dir::Etc::sourceparts=/dev/null \
        -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache::archives=$apt_dir/archives" \
        -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= -o APT::Get::List-Cleanup=0
    echo "docker for the tests: Debian 13's packages into $docker_prefix" >&2
    # apt checks InRelease against Debian 12's debian-archive-keyring, and
    # each .deb against the SHA256 of the signed Packages index.
    if ! apt-get "$@" -qq update >&2; then
        echo "docker for the tests: skipped: apt-get update of Debian 13 (trixie) failed (above)" >&2
        return 0
    fi
    # shellcheck disable=SC2086
    if ! (cd "$apt_dir/debs" && rm -f ./*.deb && apt-get "$@" -qq download $docker_pins >&2); then
        echo "docker for the tests: skipped: trixie no longer serves one of the pinned versions ($docker_pins): pin the current ones here and in docs/DOCKER.md" >&2
        return 0
    fi
    for deb in "$apt_dir/debs"/*.deb; do dpkg-deb -x "$deb" "$docker_prefix/root"; done
    # Built against glibc 2.38 (Debian 12 has 2.36): never on any PATH.
    rm -f "$docker_prefix/root/usr/bin/tini"
    rm -rf "$apt_dir/debs" "$apt_dir/archives"
    echo "$docker_pins" >"$docker_prefix/pins"
    echo "docker for the tests: $("$docker_prefix/root/usr/sbin/dockerd" --version)" >&2
}

case "${1:-build}" in
    build) want="$build" ;;
    test | demo | demo-docker) want="$build $test_extra" ;;
    docker-root) docker_root; exit $? ;;
    *) echo "usage: tools/deps.sh build|test|demo|demo-docker|docker-root" >&2; exit 2 ;;
esac
# Debian 13 has the docker the tests run as packages of its own.
if { [ "${1:-build}" = test ] || [ "${1:-build}" = demo-docker ]; } && [ "$debian_release" = debian-13 ]; then
    want="$want docker.io docker-cli docker-compose docker-buildx"
fi

missing=""
for p in $want; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing="$missing $p"
    fi
done

if [ -n "$missing" ]; then
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
fi
case "${1:-build}" in test | demo-docker) docker_prefix_fetch ;; esac
