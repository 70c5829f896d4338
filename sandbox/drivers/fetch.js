// verifymcp fetch driver. Contract: runs in the fetch step of the install
// phase, as uid 65534, in /work/tree, with egress only through the registry
// proxy. It installs one exact package with lifecycle scripts disabled (no
// package code runs here), then prints one line "VERIFYMCP-RESULT <json>" on
// stdout describing the installed tree. Arguments: <spec> <name> <expected
// integrity or ""> <pack spec or "">. It exits 0 whenever it could print a
// result, including when npm failed; the result says so.
'use strict';
const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');

const [spec, name, expected, packSpec] = process.argv.slice(1);
const tree = '/work/tree';
const result = { ok: false, npm_exit: null, log_tail: '', lockfile: '', target: null, packages: 0, scripts: [], integrity: { expected, lockfile: '', computed: '' } };

function tail(s, n) { s = s || ''; return s.length > n ? s.slice(s.length - n) : s; }
function emit() { process.stdout.write('\nVERIFYMCP-RESULT ' + JSON.stringify(result) + '\n'); }
function readJSON(p) { try { return JSON.parse(fs.readFileSync(p, 'utf8')); } catch (e) { return null; } }

fs.writeFileSync(path.join(tree, 'package.json'), JSON.stringify({ name: 'verifymcp-sandbox-root', version: '0.0.0', private: true }));
const npmArgs = ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--save-exact', '--prefer-offline', '--loglevel=warn', spec];
const r = spawnSync('npm', npmArgs, { cwd: tree, encoding: 'utf8', maxBuffer: 64 << 20 });
result.npm_exit = r.status;
result.log_tail = tail((r.stdout || '') + (r.stderr || '') + (r.error ? String(r.error) : ''), 4000);
if (r.status !== 0) { emit(); process.exit(0); }

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
// The CA bundle was only for this step.
try { fs.unlinkSync(path.join(tree, '.verifymcp', 'ca.pem')); } catch (e) {}
result.ok = true;
emit();
