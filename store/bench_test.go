package store

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
)

// benchBundles is how many bundles BenchmarkScoreStored stores and rescores.
const benchBundles = 20000

// variant returns the i-th realistic bundle: the server-everything fixture
// under a distinct run id, date, target version and, for every third run,
// a different tool surface, so rows are not identical.
func variant(base *evidence.Bundle, i int) *evidence.Bundle {
	b := *base
	b.Run.ID = fmt.Sprintf("run-%06d", i)
	b.Run.Date = base.Run.Date.Add(time.Duration(i) * time.Minute)
	b.Target.Name = fmt.Sprintf("@bench/server-%d", i%500)
	b.Target.Version = fmt.Sprintf("1.%d.%d", i/500, i%7)
	if i%3 == 0 {
		c := *base.Contract
		c.Tools = c.Tools[:len(c.Tools)-i%5]
		c.ProtocolVersion = []string{"2025-11-25", "2025-06-18", "2025-03-26"}[i%3]
		b.Contract = &c
	}
	return &b
}

// withSupply returns b carrying the supply-chain evidence and signals of
// supply (the supply fixture, as bundles written since rubric v3 do, or
// the dnssec fixture, which adds DNSSEC evidence, as since rubric v4).
func withSupply(b, supply *evidence.Bundle) *evidence.Bundle {
	c := *b
	c.Signals = maps.Clone(b.Signals)
	for _, name := range []string{evidence.SignalRegistryMeta, evidence.SignalOSV, evidence.SignalSocket, evidence.SignalGitHub, evidence.SignalDNSSEC} {
		c.Signals[name] = supply.Signals[name]
	}
	c.Supply = supply.Supply
	return &c
}

// withJudge returns b carrying the judge signal and verdicts of judge (the
// judge fixture, as bundles written since rubric v5 do).
func withJudge(b, judge *evidence.Bundle) *evidence.Bundle {
	c := *b
	c.Signals = maps.Clone(b.Signals)
	c.Signals[evidence.SignalJudge] = judge.Signals[evidence.SignalJudge]
	c.Judge = judge.Judge
	return &c
}

// BenchmarkScoreStored rescores a store of bundles: evidence=sandbox holds
// bundles as written before supply-chain collection (the supply-chain
// dimensions find their signals unavailable), evidence=supply the same
// bundles with the supply fixture's registry metadata, OSV advisories,
// Socket verdict and GitHub answer, as written since, evidence=dnssec
// those with the dnssec fixture's DNSSEC validation of five domains too,
// and evidence=judge those with the judge fixture's cached verdicts too.
func BenchmarkScoreStored(b *testing.B) {
	base := loadFixture(b, "everything.bundle.json")
	supply := loadFixture(b, "supply.bundle.json")
	dnssec := loadFixture(b, "dnssec.bundle.json")
	judge := loadFixture(b, "judge.bundle.json")
	b.Run("evidence=sandbox", func(b *testing.B) {
		benchmarkScoreStored(b, func(i int) *evidence.Bundle { return variant(base, i) })
	})
	b.Run("evidence=supply", func(b *testing.B) {
		benchmarkScoreStored(b, func(i int) *evidence.Bundle { return withSupply(variant(base, i), supply) })
	})
	b.Run("evidence=dnssec", func(b *testing.B) {
		benchmarkScoreStored(b, func(i int) *evidence.Bundle { return withSupply(variant(base, i), dnssec) })
	})
	b.Run("evidence=judge", func(b *testing.B) {
		benchmarkScoreStored(b, func(i int) *evidence.Bundle { return withJudge(withSupply(variant(base, i), dnssec), judge) })
	})
}

func benchmarkScoreStored(b *testing.B, bundle func(i int) *evidence.Bundle) {
	ctx := context.Background()
	s, err := Open(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	r := rubric.Current()
	var size int
	start := time.Now()
	for i := range benchBundles {
		v := bundle(i)
		data, err := json.Marshal(v)
		if err != nil {
			b.Fatal(err)
		}
		size += len(data)
		if err := s.SaveRun(ctx, data, v, rubric.Evaluate(v, r)); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("stored %d bundles (mean %d bytes) in %v", benchBundles, size/benchBundles, time.Since(start).Round(time.Millisecond))

	workers := runtime.GOMAXPROCS(0)
	b.ResetTimer()
	var total int
	cpu0 := cpuTime()
	for b.Loop() {
		n, err := rescoreAll(ctx, s, r, workers)
		if err != nil {
			b.Fatal(err)
		}
		if n != benchBundles {
			b.Fatalf("rescored %d bundles, want %d", n, benchBundles)
		}
		total += n
	}
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "bundles/s")
	// CPU time per bundle is steadier than throughput on a shared machine;
	// GOMAXPROCS divided by it is the throughput the cores could sustain.
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/float64(total), "cpu-µs/bundle")
	}
}

