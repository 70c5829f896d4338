#!/bin/sh
# Regenerates the lockfiles under lockfiles/ with the host's npm, the way
# the sandbox's fetch driver installs a target (sandbox/drivers/fetch.js):
# a root package named verifymcp-sandbox-root whose only dependency is the
# scanned package, installed with --save-exact and no lifecycle scripts.
# --package-lock-only resolves the tree without downloading tarballs.
#
# The *.v1 lockfiles are written by npm 6 (lockfileVersion 1, the nested
# "dependencies" tree), run through npx; the workspace lockfile is the
# host npm's install of the monorepo in fixtures/workspace.
#
# Needs the npm registry. Run from this directory: sh gen-lockfiles.sh
# [name...]; with no name, every lockfile is written again.
set -eu
here=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags="--package-lock-only --ignore-scripts --no-audit --no-fund --save-exact --omit-lockfile-registry-resolved=false --loglevel=warn"
npm6="npx -y npm@6.14.18"
flags6="--package-lock-only --ignore-scripts --no-audit --no-fund --save-exact --loglevel=warn"

want() { # want <output name>: whether this run writes it
	[ -z "$only" ] && return 0
	case " $only " in *" $1 "*) return 0 ;; esac
	return 1
}

lock() { # lock <output name> <spec> [npm command] [flags]
	want "$1" || return 0
	d="$work/$1"
	mkdir -p "$d"
	printf '%s' '{"name":"verifymcp-sandbox-root","version":"0.0.0","private":true}' >"$d/package.json"
	case "$2" in
	*.tgz) cp "$work/$2" "$d/" ;;
	esac
	(cd "$d" && ${3:-npm} install ${4:-$flags} "$(case "$2" in *.tgz) echo "./$2" ;; *) echo "$2" ;; esac)")
	cp "$d/package-lock.json" "$here/lockfiles/$1.package-lock.json"
}

workspace() { # workspace <output name> <fixture folder>
	want "$1" || return 0
	d="$work/$1"
	cp -R "fixtures/$2" "$d"
	(cd "$d" && npm install $flags)
	cp "$d/package-lock.json" "$here/lockfiles/$1.package-lock.json"
}

only="$*"

# Local tarball targets: test fixtures packed from fixtures/.
for f in mcp-fs-launcher postmark-mcp; do
	(cd "fixtures/$f" && npm pack --pack-destination "$work" --loglevel=warn >/dev/null)
done

lock server-filesystem-2025.3.28 @modelcontextprotocol/server-filesystem@2025.3.28
lock server-filesystem-2025.7.1 @modelcontextprotocol/server-filesystem@2025.7.1
lock mcp-fs-launcher-1.0.0 mcp-fs-launcher-1.0.0.tgz
lock postmark-mcp-1.0.16 postmark-mcp-1.0.16.tgz
lock server-filesystem-2025.3.28.v1 @modelcontextprotocol/server-filesystem@2025.3.28 "$npm6" "$flags6"
lock mcp-fs-launcher-1.0.0.v1 mcp-fs-launcher-1.0.0.tgz "$npm6" "$flags6"
workspace acme-mcp-servers-workspace workspace
workspace acme-nested-workspaces nested-workspace
