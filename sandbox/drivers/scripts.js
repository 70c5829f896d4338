// verifymcp script driver. Contract: runs in the script step of the install
// phase, as uid 65534, with no network, in /work/tree as installed by the
// fetch step. Argument: a JSON array of {path, event, implicit} in the order
// to run. For each, it runs exactly that lifecycle event of that package the
// way npm does (npm run-script in the package directory; "npm rebuild" for
// an implicit node-gyp build), records exit code, duration and output tail,
// and prints one line "VERIFYMCP-RESULT <json>". Once an event of a package
// fails, that package's later events are not run (npm would stop there);
// other packages' scripts still run, so that everything is observed.
'use strict';
const { spawnSync } = require('child_process');
const path = require('path');

const plan = JSON.parse(process.argv[1] || '[]');
const perScriptTimeout = Number(process.argv[2] || '120000');
const tree = '/work/tree';
const failed = new Set();
const results = [];
function tail(s, n) { s = s || ''; return s.length > n ? s.slice(s.length - n) : s; }
for (const s of plan) {
  const res = { path: s.path, event: s.event, ran: false, exit_code: 0, timed_out: false, output_tail: '', duration_ms: 0, started_at: 0, ended_at: 0 };
  if (failed.has(s.path)) { results.push(res); continue; }
  const started = Date.now();
  let r;
  if (s.implicit) {
    r = spawnSync('npm', ['rebuild', '--foreground-scripts', '--loglevel=info', path.join(tree, s.path)], { cwd: tree, encoding: 'utf8', timeout: perScriptTimeout, maxBuffer: 16 << 20 });
  } else {
    r = spawnSync('npm', ['run-script', '--ignore-scripts', '--loglevel=info', s.event], { cwd: path.join(tree, s.path), encoding: 'utf8', timeout: perScriptTimeout, maxBuffer: 16 << 20, env: Object.assign({}, process.env, { npm_config_ignore_scripts: 'true' }) });
  }
  res.ran = true;
  res.started_at = started;
  res.ended_at = Date.now();
  res.duration_ms = res.ended_at - started;
  res.timed_out = !!(r.error && r.error.code === 'ETIMEDOUT');
  res.exit_code = r.status === null ? (res.timed_out ? 124 : 128) : r.status;
  res.output_tail = tail((r.stdout || '') + (r.stderr || ''), 2000);
  if (res.exit_code !== 0) failed.add(s.path);
  results.push(res);
}
process.stdout.write('\nVERIFYMCP-RESULT ' + JSON.stringify(results) + '\n');
