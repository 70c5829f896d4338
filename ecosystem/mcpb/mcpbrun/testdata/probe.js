#!/usr/bin/env node
// probe.js BUNDLE.mcpb: runs a bundle's server the way verifymcp's scan
// does, without Docker: unpacks the bundle into a temporary directory
// (then made read-only), runs the manifest's mcp_config command with
// ${__dirname} the unpacked directory, ${HOME} a temporary home and every
// user_config option its default or a placeholder (sensitive ones a
// made-up token), pipes initialize, notifications/initialized, ping,
// tools/list and prompts/list, and prints what the server answered and how
// its lists compare with the manifest's. Exits non-zero if the server did
// not answer initialize and tools/list, or printed a sensitive value.
// Plain Node, no dependencies; needs unzip.
'use strict';
const { execFileSync, spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const bundle = process.argv[2];
if (!bundle) { console.error('usage: probe.js BUNDLE.mcpb'); process.exit(2); }
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpb-probe-'));
const dir = path.join(tmp, 'bundle');
const home = path.join(tmp, 'home');
fs.mkdirSync(path.join(home, 'work'), { recursive: true });
execFileSync('unzip', ['-q', bundle, '-d', dir]);
execFileSync('chmod', ['-R', 'a-w', dir]);
const cleanup = () => { execFileSync('chmod', ['-R', 'u+w', dir]); fs.rmSync(tmp, { recursive: true, force: true }); };
const m = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));

// Setting values as the scan gives them: a default, else a placeholder.
const sys = { __dirname: dir, HOME: home, pathSeparator: '/', '/': '/', DESKTOP: path.join(home, 'Desktop'), DOCUMENTS: path.join(home, 'Documents'), DOWNLOADS: path.join(home, 'Downloads') };
const sub = (s) => s.replace(/\$\{([^}]+)\}/g, (all, name) => {
  if (name in sys) return sys[name];
  const key = name.startsWith('user_config.') ? name.slice('user_config.'.length) : null;
  if (key !== null && key in values) return values[key];
  return all;
});
const values = {};
const secrets = [];
for (const [k, o] of Object.entries(m.user_config || {})) {
  if (o.default !== undefined && o.default !== '') { values[k] = String(o.default); continue; }
  switch (o.type) {
    case 'directory': values[k] = path.join(home, 'work'); break;
    case 'file': values[k] = path.join(home, 'work', 'notes.txt'); break;
    case 'number': values[k] = String(o.min !== undefined ? o.min : 1); break;
    case 'boolean': values[k] = 'false'; break;
    default: values[k] = o.sensitive ? 'mcpb-' + k + '-' + require('crypto').randomBytes(8).toString('hex') : 'placeholder-' + k;
  }
  if (o.sensitive) secrets.push(values[k]);
}
for (const k of Object.keys(values)) values[k] = sub(values[k]);
const cfg = m.server.mcp_config;
const cmd = sub(cfg.command);
const args = (cfg.args || []).map(sub);
const env = { PATH: process.env.PATH, HOME: home };
for (const [k, v] of Object.entries(cfg.env || {})) env[k] = sub(v);

const child = spawn(cmd, args, { cwd: home, env, stdio: ['pipe', 'pipe', 'pipe'] });
let out = '', err = '';
child.stdout.on('data', (d) => { out += d; });
child.stderr.on('data', (d) => { err += d; });
const requests = [
  { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'verifymcp-probe', version: '0' } } },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 2, method: 'ping' },
  { jsonrpc: '2.0', id: 3, method: 'tools/list' },
  { jsonrpc: '2.0', id: 4, method: 'prompts/list' },
  { jsonrpc: '2.0', id: 5, method: 'no/such/method' },
];
for (const r of requests) child.stdin.write(JSON.stringify(r) + '\n');
// Close stdin once every request is answered (or after 20 s): the server
// must then exit by itself.
const answered = () => out.split('\n').filter((l) => /"id":\s*5\b/.test(l)).length > 0;
const started = Date.now();
const poll = setInterval(() => {
  if (answered() || Date.now() - started > 20000) { clearInterval(poll); child.stdin.end(); }
}, 50);
const killer = setTimeout(() => child.kill('SIGKILL'), 30000);
child.on('exit', (code, signal) => {
  clearTimeout(killer);
  const byId = {};
  for (const l of out.split('\n')) { if (!l.trim()) continue; try { const j = JSON.parse(l); if (j.id !== undefined) byId[j.id] = j; } catch { } }
  const init = byId[1] && byId[1].result;
  const tools = byId[3] && byId[3].result ? byId[3].result.tools.map((t) => t.name) : null;
  const prompts = byId[4] && byId[4].result ? byId[4].result.prompts.map((p) => p.name) : null;
  const declaredTools = m.tools ? m.tools.map((t) => t.name) : null;
  const declaredPrompts = m.prompts ? m.prompts.map((p) => p.name) : null;
  const diff = (a, b) => (a || []).filter((x) => !(b || []).includes(x));
  const report = {
    bundle: path.basename(bundle),
    command: [cmd, ...args].join(' ').split(dir).join('${__dirname}'),
    exit: signal || code,
    protocolVersion: init && init.protocolVersion,
    serverInfo: init && init.serverInfo,
    capabilities: init && init.capabilities,
    ping: byId[2] ? (byId[2].error ? 'error ' + byId[2].error.code : 'ok') : 'no answer',
    tools,
    prompts: prompts || (byId[4] && byId[4].error ? 'error ' + byId[4].error.code : 'no answer'),
    unknownMethod: byId[5] ? (byId[5].error ? 'error ' + byId[5].error.code : 'answered') : 'no answer',
    declaredTools,
    declaredPrompts,
    toolsServedNotDeclared: declaredTools && !m.tools_generated ? diff(tools, declaredTools) : '(not compared)',
    toolsDeclaredNotServed: declaredTools ? diff(declaredTools, tools) : '(not compared)',
    promptsServedNotDeclared: declaredPrompts && Array.isArray(prompts) && !m.prompts_generated ? diff(prompts, declaredPrompts) : '(not compared)',
    promptsDeclaredNotServed: declaredPrompts ? diff(declaredPrompts, Array.isArray(prompts) ? prompts : []) : '(not compared)',
    stderr: err.trim().split(dir).join('${__dirname}').split(home).join('${HOME}'),
  };
  const leaked = secrets.filter((s) => out.includes(s) || err.includes(s));
  report.sensitiveValuePrinted = leaked.length > 0;
  console.log(JSON.stringify(report, null, 2));
  cleanup();
  process.exit(init && tools && !leaked.length ? 0 : 1);
});
