package supplychain

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/internal/thirdparty"
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

// notFound is a dial whose name does not resolve.
func notFound(context.Context, string, string) (net.Conn, error) {
	return nil, &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "registry.example", IsNotFound: true}}
}

// TestGitHubUnreachableNotRetried: GitHub's own retry loop dials a host
// that does not resolve once, and the next lookup is answered from the
// memo.
func TestGitHubUnreachableNotRetried(t *testing.T) {
	var dials atomic.Int64
	memo := thirdparty.NewReachability(0)
	g, err := NewGitHub(GitHubOptions{BaseURL: "https://github.invalid/api/v3/", HTTPClient: countingClient(&dials, notFound),
		Retry: thirdparty.Retry{Attempts: 3, Backoff: time.Second, MaxWait: time.Second, Memo: memo}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, _, err = g.Repo(t.Context(), "octo", "cat")
	var ue *thirdparty.UnreachableError
	if !errors.As(err, &ue) || !errors.Is(err, thirdparty.ErrUnavailable) || ue.Remembered || dials.Load() != 1 || time.Since(start) > 500*time.Millisecond {
		t.Fatalf("first: %v after %d dials in %s; want unreachable at once", err, dials.Load(), time.Since(start))
	}
	_, _, err = g.Repo(t.Context(), "octo", "dog")
	if !errors.As(err, &ue) || !ue.Remembered || dials.Load() != 1 {
		t.Fatalf("second: %v after %d dials; want remembered, no dial", err, dials.Load())
	}
}

// TestNPMUnreachableNotRetried: the npm client's own loop dials a
// registry that does not resolve once, then answers from the memo; the
// error is the registry's and the third party's.
func TestNPMUnreachableNotRetried(t *testing.T) {
	var dials atomic.Int64
	n := NewNPM(countingClient(&dials, notFound), "https://registry.invalid/").WithReachability(thirdparty.NewReachability(0))
	for i := range 2 {
		start := time.Now()
		_, err := n.Resolve(t.Context(), "left-pad", "latest")
		var ue *thirdparty.UnreachableError
		if !errors.As(err, &ue) || !errors.Is(err, ErrRegistryUnreachable) || ue.Remembered != (i > 0) || dials.Load() != 1 || time.Since(start) > 400*time.Millisecond {
			t.Fatalf("call %d: %v after %d dials in %s; want one dial in all, not retried", i, err, dials.Load(), time.Since(start))
		}
	}
}
