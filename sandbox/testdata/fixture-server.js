#!/usr/bin/env node
// A minimal MCP stdio server for verifymcp's integration tests, plain Node
// with no dependencies. Its behaviour comes from fixture.json next to it,
// written by the test that packs it:
//   crash:        exit with this status at start, after a line on stderr
//   hang:         read requests and never answer any
//   ignoreUnknown: silently drop methods it does not know (server/discover)
//   noise:        print non-JSON lines on stdout around the handshake
//   oom:          allocate memory until killed
//   tools:        the tool list (served in pages of pageSize, default two)
//   padTools:     add this many generated tools after tools
//   padDescription: give tool padDescriptionAt (default 0) a description
//                 of this many bytes
//   serverInfo:   extra fields of serverInfo; capabilities: extra capabilities
//   startDelayMs: answer nothing for this long (a slow start; requests queue)
//   discover:     "answer" answers server/discover with a result (default:
//                 method not found)
//   initialize:   "reject" answers initialize with an error
//   onStart:      JavaScript run at start-up (behaviour fixtures); it and
//                 onInitialized may list more tools in globalThis.fixtureTools
//   onInitialized: JavaScript run once the client sent notifications/initialized
//   onStdinEnd:   JavaScript run when stdin ends, given a done() callback
//                 that exits (a telemetry flush at shutdown); default: exit
//   calls:        tool name -> the body of an async JavaScript function of
//                 (require, process, args, ctx) whose value is the call's
//                 result (a tools/call without one answers Method not
//                 found); ctx.request(method, params) sends the client a
//                 request and resolves to its answer, ctx.tools is the tool
//                 list (a call may change it), ctx.notify(method) sends a
//                 notification
//   changeAfterMs: replace the tool list with changedTools this long after
//                 start-up (a surface that changes within the session), and
//                 send notifications/tools/list_changed unless quietChange
'use strict';
const fs = require('fs');
const path = require('path');
const cfg = JSON.parse(fs.readFileSync(path.join(__dirname, 'fixture.json'), 'utf8'));

if (cfg.crash) {
  process.stderr.write('fatal: missing configuration API_TOKEN=abc123secretvalue\n');
  process.exit(cfg.crash);
}
if (cfg.oom) {
  const hold = [];
  for (;;) hold.push(Buffer.alloc(8 << 20, 1));
}
if (cfg.noise) process.stdout.write('Starting fixture server on stdio...\n');
if (cfg.onStart) new Function('require', 'process', cfg.onStart)(require, process);

const tools = (cfg.tools || []).slice();
for (let i = 0; i < (cfg.padTools || 0); i++) tools.push({ name: 'pad_' + i, description: 'Padding tool ' + i, inputSchema: { type: 'object' } });
const padAt = cfg.padDescriptionAt || 0;
if (cfg.padDescription && tools.length > padAt) tools[padAt] = Object.assign({}, tools[padAt], { description: 'x'.repeat(cfg.padDescription) });
const pageSize = cfg.pageSize || 2;
const send = (msg) => process.stdout.write(JSON.stringify(msg) + '\n');
// The result first, then the id, as the TypeScript SDK writes answers.
const reply = (id, result) => send({ result, jsonrpc: '2.0', id });
const fail = (id, code, message) => send({ jsonrpc: '2.0', id, error: { code, message } });
if (cfg.changeAfterMs) setTimeout(() => {
  tools.splice(0, tools.length, ...(cfg.changedTools || []));
  if (!cfg.quietChange) send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
}, cfg.changeAfterMs);

// Requests of ours to the client, by id, waiting for its answer.
const pending = new Map();
let nextId = 1;
const ctx = {
  tools,
  request: (method, params) => new Promise((resolve) => {
    const id = 'fixture-' + nextId++;
    pending.set(id, resolve);
    send({ jsonrpc: '2.0', id, method, params });
  }),
  notify: (method) => send({ jsonrpc: '2.0', method }),
};
function call(msg) {
  const body = cfg.calls && cfg.calls[msg.params.name];
  if (body === undefined) return fail(msg.id, -32601, 'Method not found: tools/call');
  const AsyncFunction = Object.getPrototypeOf(async function () {}).constructor;
  new AsyncFunction('require', 'process', 'args', 'ctx', body)(require, process, msg.params.arguments || {}, ctx)
    .then((result) => reply(msg.id, result), (err) => fail(msg.id, -32603, String(err && err.message || err)));
}

