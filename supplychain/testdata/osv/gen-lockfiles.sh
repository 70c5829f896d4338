#!/bin/sh
# Regenerates the lockfiles under lockfiles/ with the host's npm, the way
# the sandbox's fetch driver installs a target (sandbox/drivers/fetch.js):
# a root package named verifymcp-sandbox-root whose only dependency is the
# scanned package, installed with --save-exact and no lifecycle scripts.
# --package-lock-only resolves the tree without downloading tarballs.
# Needs the npm registry. Run from this directory: sh gen-lockfiles.sh
set -eu
here=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags="--package-lock-only --ignore-scripts --no-audit --no-fund --save-exact --omit-lockfile-registry-resolved=false --loglevel=warn"

lock() { # lock <output name> <spec>
	d="$work/$1"
	mkdir -p "$d"
	printf '%s' '{"name":"verifymcp-sandbox-root","version":"0.0.0","private":true}' >"$d/package.json"
	case "$2" in
	*.tgz) cp "$work/$2" "$d/" ;;
	esac
	(cd "$d" && npm install $flags "$(case "$2" in *.tgz) echo "./$2" ;; *) echo "$2" ;; esac)")
	cp "$d/package-lock.json" "$here/lockfiles/$1.package-lock.json"
}

# Local tarball targets: test fixtures packed from fixtures/.
for f in mcp-fs-launcher postmark-mcp; do
	(cd "fixtures/$f" && npm pack --pack-destination "$work" --loglevel=warn >/dev/null)
done

lock server-filesystem-2025.3.28 @modelcontextprotocol/server-filesystem@2025.3.28
lock server-filesystem-2025.7.1 @modelcontextprotocol/server-filesystem@2025.7.1
lock mcp-fs-launcher-1.0.0 mcp-fs-launcher-1.0.0.tgz
lock postmark-mcp-1.0.16 postmark-mcp-1.0.16.tgz
