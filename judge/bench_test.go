package judge

import (
	"context"
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
