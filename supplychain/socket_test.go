package supplychain_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/cache"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/internal/thirdparty"
	"github.com/verifymcp/verifymcp/supplychain"
	"github.com/verifymcp/verifymcp/supplychain/supplytest"
)

// The Socket answers under testdata/socket are artifacts in the shape of
// Socket's POST /v0/purl stream; testdata/socket/README.md says where the
// shape comes from and what is assumed.
const socketKey = "sktsec_t3stK3yN0tR3al_api"

var (
	// @modelcontextprotocol/server-everything and its installed tree.
	seTarget = "pkg:npm/%40modelcontextprotocol/server-everything@2026.8.31"
	seTree   = []string{
		seTarget,
		"pkg:npm/%40modelcontextprotocol/sdk@1.32.2",
		"pkg:npm/cors@2.8.6",
		"pkg:npm/express@5.3.0",
		"pkg:npm/jszip@3.10.2",
		"pkg:npm/zod@4.6.7",
		"pkg:npm/pako@1.0.11",
		"pkg:npm/vary@1.1.2",
	}
	// A server whose tree pulls in event-stream@3.3.6 and, through it,
	// flatmap-stream@0.1.1 (the 2018 event-stream compromise).
	notesTarget = "pkg:npm/%40example-mcp/notes-server@0.4.0"
	notesTree   = []string{
		notesTarget,
		"pkg:npm/event-stream@3.3.6",
		"pkg:npm/duplexer@0.1.2",
		"pkg:npm/flatmap-stream@0.1.1",
		"pkg:npm/from@0.1.7",
		"pkg:npm/map-stream@0.1.0",
		"pkg:npm/pause-stream@0.0.11",
		"pkg:npm/split@1.0.1",
		"pkg:npm/stream-combiner@0.2.2",
		"pkg:npm/through@2.3.8",
	}
	typoTarget = "pkg:npm/%40example-mcp/fetch-sever@1.0.3"
)

// The pipeline names the scanned package by its name; its purl is first in
// the tree.
const (
	seName    = "@modelcontextprotocol/server-everything"
	notesName = "@example-mcp/notes-server"
)

// newSocketAPI starts supplytest's Socket API, accepting socketKey, for one
// test.
func newSocketAPI(t *testing.T) *supplytest.Socket {
	t.Helper()
	api := supplytest.NewSocket(socketKey)
	t.Cleanup(api.Close)
	return api
}

// recordedBody reads one recorded answer, name below
// supplychain/testdata/sub.
func recordedBody(t *testing.T, sub, name string) []byte {
	t.Helper()
	b, err := fs.ReadFile(supplytest.Recorded(sub), name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// thirdPartyRetry keeps the retry tests fast: three attempts, milliseconds apart.
var thirdPartyRetry = thirdparty.Retry{Attempts: 3, Backoff: 5 * time.Millisecond, MaxWait: time.Second}

func socketServe(t *testing.T, api *supplytest.Socket, opts supplychain.SocketOptions) *supplychain.Socket {
	t.Helper()
	opts.Endpoint = api.URL()
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 5 * time.Second}
	}
	if opts.Retry.Attempts == 0 {
		opts.Retry = thirdPartyRetry
	}
	return supplychain.NewSocket(opts)
}

