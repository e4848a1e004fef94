#!/bin/bash
# docs_one_home.sh SRC_DIR [BIN_DIR]: holds the one home of each fact the
# docs keep (docs/README.md) to the code it describes, so it cannot drift:
#   - docs/DECIDE-AND-RUN.md, "The gates, in order": the gates are named in
#     the order executor/decide.cpp's decide() calls them;
#   - docs/CONFIG.md, "Every key": every key common/config.cpp reads has a
#     row (under its parent where the reader names one), and every row
#     names only keys the reader knows;
#   - with BIN_DIR, docs/COMMANDS.md: every command `hostbridge --help`
#     lists has a row and a section, every option each command's --help
#     prints is in its section, and so for hostbridge-executor and
#     hostbridge-agent (--help and --version are the conventions').
# Prints each difference; exit 1 then.
# docs_one_home.sh --selftest SRC_DIR [BIN_DIR]: breaks each home once in a
# scratch copy and fails unless the check above catches it.
set -uo pipefail

# The lines between a line starting with $2 and one starting with $3 in $1.
block() { awk -v b="$2" -v e="$3" 'index($0, e) == 1 {on = 0} on; index($0, b) == 1 {on = 1}' "$1"; }

gate_order() {
    local src=$1 doc=docs/DECIDE-AND-RUN.md code=executor/decide.cpp bad=0
    local body tokens token line last=0 previous=""
    # decide()'s body without comments. A gate's place is the last line
    # naming it: an earlier mention (the gate refusal that takes a rate-limit
    # slot, before the limiter's own turn) is not where that gate stands.
    body=$(awk '/^Decision decide\(/ {on = 1} on {sub(/\/\/.*/, ""); print} on && /^}/ {exit}' \
        "$src/$code")
    [ -n "$body" ] || { echo "docs_one_home: no decide() in $code"; return 1; }
    tokens=$(block "$src/$doc" '<!-- gate-order' '<!-- gate-order:end' |
        sed -nE 's/^[0-9]+\. \*\*[^*]+\*\* \(`([^`]+)`.*/\1/p')
    [ -n "$tokens" ] || { echo "docs_one_home: no gate-order list in $doc"; return 1; }
    while IFS= read -r token; do
        line=$(grep -nwF -- "$token" <<<"$body" | tail -n 1 | cut -d: -f1)
        if [ -z "$line" ]; then
            echo "docs_one_home: $doc names the gate \`$token\`, which decide() in $code does not call"
            bad=1
        elif [ "$line" -le "$last" ]; then
            echo "docs_one_home: $doc puts \`$token\` after \`$previous\`; decide() in $code calls it before"
            bad=1
        else
            last=$line
            previous=$token
        fi
    done <<<"$tokens"
    return "$bad"
}

# "PARENT KEY" for every key common/config.cpp reads: the keys listed in
# each `Object NAME(value, PARENT, {...})` (PARENT "-" for the top level,
# "*" where it is not a string literal), and each .required("KEY") or
# .optional("KEY") (parent "*").
code_config_keys() {
    awk '{
        line = $0
        sub(/\/\/.*/, "", line)
        if (stmt == "" && line ~ /Object [a-z]+\(/) stmt = " "
        if (stmt != "") {
            stmt = stmt line
            if (line ~ /;/) {
                parent = "*"
                if (match(stmt, /Object [a-z]+\([^,]+, *"[a-z_]*"/)) {
                    p = substr(stmt, RSTART, RLENGTH)
                    sub(/.*, *"/, "", p); sub(/"$/, "", p)
                    parent = p == "" ? "-" : p
                }
                rest = index(stmt, "{") ? substr(stmt, index(stmt, "{")) : ""
                while (match(rest, /"[a-z0-9_]+"/)) {
                    print parent, substr(rest, RSTART + 1, RLENGTH - 2)
                    rest = substr(rest, RSTART + RLENGTH)
                }
                stmt = ""
            }
        }
        while (match(line, /\.(required|optional)\("[a-z0-9_]+"\)/)) {
            k = substr(line, RSTART, RLENGTH)
            sub(/^[^"]*"/, "", k); sub(/".*/, "", k)
            print "*", k
            line = substr(line, RSTART + RLENGTH)
        }
    }' "$1" | sort -u
}

config_keys() {
    local src=$1 doc=docs/CONFIG.md code=common/config.cpp bad=0
    local pairs paths parent key known component
    pairs=$(code_config_keys "$src/$code")
    [ -n "$pairs" ] || { echo "docs_one_home: no keys found in $code"; return 1; }
    # Each row's first cell: one or more `dotted.keys[]`, as ".a.b.c." lines.
    paths=$(block "$src/$doc" '<!-- config-keys' '<!-- config-keys:end' |
        awk -F'|' 'NF > 2 && $2 ~ /`/ {print $2}' | grep -oE '`[^`]+`' |
        tr -d '`' | sed 's/\[\]//g; s/^/./; s/$/./')
    [ -n "$paths" ] || { echo "docs_one_home: no key table in $doc"; return 1; }
    while read -r parent key; do
        case $parent in
            -) grep -qE "^\.$key\." <<<"$paths" ;;
            '*') grep -qF ".$key." <<<"$paths" ;;
            *) grep -qF ".$parent.$key." <<<"$paths" ;;
        esac || {
            [ "$parent" = - ] && where="the top level" || where="\`$parent\`"
            [ "$parent" = '*' ] && where="an object"
            echo "docs_one_home: $code reads the key \`$key\` in $where; $doc has no row for it"
            bad=1
        }
    done <<<"$pairs"
    known=" $(cut -d' ' -f2 <<<"$pairs" | sort -u | tr '\n' ' ') "
    for component in $(tr '.' '\n' <<<"$paths" | sort -u); do
        [[ $component == '<'*'>' || $known == *" $component "* ]] && continue
        echo "docs_one_home: $doc names the key \`$component\`, which $code does not read"
        bad=1
    done
    return "$bad"
}

