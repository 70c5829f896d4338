// verifymcp fetch driver. Contract: runs in the fetch step of the install
// phase, as uid 65534, in /work/tree, with egress only through the registry
// proxy. It first checks that it reaches the registry (the preflight: an HTTP
// CONNECT to the egress proxy, TLS with Node's own trust store plus the
// operator's CA bundle, one GET of the target's packument), then installs one
// exact package with lifecycle scripts disabled (no package code runs here),
// then prints one line "VERIFYMCP-RESULT <json>" on stdout describing the
// installed tree. When the preflight fails npm is not run, and the result
// holds the preflight's Node error code, stage and status. When npm fails,
// the result holds npm's own error (its --json object) and the git URLs it
// asked for. Arguments: <spec> <name> <expected integrity or ""> <pack spec
// or "">. It exits 0 whenever it could print a result, including when npm
// failed; the result says so.
'use strict';
const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const http = require('http');
const net = require('net');
const https = require('https');
const tls = require('tls');

const [spec, name, expected, packSpec] = process.argv.slice(1);
const tree = '/work/tree';
const result = { ok: false, npm_exit: null, log_tail: '', lockfile: '', target: null, packages: 0, scripts: [], integrity: { expected, lockfile: '', computed: '' }, preflight: null, npm_error: null, git_wanted: [] };

function tail(s, n) { s = s || ''; return s.length > n ? s.slice(s.length - n) : s; }
function emit() {
  // The CA bundle and the git shim are only for this step, whatever its end.
  for (const f of ['ca.pem', 'git']) {
    try { fs.unlinkSync(path.join(tree, '.verifymcp', f)); } catch (e) { /* not there */ }
  }
  // The line holds the whole lockfile; a write to the attach stream is
  // asynchronous, so whoever exits waits for it (see flushed).
  process.stdout.write('\nVERIFYMCP-RESULT ' + JSON.stringify(result) + '\n');
}
// flushed exits once everything written to stdout is out: process.exit
// right after a large write cuts it short.
function flushed() { process.stdout.write('', () => process.exit(0)); }
function readJSON(p) { try { return JSON.parse(fs.readFileSync(p, 'utf8')); } catch (e) { return null; } }

// preflight asks the registry for the target's packument the way npm
// would reach it: CONNECT through the egress proxy, then TLS (for https)
// with the default trust store, which includes NODE_EXTRA_CA_CERTS. Any
// HTTP answer below 500 proves the path; 5xx is tried once more. It
// resolves to {ok, stage, code, message, status, egress_error, ms}; stage
// says where it failed: proxy (the egress proxy itself), connect (the
// proxy's tunnel to the registry), tls, http (the registry's answer).
function preflightOnce(registry, proxy, pkg, timeoutMs) {
  return new Promise((resolve) => {
    const started = Date.now();
    const out = { ok: false, stage: 'proxy', code: '', message: '', status: 0, egress_error: '', host: '', ms: 0 };
    let settled = false;
    const open = [];
    const done = (o) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      for (const s of open) { try { s.destroy(); } catch (e) { /* gone */ } }
      Object.assign(out, o);
      out.ms = Date.now() - started;
      resolve(out);
    };
    let timer = null;
    let reg, px;
    try { reg = new URL(registry); px = new URL(proxy); } catch (e) { done({ code: 'EINVAL', message: String(e.message || e) }); return; }
    const secure = reg.protocol === 'https:';
    const port = reg.port || (secure ? '443' : '80');
    out.host = reg.hostname + ':' + port;
    const req = http.request({ host: px.hostname, port: px.port || 80, method: 'CONNECT', path: out.host, headers: { host: out.host } });
    open.push(req);
    timer = setTimeout(() => done({ code: 'ETIMEDOUT', message: 'no answer within ' + timeoutMs + ' ms' }), timeoutMs);
    req.on('error', (e) => done({ stage: 'proxy', code: e.code || 'ERROR', message: String(e.message || e) }));
    req.on('connect', (res, socket) => {
      open.push(socket);
      if (res.statusCode !== 200) {
        done({ stage: 'connect', status: res.statusCode, egress_error: String(res.headers['x-verifymcp-egress-error'] || ''), message: String(res.headers['x-verifymcp-egress-detail'] || res.statusMessage || '') });
        return;
      }
      let stage = 'http';
      let conn = socket;
      if (secure) {
        stage = 'tls';
        conn = tls.connect({ socket, servername: net.isIP(reg.hostname) ? undefined : reg.hostname });
        open.push(conn);
        conn.on('secureConnect', () => { stage = 'http'; });
        conn.on('error', (e) => done({ stage, code: e.code || 'ERROR', message: String(e.message || e) }));
      }
      const base = reg.pathname.endsWith('/') ? reg.pathname : reg.pathname + '/';
      const mod = secure ? https : http;
      // No agent: createConnection hands the tunnel over. An agent would
      // open its own connection, and look the registry's name up on a
      // network with no resolver for it.
      const get = mod.request({ host: reg.hostname, port, method: 'GET', path: base + pkg.replace('/', '%2f'),
        headers: { accept: 'application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8', 'user-agent': 'verifymcp-preflight' },
        createConnection: () => conn });
      open.push(get);
      get.on('error', (e) => done({ stage, code: e.code || 'ERROR', message: String(e.message || e) }));
      get.on('response', (r) => {
        r.resume();
        r.on('end', () => done({ stage: 'http', status: r.statusCode, ok: r.statusCode < 500 }));
        r.on('error', (e) => done({ stage: 'http', code: e.code || 'ERROR', message: String(e.message || e) }));
      });
      get.end();
    });
    req.end();
  });
}

