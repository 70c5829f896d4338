package supplychain_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/internal/thirdparty"
	"github.com/verifymcp/verifymcp/supplychain"
	"github.com/verifymcp/verifymcp/supplychain/supplytest"
)

// The GitHub answers under testdata/github are REST API bodies in GitHub's
// shape; testdata/github/README.md says where they come from.
const githubToken = "ghp_t3stT0kenN0tR3al0000000000000000000"

// newGitHubAPI starts supplytest's GitHub API under prefix for one test.
func newGitHubAPI(t *testing.T, prefix string) *supplytest.GitHub {
	t.Helper()
	api := supplytest.NewGitHub(prefix)
	t.Cleanup(api.Close)
	return api
}

// githubServe returns options whose HTTP client reaches api under any host
// name, so the base URL can be api.github.test (the shape of
// api.github.com) or a GitHub Enterprise host.
func githubServe(t *testing.T, api *supplytest.GitHub, baseURL string) supplychain.GitHubOptions {
	t.Helper()
	addr := api.Addr()
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return supplychain.GitHubOptions{BaseURL: baseURL, HTTPClient: &http.Client{Transport: tr, Timeout: 5 * time.Second}, Retry: thirdPartyRetry}
}

func newGitHub(t *testing.T, opts supplychain.GitHubOptions) *supplychain.GitHub {
	t.Helper()
	g, err := supplychain.NewGitHub(opts)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func githubTime(t *testing.T, s string) *time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	ts = ts.UTC()
	return &ts
}

const githubPublic = "http://api.github.test/"

// githubLimit is GitHub's rate-limit headers with remaining requests until
// reset, and a Retry-After when retry is not empty.
func githubLimit(remaining int, reset time.Time, retry string) http.Header {
	h := http.Header{}
	h.Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	if retry != "" {
		h.Set("Retry-After", retry)
	}
	return h
}

