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
