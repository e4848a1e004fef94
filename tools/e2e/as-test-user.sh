# Sourced by tools/e2e/smoke.sh and tests/cli/e2e_systemd.sh for a rootless
# run: as_test_user NAME DIR makes the throwaway user (testuser.sh), gives it
# DIR and sets the caller's `user` and `home_args`. Where the host cannot
# make one, testuser.sh exits 77 with "SKIP: why": the caller's rc becomes 77
# (its cleanup trap exits with rc) and its skip() says why.
as_test_user() {
    local out
    out=$("$(dirname -- "${BASH_SOURCE[0]}")/testuser.sh" create "$1" 2>&1) || {
        [ $? -eq 77 ] && rc=77 && skip "${out#SKIP: }"
        echo "$out" >&2 && exit 1
    }
    user=$1
    home_args=()
    chown "$user:" "$2"
}
