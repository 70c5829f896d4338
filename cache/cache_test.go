package cache

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

func open(t *testing.T) *Cache {
	t.Helper()
	c, err := Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestGetPutExpiry(t *testing.T) {
	ctx := context.Background()
	c := open(t)
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	c.now = func() time.Time { return now }
	if _, _, ok, err := c.Get(ctx, "osv", "k"); ok || err != nil {
		t.Fatalf("empty cache: ok=%v err=%v", ok, err)
	}
	if err := c.Put(ctx, "osv", "k", []byte("v1"), time.Hour); err != nil {
		t.Fatal(err)
	}
	v, stored, ok, err := c.Get(ctx, "osv", "k")
	if err != nil || !ok || string(v) != "v1" || !stored.Equal(now) {
		t.Fatalf("got %q stored %v ok %v err %v", v, stored, ok, err)
	}
	if _, _, ok, _ := c.Get(ctx, "socket", "k"); ok {
		t.Error("namespaces must not share entries")
	}
	now = now.Add(30 * time.Minute)
	if err := c.Put(ctx, "osv", "k", []byte("v2"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if v, _, _, _ := c.Get(ctx, "osv", "k"); string(v) != "v2" {
		t.Errorf("replace: got %q", v)
	}
	now = now.Add(61 * time.Minute)
	if _, _, ok, _ := c.Get(ctx, "osv", "k"); ok {
		t.Error("an expired entry was returned")
	}
	if err := c.Put(ctx, "osv", "zero", []byte("x"), 0); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, _ := c.Get(ctx, "osv", "zero"); ok {
		t.Error("a zero TTL must not store")
	}
}

func TestStatsAndPrune(t *testing.T) {
	ctx := context.Background()
	c := open(t)
	now := time.Now()
	c.now = func() time.Time { return now }
	c.Put(ctx, "osv", "a", []byte("12345"), time.Hour)
	c.Put(ctx, "osv", "b", []byte("123"), time.Minute)
	c.Put(ctx, "github", "c", []byte("1"), time.Hour)
	c.Get(ctx, "osv", "a")
	c.Get(ctx, "osv", "nope")
	c.Get(ctx, "osv", "nope2")
	now = now.Add(2 * time.Minute)
	st, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]NamespaceStats{
		"github": {Namespace: "github", Entries: 1, Bytes: 1},
		"osv":    {Namespace: "osv", Entries: 2, Expired: 1, Bytes: 8, Hits: 1, Misses: 2},
	}
	if len(st) != len(want) {
		t.Fatalf("stats %+v", st)
	}
	for _, s := range st {
		if s != want[s.Namespace] {
			t.Errorf("stats %s: got %+v, want %+v", s.Namespace, s, want[s.Namespace])
		}
	}
	if n, err := c.Prune(ctx, false); err != nil || n != 1 {
		t.Errorf("prune expired: %d %v", n, err)
	}
	if n, err := c.Prune(ctx, true); err != nil || n != 2 {
		t.Errorf("prune all: %d %v", n, err)
	}
}

// TestConcurrentWriters: two handles on the same file (two processes in
// practice) writing and reading at once never fail with "database is
// locked" and never lose a write.
func TestConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var handles []*Cache
	for range 2 {
		c, err := Open(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		handles = append(handles, c)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 400)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := handles[w%2]
			for i := range 100 {
				key := fmt.Sprintf("w%d-%d", w, i)
				if err := c.Put(ctx, "ns", key, []byte(key), time.Hour); err != nil {
					errs <- err
					return
				}
				if v, _, ok, err := c.Get(ctx, "ns", key); err != nil || !ok || string(v) != key {
					errs <- fmt.Errorf("read back %s: %q %v %v", key, v, ok, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st, _ := handles[0].Stats(ctx)
	if len(st) != 1 || st[0].Entries != 400 {
		t.Errorf("entries after concurrent writes: %+v", st)
	}
}

func BenchmarkGetHit(b *testing.B) {
	ctx := context.Background()
	c, err := Open(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	c.Put(ctx, "judge", "k", make([]byte, 4096), time.Hour)
	for b.Loop() {
		if _, _, ok, err := c.Get(ctx, "judge", "k"); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
