#!/usr/bin/env bash
# A long batch's start and memory, on bench/batch-versions.txt (419 real
# releases, 275 of them PyPI), whose targets batch resolves as it scans.
#
#  1. Seconds from the command's start to its first scan's start (RUNS
#     runs, each interrupted then).
#  2. verifymcp's peak RSS (GNU time) over SECONDS of scanning the list at
#     --concurrency 8 in a fresh data directory, interrupted then, and
#     how many targets it scanned meanwhile.
#  3. With the PostgreSQL server of scripts/setup.sh (or
#     VERIFYMCP_TEST_POSTGRES_DSN), the peak RSS and wall time of
#     `batch --enqueue` of the whole list into a fresh schema, and when
#     its first job reached the queue.
#
# BIN (default: a build of this tree), LIST, WORK, RUNS (3) and SECS
# (60) override. Scans fetch what the npm cache and the tree cache lack.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
export VERIFYMCP_CA_BUNDLE="${VERIFYMCP_CA_BUNDLE-/etc/ssl/certs/ca-certificates.crt}"
LIST="$(realpath "${LIST:-bench/batch-versions.txt}")"
WORK="${WORK:-$(mktemp -d /tmp/verifymcp-stream.XXXXXX)}"
RUNS="${RUNS:-3}"
SECS="${SECS:-60}"
DSN="${VERIFYMCP_TEST_POSTGRES_DSN:-postgres://verifymcp:verifymcp@127.0.0.1:5432/verifymcp_test?sslmode=disable}"
mkdir -p "$WORK"
BIN="${BIN:-$WORK/verifymcp}"
command -v jq >/dev/null || { echo "bench/stream.sh needs jq" >&2; exit 2; }
if [ ! -x "$BIN" ]; then
	CGO_ENABLED=0 go build -o "$BIN" ./cmd/verifymcp
fi
echo "list: $LIST ($(grep -cvE '^\s*(#|$)' "$LIST") targets); work: $WORK"
echo "tool: $("$BIN" version | head -1)"

# 1. The first scan's start: the first "install phase" debug line.
for i in $(seq 1 "$RUNS"); do
	data="$WORK/first-$i"
	rm -rf "$data"
	start=$EPOCHREALTIME
	first=""
	coproc B { exec "$BIN" -v batch --data-dir "$data" --concurrency 8 --format json -o /dev/null "$LIST" 2>&1; }
	pid=$B_PID
	while IFS= read -r line <&"${B[0]}"; do
		case "$line" in *"install phase"*)
			first=$(echo "$EPOCHREALTIME - $start" | bc -l | xargs printf '%.2f')
			break
			;;
		esac
	done
	kill -INT "$pid" 2>/dev/null || true
	sleep 0.5
	kill -INT "$pid" 2>/dev/null || true
	cat <&"${B[0]}" >/dev/null || true
	wait "$pid" 2>/dev/null || true
	echo "first scan started after ${first:-?} s (run $i)"
done

# 2. Peak RSS over SECS of scanning.
data="$WORK/scan"
rm -rf "$data"
/usr/bin/time -f '%M' -o "$WORK/scan.rss" "$BIN" -q batch --data-dir "$data" --concurrency 8 --format json -o "$WORK/scan.json" "$LIST" 2>"$WORK/scan.log" &
tpid=$!
sleep "$SECS"
pkill -INT -P "$tpid" 2>/dev/null || true
wait "$tpid" 2>/dev/null || true
echo "scanning for ${SECS} s at 8: peak RSS $(($(tail -1 "$WORK/scan.rss") / 1024)) MiB, $(jq -r '.totals | "\(.scanned) scanned, \(.not_started) not started"' "$WORK/scan.json")"

# 3. batch --enqueue of the whole list.
if psql "$DSN" -qc 'select 1' >/dev/null 2>&1; then
	schema="stream_$$"
	psql "$DSN" -qc "create schema $schema"
	sep='&'
	case "$DSN" in *\?*) ;; *) sep='?' ;; esac
	start=$EPOCHREALTIME
	VERIFYMCP_DATABASE_URL="$DSN${sep}search_path=$schema" /usr/bin/time -f '%M' -o "$WORK/enqueue.rss" \
		"$BIN" -q batch --enqueue --queue-schema "$schema" --data-dir "$WORK/enqueue" --format json -o "$WORK/enqueue.json" "$LIST" &
	epid=$!
	first=""
	while kill -0 "$epid" 2>/dev/null; do
		if [ -z "$first" ] && [ "$(psql "$DSN" -Atc "select count(*) from $schema.river_job" 2>/dev/null || echo 0)" != 0 ]; then
			first=$(echo "$EPOCHREALTIME - $start" | bc -l | xargs printf '%.2f')
		fi
		sleep 0.05
	done
	wait "$epid" || true
	wall=$(echo "$EPOCHREALTIME - $start" | bc -l | xargs printf '%.1f')
	psql "$DSN" -qc "drop schema $schema cascade" >/dev/null 2>&1 || true
	echo "batch --enqueue: peak RSS $(($(tail -1 "$WORK/enqueue.rss") / 1024)) MiB in $wall s, first job queued after ${first:-(the end)} s, $(jq -r '.totals | "\(.enqueued) enqueued, \(.failed) failed"' "$WORK/enqueue.json")"
else
	echo "batch --enqueue: skipped (no PostgreSQL at \$VERIFYMCP_TEST_POSTGRES_DSN)"
fi
