// Package thirdparty is the plumbing every client of a third party
// shares (the supply-chain collectors and the judge): the errors that
// become signal states, the retry policy and its HTTP loop, the memo of
// unreachable endpoints, and the content keys of cached answers.
package thirdparty

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Errors a third-party client returns; the pipeline turns them into signal
// states. Anything else a client returns is our own failure ("error").
var (
	// ErrUnavailable: the third party did not answer usefully (network
	// error, timeout, rate limit or 5xx after retries). State: unavailable.
	ErrUnavailable = errors.New("third party unavailable")
	// ErrNoCredential: the signal needs a credential and none is
	// configured. State: unavailable, never clean.
	ErrNoCredential = errors.New("no credential configured")
)

// Cache is what the clients need from the cache package: a content-keyed
// store of third-party answers with a time to live.
type Cache interface {
	Get(ctx context.Context, namespace, key string) (value []byte, storedAt time.Time, ok bool, err error)
	Put(ctx context.Context, namespace, key string, value []byte, ttl time.Duration) error
}

// CacheKey is the hex SHA-256 of the parts, separated so that no two part
// lists collide.
func CacheKey(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s;", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Retry describes how a client retries: attempts in all, and the first
// backoff, doubled each time (a Retry-After header, when given and not
// longer than MaxWait, is honoured instead).
type Retry struct {
	Attempts int
	Backoff  time.Duration
	MaxWait  time.Duration
	// Memo remembers endpoints found unreachable; Unreachable, the
	// process's memo, when nil.
	Memo *Reachability
}

// Reach is the memo r uses: Memo, or Unreachable when nil.
func (r Retry) Reach() *Reachability {
	if r.Memo != nil {
		return r.Memo
	}
	return Unreachable
}

// DefaultRetry is three attempts starting at half a second.
var DefaultRetry = Retry{Attempts: 3, Backoff: 500 * time.Millisecond, MaxWait: 10 * time.Second}

// Do sends the request made by newReq, retrying network errors, 429 and
// 5xx with backoff. It returns the first response that is neither, or an
// error wrapping ErrUnavailable once the attempts are spent. An endpoint
// whose name does not resolve or that refuses connections is not retried
// but remembered (see Reachability): within the window, Do returns its
// *UnreachableError without sending anything. The caller closes the
// response body.
func (r Retry) Do(ctx context.Context, hc *http.Client, newReq func(context.Context) (*http.Request, error)) (*http.Response, error) {
	attempts := max(r.Attempts, 1)
	wait := r.Backoff
	memo := r.Reach()
	var last error
	for i := 0; i < attempts; i++ {
		if i > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return nil, fmt.Errorf("%w: %v (after: %v)", ErrUnavailable, ctx.Err(), last)
			}
			wait *= 2
		}
		req, err := newReq(ctx)
		if err != nil {
			return nil, err
		}
		if err := memo.Check(ctx, req.URL); err != nil {
			return nil, err
		}
		resp, err := hc.Do(req)
		if oerr := memo.Observe(ctx, req.URL, err); err != nil {
			var ue *UnreachableError
			if errors.As(oerr, &ue) {
				return nil, ue
			}
			last = err
			if ctx.Err() != nil {
				return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
			}
			continue
		}
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
			last = fmt.Errorf("%s %s: %s", req.Method, RedactURL(req.URL.String()), resp.Status)
			if ra := RetryAfter(resp.Header.Get("Retry-After")); ra > 0 && ra <= r.MaxWait {
				wait = ra
			}
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			continue
		}
		return resp, nil
	}
	return nil, fmt.Errorf("%w: %v", ErrUnavailable, last)
}

// RetryAfter is the wait a Retry-After header value asks for (seconds or
// an HTTP date); zero when there is none or it cannot be read.
func RetryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return time.Until(t)
	}
	return 0
}

// RedactURL drops a query string, which may hold a token.
func RedactURL(u string) string {
	if i := strings.IndexByte(u, '?'); i >= 0 {
		return u[:i] + "?…"
	}
	return u
}
