#!/usr/bin/env bash
# Scans the servers of bench/shipped-heldout.txt (or LIST) as images and as npm
# packages and prints, per server, the codes each scan gave and what the image
# scan gave that the package scan did not (pkg.artefact.* aside). Needs the
# engine, the loopback registry (scripts/setup.sh registry) and bin/verifymcp.
#
#   bash bench/shipped-heldout.sh [LIST]        WORK=/tmp/shipped-heldout by default
set -euo pipefail
cd "$(dirname "$0")/.."
LIST=${1:-bench/shipped-heldout.txt}
WORK=${WORK:-/tmp/shipped-heldout}
BIN=${BIN:-./bin/verifymcp}
REGISTRY=127.0.0.1:5000
BASE=$("$BIN" version 2>/dev/null | awk '/^sandbox:/ {print $2}')
BASE=${BASE:-$(docker images --format '{{.Repository}}:{{.Tag}}' verifymcp-sandbox | grep -v -- '-py' | head -1)}
SKIP=osv,socket,github,dnssec,judge,mcp_registry
export VERIFYMCP_CA_BUNDLE=${VERIFYMCP_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
mkdir -p "$WORK"

codes() { python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
print(" ".join(sorted({f["code"] for f in d["findings"]})))' "$1"; }

grep -v '^#' "$LIST" | grep -v '^$' | while read -r target rest; do
  spec=${target#npm:}
  name=${spec%@*}
  version=${spec##*@}
  slug=$(echo "$name" | tr '@/' '__')
  dir="$WORK/$slug"
  rm -rf "$dir" && mkdir -p "$dir/app"
  echo "== $target"
  if ! npm install --prefix "$dir/app" --omit=dev --no-audit --no-fund --no-package-lock "$name@$version" >"$dir/npm.log" 2>&1; then
    echo "   npm install failed on the host: $(tail -1 "$dir/npm.log")"
    continue
  fi
  bin=$(node -e '
const p = require(process.argv[1] + "/node_modules/" + process.argv[2] + "/package.json");
const b = typeof p.bin === "string" ? p.bin : Object.values(p.bin || {})[0];
process.stdout.write(b || p.main || "index.js");' "$dir/app" "$name")
  printf 'FROM %s\nWORKDIR /app\nCOPY app /app\nENV NODE_ENV=production\nENTRYPOINT ["node", "/app/node_modules/%s/%s"]\n' \
    "$BASE" "$name" "${bin#./}" >"$dir/Dockerfile"
  image="$REGISTRY/verifymcp-heldout/$(echo "$name" | tr -d '@' | tr '/' '-'):$version"
  docker build -q -t "$image" "$dir" >/dev/null
  docker push -q "$image" >/dev/null
  docker rmi -f "$image" >/dev/null
  # shellcheck disable=SC2086 # the list's flags are words
  "$BIN" scan "oci:$image" $rest --skip "$SKIP" --format json --data-dir "$dir/data" >"$dir/image.json" 2>"$dir/image.log" || true
  # shellcheck disable=SC2086
  "$BIN" scan "$target" $rest --skip "$SKIP" --format json --data-dir "$dir/data" >"$dir/npm.json" 2>"$dir/npm.log" || true
  if ! [ -s "$dir/image.json" ] || ! [ -s "$dir/npm.json" ]; then
    echo "   a scan failed: $(tail -1 "$dir/image.log") / $(tail -1 "$dir/npm.log")"
    continue
  fi
  ic=$(codes "$dir/image.json")
  nc=$(codes "$dir/npm.json")
  echo "   image:   $ic"
  echo "   package: $nc"
  only=$(comm -23 <(tr ' ' '\n' <<<"$ic" | grep -v '^pkg.artefact.' | sort) <(tr ' ' '\n' <<<"$nc" | sort) | tr '\n' ' ')
  missing=$(comm -13 <(tr ' ' '\n' <<<"$ic" | sort) <(tr ' ' '\n' <<<"$nc" | sort) | tr '\n' ' ')
  echo "   image only: ${only:-none}; package only: ${missing:-none}"
done
