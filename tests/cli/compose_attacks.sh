#!/bin/bash
# shellcheck disable=SC2016 # ${UNSET} and friends are the literal attack text
# compose_attacks.sh BIN_DIR DEMO_APP: the compose attacks of issue 19
# against real podman-compose (Debian's 1.0.3) on a copy of the demo app.
# Each row first shows that podman-compose really reads what the agent
# planted (`--dry-run up -d` prints the podman commands it would run), then
# that hostbridge refuses or names it. `--dry-run` still creates the
# project's network and volume: both are removed again on exit. Exit 77
# (reason printed) where podman-compose or podman is missing.
set -uo pipefail

bin=$(readlink -f -- "$1")
demo=$(readlink -f -- "$2")
hb=$bin/hostbridge

command -v podman-compose >/dev/null || {
    echo "SKIP: podman-compose is not installed"
    exit 77
}
command -v podman >/dev/null || {
    echo "SKIP: podman is not installed"
    exit 77
}

work=$(mktemp -d /tmp/hb-compose-attacks.XXXXXX)
# A unique basename: podman-compose names the project after it.
name=hbatk$$
projects=()
cleanup() {
    local p
    for p in "${projects[@]}"; do
        podman network rm -f "${p}_default" >/dev/null 2>&1
        podman volume rm -f "${p}_db-data" >/dev/null 2>&1
    done
    rm -rf -- "$work"
}
trap cleanup EXIT

failures=0
passes=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}
pass() {
    echo "PASS: $*"
    passes=$((passes + 1))
}

export HOME=$work/home XDG_CONFIG_HOME=$work/home/config XDG_STATE_HOME=$work/home/state
export XDG_RUNTIME_DIR=$work/home/run XDG_CACHE_HOME=$work/home/cache
mkdir -p "$XDG_CONFIG_HOME" "$XDG_STATE_HOME" "$XDG_RUNTIME_DIR" "$XDG_CACHE_HOME"
chmod 0700 "$XDG_RUNTIME_DIR"
root_flag=()
[ "$(id -u)" = 0 ] && root_flag=(--allow-root)

# new_project DIR: a git work tree holding the demo app.
new_project() {
    mkdir -p "$1"
    cp -a "$demo/." "$1/"
    git -C "$1" init -q .
    git -C "$1" add -A
    git -C "$1" -c user.email=t@example.invalid -c user.name=t commit -qm demo
}

# dry_run DIR PROJECT [ARGS...]: what podman-compose would run, in DIR
# (the caller adds PROJECT to projects first: this runs in a subshell).
dry_run() {
    local dir=$1 project=$2
    shift 2
    (cd "$dir" && timeout 120 podman-compose --dry-run -p "$project" "$@" up -d 2>&1)
}

evil='services:
  evil:
    image: busybox
    privileged: true
    volumes: ["/:/host"]
'

# --- row 1: the stack backend; the agent adds podman-compose.yaml ---------
p=$work/stack/$name
new_project "$p"
out=$("$hb" install --project-dir "$p" --stack-bin "$p/stack" --compose-file "$p/compose.yaml" \
    --slug stack-$$ --no-systemd "${root_flag[@]}" 2>&1) || fail "stack install: $out"
printf '%s' "$evil" >"$p/podman-compose.yaml"
projects+=("${name}s")
out=$(dry_run "$p" "${name}s")
if grep -q -- '--privileged' <<<"$out" && grep -q -- '-v /:/host' <<<"$out"; then
    pass "podman-compose without -f merges a planted podman-compose.yaml (privileged, /:/host)"
else
    fail "podman-compose did not read the planted podman-compose.yaml: $out"
fi
out=$("$hb" doctor --slug stack-$$ 2>&1)
if [ $? -eq 1 ] && grep -q '^PROBLEM: trusted file podman-compose.yaml' <<<"$out"; then
    pass "the planted podman-compose.yaml is a changed pin (doctor, the gate)"
else
    fail "doctor did not name podman-compose.yaml: $out"
fi

# --- the compose backend: one install, then each edit of the agent --------
p=$work/compose/$name
new_project "$p"
out=$("$hb" install --project-dir "$p" --compose-cmd podman-compose --slug compose-$$ \
    --no-systemd "${root_flag[@]}" 2>&1) || fail "compose install: $out"
state=$XDG_STATE_HOME/hostbridge/compose-$$
config=$XDG_CONFIG_HOME/hostbridge/compose-$$/bridge.json
orig=$(cat "$p/compose.yaml")
pins=$(sha256sum "$config")

