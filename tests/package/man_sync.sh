#!/bin/bash
# The man pages against the commands they describe, so they cannot drift:
#   - each renders without a groff warning (groff -ww);
#   - every command in `hostbridge --help` has a "hostbridge CMD" section and
#     no section names a command that does not exist;
#   - the options of every --help (each subcommand, the executor, the client,
#     hostbridge-agent and its two commands) are exactly the options its man
#     section mentions, and each subcommand's usage lines name every option
#     it accepts (asked of its parser, for every option word the pages use);
#   - every key of a bridge.json and policy.conf that install really writes
#     appears in hostbridge.json(5) / hostbridge-policy.conf(5);
#   - every binary and the client print the one project version on
#     --version, and each page's header carries it.
# Usage: man_sync.sh BIN_DIR CLIENT_SCRIPT MAN_DIR
set -uo pipefail
bin=$1 client=$2 man=$3
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }

# --option words of a --help text or of a roff section (\- unescaped).
options() { sed 's/\\-/-/g' | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u; }
# The lines of a roff page from the line matching $2 up to the next .SS/.SH.
section() { awk -v start="$2" '$0 ~ start {on=1; next} on && /^\.S[HS]/ {exit} on' "$1"; }
same() {  # same NAME EXPECTED ACTUAL
    local missing extra
    missing=$(comm -23 <(echo "$2") <(echo "$3") | tr '\n' ' ')
    extra=$(comm -13 <(echo "$2") <(echo "$3") | tr '\n' ' ')
    if [ -z "$missing$extra" ]; then
        pass "$1"
    else
        fail "$1: in --help but not the man page: [${missing% }]; in the man page but not --help: [${extra% }]"
    fi
}

version=$("$bin/hostbridge" --version | awk '{print $2}')
[ -n "$version" ] || fail "hostbridge --version printed nothing"
for b in hostbridge hostbridge-executor hostbridge-parser hostbridge-snapshot hostbridge-pin hostbridge-agent; do
    got=$("$bin/$b" --version)
    [ "$got" = "$b $version" ] && pass "$b --version: $got" || fail "$b --version: '$got'"
done
got=$(sh "$client" --version)
[ "$got" = "hostbridge-request $version" ] && pass "client --version: $got" ||
    fail "client --version: '$got'"

for page in "$man"/*.[1-8]; do
    warnings=$(groff -ww -z -man "$page" 2>&1)
    [ -z "$warnings" ] && pass "$(basename "$page") renders without warnings" ||
        fail "$(basename "$page"): $warnings"
    grep -q "^\.TH .*\"hostbridge $version\"" "$page" || fail "$(basename "$page"): .TH lacks version $version"
done

page=$man/hostbridge.1
commands=$("$bin/hostbridge" --help | awk '/^  [a-z]+  / {print $1}' | sort -u)
sections=$(sed -n 's/^\.SS "hostbridge \([a-z]*\)"$/\1/p' "$page" | sort -u)
[ -n "$commands" ] || fail "no commands found in hostbridge --help"
same "hostbridge(1) has a section for every command" "$commands" "$sections"
same "hostbridge(1) OPTIONS" "$("$bin/hostbridge" --help | grep -vE '^  [a-z]+  ' | options)" \
    "$(section "$page" '^[.]SH OPTIONS' | options)"
# Every --option word hostbridge(1) names (each --help's are in it, above):
# the candidates each command is asked whether it accepts.
candidates=$(options <"$page" | grep -vx -e --help -e --version)
# Whether `hostbridge CMD` accepts OPTION, by the parser itself: an unknown
# option is refused as such before --help is answered (one that takes a
# value may take --help for it and refuse that: still known).
accepts() {
    local err
    err=$("$bin/hostbridge" "$1" "$2" --help 2>&1 >/dev/null) && return 0
    [[ ${err//:/} != *"unknown option $2"* ]] # the client writes "option: --x"
}
for c in $commands; do
    same "hostbridge(1) $c" "$("$bin/hostbridge" "$c" --help | options)" \
        "$(section "$page" "^[.]SS \"hostbridge $c\"\$" | options)"
    # The usage lines (up to the first blank one) name every option the
    # text explains on a line of its own: install's once left out
    # --unpinned-bind.
    explained=$("$bin/hostbridge" "$c" --help | grep -E '^ +--[a-z]' | sed 's/^ *//; s/ .*//' | options)
    usage=$("$bin/hostbridge" "$c" --help | awk '/^$/ {exit} {print}' | options)
    missing=$(comm -23 <(echo "$explained") <(echo "$usage") | grep -vx -e '' -e --help | tr '\n' ' ')
    [ -z "$missing" ] && pass "hostbridge $c --help: its usage names every option it explains" ||
        fail "hostbridge $c --help: its usage lacks [${missing% }]"
    # ... and every option the command accepts, explained or not.
    unnamed=""
    for o in $candidates; do
        grep -qx -- "$o" <<<"$usage" || ! accepts "$c" "$o" || unnamed+="$o "
    done
    [ -z "$unnamed" ] && pass "hostbridge $c --help: its usage names every option it accepts" ||
        fail "hostbridge $c --help: it accepts [${unnamed% }], which its usage does not name"
