package supplychain

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/verifymcp/verifymcp/internal/thirdparty"
)

// ErrNotApplicable: the signal does not apply to this target (no
// repository declared, nothing installed). State: not_assessed. The
// pipeline turns it into a signal state, as it does the errors of
// internal/thirdparty (ErrUnavailable, ErrNoCredential).
var ErrNotApplicable = errors.New("not applicable")

// Fetch says where and when an answer was obtained, for the report. It
// never holds a credential.
type Fetch struct {
	Endpoint      string
	FetchedAt     time.Time
	Cached        bool
	Authenticated bool
}

// endpoint is an HTTP API a client asks: its base URL (no trailing "/"),
// the HTTP client, and how network errors, 429 and 5xx are retried (by
// default four attempts, half a second apart and doubling, as the npm
// client). The MCP registry and PyPI clients share it.
type endpoint struct {
	hc    *http.Client
	base  string
	retry thirdparty.Retry
}

// newEndpoint returns the endpoint at base (def when empty); a nil hc gets
// a client with a 30 second timeout.
func newEndpoint(hc *http.Client, base, def string) endpoint {
	if base == "" {
		base = def
	}
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	return endpoint{hc: hc, base: strings.TrimRight(base, "/"), retry: thirdparty.Retry{Attempts: 4, Backoff: 500 * time.Millisecond, MaxWait: 10 * time.Second}}
}
