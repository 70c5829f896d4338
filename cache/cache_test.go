package cache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/verifymcp/verifymcp/internal/pg"
)

// A backend makes empty stores for tests. The same behavioural tests run
// against every backend built into the test binary (Postgres only under the
// build tag "postgres"), so that SQLite and Postgres cannot drift apart.
type backend struct {
	name string
	// newTarget returns a new, empty store for one test or benchmark, as
	// OpenDSN's argument, and removes it when tb ends.
	newTarget func(tb testing.TB) string
}

var sqliteBackend = &backend{
	name:      "sqlite",
	newTarget: func(tb testing.TB) string { return tb.TempDir() },
}

func testBackends() []*backend {
	bs := []*backend{sqliteBackend}
	if postgresBackend != nil {
		bs = append(bs, postgresBackend)
	}
	return bs
}

func openTarget(tb testing.TB, target string) *Cache {
	tb.Helper()
	c, err := OpenDSN(context.Background(), target)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// The helper process: the test binary re-executed with helperTargetEnv set
// runs writeAsProcess instead of the tests, so that two real processes can
// share a store.
const (
	helperTargetEnv = "VERIFYMCP_CACHE_TEST_HELPER_TARGET"
	helperIDEnv     = "VERIFYMCP_CACHE_TEST_HELPER_ID"
	helperStartEnv  = "VERIFYMCP_CACHE_TEST_HELPER_START"
	processKeys     = 200
)

func TestMain(m *testing.M) {
	if target := os.Getenv(helperTargetEnv); target != "" {
		if err := writeAsProcess(target, os.Getenv(helperIDEnv), os.Getenv(helperStartEnv)); err != nil {
			fmt.Fprintln(os.Stderr, "helper process:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// writeAsProcess writes the keys every helper writes, each read back (a
// hit, whichever process wrote last) and each followed by a read of a key
// nobody writes (a miss).
func writeAsProcess(target, id, start string) error {
	ctx := context.Background()
	c, err := OpenDSN(ctx, target)
	if err != nil {
		return err
	}
	ms, err := strconv.ParseInt(start, 10, 64)
	if err != nil {
		return fmt.Errorf("start time: %w", err)
	}
	// Both processes start writing at the same moment.
	time.Sleep(time.Until(time.UnixMilli(ms)))
	for i := range processKeys {
		key := fmt.Sprintf("k%d", i)
		if err := c.Put(ctx, "shared", key, []byte(fmt.Sprintf("%s-%d", id, i)), time.Hour); err != nil {
			return err
		}
		v, _, ok, err := c.Get(ctx, "shared", key)
		if err != nil || !ok || !strings.HasSuffix(string(v), fmt.Sprintf("-%d", i)) {
			return fmt.Errorf("read back %s: %q ok=%v err=%w", key, v, ok, err)
		}
		if _, _, ok, err := c.Get(ctx, "shared", "missing-"+id+key); ok || err != nil {
			return fmt.Errorf("missing key: ok=%v err=%w", ok, err)
		}
	}
	return c.Close()
}

func TestBackends(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, b *backend)
	}{
		{"get_put_overwrite_expiry", testGetPutExpiry},
		{"values_are_bytes", testValuesAreBytes},
		{"stats_and_prune", testStatsAndPrune},
		{"counters_shared_between_handles", testCountersShared},
		{"concurrent_open_of_an_empty_store", testConcurrentOpen},
		{"concurrent_writers_same_keys", testConcurrentWriters},
		{"two_processes_same_keys", testTwoProcesses},
	}
	for _, b := range testBackends() {
		t.Run(b.name, func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) { tt.run(t, b) })
			}
		})
	}
}

