// Helpers for record.sh (run with the pinned node):
//
//   record-lib.js parse SERVERS.txt          one JSON object per target line
//   record-lib.js bin TREE NAME [BIN]        the entry point, by verifymcp's rule
//   record-lib.js tree TREE NAME             facts of the installed tree
//   record-lib.js assemble SPEC.json         the recorded JSON, on stdout
//   record-lib.js compare OLD.json NEW.json  do two recordings list the same?
//   record-lib.js pybin VENV NAME [BIN]      PyPI: the console script, by verifymcp's rule
//   record-lib.js pytree VENV NAME           PyPI: facts of the installed venv
//   record-lib.js pyfail INSTALL.log         PyPI: why uv could not install (one line)
//   record-lib.js envretry RUNDIR [K=V...]   did the server answer initialize; env names its output asks for
//   record-lib.js failed SPEC.json           the recorded JSON of a server that could not be installed or started
'use strict';
const fs = require('fs');
const path = require('path');
const util = require('util');

const METHODS = ['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list'];
// capability that gates each list method, and the key of its items
const GATE = {
  'tools/list': ['tools', 'tools'],
  'prompts/list': ['prompts', 'prompts'],
  'resources/list': ['resources', 'resources'],
  'resources/templates/list': ['resources', 'resourceTemplates'],
};

// splitWords is verifymcp's batch-file word splitter (cmd/verifymcp/cli/batch.go):
// blank-separated words, ' or " quotes without escapes, a word starting with #
// outside quotes starts a comment.
function splitWords(s) {
  const words = [];
  let cur = '', inWord = false, quote = '';
  for (const r of s) {
    if (quote) { if (r === quote) quote = ''; else cur += r; continue; }
    if (r === "'" || r === '"') { quote = r; inWord = true; continue; }
    if (r === ' ' || r === '\t') { if (inWord) { words.push(cur); cur = ''; inWord = false; } continue; }
    if (r === '#' && !inWord) return words;
    cur += r; inWord = true;
  }
  if (quote) throw new Error(`unterminated ${quote} quote`);
  if (inWord) words.push(cur);
  return words;
}

// slug: the package name without its scope, lower case; a bare name that says
// nothing by itself (mcp, mcp-server, server) keeps its scope in front.
function slug(name) {
  let bare = name, scope = '';
  if (name.startsWith('@')) { [scope, bare] = name.slice(1).split('/'); }
  let s = bare.toLowerCase();
  if (scope && ['mcp', 'mcp-server', 'server'].includes(s)) s = scope.toLowerCase() + '-' + s;
  return s.replace(/[^a-z0-9._-]+/g, '-');
}

// pep503 normalises a PyPI project name.
function pep503(name) { return name.replace(/[-_.]+/g, '-').toLowerCase(); }