# The --option words of a text, but --help and --version.
options() { grep -oE -- '--[a-z][a-z0-9-]*' | grep -vxE -- '--(help|version)' | sort -u; }
# The text of $1 from the heading line $2 (a literal) to the next heading
# of the same level or higher.
section() {
    awk -v h="$2" 'on && /^#/ { n = index($0, " ") - 1; if (n <= level) exit }
        $0 == h { on = 1; level = index($0, " ") - 1 } on' "$1"
}

command_list() {
    local src=$1 bin=$2 doc=docs/COMMANDS.md bad=0 admin commands c heading text option
    local page=$src/$doc
    missing() {  # missing WHAT WHERE TEXT: each option of WHAT's --help must be in TEXT
        local want
        for want in $(options <<<"$1"); do
            grep -qF -- "$want" <<<"$3" && continue
            echo "docs_one_home: $2 prints $want on --help; $doc does not say it there"
            bad=1
        done
    }
    admin=$(section "$page" '## hostbridge (the admin tool)')
    [ -n "$admin" ] || { echo "docs_one_home: no \"## hostbridge (the admin tool)\" in $doc"; return 1; }
    commands=$("$bin/hostbridge" --help | awk '/^  [a-z]+  / {print $1}')
    [ -n "$commands" ] || { echo "docs_one_home: no commands in hostbridge --help"; return 1; }
    for c in $commands; do
        grep -qE "^\| \`$c\` \|" <<<"$admin" || {
            echo "docs_one_home: $doc's table of hostbridge commands has no row for $c"
            bad=1
        }
        heading=$(grep -E "^### .*\b$c\b" <<<"$admin" | head -n 1)
        if [ -z "$heading" ]; then
            echo "docs_one_home: $doc has no section for hostbridge $c"
            bad=1
            continue
        fi
        text=$(section "$page" "$heading")
        missing "$("$bin/hostbridge" "$c" --help 2>&1)" "hostbridge $c" "$text"
    done
    for c in $(grep -E '^### ' <<<"$admin" | sed 's/^### //; s/,//g'); do
        grep -qxF -- "$c" <<<"$commands" || [ "$c" = suggest ] || [ "$c" = edit ] || {
            echo "docs_one_home: $doc has a section for hostbridge $c, which --help does not list"
            bad=1
        }
    done

    text=$(section "$page" '## hostbridge-executor (run by systemd)')
    for c in $("$bin/hostbridge-executor" --help | sed -nE 's/^(usage:)? +hostbridge-executor ([a-z-]+).*/\2/p'); do
        grep -qF "hostbridge-executor $c" <<<"$text" || {
            echo "docs_one_home: $doc does not show hostbridge-executor $c"
            bad=1
        }
    done
    missing "$("$bin/hostbridge-executor" --help)" hostbridge-executor "$text"

    text=$(section "$page" "## hostbridge-agent (the agent's static client and MCP server)")
    missing "$("$bin/hostbridge-agent" --help)" hostbridge-agent "$text"
    missing "$("$bin/hostbridge-agent" request --help)" "hostbridge-agent request" "$text"
    return "$bad"
}