# The rendered file in a run tree named like the checkout: podman-compose
# builds from the checkout, reads .env from the tree, names the project as
# before.
tree=$work/tree/$name
mkdir -p "$tree"
cp "$state/rendered/compose.yaml" "$tree/compose.yaml"
cp "$state/approved/.env" "$tree/.env"
projects+=("$name")
out=$(cd "$tree" && timeout 120 podman-compose --dry-run -f "$tree/compose.yaml" up -d 2>&1)
if grep -q -- "podman build -t ${name}_api -f $p/services/api/Containerfile $p\$" <<<"$out" &&
    grep -q -- "com.docker.compose.project=$name " <<<"$out"; then
    pass "the rendered compose.yaml builds from the checkout and keeps the project name"
else
    fail "the rendered compose.yaml in the run tree: $out"
fi

# with_service TEXT: the demo's compose.yaml with TEXT (a service) first
# under services:.
with_service() {
    awk -v add="$1" '{ print } /^services:$/ { printf "%s", add }' <<<"$orig"
}

# approve_refuses WHAT WHY: approve --yes exits 1 naming WHY and a line,
# and bridge.json is unchanged.
approve_refuses() {
    local what=$1 why=$2 out code
    out=$(timeout 25 "$hb" approve --slug compose-$$ --yes 2>&1)
    code=$?
    if [ $code -eq 1 ] && grep -q -- "$why" <<<"$out" && grep -q 'line [0-9]' <<<"$out" &&
        [ "$(sha256sum "$config")" = "$pins" ]; then
        pass "approve refuses $what"
    else
        fail "approve on $what (exit $code): $out"
    fi
}

# --- row 2: extends.file with interpolation -------------------------------
printf '%s' "$evil" >"$p/base.yaml"
with_service '  api2:
    extends:
      file: base${UNSET}.yaml
      service: evil
' >"$p/compose.yaml"
projects+=("${name}i")
out=$(dry_run "$p" "${name}i" -f "$p/compose.yaml")
if grep -q -- "--name=${name}i_api2_1.*--privileged" <<<"$out"; then
    pass "podman-compose interpolates base\${UNSET}.yaml and reads base.yaml"
else
    fail "podman-compose did not read base.yaml: $out"
fi
approve_refuses 'extends.file base${UNSET}.yaml' 'interpolation'

# --- row 3: extends.file through /proc/self/root ---------------------------
with_service "  api2:
    extends:
      file: /proc/self/root$p/base.yaml
      service: evil
" >"$p/compose.yaml"
projects+=("${name}p")
out=$(dry_run "$p" "${name}p" -f "$p/compose.yaml")
if grep -q -- "--name=${name}p_api2_1.*--privileged" <<<"$out"; then
    pass "podman-compose reads the checkout's base.yaml through /proc/self/root"
else
    fail "podman-compose did not read /proc/self/root/...: $out"
fi
approve_refuses 'extends.file /proc/self/root/<project>/base.yaml' 'same device and inode'

# --- row 4: two extends keys -----------------------------------------------
printf 'services:\n  b:\n    image: busybox\n' >"$p/good.yaml"
with_service '  api2:
    extends: {file: good.yaml, service: b}
    extends: {file: base.yaml, service: evil}
' >"$p/compose.yaml"
projects+=("${name}d")
out=$(dry_run "$p" "${name}d" -f "$p/compose.yaml")
if grep -q -- "--name=${name}d_api2_1.*--privileged" <<<"$out"; then
    pass "PyYAML (podman-compose) takes the last of two extends keys"
else
    fail "podman-compose did not take the last extends: $out"
fi
approve_refuses 'a service with two extends keys' 'appears twice'

# --- row 5: a merge-key bomb -----------------------------------------------
{
    echo 'l0: &l0 {a: 1}'
    for level in 1 2 3 4 5 6 7 8; do
        echo "l$level: &l$level"
        for i in 0 1 2 3 4 5 6 7 8 9 10 11; do
            printf '  k%s:\n    <<: *l%s\n' "$i" $((level - 1))
        done
    done
    printf '%s\n' "$orig"
} >"$p/compose.yaml"
approve_refuses 'a merge-key bomb (8 levels of 12 aliases), within 25 s' 'expand to more than'

echo "$passes passed, $failures failed"
[ $failures -eq 0 ]