func openAnswerCache(t *testing.T) *cache.Cache {
	t.Helper()
	c, err := cache.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func resultDiff[T any](want, got T) string {
	if reflect.DeepEqual(want, got) {
		return ""
	}
	w, _ := json.MarshalIndent(want, "", "  ")
	g, _ := json.MarshalIndent(got, "", "  ")
	return fmt.Sprintf("\nwant: %s\ngot:  %s", w, g)
}

func TestSocket(t *testing.T) {
	ctx := context.Background()

	t.Run("benign_package_has_scores_and_every_alert", func(t *testing.T) {
		api := newSocketAPI(t)
		s := socketServe(t, api, supplychain.SocketOptions{APIKey: socketKey})
		got, fetch, err := s.Scan(ctx, seName, seTree)
		if err != nil {
			t.Fatal(err)
		}
		wantScores := map[string]float64{"supply_chain": 0.93, "quality": 0.88, "maintenance": 0.97, "vulnerability": 1, "license": 1, "overall": 0.88}
		if d := resultDiff(wantScores, got.Scores); d != "" {
			t.Errorf("scores (-want +got):%s", d)
		}
		if got.Malware {
			t.Error("Malware = true for a package with no malware alert")
		}
		type row struct {
			Package, Version, Type string
			Target                 bool
		}
		var rows []row
		for _, a := range got.Alerts {
			rows = append(rows, row{a.Package, a.Version, a.Type, a.Target})
		}
		wantRows := []row{
			{"@modelcontextprotocol/server-everything", "2026.8.31", "envVars", true},
			{"@modelcontextprotocol/server-everything", "2026.8.31", "filesystemAccess", true},
			{"@modelcontextprotocol/server-everything", "2026.8.31", "networkAccess", true},
			{"@modelcontextprotocol/sdk", "1.32.2", "envVars", false},
			{"@modelcontextprotocol/sdk", "1.32.2", "networkAccess", false},
			{"@modelcontextprotocol/sdk", "1.32.2", "shellAccess", false},
			{"@modelcontextprotocol/sdk", "1.32.2", "urlStrings", false},
			{"express", "5.3.0", "envVars", false},
			{"express", "5.3.0", "filesystemAccess", false},
			{"express", "5.3.0", "networkAccess", false},
			{"jszip", "3.10.2", "dynamicRequire", false},
			{"jszip", "3.10.2", "minifiedFile", false},
			{"pako", "1.0.11", "minifiedFile", false},
		}
		if d := resultDiff(wantRows, rows); d != "" {
			t.Errorf("alerts (-want +got):%s", d)
		}
		if a := got.Alerts[2]; a.Severity != "middle" || a.Category != "supplyChainRisk" {
			t.Errorf("networkAccess alert = %+v, want Socket's severity middle and category supplyChainRisk", a)
		}
		wantFetch := supplychain.Fetch{Endpoint: fetch.Endpoint, FetchedAt: fetch.FetchedAt, Authenticated: true}
		if d := resultDiff(wantFetch, fetch); d != "" || fetch.FetchedAt.IsZero() || !strings.HasPrefix(fetch.Endpoint, "http://127.0.0.1:") {
			t.Errorf("fetch = %+v", fetch)
		}
		reqs := api.Seen()
		if len(reqs) != 1 {
			t.Fatalf("%d requests, want 1", len(reqs))
		}
		r := reqs[0]
		if r.Method != http.MethodPost || r.Path != "/v0/purl" || r.Query.Get("alerts") != "true" || r.Query.Get("purlErrors") != "true" {
			t.Errorf("request %s %s?%s, want POST /v0/purl?alerts=true&purlErrors=true", r.Method, r.Path, r.Query.Encode())
		}
		if !r.HasAuth || r.User != socketKey {
			t.Errorf("basic auth user %q (auth %v), want the key", r.User, r.HasAuth)
		}
		if d := resultDiff(seTree, r.Purls); d != "" {
			t.Errorf("components (-want +got):%s", d)
		}
	})

	t.Run("malware_in_a_transitive_dependency", func(t *testing.T) {
		s := socketServe(t, newSocketAPI(t), supplychain.SocketOptions{APIKey: socketKey})
		got, _, err := s.Scan(ctx, notesName, notesTree)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Malware {
			t.Error("Malware = false with a malware alert on flatmap-stream")
		}
		var mal []evidence.SocketAlert
		for _, a := range got.Alerts {
			if a.Type == "malware" {
				mal = append(mal, a)
			}
		}
		want := []evidence.SocketAlert{{Type: "malware", Severity: "critical", Category: "supplyChainRisk", Package: "flatmap-stream", Version: "0.1.1", Target: false}}
		if d := resultDiff(want, mal); d != "" {
			t.Errorf("malware alerts (-want +got):%s", d)
		}
		if len(got.Alerts) != 7 || !got.Alerts[0].Target || got.Alerts[0].Package != "@example-mcp/notes-server" {
			t.Errorf("alerts = %+v, want 7 with the target's first", got.Alerts)
		}
		if got.Scores["supply_chain"] != 0.12 {
			t.Errorf("scores = %v, want the target's", got.Scores)
		}
	})

	t.Run("typosquat_and_protestware_are_not_malware", func(t *testing.T) {
		s := socketServe(t, newSocketAPI(t), supplychain.SocketOptions{APIKey: socketKey})
		// A lone purl as the target, with no tree.
		got, _, err := s.Scan(ctx, typoTarget, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got.Malware {
			t.Error("Malware = true for didYouMean and troll alerts")
		}
		var types []string
		for _, a := range got.Alerts {
			types = append(types, a.Type)
			if !a.Target {
				t.Errorf("alert %s not marked as the target's", a.Type)
			}
		}
		if d := resultDiff([]string{"didYouMean", "networkAccess", "troll"}, types); d != "" {
			t.Errorf("alert types (-want +got):%s", d)
		}
	})

	t.Run("unknown_dependency_adds_nothing", func(t *testing.T) {
		api := newSocketAPI(t)
		s := socketServe(t, api, supplychain.SocketOptions{APIKey: socketKey})
		tree := append([]string{typoTarget}, "pkg:npm/left-pad-but-private@0.0.1")
		got, _, err := s.Scan(ctx, "@example-mcp/fetch-sever", tree)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Alerts) != 3 {
			t.Errorf("%d alerts, want the target's 3", len(got.Alerts))
		}
	})

	t.Run("target_socket_does_not_know_is_unavailable", func(t *testing.T) {
		s := socketServe(t, newSocketAPI(t), supplychain.SocketOptions{APIKey: socketKey})
		target := "pkg:npm/%40example-mcp/unpublished-server@9.9.9"
		got, _, err := s.Scan(ctx, "@example-mcp/unpublished-server", []string{target, "pkg:npm/zod@4.6.7"})
		if !errors.Is(err, thirdparty.ErrUnavailable) || got != nil {
			t.Fatalf("Scan = %v, %v; want no result and ErrUnavailable", got, err)
		}
		if !strings.Contains(err.Error(), "Package not found") || !strings.Contains(err.Error(), "@example-mcp/unpublished-server") {
			t.Errorf("error %q does not name the package and carry Socket's reason", err)
		}
	})

	t.Run("first_purl_is_the_target_and_repeats_are_dropped", func(t *testing.T) {
		api := newSocketAPI(t)
		s := socketServe(t, api, supplychain.SocketOptions{APIKey: socketKey})
		got, _, err := s.Scan(ctx, "zod", []string{"pkg:npm/zod@4.6.7", "pkg:npm/zod@4.6.7", seTarget})
		if err != nil {
			t.Fatal(err)
		}
		if d := resultDiff([]string{"pkg:npm/zod@4.6.7", seTarget}, api.Seen()[0].Purls); d != "" {
			t.Errorf("components (-want +got):%s", d)
		}
		if got.Scores["supply_chain"] != 0.96 || got.Alerts[0].Target {
			t.Errorf("scores %v, first alert %+v; want zod's scores and server-everything's alerts not the target's", got.Scores, got.Alerts[0])
		}
	})

	t.Run("large_tree_is_sent_in_batches_socket_accepts", func(t *testing.T) {
		api := newSocketAPI(t)
		s := socketServe(t, api, supplychain.SocketOptions{APIKey: socketKey})
		tree := []string{notesTarget}
		for i := range 1500 {
			tree = append(tree, fmt.Sprintf("pkg:npm/example-dep-%d@1.0.0", i))
		}
		tree = append(tree, "pkg:npm/flatmap-stream@0.1.1")
		got, _, err := s.Scan(ctx, notesName, tree)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Malware {
			t.Error("Malware = false: the second batch's answer was lost")
		}
		var sizes []int
		for _, r := range api.Seen() {
			sizes = append(sizes, len(r.Purls))
		}
		if d := resultDiff([]int{1000, 502}, sizes); d != "" {
			t.Errorf("batch sizes (-want +got):%s", d)
		}
	})

	t.Run("no_key_makes_no_request", func(t *testing.T) {
		api := newSocketAPI(t)
		s := socketServe(t, api, supplychain.SocketOptions{Cache: openAnswerCache(t)})
		got, fetch, err := s.Scan(ctx, seName, seTree)
		if !errors.Is(err, thirdparty.ErrNoCredential) || got != nil {
			t.Fatalf("Scan = %v, %v; want ErrNoCredential", got, err)
		}
		if fetch.Authenticated {
			t.Error("Authenticated = true without a key")
		}
		if n := len(api.Seen()); n != 0 {
			t.Errorf("%d requests, want none", n)
		}
	})

	failures := []struct {
		name     string
		status   int // every request's answer
		wantIs   []error
		requests int
	}{
		{"401_is_credential_rejected", http.StatusUnauthorized, []error{supplychain.ErrCredentialRejected, thirdparty.ErrUnavailable}, 1},
		{"403_is_credential_rejected", http.StatusForbidden, []error{supplychain.ErrCredentialRejected, thirdparty.ErrUnavailable}, 1},
		{"persistent_500_is_unavailable", http.StatusInternalServerError, []error{thirdparty.ErrUnavailable}, 3},
		{"persistent_429_is_unavailable", http.StatusTooManyRequests, []error{thirdparty.ErrUnavailable}, 3},
		{"404_endpoint_is_unavailable", http.StatusNotFound, []error{thirdparty.ErrUnavailable}, 1},
	}
	for _, tc := range failures {
		t.Run(tc.name, func(t *testing.T) {
			api := newSocketAPI(t)
			api.SetFault(supplytest.Fault{Status: tc.status})
			s := socketServe(t, api, supplychain.SocketOptions{APIKey: socketKey})
			got, fetch, err := s.Scan(ctx, seName, seTree)
			if got != nil || err == nil {
				t.Fatalf("Scan = %+v, %v; want an error", got, err)
			}
			for _, want := range tc.wantIs {
				if !errors.Is(err, want) {
					t.Errorf("error %q is not %q", err, want)
				}
			}
			if errors.Is(err, thirdparty.ErrNoCredential) {
				t.Errorf("error %q reads as no credential configured", err)
			}
			if strings.Contains(err.Error(), socketKey) {
				t.Errorf("error %q holds the key", err)
			}
			if !fetch.Authenticated {
				t.Error("Authenticated = false though the key was sent")
			}
			if n := len(api.Seen()); n != tc.requests {
				t.Errorf("%d requests, want %d", n, tc.requests)
			}
		})
	}

	t.Run("429_then_ok_is_retried", func(t *testing.T) {
		api := newSocketAPI(t)
		api.SetFault(supplytest.RateLimited(1))
		s := socketServe(t, api, supplychain.SocketOptions{APIKey: socketKey})
		got, _, err := s.Scan(ctx, notesName, notesTree)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Malware {
			t.Error("Malware = false after the retry")
		}
		if n := len(api.Seen()); n != 2 {
			t.Errorf("%d requests, want 2", n)
		}
	})

	t.Run("timeout_is_unavailable", func(t *testing.T) {
		api := newSocketAPI(t)
		api.SetFault(supplytest.Slow(5 * time.Second))
		hc := &http.Client{Timeout: 50 * time.Millisecond}
		s := supplychain.NewSocket(supplychain.SocketOptions{Endpoint: api.URL(), APIKey: socketKey, HTTPClient: hc, Retry: thirdPartyRetry})
		_, _, err := s.Scan(ctx, seName, seTree)
		if !errors.Is(err, thirdparty.ErrUnavailable) {
			t.Fatalf("error %v, want ErrUnavailable", err)
		}
		if n := len(api.Seen()); n != 3 {
			t.Errorf("%d requests, want 3 attempts", n)
		}
	})

	t.Run("malformed_body_is_unavailable", func(t *testing.T) {
		for name, body := range map[string]string{
			"truncated_line":   string(recordedBody(t, "socket", "server-everything.ndjson")[:700]),
			"html_error_page":  "<html><body><h1>502 Bad Gateway</h1></body></html>",
			"artifact_no_name": `{"type":"npm","version":"1.0.0","alerts":[]}` + "\n",
			"empty":            "",
		} {
			t.Run(name, func(t *testing.T) {
				api := newSocketAPI(t)
				api.SetFault(supplytest.Fault{Body: []byte(body)})
				s := socketServe(t, api, supplychain.SocketOptions{APIKey: socketKey, Cache: openAnswerCache(t)})
				got, _, err := s.Scan(ctx, seName, seTree)
				if !errors.Is(err, thirdparty.ErrUnavailable) || got != nil {
					t.Fatalf("Scan = %+v, %v; want ErrUnavailable", got, err)
				}
			})
		}
	})

	t.Run("cache_hit_makes_no_request", func(t *testing.T) {
		api := newSocketAPI(t)
		c := openAnswerCache(t)
		s := socketServe(t, api, supplychain.SocketOptions{APIKey: socketKey, Cache: c})
		first, f1, err := s.Scan(ctx, notesName, notesTree)
		if err != nil {
			t.Fatal(err)
		}
		second, f2, err := s.Scan(ctx, notesName, notesTree)
		if err != nil {
			t.Fatal(err)
		}
		if d := resultDiff(first, second); d != "" {
			t.Errorf("cached result differs (-want +got):%s", d)
		}
		if f1.Cached || !f2.Cached || !f2.Authenticated || f2.Endpoint != f1.Endpoint {
			t.Errorf("fetches %+v then %+v, want the second cached and authenticated", f1, f2)
		}
		if d := f2.FetchedAt.Sub(f1.FetchedAt); d < -time.Second || d > time.Second {
			t.Errorf("cached FetchedAt %v, want the first fetch's %v", f2.FetchedAt, f1.FetchedAt)
		}
		if n := len(api.Seen()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
		// A different tree is a different question.
		if _, f3, err := s.Scan(ctx, notesName, notesTree[:3]); err != nil || f3.Cached {
			t.Errorf("another tree: cached %v, err %v; want asked afresh", f3.Cached, err)
		}
	})

	t.Run("refresh_bypasses_the_cache", func(t *testing.T) {
		api := newSocketAPI(t)
		c := openAnswerCache(t)
		s := socketServe(t, api, supplychain.SocketOptions{APIKey: socketKey, Cache: c})
		if _, _, err := s.Scan(ctx, seName, seTree); err != nil {
			t.Fatal(err)
		}
		r := supplychain.NewSocket(supplychain.SocketOptions{Endpoint: s.Endpoint(), APIKey: socketKey, Cache: c, Refresh: true, Retry: thirdPartyRetry})
		_, fetch, err := r.Scan(ctx, seName, seTree)
		if err != nil {
			t.Fatal(err)
		}
		if fetch.Cached {
			t.Error("Refresh answered from the cache")
		}
		if n := len(api.Seen()); n != 2 {
			t.Errorf("%d requests, want 2", n)
		}
	})

	t.Run("errors_are_not_cached", func(t *testing.T) {
		api := newSocketAPI(t)
		api.SetFault(supplytest.Fault{Status: http.StatusInternalServerError, Times: 3})
		c := openAnswerCache(t)
		s := socketServe(t, api, supplychain.SocketOptions{APIKey: socketKey, Cache: c})
		if _, _, err := s.Scan(ctx, seName, seTree); !errors.Is(err, thirdparty.ErrUnavailable) {
			t.Fatalf("first scan: %v, want ErrUnavailable", err)
		}
		got, fetch, err := s.Scan(ctx, seName, seTree)
		if err != nil || fetch.Cached || got.Scores == nil {
			t.Errorf("second scan: cached %v, err %v; want a fresh answer", fetch.Cached, err)
		}
	})
}
