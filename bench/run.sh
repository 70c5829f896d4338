#!/usr/bin/env bash
# Benchmarks with printed figures (see README "Benchmarks"):
#  1. cold and warm sandboxed scans of server-everything, phase by phase,
#     beside the unsandboxed inspector listing (target: warm within 2x);
#  2. rescoring stored bundles (target: at least 20,000 bundles/s), and
#     Evaluate alone.
# RUNS and COLD set the number of warm and cold scans.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
export VERIFYMCP_CA_BUNDLE="${VERIFYMCP_CA_BUNDLE-/etc/ssl/certs/ca-certificates.crt}"

echo "== scan phases (bench/scanbench)"
go run ./bench/scanbench -bin bin/verifymcp -runs "${RUNS:-5}" -cold "${COLD:-2}"

echo
echo "== score over stored bundles (store.BenchmarkScoreStored) and Evaluate (rubric.BenchmarkEvaluate)"
go test -run '^$' -bench 'BenchmarkScoreStored' -benchtime 3x -count 3 ./store
go test -run '^$' -bench 'BenchmarkEvaluate' -benchmem -count 3 ./rubric

echo "== DNSSEC: 20 domains against the loopback hierarchy (target warm < 50 ms)"
go test -run '^$' -bench 'BenchmarkValidate20' -benchmem -count 3 ./dnssec

echo "== judge: cache hits (target < 1 ms) and re-judging 1,000 unchanged surfaces (target: 0 calls)"
go test -run '^$' -bench 'BenchmarkCacheHit|BenchmarkRejudgeStored1000' -benchtime 3x ./judge
go test -run '^$' -bench 'BenchmarkGet' ./cache