function parse(file) {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  // A PyPI id is the PEP 503 name, prefixed pypi- only when an npm line of
  // the file has that id.
  const npmIDs = new Set();
  lines.forEach((text) => {
    const words = splitWords(text.replace(/\r$/, ''));
    const m = words.length && /^npm:((?:@[^/@]+\/)?[^@]+)@/.exec(words[0]);
    if (m) {
      const idm = /#\s*id:\s*([a-z0-9._-]+)\s*$/.exec(text);
      npmIDs.add(idm ? idm[1] : slug(m[1]));
    }
  });
  lines.forEach((text, i) => {
    const words = splitWords(text.replace(/\r$/, ''));
    if (!words.length) return;
    const target = words[0];
    let o;
    const m = /^npm:((?:@[^/@]+\/)?[^@]+)@(\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?)$/.exec(target);
    const p = /^pypi:([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)==([0-9A-Za-z!+_.-]+)$/.exec(target);
    if (m) o = { line: i + 1, target, name: m[1], version: m[2], id: slug(m[1]), bin: '', args: [], env: [], ecosystem: 'npm' };
    else if (p) {
      const id = npmIDs.has(pep503(p[1])) ? 'pypi-' + pep503(p[1]) : pep503(p[1]);
      o = { line: i + 1, target, name: p[1], version: p[2], id, bin: '', args: [], env: [], ecosystem: 'pypi' };
    } else throw new Error(`${file}:${i + 1}: want npm:NAME@EXACT_VERSION or pypi:NAME==EXACT_VERSION, got ${target}`);
    // "# id: ID" names a second recording of the same package (other arguments).
    const idm = /#\s*id:\s*([a-z0-9._-]+)\s*$/.exec(text);
    if (idm) o.id = idm[1];
    const nl = /#\s*not listable unsandboxed:\s*(.*)$/.exec(text);
    if (nl) o.not_listable = nl[1].trim();
    for (let j = 1; j < words.length; j++) {
      let [opt, ...rest] = words[j].split('=');
      let val = rest.join('=');
      if (!['--arg', '--bin', '--env'].includes(opt)) throw new Error(`${file}:${i + 1}: unknown option ${opt}`);
      if (!rest.length) { if (++j >= words.length) throw new Error(`${file}:${i + 1}: ${opt} needs a value`); val = words[j]; }
      if (opt === '--arg') o.args.push(val);
      if (opt === '--bin') o.bin = val;
      if (opt === '--env') {
        if (!/^[A-Za-z_][A-Za-z0-9_]*=/.test(val)) throw new Error(`${file}:${i + 1}: --env wants NAME=VALUE`);
        o.env.push(val);
      }
    }
    process.stdout.write(JSON.stringify(o) + '\n');
  });
}

// bin mirrors chooseBin in sandbox/install.go.
function chooseBin(tree, name, override) {
  const pj = JSON.parse(fs.readFileSync(path.join(tree, 'node_modules', name, 'package.json'), 'utf8'));
  let bins = pj.bin;
  const unscoped = name.includes('/') ? name.slice(name.lastIndexOf('/') + 1) : name;
  if (typeof bins === 'string') bins = { [unscoped]: bins };
  bins = bins || {};
  const keys = Object.keys(bins).sort((a, b) => (Buffer.compare(Buffer.from(a), Buffer.from(b))));
  const out = (k, rule) => ({ name: k, path: path.join(tree, 'node_modules', '.bin', k), rule, file: bins[k] });
  if (override) {
    if (!(override in bins)) throw new Error(`--bin ${override} is not a bin of ${name} (it declares: ${keys.join(', ')})`);
    return out(override, '--bin');
  }
  if (keys.length === 1) return out(keys[0], 'single bin entry');
  if (keys.length > 1) {
    if (unscoped in bins) return out(unscoped, 'bin named like the package');
    const k = keys.find((k) => k.includes('mcp'));
    if (k) return out(k, 'first bin containing "mcp"');
    return out(keys[0], 'first bin in byte order');
  }
  if (pj.main) return { name: 'main', path: path.join(tree, 'node_modules', name, path.normalize('/' + pj.main)), rule: 'package main (no bin)', node: true };
  throw new Error(`${name} declares neither bin nor main`);
}

// sitePackages returns the venv's site-packages directory.
function sitePackages(venv) {
  const lib = path.join(venv, 'lib');
  const py = fs.readdirSync(lib).filter((d) => /^python3\.\d+$/.test(d));
  if (py.length !== 1) throw new Error(`${venv}: want one lib/python3.X, found ${py.join(', ') || 'none'}`);
  return path.join(lib, py[0], 'site-packages');
}

// distInfos reads every installed distribution's METADATA (Name, Version):
// files only, no Python runs (a .pth file would run package code).
function distInfos(venv) {
  const sp = sitePackages(venv);
  const out = [];
  for (const d of fs.readdirSync(sp).filter((d) => d.endsWith('.dist-info')).sort()) {
    let meta = '';
    try { meta = fs.readFileSync(path.join(sp, d, 'METADATA'), 'utf8'); } catch { continue; }
    const head = meta.split(/\r?\n\r?\n/)[0];
    const field = (k) => { const m = new RegExp(`^${k}:\\s*(.*)$`, 'mi').exec(head); return m ? m[1].trim() : ''; };
    out.push({ dir: path.join(sp, d), name: field('Name'), version: field('Version') });
  }
  return out;
}

// consoleScripts parses [console_scripts] of an entry_points.txt.
function consoleScripts(file) {
  const out = {};
  if (!fs.existsSync(file)) return out;
  let section = '';
  for (let l of fs.readFileSync(file, 'utf8').split(/\r?\n/)) {
    l = l.trim();
    if (!l || l.startsWith('#') || l.startsWith(';')) continue;
    const sec = /^\[(.*)\]$/.exec(l);
    if (sec) { section = sec[1].trim(); continue; }
    if (section !== 'console_scripts') continue;
    const i = l.indexOf('=');
    if (i > 0) out[l.slice(0, i).trim()] = l.slice(i + 1).trim();
  }
  return out;
}

// pyBin mirrors choosePyScript in sandbox/pyinstall.go: over the console
// scripts of the installed distribution's entry_points.txt, --bin; else the
// script named like the project (PEP 503 names compared); else the only one;
// else the first, in byte order, containing "mcp"; else the first.
function pyBin(venv, name, override) {
  const dist = distInfos(venv).find((d) => pep503(d.name) === pep503(name));
  if (!dist) throw new Error(`${name} is not installed in ${venv}`);
  const scripts = consoleScripts(path.join(dist.dir, 'entry_points.txt'));
  const keys = Object.keys(scripts).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const out = (k, rule) => ({ name: k, path: path.join(venv, 'bin', k), rule, file: scripts[k] });
  if (override) {
    if (!(override in scripts)) throw new Error(`--bin ${override} is not a console script of ${name} (it declares: ${keys.join(', ') || 'none'})`);
    return out(override, '--bin');
  }
  const named = keys.find((k) => pep503(k) === pep503(name));
  if (named) return out(named, 'console script named like the project');
  if (keys.length === 1) return out(keys[0], 'single console script');
  if (keys.length > 1) {
    const k = keys.find((k) => k.includes('mcp'));
    if (k) return out(k, 'first console script containing "mcp"');
    return out(keys[0], 'first console script in byte order');
  }
  throw new Error(`${name} declares no console script (entry_points.txt [console_scripts])`);
}

// pyTree: the distributions installed in the venv (wheels only), the MCP
// SDKs and pydantic versions among them.
function pyTree(venv) {
  const dists = distInfos(venv).map((d) => ({ name: pep503(d.name), version: d.version }));
  dists.sort((a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)));
  const pick = (re) => dists.filter((d) => re.test(d.name)).map((d) => `${d.name}==${d.version}`);
  return {
    packages: dists.length,
    installed_from: 'wheels only (uv pip install --only-binary :all:)',
    mcp_sdks: pick(/^(mcp|fastmcp|mcp-server|fastapi-mcp|mcp-use)$/),
    pydantic: pick(/^(pydantic|pydantic-core)$/),
    list: dists.map((d) => `${d.name}==${d.version}`),
  };
}

