#!/usr/bin/env node
// A tiny MCP server over stdio for verifymcp's MCPB bundle tests: plain
// Node, no dependencies, newline-delimited JSON-RPC written by hand.
// make.sh copies it into every fixture bundle as server/index.js, next to
// the bundle's surface.json, which says what it serves:
//   name:    the serverInfo name
//   tools:   [{name, description, inputSchema?}] served by tools/list
//   prompts: [{name, description, arguments?, text}] served by prompts/list
//            (no prompts capability when absent)
// Every tool answers tools/call with one text content; none touches the
// file system, the network or a shell. Settings come from the command
// line (--notes-dir DIR) and the environment (NOTES_API_KEY); the key is
// only checked for presence, never printed.
'use strict';
const fs = require('fs');
const path = require('path');
const surface = JSON.parse(fs.readFileSync(path.join(__dirname, 'surface.json'), 'utf8'));
const tools = (surface.tools || []).map((t) => Object.assign({ inputSchema: { type: 'object', properties: {} } }, t));
const prompts = surface.prompts || null;

const argv = process.argv.slice(2);
const notesDir = argv.indexOf('--notes-dir') >= 0 ? argv[argv.indexOf('--notes-dir') + 1] : '';
const keySet = Boolean(process.env.NOTES_API_KEY);
process.stderr.write(`${surface.name}: started (notes dir ${notesDir ? 'given' : 'not given'}, api key ${keySet ? 'set' : 'not set'})\n`);

const send = (msg) => process.stdout.write(JSON.stringify(msg) + '\n');
const reply = (id, result) => send({ jsonrpc: '2.0', id, result });
const fail = (id, code, message) => send({ jsonrpc: '2.0', id, error: { code, message } });
const text = (s) => ({ content: [{ type: 'text', text: s }] });

// What each tool answers (a tool without an entry echoes its name).
const calls = {
  get_time: () => text(new Date().toISOString()),
  echo: (args) => text(String(args.text === undefined ? '' : args.text)),
  run_command: (args) => text('not run: ' + String(args.command === undefined ? '' : args.command)),
  search_docs: (args) => text('no documents match ' + JSON.stringify(String(args.query === undefined ? '' : args.query))),
};

function handle(msg) {
  if (msg.id === undefined || msg.id === null) return; // notifications, notifications/initialized among them
  if (msg.method === undefined) return; // an answer to nothing we asked
  switch (msg.method) {
    case 'initialize': {
      const capabilities = { tools: {} };
      if (prompts) capabilities.prompts = {};
      return reply(msg.id, { protocolVersion: '2025-06-18', capabilities, serverInfo: { name: surface.name, version: '1.0.0' } });
    }
    case 'ping':
      return reply(msg.id, {});
    case 'tools/list':
      return reply(msg.id, { tools });
    case 'prompts/list':
      if (!prompts) break;
      return reply(msg.id, { prompts: prompts.map(({ name, description, arguments: a }) => ({ name, description, arguments: a || [] })) });
    case 'prompts/get': {
      if (!prompts) break;
      const p = prompts.find((p) => p.name === (msg.params && msg.params.name));
      if (!p) return fail(msg.id, -32602, 'Unknown prompt');
      return reply(msg.id, { messages: [{ role: 'user', content: { type: 'text', text: p.text } }] });
    }
    case 'tools/call': {
      const name = msg.params && msg.params.name;
      if (!tools.some((t) => t.name === name)) return fail(msg.id, -32602, 'Unknown tool: ' + name);
      const f = calls[name] || (() => text(name + ' called'));
      return reply(msg.id, f((msg.params && msg.params.arguments) || {}));
    }
  }
  return fail(msg.id, -32601, 'Method not found: ' + msg.method);
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
    try { msg = JSON.parse(line); } catch { send({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }); continue; }
    handle(msg);
  }
});
process.stdin.on('end', () => process.exit(0));
