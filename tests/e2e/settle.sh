#!/bin/bash
# settle.sh BIN_DIR: verified outcomes (docs/COMPOSE.md, "Verified
# outcomes"; issue 29) against the real podman and podman-compose of
# Debian 12, driven by the installed executor (`hostbridge install
# --backend compose`, then a `hostbridge-executor watch` this script
# starts; no systemd). A three-service project on a local busybox image:
#   web   healthy (its healthcheck is /bin/true)
#   sick  running, but its healthcheck fails (retries 1); prints a marker
#   crash exits 3 at once after printing a marker
# podman-compose `up -d` exits 0 for all of it. Checked:
#  1. `up` is answered failed although the command exited 0; `services`
#     says web ok/healthy, sick failed/unhealthy, crash failed/exited with
#     exit code 3, and carries each failed service's marker log line;
#     the reason names them; the audit event has the services, no logs;
#  2. `restart web` is done: services holds web alone, settled ok, with a
#     start time after the request, and the container really restarted
#     (sick, another service, not); it is the engine's own restart, no
#     podman-compose in its log; its text is the host's lines alone;
#  3. `restart crash` is failed with exit code 3 in services;
#  4. a forged marker with an escape byte in a log line arrives as JSON
#     text (the response stays valid JSON);
#  5. `status` is done and carries every service's facts (web ok, sick
#     unhealthy, crash exited) with a line each in the text, no logs;
#     `health` runs web's healthcheck itself (its last run is after the
#     request) and is failed naming crash and sick, with sick's log lines;
#  6. following logs (docs/PROTOCOL.md, "Following logs"): a fourth
#     service, chatty, writes 60 bursts of three lines (one stamp each
#     burst, checked; the third line's newline written with the next
#     burst, so the engine keeps that line as two pieces, the second
#     stamped like the next burst); once it wrote them all, it is
#     restarted and writes them again once the follower, from the start,
#     has caught up with the first run (it makes /go2 in the container),
#     while requests with `since` (and
#     `lines` 25) follow it from cursor to cursor, from the start: their
#     outputs put together are exactly `podman logs --timestamps` of it,
#     nothing lost, nothing repeated; some answers said `more` and some,
#     before the end, that they had caught up with the writer; then
#     `lines` 2 alone is the last two lines with a cursor counting all
#     four lines of their stamp in the view from it (the piece that ended
#     the line before, then the three), and `since` that cursor answers
#     nothing new;
#  7. `up` again, every container there: podman-compose prints podman's
#     "already in use" errors and exits 0, crash fails again, and the
#     failed answer's text keeps those errors as its evidence.
# Rootful podman as root, rootless otherwise; examples/demo-app's
# containers.conf. Everything is named after hbst<pid> and removed on exit.
# Exit 77, reason printed, where podman, podman-compose or a static busybox
# is missing.
set -uo pipefail

[ $# -eq 1 ] || { echo "usage: settle.sh BIN_DIR" >&2; exit 64; }
bin=$(readlink -f -- "$1")
repo=$(readlink -f -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/../..")
hb=$bin/hostbridge
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# shellcheck source=tests/e2e/compose_bridge.sh
. "$repo/tests/e2e/compose_bridge.sh"
compose_e2e_start "hbst$$"

# ------------------------------------------------------------------ the image and the project

for applet in sh sleep true false echo printf test; do ln -s busybox "$work/img/rootfs/bin/$applet"; done
# chatty's script: in the image, so compose never interpolates its `$`.
# Its first run writes at once; a later run n waits for /go<n>, which the
# follower makes once it has caught up with what is there: so some answer
# caught up before the end, however slow the machine (it was a race).
cat >"$work/img/rootfs/chatty.sh" <<'EOF'
n=0
[ -e /runs ] && read -r n </runs
n=$((n + 1))
echo "$n" >/runs
if [ "$n" -gt 1 ]; then
    while [ ! -e "/go$n" ]; do sleep 0.1; done
fi
i=0
nl=
while [ $i -lt 60 ]; do
    i=$((i + 1))
    printf "${nl}L%d-a\nL%d-b\nL%d-c" $i $i $i
    nl='\n'
    sleep 0.2
done
printf '\n'
exec sleep 100000
EOF
printf 'FROM scratch\nCOPY rootfs/ /\nCMD ["/bin/sleep", "100000"]\n' >"$work/img/Containerfile"
out=$(podman build -q -t "$image" "$work/img" 2>&1) || die "podman build: $out"

sick_mark="SICK-$name-$RANDOM"
crash_mark="CRASH-$name-$RANDOM"
cat >"$P/compose.yaml" <<EOF
services:
  web:
    image: $image
    command: ["/bin/sleep", "100000"]
    healthcheck:
      test: ["CMD", "/bin/true"]
      interval: 1h
      retries: 1
  sick:
    image: $image
    command: ["/bin/sh", "-c", "printf '$sick_mark \\\\033[31mred\\\\n'; exec sleep 100000"]
    healthcheck:
      test: ["CMD", "/bin/false"]
      interval: 1h
      retries: 1
  crash:
    image: $image
    command: ["/bin/sh", "-c", "echo $crash_mark; exit 3"]
  chatty:
    image: $image
    command: ["/bin/sh", "/chatty.sh"]
EOF
compose_e2e_commit

# ------------------------------------------------------------------ the bridge

compose_e2e_install
# This test measures verified outcomes, not who approves: up runs
# unattended, as the person accepted (--accept-uncontained-engine).
sed -i 's/^MODE_up=ask$/MODE_up=auto/; s/^MODE_restart=ask$/MODE_restart=auto/' "$policy"
settle=$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])).get("settle")))' "$config")
check "install recorded the settle step for project $pname ($settle)" \
    python3 -c 'import json,sys; s=json.loads(sys.argv[1]); assert s["project"]==sys.argv[2] and s["seconds"]==30 and s["engine"].endswith("/podman")' \
    "$settle" "$pname"
