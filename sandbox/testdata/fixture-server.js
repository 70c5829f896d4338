#!/usr/bin/env node
// A minimal MCP stdio server for verifymcp's integration tests, plain Node
// with no dependencies. Its behaviour comes from fixture.json next to it,
// written by the test that packs it:
//   crash:        exit with this status at start, after a line on stderr
//   hang:         read requests and never answer any
//   ignoreUnknown: silently drop methods it does not know (server/discover)
//   noise:        print non-JSON lines on stdout around the handshake
//   oom:          allocate memory until killed
//   tools:        the tool list (served in pages of two)
//   onStart:      JavaScript run at start-up (behaviour fixtures)
//   onInitialized: JavaScript run once the client sent notifications/initialized
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

const tools = cfg.tools || [];
const send = (msg) => process.stdout.write(JSON.stringify(msg) + '\n');
const reply = (id, result) => send({ jsonrpc: '2.0', id, result });
const fail = (id, code, message) => send({ jsonrpc: '2.0', id, error: { code, message } });

function handle(msg) {
  if (cfg.hang) return;
  if (msg.id === undefined) { // notifications
    if (msg.method === 'notifications/initialized' && cfg.onInitialized) new Function('require', 'process', cfg.onInitialized)(require, process);
    return;
  }
  switch (msg.method) {
    case 'initialize':
      if (cfg.noise) process.stdout.write('initialized! (debug)\n');
      return reply(msg.id, {
        protocolVersion: cfg.protocolVersion || msg.params.protocolVersion,
        capabilities: { tools: {}, prompts: {}, resources: {} },
        serverInfo: { name: 'fixture-' + (cfg.name || 'server'), version: '1.0.0' },
        instructions: 'Fixture server for tests.',
      });
    case 'tools/list': {
      const start = msg.params && msg.params.cursor ? Number(msg.params.cursor) : 0;
      const page = tools.slice(start, start + 2);
      const res = { tools: page };
      if (start + 2 < tools.length) res.nextCursor = String(start + 2);
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
    default:
      if (cfg.ignoreUnknown) return;
      return fail(msg.id, -32601, 'Method not found: ' + msg.method);
  }
}

let buf = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buf += chunk;
  let i;
  while ((i = buf.indexOf('\n')) >= 0) {
    const line = buf.slice(0, i).trim();
    buf = buf.slice(i + 1);
    if (!line) continue;
    let msg;
    try { msg = JSON.parse(line); } catch (e) { continue; }
    handle(msg);
  }
});
process.stdin.on('end', () => process.exit(0));
