#!/usr/bin/env bash
# Fleet throughput on this machine: the batch list enqueued into a fresh
# Postgres schema, then drained by `verifymcp worker --until-done`
# processes, in packages per hour (see README "Many machines").
#
# Runs, for each "WORKERSxCONCURRENCY" in SHAPES (default "1x2 2x1"), one
# enqueue and that many worker processes, each with its own data directory
# seeded with a warm tree-cache index from bench/batch.sh's warm-up (run
# it first with the same WORK). On one 2-core machine "1x2" compares with
# `batch --concurrency 2`: the difference is the queue's cost. On a real
# fleet each worker is another machine.
#
# Needs the Postgres of scripts/setup.sh (VERIFYMCP_TEST_POSTGRES_DSN
# overrides it). LIST, BIN and WORK as in bench/batch.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
export VERIFYMCP_CA_BUNDLE="${VERIFYMCP_CA_BUNDLE-/etc/ssl/certs/ca-certificates.crt}"
export VERIFYMCP_CONFIG=
LIST="${LIST:-bench/batch-servers.txt}"
WORK="${WORK:?set WORK to the directory of a bench/batch.sh run (its warm-up fills the caches)}"
BIN="${BIN:-$WORK/verifymcp}"
export PGOPTIONS="--client-min-messages=warning"
BASE="${VERIFYMCP_TEST_POSTGRES_DSN:-postgres://verifymcp:verifymcp@127.0.0.1:5432/verifymcp_test?sslmode=disable}"
[ -d "$WORK/warm/cache/trees" ] || { echo "no warm-up in $WORK: run WORK=$WORK bench/batch.sh first" >&2; exit 2; }
[ -x "$BIN" ] || CGO_ENABLED=0 go build -o "$BIN" ./cmd/verifymcp
n=$(grep -cvE '^\s*(#|$)' "$LIST")
echo "list: $LIST ($n targets); cpus: $(nproc); work: $WORK"

for shape in ${SHAPES:-1x2 2x1}; do
	workers=${shape%x*} conc=${shape#*x}
	schema="fleetbench_$(date +%s)_$$"
	psql "$BASE" -qtAc "CREATE SCHEMA $schema" >/dev/null
	sep='?'; case "$BASE" in *\?*) sep='&';; esac
	export VERIFYMCP_DATABASE_URL="$BASE${sep}search_path=$schema"
	echo
	echo "== $workers worker(s) x --concurrency $conc"
	"$BIN" -q batch --enqueue --data-dir "$WORK/fleet-submit" --format json "$LIST" | jq -c .totals
	start=$(date +%s.%N)
	pids=()
	for w in $(seq 1 "$workers"); do
		data="$WORK/fleet-$shape-$w"
		rm -rf "$data"; mkdir -p "$data/cache"; cp -r "$WORK/warm/cache/trees" "$data/cache/trees"
		"$BIN" worker --until-done --data-dir "$data" --concurrency "$conc" 2>"$WORK/fleet-$shape-$w.log" &
		pids+=($!)
	done
	code=0
	for p in "${pids[@]}"; do wait "$p" || code=$?; done
	end=$(date +%s.%N)
	wall=$(echo "$end - $start" | bc -l | xargs printf '%.1f')
	[ "$code" = 0 ] || echo "a worker exited $code (see $WORK/fleet-$shape-*.log)"
	"$BIN" queue status --format json | jq -c '{pending, completed, discarded, cancelled}'
	stored=$(psql "$BASE" -qtAc "SELECT count(*) FROM $schema.runs")
	echo "$shape: $stored runs stored in ${wall}s wall -> $(echo "$stored / $wall * 3600" | bc -l | xargs printf '%.0f') packages/hour"
	psql "$BASE" -qtAc "DROP SCHEMA $schema CASCADE" >/dev/null
done