check() {
    local bad=0
    gate_order "$1" || bad=1
    config_keys "$1" || bad=1
    if [ -n "${2:-}" ]; then command_list "$1" "$2" || bad=1; fi
    return "$bad"
}

# Copies what the checks read into a scratch tree.
scratch() {
    local src=$1 tmp=$2 f
    for f in docs/DECIDE-AND-RUN.md executor/decide.cpp docs/CONFIG.md common/config.cpp \
        docs/COMMANDS.md; do
        mkdir -p "$tmp/$(dirname "$f")" && cp "$src/$f" "$tmp/$f" || return 1
    done
}

selftest() {
    local src=$1 bin=${2:-} tmp out failed=0
    tmp=$(mktemp -d) || return 1
    trap 'rm -rf "$tmp"' RETURN
    expect_caught() {  # expect_caught WHAT PATTERN: the last check must have said PATTERN
        if [[ $out == *"$2"* ]]; then
            echo "docs_one_home selftest: caught $1"
        else
            echo "docs_one_home selftest: $1 was not caught ($out)"
            failed=1
        fi
    }
    scratch "$src" "$tmp" || return 1
    out=$(check "$tmp" "$bin") ||
        { echo "docs_one_home selftest: the tree as it is fails: $out"; return 1; }

    # The rate limit listed before the integrity gate.
    scratch "$src" "$tmp"
    sed -i -E 's/^(4\. \*\*Integrity gate\*\* \(`)check_tcb`/\1try_admit`/;
               s/^(9\. \*\*Rate limit\*\* \(`)try_admit`/\1check_tcb`/' "$tmp/docs/DECIDE-AND-RUN.md"
    out=$(check "$tmp")
    expect_caught "two gates swapped in the doc" 'puts `check_tcb` after `try_admit`'
    # A gate the code no longer has.
    scratch "$src" "$tmp"
    sed -i 's/build_run_tree(config)/build_tree(config)/' "$tmp/executor/decide.cpp"
    out=$(check "$tmp")
    expect_caught "a gate renamed in the code" 'names the gate `build_run_tree`'
    # A key the reader takes that the table lacks, under its parent.
    scratch "$src" "$tmp"
    sed -i '/^| `settle.seconds` |/d' "$tmp/docs/CONFIG.md"
    out=$(check "$tmp")
    expect_caught "a key missing from the table" 'reads the key `seconds` in `settle`'
    # A key the reader no longer knows.
    scratch "$src" "$tmp"
    sed -i 's/"notify_send"})/"notify"})/' "$tmp/common/config.cpp"
    sed -i 's/optional("notify_send")/optional("notify")/' "$tmp/common/config.cpp"
    out=$(check "$tmp")
    expect_caught "a key the reader dropped" 'names the key `notify_send`'
    [ -n "$bin" ] || { echo "docs_one_home selftest: no BIN_DIR, the command list is not tried"; return "$failed"; }
    # An option of one command, and a whole command, gone from the page.
    scratch "$src" "$tmp"
    sed -i 's/--max-held/--max-kept/g' "$tmp/docs/COMMANDS.md"
    out=$(check "$tmp" "$bin")
    expect_caught "an option missing from COMMANDS.md" 'hostbridge install prints --max-held'
    scratch "$src" "$tmp"
    sed -i '/^| `upgrade` |/d; s/^### upgrade$/### upgrading/' "$tmp/docs/COMMANDS.md"
    out=$(check "$tmp" "$bin")
    expect_caught "a command missing from COMMANDS.md" 'no section for hostbridge upgrade'
    return "$failed"
}

usage="usage: docs_one_home.sh [--selftest] SRC_DIR [BIN_DIR]"
if [ "${1:-}" = --selftest ]; then
    [ $# -eq 2 ] || [ $# -eq 3 ] || { echo "$usage" >&2; exit 64; }
    selftest "$2" "${3:-}"
    exit
fi
[ $# -eq 1 ] || [ $# -eq 2 ] || { echo "$usage" >&2; exit 64; }
check "$1" "${2:-}" && echo "docs_one_home: every home agrees with the code it describes"
