// The official MCP TypeScript SDK (@modelcontextprotocol/sdk, pinned in
// package-lock.json) as a stdio client of `hostbridge-agent mcp`, against a
// running watch set up by mcp_host_run (tests/agent/CMakeLists.txt).
// Exits non-zero on the first failed check.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';

const agent = process.env.HB_AGENT_BIN;
const spool = process.env.HOSTBRIDGE_SPOOL;
assert.ok(agent && spool, 'HB_AGENT_BIN and HOSTBRIDGE_SPOOL must be set');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const step = (what) => console.log(`sdk: ${what}`);
const text = (result) => result.content[0].text;

async function responseWith(needle, limitMs = 30000) {
  for (const until = Date.now() + limitMs; Date.now() < until; await sleep(50)) {
    for (const name of readdirSync(`${spool}/responses`)) {
      try {
        if (readFileSync(`${spool}/responses/${name}`, 'utf8').includes(needle)) return true;
      } catch { /* replaced while read */ }
    }
  }
  return false;
}

// Whether `count` answers of `verb` are done (a change that went live
// answers none of its command's text: docs/PROTOCOL.md, `output`).
async function doneAnswers(verb, count, limitMs = 30000) {
  for (const until = Date.now() + limitMs; Date.now() < until; await sleep(50)) {
    let done = 0;
    for (const name of readdirSync(`${spool}/responses`)) {
      try {
        const r = JSON.parse(readFileSync(`${spool}/responses/${name}`, 'utf8'));
        if (r.verb === verb && r.state === 'done') done += 1;
      } catch { /* replaced while read */ }
    }
    if (done >= count) return true;
  }
  return false;
}

const transport = new StdioClientTransport({
  command: agent,
  args: ['mcp'],
  env: { PATH: '/usr/bin:/bin', HOSTBRIDGE_SPOOL: spool },
  stderr: 'pipe',
});
let serverStderr = '';
transport.stderr.on('data', (chunk) => { serverStderr += chunk.toString(); });
const transportErrors = [];
const client = new Client({ name: 'hostbridge-sdk-test', version: '1.0.0' });
client.onerror = (e) => transportErrors.push(String(e));
await client.connect(transport);

step('initialize');
assert.equal(client.getServerVersion().name, 'hostbridge');
assert.ok(client.getServerCapabilities().tools, 'the server offers tools');
// The SDK asked for its newest revision; the server must have agreed to it.
assert.equal(LATEST_PROTOCOL_VERSION, '2025-11-25');

step('tools/list');
const { tools } = await client.listTools();
const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
for (const name of ['ping', 'status', 'health', 'logs', 'up', 'down', 'restart', 'rebuild']) {
  assert.ok(byName[name], `tool ${name} listed`);
}
assert.equal(byName.init, undefined, 'init is denied by policy: not listed');
assert.deepEqual(byName.logs.inputSchema.properties.service.enum, ['api', 'slow', 'worker']);
assert.deepEqual(byName.rebuild.inputSchema.properties.service.enum, ['api']);
assert.equal(byName.status.annotations.readOnlyHint, true);
assert.equal(byName.down.annotations.destructiveHint, true);

step('read-only calls');
let r = await client.callTool({ name: 'ping', arguments: {} });
assert.equal(text(r), 'pong');
assert.equal(r.structuredContent.state, 'done');
r = await client.callTool({ name: 'status', arguments: {} });
assert.equal(text(r), 'api: running\n');
r = await client.callTool({ name: 'logs', arguments: { service: 'worker' } });
assert.equal(text(r), 'logs of worker\n');

step('a call the host denies');
r = await client.callTool({ name: 'down', arguments: {} });
assert.equal(r.isError, true);
assert.equal(r.structuredContent.state, 'denied');
assert.match(text(r), /MODE_down=deny/);

step('a changing call');
r = await client.callTool({ name: 'up', arguments: {} });
assert.equal(r.isError, false, text(r));
assert.equal(text(r), '(done, no output)');

step('progress during a slow command');
const progress = [];
r = await client.callTool({ name: 'restart', arguments: { service: 'slow' } }, CallToolResultSchema, {
  onprogress: (p) => progress.push(p),
  resetTimeoutOnProgress: true,
});
assert.equal(text(r), '(done, no output)');
assert.ok(progress.length >= 1, `progress notifications: ${JSON.stringify(progress)}`);

step('cancellation');
const controller = new AbortController();
const cancelled = client.callTool({ name: 'restart', arguments: { service: 'slow' } }, CallToolResultSchema, {
  signal: controller.signal,
});
assert.ok(await responseWith('"running"'), 'the host runs the call');
controller.abort('the user changed their mind');
await assert.rejects(cancelled);
assert.ok(await doneAnswers('restart', 2), 'the command itself ran to its end');
r = await client.callTool({ name: 'ping', arguments: {} });
assert.equal(text(r), 'pong');
assert.match(serverStderr, /may still run|withdrawn/);

step('rate limited');
r = await client.callTool({ name: 'up', arguments: {} });
assert.equal(r.isError, true, text(r));
assert.match(text(r), /rate limited/);
assert.match(text(r), /Do not retry in a loop/);

step('malformed JSON-RPC: an error reply, never a crash');
transport._process.stdin.write('this is not json\n');
transport._process.stdin.write('{"jsonrpc":"2.0","id":"x1","method":42}\n');
await sleep(200);
r = await client.callTool({ name: 'ping', arguments: {} });
assert.equal(text(r), 'pong');
await client.ping();

await client.close();
console.log(`sdk: all checks passed (${transportErrors.length} transport errors reported for the malformed lines)`);
