package judge

import (
	"context"
	"fmt"
	"testing"

	"github.com/verifymcp/verifymcp/cache"
	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/judge/judgetest"
)

// BenchmarkCacheHit measures a judgment answered from the cache: key,
// lookup and decoding, on server-filesystem's surface (14 tools), with an
// in-memory cache and with the SQLite cache of the cache package, for a
// normalised contract (SchemaHash set, as the pipeline passes it) and, in
// the _rehash cases, for one whose schema hash must be computed first.
// Target: under 1 ms per lookup.
func BenchmarkCacheHit(b *testing.B) {
	ctx := context.Background()
	c := loadSurface(b, "filesystem")
	srv := judgetest.New(nil)
	defer srv.Close()
	caches := []struct {
		name string
		open func(b *testing.B) Cache
	}{
		{"memory", func(*testing.B) Cache { return newMemCache() }},
		{"sqlite", func(b *testing.B) Cache {
			sc, err := cache.Open(ctx, b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { sc.Close() })
			return sc
		}},
	}
	rehashed := *c
	rehashed.SchemaHash = ""
	for _, cc := range caches {
		for _, variant := range []struct {
			suffix string
			c      *contract.Contract
		}{{"", c}, {"_rehash", &rehashed}} {
			c := variant.c
			b.Run(cc.name+variant.suffix, func(b *testing.B) {
				j := newJudge(b, srv, func(o *Options) { o.Cache = cc.open(b) })
				if _, err := j.Judge(ctx, c, "3"); err != nil {
					b.Fatal(err)
				}
				calls := srv.Count()
				b.ReportAllocs()
				for b.Loop() {
					r, err := j.Judge(ctx, c, "3")
					if err != nil || !r.CacheHit {
						b.Fatalf("hit %v, err %v", r != nil && r.CacheHit, err)
					}
				}
				if srv.Count() != calls {
					b.Fatalf("cache hits made %d calls", srv.Count()-calls)
				}
			})
		}
	}
}

// BenchmarkRejudgeStored1000 re-judges 1,000 stored scans whose surfaces
// did not change, as a rescore or a re-run of a batch does: 1,000 distinct
// surfaces (real ones, each with one description changed, so each has
// its own schema hash) were judged once into the SQLite cache; a new judge on
// the same cache (a new process) then answers all 1,000 from the cache
// and the endpoint receives zero calls. The figure is per 1,000 surfaces.
func BenchmarkRejudgeStored1000(b *testing.B) {
	ctx := context.Background()
	srv := judgetest.New(nil)
	defer srv.Close()
	sc, err := cache.Open(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer sc.Close()
	names := []string{"everything", "filesystem", "memory", "github"}
	surfaces := make([]*contract.Contract, 1000)
	for i := range surfaces {
		c := *loadSurface(b, names[i%len(names)])
		c.Tools = append([]contract.Tool(nil), c.Tools...)
		c.Tools[0].Description += fmt.Sprintf(" (release %d)", i)
		c.SchemaHash = ""
		h, err := contract.Hash(&c)
		if err != nil {
			b.Fatal(err)
		}
		c.SchemaHash = h
		surfaces[i] = &c
	}
	first := newJudge(b, srv, func(o *Options) { o.Cache = sc })
	for _, c := range surfaces {
		if _, err := first.Judge(ctx, c, "5"); err != nil {
			b.Fatal(err)
		}
	}
	if srv.Count() != len(surfaces) {
		b.Fatalf("first pass: %d calls for %d surfaces", srv.Count(), len(surfaces))
	}
	calls := srv.Count()
	again := newJudge(b, srv, func(o *Options) { o.Cache = sc })
	for b.Loop() {
		for _, c := range surfaces {
			r, err := again.Judge(ctx, c, "5")
			if err != nil || !r.CacheHit {
				b.Fatalf("hit %v, err %v", r != nil && r.CacheHit, err)
			}
		}
	}
	b.ReportMetric(float64(srv.Count()-calls), "calls")
	if srv.Count() != calls {
		b.Fatalf("re-judging unchanged surfaces made %d calls", srv.Count()-calls)
	}
}