sed -i 's/"seconds": 30/"seconds": 10/' "$config"
compose_e2e_watch

# ------------------------------------------------------------------ 1: up

request up
check "up: failed although podman-compose exited 0 (state $(q 'r["state"]'), exit_code $(q 'r["exit_code"]'))" \
    test "$(q 'r["state"]')" = failed -a "$(q 'r["exit_code"]')" = 0 -a "$REQ_RC" -ne 0
[ "$(q 'r["state"]')" = failed ] || show
check "the reason names sick and crash: $(q 'r["reason"]')" \
    eval '[[ $(q "r[\"reason\"]") == *sick* && $(q "r[\"reason\"]") == *crash* ]]'
check "web settled ok and healthy: $(q 's["web"]["settled"], s["web"]["containers"][0]["health"]')" \
    test "$(q 's["web"]["settled"], s["web"]["containers"][0]["health"], s["web"]["log"]')" = "('ok', 'healthy', None)"
check "sick failed unhealthy, its log holds its marker: $(q 's["sick"]["settled"], s["sick"]["containers"][0]["health"], s["sick"]["problem"]')" \
    eval '[ "$(q "s[\"sick\"][\"settled\"], s[\"sick\"][\"containers\"][0][\"health\"]")" = "('"'"'failed'"'"', '"'"'unhealthy'"'"')" ] &&
          [ "$(q "\"$sick_mark\" in s[\"sick\"][\"log\"]")" = True ]'
check "crash failed, exited with code 3, its log holds its marker: $(q 's["crash"]["problem"]')" \
    eval '[ "$(q "s[\"crash\"][\"settled\"], s[\"crash\"][\"containers\"][0][\"state\"], s[\"crash\"][\"containers\"][0][\"exit_code\"]")" = "('"'"'failed'"'"', '"'"'exited'"'"', 3)" ] &&
          [ "$(q "\"$crash_mark\" in s[\"crash\"][\"log\"]")" = True ]'
check "the audit's failed up event has the services and no logs" \
    python3 - "$audit" <<'PY'
import json, sys
last = [e for e in map(json.loads, open(sys.argv[1])) if e.get("verb") == "up" and e["event"] == "failed"][-1]
svc = {s["service"]: s for s in last["detail"]["services"]}
assert set(svc) == {"web", "sick", "crash", "chatty"}, svc
assert all("log" not in s for s in svc.values()), svc
PY
check "the escape byte in sick's log is JSON text, shown visibly by the client (no raw ESC on stdout/stderr)" \
    eval '[ "$(q "chr(27) in s[\"sick\"][\"log\"]")" = True ] && ! grep -q $'"'"'\x1b'"'"' "$work/out" "$work/err"'

# ------------------------------------------------------------------ 2: restart web

web_c=${pname}_web_1
before=$(inspect "$web_c" '{{.State.StartedAt}}')
sick_before=$(inspect "${pname}_sick_1" '{{.State.StartedAt}}')
request restart web
after=$(inspect "$web_c" '{{.State.StartedAt}}')
check "restart web: done, exit 0 (rc $REQ_RC)" test "$(q 'r["state"]')" = done -a "$REQ_RC" -eq 0
[ "$REQ_RC" -eq 0 ] || show
check "services holds web alone, ok, started after the request ($(q 's["web"]["containers"][0]["started_at"]') >= $(q 'r["requested_at"]'))" \
    test "$(q 'list(s), s["web"]["settled"], s["web"]["containers"][0]["started_at"] >= r["requested_at"]')" = "(['web'], 'ok', True)"
