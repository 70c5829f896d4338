package thirdparty

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/cache"
)

// countingClient dials through a counter; dial, when set, replaces the
// real dial.
func countingClient(dials *atomic.Int64, dial func(ctx context.Context, network, addr string) (net.Conn, error)) *http.Client {
	d := &net.Dialer{Timeout: 2 * time.Second}
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		if dial != nil {
			return dial(ctx, network, addr)
		}
		return d.DialContext(ctx, network, addr)
	}}}
}

func get(url string) func(context.Context) (*http.Request, error) {
	return func(ctx context.Context) (*http.Request, error) {
		return http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	}
}

// memCache is an in-memory Cache, shared by the memos of two "processes".
type memCache struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (c *memCache) Get(_ context.Context, ns, key string) ([]byte, time.Time, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[ns+"\x00"+key]
	return v, time.Time{}, ok, nil
}

func (c *memCache) Put(_ context.Context, ns, key string, v []byte, _ time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[ns+"\x00"+key] = v
	return nil
}

// TestUnresolvableAskedOncePerWindow: a name that does not resolve is
// dialled once, not retried, and within the window every later request
// fails at once with the first failure's reason and nothing sent; after
// the window it is tried again.
func TestUnresolvableAskedOncePerWindow(t *testing.T) {
	var dials atomic.Int64
	hc := countingClient(&dials, func(context.Context, string, string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "api.osv.dev", IsNotFound: true}}
	})
	memo := NewReachability(time.Minute)
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	memo.now = func() time.Time { return now }
	r := Retry{Attempts: 3, Backoff: 200 * time.Millisecond, Memo: memo}
	start := time.Now()
	_, err := r.Do(t.Context(), hc, get("https://api.osv.dev/v1/querybatch?key=SECRET"))
	var ue *UnreachableError
	if !errors.As(err, &ue) || !errors.Is(err, ErrUnavailable) || ue.Remembered || dials.Load() != 1 {
		t.Fatalf("first: %v (dials %d), want one dial and an UnreachableError wrapping ErrUnavailable", err, dials.Load())
	}
	if time.Since(start) > 150*time.Millisecond || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("first: took %s (retried?), error %q", time.Since(start), err)
	}
	first := ue.Reason
	if first != "dial tcp: lookup api.osv.dev: no such host" {
		t.Errorf("reason %q, want the dial error without the request URL", first)
	}
	for range 3 {
		_, err = r.Do(t.Context(), hc, get("https://api.osv.dev/v1/query"))
		want := "https://api.osv.dev:443 unreachable (remembered from 12:00:00): " + first
		if !errors.As(err, &ue) || !errors.Is(err, ErrUnavailable) || !ue.Remembered || ue.Reason != first || err.Error() != want {
			t.Fatalf("within the window: %v, want the remembered reason %q", err, first)
		}
	}
	if dials.Load() != 1 {
		t.Errorf("dialled %d times within the window, want 1", dials.Load())
	}
	now = now.Add(time.Minute)
	_, _ = r.Do(t.Context(), hc, get("https://api.osv.dev/v1/query"))
	if dials.Load() != 2 {
		t.Errorf("after the window: %d dials, want 2", dials.Load())
	}
}

// TestRefusedNotRetried: a loopback port that refuses is dialled once; a
// server that answers 503 then 200 is still retried, and its success
// clears nothing it should not.
func TestRefusedNotRetried(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var dials atomic.Int64
	hc := countingClient(&dials, nil)
	r := Retry{Attempts: 4, Backoff: 10 * time.Millisecond, Memo: NewReachability(0)}
	_, err = r.Do(t.Context(), hc, get("http://"+addr+"/v1/query"))
	var ue *UnreachableError
	if !errors.As(err, &ue) || dials.Load() != 1 {
		t.Fatalf("refused: %v after %d dials, want an UnreachableError after 1", err, dials.Load())
	}

	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if n.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	resp, err := r.Do(t.Context(), srv.Client(), get(srv.URL+"/v1/query"))
	if err != nil || resp.StatusCode != http.StatusOK || n.Load() != 2 {
		t.Fatalf("503 then 200: %v, %d requests; want retried to 200", err, n.Load())
	}
	resp.Body.Close()
}

// TestUnreachableSharedThroughCache: a second process (a memo of its own)
// sharing the cache reports the endpoint unreachable without dialling.
func TestUnreachableSharedThroughCache(t *testing.T) {
	c := &memCache{m: map[string][]byte{}}
	refuse := func(context.Context, string, string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "api.socket.dev", IsNotFound: true}}
	}
	var d1, d2 atomic.Int64
	m1, m2 := NewReachability(0), NewReachability(0)
	m1.UseCache(c)
	m2.UseCache(c)
	if _, err := (Retry{Attempts: 3, Memo: m1}).Do(t.Context(), countingClient(&d1, refuse), get("https://api.socket.dev/v0/purl")); err == nil {
		t.Fatal("first process: no error")
	}
	_, err := (Retry{Attempts: 3, Memo: m2}).Do(t.Context(), countingClient(&d2, refuse), get("https://api.socket.dev/v0/purl"))
	var ue *UnreachableError
	if !errors.As(err, &ue) || !ue.Remembered || d2.Load() != 0 || d1.Load() != 1 {
		t.Errorf("second process: %v, dials %d and %d; want remembered with no dial", err, d1.Load(), d2.Load())
	}
	if ue != nil && ue.Endpoint != "https://api.socket.dev:443" {
		t.Errorf("endpoint %q", ue.Endpoint)
	}
}

// notFound is a dial whose name does not resolve.
func notFound(context.Context, string, string) (net.Conn, error) {
	return nil, &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "registry.example", IsNotFound: true}}
}

// TestUnreachableThroughRealCache: the mark is written to the cache
// package's store, and a fresh process opening the same store (a memo and
// a cache handle of its own) reports the endpoint unreachable without
// dialling; a success in the first process clears the shared mark too.
func TestUnreachableThroughRealCache(t *testing.T) {
	dir := t.TempDir()
	open := func() *cache.Cache {
		c, err := cache.Open(t.Context(), dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	m1 := NewReachability(0)
	m1.UseCache(open())
	var d1, d2 atomic.Int64
	u := "https://api.socket.dev/v0/purl?alerts=true"
	if _, err := (Retry{Attempts: 3, Backoff: time.Second, Memo: m1}).Do(t.Context(), countingClient(&d1, notFound), get(u)); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("first process: %v", err)
	}
	m2 := NewReachability(0)
	m2.UseCache(open())
	_, err := (Retry{Attempts: 3, Memo: m2}).Do(t.Context(), countingClient(&d2, notFound), get(u))
	var ue *UnreachableError
	if !errors.As(err, &ue) || !ue.Remembered || d1.Load() != 1 || d2.Load() != 0 {
		t.Fatalf("second process: %v, dials %d and %d; want remembered with no dial", err, d1.Load(), d2.Load())
	}

	// The endpoint answers again (seen by the first process): the mark
	// is gone for a third process too.
	m1.Observe(t.Context(), ue.url(t), nil)
	m3 := NewReachability(0)
	m3.UseCache(open())
	if err := m3.Check(t.Context(), ue.url(t)); err != nil {
		t.Errorf("after a success: %v, want no mark", err)
	}
}

func (e *UnreachableError) url(t *testing.T) *url.URL {
	t.Helper()
	u, err := url.Parse(e.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
