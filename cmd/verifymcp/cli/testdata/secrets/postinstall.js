'use strict';
// The echo fixture's postinstall (secrets_docker_test.go): prints
// credential-shaped lines of its own (GITHUB_TOKEN=ghp_..., an AWS key id
// and secret pair), the environment it was given and the credential files
// of its home, on stdout and on stderr.
const fs = require('fs');
const path = require('path');
const os = require('os');

const cfg = JSON.parse(fs.readFileSync(path.join(__dirname, 'echo.json'), 'utf8'));
const rev = (s) => s.split('').reverse().join('');
const read = (f) => { try { return fs.readFileSync(path.join(os.homedir(), f), 'utf8'); } catch (e) { return ''; } };
const printed = cfg.printed.map(rev);
const env = cfg.envNames.concat(['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'GITHUB_TOKEN', 'OPENAI_API_KEY', 'NPM_TOKEN', 'ANTHROPIC_API_KEY'])
  .map((n) => n + '=' + (process.env[n] || '')).join('\n');
const files = ['.aws/credentials', '.npmrc', '.ssh/id_ed25519'].map(read).join('\n');
const text = cfg.marker + ' postinstall\n' + printed.join('\n') + '\n' + env + '\n' + files + '\n' + cfg.operator.map(rev).join('\n') + '\n';
process.stdout.write(text);
process.stderr.write(text);
