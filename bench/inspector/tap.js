// tap.js LOG -- COMMAND [ARGS...]
//
// A transparent stdio relay between the MCP Inspector and the server it runs:
// bytes are passed through unchanged in both directions, and every
// newline-delimited line is also appended to LOG as
//   {"t": <ms since the child was spawned>, "dir": "c2s"|"s2c"|"err", "line": "<raw line>"}
// record.sh uses it to time the start-up (spawn to the initialize response),
// to keep the results exactly as the server sent them (the Inspector's SDK
// drops fields it does not know), and to see -32601 answers.
'use strict';
const fs = require('fs');
const { spawn } = require('child_process');

const sep = process.argv.indexOf('--');
if (sep !== 3 || process.argv.length < 5) {
  process.stderr.write('usage: tap.js LOG -- COMMAND [ARGS...]\n');
  process.exit(2);
}
const logFile = process.argv[2];
const [cmd, ...args] = process.argv.slice(4);
const fd = fs.openSync(logFile, 'a');
let t0 = 0;
const now = () => Number(process.hrtime.bigint() / 1000000n) - t0;
const write = (dir, line) => fs.writeSync(fd, JSON.stringify({ t: now(), dir, line }) + '\n');

function splitter(dir) {
  let buf = '';
  return {
    push(chunk) {
      buf += chunk.toString('utf8');
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        write(dir, buf.slice(0, i).replace(/\r$/, ''));
        buf = buf.slice(i + 1);
      }
    },
    flush() { if (buf.length) write(dir, buf); buf = ''; },
  };
}

t0 = Number(process.hrtime.bigint() / 1000000n);
write('tap', 'spawn ' + JSON.stringify([cmd, ...args]));
const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
const c2s = splitter('c2s'), s2c = splitter('s2c'), err = splitter('err');

process.stdin.on('data', (d) => { c2s.push(d); if (!child.stdin.destroyed) child.stdin.write(d); });
process.stdin.on('end', () => { c2s.flush(); child.stdin.end(); });
child.stdin.on('error', () => {});
child.stdout.on('data', (d) => { s2c.push(d); process.stdout.write(d); });
child.stderr.on('data', (d) => { err.push(d); process.stderr.write(d); });
child.on('error', (e) => { write('tap', 'spawn error ' + e.message); process.exit(127); });
child.on('exit', (code, signal) => {
  s2c.flush(); err.flush();
  write('tap', 'exit ' + JSON.stringify({ code, signal }));
  // Let stdout drain before leaving.
  process.stdout.write('', () => process.exit(code === null ? 128 : code));
});
for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
  process.on(sig, () => { write('tap', 'signal ' + sig); child.kill(sig); });
}
