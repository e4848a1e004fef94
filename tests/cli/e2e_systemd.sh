#!/bin/bash
# e2e_systemd.sh BIN_DIR root|rootless: the admin tool against a real
# systemd --user manager (tools/e2e/usermgr.sh): install enables the path
# unit, a request fires the drain, `up` runs in a `systemd-run --user
# --scope` unit under the service's hardening and outlives the oneshot,
# doctor names a failed path unit and its printed fix brings it back,
# uninstall leaves no unit behind. Exit 77 (reason printed) where the host
# cannot run a user manager; label e2e.
set -uo pipefail

self=$(readlink -f -- "${BASH_SOURCE[0]}")
here=$(dirname -- "$self")
tools=$(readlink -f -- "$here/../../tools/e2e")

fail() {
    echo "FAIL: $*"
    exit 1
}
pass() { echo "PASS: $*"; }

# Polls `cmd` (a string for eval) until it succeeds, for up to $1 seconds.
wait_for() {
    local limit=$1
    shift
    local i
    for ((i = 0; i < limit * 10; i++)); do
        eval "$*" && return 0
        sleep 0.1
    done
    return 1
}

inner() { # BIN_DIR WORK SLUG MODE, inside the manager's environment
    local bin=$1 work=$2 slug=$3 mode=$4
    local p=$work/$slug
    local hb=$bin/hostbridge
    local path_unit=hostbridge-$slug.path service=hostbridge-$slug.service
    local unitdir=${XDG_CONFIG_HOME:-$HOME/.config}/systemd/user
    local root_flag=()
    [ "$mode" = root ] && root_flag=(--allow-root)

    mkdir -p "$p" && git -C "$p" init -q . || fail "git init"
    # The stack runs from its approved copy in the run tree
    # (executor/run_tree.hpp), so it writes to the checkout by absolute path.
    cat >"$p/stack" <<STACK
#!/bin/sh
printf '%s\\n' "\$*" >> '$p/calls.log'
if [ "\$1" = start ]; then
    # A long-lived "application", detached the way a container engine is.
    setsid sleep 300 </dev/null >/dev/null 2>&1 &
    echo \$! > '$p/app.pid'
    # Slower than the drain takes a decision up: \`allow\` must wait for
    # the end, not report one when the decision is taken (issue 48).
    sleep 2
fi
echo "stack ran: \$*"
STACK
    chmod 0755 "$p/stack"
    printf 'services:\n  api:\n    build: .\n' >"$p/compose.yaml"

    out=$("$hb" install --project-dir "$p" --stack-bin "$p/stack" "${root_flag[@]}" 2>&1) ||
        fail "install: $out"
    grep -q "$path_unit: enabled and started" <<<"$out" || fail "install did not enable: $out"
    [ "$(systemctl --user is-enabled "$path_unit")" = enabled ] || fail "path unit not enabled"
    [ "$(systemctl --user is-active "$path_unit")" = active ] || fail "path unit not active"
    pass "install enabled and started $path_unit"
    for prop in NoNewPrivileges=no RestrictRealtime=yes KillMode=process; do
        systemctl --user show "$service" -p "${prop%%=*}" | grep -qx "$prop" || fail "$service lacks $prop"
    done
    pass "service hardening in effect"

    out=$("$hb" doctor --slug "$slug") || fail "doctor after install: $out"
    pass "doctor healthy with enabled units"

    out=$("$p/untracked/hostbridge/request" --timeout 30 status 2>&1) || fail "status: $out $(cat $HOME/.local/state/hostbridge/$slug/service.log)"
    grep -q "stack ran: status" <<<"$out" || fail "status output: $out"
    pass "a request fired the drain through the path unit"

    # up is held for a person (without an engine user the engine runs as
    # the person: admin/install/policy_engine_guard.hpp); the person allows
    # the agent's up, and the drain that takes the decision up runs it.
    local policy=${XDG_CONFIG_HOME:-$HOME/.config}/hostbridge/$slug/policy.conf
    grep -qx MODE_up=ask "$policy" || fail "a stack install without an engine user did not seed MODE_up=ask: $(grep MODE_up "$policy")"
    name=$("$p/untracked/hostbridge/request" --no-wait up) || fail "publish up"
    name=${name##*/}
    wait_for 30 '"$hb" pending --slug "$slug" 2>/dev/null | grep -qx "request: *$name"' ||
        fail "up was not held for a person: $("$hb" pending --slug "$slug" 2>&1)"
    digest=$("$hb" pending --slug "$slug" |
        awk -v n="$name" '$1 == "request:" && $2 == n { getline; if ($1 == "digest:") print $2 }')
    out=$("$hb" allow --slug "$slug" "$name" "$digest" 2>&1) || fail "allow up: $out"
    # allow reports the end the audit log records, so it is there already.
    grep -q "\"state\": *\"done\"" "$p/untracked/hostbridge/responses/$name.response.json" 2>/dev/null ||
        fail "allow returned before up was done: $out"
    grep -q "^$name: the executor checked it again and ran it: succeeded" <<<"$out" ||
        fail "allow did not report how up went: $out"
    pass "allow reported the end of the run it handed over"
    local app
    app=$(cat "$p/app.pid") || fail "up did not start the app"
    grep -q "hostbridge-$slug-up-.*\.scope" "/proc/$app/cgroup" ||
        fail "the app is not in a scope: $(cat "/proc/$app/cgroup")"
    wait_for 30 '[ "$(systemctl --user is-active '"$service"')" = inactive ]' ||
        fail "the drain did not finish"
    kill -0 "$app" 2>/dev/null || fail "the app died with the oneshot"
    pass "up ran in a systemd-run scope under the hardening and outlived the oneshot"
    kill "$app"

    out=$("$hb" install --project-dir "$p" --stack-bin "$p/stack" "${root_flag[@]}" 2>&1) ||
        fail "second install: $out"
    grep -q "nothing changed" <<<"$out" || fail "second install changed things: $out"
    pass "second install: nothing changed"

    out=$("$hb" install --project-dir "$p" --stack-bin "$p/stack" "${root_flag[@]}" --no-systemd 2>&1) ||
        fail "--no-systemd install: $out"
    grep -q "$path_unit: disabled (--no-systemd)" <<<"$out" || fail "not disabled: $out"
    [ "$(systemctl --user is-enabled "$path_unit")" = enabled ] && fail "still enabled"
    out=$("$hb" install --project-dir "$p" --stack-bin "$p/stack" "${root_flag[@]}" 2>&1) ||
        fail "back to systemd: $out"
    grep -q "$path_unit: enabled and started" <<<"$out" || fail "not enabled again: $out"
    pass "--no-systemd disables the unit an earlier install enabled, and back"

    # A drain that never drains crash-loops the service into its start
    # limit, and systemd fails the path unit with it.
    mkdir -p "$unitdir/$service.d"
    printf '[Unit]\nStartLimitBurst=2\n[Service]\nExecStart=\nExecStart=/bin/true\n' \
        >"$unitdir/$service.d/break.conf"
    systemctl --user daemon-reload
    name=$("$p/untracked/hostbridge/request" --no-wait ping) || fail "publish ping"
    name=${name##*/}
    wait_for 20 '[ "$(systemctl --user is-active '"$path_unit"')" = failed ]' ||
        fail "the path unit did not fail: $(systemctl --user status "$path_unit" 2>&1)"
    rm -r "$unitdir/$service.d"
    systemctl --user daemon-reload
    out=$("$hb" doctor --slug "$slug")
    [ $? -eq 1 ] || fail "doctor missed the failed path unit: $out"
    grep -q "^PROBLEM: the path unit $path_unit has failed" <<<"$out" || fail "doctor: $out"
    fixes=$(grep '^systemctl --user ' <<<"$out")
    [ -n "$fixes" ] || fail "doctor printed no fix: $out"
    pass "doctor named the failed path unit"
    while IFS= read -r fix; do
        eval "$fix" || fail "fix failed: $fix"
    done <<<"$fixes"
    local response=$p/untracked/hostbridge/responses/$name.response.json
    wait_for 30 'grep -q "\"state\": *\"done\"" "'"$response"'" 2>/dev/null' ||
        fail "the pending ping was not answered after the fix"
    out=$("$hb" doctor --slug "$slug") || fail "doctor after the fix: $out"
    pass "doctor's fix brought the bridge back"

    wait_for 30 '[ "$(systemctl --user is-active '"$service"')" != activating ]'
    out=$("$hb" uninstall --slug "$slug" 2>&1) || fail "uninstall: $out"
    [ -e "$unitdir/$path_unit" ] && fail "unit file left"
    [ "$(systemctl --user is-enabled "$path_unit" 2>/dev/null)" = enabled ] && fail "still enabled"
    systemctl --user list-units --all --no-legend "hostbridge-$slug*" | grep -q . &&
        fail "units left: $(systemctl --user list-units --all --no-legend "hostbridge-$slug*")"
    pass "uninstall removed the units"
    return 0
}

if [ "${2:-}" = --inner ]; then
    inner "$1" "$3" "$4" "$5"
    exit $?
fi

bin=${1:?usage: e2e_systemd.sh BIN_DIR root|rootless}
mode=${2:?usage: e2e_systemd.sh BIN_DIR root|rootless}
skip() {
    echo "SKIP: $*"
    exit 77
}
[ "$(id -u)" -eq 0 ] || skip "needs root (to start a user manager in a cgroup of its own)"
reason=$("$tools/usermgr.sh" check 2>&1)
case $? in
    0) ;;
    77) skip "${reason#SKIP: }" ;;
    *) echo "$reason" >&2 && exit 1 ;;
