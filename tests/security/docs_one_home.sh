#!/bin/bash
# docs_one_home.sh SRC_DIR [BIN_DIR]: holds the one home of each fact the
# docs keep (docs/README.md) to the code it describes, so it cannot drift:
#   - docs/DECIDE-AND-RUN.md, "The gates, in order": the gates are named in
#     the order executor/decide.cpp's decide() calls them;
#   - docs/CONFIG.md, "Every key": every key common/config.cpp reads has a
#     row (under its parent where the reader names one), and every row
#     names only keys the reader knows;
#   - the exit codes: the agent clients' in docs/PROTOCOL.md ("Agent
#     clients"), the host commands' in docs/COMMANDS.md ("Conventions"):
#     the man pages' EXIT STATUS, the clients' and (with BIN_DIR) every
#     command's --help list exactly those, and no other page of docs/,
#     README.md or SECURITY.md gives a client's code again;
#   - the verbs: docs/PROTOCOL.md's table ("Verbs") has ipc/verbs.hpp's rows
#     with their argument and kind, and the clients' --help name them all;
#   - the limits: each row of docs/PROTOCOL.md's table ("Limits") is the
#     value of the constant it names, wherever the sources define it;
#   - README.md starts with the two commands, ./demo and ./run-tests, and
#     says what hostbridge is on its first screen;
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

    # binary_section BINARY HEADING: the section shows each command of
    # BINARY's --help usage lines, and each of its options.
    binary_section() {
        local b=$1 c
        text=$(section "$page" "$2")
        for c in $("$bin/$b" --help | sed -nE "s/^(usage:)? +$b ([a-z-]+).*/\\2/p"); do
            grep -qF "$b $c" <<<"$text" || {
                echo "docs_one_home: $doc does not show $b $c"
                bad=1
            }
        done
        missing "$("$bin/$b" --help)" "$b" "$text"
    }
    binary_section hostbridge-executor '## hostbridge-executor (run by systemd)'
    binary_section hostbridge-pin '## hostbridge-pin (run by podman unshare)'

    text=$(section "$page" "## hostbridge-agent (the agent's static client and MCP server)")
    missing "$("$bin/hostbridge-agent" --help)" hostbridge-agent "$text"
    missing "$("$bin/hostbridge-agent" request --help)" "hostbridge-agent request" "$text"
    return "$bad"
}

# The first cell of each row of the table between "<!-- $2" and
# "<!-- $2:end" in $1, without backticks, header or rule.
first_cells() {
    block "$1" "<!-- $2 " "<!-- $2:end" |
        awk -F'|' 'NF > 2 {c = $2; gsub(/^ +| +$|`/, "", c); if (NR > 2) print c}'
}
# The lines of a roff page from the line matching $2 up to the next .SS/.SH.
section_roff() { awk -v start="$2" '$0 ~ start {on = 1; next} on && /^\.S[HS]/ {exit} on' "$1"; }
# The exit codes an "Exit: 0 ...; 70 ..." paragraph names: each number (or
# 128+N) at its start or after ", " or "; ".
exit_paragraph_codes() {
    sed 's/\\-/-/g' | awk '/^Exit:/ {on = 1} on && /^$/ {exit} on' | tr '\n' ' ' |
        grep -oE '(Exit:|[,;]) [0-9]+(\+[nN])? ' | grep -oE '[0-9]+(\+[nN])?' | tr N n | sort -u
}
# The codes of a man page's EXIT STATUS section: each ".B CODE" line up to
# the first .PP or the next section.
man_exit_codes() {
    awk '/^\.SH EXIT STATUS/ {on = 1; next} on && /^\.(SH|PP)/ {exit}
        on && /^\.B [0-9]/ {print $2}' "$1" | tr N n | sort -u
}
# The same where EXIT STATUS is one sentence ("0 ..., 1 ..., 2 ...").
man_exit_prose_codes() {
    awk '/^\.SH EXIT STATUS/ {on = 1; next} on && /^\./ {exit} on' "$1" | tr '\n' ' ' |
        sed 's/^/, /' | grep -oE '[,;] [0-9]+ ' | grep -oE '[0-9]+' | sort -u
}

