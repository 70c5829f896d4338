// verifymcp script driver. Contract: runs in the script step of the install
// phase, as uid 65534, with no route out, in /work/tree as installed by the
// fetch step. Arguments: a JSON array of {path, event, implicit} in the
// order to run, and the step's time budget in milliseconds. For each, it
// runs exactly that lifecycle event of that package the way npm does (npm
// run-script in the package directory; "npm rebuild" for an implicit
// node-gyp build) in a process group of its own, and records exit code or
// signal, whether the kernel killed one of its processes for memory (the
// cgroup's oom_kill count rose while it ran, and it failed or ran out of
// time), duration and output tail. When the budget runs out the
// running script's group is killed and recorded as timed out, with its
// tail, and the scripts after it are not run. Processes a script leaves
// running, in its process group or not, are killed when it ends, so that
// what they do is never taken for the next script's doing. Once an event of a package fails, that package's
// later events are not run (npm would stop there); other packages' scripts
// still run, so that everything is observed. It prints one line
// "VERIFYMCP-RESULT <json>" at the end.
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const path = require('path');

const plan = JSON.parse(process.argv[1] || '[]');
const deadline = Date.now() + Number(process.argv[2] || '120000');
const tree = '/work/tree';
// The tail kept is longer than the 2000 characters stored, so that the
// program can mask secrets across the cut before it cuts again.
const maxTail = 2500;

// oomKills reads how many processes the kernel killed for memory in this
// container's cgroup (v2, or v1 on kernels that count), or -1.
function oomKills() {
  for (const f of ['/sys/fs/cgroup/memory.events', '/sys/fs/cgroup/memory/memory.oom_control']) {
    try {
      const m = /^oom_kill (\d+)$/m.exec(fs.readFileSync(f, 'utf8'));
      if (m) return Number(m[1]);
    } catch (e) { /* not this cgroup version */ }
  }
  return -1;
}

function killGroup(pid) {
  try { process.kill(-pid, 'SIGKILL'); return true; } catch (e) { return false; }
}

// ancestors returns this driver's pid and its ancestors' in its PID
// namespace.
function ancestors() {
  const keep = new Set();
  let pid = process.pid;
  while (pid > 0 && !keep.has(pid)) {
    keep.add(pid);
    try {
      const st = fs.readFileSync('/proc/' + pid + '/stat', 'utf8');
      pid = Number(st.slice(st.lastIndexOf(')') + 2).split(' ')[1]);
    } catch (e) { break; }
  }
  return keep;
}

// sweep kills every process of the driver's user but the driver and its
// ancestors: what a script left running outside its process group (a
// setsid daemon, a double fork) goes too. In the step's PID namespace (its
// own, or the observer's, whose processes run as root) no other process
// runs as this user. It says whether it killed any; a fork racing the
// sweep is caught by the next pass.
function sweep() {
  const keep = ancestors();
  const uid = process.getuid();
  let killed = false;
  for (let pass = 0; pass < 5; pass++) {
    let found = false;
    for (const d of fs.readdirSync('/proc')) {
      if (!/^[0-9]+$/.test(d) || keep.has(Number(d))) continue;
      try {
        if (fs.statSync('/proc/' + d).uid !== uid) continue;
        const st = fs.readFileSync('/proc/' + d + '/stat', 'utf8');
        if (st.slice(st.lastIndexOf(')') + 2).split(' ')[0] === 'Z') continue; // dead already
        process.kill(Number(d), 'SIGKILL');
        found = killed = true;
      } catch (e) { /* gone meanwhile */ }
    }
    if (!found) break;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
  }
  return killed;
}

function runOne(s) {
  return new Promise((resolve) => {
    const args = s.implicit
      ? ['rebuild', '--foreground-scripts', '--loglevel=info', path.join(tree, s.path)]
      : ['run-script', '--ignore-scripts', '--loglevel=info', s.event];
    const child = spawn('npm', args, {
      cwd: s.implicit ? tree : path.join(tree, s.path),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: Object.assign({}, process.env, { npm_config_ignore_scripts: s.implicit ? 'false' : 'true' }),
    });
    let out = '';
    const keep = (d) => { out += d; if (out.length > 4 * maxTail) out = out.slice(-maxTail); };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    let timedOut = false;
    const timer = setTimeout(() => { timedOut = true; killGroup(child.pid); }, Math.max(0, deadline - Date.now()));
    let settled = false;
    const finish = (code, signal, error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // Whatever the script left running goes with it, in its process
      // group or not.
      const inGroup = !timedOut && killGroup(child.pid);
      const leftRunning = sweep() || inGroup;
      // Give the pipes a moment to deliver the last output.
      setTimeout(() => resolve({ code, signal, timedOut, out, error, leftRunning }), 100);
    };
    child.on('exit', (code, signal) => finish(code, signal, ''));
    child.on('error', (e) => finish(null, null, String(e)));
  });
}

(async () => {
  const failed = new Set();
  const results = [];
  let outOfTime = false;
  for (const s of plan) {
    const res = { path: s.path, event: s.event, ran: false, exit_code: 0, signal: '', timed_out: false, oom: false, left_running: false, output_tail: '', duration_ms: 0, started_at: 0, ended_at: 0 };
    if (failed.has(s.path) || outOfTime) { results.push(res); continue; }
    const oomBefore = oomKills();
    const started = Date.now();
    const r = await runOne(s);
    res.ran = true;
    res.started_at = started;
    res.ended_at = Date.now();
    res.duration_ms = res.ended_at - started;
    res.timed_out = r.timedOut;
    res.signal = r.signal || '';
    res.left_running = r.leftRunning;
    res.exit_code = r.code === null ? (r.timedOut ? 124 : 128 + (r.signal === 'SIGKILL' ? 9 : 15)) : r.code;
    // Only this script ran meanwhile, so a kill the kernel counted was of
    // one of its processes; npm reports it as exit code 137, not a signal.
    // The count decides, not the time: a script killed for memory that
    // then ran out of time (a parent left waiting on it, a step thrashing
    // at its limit) was killed for memory all the same.
    res.oom = (r.timedOut || res.exit_code !== 0) && oomBefore >= 0 && oomKills() > oomBefore;
    res.oom_uncounted = oomBefore < 0;
    const outTail = r.out.length > maxTail ? r.out.slice(r.out.length - maxTail) : r.out;
    res.output_tail = r.error ? (outTail + '\n' + r.error).slice(-maxTail) : outTail;
    if (res.exit_code !== 0) failed.add(s.path);
    if (r.timedOut) outOfTime = true;
    results.push(res);
  }
  process.stdout.write('\nVERIFYMCP-RESULT ' + JSON.stringify(results) + '\n');
})();