func testGetPutExpiry(t *testing.T, b *backend) {
	ctx := context.Background()
	c := openTarget(t, b.newTarget(t))
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
	v, stored, _, _ = c.Get(ctx, "osv", "k")
	if string(v) != "v2" || !stored.Equal(now) {
		t.Errorf("overwrite: got %q stored %v, want %q stored %v", v, stored, "v2", now)
	}
	// The overwrite moved the expiry: 61 minutes after the first Put the
	// entry is still there, 91 minutes after it is gone.
	now = now.Add(31 * time.Minute)
	if _, _, ok, _ := c.Get(ctx, "osv", "k"); !ok {
		t.Error("an overwrite did not renew the expiry")
	}
	now = now.Add(30 * time.Minute)
	if _, _, ok, _ := c.Get(ctx, "osv", "k"); ok {
		t.Error("an expired entry was returned")
	}
	// An expired entry is replaced by a new Put.
	if err := c.Put(ctx, "osv", "k", []byte("v3"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if v, _, _, _ := c.Get(ctx, "osv", "k"); string(v) != "v3" {
		t.Errorf("put over an expired entry: got %q", v)
	}
	for _, ttl := range []time.Duration{0, -time.Second} {
		if err := c.Put(ctx, "osv", "zero", []byte("x"), ttl); err != nil {
			t.Fatal(err)
		}
		if _, _, ok, _ := c.Get(ctx, "osv", "zero"); ok {
			t.Errorf("a TTL of %v must not store", ttl)
		}
	}
}

func testValuesAreBytes(t *testing.T, b *backend) {
	ctx := context.Background()
	c := openTarget(t, b.newTarget(t))
	binary := []byte{0, 0xff, 0xfe, '\'', '\\', 0, 'x', 0x80}
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	for _, tt := range []struct {
		name  string
		value []byte
		want  []byte
	}{
		{"binary", binary, binary},
		{"empty", []byte{}, []byte{}},
		{"nil_is_empty", nil, []byte{}},
		{"one_mebibyte", big, big},
	} {
		if err := c.Put(ctx, "judge", tt.name, tt.value, time.Hour); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		got, _, ok, err := c.Get(ctx, "judge", tt.name)
		if err != nil || !ok {
			t.Fatalf("%s: ok=%v err=%v", tt.name, ok, err)
		}
		if got == nil || !bytes.Equal(got, tt.want) {
			t.Errorf("%s: got %d bytes (nil %v), want %d", tt.name, len(got), got == nil, len(tt.want))
		}
	}
}

func testStatsAndPrune(t *testing.T, b *backend) {
	ctx := context.Background()
	c := openTarget(t, b.newTarget(t))
	if st, err := c.Stats(ctx); err != nil || len(st) != 0 {
		t.Fatalf("empty store: %+v %v", st, err)
	}
	now := time.Now()
	c.now = func() time.Time { return now }
	for _, p := range []struct {
		ns, key, value string
		ttl            time.Duration
	}{
		{"osv", "a", "12345", time.Hour},
		{"osv", "b", "123", time.Minute},
		{"github", "c", "1", time.Hour},
		{"socket", "d", "12", time.Minute},
	} {
		if err := c.Put(ctx, p.ns, p.key, []byte(p.value), p.ttl); err != nil {
			t.Fatal(err)
		}
	}
	c.Get(ctx, "osv", "a")
	c.Get(ctx, "osv", "a")
	c.Get(ctx, "osv", "nope")
	c.Get(ctx, "osv", "nope2")
	c.Get(ctx, "osv", "nope3")
	c.Get(ctx, "npm", "nope") // a namespace with misses and no entries
	now = now.Add(2 * time.Minute)
	c.Get(ctx, "osv", "b") // expired: a miss
	got, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []NamespaceStats{
		{Namespace: "github", Entries: 1, Bytes: 1},
		{Namespace: "npm", Misses: 1},
		{Namespace: "osv", Entries: 2, Expired: 1, Bytes: 8, Hits: 2, Misses: 4},
		{Namespace: "socket", Entries: 1, Expired: 1, Bytes: 2},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	// A second Stats must not count the flushed hits twice.
	got, err = c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stats again (-want +got):\n%s", diff)
	}

	if n, err := c.Prune(ctx, false); err != nil || n != 2 {
		t.Errorf("prune expired: removed %d, err %v; want 2", n, err)
	}
	if v, _, ok, _ := c.Get(ctx, "osv", "a"); !ok || string(v) != "12345" {
		t.Errorf("prune removed a live entry: %q %v", v, ok)
	}
	if n, err := c.Prune(ctx, false); err != nil || n != 0 {
		t.Errorf("prune again: removed %d, err %v; want 0", n, err)
	}
	if n, err := c.Prune(ctx, true); err != nil || n != 2 {
		t.Errorf("prune all: removed %d, err %v; want 2", n, err)
	}
	got, err = c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The counters outlive the entries.
	want = []NamespaceStats{
		{Namespace: "npm", Misses: 1},
		{Namespace: "osv", Hits: 3, Misses: 4},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stats after prune --all (-want +got):\n%s", diff)
	}
}

// testCountersShared: hits and misses are stored, so what one handle (one
// process in practice) counted is seen by another, and a reopened store
// keeps them.
func testCountersShared(t *testing.T, b *backend) {
	ctx := context.Background()
	target := b.newTarget(t)
	one, two := openTarget(t, target), openTarget(t, target)
	if err := one.Put(ctx, "osv", "k", []byte("v"), time.Hour); err != nil {
		t.Fatal(err)
	}
	two.Get(ctx, "osv", "k")
	two.Get(ctx, "osv", "missing")
	one.Get(ctx, "osv", "k")
	if err := two.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := one.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []NamespaceStats{{Namespace: "osv", Entries: 1, Bytes: 1, Hits: 2, Misses: 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	one.Close()
	got, err = openTarget(t, target).Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stats after reopening (-want +got):\n%s", diff)
	}
}

// testConcurrentOpen: workers starting at once all create the schema; none
// may fail.
func testConcurrentOpen(t *testing.T, b *backend) {
	ctx := context.Background()
	target := b.newTarget(t)
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			c, err := OpenDSN(ctx, target)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			if err := c.Put(ctx, "ns", fmt.Sprint(i), []byte("v"), time.Hour); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st, err := openTarget(t, target).Stats(ctx)
	if err != nil || len(st) != 1 || st[0].Entries != n {
		t.Errorf("entries after concurrent opens: %+v %v", st, err)
	}
}

// testConcurrentWriters: goroutines on two handles writing the same keys
// at once never fail (no "database is locked", no unique violation) and
// never lose a write or a count.
func testConcurrentWriters(t *testing.T, b *backend) {
	ctx := context.Background()
	target := b.newTarget(t)
	handles := []*Cache{openTarget(t, target), openTarget(t, target)}
	const writers, keys = 16, 50
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			c := handles[w%2]
			for i := range keys {
				key := fmt.Sprintf("k%d", i)
				if err := c.Put(ctx, "ns", key, []byte(fmt.Sprintf("w%d-%d", w, i)), time.Hour); err != nil {
					errs <- err
					return
				}
				v, _, ok, err := c.Get(ctx, "ns", key)
				if err != nil || !ok || !strings.HasSuffix(string(v), fmt.Sprintf("-%d", i)) {
					errs <- fmt.Errorf("read back %s: %q ok=%v err=%v", key, v, ok, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	var size int64
	for i := range keys {
		v, _, ok, err := handles[0].Get(ctx, "ns", fmt.Sprintf("k%d", i))
		if err != nil || !ok {
			t.Fatalf("k%d: ok=%v err=%v", i, ok, err)
		}
		size += int64(len(v))
	}
	if _, err := handles[1].Stats(ctx); err != nil { // flushes its counts
		t.Fatal(err)
	}
	got, err := handles[0].Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []NamespaceStats{{Namespace: "ns", Entries: keys, Bytes: size, Hits: writers*keys + keys}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stats after concurrent writes (-want +got):\n%s", diff)
	}
}

// testTwoProcesses: two processes (this test binary, re-executed) write
// the same keys at once; both succeed, every key holds one of their values,
// and the stored counters hold both processes' hits and misses.
func testTwoProcesses(t *testing.T, b *backend) {
	ctx := context.Background()
	target := b.newTarget(t)
	// Create the schema first, so that the processes race on the writes.
	c := openTarget(t, target)
	start := strconv.FormatInt(time.Now().Add(500*time.Millisecond).UnixMilli(), 10)
	ids := []string{"a", "b"}
	cmds := make([]*exec.Cmd, len(ids))
	outs := make([]bytes.Buffer, len(ids))
	for i, id := range ids {
		cmd := exec.CommandContext(ctx, os.Args[0])
		cmd.Env = append(os.Environ(), helperTargetEnv+"="+target, helperIDEnv+"="+id, helperStartEnv+"="+start)
		cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("process %s: %v\n%s", ids[i], err, outs[i].String())
		}
	}
	if t.Failed() {
		return
	}
	var size int64
	for i := range processKeys {
		v, _, ok, err := c.Get(ctx, "shared", fmt.Sprintf("k%d", i))
		if err != nil || !ok || (string(v) != fmt.Sprintf("a-%d", i) && string(v) != fmt.Sprintf("b-%d", i)) {
			t.Fatalf("k%d: %q ok=%v err=%v", i, v, ok, err)
		}
		size += int64(len(v))
	}
	got, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []NamespaceStats{{
		Namespace: "shared",
		Entries:   processKeys,
		Bytes:     size,
		Hits:      2*processKeys + processKeys, // both processes, then the reads above
		Misses:    2 * processKeys,
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stats after two processes (-want +got):\n%s", diff)
	}
}

func TestOpenDSN(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	c, err := OpenDSN(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, want := c.Backend(), "sqlite"; got != want {
		t.Errorf("Backend() = %q, want %q", got, want)
	}
	if got, want := c.Location(), filepath.Join(dir, FileName); got != want {
		t.Errorf("Location() = %q, want %q", got, want)
	}
}

// TestInvalidDSNHidesPassword: a DSN that does not parse is reported
// without quoting it, so the password cannot leak from a malformed one.
func TestInvalidDSNHidesPassword(t *testing.T) {
	const secret = "s3cr3t-Pw"
	for _, dsn := range []string{
		"postgres://verifymcp:" + secret + "@127.0.0.1:notaport/db",
		"postgres://verifymcp:" + secret + ":extra@127.0.0.1:5432:5433/db",
		"postgresql://verifymcp:" + secret + "@[::1/db",
		"host=127.0.0.1 port=notaport password=" + secret,
		"host=127.0.0.1 password='" + secret,
	} {
		opens := []func(context.Context, string) (*Cache, error){OpenPostgres}
		if pg.IsDSN(dsn) {
			opens = append(opens, OpenDSN) // which must take a URL to Postgres
		}
		for _, open := range opens {
			_, err := open(context.Background(), dsn)
			if !errors.Is(err, pg.ErrInvalidDSN) {
				t.Errorf("%q: got %v, want ErrInvalidDSN", dsn, err)
			}
			if err != nil && strings.Contains(err.Error(), secret) {
				t.Errorf("the error shows the password: %v", err)
			}
		}
	}
}

// BenchmarkGet measures one cache hit of a 4 KiB value (a judge verdict's
// size) on each backend.
func BenchmarkGet(b *testing.B) {
	for _, be := range testBackends() {
		b.Run(be.name, func(b *testing.B) {
			ctx := context.Background()
			c := openTarget(b, be.newTarget(b))
			if err := c.Put(ctx, "judge", "k", make([]byte, 4096), time.Hour); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, _, ok, err := c.Get(ctx, "judge", "k"); !ok || err != nil {
					b.Fatal(ok, err)
				}
			}
		})
	}
}

// BenchmarkGetParallel is BenchmarkGet from GOMAXPROCS goroutines sharing
// one Cache, as a scan's collectors do.
func BenchmarkGetParallel(b *testing.B) {
	for _, be := range testBackends() {
		b.Run(be.name, func(b *testing.B) {
			ctx := context.Background()
			c := openTarget(b, be.newTarget(b))
			if err := c.Put(ctx, "judge", "k", make([]byte, 4096), time.Hour); err != nil {
				b.Fatal(err)
			}
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, _, ok, err := c.Get(ctx, "judge", "k"); !ok || err != nil {
						b.Error(ok, err)
						return
					}
				}
			})
		})
	}
}
