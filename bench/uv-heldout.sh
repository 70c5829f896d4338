#!/usr/bin/env bash
# Packs the servers of bench/uv-heldout.txt (or LIST) as uv bundles, the way
# their authors would (the sdist's files as the bundle's root, a 0.4 manifest
# of type uv naming the package's __main__.py, packed by the official packer),
# scans each as that bundle and as its PyPI release, and prints, per server,
# the codes each scan gave and what the bundle scan gave that the release
# scan did not (pkg.artefact.* aside). Needs the engine, pip, npx (the npm
# registry) and bin/verifymcp.
#
#   bash bench/uv-heldout.sh [LIST]        WORK=/tmp/uv-heldout by default
set -euo pipefail
cd "$(dirname "$0")/.."
LIST=${1:-bench/uv-heldout.txt}
WORK=${WORK:-/tmp/uv-heldout}
BIN=${BIN:-./bin/verifymcp}
PACKER='@anthropic-ai/mcpb@2.1.2'
SKIP=osv,socket,github,dnssec,judge,mcp_registry
export VERIFYMCP_CA_BUNDLE=${VERIFYMCP_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
mkdir -p "$WORK"

codes() { python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
print(" ".join(sorted({f["code"] for f in d["findings"]})))' "$1"; }

grep -v '^#' "$LIST" | grep -v '^$' | while read -r target rest; do
  spec=${target#pypi:}
  name=${spec%%==*}
  version=${spec##*==}
  dir="$WORK/$name"
  rm -rf "$dir" && mkdir -p "$dir/sdist" "$dir/bundle"
  echo "== $target"
  pip download --quiet --no-deps --no-binary :all: "$spec" -d "$dir/sdist" >/dev/null
  tar -xzf "$dir"/sdist/*.tar.gz -C "$dir/sdist"
  src=$(find "$dir/sdist" -mindepth 1 -maxdepth 1 -type d | head -1)
  cp -R "$src/." "$dir/bundle/"
  entry=$(cd "$dir/bundle" && find . -name __main__.py -not -path './tests/*' | sed 's|^\./||' | sort | head -1)
  # The corpus's --env flags become the manifest's mcp_config env.
  python3 - "$dir/bundle" "$name" "$version" "$entry" $rest <<'PY'
import json, sys
root, name, version, entry, flags = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
env = {}
args = []
i = 0
while i < len(flags):
    if flags[i] == "--env":
        k, _, v = flags[i + 1].partition("=")
        env[k] = v
        i += 2
    elif flags[i] == "--arg":
        args.append(flags[i + 1])
        i += 2
    else:
        i += 1
cfg = {"command": "uv", "args": ["run", "--directory", "${__dirname}", entry] + args}
if env:
    cfg["env"] = env
m = {"manifest_version": "0.4", "name": name, "version": version, "description": name + " as a uv bundle",
     "author": {"name": name + " authors"}, "server": {"type": "uv", "entry_point": entry, "mcp_config": cfg}}
json.dump(m, open(root + "/manifest.json", "w"), indent=2)
PY
  (umask 022 && npx -y "$PACKER" pack "$dir/bundle" "$dir/$name.mcpb" >"$dir/pack.log" 2>&1) || {
    echo "   the packer refused it: $(grep -m1 -i error "$dir/pack.log")"
    continue
  }
  # shellcheck disable=SC2086 # the list's flags are words
  "$BIN" scan "$dir/$name.mcpb" --skip "$SKIP" --format json --data-dir "$dir/data" >"$dir/bundle.json" 2>"$dir/bundle.log" || true
  # shellcheck disable=SC2086
  "$BIN" scan "$target" $rest --skip "$SKIP" --format json --data-dir "$dir/data" >"$dir/pypi.json" 2>"$dir/pypi.log" || true
  if ! [ -s "$dir/bundle.json" ] || ! [ -s "$dir/pypi.json" ]; then
    echo "   a scan failed: $(tail -1 "$dir/bundle.log") / $(tail -1 "$dir/pypi.log")"
    continue
  fi
  bc=$(codes "$dir/bundle.json")
  pc=$(codes "$dir/pypi.json")
  echo "   entry point: $entry"
  echo "   bundle:  $bc"
  echo "   release: $pc"
  only=$(comm -23 <(tr ' ' '\n' <<<"$bc" | grep -v '^pkg.artefact.' | sort) <(tr ' ' '\n' <<<"$pc" | sort) | tr '\n' ' ')
  missing=$(comm -13 <(tr ' ' '\n' <<<"$bc" | sort) <(tr ' ' '\n' <<<"$pc" | sort) | tr '\n' ' ')
  echo "   bundle only: ${only:-none}; release only: ${missing:-none}"
done
