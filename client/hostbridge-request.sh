#!/bin/sh
# hostbridge-request.sh: the agent's client for the hostbridge spool.
# Writes one request, waits for the host's answer, prints its output.
# Contract: docs/PROTOCOL.md, "Agent clients". Plain POSIX sh
# plus awk, od, date, mv, rm and sleep, all of which busybox provides: it has
# to run in a minimal container with no bash, no jq and none of our binaries.
#
# Spool, first match wins (docs/agent-clients.md says why in this order):
#   1. this script's own directory, when it holds requests/, tmp/ and
#      responses/ (the copy `hostbridge install` drops into the spool as
#      `request`);
#   2. $HOSTBRIDGE_SPOOL, when set (used as given, never second-guessed);
#   3. $REPO_ROOT/untracked/hostbridge;
#   4. untracked/hostbridge under `git rev-parse --show-toplevel` (without
#      git: the nearest directory upwards that holds a .git entry).

set -f   # never glob: every expansion below is data
umask 022 # the host may run as another uid: it must be able to read the request
LC_ALL=C # byte semantics for patterns, ${#var} and awk
export LC_ALL

me=hostbridge-request
# The build sets this line to the project's version (packaging/).
version=unreleased
nl='
'
EX_USAGE=64
EX_REFUSED=70
EX_TEMPFAIL=75
# Seconds past a pending answer's expires_at still waited: the host writes
# `expired` on its next activation, not at that second.
pending_grace=10

usage() {
    cat <<'EOF'
usage: hostbridge-request.sh [--timeout SECONDS] [--no-wait]
                             [--lines N] [--since CURSOR] VERB [ARG]

Asks the host, through the hostbridge spool, to run VERB (ping, status,
health, logs SERVICE, up, down, restart SERVICE, rebuild SERVICE, init,
join-network). Which verbs and services are allowed is the host's decision.

  --timeout SECONDS  how long to wait for the host to take the request up
                     (default 120); once it runs, wait for the end; when a
                     person must approve it, wait until it expires
  --no-wait          publish the request, print its name, exit
  --lines N          logs only: the last N lines (1 to 1000), each after
                     the engine's timestamp; with --since, the first N
                     after the cursor
  --since CURSOR     logs only: only the lines after CURSOR, the cursor a
                     previous --lines or --since answer printed
  --help             this text
  --version          print the version

Spool: the script's own directory when it is a spool, else
$HOSTBRIDGE_SPOOL, else $REPO_ROOT/untracked/hostbridge, else
untracked/hostbridge under the git top-level.

After --lines or --since, a done answer prints `cursor: NS:K` on stderr
(pass it as --since to get only what is new) and `more: true` when more
lines wait (ask again with it at once). Where this install's logs takes
neither, the host refuses them.

Exit: 0 done (output on stdout); 70 denied, expired or failed (output on
stdout, reason on stderr); 75 no answer in time (a request the host never
took up is withdrawn; one held for a person's approval never is); 64 usage
error (nothing written); 128+N interrupted by signal N while waiting.
EOF
}

usage_error() {
    printf '%s: %s\n' "$me" "$1" >&2
    usage >&2
    exit "$EX_USAGE"
}

say() {
    printf '%s: %s\n' "$me" "$1" >&2
}

# --- arguments ------------------------------------------------------------

timeout=120
no_wait=0
has_lines=0
has_since=0
while [ $# -gt 0 ]; do
    case $1 in
        --help | -h) usage; exit 0 ;;
        --version) printf '%s %s\n' "$me" "$version"; exit 0 ;;
        --no-wait) no_wait=1 ;;
        --timeout)
            [ $# -ge 2 ] || usage_error "--timeout needs a number of seconds"
            timeout=$2
            shift
            ;;
        --timeout=*) timeout=${1#--timeout=} ;;
        --lines)
            [ $# -ge 2 ] || usage_error "--lines needs a number of lines"
            lines=$2 has_lines=1
            shift
            ;;
        --lines=*) lines=${1#--lines=} has_lines=1 ;;
        --since)
            [ $# -ge 2 ] || usage_error "--since needs a cursor"
            since=$2 has_since=1
            shift
            ;;
        --since=*) since=${1#--since=} has_since=1 ;;
        --) shift; break ;;
        -*) usage_error "unknown option: $1" ;;
        *) break ;;
    esac
    shift