check "the web container really restarted ($before -> $after)" test -n "$after" -a "$after" != "$before"
check "sick, another service of the project, was not restarted" \
    test "$(inspect "${pname}_sick_1" '{{.State.StartedAt}}')" = "$sick_before"
restart_log=$P/untracked/hostbridge/$(q 'r["log"]')
check "restart web is the engine's own restart: its log holds no podman-compose line (issue 48)" \
    eval 'test -f "$restart_log" && ! grep -q "^exit code: \|podman-compose" "$restart_log"'
check "the client's text says how web settled" grep -q "web" "$work/out"
check "restart web's text is the host's lines alone, none of podman-compose's (issue 48)" \
    eval 'grep -q "^hostbridge: web: running, healthy" "$work/out" && ! grep -qv "^hostbridge: " "$work/out"'

# ------------------------------------------------------------------ 3: restart crash

request restart crash
check "restart crash: failed, services says exited with code 3 ($(q 's["crash"]["problem"]'))" \
    test "$(q 'r["state"], s["crash"]["settled"], s["crash"]["containers"][0]["exit_code"]')" = "('failed', 'failed', 3)"

# ------------------------------------------------------------------ 4: status and health

request status
check "status: done with every service in services ($(q 'sorted(s)'))" \
    test "$(q 'r["state"], sorted(s)')" = "('done', ['chatty', 'crash', 'sick', 'web'])"
[ "$REQ_RC" -eq 0 ] || show
check "status says web ok, sick unhealthy, crash exited ($(q '[(k, v["problem"]) for k, v in sorted(s.items())]'))" \
    test "$(q 's["web"]["settled"], s["sick"]["containers"][0]["health"], s["crash"]["containers"][0]["state"]')" = "('ok', 'unhealthy', 'exited')"
check "status's text has a line per service, and no compose ps text (the engine's JSON alone)" \
    eval 'grep -q "hostbridge: web: running, healthy" "$work/out" && ! grep -q "${pname}_web_1" "$work/out"'
check "status carries no log lines (logs is its own verb)" \
    test "$(q '[v["log"] for v in s.values()]')" = "[None, None, None, None]"