async function preflight() {
  const registry = process.env.NPM_CONFIG_REGISTRY || 'https://registry.npmjs.org/';
  const proxy = process.env.NPM_CONFIG_HTTPS_PROXY || process.env.NPM_CONFIG_PROXY || '';
  if (!proxy) return { ok: true, stage: 'skipped', code: '', message: 'no proxy configured', status: 0, egress_error: '', host: '', ms: 0 };
  // The packument of a local tarball's name may not exist: a 404 still
  // proves the path. Any name will do; the target's is the one npm asks for.
  // A 5xx or a reset connection is tried once more; a timeout is not (the
  // proxy's own dial already waited 15 s).
  let p = await preflightOnce(registry, proxy, name, 20000);
  if (!p.ok && ((p.stage === 'http' && p.status >= 500) || ['ECONNRESET', 'EPIPE'].includes(p.code))) {
    await new Promise((r) => setTimeout(r, 1000));
    p = await preflightOnce(registry, proxy, name, 20000);
  }
  return p;
}

// npm asks git for git dependencies. The image has no git, and the fetch
// step reaches only the registry: a shim records what npm wanted and fails.
// It lives in the tree (the container's /tmp is noexec) and is removed with
// the CA bundle before the result is printed.
const gitShim = path.join(tree, '.verifymcp', 'git');
const gitLog = '/tmp/verifymcp-git.log';
function installGitShim() {
  fs.mkdirSync(path.dirname(gitShim), { recursive: true });
  fs.writeFileSync(gitShim, '#!/bin/sh\nfor a in "$@"; do printf \'%s\\t\' "$a"; done >> ' + gitLog + '\nprintf \'\\n\' >> ' + gitLog + '\necho "fatal: the verifymcp sandbox fetches only from the registry, not with git" >&2\nexit 128\n', { mode: 0o755 });
}
function gitWanted() {
  let text = '';
  try { text = fs.readFileSync(gitLog, 'utf8'); } catch (e) { return []; }
  const urls = new Set();
  for (const line of text.split('\n')) {
    for (const a of line.split('\t')) {
      if (/^(https?|ssh|git|git\+ssh|git\+https):\/\//.test(a) || /^[\w.-]+@[\w.-]+:/.test(a)) urls.add(a);
    }
  }
  return [...urls].sort();
}

// npmError reads the error object npm --json prints on stdout: the whole of
// stdout when nothing else was printed, else the last object that starts a
// line.
function npmError(stdout) {
  const text = (stdout || '').trim();
  const tries = [text];
  const i = text.lastIndexOf('\n{');
  if (i >= 0) tries.push(text.slice(i + 1));
  for (const t of tries) {
    try {
      const e = JSON.parse(t).error;
      if (e && typeof e === 'object') return { code: String(e.code || ''), summary: String(e.summary || ''), detail: String(e.detail || '') };
    } catch (err) { /* not this one */ }
  }
  return null;
}

async function main() {
  fs.writeFileSync(path.join(tree, 'package.json'), JSON.stringify({ name: 'verifymcp-sandbox-root', version: '0.0.0', private: true }));
  result.preflight = await preflight();
  if (!result.preflight.ok) { emit(); return; }
  installGitShim();
  const npmArgs = ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--save-exact', '--prefer-offline', '--loglevel=warn', '--json', '--git=' + gitShim, spec];
  const r = spawnSync('npm', npmArgs, { cwd: tree, encoding: 'utf8', maxBuffer: 64 << 20 });
  result.npm_exit = r.status;
  result.log_tail = tail((r.stderr || '') + (r.error ? String(r.error) : ''), 4000);
  if (r.status !== 0) {
    result.npm_error = npmError(r.stdout);
    if (!result.npm_error) result.log_tail = tail((r.stdout || '') + result.log_tail, 4000);
    result.git_wanted = gitWanted();
    emit();
    return;
  }

  const lockText = fs.readFileSync(path.join(tree, 'package-lock.json'), 'utf8');
  result.lockfile = lockText;
  const lock = JSON.parse(lockText);
  const packages = lock.packages || {};
  const targetPath = 'node_modules/' + name;
  const lockEntry = packages[targetPath] || {};
  result.integrity.lockfile = lockEntry.integrity || '';

  const events = ['preinstall', 'install', 'postinstall'];
  for (const p of Object.keys(packages).sort()) {
    if (p === '' || packages[p].link) continue;
    result.packages++;
    const pj = readJSON(path.join(tree, p, 'package.json')) || {};
    const scripts = pj.scripts || {};
    let declared = events.filter((e) => typeof scripts[e] === 'string' && scripts[e].trim() !== '');
    const out = declared.map((e) => ({ event: e, command: scripts[e], implicit: false }));
    // npm runs "node-gyp rebuild" as the install script of a package that has
    // a binding.gyp and neither install nor preinstall script.
    if (!scripts.install && !scripts.preinstall && fs.existsSync(path.join(tree, p, 'binding.gyp'))) {
      out.push({ event: 'install', command: 'node-gyp rebuild', implicit: true });
    }
    for (const s of out) {
      result.scripts.push({ package: pj.name || p.replace(/^.*node_modules\//, ''), version: pj.version || '', path: p, event: s.event, command: s.command, implicit: s.implicit });
    }
  }

  const pj = readJSON(path.join(tree, targetPath, 'package.json'));
  if (pj) {
    let bins = pj.bin;
    if (typeof bins === 'string') { bins = { [String(pj.name || name).replace(/^@[^/]+\//, '')]: bins }; }
    result.target = { name: pj.name, version: pj.version, bin: bins || {}, engines: pj.engines || {}, main: pj.main || '' };
  }

  // Compute the integrity of the tarball bytes ourselves instead of trusting
  // what npm wrote down: hash the content npm's cache holds under the
  // registry's integrity (the bytes npm extracted, when the lockfile agrees).
  // If the cache does not hold it, let npm pack fetch it from the cache or the
  // registry and hash that file.
  function sri(algo, data) { return algo + '-' + crypto.createHash(algo).update(data).digest('base64'); }
  function fromCache(want) {
    const m = /^(sha(?:1|256|384|512))-(.+)$/.exec(want || '');
    if (!m) return '';
    const hex = Buffer.from(m[2], 'base64').toString('hex');
    const p = path.join(process.env.NPM_CONFIG_CACHE || '/cache/npm', '_cacache', 'content-v2', m[1], hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));
    try { return sri(m[1], fs.readFileSync(p)); } catch (e) { return ''; }
  }
  if (spec.startsWith('/')) {
    result.integrity.computed = sri('sha512', fs.readFileSync(spec));
  } else if (packSpec) {
    result.integrity.computed = fromCache(expected);
    if (!result.integrity.computed) {
      const dest = '/tmp/verifymcp-pack';
      fs.mkdirSync(dest, { recursive: true });
      const pr = spawnSync('npm', ['pack', '--prefer-offline', '--loglevel=error', '--pack-destination', dest, packSpec], { cwd: '/tmp', encoding: 'utf8', maxBuffer: 16 << 20 });
      const files = pr.status === 0 ? fs.readdirSync(dest).filter((f) => f.endsWith('.tgz')) : [];
      if (files.length === 1) {
        const algo = (/^(sha\d+)-/.exec(expected || '') || [, 'sha512'])[1];
        result.integrity.computed = sri(algo, fs.readFileSync(path.join(dest, files[0])));
      } else {
        result.integrity.pack_error = tail((pr.stdout || '') + (pr.stderr || ''), 1000);
      }
    }
  }
  result.ok = true;
  emit();
}

// Exit as soon as the result is out: a socket left half-open by a failed
// preflight must not hold the step.
main().then(flushed, (e) => {
  result.log_tail = tail(result.log_tail + '\n' + String((e && e.stack) || e), 4000);
  emit();
  flushed();
});