done
case $timeout in
    '' | *[!0123456789]*) usage_error "--timeout takes whole seconds, not '$timeout'" ;;
esac
# Ten digits would overflow some shells' arithmetic; nobody waits 30 years.
[ ${#timeout} -le 9 ] || usage_error "--timeout is too large"
timeout=$((timeout + 0)) # drop leading zeros: 010 must not read as octal

[ $# -ge 1 ] || usage_error "missing VERB"
[ $# -le 2 ] || usage_error "too many arguments"
verb=$1
has_arg=0
if [ $# -eq 2 ]; then
    arg=$2
    has_arg=1
fi

# Shapes only (docs/PROTOCOL.md): the host decides what is allowed. A verb is
# lowercase letters and dashes, as the request name schema demands.
lower=abcdefghijklmnopqrstuvwxyz
digits=0123456789
case $verb in
    '' | [!$lower]* | *[!$lower-]*)
        usage_error "VERB must be lowercase letters and dashes, starting with a letter: '$verb'" ;;
esac
[ ${#verb} -le 64 ] || usage_error "VERB is longer than 64 bytes"
if [ "$has_arg" -eq 1 ]; then
    case $arg in
        '' | [!$lower]* | *[!$lower${digits}_-]*)
            usage_error "ARG must match ^[a-z][a-z0-9_-]*\$: '$arg'" ;;
    esac
    [ ${#arg} -le 64 ] || usage_error "ARG is longer than 64 bytes"
fi

# The log window (docs/PROTOCOL.md, `lines` and `since`), checked by the
# host's rules here so that a typo fails before it takes a rate-limit slot.
# 0, or digits without a leading zero, at most $2 of them.
is_count() {
    case $1 in
        0) return 0 ;;
        '' | 0* | *[!$digits]*) return 1 ;;
    esac
    [ ${#1} -le "$2" ]
}
windowed=$((has_lines + has_since))
if [ "$windowed" -gt 0 ]; then
    [ "$verb" = logs ] || usage_error "--lines and --since are for logs only, not '$verb'"
    windowed=1
fi
if [ "$has_lines" -eq 1 ]; then
    { is_count "$lines" 4 && [ "$lines" -ge 1 ] && [ "$lines" -le 1000 ]; } ||
        usage_error "--lines must be a number from 1 to 1000, not '$lines'"
fi
if [ "$has_since" -eq 1 ]; then
    # NS:K: nanoseconds since the epoch (at most INT64_MAX), then the lines
    # of that instant already returned (at most 1000000).
    since_ns=${since%%:*}
    since_k=${since#*:}
    case $since in *:*) ;; *) since_k=x ;; esac
    # Nineteen digits may pass INT64_MAX, beyond some shells' arithmetic:
    # compared as strings of equal length.
    if ! is_count "$since_ns" 19 || ! is_count "$since_k" 7 || [ "$since_k" -gt 1000000 ] ||
        { [ ${#since_ns} -eq 19 ] &&
            ! awk 'BEGIN { exit !((ARGV[1] "") <= "9223372036854775807") }' "$since_ns"; }; then
        usage_error "--since must be a cursor that a logs answer returned (NS:K), not '$since'"
    fi
fi

# --- spool ----------------------------------------------------------------

is_spool() {
    [ -d "$1/requests" ] && [ -d "$1/tmp" ] && [ -d "$1/responses" ]
}

# git's answer when git is installed, else the nearest directory upwards
# holding a .git entry (what git would find; a container may lack git).
git_top_level() {
    if command -v git >/dev/null 2>&1; then
        # safe.directory: the checkout may belong to another uid inside a
        # container; asking for its top level runs nothing from it.
        git -c safe.directory='*' rev-parse --show-toplevel 2>/dev/null
        return
    fi
    dir=$(pwd -P) || return 1
    while :; do
        if [ -e "$dir/.git" ] || [ -L "$dir/.git" ]; then
            printf '%s\n' "${dir:-/}"
            return 0
        fi
        [ -n "$dir" ] || return 1
        dir=${dir%/*}
    done
}

find_spool() {
    case $0 in
        */*) self_dir=${0%/*} ;;
        *) self_dir=. ;;
    esac
    if is_spool "$self_dir"; then
        spool=$self_dir
        return 0
    fi
    if [ -n "${HOSTBRIDGE_SPOOL:-}" ]; then
        spool=$HOSTBRIDGE_SPOOL
        is_spool "$spool" && return 0
        say "HOSTBRIDGE_SPOOL=$spool is not a hostbridge spool (no requests/, tmp/ and responses/ in it)"
        return 1
    fi
    tried=""
    if [ -n "${REPO_ROOT:-}" ]; then
        spool=$REPO_ROOT/untracked/hostbridge
        is_spool "$spool" && return 0
        tried="$spool"
    fi
    top=$(git_top_level) || top=""
    if [ -n "$top" ]; then
        spool=$top/untracked/hostbridge
        is_spool "$spool" && return 0
        tried="${tried:+$tried, }$spool"
    fi
    say "no hostbridge spool found${tried:+ (tried $tried)}; set HOSTBRIDGE_SPOOL to the spool directory"
    return 1
}

# Not finding the spool is a usage error: the caller has to point us at it.
find_spool || exit "$EX_USAGE"

# --- publish --------------------------------------------------------------

stamps=$(date -u '+%Y%m%dT%H%M%SZ %Y-%m-%dT%H:%M:%SZ') || exit "$EX_TEMPFAIL"
ts=${stamps% *}
requested_at=${stamps#* }
# 8 random bytes as 16 lowercase hex digits; od prints them space-separated.
# shellcheck disable=SC2046 # splitting od's output is the point
set -- $(od -A n -N 8 -t x1 /dev/urandom)
nonce=$1$2$3$4$5$6$7$8
case $nonce in
    *[!0123456789abcdef]*) nonce="" ;;
esac
if [ ${#nonce} -ne 16 ]; then
    say "cannot read 8 random bytes from /dev/urandom"
    exit "$EX_TEMPFAIL"
fi

name=$ts-$verb-$nonce.json
request=$spool/requests/$name
response=$spool/responses/$name.response.json
tmp_file=$spool/tmp/$name.$$.part

# Checked values need no escaping; the keys in the order docs/PROTOCOL.md
# gives, each optional one only when given.
body="{\"verb\":\"$verb\""
[ "$has_arg" -eq 0 ] || body="$body,\"arg\":\"$arg\""
[ "$has_lines" -eq 0 ] || body="$body,\"lines\":\"$lines\""
[ "$has_since" -eq 0 ] || body="$body,\"since\":\"$since\""
body="$body,\"requested_at\":\"$requested_at\"}"

# Giving up on a request the host never took up withdraws it, so it cannot
# run later behind the back of a caller that was told it did not happen.
# The rename either wins against the host's claim or fails: never both.
withdraw() {
    if mv "$request" "$spool/tmp/$name.$$.withdrawn" 2>/dev/null; then
        rm -f "$spool/tmp/$name.$$.withdrawn"
        say "request $name withdrawn: it will not run"
    elif [ -f "$response" ]; then
        say "the host has request $name; it may still run: see responses/$name.response.json"
    else
        say "request $name has left requests/; it may still run"
    fi
}

# Interrupted: before publishing, only our temp file is to be removed;
# after, the request is withdrawn like on a timeout.
created=0
published=0
on_signal() {
    if [ "$published" -eq 1 ] && [ "${state:-}" = pending ]; then
        # Held by the host for a person: never withdrawn.
        say "interrupted: request $name was not decided; it may still be allowed later on the host${expires:+ (until $expires_at)}: see responses/$name.response.json"
    elif [ "$published" -eq 1 ]; then
        withdraw
    elif [ "$created" -eq 1 ]; then
        rm -f "$tmp_file"
    fi
    exit "$1"
}
trap 'on_signal 130' INT
trap 'on_signal 143' TERM
trap 'on_signal 129' HUP

# noclobber: the temp file is created, never an existing one reused (and an
# existing one is not ours to delete). The subshell keeps a failed
# redirection of the special builtin `:` from ending the script.
if ! (set -C && : >"$tmp_file") 2>/dev/null; then
    say "cannot create a file in $spool/tmp"
    exit "$EX_TEMPFAIL"
fi
created=1
if ! printf '%s\n' "$body" >"$tmp_file" 2>/dev/null || ! mv "$tmp_file" "$request"; then
    rm -f "$tmp_file"
    say "cannot publish into $spool/requests"
    exit "$EX_TEMPFAIL"
fi
published=1

if [ "$no_wait" -eq 1 ]; then
    printf '%s\n' "$name"
    exit 0
fi

# --- response -------------------------------------------------------------

# Reads the host's response (one JSON object; nlohmann/json's compact dump,
# but any valid JSON layout is accepted) and prints nine lines:
#   S<state>  E<exit code, empty for null>  R<reason>|N  O<output>|N
#   V<reason made visible, pending only>|N  X[<expires_at as epoch> <as written>]
#   C<cursor made visible>|N  M<1 when more is true, else 0>  .
# Reason and output are printf formats: every byte that is not plain text
# becomes a 3-digit octal escape and % becomes %%, so each fits on one line
# and printf restores it byte for byte (NUL included). Prints "?" when the
# text is not a JSON object. Only POSIX awk: runs on mawk, gawk and busybox.
# Splitting on quotes and backslashes keeps it linear: busybox's substr() is
# O(length), so a character-by-character walk over a 16 KiB output is not.
# shellcheck disable=SC2016 # awk code, not shell
hb_awk='
function hexval(h,   i, c, v) {
    if (length(h) != 4) return -1
    v = 0
    for (i = 1; i <= 4; i++) {
        c = index("0123456789abcdef", tolower(substr(h, i, 1)))
        if (c == 0) return -1
        v = v * 16 + c - 1
    }
    return v
}
function oct(b) { return sprintf("\\%03o", b) }
function utf8(cp) {
    if (cp < 128) return oct(cp)
    if (cp < 2048) return oct(192 + int(cp / 64)) oct(128 + cp % 64)
    if (cp < 65536) return oct(224 + int(cp / 4096)) oct(128 + int(cp / 64) % 64) oct(128 + cp % 64)
    return oct(240 + int(cp / 262144)) oct(128 + int(cp / 4096) % 64) \
        oct(128 + int(cp / 64) % 64) oct(128 + cp % 64)
}
function plain(t) { gsub(/%/, "%%", t); return t }
# Visible mode (the reason of a pending answer, shown as is on a terminal):
# control characters, the invisible ones that reorder or hide text and the
# Unicode blanks become escapes, as hostbridge request shows them
# (display/visible.hpp, is_invisible and is_blank).
function esc_cp(cp) {
    if (cp == 10) return "\\134n"
    if (cp == 9) return "\\134t"
    if (cp == 13) return "\\134r"
    if (cp < 32 || cp == 127) return sprintf("\\134x%02x", cp)
    if (cp < 65536) return sprintf("\\134u%04x", cp)
    return sprintf("\\134U%08x", cp)
}
function hidden(cp) {
    return cp < 32 || cp == 127 || (cp >= 128 && cp <= 159) || cp == 173 || cp == 1564 ||
        cp == 6158 || (cp >= 8203 && cp <= 8207) || (cp >= 8232 && cp <= 8238) ||
        (cp >= 8288 && cp <= 8297) || cp == 65279 || (cp >= 65529 && cp <= 65531) ||
        (cp >= 917504 && cp <= 917631) ||
        cp == 160 || cp == 4447 || cp == 4448 || cp == 5760 || (cp >= 8192 && cp <= 8202) ||
        cp == 8239 || cp == 8287 || cp == 10240 || cp == 12288 || cp == 12644 || cp == 65440
}
function raw(t,   out, b, n, cp, i) {
    if (!vis) return plain(t)
    out = ""
    while (match(t, /[\001-\037\177]|\302[\200-\237\240\255]|\330\234|\341\240\216|\341\205[\237\240]|\341\232\200|\342\200[\200-\217\250-\257]|\342\201[\237-\251]|\342\240\200|\343\200\200|\343\205\244|\357\273\277|\357\276\240|\357\277[\271-\273]|\363\240[\200\201][\200-\277]/)) {
        b = substr(t, RSTART, RLENGTH)
        n = length(b)
        cp = ord[substr(b, 1, 1)]
        if (n == 2) cp = (cp - 192) * 64
        else if (n == 3) cp = (cp - 224) * 4096
        else if (n == 4) cp = (cp - 240) * 262144
        # No ^: busybox awk may be built without maths.
        for (i = 2; i <= n; i++) cp += (ord[substr(b, i, 1)] - 128) * (i == n ? 1 : i == n - 1 ? 64 : 4096)
        out = out plain(substr(t, 1, RSTART - 1)) esc_cp(cp)
        t = substr(t, RSTART + RLENGTH)
    }
    return out plain(t)
}
# Seconds since the epoch of a UTC time in the requested_at format
# (2026-11-29T08:10:00Z), or "" (days from the civil date, no `date -d`:
# POSIX date cannot read a time).
function epoch(s,   y, m, d, era, yoe, doy, doe, e) {
    if (s !~ /^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z$/)
        return ""
    y = substr(s, 1, 4) + 0; m = substr(s, 6, 2) + 0; d = substr(s, 9, 2) + 0
    if (m < 1 || m > 12 || d < 1 || d > 31 || substr(s, 12, 2) + 0 > 23 ||
        substr(s, 15, 2) + 0 > 59 || substr(s, 18, 2) + 0 > 60) return ""
    if (m <= 2) y--
    era = int(y / 400)
    yoe = y - era * 400
    doy = int((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1
    doe = yoe * 365 + int(yoe / 4) - int(yoe / 100) + doy
    e = ((era * 146097 + doe - 719468) * 24 + substr(s, 12, 2)) * 3600
    return sprintf("%.0f", e + substr(s, 15, 2) * 60 + substr(s, 18, 2))
}
# Appends to the decoded text through a small buffer: appending to one
# long string copies it each time, which is quadratic on busybox and mawk.
function emit(x) {
    dbuf = dbuf x
    if (length(dbuf) > 2048) { dout = dout dbuf; dbuf = "" }
}
# JSON string content (escapes intact) -> printf format.
function decode(s,   p, n, i, c, cp, lo, rest) {
    dout = ""
    dbuf = ""
    n = split(s, p, /\\/)
    emit(raw(p[1]))
    i = 2
    while (i <= n) {
        if (p[i] == "") {
            # Two backslashes in a row: an escaped backslash, then plain text.
            emit("\\134")
            if (i + 1 <= n) emit(raw(p[i + 1]))
            i += 2
            continue
        }
        c = substr(p[i], 1, 1)
        rest = substr(p[i], 2)
        if (c == "u") {
            cp = hexval(substr(p[i], 2, 4))
            if (cp < 0) { bad = 1; return "" }
            rest = substr(p[i], 6)
            if (cp >= 55296 && cp < 56320) {
                lo = -1
                if (rest == "" && i < n && substr(p[i + 1], 1, 1) == "u")
                    lo = hexval(substr(p[i + 1], 2, 4))
                if (lo >= 56320 && lo < 57344) {
                    cp = 65536 + (cp - 55296) * 1024 + (lo - 56320)
                    i++
                    rest = substr(p[i], 6)
                } else cp = 65533
            } else if (cp >= 56320 && cp < 57344) cp = 65533
            emit(vis && hidden(cp) ? esc_cp(cp) : utf8(cp))
        } else if (vis && c == "n") emit(esc_cp(10))
        else if (vis && c == "t") emit(esc_cp(9))
        else if (vis && c == "r") emit(esc_cp(13))
        else if (vis && c == "b") emit(esc_cp(8))
        else if (vis && c == "f") emit(esc_cp(12))
        else if (c == "n") emit("\\012")
        else if (c == "t") emit("\\011")
        else if (c == "r") emit("\\015")
        else if (c == "b") emit("\\010")
        else if (c == "f") emit("\\014")
        else if (c == "\"") emit("\\042")
        else if (c == "/") emit("/")
        else { bad = 1; return "" }
        emit(raw(rest))
        i++
    }
    return dout dbuf
}
function to_fmt(s,   f) {
    f = decode(s)
    # printf would read a leading "-" as an option in some shells.
    if (substr(f, 1, 1) == "-") f = "\\055" substr(f, 2)
    return f
}
function visible_fmt(s,   i, f) {
    if (!ord_made) {
        for (i = 1; i < 256; i++) ord[sprintf("%c", i)] = i
        ord_made = 1
    }
    vis = 1
    f = to_fmt(s)
    vis = 0
    return f
}
{ text = text $0 "\n" }
END {
    # Pieces between quotes alternate outside/inside a string; a quote
    # after an odd run of backslashes is escaped and joins two pieces.
    n = split(text, q, /"/)
    nt = 0
    k = 1
    while (k <= n && !bad) {
        nt++; tok[nt] = q[k]; typ[nt] = "o"
        k++
        if (k > n) break
        if (k == n) { bad = 1; break }
        # Buffered like emit(): an output full of quotes has many pieces.
        mout = ""
        mbuf = q[k]
        while (match(q[k], /\\+$/) && RLENGTH % 2 == 1) {
            k++
            if (k >= n) { bad = 1; break }
            mbuf = mbuf "\"" q[k]
            if (length(mbuf) > 2048) { mout = mout mbuf; mbuf = "" }
        }
        nt++; tok[nt] = mout mbuf; typ[nt] = "s"
        k++
    }
    depth = 0
    st = "start"
    for (t = 1; t <= nt && !bad; t++) {
        if (typ[t] == "s") {
            if (depth == 1 && st == "key") { key = tok[t]; st = "colon" }
            else if (depth == 1 && st == "value") { val[key] = tok[t]; vt[key] = "s"; st = "after" }
            else if (depth < 2) bad = 1
            continue
        }
        o = tok[t]
        gsub(/[ \t\r\n]+/, "", o)
        m = length(o)
        for (i = 1; i <= m && !bad; i++) {
            c = substr(o, i, 1)
            if (depth >= 2) {
                if (c == "{" || c == "[") depth++
                else if (c == "}" || c == "]") { depth--; if (depth == 1) st = "after" }
            } else if (depth == 0) {
                if (st == "start" && c == "{") { depth = 1; st = "key" } else bad = 1
            } else if (st == "key") {
                if (c == "}") { depth = 0; st = "end" } else bad = 1
            } else if (st == "colon") {
                if (c == ":") st = "value"; else bad = 1
            } else if (st == "value") {
                if (c == "{" || c == "[") { depth = 2; vt[key] = "x" }
                else {
                    j = i
                    while (j <= m && substr(o, j, 1) != "," && substr(o, j, 1) != "}") j++
                    val[key] = substr(o, i, j - i); vt[key] = "l"; st = "after"
                    i = j - 1
                }
            } else if (st == "after") {
                if (c == ",") st = "key"
                else if (c == "}") { depth = 0; st = "end" }
                else bad = 1
            } else bad = 1
        }
    }
    if (bad || st != "end" || vt["state"] != "s" || val["state"] !~ /^[a-z]+$/) { print "?"; exit }
    print "S" val["state"]
    if (vt["exit_code"] == "l" && val["exit_code"] ~ /^-?[0-9]+$/) print "E" val["exit_code"]
    else print "E"
    if (vt["reason"] == "s") r = "R" to_fmt(val["reason"]); else r = "N"
    if (vt["output"] == "s") out = "O" to_fmt(val["output"]); else out = "N"
    # The reason of a pending answer is shown while waiting: made visible.
    v = "N"
    if (val["state"] == "pending" && vt["reason"] == "s") v = "V" visible_fmt(val["reason"])
    x = "X"
    if (vt["expires_at"] == "s" && (e = epoch(val["expires_at"])) != "")
        x = "X" e " " val["expires_at"]
    # The cursor of a windowed logs answer (the agent may have forged it): made
    # visible like a pending reason.
    cur = "N"
    if (vt["cursor"] == "s") cur = "C" visible_fmt(val["cursor"])
    more = (vt["more"] == "l" && val["more"] == "true") ? "M1" : "M0"
    if (bad) { print "?"; exit }
    print r
    print out
    print v
    print x
    print cur
    print more
    print "."
}'

# Sets state, exit_code, reason_fmt/has_reason, output_fmt/has_output,
# visible_fmt/has_visible, expires/expires_at (empty when there is none
# that reads), cursor_fmt/has_cursor and more from the response file; fails
# when it is missing or unreadable.
read_response() {
    [ -f "$response" ] || return 1
    parsed=$(awk "$hb_awk" "$response" 2>/dev/null) || return 1
    saved_ifs=$IFS
    IFS=$nl
    # shellcheck disable=SC2086 # one field per line, globbing is off
    set -- $parsed
    IFS=$saved_ifs
    [ $# -eq 9 ] && [ "$9" = . ] || return 1
    case $1 in S?*) state=${1#S} ;; *) return 1 ;; esac
    exit_code=${2#E}
    case $3 in R*) has_reason=1 reason_fmt=${3#R} ;; *) has_reason=0 ;; esac
    case $4 in O*) has_output=1 output_fmt=${4#O} ;; *) has_output=0 ;; esac
    case $5 in V*) has_visible=1 visible_fmt=${5#V} ;; *) has_visible=0 ;; esac
    expires=${6#X}
    expires_at=${expires#* }
    expires=${expires%% *}
    case $7 in C*) has_cursor=1 cursor_fmt=${7#C} ;; *) has_cursor=0 ;; esac
    more=${8#M}
    return 0
}

print_output() {
    # shellcheck disable=SC2059 # the format is the decoded output
    [ "$has_output" -eq 1 ] && printf "$output_fmt"
    return 0
}

# After a done windowed logs answer: where to go on from, on stderr, as
# lines a caller can pick out (stdout is the log text). `more: true` asks
# for another call with that cursor at once.
print_window() {
    [ "$windowed" -eq 1 ] || return 0
    if [ "$has_cursor" -eq 1 ]; then
        # shellcheck disable=SC2059 # the format is the decoded cursor
        printf "cursor: $cursor_fmt\n" >&2
    fi
    [ "$more" != 1 ] || printf 'more: true\n' >&2
    return 0
}

# Says why on stderr: "<state>: <reason> (exit code N)".
report() {
    printf '%s: %s' "$me" "$state" >&2
    if [ "$has_reason" -eq 1 ]; then
        printf ': ' >&2
        # shellcheck disable=SC2059
        printf "$reason_fmt" >&2
    fi
    [ -n "$exit_code" ] && printf ' (exit code %s)' "$exit_code" >&2
    printf '\n' >&2
}

# The first pending answer, once: a person must act on the host, and the
# caller (an agent) should tell its person rather than send it again.
tell_pending() {
    printf '%s: a person must approve request %s on the host before it runs; waiting for their decision' \
        "$me" "$name" >&2
    if [ -n "$expires" ]; then
        printf ' until %s' "$expires_at" >&2
    else
        printf ' (the host gave no expiry time)' >&2
    fi
    if [ "$has_visible" -eq 1 ]; then
        printf ': ' >&2
        # shellcheck disable=SC2059 # the format is the decoded reason
        printf "$visible_fmt" >&2
    fi
    printf '\n' >&2
}

# sleep 0.2 is GNU and busybox; where fractions fail, poll once a second.
poll=0.2
ticks_per_poll=1
sleep 0.2 2>/dev/null || { poll=1; ticks_per_poll=5; }

# Two clocks: counted polls (sub-second, never early) and the wall clock
# (caps the overshoot when a loaded machine stretches each sleep).
start=$(date +%s)
ticks=0
taken_up=0
told=0
state=""
expires=""
while :; do
    if read_response; then
        case $state in
            done) print_output; print_window; exit 0 ;;
            denied | expired | failed) print_output; report; exit "$EX_REFUSED" ;;
            running) taken_up=1 ;;
            pending)
                taken_up=1
                [ "$told" -eq 1 ] || tell_pending
                told=1
                ;;
        esac
    fi
    # Pending: waited for until its expires_at plus a grace for the host to
    # write `expired`; without a time that reads, as for running.
    if [ "$state" = pending ] && [ -n "$expires" ] &&
        [ "$(date +%s)" -ge $((expires + pending_grace)) ]; then
        say "request $name was not decided: it expired at $expires_at and can no longer be allowed; the host will answer \`expired\`"
        exit "$EX_TEMPFAIL"
    fi
    if [ "$taken_up" -eq 0 ]; then
        if [ $((ticks / 5)) -ge "$timeout" ] || [ $(($(date +%s) - start)) -gt "$timeout" ]; then
            say "no answer from the host within $timeout s${state:+ (last state: $state)}"
            withdraw
            exit "$EX_TEMPFAIL"
        fi
    fi
    sleep "$poll"
    ticks=$((ticks + ticks_per_poll))
done