# Exit codes: the agent clients' home is docs/PROTOCOL.md ("Agent
# clients"), the host commands' docs/COMMANDS.md ("Conventions"). Every
# --help and man page that lists them lists exactly those, and no other
# page (docs/, README.md, SECURITY.md) gives a client's code again.
exit_codes() {
    local src=$1 bin=${2:-} doc=docs/PROTOCOL.md hostdoc=docs/COMMANDS.md bad=0
    local codes hostcodes f hits line c
    codes=$(first_cells "$src/$doc" exit-codes | sort -u)
    [ -n "$codes" ] || { echo "docs_one_home: no exit-codes table in $doc"; return 1; }
    hostcodes=$(first_cells "$src/$hostdoc" host-exit-codes | sort -u)
    [ -n "$hostcodes" ] || { echo "docs_one_home: no host-exit-codes table in $hostdoc"; return 1; }
    lists() {  # lists WHAT HOME EXPECTED GOT
        [ "$3" = "$4" ] && return 0
        echo "docs_one_home: $1 lists the exit codes [$(echo $4)]; $2 has [$(echo $3)]"
        bad=1
    }
    lists man/hostbridge-request.1 "$doc" "$codes" "$(man_exit_codes "$src/man/hostbridge-request.1")"
    lists man/hostbridge-agent.1 "$doc" "$codes" "$(man_exit_codes "$src/man/hostbridge-agent.1")"
    lists "man/hostbridge.1, hostbridge request," "$doc" "$codes" \
        "$(section_roff "$src/man/hostbridge.1" '^[.]SS "hostbridge request"$' | exit_paragraph_codes)"
    lists man/hostbridge.1 "$hostdoc" "$hostcodes" "$(man_exit_prose_codes "$src/man/hostbridge.1")"
    lists man/hostbridge-executor.8 "$hostdoc" "$hostcodes" \
        "$(man_exit_prose_codes "$src/man/hostbridge-executor.8")"
    lists "client/hostbridge-request.sh --help" "$doc" "$codes" \
        "$(sh "$src/client/hostbridge-request.sh" --help | exit_paragraph_codes)"
    if [ -n "$bin" ]; then
        lists "hostbridge request --help" "$doc" "$codes" \
            "$("$bin/hostbridge" request --help | exit_paragraph_codes)"
        lists "hostbridge-agent request --help" "$doc" "$codes" \
            "$("$bin/hostbridge-agent" request --help | exit_paragraph_codes)"
        # mcp's codes (0, 64, 70) are the clients' own.
        c=$("$bin/hostbridge-agent" --help | awk '/^Exit:/ {on = 1} on && /^$/ {exit} on' |
            grep -oE '\b[0-9]+\b' | sort -u)
        if [ -z "$c" ] || [ -n "$(comm -23 <(echo "$c") <(echo "$codes"))" ]; then
            echo "docs_one_home: hostbridge-agent --help lists the exit codes [$(echo $c)], not a part of $doc's [$(echo $codes)]"
            bad=1
        fi
        lists "hostbridge --help" "$hostdoc" "$hostcodes" "$("$bin/hostbridge" --help | exit_paragraph_codes)"
        lists "hostbridge-executor --help" "$hostdoc" "$hostcodes" \
            "$("$bin/hostbridge-executor" --help | exit_paragraph_codes)"
        for c in $("$bin/hostbridge" --help | awk '/^  [a-z]+  / {print $1}'); do
            [ "$c" = request ] && continue
            lists "hostbridge $c --help" "$hostdoc" "$hostcodes" \
                "$("$bin/hostbridge" "$c" --help 2>&1 | exit_paragraph_codes)"
        done
    fi
    for f in "$src"/docs/*.md "$src/README.md" "$src/SECURITY.md"; do
        [ "$f" = "$src/$doc" ] && continue
        # "exit 75", "(64,", "70 denied", "64 on a usage error", "...: 75".
        hits=$(grep -nE 'exit(s|ed)? (code |with )?(64|70|75)\b|\((64|70|75)[,)]|\b(64|70|75),? (no answer|`denied|denied|refused|usage|on a usage|on an internal)|: (64|70|75)$' \
            "$f" | cut -d: -f1)
        for line in $hits; do
            echo "docs_one_home: ${f#"$src"/}:$line gives a client's exit code; its home is $doc, \"Agent clients\": link it"
            bad=1
        done
    done
    return "$bad"
}

# The verbs: docs/PROTOCOL.md's table ("Verbs") has one row per row of
# ipc/verbs.hpp, with its argument and kind, and every client's --help
# names exactly those verbs.
verb_set() {
    local src=$1 bin=${2:-} doc=docs/PROTOCOL.md code=ipc/verbs.hpp bad=0 want have v
    # "name|arg|kind" from each {Verb::X, "name", ArgKind::K, mutating, long_lived, ...} row.
    want=$(sed -nE 's/^ *\{Verb::[A-Za-z]+, *"([a-z-]+)", *ArgKind::([A-Za-z]+), *(true|false), *(true|false).*/\1|\2|\3|\4/p' \
        "$src/$code" | awk -F'|' '{
            arg = $2 == "None" ? "none" : $2 == "Service" ? "service" : "buildable service"
            kind = $3 == "true" ? "mutating" : "read-only"
            if ($4 == "true") kind = kind ", long-lived"
            print $1 "|" arg "|" kind }' | sort)
    [ -n "$want" ] || { echo "docs_one_home: no verb rows in $code"; return 1; }
    have=$(block "$src/$doc" '<!-- verbs ' '<!-- verbs:end' |
        awk -F'|' 'NF > 4 && $2 ~ /`/ {
            for (i = 2; i <= 4; i++) gsub(/^ +| +$|`/, "", $i); print $2 "|" $3 "|" $4 }' | sort)
    [ -n "$have" ] || { echo "docs_one_home: no verbs table in $doc"; return 1; }
    while IFS= read -r v; do
        grep -qxF -- "$v" <<<"$have" && continue
        echo "docs_one_home: $code has the verb ${v%%|*} (arg, kind: ${v#*|}); $doc's table does not say so"
        bad=1
    done <<<"$want"
    while IFS= read -r v; do
        grep -qxF -- "$v" <<<"$want" && continue
        echo "docs_one_home: $doc's table says ${v%%|*} (arg, kind: ${v#*|}); $code does not"
        bad=1
    done <<<"$have"
    want=$(cut -d'|' -f1 <<<"$want" | sort)
    help_verbs() {  # the verbs of a usage's "VERB (ping, ..., join-network)"
        tr '\n' ' ' | grep -oE 'VERB \([^)]*\)' | head -n 1 | sed 's/^VERB (//; s/)$//' |
            tr ',' '\n' | awk '{print $1}' | sort
    }
    lists_verbs() {  # lists_verbs WHAT TEXT
        have=$(help_verbs <<<"$2")
        [ "$have" = "$want" ] && return 0
        echo "docs_one_home: $1 names the verbs [$(echo $have)]; $code has [$(echo $want)]"
        bad=1
    }
    lists_verbs "client/hostbridge-request.sh --help" "$(sh "$src/client/hostbridge-request.sh" --help)"
    if [ -n "$bin" ]; then
        lists_verbs "hostbridge request --help" "$("$bin/hostbridge" request --help)"
        lists_verbs "hostbridge-agent request --help" "$("$bin/hostbridge-agent" request --help)"
    fi
    return "$bad"
}

# The limits: each row of docs/PROTOCOL.md's table ("Limits") names a
# constant; every definition of it in the sources evaluates to the row's
# value.
limits() {
    local src=$1 doc=docs/PROTOCOL.md bad=0 rows all what value name want defs expr got
    rows=$(block "$src/$doc" '<!-- limits ' '<!-- limits:end' |
        awk -F'|' 'NF > 4 && $4 ~ /`/ {
            for (i = 2; i <= 4; i++) gsub(/^ +| +$|`/, "", $i); print $3 "|" $4 "|" $2 }')
    [ -n "$rows" ] || { echo "docs_one_home: no limits table in $doc"; return 1; }
    # Every definition of every constant the table names, read once.
    # shellcheck disable=SC2086 # the directories are words
    all=$(cd "$src" && grep -rhoE "\b($(limit_names "$src" | paste -sd'|')) = [^;]+;" \
        --include=*.hpp --include=*.cpp $source_dirs 2>/dev/null)
    while IFS='|' read -r value name what; do
        want=""
        if [[ $value =~ ^([0-9]+)( bytes| KiB| MiB)?$ ]]; then
            case ${BASH_REMATCH[2]} in
                ' MiB') want=$((BASH_REMATCH[1] * 1048576)) ;;
                ' KiB') want=$((BASH_REMATCH[1] * 1024)) ;;
                *) want=${BASH_REMATCH[1]} ;;
            esac
        else
            echo "docs_one_home: $doc's limit for $what is \"$value\", not N, N bytes, N KiB or N MiB"
            bad=1
            continue
        fi
        defs=$(grep -E "^$name = " <<<"$all" | sed -E "s/^$name = ([^;]+);$/\1/")
        if [ -z "$defs" ]; then
            echo "docs_one_home: $doc's limit for $what names \`$name\`, which no source defines"
            bad=1
            continue
        fi
        while IFS= read -r expr; do
            # Only numbers, + - * << and parentheses: a name would count as 0.
            got=$(sed -E 's/([0-9])(ULL|UL|ull|ul|u|U|L)\b/\1/g' <<<"$expr")
            if [[ $got =~ ^[0-9\ +*()\<-]+$ ]]; then
                got=$( (echo $((got))) 2>/dev/null) || got="not a number"
            else
                got="not evaluated here (a name in it)"
            fi
            [ "$got" = "$want" ] && continue
            echo "docs_one_home: $doc says $what is at most $value; \`$name = $expr\` is $got"
            bad=1
        done <<<"$defs"
    done <<<"$rows"
    return "$bad"
}

# README.md's first screen: the title, then one block of exactly the two
# commands (`./demo`, `./run-tests`, each an executable of the
# repository), then what hostbridge is, all within the first 24 lines.
readme_start() {
    local src=$1 doc=README.md bad=0 commands first
    first=$(head -n 24 "$src/$doc")
    commands=$(awk 'NR == 1 {next} /^$/ && !on {next} /^```/ {if (on) exit; on = 1; next}
        on {print $1; next} {exit}' "$src/$doc")
    if [ "$commands" != "$(printf './demo\n./run-tests')" ]; then
        echo "docs_one_home: $doc does not start with a block of ./demo and ./run-tests (it has: $(echo $commands))"
        bad=1
    fi
    for c in demo run-tests; do
        [ -f "$src/$c" ] && [ -x "$src/$c" ] && continue
        echo "docs_one_home: $doc starts with ./$c, which is not an executable of the repository"
        bad=1
    done
    grep -q '^hostbridge lets ' <<<"$first" || {
        echo "docs_one_home: $doc's first screen (24 lines) does not say what hostbridge is (\"hostbridge lets ...\")"
        bad=1
    }
    return "$bad"
}

check() {
    local bad=0
    gate_order "$1" || bad=1
    config_keys "$1" || bad=1
    exit_codes "$1" "${2:-}" || bad=1
    verb_set "$1" "${2:-}" || bad=1
    limits "$1" || bad=1
    readme_start "$1" || bad=1
    if [ -n "${2:-}" ]; then command_list "$1" "$2" || bad=1; fi
    return "$bad"
}

# The source directories a limit's constant may be defined in.
source_dirs="admin client common display engines executor ipc parser sandbox"
# The constants docs/PROTOCOL.md's limits table names.
limit_names() {
    block "$1/docs/PROTOCOL.md" '<!-- limits ' '<!-- limits:end' |
        awk -F'|' 'NF > 4 {gsub(/[ `]/, "", $4); if ($4 ~ /^k[A-Za-z0-9]+$/) print $4}'
}

# Copies what the checks read into a scratch tree: the pages, the man
# pages, and the sources whose facts they hold.
scratch() {
    local src=$1 tmp=$2 f name
    rm -rf "${tmp:?}"/* || return 1
    for f in docs man README.md SECURITY.md demo run-tests executor/decide.cpp common/config.cpp ipc/verbs.hpp \
        client/hostbridge-request.sh $(for name in $(limit_names "$src"); do
            (cd "$src" && grep -rlE "\b$name = " --include=*.hpp --include=*.cpp $source_dirs 2>/dev/null)
        done | sort -u); do
        mkdir -p "$tmp/$(dirname "$f")" && cp -R "$src/$f" "$tmp/$f" || return 1
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

    # caught WHAT CHECK PATTERN FILE SED_SCRIPT: a fresh scratch tree with
    # FILE edited by SED_SCRIPT; CHECK (a function above, given BIN_DIR when
    # $with_bin is set) must say PATTERN.
    with_bin=""
    caught() {
        scratch "$src" "$tmp" && sed -i -E "$5" "$tmp/$4" || return 1
        out=$("$2" "$tmp" $with_bin)
        expect_caught "$1" "$3"
    }
    local mcp_end
    mcp_end=$(($(wc -l <"$src/docs/MCP.md") + 1))

    caught "two gates swapped in the doc" gate_order 'puts `check_tcb` after `try_admit`' \
        docs/DECIDE-AND-RUN.md 's/^(4\. \*\*Integrity gate\*\* \(`)check_tcb`/\1try_admit`/;
            s/^(9\. \*\*Rate limit\*\* \(`)try_admit`/\1check_tcb`/'
    caught "a gate renamed in the code" gate_order 'names the gate `build_run_tree`' \
        executor/decide.cpp 's/build_run_tree\(config\)/build_tree(config)/'
    caught "a key missing from the table" config_keys 'reads the key `seconds` in `settle`' \
        docs/CONFIG.md '/^\| `settle.seconds` \|/d'
    caught "a key the reader dropped" config_keys 'names the key `notify_send`' \
        common/config.cpp 's/"notify_send"\}\)/"notify"})/; s/optional\("notify_send"\)/optional("notify")/'
    # Exit codes: a code changed in its home, a man page or a --help that
    # lists another set, a host page with a client's code, a second home.
    caught "an exit code changed in its home" exit_codes \
        'man/hostbridge-request.1 lists the exit codes [0 128+n 64 70 75]; docs/PROTOCOL.md has [0 128+n 64 70 76]' \
        docs/PROTOCOL.md 's/^\| 75 \| no terminal answer/| 76 | no terminal answer/'
    caught "a man page listing another exit code" exit_codes \
        'man/hostbridge-agent.1 lists the exit codes [0 129 64 70 75]' \
        man/hostbridge-agent.1 '/^\.SH EXIT STATUS/,/^\.SH/ s/^\.B 128\+n$/.B 129/'
    caught "a --help without an exit code" exit_codes \
        'client/hostbridge-request.sh --help lists the exit codes [0 64 70 75]' \
        client/hostbridge-request.sh 's/; 128\+N interrupted by signal N while waiting\./; signals are reported./'
    caught "a host man page with a client's code" exit_codes \
        'man/hostbridge-executor.8 lists the exit codes [0 1 64]; docs/COMMANDS.md has [0 1 2]' \
        man/hostbridge-executor.8 '/^\.SH EXIT STATUS/,/^\.SH/ s/2 usage error/64 usage error/'
    caught "an exit code explained a second time" exit_codes \
        "docs/MCP.md:$mcp_end gives a client's exit code" \
        docs/MCP.md '$a The client exits 75 when no answer came in time.'
    # Verbs: a row gone, a kind wrong, a verb the clients' usage lacks.
    caught "a verb missing from the table" verb_set 'has the verb init (arg, kind: none|mutating, long-lived)' \
        docs/PROTOCOL.md '/^\| `init` \| none \|/d'
    caught "a verb of the wrong kind" verb_set "docs/PROTOCOL.md's table says down (arg, kind: none|read-only)" \
        docs/PROTOCOL.md 's/^\| `down` \| none \| mutating \|/| `down` | none | read-only |/'
    caught "a verb missing from a client's --help" verb_set 'client/hostbridge-request.sh --help names the verbs' \
        client/hostbridge-request.sh 's/rebuild SERVICE, init,$/rebuild SERVICE,/'
    # Limits: the code's value changed, a constant renamed.
    caught "a limit changed in the code" limits \
        "says a request file's body is at most 4096 bytes; \`kMaxBody = 8192\` is 8192" \
        ipc/wire.hpp 's/kMaxBody = 4096;/kMaxBody = 8192;/'
    caught "a limit in MiB changed in the code" limits \
        'is at most 16 MiB; `kMaxPinnedBytes = 32u << 20` is 33554432' \
        common/integrity_gate.hpp 's/kMaxPinnedBytes = 16u << 20;/kMaxPinnedBytes = 32u << 20;/'
    caught "a limit naming no constant" limits 'names `kMaxPolicyLength`, which no source defines' \
        docs/PROTOCOL.md 's/`kMaxPolicyBytes`/`kMaxPolicyLength`/'
    # README: a third command in the first block, what it is pushed down.
    caught "a third command at the README's start" readme_start 'it has: ./demo ./install-it ./run-tests' \
        README.md '0,/^\.\/run-tests /s//.\/install-it  # a third\n&/'
    caught "what hostbridge is pushed off the first screen" readme_start 'does not say what hostbridge is' \
        README.md '0,/^hostbridge lets /s//\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n&/'
    [ -n "$bin" ] || { echo "docs_one_home selftest: no BIN_DIR, the --help checks are not tried"; return "$failed"; }
    with_bin=$bin
    # A home that differs from what the binaries print on --help.
    caught "a host command's --help against its home" exit_codes \
        'hostbridge doctor --help lists the exit codes [0 1 2]; docs/COMMANDS.md has [0 2 3]' \
        docs/COMMANDS.md 's/^\| 1 \| failure \|$/| 3 | failure |/'
    caught "hostbridge-agent's --help against its home" exit_codes \
        'hostbridge-agent --help lists the exit codes [0 64 70], not a part of' \
        docs/PROTOCOL.md 's/^\| 70 \| `denied`/| 71 | `denied`/'
    # An option of one command, and a whole command, gone from the page.
    caught "an option missing from COMMANDS.md" command_list 'hostbridge install prints --max-held' \
        docs/COMMANDS.md 's/--max-held/--max-kept/g'
    caught "a command missing from COMMANDS.md" command_list 'no section for hostbridge upgrade' \
        docs/COMMANDS.md '/^\| `upgrade` \|/d; s/^### upgrade$/### upgrading/'
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
