#!/usr/bin/env python3
"""Times requests on the real path: publish (rename into requests/) to the
terminal response, against an installed bridge whose .path unit fires the
drain (bench/real_path.sh sets that up). Then splits each request's time with
the audit log and the service's start timestamp:

  publish -> drain process started   path unit trigger + unit start (cold only)
  publish -> queued                  cold: + executor start-up; warm: inotify wake-up
  queued -> started                  claim, parser round trip, policy, gate, rate limit
  started -> succeeded               the command (restart: systemd-run scope + ./stack)
  succeeded -> response seen         response written, noticed (1 ms poll)

cold: the service is stopped before each request, so each one activates the
unit (what the first request after 10 s of quiet sees); warm: the drain is
lingering from the previous request (what a session of requests sees).

Usage: real_path.py SPOOL SERVICE_UNIT AUDIT_JSONL VERB[:ARG] N cold|warm
Prints one JSON line of per-request samples (milliseconds) on stdout.
"""
import datetime
import json
import os
import secrets
import subprocess
import sys
import time

TERMINAL = {"done", "failed", "denied", "expired"}


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc)


def publish(spool, verb, arg):
    now = utc_now()
    name = "%s-%s-%s.json" % (now.strftime("%Y%m%dT%H%M%SZ"), verb, secrets.token_hex(8))
    body = {"verb": verb}
    if arg:
        body["arg"] = arg
    body["requested_at"] = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    tmp = os.path.join(spool, "tmp", "bench-" + name)
    with open(tmp, "w") as f:
        f.write(json.dumps(body))
    wall = time.time_ns()
    t0 = time.monotonic_ns()
    os.rename(tmp, os.path.join(spool, "requests", name))
    return name, wall, t0


def wait_terminal(spool, name, timeout_s=120):
    path = os.path.join(spool, "responses", name + ".response.json")
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with open(path) as f:
                state = json.load(f).get("state")
            if state in TERMINAL:
                return time.monotonic_ns(), state
        except (FileNotFoundError, ValueError):
            pass
        time.sleep(0.001)
    raise SystemExit("no terminal response for %s in %d s" % (name, timeout_s))


def systemctl(*args):
    return subprocess.run(["systemctl", "--user", *args], check=False,
                          capture_output=True, text=True).stdout.strip()


def exec_main_start_us(unit):
    # "Sun 2026-11-29 11:40:01.123456 UTC"
    text = systemctl("show", unit, "-p", "ExecMainStartTimestamp", "--value", "--timestamp=us+utc")
    parts = text.split()
    if len(parts) < 3:
        return None
    stamp = datetime.datetime.strptime(parts[1] + " " + parts[2], "%Y-%m-%d %H:%M:%S.%f")
    return stamp.replace(tzinfo=datetime.timezone.utc).timestamp() * 1e6


def audit_times(audit_path):
    """request name -> {event: epoch ms}"""
    out = {}
    with open(audit_path) as f:
        for line in f:
            rec = json.loads(line)
            if not rec.get("request"):
                continue
            ts = datetime.datetime.strptime(rec["ts"], "%Y-%m-%dT%H:%M:%S.%fZ")
            ms = ts.replace(tzinfo=datetime.timezone.utc).timestamp() * 1e3
            out.setdefault(rec["request"], {})[rec["event"]] = ms
    return out


def main():
    spool, unit, audit_path, what, n, regime = sys.argv[1:7]
    verb, _, arg = what.partition(":")
    n = int(n)
    samples = []
    if regime == "warm":  # the drain is up and lingering
        name, _, _ = publish(spool, verb, arg)
        wait_terminal(spool, name)
    for _ in range(n):
        if regime == "cold":
            systemctl("stop", unit)  # waits for the job: the drain has exited
        name, wall_ns, t0 = publish(spool, verb, arg)
        t1, state = wait_terminal(spool, name)
        if state != "done":
            raise SystemExit("%s ended %s" % (name, state))
        sample = {"name": name, "total": (t1 - t0) / 1e6, "pub_ms": wall_ns / 1e6,
                  "end_ms": wall_ns / 1e6 + (t1 - t0) / 1e6}
        if regime == "cold":
            start_us = exec_main_start_us(unit)
            if start_us:
                sample["activation"] = start_us / 1e3 - sample["pub_ms"]
        samples.append(sample)
        time.sleep(0.05)
    times = audit_times(audit_path)
    for s in samples:
        ev = times.get(s["name"], {})
        q = ev.get("queued")
        st = ev.get("started")
        end = ev.get("succeeded")
        if q is not None:
            s["to_queued"] = q - s["pub_ms"]
        if q is not None and st is not None:
            s["queued_to_started"] = st - q
        if st is not None and end is not None:
            s["command"] = end - st
        if q is not None and st is None and end is not None:  # ping: nothing runs
            s["queued_to_answered"] = end - q
        if end is not None:
            s["answer_seen"] = s["end_ms"] - end
    print(json.dumps({"verb": what, "regime": regime, "samples": samples}))


if __name__ == "__main__":
    main()