check_before=$(date -u +%Y-%m-%dT%H:%M:%S)
sleep 1
request health
last_check() { # CONTAINER: when its last healthcheck ran, to the second, UTC
    podman container inspect "$1" 2>/dev/null | python3 -c '
import json, sys, datetime
log = json.load(sys.stdin)[0]["State"]["Health"]["Log"] or []
t = log[-1]["Start"] if log else ""
# podman 4.3 writes nanoseconds and Z or a local offset: cut to seconds.
off = "+00:00" if t.endswith("Z") else t[-6:]
d = datetime.datetime.fromisoformat(t[:19] + off) if t else None
print(d.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S") if d else "never")'
}
web_checked=$(last_check "$web_c")
check "health: failed, naming sick and crash and not web: $(q 'r["reason"]')" \
    eval '[ "$(q "r[\"state\"]")" = failed ] &&
          [[ $(q "r[\"reason\"]") == "not healthy: crash: exited with status 3; sick: unhealthy" ]]'
check "health ran web's healthcheck itself (last run $web_checked, request after $check_before)" \
    eval '[[ "$web_checked" > "$check_before" ]]'
check "health: web ok, and its text says so; sick's log lines are in the answer" \
    eval '[ "$(q "s[\"web\"][\"settled\"], \"$sick_mark\" in s[\"sick\"][\"log\"]")" = "('"'"'ok'"'"', True)" ] &&
          grep -q "web: running, healthy" "$work/out"'

# ------------------------------------------------------------------ 6: following logs

# Follows chatty from cursor to cursor with raw requests (the protocol
# itself, as any client writes it) while it writes, then compares.
# The first run's 60 bursts, all there before the restart (waited for, not
# timed: 600 s is a hang guard).
for _ in $(seq 3000); do
    podman logs "${pname}_chatty_1" 2>/dev/null | grep -q '^L60-c$' && break
    sleep 0.2
done
request restart chatty
check "restart chatty: done (its second run writes while it is followed)" test "$(q 'r["state"]')" = done
follow=$(python3 - "$P/untracked/hostbridge" "${pname}_chatty_1" <<'PY' 2>&1
import datetime, json, os, secrets, subprocess, sys, time
spool, container = sys.argv[1], sys.argv[2]

def ask(members):
    now = datetime.datetime.now(datetime.timezone.utc)
    name = now.strftime("%Y%m%dT%H%M%SZ") + "-logs-" + secrets.token_hex(8) + ".json"
    body = '{"verb":"logs","arg":"chatty",' + members + ',"requested_at":"' + \
        now.strftime("%Y-%m-%dT%H:%M:%SZ") + '"}\n'
    tmp = os.path.join(spool, "tmp", name)
    with open(tmp, "w") as f:
        f.write(body)
    os.chmod(tmp, 0o644)
    os.rename(tmp, os.path.join(spool, "requests", name))
    path = os.path.join(spool, "responses", name + ".response.json")
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            r = json.load(open(path))
            if r["state"] not in ("queued", "running", "pending"):
                return r
        except (FileNotFoundError, json.JSONDecodeError):
            pass
        time.sleep(0.05)
    sys.exit("no answer to " + name)

def engine_log():
    return subprocess.run(["podman", "logs", "--timestamps", container], capture_output=True,
                          text=True, check=True).stdout

# From the start of the log (the first run's 180 lines wait there) while
# the second run writes.
received, cursor, answers, mores, caught_up, go = "", "0:0", 0, 0, 0, False
while True:
    r = ask('"lines":"25","since":"%s"' % cursor)
    answers += 1
    if r["state"] != "done" or not isinstance(r["cursor"], str):
        sys.exit("answer %d: %s" % (answers, json.dumps(r)))
    received += r["output"]
    cursor = r["cursor"]
    mores += r["more"] is True
    if r["more"] is False and received.count(" L60-c") == 2:
        break
    caught_up += r["more"] is False
    if r["more"] is False and not go and received.count(" L60-c") == 1:
        # Caught up with the first run: the second may write now.
        subprocess.run(["podman", "exec", container, "/bin/sh", "-c", 'read -r n </runs; : >"/go$n"'],
                       check=True)
        go = True
    elif r["more"] is False:
        time.sleep(0.2)
    if answers > 600:
        sys.exit("no end after 600 answers")
full = engine_log()
stamps = [line.split(" ", 1)[0] for line in full.splitlines()]
print("answers=%d more=%d caught-up=%d lines=%d stamps=%d" %
      (answers, mores, caught_up, len(stamps), len(set(stamps))))
print("last lines: " + repr(full.splitlines()[-2:]))
if received != full:
    import difflib
    diff = difflib.unified_diff(full.splitlines(), received.splitlines(), "podman", "followed",
                                lineterm="", n=1)
    sys.exit("followed != podman logs --timestamps:\n" + "\n".join(list(diff)[:30]))
if len(stamps) != 360 or len(set(stamps)) > 120:
    sys.exit("expected 360 lines under at most 120 stamps")
pieces = sum(line.count("Z ") for line in full.splitlines())
if pieces < 360 + 120:
    sys.exit("expected a second piece on each burst's third line, found %d pieces" % pieces)
if mores == 0 or caught_up == 0:
    sys.exit("no answer said more, or none caught up with the writer before the end")
# The last two lines, and a cursor after every line of their stamp in the
# view from it: the piece that ended L59-c, L60-a, L60-b, L60-c.
r = ask('"lines":"2"')
last = full.splitlines(keepends=True)
if r["state"] != "done" or r["output"] != "".join(last[-2:]) or not r["cursor"].endswith(":4"):
    sys.exit("lines 2: " + json.dumps(r))
r2 = ask('"since":"%s"' % r["cursor"])
if r2["state"] != "done" or r2["output"] != "" or r2["cursor"] != r["cursor"] or r2["more"]:
    sys.exit("since the end: " + json.dumps(r2))
print("tail-cursor=" + r["cursor"])
PY
)
follow_rc=$?
check "following chatty from cursor to cursor gave podman's log exactly once ($(grep -E "^(answers|tail-cursor)" <<<"$follow" | tr '\n' ' '))" \
    test "$follow_rc" -eq 0
[ "$follow_rc" -eq 0 ] || printf '%s\n' "$follow" | tail -n 40
check "the audit has a logs event with the window and the cursor" \
    python3 - "$audit" <<'PY'
import json, sys
ev = [e for e in map(json.loads, open(sys.argv[1])) if e.get("verb") == "logs" and e["event"] == "succeeded"]
assert any(e.get("detail", {}).get("lines") == 25 and "cursor" in e["detail"] for e in ev), ev[-1:]
PY

# ------------------------------------------------------------------ 7: up again

request up
check "up again: failed (crash), its text keeps podman-compose's \"already in use\" as evidence" \
    eval '[ "$(q "r[\"state\"]")" = failed ] && grep -q "already in use" "$work/out"'
[ "$(q 'r["state"]')" = failed ] || show

# ------------------------------------------------------------------ nothing left

trap - EXIT
cleanup
finish_e2e "$name" "$(($(date +%s) - t_start)) s"
