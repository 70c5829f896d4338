#!/usr/bin/env bash
# Batch throughput in packages per hour at several concurrencies, with a
# warm npm cache, and where the time goes (see README "Batch scans").
#
#  1. One warm-up batch of bench/batch-servers.txt fills the npm cache
#     volume and the install tree cache (and checks every server starts).
#  2. For each concurrency (CONCURRENCY, default "1 2 4"), the same list in
#     a fresh data directory that holds only the warm-up's tree-cache index:
#     every target is scanned again (nothing is skipped as stored), with
#     the default settings (behaviour capture on, every third party asked).
#     A WORK directory that already holds a warm-up is reused.
#
# Prints, per concurrency: wall time, packages/hour, outcomes, host CPU
# busy share (over the batch, and while every worker had a scan in
# flight), tree-cache hits, verifymcp's peak RSS (GNU time) and
# per-phase medians read from the batch's JSON summary. LIST, BIN, WORK
# and EXTRA (more batch flags) override.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
export VERIFYMCP_CA_BUNDLE="${VERIFYMCP_CA_BUNDLE-/etc/ssl/certs/ca-certificates.crt}"
LIST="${LIST:-bench/batch-servers.txt}"
WORK="${WORK:-$(mktemp -d /tmp/verifymcp-batchbench.XXXXXX)}"
mkdir -p "$WORK"
BIN="${BIN:-$WORK/verifymcp}"
EXTRA="${EXTRA:-}"
command -v jq >/dev/null || { echo "bench/batch.sh needs jq" >&2; exit 2; }

if [ ! -x "$BIN" ]; then
	CGO_ENABLED=0 go build -o "$BIN" ./cmd/verifymcp
fi
echo "list: $LIST ($(grep -cvE '^\s*(#|$)' "$LIST") targets); cpus: $(nproc); work: $WORK"
echo "tool: $("$BIN" version | head -1)"

# cpu_busy prints "busy total" jiffies of the host from /proc/stat (busy:
# all but idle and iowait). Pure bash: the sampler of run_batch calls it
# five times a second.
cpu_busy() {
	local _ u n sy id io rest v t
	read -r _ u n sy id io rest </proc/stat
	t=$((u + n + sy + id + io))
	for v in $rest; do t=$((t + v)); done
	echo "$((t - id - io)) $t"
}

phases='["resolve","install.fetch","install.scripts","session.start","session.handshake","session.list","session.idle","session.calls","session.shutdown","osv","github","dnssec","other","scan"]'