// pyFail says in one line why uv could not install the release.
function pyFail(logFile) {
  const log = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '';
  const lines = log.split('\n').map((l) => l.trim()).filter(Boolean);
  const detail = (lines.find((l) => /^(cause:|error:)/.test(l) && !/^error: No solution found/.test(l)) || lines.find((l) => /^error:/.test(l)) || lines.slice(-1)[0] || 'no output').replace(/^(cause|error):\s*/, '').slice(0, 300);
  let reason = 'install failed';
  if (/the current Python version \([^)]*\) does not satisfy|requires-python/i.test(log)) reason = 'needs another Python';
  else if (/no usable wheels|building from source is disabled|--no-build|--only-binary|only-binary/i.test(log)) reason = 'needs an sdist build';
  else if (/no wheels with a matching Python (ABI|implementation|version) tag/i.test(log)) reason = 'needs another Python';
  else if (/no wheels with a matching platform tag/i.test(log)) reason = 'needs an sdist build';
  return `${reason}: ${detail}`;
}

// envNames: upper-case environment variable names that a server's output
// asks for (rule 6 of benchmark/realcorpus): NAME_LIKE_THIS words that end
// like configuration (KEY, TOKEN, SECRET, URL, ID, HOST...), and any
// upper-case word named as an environment variable ("environment variable
// X", "X is not set", "set X").
const ENV_SUFFIX = /_(API_KEY|KEY|KEYS|TOKEN|TOKENS|SECRET|SECRETS|URL|URI|URLS|ID|IDS|HOST|HOSTNAME|PORT|PASSWORD|PASS|PASSWD|PWD|USER|USERNAME|LOGIN|EMAIL|ENDPOINT|DOMAIN|REGION|PROJECT|ORG|ORGANIZATION|ACCOUNT|WORKSPACE|TENANT|DSN|DATABASE|DB|BUCKET|PATH|DIR|FILE|NAME|SID|CREDENTIALS|CREDENTIAL|CLIENT|SERVER|BASE|INSTANCE|TEAM|CHANNEL|AUTH|CERT|PAT|SITE|SPACE|ZONE|SUBDOMAIN|ADDRESS|ADDR|WALLET|APP|APPID|CONFIG|PROFILE|SERVICE|SCOPE|CLUSTER|STRING|ENV)$/;
const ENV_IGNORE = /^(ERR_|NODE_MODULE_|LD_|MODULE_NOT_FOUND$|PYTHON|UV_|NPM_|SSL_|OPENSSL_|V8_|ICU_|DEP\d|HOME$|PATH$)/;
function envNames(lines) {
  const names = [];
  const add = (n) => { if (!ENV_IGNORE.test(n) && !names.includes(n)) names.push(n); };
  for (const l of lines) {
    for (const m of l.matchAll(/\b[A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9]\b/g)) if (ENV_SUFFIX.test(m[0])) add(m[0]);
    const phrases = [
      /(?:environment|env)[ _-]?(?:variables?|vars?)\s*[:=]?\s*[`'"(]?\s*\b([A-Z][A-Z0-9_]{2,})\b/gi,
      /\b([A-Z][A-Z0-9_]{2,})\b[`'")]?\s+(?:environment|env)[ _-]?(?:variables?|vars?)/gi,
      /\b([A-Z][A-Z0-9_]{2,})\b[`'")]?\s+(?:is|are|was)\s+(?:not set|required|missing|undefined|empty)/gi,
      /(?:please set|must set|set the|missing|required:?)\s+[`'"]?\b([A-Z][A-Z0-9_]{2,})\b/gi,
      /(?:process\.env|os\.environ|os\.getenv|getenv|environ\.get)\s*(?:\.|\[|\()\s*[`'"]?([A-Z][A-Z0-9_]{2,})\b/g,
    ];
    for (const re of phrases) for (const m of l.matchAll(re)) if (/^[A-Z][A-Z0-9_]*$/.test(m[1])) add(m[1]);
  }
  return names.slice(0, 20);
}

// envRetry reads the initialize run's tap log: did the server answer
// initialize, how did it end, and which env names its stderr (and non-JSON
// stdout) asks for, less those already set.
function envRetry(runDir, set) {
  const w = wireOf(readTap(path.join(runDir, 'tap.log')));
  const answered = !!(w.initialize && w.initialize.error === undefined);
  const have = new Set(set.map((kv) => kv.replace(/=.*/, '')));
  const names = envNames([...w.stderr, ...w.nonJSON]).filter((n) => !have.has(n));
  return { answered, server_exit: w.exit, names, stderr_head: w.stderr.slice(0, 30).map((l) => l.slice(0, 400)) };
}

// failed: the recording of a server that could not be installed or given an
// entry point (no Inspector run).
function failed(specFile) {
  const spec = JSON.parse(fs.readFileSync(specFile, 'utf8'));
  const rec = {
    id: spec.id,
    target: spec.target,
    ecosystem: spec.ecosystem,
    args: spec.args,
    env_names: spec.env_names,
    inspector_version: spec.inspector_version,
    node_version: spec.node_version,
    npm_version: spec.npm_version,
  };
  if (spec.ecosystem === 'pypi') { rec.python_version = spec.python_version; rec.uv_version = spec.uv_version; }
  Object.assign(rec, { recorded_at: spec.recorded_at, install_command: spec.install_command, listable: false, not_listable: spec.not_listable });
  if (spec.log) rec.install_log_tail = tail(fs.existsSync(spec.log) ? fs.readFileSync(spec.log, 'utf8') : '');
  const scrub = (t) => t.split(spec.tree_dir).join('$TREE').split(spec.work).join('$SCRATCH');
  process.stdout.write(scrub(JSON.stringify(rec, null, 2)) + '\n');
}

// tree: packages in the installed tree, the MCP SDKs and zod versions in it,
// and which packages declare install scripts or native builds (not run).
function treeFacts(tree, name) {
  const lock = JSON.parse(fs.readFileSync(path.join(tree, 'package-lock.json'), 'utf8'));
  const pkgs = Object.entries(lock.packages || {}).filter(([k]) => k !== '');
  const named = pkgs.map(([k, v]) => ({ path: k, name: v.name || k.slice(k.lastIndexOf('node_modules/') + 13), version: v.version, v }));
  const pick = (re) => [...new Set(named.filter((p) => re.test(p.name)).map((p) => `${p.name}@${p.version}`))].sort();
  const scripts = named.filter((p) => p.v.hasInstallScript).map((p) => `${p.name}@${p.version}`);
  const optional = named.filter((p) => p.v.optional).length;
  const inTree = new Set();
  for (const p of named) {
    if (fs.existsSync(path.join(tree, p.path, 'package.json'))) inTree.add(p.path);
  }
  const gyp = named.filter((p) => inTree.has(p.path) && fs.existsSync(path.join(tree, p.path, 'binding.gyp'))).map((p) => `${p.name}@${p.version}`);
  const dotnode = [];
  const walk = (d, depth) => {
    if (depth > 12) return;
    let ents; try { ents = fs.readdirSync(d, { withFileTypes: true }); } catch { return; }
    for (const e of ents) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p, depth + 1);
      else if (e.name.endsWith('.node')) dotnode.push(path.relative(tree, p));
    }
  };
  walk(path.join(tree, 'node_modules'), 0);
  const top = named.find((p) => p.path === `node_modules/${name}`);
  return {
    packages: pkgs.length,
    installed: inTree.size,
    optional_packages: optional,
    mcp_sdks: pick(/^(@modelcontextprotocol\/(sdk|server|client|core|node)|firecrawl-fastmcp|fastmcp|mcp-framework|@mastra\/mcp|mcp-use|@cloudflare\/mcp|xmcp|tmcp|@tmcp\/.*|mcp-handler|@vercel\/mcp-adapter|mcp-proxy)$/),
    zod: pick(/^(zod|zod-to-json-schema|@valibot\/to-json-schema|valibot|arktype|effect)$/),
    install_scripts: scripts.sort(),
    binding_gyp: gyp.sort(),
    prebuilt_node_files: dotnode.sort(),
    package_has_install_script: !!(top && top.v.hasInstallScript),
    list: named.map((p) => `${p.path.replace(/^node_modules\//, '').replace(/\/node_modules\//g, ' > ')}@${p.version}${p.v.optional ? ' (optional)' : ''}${inTree.has(p.path) ? '' : ' (not installed)'}`).sort(),
  };
}

// readTap parses a tap.js log.
function readTap(file) {
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

// wireOf extracts, from a tap log, the initialize exchange and the answers to
// each list method (every page), exactly as the server sent them.
function wireOf(entries) {
  const msgs = [];
  const nonJSON = [];
  for (const e of entries) {
    if (e.dir !== 'c2s' && e.dir !== 's2c') continue;
    try { msgs.push({ t: e.t, dir: e.dir, m: JSON.parse(e.line) }); } catch { if (e.dir === 's2c') nonJSON.push(e.line); }
  }
  const reqs = new Map();
  for (const x of msgs) if (x.dir === 'c2s' && x.m.method && x.m.id !== undefined) reqs.set(JSON.stringify(x.m.id), x);
  const out = { pages: {}, errors: {}, nonJSON, serverRequests: [], notifications: [] };
  for (const x of msgs) {
    if (x.dir === 's2c' && x.m.method) {
      if (x.m.id !== undefined) out.serverRequests.push(x.m.method); else out.notifications.push(x.m.method);
      continue;
    }
    if (x.dir !== 's2c' || x.m.id === undefined) continue;
    const req = reqs.get(JSON.stringify(x.m.id));
    if (!req) continue;
    const method = req.m.method;
    if (method === 'initialize') {
      out.initializeParams = req.m.params;
      out.initialize = x.m.result !== undefined ? x.m.result : { error: x.m.error };
      out.initializeMS = x.t;
      continue;
    }
    if (x.m.error) { (out.errors[method] = out.errors[method] || []).push(x.m.error); continue; }
    (out.pages[method] = out.pages[method] || []).push(x.m.result);
  }
  const spawn = entries.find((e) => e.dir === 'tap' && e.line.startsWith('exit '));
  out.exit = spawn ? JSON.parse(spawn.line.slice(5)) : null;
  out.stderr = entries.filter((e) => e.dir === 'err').map((e) => e.line);
  return out;
}

function readJSON(file) {
  const s = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim() : '';
  if (!s) return undefined;
  try { return JSON.parse(s); } catch { return { unparsed: s.slice(0, 2000) }; }
}

// diffPaths lists where two JSON values differ (at most n).
function diffPaths(a, b, p = '', out = [], n = 20) {
  if (out.length >= n) return out;
  if (util.isDeepStrictEqual(a, b)) return out;
  const oa = a && typeof a === 'object', ob = b && typeof b === 'object';
  if (oa && ob && Array.isArray(a) === Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) {
      if (!(k in a)) out.push(`${p}/${k}: only in the server's answer`);
      else if (!(k in b)) out.push(`${p}/${k}: only in the Inspector's output`);
      else diffPaths(a[k], b[k], `${p}/${k}`, out, n);
      if (out.length >= n) break;
    }
    return out;
  }
  out.push(`${p}: ${JSON.stringify(b).slice(0, 80)} (server) vs ${JSON.stringify(a).slice(0, 80)} (Inspector)`);
  return out;
}

function assemble(specFile) {
  const spec = JSON.parse(fs.readFileSync(specFile, 'utf8'));
  const runs = {};
  for (const m of ['initialize', ...METHODS]) {
    const dir = path.join(spec.runs, m.replace(/\//g, '_'));
    runs[m] = {
      rc: Number(fs.readFileSync(path.join(dir, 'rc'), 'utf8').trim()),
      stdout: readJSON(path.join(dir, 'stdout')),
      stderr: fs.existsSync(path.join(dir, 'stderr')) ? fs.readFileSync(path.join(dir, 'stderr'), 'utf8') : '',
      wire: wireOf(readTap(path.join(dir, 'tap.log'))),
      seconds: Number(fs.readFileSync(path.join(dir, 'seconds'), 'utf8').trim()),
    };
  }
  const init = runs.initialize;
  const rec = {
    id: spec.id,
    target: spec.target,
    ecosystem: spec.ecosystem || 'npm',
    bin: spec.bin.name,
    bin_rule: spec.bin.rule,
    bin_file: spec.bin.file,
    args: spec.args,
    env_names: spec.env_names,
    inspector_version: spec.inspector_version,
    inspector_initialize_params: init.wire.initializeParams || null,
    node_version: spec.node_version,
    npm_version: spec.npm_version,
    ...(spec.ecosystem === 'pypi' ? { python_version: spec.python_version, uv_version: spec.uv_version } : {}),
    recorded_at: spec.recorded_at,
    command: spec.command,
    network: 'a new network namespace with only lo, up (no other interface, no route out)',
    tree: { ...spec.tree, list: undefined },
  };
  delete rec.tree.list;
  // The initialize result as the Inspector prints it (--method initialize).
  if (init.rc === 0 && init.stdout && init.stdout.result) {
    rec.initialize = init.stdout.result;
  } else {
    rec.initialize = { error: (init.stdout && init.stdout.error) || lastErrorLine(init.stderr) || `inspector exit ${init.rc}`, inspector_exit: init.rc };
    rec.not_listable = spec.not_listable || `the Inspector could not initialize the server (exit ${init.rc}); the server ${init.wire.exit ? 'exited with ' + JSON.stringify(init.wire.exit) : 'did not exit'}; its stderr is in server_stderr_head`;
  }
  const listable = init.rc === 0;
  const wire = { initialize: init.wire.initialize === undefined ? null : init.wire.initialize };
  const matches = {};
  const startup = {};
  const summary = {};
  const notes = [];
  for (const m of ['initialize', ...METHODS]) {
    const r = runs[m];
    startup[m] = r.wire.initializeMS === undefined ? null : r.wire.initializeMS;
  }
  for (const m of METHODS) {
    const r = runs[m];
    const [cap, key] = GATE[m];
    summary[m] = null;
    const caps = r.wire.initialize && r.wire.initialize.capabilities;
    const sent = r.wire.pages[m] || r.wire.errors[m];
    if (r.rc !== 0) {
      const err = r.wire.errors[m];
      if (err && err.some((e) => e.code === -32601)) {
        summary[m] = 'unsupported';
        rec[m] = { unsupported: `the server declared the ${cap} capability but answered ${m} with ${JSON.stringify(err[0])}` };
      } else {
        summary[m] = 'error';
        rec[m] = { error: (r.stdout && r.stdout.error) || lastErrorLine(r.stderr) || `inspector exit ${r.rc}`, inspector_exit: r.rc };
        if (err) rec[m].server_error = err;
      }
      wire[m] = err ? { errors: err } : null;
      continue;
    }
    if (!caps || !caps[cap]) {
      summary[m] = 'unsupported';
      rec[m] = { unsupported: `no ${cap} capability in the initialize result: the Inspector sent no ${m} and printed ${JSON.stringify(r.stdout && r.stdout.result)}` };
      wire[m] = sent ? { pages: r.wire.pages[m], errors: r.wire.errors[m] } : null;
      continue;
    }
    rec[m] = r.stdout.result;
    const pages = r.wire.pages[m] || [];
    summary[m] = printed(r.stdout.result, key).length;
    wire[m] = pages;
    const items = [].concat(...pages.map((p) => (p && p[key]) || []));
    const shown = printed(r.stdout.result, key);
    if (util.isDeepStrictEqual(items, shown)) matches[m] = true;
    else matches[m] = diffPaths(shown, items);
    if (m === 'tools/list') {
      summary.tools_with_annotations = items.filter((t) => t.annotations && Object.keys(t.annotations).length).length;
      summary.tools_with_output_schema = items.filter((t) => t.outputSchema).length;
      summary.tools_with_meta = items.filter((t) => t._meta).length;
      summary.tools_with_icons = items.filter((t) => t.icons).length;
    }
    if (pages.length > 1) notes.push(`${m}: ${pages.length} pages`);
  }
  rec.summary = { ...summary, startup_ms: startup.initialize };
  rec['wire_results'] = wire;
  rec['inspector_output_equals_wire'] = matches;
  rec.startup_ms = startup;
  rec.inspector_seconds = Object.fromEntries(Object.entries(runs).map(([m, r]) => [m, r.seconds]));
  rec.server_requests = [...new Set([].concat(...Object.values(runs).map((r) => r.wire.serverRequests)))];
  rec.server_notifications = [...new Set([].concat(...Object.values(runs).map((r) => r.wire.notifications)))];
  rec.server_non_json_stdout = [...new Set([].concat(...Object.values(runs).map((r) => r.wire.nonJSON)))].slice(0, 20);
  rec.server_stderr_head = (init.wire.stderr || []).slice(0, 30).map((l) => l.slice(0, 400));
  rec.server_exit_after_initialize_run = init.wire.exit;
  if (!listable) rec.listable = false;
  if (spec.env_retry) rec.env_retry = spec.env_retry;
  // Scratch paths (the tree, HOME, the working directory) say nothing about
  // the server: name them by role so two recordings compare.
  const listed = JSON.stringify([rec.initialize, ...METHODS.map((m) => rec[m])]);
  const scrub = (t) => t.split(spec.tree_dir).join('$TREE').split(spec.work).join('$SCRATCH');
  if (scrub(listed) !== listed) notes.push('a listing named a scratch path (the tree, HOME or the working directory); recorded as $TREE or $SCRATCH');
  if (notes.length) rec.notes = notes;
  process.stdout.write(scrub(JSON.stringify(rec, null, 2)) + '\n');
}

function printed(result, key) { return (result && result[key]) || []; }

function tail(s) { return s.split('\n').filter(Boolean).slice(-15).map((l) => l.slice(0, 400)); }
function lastErrorLine(s) {
  const l = s.split('\n').filter(Boolean);
  for (let i = l.length - 1; i >= 0; i--) { try { const o = JSON.parse(l[i]); if (o.error) return o.error; } catch { /* not JSON */ } }
  return l.slice(-1)[0];
}

function compare(a, b) {
  const A = JSON.parse(fs.readFileSync(a, 'utf8')), B = JSON.parse(fs.readFileSync(b, 'utf8'));
  let same = true;
  for (const m of ['initialize', ...METHODS]) {
    const x = A[m], y = B[m];
    if (!util.isDeepStrictEqual(x, y)) {
      same = false;
      console.log(`${A.id} ${m}: differs`);
      for (const d of diffPaths(x, y)) console.log('  ' + d.replace('(server)', '(new)').replace('(Inspector)', '(old)').replace("only in the server's answer", 'only in the new').replace("only in the Inspector's output", 'only in the old'));
    }
  }
  if (same) console.log(`${A.id}: same listing`);
  process.exit(same ? 0 : 1);
}

const [cmd, ...rest] = process.argv.slice(2);
try {
  if (cmd === 'parse') parse(rest[0]);
  else if (cmd === 'bin') process.stdout.write(JSON.stringify(chooseBin(rest[0], rest[1], rest[2])) + '\n');
  else if (cmd === 'tree') process.stdout.write(JSON.stringify(treeFacts(rest[0], rest[1])) + '\n');
  else if (cmd === 'assemble') assemble(rest[0]);
  else if (cmd === 'compare') compare(rest[0], rest[1]);
  else if (cmd === 'pybin') process.stdout.write(JSON.stringify(pyBin(rest[0], rest[1], rest[2])) + '\n');
  else if (cmd === 'pytree') process.stdout.write(JSON.stringify(pyTree(rest[0])) + '\n');
  else if (cmd === 'pyfail') process.stdout.write(pyFail(rest[0]) + '\n');
  else if (cmd === 'envretry') process.stdout.write(JSON.stringify(envRetry(rest[0], rest.slice(1))) + '\n');
  else if (cmd === 'failed') failed(rest[0]);
  else { process.stderr.write('usage: record-lib.js parse|bin|tree|assemble|compare|pybin|pytree|pyfail|envretry|failed ...\n'); process.exit(2); }
} catch (e) {
  process.stderr.write(`record-lib.js ${cmd}: ${e.message}\n`);
  process.exit(2);
}
