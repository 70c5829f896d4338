package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// ---------------------------------------------------------------- names

var pep503RE = regexp.MustCompile(`[-_.]+`)

// pep503 normalises a PyPI project name (PEP 503).
func pep503(name string) string { return strings.ToLower(pep503RE.ReplaceAllString(name, "-")) }

var (
	npmNameRE  = regexp.MustCompile(`^(?:@[a-z0-9-~][a-z0-9-._~]*/)?[a-z0-9-~][a-z0-9-._~]*$`)
	pypiNameRE = regexp.MustCompile(`(?i)^([a-z0-9]|[a-z0-9][a-z0-9._-]*[a-z0-9])$`)
)

// githubRepoOf extracts OWNER and REPO (lower case) from a URL or npm
// repository string that names a GitHub repository: compared without case,
// a .git suffix, a trailing slash or anything after OWNER/REPO. shorthand
// accepts npm's repository shorthands ("github:o/r", "o/r").
func githubRepoOf(s string, shorthand bool) (string, string, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return "", "", false
	}
	s = strings.TrimPrefix(s, "git+")
	switch {
	case strings.HasPrefix(s, "github:"):
		s = "github.com/" + strings.TrimPrefix(s, "github:")
	case strings.HasPrefix(s, "git@github.com:"):
		s = "github.com/" + strings.TrimPrefix(s, "git@github.com:")
	default:
		if i := strings.Index(s, "://"); i >= 0 {
			s = s[i+3:]
			if at := strings.Index(s, "@"); at >= 0 && (!strings.Contains(s, "/") || at < strings.Index(s, "/")) {
				s = s[at+1:]
			}
		} else if shorthand && regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*/[a-z0-9._-]+$`).MatchString(s) {
			s = "github.com/" + s
		}
	}
	s = strings.TrimPrefix(s, "www.")
	if !strings.HasPrefix(s, "github.com/") {
		return "", "", false
	}
	p := strings.Split(strings.TrimPrefix(s, "github.com/"), "/")
	if len(p) < 2 {
		return "", "", false
	}
	owner := p[0]
	repo := p[1]
	if i := strings.IndexAny(repo, "?#"); i >= 0 {
		repo = repo[:i]
	}
	repo = strings.TrimSuffix(repo, ".git")
	if owner == "" || repo == "" {
		return "", "", false
	}
	return owner, repo, true
}

// ---------------------------------------------------------------- registries

// doc is what rule 2 and 3 read of a registry's document for a name.
type doc struct {
	Found   bool
	Version string
	Fields  [][2]string // field name, value: the places a repository may be named
}

type registry struct {
	client *http.Client
	cache  string
	sem    chan struct{}
	mu     sync.Mutex
	memo   map[string]*doc
	errs   map[string]error
}

func newRegistry(cache string) *registry {
	return &registry{client: &http.Client{Timeout: 60 * time.Second}, cache: cache, sem: make(chan struct{}, 3), memo: map[string]*doc{}, errs: map[string]error{}}
}

func npmURL(name string) string {
	if strings.HasPrefix(name, "@") {
		i := strings.Index(name, "/")
		return "https://registry.npmjs.org/" + url.PathEscape(name[:i]) + "%2F" + url.PathEscape(name[i+1:])
	}
	return "https://registry.npmjs.org/" + url.PathEscape(name)
}

func pypiURL(name string) string { return "https://pypi.org/pypi/" + url.PathEscape(name) + "/json" }

// get fetches a URL politely (at most 3 requests in flight; 429, 5xx and
// transport errors retried with backoff), keeping the answer in the cache
// directory so that a second run asks nothing. It returns the status and body.
func (r *registry) get(u string) (int, []byte, error) {
	key := fmt.Sprintf("%x", sha256.Sum256([]byte(u)))
	cf := filepath.Join(r.cache, key)
	if b, err := os.ReadFile(cf); err == nil {
		var c struct {
			URL    string          `json:"url"`
			Status int             `json:"status"`
			Body   json.RawMessage `json:"body"`
		}
		if json.Unmarshal(b, &c) == nil && c.URL == u {
			return c.Status, c.Body, nil
		}
	}
	r.sem <- struct{}{}
	defer func() { <-r.sem }()
	var lastErr error
	for attempt := 0; attempt < 7; attempt++ {
		if attempt > 0 {
			time.Sleep(time.Duration(1<<uint(attempt-1)) * time.Second)
		}
		req, _ := http.NewRequest("GET", u, nil)
		req.Header.Set("User-Agent", "verifymcp-realcorpus-selection/1 (benchmark/realcorpus/README.md)")
		req.Header.Set("Accept", "application/json")
		resp, err := r.client.Do(req)
		if err != nil {
			lastErr = err
			continue
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			lastErr = err
			continue
		}
		if resp.StatusCode == 429 || resp.StatusCode >= 500 {
			lastErr = fmt.Errorf("%s: HTTP %d", u, resp.StatusCode)
			continue
		}
		if resp.StatusCode != 200 && resp.StatusCode != 404 {
			return 0, nil, fmt.Errorf("%s: HTTP %d", u, resp.StatusCode)
		}
		if resp.StatusCode == 404 || !json.Valid(body) {
			if resp.StatusCode == 200 {
				return 0, nil, fmt.Errorf("%s: not JSON", u)
			}
			body = []byte("null")
		}
		if r.cache != "" {
			c, _ := json.Marshal(map[string]any{"url": u, "status": resp.StatusCode, "fetched": time.Now().UTC().Format(time.RFC3339), "body": json.RawMessage(body)})
			_ = os.WriteFile(cf, c, 0o644) // the cache is an aid: a failed write only costs a fetch next time
		}
		return resp.StatusCode, body, nil
	}
	return 0, nil, fmt.Errorf("%s: %v (after retries)", u, lastErr)
}

func strOrURL(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case map[string]any:
		if s, ok := t["url"].(string); ok {
			return s
		}
	}
	return ""
}

// lookup returns the registry's document for ECOSYSTEM:NAME (memoised).
func (r *registry) lookup(eco, name string) (*doc, error) {
	k := eco + ":" + name
	r.mu.Lock()
	if d, ok := r.memo[k]; ok {
		r.mu.Unlock()
		return d, nil
	}
	if e, ok := r.errs[k]; ok {
		r.mu.Unlock()
		return nil, e
	}
	r.mu.Unlock()
	d, err := r.fetch(eco, name)
	r.mu.Lock()
	if err != nil {
		r.errs[k] = err
	} else {
		r.memo[k] = d
	}
	r.mu.Unlock()
	return d, err
}

func (r *registry) fetch(eco, name string) (*doc, error) {
	u := npmURL(name)
	if eco == "pypi" {
		u = pypiURL(name)
	}
	status, body, err := r.get(u)
	if err != nil {
		return nil, err
	}
	if status == 404 {
		return &doc{}, nil
	}
	d := &doc{Found: true}
	if eco == "npm" {
		// The packument: dist-tags.latest is the version (rule 3); the
		// repository, homepage and bugs it carries at the top level and in
		// that version's manifest are where a repository is named.
		var m struct {
			DistTags   map[string]string         `json:"dist-tags"`
			Repository any                       `json:"repository"`
			Homepage   any                       `json:"homepage"`
			Bugs       any                       `json:"bugs"`
			Versions   map[string]map[string]any `json:"versions"`
		}
		if err := json.Unmarshal(body, &m); err != nil {
			return nil, fmt.Errorf("%s: %w", u, err)
		}
		d.Version = m.DistTags["latest"]
		seen := map[[2]string]bool{}
		addf := func(f string, v any) {
			if s := strOrURL(v); s != "" && !seen[[2]string{f, s}] {
				seen[[2]string{f, s}] = true
				d.Fields = append(d.Fields, [2]string{f, s})
			}
		}
		addf("repository", m.Repository)
		addf("homepage", m.Homepage)
		addf("bugs", m.Bugs)
		if v, ok := m.Versions[d.Version]; ok {
			addf("repository", v["repository"])
			addf("homepage", v["homepage"])
			addf("bugs", v["bugs"])
		} else if d.Version != "" {
			d.Version = ""
		}
		return d, nil
	}
	var m struct {
		Info struct {
			Version     string            `json:"version"`
			HomePage    string            `json:"home_page"`
			DownloadURL string            `json:"download_url"`
			ProjectURLs map[string]string `json:"project_urls"`
		} `json:"info"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", u, err)
	}
	d.Version = m.Info.Version
	keys := make([]string, 0, len(m.Info.ProjectURLs))
	for k := range m.Info.ProjectURLs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		d.Fields = append(d.Fields, [2]string{"project_urls." + k, m.Info.ProjectURLs[k]})
	}
	if m.Info.HomePage != "" {
		d.Fields = append(d.Fields, [2]string{"home_page", m.Info.HomePage})
	}
	if m.Info.DownloadURL != "" {
		d.Fields = append(d.Fields, [2]string{"download_url", m.Info.DownloadURL})
	}
	return d, nil
}

// names returns, for a field, the first that names OWNER/REPO.
func (d *doc) naming(eco, owner, repo string) (string, bool) {
	for _, f := range d.Fields {
		o, r, ok := githubRepoOf(f[1], eco == "npm" && f[0] == "repository")
		if ok && o == strings.ToLower(owner) && r == strings.ToLower(repo) {
			return f[0] + " " + f[1], true
		}
	}
	return "", false
}

func (d *doc) githubNamed(eco string) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range d.Fields {
		if o, r, ok := githubRepoOf(f[1], eco == "npm" && f[0] == "repository"); ok && !seen[o+"/"+r] {
			seen[o+"/"+r] = true
			out = append(out, o+"/"+r)
		}
	}
	return out
}
