package supplychain

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/internal/thirdparty"
)

// DefaultGitHubBaseURL is GitHub's REST API.
const DefaultGitHubBaseURL = "https://api.github.com/"

// DefaultGitHubTTL is how long a GitHub answer is reused.
const DefaultGitHubTTL = 24 * time.Hour

const githubCacheNamespace = "github"

// GitHub owner and repository names: owners are letters, digits and single
// hyphens; repositories add '.' and '_'. The path go-github builds is not
// escaped, so anything else is refused before a request is made.
var (
	githubOwnerRe = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$`)
	githubNameRe  = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)
)

// GitHubOptions configures a GitHub client.
type GitHubOptions struct {
	// BaseURL is the REST API root; DefaultGitHubBaseURL when empty. Other
	// URLs are taken as GitHub Enterprise Server, the way go-github's
	// WithEnterpriseURLs takes them: "/api/v3/" is appended unless the path
	// already ends with it or the host starts with "api.".
	BaseURL string
	// Token is an optional GitHub token (the caller reads GITHUB_TOKEN). It
	// raises the rate limit and makes private repositories visible; it is
	// never logged, cached or put in an error.
	Token string
	// Cache stores answers for TTL (DefaultGitHubTTL when zero); nil
	// disables caching. Refresh skips the lookup but still stores.
	Cache   thirdparty.Cache
	TTL     time.Duration
	Refresh bool
	// HTTPClient sends the requests (a client with a 30 s timeout when nil).
	// Its CheckRedirect is replaced: redirects are followed on the API host
	// only, so the token never leaves it.
	HTTPClient *http.Client
	// Retry is the retry policy for 5xx, 429, secondary rate limits and
	// network errors; thirdparty.DefaultRetry when zero.
	Retry thirdparty.Retry
}

// GitHub looks repositories up with go-github. One value keeps one
// go-github client for its lifetime, and so go-github's memory of the rate
// limit: once GitHub has said the limit is spent, later calls fail at once
// as unavailable, without a request, until the reset time GitHub gave. That
// spares thousands of doomed requests in a batch rescoring job (and GitHub's
// penalties for clients that ignore the limit); a fresh client per call
// would forget it. Calls never wait for the reset, and a rate limit is never
// reported as a missing repository. It is safe for concurrent use.
type GitHub struct {
	client        *github.Client
	endpoint      string
	authenticated bool
	cache         thirdparty.Cache
	ttl           time.Duration
	refresh       bool
	retry         thirdparty.Retry
}

// NewGitHub returns a GitHub client for opts.
func NewGitHub(opts GitHubOptions) (*GitHub, error) {
	hc := &http.Client{Timeout: 30 * time.Second}
	if opts.HTTPClient != nil {
		c := *opts.HTTPClient
		hc = &c
	}
	hc.CheckRedirect = githubSameHost

	client := github.NewClient(hc)
	if opts.BaseURL != "" && opts.BaseURL != DefaultGitHubBaseURL {
		var err error
		client, err = client.WithEnterpriseURLs(opts.BaseURL, opts.BaseURL)
		if err != nil {
			return nil, fmt.Errorf("github: base URL %q: %w", opts.BaseURL, err)
		}
		if (client.BaseURL.Scheme != "https" && client.BaseURL.Scheme != "http") || client.BaseURL.Host == "" {
			return nil, fmt.Errorf("github: base URL %q: want an http(s) URL", opts.BaseURL)
		}
	}
	if opts.Token != "" {
		client = client.WithAuthToken(opts.Token)
	}
	g := &GitHub{
		client:        client,
		endpoint:      client.BaseURL.String(),
		authenticated: opts.Token != "",
		cache:         opts.Cache,
		ttl:           opts.TTL,
		refresh:       opts.Refresh,
		retry:         opts.Retry,
	}
	if g.ttl <= 0 {
		g.ttl = DefaultGitHubTTL
	}
	if g.retry.Attempts == 0 {
		g.retry = thirdparty.DefaultRetry
	}
	return g, nil
}

// githubSameHost follows GitHub's redirects (a renamed or transferred
// repository answers 301 to /repositories/{id}) on the host of the first
// request only. go-github's token transport would set the token on a
// request to any host, so a redirect elsewhere is not followed; its 301
// then comes back as an error.
func githubSameHost(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return http.ErrUseLastResponse
	}
	first := via[0].URL
	if !strings.EqualFold(req.URL.Host, first.Host) || req.URL.Scheme != first.Scheme {
		return http.ErrUseLastResponse
	}
	return nil
}

// Endpoint returns the REST API root the client asks.
func (g *GitHub) Endpoint() string { return g.endpoint }

// githubRepo is what is cached of an answer: GitHub's words, before they
// are set against the name that was asked for.
type githubRepo struct {
	Exists        bool       `json:"exists"`
	FullName      string     `json:"full_name,omitempty"`
	Archived      bool       `json:"archived"`
	Disabled      bool       `json:"disabled"`
	Fork          bool       `json:"fork"`
	DefaultBranch string     `json:"default_branch,omitempty"`
	PushedAt      *time.Time `json:"pushed_at,omitempty"`
	CreatedAt     *time.Time `json:"created_at,omitempty"`
	Stars         int        `json:"stars"`
}

// Repo asks GitHub about owner/name. A repository GitHub does not show
// (404: missing, or private and not visible to the credential) is an
// observed answer with Exists false. Renamed and transferred repositories
// are followed; FullName then differs from Requested.
//
// Errors: ErrNotApplicable when owner or name is empty;
// ErrCredentialRejected on 401 and on a 403 that is not a rate limit;
// thirdparty.ErrUnavailable on rate limits (including one go-github remembers from an
// earlier call), 5xx and network errors after retries, and answers that are
// not GitHub's.
func (g *GitHub) Repo(ctx context.Context, owner, name string) (*evidence.GitHubResult, Fetch, error) {
	fetch := Fetch{Endpoint: g.endpoint, Authenticated: g.authenticated}
	if owner == "" || name == "" {
		return nil, fetch, fmt.Errorf("github repo: %w: no repository", ErrNotApplicable)
	}
	requested := owner + "/" + name
	if !githubOwnerRe.MatchString(owner) || !githubNameRe.MatchString(name) || name == "." || name == ".." {
		return nil, fetch, fmt.Errorf("github repo: %q is not a GitHub owner/name", requested)
	}
	// GitHub names are case-insensitive, and what a token can see differs
	// from what an anonymous request can, so the key holds the lower-case
	// name and whether a token is used (never the token).
	mode := "anonymous"
	if g.authenticated {
		mode = "token"
	}
	key := thirdparty.CacheKey("github/1", g.endpoint, mode, strings.ToLower(owner), strings.ToLower(name))

	if g.cache != nil && !g.refresh {
		var rec githubRepo
		if auth, at, ok := loadAnswer(ctx, g.cache, githubCacheNamespace, key, &rec); ok {
			fetch.Cached, fetch.FetchedAt, fetch.Authenticated = true, at, auth
			return rec.result(requested), fetch, nil
		}
	}

	rec, err := g.get(ctx, owner, name)
	if err != nil {
		return nil, fetch, fmt.Errorf("github repo %s: %w", requested, err)
	}
	fetch.FetchedAt = time.Now().UTC()
	if g.cache != nil {
		storeAnswer(ctx, g.cache, githubCacheNamespace, key, g.authenticated, rec, g.ttl)
	}
	return rec.result(requested), fetch, nil
}

// result sets the answer against the name asked for. GitHub answers with
// the canonical case of the name; a difference of case only is not a
// rename, so FullName is then the name asked for, and a FullName that
// differs from Requested always means renamed or transferred.
func (r *githubRepo) result(requested string) *evidence.GitHubResult {
	full := r.FullName
	if strings.EqualFold(full, requested) {
		full = requested
	}
	return &evidence.GitHubResult{
		Requested:     requested,
		Exists:        r.Exists,
		FullName:      full,
		Archived:      r.Archived,
		Disabled:      r.Disabled,
		Fork:          r.Fork,
		DefaultBranch: r.DefaultBranch,
		PushedAt:      r.PushedAt,
		CreatedAt:     r.CreatedAt,
		Stars:         r.Stars,
	}
}

// get calls Repositories.Get, retrying what may pass: network errors, 5xx,
// 429 and secondary rate limits whose wait fits the retry policy. A spent
// primary rate limit is not waited for: its reset is usually most of an
// hour away.
func (g *GitHub) get(ctx context.Context, owner, name string) (*githubRepo, error) {
	attempts := max(g.retry.Attempts, 1)
	backoff := g.retry.Backoff
	var last error
	for i := 0; i < attempts; i++ {
		if i > 0 {
			if err := githubSleep(ctx, backoff); err != nil {
				return nil, fmt.Errorf("%w: %v (after: %v)", thirdparty.ErrUnavailable, err, last)
			}
			backoff *= 2
		}
		u := g.client.BaseURL.ResolveReference(&url.URL{Path: "repos/" + owner + "/" + name})
		if err := g.retry.Reach().Check(ctx, u); err != nil {
			return nil, err
		}
		repo, resp, err := g.client.Repositories.Get(ctx, owner, name)
		var ue *thirdparty.UnreachableError
		if errors.As(g.retry.Reach().Observe(ctx, u, transportErr(err, resp)), &ue) {
			return nil, ue
		}
		if err == nil {
			if repo.GetFullName() == "" {
				return nil, fmt.Errorf("%w: answer is not a repository (no full_name)", thirdparty.ErrUnavailable)
			}
			return githubRecord(repo), nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: %v", thirdparty.ErrUnavailable, err)
		}
		var rle *github.RateLimitError
		var are *github.AbuseRateLimitError
		var ere *github.ErrorResponse
		switch {
		case errors.As(err, &rle):
			// Spent, or remembered from an earlier call as spent until its
			// reset; either way no request will pass before then.
			return nil, fmt.Errorf("%w: rate limited until %s: %w", thirdparty.ErrUnavailable, rle.Rate.Reset.UTC().Format(time.RFC3339), err)
		case errors.As(err, &are):
			if are.RetryAfter == nil || *are.RetryAfter > g.retry.MaxWait || i == attempts-1 {
				return nil, fmt.Errorf("%w: secondary rate limit: %w", thirdparty.ErrUnavailable, err)
			}
			last, backoff = err, max(*are.RetryAfter, 0)
			continue
		case errors.As(err, &ere):
			rec, retry, wait, err := g.classify(ere, resp)
			if rec != nil || !retry {
				return rec, err
			}
			last = err
			if wait > 0 {
				backoff = wait
			}
			continue
		case resp != nil && resp.StatusCode/100 == 2:
			// A 2xx whose body would not decode.
			return nil, fmt.Errorf("%w: malformed answer: %v", thirdparty.ErrUnavailable, err)
		default:
			// Network error or timeout.
			last = err
			continue
		}
	}
	return nil, fmt.Errorf("%w: %v", thirdparty.ErrUnavailable, last)
}

// transportErr is err when no answer came (a network error), nil when
// GitHub answered, whatever it said.
func transportErr(err error, resp *github.Response) error {
	if resp != nil && resp.Response != nil {
		return nil
	}
	return err
}

// classify turns an error status into an answer (404, 451), a retry (with
// an optional wait GitHub asked for), or an error.
func (g *GitHub) classify(ere *github.ErrorResponse, resp *github.Response) (rec *githubRepo, retry bool, wait time.Duration, err error) {
	status := 0
	if ere.Response != nil {
		status = ere.Response.StatusCode
	}
	switch {
	case status == http.StatusNotFound:
		// GitHub's 404 carries {"message":"Not Found",...}. A 404 without
		// it comes from something else (a proxy, a base URL missing
		// /api/v3/), and must not read as a missing repository.
		if ere.Message == "" {
			return nil, false, 0, fmt.Errorf("%w: 404 without GitHub's error body (is the base URL right?)", thirdparty.ErrUnavailable)
		}
		return &githubRepo{Exists: false}, false, 0, nil
	case status == http.StatusUnavailableForLegalReasons:
		// 451: the repository exists and GitHub has blocked access to it
		// (a DMCA takedown): recorded as disabled.
		return &githubRepo{Exists: true, Disabled: true}, false, 0, nil
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		// 403 rate limits were handled as RateLimitError or
		// AbuseRateLimitError; what is left is a refused credential (bad
		// token, SSO enforcement, missing scope).
		return nil, false, 0, fmt.Errorf("%w: %d %s", ErrCredentialRejected, status, ere.Message)
	case status == http.StatusTooManyRequests:
		// go-github v62 makes a RateLimitError of 403s only. A 429 that
		// spends the primary limit is not waited for (go-github remembers
		// it, like a 403); one with a short Retry-After is.
		ra := thirdparty.RetryAfter(ere.Response.Header.Get("Retry-After"))
		if ra == 0 && resp != nil && resp.Rate.Remaining == 0 && time.Now().Before(resp.Rate.Reset.Time) {
			return nil, false, 0, fmt.Errorf("%w: rate limited until %s: %d %s", thirdparty.ErrUnavailable, resp.Rate.Reset.UTC().Format(time.RFC3339), status, ere.Message)
		}
		if ra > g.retry.MaxWait {
			return nil, false, 0, fmt.Errorf("%w: rate limited for %s: %d %s", thirdparty.ErrUnavailable, ra, status, ere.Message)
		}
		return nil, true, ra, fmt.Errorf("%d %s", status, ere.Message)
	case status >= 500:
		return nil, true, 0, fmt.Errorf("%d %s", status, ere.Message)
	case status/100 == 3:
		return nil, false, 0, fmt.Errorf("%w: %d redirect to another host not followed", thirdparty.ErrUnavailable, status)
	default:
		return nil, false, 0, fmt.Errorf("github refused the request: %d %s", status, ere.Message)
	}
}

func githubRecord(r *github.Repository) *githubRepo {
	rec := &githubRepo{
		Exists:        true,
		FullName:      r.GetFullName(),
		Archived:      r.GetArchived(),
		Disabled:      r.GetDisabled(),
		Fork:          r.GetFork(),
		DefaultBranch: r.GetDefaultBranch(),
		Stars:         r.GetStargazersCount(),
	}
	if r.PushedAt != nil && !r.PushedAt.IsZero() {
		t := r.PushedAt.UTC()
		rec.PushedAt = &t
	}
	if r.CreatedAt != nil && !r.CreatedAt.IsZero() {
		t := r.CreatedAt.UTC()
		rec.CreatedAt = &t
	}
	return rec
}

func githubSleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
