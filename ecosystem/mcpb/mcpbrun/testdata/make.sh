#!/usr/bin/env bash
# make.sh: (re)builds the MCPB test bundles in this directory from src/,
# packed by the official packer, then runs each bundle's server once
# (probe.js) and prints what it listed.
#
#   ./make.sh            build the bundles whose contents changed
#   ./make.sh -f         repack every bundle
#   ./make.sh --no-probe skip running the servers
#
# The packer stamps every zip entry with the time of packing, so a repack
# changes a bundle's sha256 even when nothing in it changed. To stay
# idempotent, each bundle is packed into a temporary file and replaces the
# one here only when its contents (paths, permissions, bytes) differ.
#
# Needs bash, node and npm (the npm registry), unzip, sha256sum.
set -euo pipefail

MCPB_PACKER='@anthropic-ai/mcpb@2.1.2'
FIXTURES=(benign undeclared unserved generated)

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
force=0 probe=1
for a in "$@"; do
	case $a in
	-f | --force) force=1 ;;
	--no-probe) probe=0 ;;
	*) echo "usage: $0 [-f] [--no-probe]" >&2; exit 2 ;;
	esac
done

work=$(mktemp -d "${TMPDIR:-/tmp}/mcpb-testdata.XXXXXX")
trap 'rm -rf "$work"' EXIT

# listing BUNDLE: one line per entry, its permissions, sha256 and path.
listing() {
	local d
	d=$(mktemp -d "$work/list.XXXXXX")
	unzip -q "$1" -d "$d/files"
	unzip -Z "$1" | awk '$3 == "unx" || $3 == "fat" { print $1, $NF }' | sort -k2
	(cd "$d/files" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
	rm -rf "$d"
}

# pack NAME STAGED_DIR: packs the directory into NAME.mcpb here, unless
# the bundle here already has exactly those contents.
pack() {
	local name=$1 dir=$2 new="$work/$1.mcpb" out="$here/$1.mcpb"
	umask 022
	npx -y "$MCPB_PACKER" pack "$dir" "$new" >"$work/$name.pack.log" 2>&1 || {
		cat "$work/$name.pack.log" >&2
		echo "make.sh: the packer refused $name" >&2
		exit 1
	}
	if [[ $force == 0 && -f $out ]] && listing "$out" >"$work/$name.old.list" && listing "$new" >"$work/$name.new.list" &&
		cmp -s "$work/$name.old.list" "$work/$name.new.list"; then
		echo "unchanged $name.mcpb"
	else
		cp "$new" "$out"
		echo "packed    $name.mcpb ($(grep -E '^(package size|unpacked size|total files):' "$work/$name.pack.log" | tr '\n' ' '))"
	fi
}

# The fixture servers: src/NAME holds the manifest and the server's
# surface.json; every one runs the same src/fixture-server/index.js.
for name in "${FIXTURES[@]}"; do
	d="$work/stage/$name"
	mkdir -p "$d"
	cp -R "$here/src/$name/." "$d/"
	cp "$here/src/fixture-server/index.js" "$d/server/index.js"
	chmod -R u=rwX,go=rX "$d"
	pack "$name" "$d"
done

# The real server: @modelcontextprotocol/server-memory installed (no dev
# dependencies, as package-lock.json pins them) into node_modules at the
# bundle's root, next to package.json and the manifest, the node layout the
# mcpb README shows; the entry point is the package's own dist/index.js.
# The packer leaves package-lock.json out, so the lockfile the bundle ships
# is npm's node_modules/.package-lock.json (mcpb.Bundle.Lockfile).
d="$work/stage/server-memory"
mkdir -p "$d"
cp "$here/src/server-memory/manifest.json" "$here/src/server-memory/package.json" "$here/src/server-memory/package-lock.json" "$d/"
(cd "$d" && npm ci --omit=dev --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null)
chmod -R u=rwX,go=rX "$d"
pack server-memory "$d"

# The real uv bundle: the packer's own example, examples/hello-world-uv of
# github.com/modelcontextprotocol/mcpb (commit 27083dc): a pyproject.toml
# whose dependencies the client installs, no bundled tree. Its manifest
# gains the mcp_config MANIFEST.md calls optional for uv, which the
# packer's schema (src/schemas/0.4.ts) requires: uv run in the bundle's
# directory, the command a client runs. Its dependency is pinned to
# mcp==1.27.0: as published (mcp>=1.0.0) it resolves to mcp 2.x, whose
# Server has no list_tools, and the example exits at start.
# probe.js runs node servers only, so it is not probed here; the docker
# test runs it.
d="$work/stage/hello-world-uv"
mkdir -p "$d"
cp -R "$here/src/hello-world-uv/." "$d/"
chmod -R u=rwX,go=rX "$d"
pack hello-world-uv "$d"

# A real Python server as its author would bundle it for uv: the files of
# mcp-server-time 2026.10.19's sdist (a hatchling package, with its
# uv.lock and tool.uv.dev-dependencies) as the bundle's root, and the
# manifest of src/mcp-server-time-uv, whose entry point is the package's
# __main__.py. Needs pip (PyPI).
d="$work/stage/mcp-server-time-uv"
mkdir -p "$d" "$work/sdist"
pip download --quiet --no-deps --no-binary :all: mcp-server-time==2026.10.19 -d "$work/sdist" >/dev/null
tar -xzf "$work/sdist/mcp_server_time-2026.10.19.tar.gz" -C "$work/sdist"
cp -R "$work/sdist/mcp_server_time-2026.10.19/." "$d/"
cp "$here/src/mcp-server-time-uv/manifest.json" "$d/"
chmod -R u=rwX,go=rX "$d"
pack mcp-server-time-uv "$d"

echo
echo "sha256 and size of each bundle (packer $MCPB_PACKER):"
for name in "${FIXTURES[@]}" server-memory hello-world-uv mcp-server-time-uv; do
	printf '%s  %8d bytes\n' "$(cd "$here" && sha256sum "$name.mcpb")" "$(stat -c %s "$here/$name.mcpb")"
done

if [[ $probe == 1 ]]; then
	echo
	echo "what each server listed (probe.js):"
	for name in "${FIXTURES[@]}" server-memory; do
		node "$here/probe.js" "$here/$name.mcpb" >"$work/$name.probe.json" || {
			cat "$work/$name.probe.json"
			echo "make.sh: $name.mcpb's server did not answer as it should" >&2
			exit 1
		}
		node -e '
			const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
			const s = (v) => Array.isArray(v) ? "[" + v.join(" ") + "]" : String(v);
			console.log(`${r.bundle}: tools ${s(r.tools)} prompts ${s(r.prompts)}; served not declared ${s(r.toolsServedNotDeclared)}, declared not served ${s(r.toolsDeclaredNotServed)}`);
		' "$work/$name.probe.json"
	done
fi