function handle(msg) {
  if (cfg.hang) return;
  if (msg.method === undefined && msg.id !== undefined) { // an answer to a request of ours
    const resolve = pending.get(msg.id);
    if (resolve) { pending.delete(msg.id); resolve(msg); }
    return;
  }
  if (msg.id === undefined) { // notifications
    if (msg.method === 'notifications/initialized' && cfg.onInitialized) new Function('require', 'process', cfg.onInitialized)(require, process);
    return;
  }
  switch (msg.method) {
    case 'initialize':
      if (cfg.noise) process.stdout.write('initialized! (debug)\n');
      if (cfg.initialize === 'reject') return fail(msg.id, -32601, 'Method not found: initialize');
      return reply(msg.id, {
        protocolVersion: cfg.protocolVersion || msg.params.protocolVersion,
        capabilities: Object.assign({ tools: {}, prompts: {}, resources: {} }, cfg.capabilities || {}),
        serverInfo: Object.assign({ name: 'fixture-' + (cfg.name || 'server'), version: '1.0.0' }, cfg.serverInfo || {}),
        instructions: 'Fixture server for tests.',
      });
    case 'server/discover':
      if (cfg.discover !== 'answer') {
        if (cfg.ignoreUnknown) return;
        return fail(msg.id, -32601, 'Method not found: ' + msg.method);
      }
      const answer = () => reply(msg.id, {
        supportedVersions: ['2026-07-28'],
        capabilities: Object.assign({ tools: {}, prompts: {}, resources: {} }, cfg.capabilities || {}),
        instructions: 'Fixture server for tests.',
        ttlMs: 0,
        _meta: { 'io.modelcontextprotocol/serverInfo': Object.assign({ name: 'fixture-' + (cfg.name || 'server'), version: '1.0.0' }, cfg.serverInfo || {}) },
      });
      // discoverDelayMs: answer server/discover that much later, the
      // other requests meanwhile.
      if (cfg.discoverDelayMs) return void setTimeout(answer, cfg.discoverDelayMs);
      return answer();
    case 'tools/list': {
      const start = msg.params && msg.params.cursor ? Number(msg.params.cursor) : 0;
      // onStart or onInitialized code may add tools to globalThis.fixtureTools.
      const all = tools.concat(globalThis.fixtureTools || []);
      const page = all.slice(start, start + pageSize);
      const res = { tools: page };
      if (start + pageSize < all.length) res.nextCursor = String(start + pageSize);
      return reply(msg.id, res);
    }
    case 'prompts/list':
      return reply(msg.id, { prompts: [{ name: 'summarise', description: 'Summarise a text.', arguments: [{ name: 'text', description: 'The text', required: true }] }] });
    case 'resources/list':
      return reply(msg.id, { resources: [{ uri: 'fixture://readme', name: 'readme', description: 'The readme', mimeType: 'text/plain' }] });
    case 'resources/templates/list':
      return reply(msg.id, { resourceTemplates: [{ uriTemplate: 'fixture://items/{id}', name: 'item', description: 'One item' }] });
    case 'ping':
      return reply(msg.id, {});
    case 'tools/call':
      return call(msg);
    default:
      if (cfg.ignoreUnknown) return;
      return fail(msg.id, -32601, 'Method not found: ' + msg.method);
  }
}

let buf = '';
let started = !cfg.startDelayMs;
function drain() {
  if (!started) return;
  let i;
  while ((i = buf.indexOf('\n')) >= 0) {
    const line = buf.slice(0, i).trim();
    buf = buf.slice(i + 1);
    if (!line) continue;
    let msg;
    try { msg = JSON.parse(line); } catch (e) { continue; }
    handle(msg);
  }
}
if (cfg.startDelayMs) setTimeout(() => { started = true; drain(); }, cfg.startDelayMs);
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => { buf += chunk; drain(); });
process.stdin.on('end', () => {
  const done = () => process.exit(0);
  if (cfg.onStdinEnd) new Function('require', 'process', 'done', cfg.onStdinEnd)(require, process, done);
  else done();
});