func TestGitHub(t *testing.T) {
	ctx := context.Background()

	t.Run("repository_is_observed", func(t *testing.T) {
		api := newGitHubAPI(t, "/")
		g := newGitHub(t, githubServe(t, api, githubPublic))
		got, fetch, err := g.Repo(ctx, "modelcontextprotocol", "servers")
		if err != nil {
			t.Fatal(err)
		}
		want := &evidence.GitHubResult{
			Requested:     "modelcontextprotocol/servers",
			Exists:        true,
			FullName:      "modelcontextprotocol/servers",
			DefaultBranch: "main",
			PushedAt:      githubTime(t, "2026-09-21T09:47:33Z"),
			CreatedAt:     githubTime(t, "2024-11-19T01:10:17Z"),
			Stars:         79214,
		}
		if d := resultDiff(want, got); d != "" {
			t.Errorf("result (-want +got):%s", d)
		}
		if fetch.Endpoint != githubPublic || fetch.Authenticated || fetch.Cached || fetch.FetchedAt.IsZero() {
			t.Errorf("fetch = %+v", fetch)
		}
		reqs := api.Seen()
		if len(reqs) != 1 || reqs[0].Path != "/repos/modelcontextprotocol/servers" || reqs[0].Host != "api.github.test" {
			t.Fatalf("requests = %+v, want one GET /repos/modelcontextprotocol/servers", reqs)
		}
		if reqs[0].Auth != "" {
			t.Errorf("Authorization %q sent without a token", reqs[0].Auth)
		}
	})

	t.Run("case_difference_is_not_a_rename", func(t *testing.T) {
		g := newGitHub(t, githubServe(t, newGitHubAPI(t, "/"), githubPublic))
		got, _, err := g.Repo(ctx, "ModelContextProtocol", "Servers")
		if err != nil {
			t.Fatal(err)
		}
		if got.Requested != "ModelContextProtocol/Servers" || got.FullName != got.Requested {
			t.Errorf("Requested %q FullName %q, want equal", got.Requested, got.FullName)
		}
	})

	t.Run("archived_repository", func(t *testing.T) {
		g := newGitHub(t, githubServe(t, newGitHubAPI(t, "/"), githubPublic))
		got, _, err := g.Repo(ctx, "modelcontextprotocol", "servers-archived")
		if err != nil {
			t.Fatal(err)
		}
		if !got.Exists || !got.Archived || got.Disabled || got.Fork || got.Stars != 512 {
			t.Errorf("result = %+v, want an existing archived repository", got)
		}
	})

	t.Run("renamed_repository_follows_the_301", func(t *testing.T) {
		api := newGitHubAPI(t, "/")
		opts := githubServe(t, api, githubPublic)
		opts.Token = githubToken
		g := newGitHub(t, opts)
		got, fetch, err := g.Repo(ctx, "example-mcp", "notes-server")
		if err != nil {
			t.Fatal(err)
		}
		if !got.Exists || got.Requested != "example-mcp/notes-server" || got.FullName != "example-mcp/mcp-notes" {
			t.Errorf("result = %+v, want the new full name", got)
		}
		if !fetch.Authenticated {
			t.Error("Authenticated = false with a token")
		}
		reqs := api.Seen()
		var paths []string
		for _, r := range reqs {
			paths = append(paths, r.Path)
			if r.Auth != "Bearer "+githubToken {
				t.Errorf("%s: Authorization %q, want the bearer token", r.Path, r.Auth)
			}
		}
		if d := resultDiff([]string{"/repos/example-mcp/notes-server", "/repositories/812345678"}, paths); d != "" {
			t.Errorf("paths (-want +got):%s", d)
		}
	})

	t.Run("missing_repository_is_observed", func(t *testing.T) {
		g := newGitHub(t, githubServe(t, newGitHubAPI(t, "/"), githubPublic))
		got, _, err := g.Repo(ctx, "modelcontextprotocol", "servers-that-never-were")
		if err != nil {
			t.Fatalf("error %v, want a 404 to be an answer", err)
		}
		want := &evidence.GitHubResult{Requested: "modelcontextprotocol/servers-that-never-were"}
		if d := resultDiff(want, got); d != "" {
			t.Errorf("result (-want +got):%s", d)
		}
	})

	t.Run("404_without_github_body_is_unavailable", func(t *testing.T) {
		api := newGitHubAPI(t, "/")
		api.SetFault(supplytest.Fault{
			Status: http.StatusNotFound,
			Header: http.Header{"Content-Type": {"text/html"}},
			Body:   []byte("<html><body><h1>404 Not Found</h1><hr><center>nginx</center></body></html>"),
		})
		g := newGitHub(t, githubServe(t, api, githubPublic))
		got, _, err := g.Repo(ctx, "modelcontextprotocol", "servers")
		if !errors.Is(err, thirdparty.ErrUnavailable) || got != nil {
			t.Fatalf("Repo = %+v, %v; want ErrUnavailable, not a missing repository", got, err)
		}
	})

	t.Run("dmca_block_is_disabled", func(t *testing.T) {
		api := newGitHubAPI(t, "/")
		api.SetFault(supplytest.Fault{Status: http.StatusUnavailableForLegalReasons})
		g := newGitHub(t, githubServe(t, api, githubPublic))
		got, _, err := g.Repo(ctx, "example-mcp", "takedown-server")
		if err != nil {
			t.Fatal(err)
		}
		if !got.Exists || !got.Disabled {
			t.Errorf("result = %+v, want existing and disabled", got)
		}
	})

	t.Run("bad_token_is_credential_rejected", func(t *testing.T) {
		api := newGitHubAPI(t, "/")
		api.SetFault(supplytest.Fault{Status: http.StatusUnauthorized})
		opts := githubServe(t, api, githubPublic)
		opts.Token = githubToken
		g := newGitHub(t, opts)
		got, fetch, err := g.Repo(ctx, "modelcontextprotocol", "servers")
		if !errors.Is(err, supplychain.ErrCredentialRejected) || !errors.Is(err, thirdparty.ErrUnavailable) || got != nil {
			t.Fatalf("Repo = %+v, %v; want ErrCredentialRejected", got, err)
		}
		if strings.Contains(err.Error(), githubToken) {
			t.Errorf("error %q holds the token", err)
		}
		if !fetch.Authenticated || len(api.Seen()) != 1 {
			t.Errorf("fetch %+v after %d requests, want authenticated and one request", fetch, len(api.Seen()))
		}
	})

	t.Run("rate_limit_is_unavailable_and_remembered", func(t *testing.T) {
		api := newGitHubAPI(t, "/")
		api.SetFault(supplytest.GitHubRateLimit(1, time.Now().Add(45*time.Minute)))
		g := newGitHub(t, githubServe(t, api, githubPublic))
		for _, name := range []string{"servers", "servers-archived", "servers-that-never-were"} {
			got, _, err := g.Repo(ctx, "modelcontextprotocol", name)
			if !errors.Is(err, thirdparty.ErrUnavailable) || got != nil {
				t.Fatalf("%s: Repo = %+v, %v; want ErrUnavailable, never a missing repository", name, got, err)
			}
			if !strings.Contains(err.Error(), "rate limited until") {
				t.Errorf("%s: error %q does not say until when", name, err)
			}
		}
		// go-github remembers the reset: the later calls fail without a request.
		if n := len(api.Seen()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	})

	t.Run("rate_limit_past_its_reset_is_asked_again", func(t *testing.T) {
		api := newGitHubAPI(t, "/")
		api.SetFault(supplytest.GitHubRateLimit(1, time.Now().Add(-time.Second)))
		g := newGitHub(t, githubServe(t, api, githubPublic))
		if _, _, err := g.Repo(ctx, "modelcontextprotocol", "servers"); !errors.Is(err, thirdparty.ErrUnavailable) {
			t.Fatalf("first call: %v, want ErrUnavailable", err)
		}
		got, _, err := g.Repo(ctx, "modelcontextprotocol", "servers")
		if err != nil || !got.Exists {
			t.Fatalf("second call: %+v, %v; want the repository", got, err)
		}
		if n := len(api.Seen()); n != 2 {
			t.Errorf("%d requests, want 2", n)
		}
	})

	t.Run("last_request_of_the_limit_then_fail_fast", func(t *testing.T) {
		api := newGitHubAPI(t, "/")
		// The first answer is the repository, spending the last request.
		api.SetFault(supplytest.Fault{Times: 1, Header: githubLimit(0, time.Now().Add(30*time.Minute), "")})
		g := newGitHub(t, githubServe(t, api, githubPublic))
		if got, _, err := g.Repo(ctx, "modelcontextprotocol", "servers"); err != nil || !got.Exists {
			t.Fatalf("first call: %+v, %v", got, err)
		}
		if _, _, err := g.Repo(ctx, "modelcontextprotocol", "servers-archived"); !errors.Is(err, thirdparty.ErrUnavailable) {
			t.Fatalf("second call: %v, want ErrUnavailable from the remembered limit", err)
		}
		if n := len(api.Seen()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	})

	t.Run("secondary_rate_limit_is_waited_for", func(t *testing.T) {
		api := newGitHubAPI(t, "/")
		api.SetFault(supplytest.GitHubSecondaryRateLimit(1, 0))
		g := newGitHub(t, githubServe(t, api, githubPublic))
		got, _, err := g.Repo(ctx, "modelcontextprotocol", "servers")
		if err != nil || !got.Exists {
			t.Fatalf("Repo = %+v, %v; want the repository after the wait", got, err)
		}
		if n := len(api.Seen()); n != 2 {
			t.Errorf("%d requests, want 2", n)
		}
	})

	t.Run("secondary_rate_limit_longer_than_max_wait", func(t *testing.T) {
		api := newGitHubAPI(t, "/")
		api.SetFault(supplytest.GitHubSecondaryRateLimit(0, 60*time.Second))
		g := newGitHub(t, githubServe(t, api, githubPublic))
		got, _, err := g.Repo(ctx, "modelcontextprotocol", "servers")
		if !errors.Is(err, thirdparty.ErrUnavailable) || errors.Is(err, supplychain.ErrCredentialRejected) || got != nil {
			t.Fatalf("Repo = %+v, %v; want ErrUnavailable", got, err)
		}
		if n := len(api.Seen()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	})

	tooMany := []struct {
		name      string
		remaining int
		retry     string
		wantErr   bool
		requests  int
	}{
		{"429_with_short_retry_after_is_retried", 12, "0", false, 2},
		{"429_spending_the_limit_is_unavailable_at_once", 0, "", true, 1},
	}
	for _, tc := range tooMany {
		t.Run(tc.name, func(t *testing.T) {
			api := newGitHubAPI(t, "/")
			api.SetFault(supplytest.Fault{
				Status: http.StatusTooManyRequests,
				Times:  1,
				Header: githubLimit(tc.remaining, time.Now().Add(20*time.Minute), tc.retry),
			})
			g := newGitHub(t, githubServe(t, api, githubPublic))
			got, _, err := g.Repo(ctx, "modelcontextprotocol", "servers")
			if tc.wantErr {
				if !errors.Is(err, thirdparty.ErrUnavailable) || got != nil {
					t.Fatalf("Repo = %+v, %v; want ErrUnavailable", got, err)
				}
			} else if err != nil || !got.Exists {
				t.Fatalf("Repo = %+v, %v; want the repository", got, err)
			}
			if n := len(api.Seen()); n != tc.requests {
				t.Errorf("%d requests, want %d", n, tc.requests)
			}
		})
	}

	serverErrors := []struct {
		name     string
		fail     int // requests answered 500 before the real answer
		wantErr  bool
		requests int
	}{
		{"500_then_ok_is_retried", 1, false, 2},
		{"persistent_500_is_unavailable", 100, true, 3},
	}
	for _, tc := range serverErrors {
		t.Run(tc.name, func(t *testing.T) {
			api := newGitHubAPI(t, "/")
			api.SetFault(supplytest.Fault{Status: http.StatusInternalServerError, Times: tc.fail})
			g := newGitHub(t, githubServe(t, api, githubPublic))
			got, _, err := g.Repo(ctx, "modelcontextprotocol", "servers")
			if tc.wantErr {
				if !errors.Is(err, thirdparty.ErrUnavailable) || got != nil {
					t.Fatalf("Repo = %+v, %v; want ErrUnavailable", got, err)
				}
			} else if err != nil || !got.Exists {
				t.Fatalf("Repo = %+v, %v; want the repository", got, err)
			}
			if n := len(api.Seen()); n != tc.requests {
				t.Errorf("%d requests, want %d", n, tc.requests)
			}
		})
	}

	t.Run("timeout_is_unavailable", func(t *testing.T) {
		api := newGitHubAPI(t, "/")
		api.SetFault(supplytest.Slow(5 * time.Second))
		opts := githubServe(t, api, githubPublic)
		opts.HTTPClient.Timeout = 50 * time.Millisecond
		g := newGitHub(t, opts)
		got, _, err := g.Repo(ctx, "modelcontextprotocol", "servers")
		if !errors.Is(err, thirdparty.ErrUnavailable) || got != nil {
			t.Fatalf("Repo = %+v, %v; want ErrUnavailable", got, err)
		}
		if n := len(api.Seen()); n != 3 {
			t.Errorf("%d requests, want 3 attempts", n)
		}
	})

	t.Run("malformed_body_is_unavailable", func(t *testing.T) {
		for name, body := range map[string]string{
			"truncated":    string(recordedBody(t, "github", "repos.modelcontextprotocol.servers.json")[:900]),
			"not_a_repo":   `{"ok":true}`,
			"html_instead": "<!DOCTYPE html><html><head><title>Unicorn! · GitHub</title></head><body></body></html>",
		} {
			t.Run(name, func(t *testing.T) {
				api := newGitHubAPI(t, "/")
				api.SetFault(supplytest.Fault{Body: []byte(body)})
				opts := githubServe(t, api, githubPublic)
				opts.Cache = openAnswerCache(t)
				g := newGitHub(t, opts)
				got, _, err := g.Repo(ctx, "modelcontextprotocol", "servers")
				if !errors.Is(err, thirdparty.ErrUnavailable) || got != nil {
					t.Fatalf("Repo = %+v, %v; want ErrUnavailable", got, err)
				}
				if n := len(api.Seen()); n != 1 {
					t.Errorf("%d requests, want 1", n)
				}
			})
		}
	})

	t.Run("enterprise_base_url", func(t *testing.T) {
		api := newGitHubAPI(t, "/api/v3/")
		opts := githubServe(t, api, "http://ghe.example.test")
		opts.Token = githubToken
		g := newGitHub(t, opts)
		if g.Endpoint() != "http://ghe.example.test/api/v3/" {
			t.Errorf("Endpoint = %q, want the /api/v3/ root", g.Endpoint())
		}
		got, fetch, err := g.Repo(ctx, "example-mcp", "notes-server")
		if err != nil {
			t.Fatal(err)
		}
		if got.FullName != "example-mcp/mcp-notes" || fetch.Endpoint != "http://ghe.example.test/api/v3/" {
			t.Errorf("result %+v fetch %+v", got, fetch)
		}
		for _, r := range api.Seen() {
			if !strings.HasPrefix(r.Path, "/api/v3/") || r.Host != "ghe.example.test" || r.Auth != "Bearer "+githubToken {
				t.Errorf("request %+v, want /api/v3/ on ghe.example.test with the token", r)
			}
		}
		if n := len(api.Seen()); n != 2 {
			t.Errorf("%d requests, want 2", n)
		}
	})

	t.Run("redirect_to_another_host_is_not_followed", func(t *testing.T) {
		api := newGitHubAPI(t, "/")
		// Only api.github.test is answered with the redirect: a request
		// that followed it would reach the fake as collector.example.test.
		api.Intercept(func(w http.ResponseWriter, r *http.Request, n int) bool {
			if r.Host != "api.github.test" {
				return false
			}
			w.Header().Set("Location", "http://collector.example.test/repositories/812345678")
			w.WriteHeader(http.StatusMovedPermanently)
			w.Write(recordedBody(t, "github", "moved.json"))
			return true
		})
		opts := githubServe(t, api, githubPublic)
		opts.Token = githubToken
		g := newGitHub(t, opts)
		got, _, err := g.Repo(ctx, "example-mcp", "notes-server")
		if !errors.Is(err, thirdparty.ErrUnavailable) || got != nil {
			t.Fatalf("Repo = %+v, %v; want ErrUnavailable", got, err)
		}
		for _, r := range api.Seen() {
			if r.Host != "api.github.test" {
				t.Errorf("request to %s: the token would have left the API host", r.Host)
			}
		}
	})

	t.Run("bad_names_make_no_request", func(t *testing.T) {
		api := newGitHubAPI(t, "/")
		g := newGitHub(t, githubServe(t, api, githubPublic))
		if _, _, err := g.Repo(ctx, "", "servers"); !errors.Is(err, supplychain.ErrNotApplicable) {
			t.Errorf("empty owner: %v, want ErrNotApplicable", err)
		}
		for _, name := range []string{"..", "servers/../../user", "servers?per_page=1", "servers#x"} {
			if _, _, err := g.Repo(ctx, "modelcontextprotocol", name); err == nil || errors.Is(err, thirdparty.ErrUnavailable) {
				t.Errorf("%q: %v, want our error", name, err)
			}
		}
		if n := len(api.Seen()); n != 0 {
			t.Errorf("%d requests, want none", n)
		}
	})

	t.Run("cache_hit_makes_no_request", func(t *testing.T) {
		api := newGitHubAPI(t, "/")
		opts := githubServe(t, api, githubPublic)
		opts.Cache = openAnswerCache(t)
		g := newGitHub(t, opts)
		first, f1, err := g.Repo(ctx, "modelcontextprotocol", "servers")
		if err != nil {
			t.Fatal(err)
		}
		missing, _, err := g.Repo(ctx, "modelcontextprotocol", "servers-that-never-were")
		if err != nil {
			t.Fatal(err)
		}
		// Names are case-insensitive: the differently written name is a hit.
		second, f2, err := g.Repo(ctx, "ModelContextProtocol", "servers")
		if err != nil {
			t.Fatal(err)
		}
		again, f3, err := g.Repo(ctx, "modelcontextprotocol", "servers-that-never-were")
		if err != nil {
			t.Fatal(err)
		}
		if !f2.Cached || !f3.Cached || f1.Cached || f2.Authenticated {
			t.Errorf("fetches %+v %+v %+v", f1, f2, f3)
		}
		want := *first
		want.Requested, want.FullName = "ModelContextProtocol/servers", "ModelContextProtocol/servers"
		if d := resultDiff(&want, second); d != "" {
			t.Errorf("cached result (-want +got):%s", d)
		}
		if d := resultDiff(missing, again); d != "" {
			t.Errorf("cached 404 (-want +got):%s", d)
		}
		if n := len(api.Seen()); n != 2 {
			t.Errorf("%d requests, want 2", n)
		}
		// A token sees what an anonymous request does not: its own question.
		tokened := opts
		tokened.Token = githubToken
		_, f4, err := newGitHub(t, tokened).Repo(ctx, "modelcontextprotocol", "servers-that-never-were")
		if err != nil || f4.Cached || !f4.Authenticated {
			t.Errorf("with a token: %+v, %v; want asked afresh", f4, err)
		}
	})

	t.Run("cache_answers_while_rate_limited", func(t *testing.T) {
		api := newGitHubAPI(t, "/")
		opts := githubServe(t, api, githubPublic)
		opts.Cache = openAnswerCache(t)
		g := newGitHub(t, opts)
		if _, _, err := g.Repo(ctx, "modelcontextprotocol", "servers"); err != nil {
			t.Fatal(err)
		}
		api.SetFault(supplytest.GitHubRateLimit(1, time.Now().Add(time.Hour)))
		if _, _, err := g.Repo(ctx, "modelcontextprotocol", "servers-archived"); !errors.Is(err, thirdparty.ErrUnavailable) {
			t.Fatalf("uncached repository: %v, want ErrUnavailable", err)
		}
		got, fetch, err := g.Repo(ctx, "modelcontextprotocol", "servers")
		if err != nil || !fetch.Cached || !got.Exists {
			t.Errorf("cached repository: %+v %+v %v; want the cached answer", got, fetch, err)
		}
	})

	t.Run("refresh_bypasses_the_cache", func(t *testing.T) {
		api := newGitHubAPI(t, "/")
		opts := githubServe(t, api, githubPublic)
		opts.Cache = openAnswerCache(t)
		if _, _, err := newGitHub(t, opts).Repo(ctx, "modelcontextprotocol", "servers"); err != nil {
			t.Fatal(err)
		}
		opts.Refresh = true
		_, fetch, err := newGitHub(t, opts).Repo(ctx, "modelcontextprotocol", "servers")
		if err != nil || fetch.Cached {
			t.Errorf("Refresh: cached %v, err %v; want asked afresh", fetch.Cached, err)
		}
		if n := len(api.Seen()); n != 2 {
			t.Errorf("%d requests, want 2", n)
		}
	})
}