esac

prefix=hb-e2e-cli-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
work=/tmp/$prefix
stage=/tmp/$prefix.tools
user=root
rc=1
cleanup() {
    cd / || true # the work dir goes away
    [ "$mode" = rootless ] && "$tools/testuser.sh" delete "$prefix" >/dev/null 2>&1
    rm -rf --one-file-system "$work" "$stage"
    if ! "$tools/leftovers.sh" "$prefix"; then
        echo "FAIL: the run left things behind"
        rc=1
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'rc=130; exit 130' INT TERM HUP

mkdir -m 0755 "$work" || exit 1
home_args=(--home "$work/home")
mkdir -m 0700 "$work/home"
# shellcheck source=tools/e2e/as-test-user.sh
. "$tools/as-test-user.sh"
[ "$mode" = rootless ] && as_test_user "$prefix" "$work"
# The user runs this script and the binaries: copies it can reach wherever
# the checkout and the build tree are (a directory of mode 0700, as /root).
"$tools/stage.sh" "$stage" "$bin" || exit 1
cd "$work" || exit 1
"$stage/tools/e2e/usermgr.sh" run "${home_args[@]}" --name "$prefix-mgr" "$user" -- \
    "$stage/tests/cli/e2e_systemd.sh" "$stage/bin" --inner "$work" "$prefix" "$mode"
rc=$?
