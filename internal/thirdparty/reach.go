package thirdparty

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/verifymcp/verifymcp/internal/hostport"
)

// UnreachableWindow is how long an endpoint found unreachable (its name
// does not resolve, or it refuses connections) is remembered: within it,
// requests to the endpoint are not sent, and the signal is reported
// unavailable at once with the first failure's reason. Five minutes: long
// enough that a batch does not pay the failure once per package, short
// enough that a network that comes back is used again soon.
const UnreachableWindow = 5 * time.Minute

// unreachableNamespace is the cache namespace of remembered endpoints.
const unreachableNamespace = "unreachable"

// Reachability remembers endpoints found unreachable, per process and,
// when a Cache is attached, across the processes that share it (batch and
// fleet workers). Use NewReachability; a zero Window is UnreachableWindow.
type Reachability struct {
	// Window is how long a mark lasts (UnreachableWindow when zero). Set
	// it before the memo is used.
	Window time.Duration

	mu    sync.Mutex
	marks map[string]mark
	cache Cache
	now   func() time.Time
}

type mark struct {
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

// NewReachability returns a memo with the given window (UnreachableWindow
// when zero).
func NewReachability(window time.Duration) *Reachability {
	if window <= 0 {
		window = UnreachableWindow
	}
	return &Reachability{Window: window, marks: map[string]mark{}, now: time.Now}
}

// Unreachable is the process's memo, used by every client whose Retry
// names none.
var Unreachable = NewReachability(UnreachableWindow)

// clock is the memo's time (injected by tests); window its Window or the
// default.
func (r *Reachability) clock() time.Time {
	if r.now == nil {
		return time.Now()
	}
	return r.now()
}

func (r *Reachability) window() time.Duration {
	if r.Window <= 0 {
		return UnreachableWindow
	}
	return r.Window
}

// UseCache makes the memo write its marks to c and read the marks other
// processes wrote there.
func (r *Reachability) UseCache(c Cache) {
	r.mu.Lock()
	r.cache = c
	r.mu.Unlock()
}

// UnreachableError is a request not sent, or not answered, because its
// endpoint is unreachable. It wraps ErrUnavailable.
type UnreachableError struct {
	Endpoint string
	Reason   string
	At       time.Time
	// Remembered is true when no request was sent: the endpoint was found
	// unreachable earlier, within the window.
	Remembered bool
}

func (e *UnreachableError) Error() string {
	if e.Remembered {
		return fmt.Sprintf("%s unreachable (remembered from %s): %s", e.Endpoint, e.At.UTC().Format(time.TimeOnly), e.Reason)
	}
	return fmt.Sprintf("%s unreachable: %s", e.Endpoint, e.Reason)
}

func (e *UnreachableError) Unwrap() error { return ErrUnavailable }

// endpointOf is scheme://host:port of u, the key of a mark: never a path,
// a query or a credential.
func endpointOf(u *url.URL) string {
	return u.Scheme + "://" + hostport.Of(u)
}

// Check returns the remembered failure of u's endpoint, if any within the
// window: the process's own mark first, else the mark another process
// left in the cache (kept then as the process's own).
func (r *Reachability) Check(ctx context.Context, u *url.URL) error {
	if r == nil {
		return nil
	}
	ep := endpointOf(u)
	r.mu.Lock()
	m, ok := r.marks[ep]
	c, now, window := r.cache, r.clock(), r.window()
	if ok && now.Sub(m.At) >= window {
		delete(r.marks, ep)
		ok = false
	}
	r.mu.Unlock()
	if !ok && c != nil {
		if data, _, hit, err := c.Get(ctx, unreachableNamespace, ep); err == nil && hit && json.Unmarshal(data, &m) == nil && m.Reason != "" {
			ok = true
			if now.Sub(m.At) < window {
				r.mu.Lock()
				if r.marks == nil {
					r.marks = map[string]mark{}
				}
				r.marks[ep] = m
				r.mu.Unlock()
			}
		}
	}
	if !ok || now.Sub(m.At) >= window {
		return nil
	}
	return &UnreachableError{Endpoint: ep, Reason: m.Reason, At: m.At, Remembered: true}
}

// Observe records the outcome of one request to u: a failure that no
// retry can mend within the window is remembered and returned as an
// *UnreachableError; any answer clears the endpoint's mark, here and, when
// there was one, in the cache.
func (r *Reachability) Observe(ctx context.Context, u *url.URL, err error) error {
	if r == nil {
		return err
	}
	ep := endpointOf(u)
	if err == nil {
		r.mu.Lock()
		_, had := r.marks[ep]
		delete(r.marks, ep)
		c, now := r.cache, r.clock()
		r.mu.Unlock()
		if had && c != nil {
			// The cache cannot delete: a mark without a reason is none.
			if data, jerr := json.Marshal(mark{At: now}); jerr == nil {
				_ = c.Put(ctx, unreachableNamespace, ep, data, r.window())
			}
		}
		return nil
	}
	if !unreachable(err) {
		return err
	}
	reason := reasonOf(err)
	r.mu.Lock()
	m := mark{Reason: reason, At: r.clock()}
	if r.marks == nil {
		r.marks = map[string]mark{}
	}
	r.marks[ep] = m
	c := r.cache
	r.mu.Unlock()
	if c != nil {
		if data, jerr := json.Marshal(m); jerr == nil {
			_ = c.Put(ctx, unreachableNamespace, ep, data, r.window())
		}
	}
	return &UnreachableError{Endpoint: ep, Reason: reason, At: m.At}
}

// reasonOf is the text of a transport failure without the request URL,
// which may carry a credential or a query ("dial tcp: lookup
// api.osv.dev: no such host").
func reasonOf(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		err = ue.Err
	}
	return RedactURL(err.Error())
}

// unreachable reports whether err says the endpoint cannot be reached at
// all: its name does not resolve, or nothing listens there. Timeouts and
// other network errors can pass on a retry and are not this.
func unreachable(err error) bool {
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && (dnsErr.IsNotFound || strings.Contains(dnsErr.Err, "no such host")) {
		return true
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}
