#!/bin/sh
# capture.sh re-captures surfaces/*.json from the pinned servers of
# package.json (see README.md). It needs node and npm, and the npm
# registry; run it from anywhere.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here/package.json" "$here/capture.mjs" "$work/"
cd "$work"
npm install --no-audit --no-fund --ignore-scripts >/dev/null
mkdir -p allowed
m=node_modules
node capture.mjs node $m/@modelcontextprotocol/server-everything/dist/index.js stdio >"$here/surfaces/everything.json"
node capture.mjs node $m/@modelcontextprotocol/server-filesystem/dist/index.js "$work/allowed" >"$here/surfaces/filesystem.json"
node capture.mjs node $m/@modelcontextprotocol/server-memory/dist/index.js >"$here/surfaces/memory.json"
node capture.mjs node $m/@modelcontextprotocol/server-sequential-thinking/dist/index.js >"$here/surfaces/sequential-thinking.json"
node capture.mjs node $m/@upstash/context7-mcp/dist/index.js >"$here/surfaces/context7.json"
node capture.mjs node $m/@modelcontextprotocol/server-github/dist/index.js >"$here/surfaces/github.json"
