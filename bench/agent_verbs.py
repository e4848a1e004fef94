#!/usr/bin/env python3
"""agent_verbs.py AGENT SPOOL N VERB...: the agent's view of each verb.

Starts `AGENT mcp` (hostbridge-agent) on SPOOL, as an MCP client does,
then times N `tools/call`s of each VERB back to back (tool name, or
NAME:SERVICE), from the request line written to the answer line read.
Every call must answer `done` (isError false), or the run stops: a figure
of a failed call is no figure. One JSON line per verb on stdout:
{"verb": ..., "ms": [...]}. Used by bench/agent_verbs.sh.
"""
import json
import subprocess
import sys
import time


def main():
    agent, spool, n, verbs = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    env = {"HOSTBRIDGE_SPOOL": spool, "PATH": "/usr/bin:/bin"}
    server = subprocess.Popen([agent, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              env=env, text=True, bufsize=1)
    next_id = [0]

    def call(method, params):
        next_id[0] += 1
        server.stdin.write(json.dumps({"jsonrpc": "2.0", "id": next_id[0], "method": method,
                                       "params": params}) + "\n")
        server.stdin.flush()
        while True:
            line = server.stdout.readline()
            if not line:
                sys.exit("agent_verbs: the MCP server ended")
            answer = json.loads(line)
            if answer.get("id") == next_id[0]:
                return answer

    call("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                        "clientInfo": {"name": "agent_verbs", "version": "1"}})
    server.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    server.stdin.flush()
    for verb in verbs:
        name, _, service = verb.partition(":")
        arguments = {"service": service} if service else {}
        ms = []
        for _ in range(n):
            t0 = time.perf_counter()
            answer = call("tools/call", {"name": name, "arguments": arguments})
            ms.append((time.perf_counter() - t0) * 1000)
            result = answer.get("result", {})
            if result.get("isError", True):
                sys.exit("agent_verbs: %s answered an error: %s" % (verb, json.dumps(answer)[:2000]))
        print(json.dumps({"verb": verb, "ms": ms}), flush=True)
    server.stdin.close()
    server.wait(timeout=30)


if __name__ == "__main__":
    main()
