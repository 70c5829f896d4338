package supplytest

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// GitHub is a fake GitHub REST API on loopback under a path prefix ("/"
// for api.github.com, "/api/v3/" for GitHub Enterprise Server): GET
// repos/{owner}/{repo} with GitHub's case-insensitive names, a 301 to
// repositories/{id} for a renamed repository, GET repositories/{id},
// GitHub's 404 body for anything else, and GitHub's rate-limit headers on
// every answer, from supplychain/testdata/github.
type GitHub struct {
	s      *server
	prefix string
	rec    fs.FS
	repos  map[string]string // lower-case owner/name -> body file
	moved  map[string]int64  // lower-case owner/name -> repository id
	byID   map[int64]string  // repository id -> body file

	mu   sync.Mutex
	seen []GitHubRequest
}

// GitHubRequest is what the fake recorded of one request.
type GitHubRequest struct {
	Method, Host, Path string
	// Auth is the Authorization header as sent.
	Auth string
}

// The rate-limit headers of a normal answer.
const (
	githubRemaining = 57
	githubReset     = 40 * time.Minute
)

// githubRenamed is the rename the recorded data stands for: the old name of
// repository 812345678 (now example-mcp/mcp-notes), which GitHub answers
// with a 301. The old name is nowhere in the bodies.
var githubRenamed = map[string]int64{"example-mcp/notes-server": 812345678}

// NewGitHub starts a fake GitHub API under prefix ("/" or "/api/v3/"; a
// missing leading or trailing slash is added). It panics when the recorded
// data cannot be read.
func NewGitHub(prefix string) *GitHub {
	prefix = "/" + strings.Trim(prefix, "/") + "/"
	if prefix == "//" {
		prefix = "/"
	}
	g := &GitHub{prefix: prefix, rec: Recorded("github"), repos: map[string]string{}, moved: map[string]int64{}, byID: map[int64]string{}}
	files, err := fs.Glob(g.rec, "*.json")
	if err != nil {
		panic(err)
	}
	// repos.{owner}.{name}.json answers repos/{owner}/{name} (owners have
	// no dots, names may); repositories.{id}.json answers repositories/{id}
	// and its full_name.
	for _, f := range files {
		base := strings.TrimSuffix(f, ".json")
		if rest, ok := strings.CutPrefix(base, "repos."); ok {
			if owner, name, ok := strings.Cut(rest, "."); ok {
				g.repos[strings.ToLower(owner+"/"+name)] = f
			}
		}
		if rest, ok := strings.CutPrefix(base, "repositories."); ok {
			id, err := strconv.ParseInt(rest, 10, 64)
			if err != nil {
				continue
			}
			g.byID[id] = f
			var repo struct {
				FullName string `json:"full_name"`
			}
			if err := json.Unmarshal(mustRead(g.rec, f), &repo); err != nil || repo.FullName == "" {
				panic(fmt.Errorf("supplytest: github/%s is not a repository: %w", f, err))
			}
			g.repos[strings.ToLower(repo.FullName)] = f
		}
	}
	if len(g.repos) == 0 {
		panic("supplytest: no GitHub repositories in the recorded data")
	}
	for name, id := range githubRenamed {
		if _, ok := g.byID[id]; ok {
			g.moved[name] = id
		}
	}
	for _, f := range []string{"not-found.json", "moved.json", "rate-limit.json", "secondary-rate-limit.json", "bad-credentials.json", "dmca.json", "server-error.json"} {
		mustRead(g.rec, f)
	}
	g.s = newServer(api{
		observe: func(r *http.Request, _ []byte) {
			g.mu.Lock()
			g.seen = append(g.seen, GitHubRequest{Method: r.Method, Host: r.Host, Path: r.URL.Path, Auth: r.Header.Get("Authorization")})
			g.mu.Unlock()
		},
		fail: g.fail,
		headers: func(w http.ResponseWriter, r *http.Request) {
			githubHeaders(w, r, githubRemaining, time.Now().Add(githubReset))
		},
		serve: http.HandlerFunc(g.serve),
	})
	return g
}

// URL returns the REST API root: the server's root and the prefix, for
// example http://127.0.0.1:port/api/v3/. A client that takes any host but
// api.github.com as GitHub Enterprise (go-github's WithEnterpriseURLs, and
// so supplychain.NewGitHub) adds /api/v3/ to a root that has neither it
// nor an "api." host: give such a client a fake under "/api/v3/", or reach
// a fake under "/" by a host name starting with "api." (Addr).
func (g *GitHub) URL() string { return g.s.url() + g.prefix }

// Addr returns the host:port the fake listens on.
func (g *GitHub) Addr() string { return g.s.srv.Listener.Addr().String() }

// Close stops the fake; it then refuses connections. It is idempotent.
func (g *GitHub) Close() { g.s.close() }

// Requests returns how many requests the fake received, faulted or not.
func (g *GitHub) Requests() int { return g.s.count() }

// Seen returns the requests received so far, in order.
func (g *GitHub) Seen() []GitHubRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]GitHubRequest(nil), g.seen...)
}