done

page=$man/hostbridge-executor.8
same "hostbridge-executor(8) options" "$("$bin/hostbridge-executor" --help | options)" \
    "$(section "$page" '^[.]SH OPTIONS' | options)"
for c in drain watch; do
    "$bin/hostbridge-executor" --help | grep -q "^  $c " || fail "executor --help lacks $c"
    grep -q "^\.B $c\$" "$page" || fail "hostbridge-executor(8) lacks the command $c"
done

same "hostbridge-request(1) options" "$(sh "$client" --help | options)" \
    "$(section "$man/hostbridge-request.1" '^[.]SH OPTIONS' | options)"

# hostbridge-agent: its usage against the SYNOPSIS, `request --help` against
# the request section, and the usage's block of mcp options against the mcp
# section.
page=$man/hostbridge-agent.1
agent=$bin/hostbridge-agent
same "hostbridge-agent(1) SYNOPSIS" "$("$agent" --help | options)" \
    "$(section "$page" '^[.]SH SYNOPSIS' | options)"
same "hostbridge-agent(1) request" "$("$agent" request --help | options)" \
    "$(section "$page" '^[.]SS "hostbridge-agent request"$' | options)"
mcp_options=$("$agent" mcp --help | awk '/^`mcp`/ {on=1; next} on && /^$/ {exit} on' | options)
[ -n "$mcp_options" ] || fail "no mcp options found in hostbridge-agent mcp --help"
same "hostbridge-agent(1) mcp" "$mcp_options" \
    "$(section "$page" '^[.]SS "hostbridge-agent mcp"$' | options)"

# A real install writes the files the two file-format pages describe.
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
mkdir "$work/home" "$work/app"
git -C "$work/app" init -q
printf 'services:\n  web:\n    build: .\n' >"$work/app/compose.yaml"
if ! env -u XDG_CONFIG_HOME -u XDG_STATE_HOME HOME="$work/home" \
    "$bin/hostbridge" install --project-dir "$work/app" --stack-bin /bin/true \
    --agent-container agent --network net --engine /bin/true \
    --verb-timeout join-network=60 --no-systemd --allow-root >"$work/install.log" 2>&1; then
    cat "$work/install.log"
    fail "install for the file-format checks"
else
    conf=$work/home/.config/hostbridge/app
    keys=$(python3 -c '
import json, sys
def walk(v):
    if isinstance(v, dict):
        for k, x in v.items():
            print(k); walk(x)
    elif isinstance(v, list):
        for x in v: walk(x)
walk(json.load(open(sys.argv[1])))' "$conf/bridge.json" | sort -u)
    page_text=$(sed 's/\\-/-/g' "$man/hostbridge.json.5")
    missing=""
    for k in $keys; do grep -qw -- "$k" <<<"$page_text" || missing="$missing $k"; done
    [ -z "$missing" ] && pass "hostbridge.json(5) names every key of bridge.json ($(echo $keys | wc -w))" ||
        fail "hostbridge.json(5) lacks the bridge.json keys:$missing"
    page_text=$(sed 's/\\-/-/g' "$man/hostbridge-policy.conf.5")
    missing=""
    for k in $(grep -oE '^MODE_[a-z-]+' "$conf/policy.conf"); do
        grep -q -- "$k" <<<"$page_text" || missing="$missing $k"
    done
    documented=$(grep -oE 'MODE_[a-z-]*[a-z]' <<<"$page_text" | sort -u)
    seeded=$(grep -oE '^MODE_[a-z-]+' "$conf/policy.conf" | sort -u)
    same "hostbridge-policy.conf(5) keys" "$seeded" "$documented"
fi

[ "$failures" -eq 0 ] && echo "man pages in sync" || echo "$failures failure(s)"
[ "$failures" -eq 0 ]