// rescoreAll streams every stored bundle from one reader goroutine to
// workers that decode and evaluate it, the shape of a rescoring job. Rows
// travel in batches, so that waking a worker is paid once per batch rather
// than once per bundle.
func rescoreAll(ctx context.Context, s *Store, r *rubric.Rubric, workers int) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type row struct {
		id   string
		data []byte
	}
	const batchSize = 64
	batches := make(chan []row, 2*workers)
	// Batches and their buffers go back to the pool once decoded:
	// DecodeBundle keeps no reference to its input.
	var pool sync.Pool
	var readErr error
	go func() {
		defer close(batches)
		var batch []row
		send := func() error {
			select {
			case batches <- batch:
				batch = nil
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		readErr = s.EachBundle(ctx, Filter{}, func(id string, data []byte) error {
			if batch == nil {
				batch, _ = pool.Get().([]row)
				batch = batch[:0]
			}
			var buf []byte
			if n := len(batch); n < cap(batch) {
				buf = batch[:n+1][n].data[:0] // reuse the pooled row's buffer
			}
			batch = append(batch, row{id, append(buf, data...)})
			if len(batch) == batchSize {
				return send()
			}
			return nil
		})
		if readErr == nil && len(batch) > 0 {
			readErr = send()
		}
	}()
	var mu sync.Mutex
	var n int
	var firstErr error
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := 0
			for batch := range batches {
				for _, rw := range batch {
					bd, err := DecodeBundle(rw.data)
					if err != nil {
						mu.Lock()
						if firstErr == nil {
							firstErr = fmt.Errorf("run %s: %w", rw.id, err)
						}
						mu.Unlock()
						cancel()
						break
					}
					if res := rubric.Evaluate(bd, r); res.Score != nil {
						local++
					}
				}
				pool.Put(batch)
			}
			mu.Lock()
			n += local
			mu.Unlock()
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return n, firstErr
	}
	return n, readErr
}

func loadFixture(t testing.TB, name string) *evidence.Bundle {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	b, err := evidence.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// BenchmarkEachBundle measures the reader alone: one pass over the store.
func BenchmarkEachBundle(b *testing.B) {
	ctx := context.Background()
	base := loadFixture(b, "everything.bundle.json")
	s, err := Open(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const n = 5000
	for i := range n {
		v := variant(base, i)
		data, err := json.Marshal(v)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.SaveRun(ctx, data, v, rubric.Evaluate(v, rubric.Current())); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	var total int
	for b.Loop() {
		if err := s.EachBundle(ctx, Filter{}, func(string, []byte) error { total++; return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(total), "µs/bundle")
}

// TestRescoreAll checks the benchmark's rescoring harness itself, across
// more than one batch, with and without supply-chain and DNSSEC evidence:
// every stored bundle is decoded and scored once, with and without the
// judge's verdicts.
func TestRescoreAll(t *testing.T) {
	ctx := context.Background()
	base := loadFixture(t, "everything.bundle.json")
	supply := loadFixture(t, "supply.bundle.json")
	dnssec := loadFixture(t, "dnssec.bundle.json")
	judge := loadFixture(t, "judge.bundle.json")
	s, err := Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 150
	for i := range n {
		v := variant(base, i)
		switch i % 4 {
		case 1:
			v = withSupply(v, supply)
		case 2:
			v = withSupply(v, dnssec)
		case 3:
			v = withJudge(withSupply(v, dnssec), judge)
		}
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SaveRun(ctx, data, v, rubric.Evaluate(v, rubric.Current())); err != nil {
			t.Fatal(err)
		}
	}
	for _, workers := range []int{1, 2, 3} {
		got, err := rescoreAll(ctx, s, rubric.Current(), workers)
		if err != nil || got != n {
			t.Errorf("rescoreAll with %d workers = %d, %v; want %d", workers, got, err, n)
		}
	}
}
