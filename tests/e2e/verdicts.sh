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