report() { # report NAME DATA-DIR SUMMARY.json WALL-SECONDS CPU-BUSY-%
	local name=$1 data=$2 sum=$3 wall=$4 cpu=$5
	local hits total
	hits=$(cat "$data"/bundles/*.json | jq -s '[.[] | select(.install.tree_cache.hit == true)] | length')
	total=$(ls "$data"/bundles/*.json | wc -l)
	jq -r --arg name "$name" --arg wall "$wall" --arg cpu "$cpu" --arg hits "$hits/$total" --argjson phases "$phases" '
		"\($name): \(.totals.scanned) scanned in \($wall)s wall -> \((.totals.scanned / ($wall|tonumber) * 3600 * 10 | round) / 10) packages/hour" +
		" (completed \(.totals.completed), failed \(.totals.failed) \(.failed_by_outcome|tostring), skipped \(.totals.skipped));" +
		" host CPU busy \($cpu)%; tree cache hits \($hits)",
		"  median per scan (s): " + ([$phases[] as $p | select(.phases[$p]) | "\($p) \((.phases[$p].median_ms/100|round)/10)"] | join(", ")),
		"  total over scans (s): " + ([$phases[] as $p | select(.phases[$p]) | "\($p) \((.phases[$p].total_ms/1000|round))"] | join(", ")),
		"  set-up and teardown per scan (session.start + other, s): median " +
			([.targets[] | select(.phases_ms) | (.phases_ms["session.start"] // 0) + (.phases_ms.other // 0)] | sort | if length > 0 then (.[(length - 1) / 2 | floor] / 10 | round / 100 | tostring) else "-" end)
	' "$sum"
}

# steady_cpu NAME DATA-DIR SUMMARY.json CONCURRENCY prints the host CPU's
# busy share over the part of the batch in which all CONCURRENCY workers
# had a scan in flight, from $WORK/NAME.cpu (samples "time busy total")
# and each scan's interval: from its bundle's run date (when the scan
# began, not when its target resolved), for its scan time. The ramp (workers
# starting) and the tail (fewer targets left than workers) are outside it.
steady_cpu() {
	local name=$1 data=$2 sum=$3 c=$4
	{
		jq -r '.targets[] | select(.run_id and .phases_ms) | "scan \(.run_id) \(.phases_ms.scan)"' "$sum"
		for f in "$data"/bundles/*.json; do
			jq -r '.run.date as $d | ($d | capture("(?<s>^[^.]*)(?<f>\\.[0-9]+)?Z$")) as $m |
				"date \(.run.id) \(($m.s + "Z" | fromdateiso8601) + (($m.f // "0") | tonumber))"' "$f"
		done
		sed 's/^/cpu /' "$WORK/$name.cpu"
	} | awk -v c="$c" '
		$1 == "scan" { dur[$2] = $3 / 1000; next }
		$1 == "date" { date[$2] = $3; next }
		$1 == "cpu" { n++; ts[n] = $2; busy[n] = $3; tot[n] = $4 }
		END {
			for (id in dur) if (id in date) { m++; s[m] = date[id]; e[m] = s[m] + dur[id] }
			for (i = 1; i < n; i++) {
				mid = (ts[i] + ts[i + 1]) / 2; k = 0
				for (j = 1; j <= m; j++) if (s[j] <= mid && mid < e[j]) k++
				if (k >= c) { b += busy[i + 1] - busy[i]; t += tot[i + 1] - tot[i]; secs += ts[i + 1] - ts[i] }
			}
			if (t > 0) printf "  host CPU busy while all %d workers had a scan in flight: %.0f%% (%.1f s of the batch)\n", c, 100 * b / t, secs
			else printf "  host CPU busy while all %d workers had a scan in flight: - (never all in flight)\n", c
		}'
}

run_batch() { # run_batch NAME DATA-DIR CONCURRENCY
	local name=$1 data=$2 c=$3
	local b0 t0 b1 t1 start end wall cpu sampler code=0
	# Samples of the host CPU every 0.2 s, for steady_cpu.
	while :; do
		echo "$EPOCHREALTIME $(cpu_busy)"
		sleep 0.2
	done >"$WORK/$name.cpu" &
	sampler=$!
	read -r b0 t0 < <(cpu_busy)
	start=$(date +%s.%N)
	# shellcheck disable=SC2086
	/usr/bin/time -f '%M' -o "$WORK/$name.rss" "$BIN" -q batch --data-dir "$data" --concurrency "$c" --format json -o "$WORK/$name.json" $EXTRA "$LIST" 2>"$WORK/$name.log" || code=$?
	end=$(date +%s.%N)
	read -r b1 t1 < <(cpu_busy)
	kill "$sampler"
	wait "$sampler" 2>/dev/null || true
	wall=$(echo "$end - $start" | bc -l | xargs printf '%.1f')
	cpu=$(echo "100 * ($b1 - $b0) / ($t1 - $t0)" | bc -l | xargs printf '%.0f')
	[ "$code" = 0 ] || echo "$name: batch exited $code (see $WORK/$name.log)"
	report "$name" "$data" "$WORK/$name.json" "$wall" "$cpu"
	steady_cpu "$name" "$data" "$WORK/$name.json" "$c"
	echo "  verifymcp peak RSS: $(($(tail -1 "$WORK/$name.rss") / 1024)) MiB (target at concurrency 8: under 200 MiB)"
}

echo
if [ -d "$WORK/warm/cache/trees" ]; then
	echo "== warm-up: reusing $WORK/warm (remove it to warm up again)"
else
	echo "== warm-up (concurrency 2; fills the npm cache and the tree cache)"
	run_batch warmup "$WORK/warm" 2
fi

for c in ${CONCURRENCY:-1 2 4}; do
	echo
	echo "== concurrency $c, warm npm and tree caches"
	data="$WORK/c$c"
	rm -rf "$data"
	mkdir -p "$data/cache"
	cp -r "$WORK/warm/cache/trees" "$data/cache/trees"
	run_batch "c$c" "$data" "$c"
done
