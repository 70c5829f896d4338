package store

import (
	"encoding/json"
	"testing"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
)

// fastSample is how many bundles of the mixed population the benchmarks
// below use.
const fastSample = 2000

type fastCorpus struct {
	data    [][]byte // stored bundles
	bundles []*evidence.Bundle
	results []rubric.Result // under rubric v5
	json5   [][]byte        // the results, encoded
	base4   [][]byte        // each bundle's result under rubric v4, encoded
}

func loadFastCorpus(b *testing.B) fastCorpus {
	fx := loadRescoreFixtures(b)
	v4, err := rubric.Load("4")
	if err != nil {
		b.Fatal(err)
	}
	var c fastCorpus
	for i := range fastSample {
		data, err := json.Marshal(fx.mixed(i))
		if err != nil {
			b.Fatal(err)
		}
		bd, err := DecodeBundle(data)
		if err != nil {
			b.Fatal(err)
		}
		res := rubric.Evaluate(bd, rubric.Current())
		enc, err := json.Marshal(res)
		if err != nil {
			b.Fatal(err)
		}
		old, err := json.Marshal(rubric.Evaluate(bd, v4))
		if err != nil {
			b.Fatal(err)
		}
		c.data = append(c.data, data)
		c.bundles = append(c.bundles, bd)
		c.results = append(c.results, res)
		c.json5 = append(c.json5, enc)
		c.base4 = append(c.base4, old)
	}
	return c
}

// perResult runs pass, which handles some results and returns how many,
// in b's loop, and reports the wall and CPU time per result (CPU time
// includes the garbage collector's, on every core).
func perResult(b *testing.B, pass func() int) {
	n := 0
	cpu0 := cpuTime()
	for b.Loop() {
		n += pass()
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(n), "µs/result")
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/float64(n), "cpu-µs/result")
	}
}

// BenchmarkFastStages measures the worker stages of a rescoring pass over
// the mixed population, one goroutine, without SQLite: as a pass did them
// (DecodeBundle, rubric.Evaluate, json.Marshal) and with a pass's memo and
// the result encoder (memo=pass, encode=fast).
func BenchmarkFastStages(b *testing.B) {
	c := loadFastCorpus(b)
	v5 := rubric.Current()
	v4, err := rubric.Load("4")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("decode", func(b *testing.B) {
		perResult(b, func() int {
			for _, d := range c.data {
				if _, err := DecodeBundle(d); err != nil {
					b.Fatal(err)
				}
			}
			return len(c.data)
		})
	})
	b.Run("decode/memo=pass", func(b *testing.B) {
		perResult(b, func() int {
			m := newRescoreMemo(v5)
			for _, d := range c.data {
				if _, err := m.decodeBundle(d); err != nil {
					b.Fatal(err)
				}
			}
			return len(c.data)
		})
	})
	for _, r := range []*rubric.Rubric{v5, v4} {
		b.Run("evaluate/rubric="+r.Version, func(b *testing.B) {
			perResult(b, func() int {
				for _, bd := range c.bundles {
					rubric.Evaluate(bd, r)
				}
				return len(c.bundles)
			})
		})
	}
	// The memo shares contracts between bundles; so must the bundles the
	// memoised evaluation is given.
	m := newRescoreMemo(v5)
	shared := make([]*evidence.Bundle, len(c.data))
	for i, d := range c.data {
		if shared[i], err = m.decodeBundle(d); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("evaluate/rubric=5/memo=pass", func(b *testing.B) {
		perResult(b, func() int {
			m := newRescoreMemo(v5)
			for _, bd := range shared {
				m.evaluate(bd)
			}
			return len(shared)
		})
	})
	b.Run("encode", func(b *testing.B) {
		perResult(b, func() int {
			for _, res := range c.results {
				if _, err := json.Marshal(res); err != nil {
					b.Fatal(err)
				}
			}
			return len(c.results)
		})
	})
	b.Run("encode/fast", func(b *testing.B) {
		perResult(b, func() int {
			for _, res := range c.results {
				if _, err := encodeResult(res); err != nil {
					b.Fatal(err)
				}
			}
			return len(c.results)
		})
	})
	b.Run("encode/stored", func(b *testing.B) {
		perResult(b, func() int {
			for i := range c.results {
				if _, err := encodeStoredResult(&c.results[i]); err != nil {
					b.Fatal(err)
				}
			}
			return len(c.results)
		})
	})
	b.Run("compare", func(b *testing.B) {
		perResult(b, func() int {
			for i, res := range c.results {
				r := &rescored{result: c.json5[i]}
				if err := r.compare("4", c.base4[i], res); err != nil {
					b.Fatal(err)
				}
			}
			return len(c.results)
		})
	})
}

// BenchmarkFastWorker measures what a rescoring worker does per run, bar
// the comparison: decode, evaluate under rubric v5 and encode, as a pass
// did (memo=none) and with a pass's memo and the result encoder
// (memo=pass).
func BenchmarkFastWorker(b *testing.B) {
	c := loadFastCorpus(b)
	v5 := rubric.Current()
	b.Run("memo=none", func(b *testing.B) {
		perResult(b, func() int {
			for _, d := range c.data {
				bd, err := DecodeBundle(d)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := json.Marshal(rubric.Evaluate(bd, v5)); err != nil {
					b.Fatal(err)
				}
			}
			return len(c.data)
		})
	})
	b.Run("memo=pass", func(b *testing.B) {
		perResult(b, func() int {
			m := newRescoreMemo(v5)
			for _, d := range c.data {
				bd, err := m.decodeBundle(d)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := encodeResult(m.evaluate(bd)); err != nil {
					b.Fatal(err)
				}
			}
			return len(c.data)
		})
	})
}
