#!/bin/sh
# The MCP Inspector's CLI mode (@modelcontextprotocol/inspector-cli 0.15.0,
# the newest whose engines field admits Node 20: 0.16.0 and later, and
# every @modelcontextprotocol/inspector from 0.16.0 on, want Node >= 22.7.5)
# against hostbridge-agent mcp, run by mcp_host_run with HOSTBRIDGE_SPOOL
# and HB_AGENT_BIN set. Exits non-zero on the first failed check.
set -eu
cli="node_modules/.bin/mcp-inspector-cli"
fail() { echo "inspector: FAIL: $*"; exit 1; }
run() { "$cli" --cli "$HB_AGENT_BIN" mcp "$@" 2>inspector.err; }

out=$(run --method tools/list) || fail "tools/list: $(cat inspector.err)"
for tool in ping status logs up down restart rebuild; do
    printf '%s' "$out" | grep -q "\"name\": \"$tool\"" || fail "tools/list lacks $tool"
done
echo "inspector: tools/list lists every tool"

out=$(run --method tools/call --tool-name ping) || fail "ping: $(cat inspector.err)"
printf '%s' "$out" | grep -q '"text": "pong"' || fail "ping: $out"
echo "inspector: tools/call ping -> pong"

out=$(run --method tools/call --tool-name logs --tool-arg service=worker) || fail "logs: $(cat inspector.err)"
printf '%s' "$out" | grep -q 'logs of worker' || fail "logs: $out"
echo "inspector: tools/call logs service=worker -> its logs"

out=$(run --method tools/call --tool-name down) || true
printf '%s' "$out" | grep -q '"isError": true' || fail "down should be refused: $out"
printf '%s' "$out" | grep -q 'MODE_down=deny' || fail "down: $out"
echo "inspector: tools/call down -> a tool error with the host's reason"
echo "inspector: all checks passed"