// SetFault sets how the next requests misbehave; Fault{} ends it. Its
// Status gets GitHub's body for it: 401 bad credentials, 403 the primary
// rate limit (X-RateLimit-Remaining 0), or the secondary one when the
// fault's Header has a Retry-After, 404 not found, 429 the rate limit, 451
// a DMCA block, 5xx a server error, 301 a move (set Location in Header).
func (g *GitHub) SetFault(f Fault) { g.s.setFault(f) }

// Intercept offers every request to i first; nil removes it.
func (g *GitHub) Intercept(i Interceptor) { g.s.setIntercept(i) }

// GitHubRateLimit is GitHub's primary rate limit on the next n requests
// (every request when n <= 0): 403 with X-RateLimit-Remaining 0, resetting
// at reset.
func GitHubRateLimit(n int, reset time.Time) Fault {
	h := http.Header{}
	h.Set("X-RateLimit-Remaining", "0")
	h.Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	return Fault{Status: http.StatusForbidden, Times: max(n, 0), Header: h}
}

// GitHubSecondaryRateLimit is GitHub's secondary rate limit on the next n
// requests (every request when n <= 0): 403 with Retry-After, in seconds.
func GitHubSecondaryRateLimit(n int, retryAfter time.Duration) Fault {
	h := http.Header{}
	h.Set("Retry-After", strconv.Itoa(int(retryAfter/time.Second)))
	return Fault{Status: http.StatusForbidden, Times: max(n, 0), Header: h}
}

// githubHeaders sets the headers GitHub sends with every REST answer.
func githubHeaders(w http.ResponseWriter, r *http.Request, remaining int, reset time.Time) {
	limit := 60
	if r.Header.Get("Authorization") != "" {
		limit = 5000
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-GitHub-Media-Type", "github.v3; param=mercy-preview; param=baptiste-preview; param=nebula-preview; format=json")
	h.Set("X-GitHub-Api-Version-Selected", "2022-11-28")
	h.Set("X-RateLimit-Limit", strconv.Itoa(limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	h.Set("X-RateLimit-Used", strconv.Itoa(limit-remaining))
	h.Set("X-RateLimit-Resource", "core")
	h.Set("X-GitHub-Request-Id", "9C1E:3B0F:1A2B3C4:1B2C3D4:66F1A2B3")
}

func (g *GitHub) fail(w http.ResponseWriter, r *http.Request, f Fault) {
	remaining, reset := githubRemaining, time.Now().Add(githubReset)
	body := ""
	switch s := f.Status; {
	case s == http.StatusUnauthorized:
		body = "bad-credentials.json"
	case s == http.StatusForbidden && f.Header.Get("Retry-After") != "":
		body = "secondary-rate-limit.json"
	case s == http.StatusForbidden:
		remaining, reset, body = 0, time.Now().Add(time.Hour), "rate-limit.json"
	case s == http.StatusNotFound:
		body = "not-found.json"
	case s == http.StatusTooManyRequests:
		body = "rate-limit.json"
	case s == http.StatusUnavailableForLegalReasons:
		body = "dmca.json"
	case s >= 500:
		body = "server-error.json"
	case s/100 == 3:
		body = "moved.json"
	}
	githubHeaders(w, r, remaining, reset)
	w.WriteHeader(f.Status)
	if body == "" {
		fmt.Fprintf(w, `{"message":%q,"documentation_url":"https://docs.github.com/rest"}`, http.StatusText(f.Status))
		return
	}
	_, _ = w.Write(mustRead(g.rec, body))
}

func (g *GitHub) serve(w http.ResponseWriter, r *http.Request) {
	githubHeaders(w, r, githubRemaining, time.Now().Add(githubReset))
	path, ok := strings.CutPrefix(r.URL.Path, g.prefix)
	if !ok || r.Method != http.MethodGet {
		g.notFound(w)
		return
	}
	if name, ok := strings.CutPrefix(path, "repos/"); ok {
		name = strings.ToLower(name)
		if f, ok := g.repos[name]; ok {
			_, _ = w.Write(mustRead(g.rec, f))
			return
		}
		if id, ok := g.moved[name]; ok {
			loc := fmt.Sprintf("http://%s%srepositories/%d", r.Host, g.prefix, id)
			w.Header().Set("Location", loc)
			w.WriteHeader(http.StatusMovedPermanently)
			_, _ = w.Write([]byte(strings.Replace(string(mustRead(g.rec, "moved.json")), fmt.Sprintf("https://api.github.com/repositories/%d", id), loc, 1)))
			return
		}
	}
	if id, ok := strings.CutPrefix(path, "repositories/"); ok {
		n, _ := strconv.ParseInt(id, 10, 64)
		if f, ok := g.byID[n]; ok {
			_, _ = w.Write(mustRead(g.rec, f))
			return
		}
	}
	g.notFound(w)
}

func (g *GitHub) notFound(w http.ResponseWriter) {
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write(mustRead(g.rec, "not-found.json"))
}
