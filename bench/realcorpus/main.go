// Command realcorpus applies the selection rule of
// benchmark/realcorpus/README.md ("The selection rule", frozen 2026-12-06)
// and records the corpus it selects. Standard library only.
//
//	go run ./bench/realcorpus population -readme AWESOME_README.md -seed SEED.json -servers-readme SERVERS_README.md   # rule 1, amendment 1
//	go run ./bench/realcorpus select                                                 # rules 2 to 5 and 8
//	sudo go run ./bench/realcorpus run                                               # rules 6 and 7
//
// population reads the sources of rule 1 and amendment 1 (as read
// elsewhere: the awesome list's README.md and modelcontextprotocol/servers'
// README.md at their pinned commits, and the registry seed) and writes
// benchmark/realcorpus/population.tsv. select reads population.tsv,
// asks registry.npmjs.org and pypi.org for the documents rule 2 names, and
// writes candidates.tsv (in rule order, versions pinned) and dropped.tsv
// (every item or package that gave no candidate, and why). run records the
// candidates in rule order with bench/inspector/record.sh until the quotas
// are met, filling candidates.tsv's outcome column and writing servers.txt
// and split.tsv; it is resumable (a candidate with an outcome is skipped).
package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
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

const usageText = `usage:
  realcorpus population -readme FILE -seed FILE [-o population.tsv]
  realcorpus select [-population FILE] [-o candidates.tsv] [-dropped dropped.tsv] [-cache DIR] [-force]
  realcorpus run [flags]   (root; see -h)
  realcorpus outcomes [-dir DIR]   (outcomes computed again from the recordings)
  realcorpus population-toolsdk [-repo GITDIR]   (amendment 2: population.tsv += toolsdk rows)
  realcorpus add-source [-source toolsdk]   (amendment 2: those rows into candidates.tsv, dropped.tsv)
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usageText)
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "population":
		err = cmdPopulation(os.Args[2:])
	case "select":
		err = cmdSelect(os.Args[2:])
	case "run":
		err = cmdRun(os.Args[2:])
	case "outcomes":
		err = cmdOutcomes(os.Args[2:])
	case "population-toolsdk":
		err = cmdPopulationToolsdk(os.Args[2:])
	case "add-source":
		err = cmdAddSource(os.Args[2:])
	default:
		fmt.Fprint(os.Stderr, usageText)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "realcorpus:", err)
		os.Exit(1)
	}
}

// ---------------------------------------------------------------- rule 1

// popRow is one line of population.tsv.
type popRow struct {
	Source      string // "awesome", "seed" or "servers" (amendment 1)
	Ref         string // awesome, servers: line number; seed: the entry's id
	Marks       string // awesome, servers: "npm", "pypi", "npm pypi" or "" (the marks of the line)
	OwnerRepo   string // awesome, servers: OWNER/REPO of the first link; seed: of the entry's repository (informational)
	Link        string // awesome, servers: the first link as written; seed: the entry's repository URL
	Ecosystem   string // seed: npm or pypi
	Package     string // seed: the package name as the seed writes it
	SeedServer  string // seed: the server name of the entry
	SeedVersion string // seed: the version the seed names (not used: rule 3 pins the registry's latest)
}

var popHeader = []string{"source", "ref", "marks", "owner_repo", "link", "ecosystem", "package", "seed_server", "seed_version"}

func (r popRow) fields() []string {
	return []string{r.Source, r.Ref, r.Marks, r.OwnerRepo, r.Link, r.Ecosystem, r.Package, r.SeedServer, r.SeedVersion}
}

var (
	listItemRE = regexp.MustCompile(`^\s*(?:[-*+]|\d+[.)])\s+`)
	mdLinkRE   = regexp.MustCompile(`\[[^\]]*\]\(\s*([^)\s]+)`)
	bareURLRE  = regexp.MustCompile(`https?://[^\s)>\]]+`)
	ghRepoRE   = regexp.MustCompile(`^https://github\.com/([^/?#\s]+)/([^/?#\s]+)(/[^?#\s]*)?`)
	imgTagRE   = regexp.MustCompile(`(?i)<img\b[^>]*>`)
)

// notOwners are first path segments of github.com that are not accounts:
// https://github.com/orgs/X/discussions is no repository.
var notOwners = map[string]bool{"orgs": true, "sponsors": true, "topics": true, "features": true, "marketplace": true, "apps": true, "settings": true, "collections": true, "enterprise": true, "search": true, "trending": true, "about": true, "pricing": true, "login": true}

// firstLink is the first link of a markdown line: a [text](url) link, or a
// bare URL that comes before it. An <img> tag is an image, not a link: its
// src is not read.
func firstLink(line string) string {
	line = imgTagRE.ReplaceAllString(line, "")
	md := mdLinkRE.FindStringSubmatchIndex(line)
	before := line
	if md != nil {
		before = line[:md[0]]
	}
	if b := bareURLRE.FindString(before); b != "" {
		return b
	}
	if md != nil {
		return line[md[2]:md[3]]
	}
	return ""
}

// ghLink is a GitHub repository link of the population.
type ghLink struct {
	Owner, Repo string
	Dir         string // for /tree/BRANCH/.../DIR: DIR
}

func parseGitHubLink(link string) (ghLink, bool) {
	m := ghRepoRE.FindStringSubmatch(link)
	if m == nil {
		return ghLink{}, false
	}
	g := ghLink{Owner: m[1], Repo: strings.TrimSuffix(m[2], ".git")}
	if g.Repo == "" || notOwners[strings.ToLower(g.Owner)] {
		return ghLink{}, false
	}
	rest := strings.Split(strings.Trim(m[3], "/"), "/")
	if len(rest) >= 3 && rest[0] == "tree" {
		g.Dir = rest[len(rest)-1]
	}
	return g, true
}

func cmdPopulation(args []string) error {
	fs := flag.NewFlagSet("population", flag.ExitOnError)
	readme := fs.String("readme", "", "punkpeye/awesome-mcp-servers README.md at 00011d6ac83216fe574b0200a61264eb41672a16")
	seed := fs.String("seed", "", "modelcontextprotocol/registry data/seed_2025_05_16.json at 81e5174a593a7488715b0bf0ae77a4dc466b4d35")
	servers := fs.String("servers-readme", "", "modelcontextprotocol/servers README.md at 000fdd3b0c2ae34b43b0424e7a11a15f90303aea (amendment 1)")
	out := fs.String("o", "benchmark/realcorpus/population.tsv", "output")
	_ = fs.Parse(args) // ExitOnError: Parse exits on a bad flag
	if *readme == "" || *seed == "" || *servers == "" {
		return errors.New("population: -readme, -seed and -servers-readme are required")
	}
	items, err := listItems(*readme, "awesome")
	if err != nil {
		return err
	}
	rows := items
	sb, err := os.ReadFile(*seed)
	if err != nil {
		return err
	}
	var entries []struct {
		ID         string `json:"id"`
		Name       string `json:"name"`
		Repository struct {
			URL string `json:"url"`
		} `json:"repository"`
		Packages []struct {
			RegistryName string `json:"registry_name"`
			Name         string `json:"name"`
			Version      string `json:"version"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(sb, &entries); err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	for _, e := range entries {
		for _, p := range e.Packages {
			if p.RegistryName != "npm" && p.RegistryName != "pypi" {
				continue
			}
			or := ""
			if o, r, ok := githubRepoOf(e.Repository.URL, false); ok {
				or = o + "/" + r
			}
			rows = append(rows, popRow{Source: "seed", Ref: e.ID, OwnerRepo: or, Link: e.Repository.URL, Ecosystem: p.RegistryName, Package: p.Name, SeedServer: e.Name, SeedVersion: p.Version})
		}
	}
	items, err = listItems(*servers, "servers")
	if err != nil {
		return err
	}
	rows = append(rows, items...)
	return writeTSV(*out, popHeader, len(rows), func(i int) []string { return rows[i].fields() })
}

// listItems reads the list items of a README whose first link is a GitHub
// repository, in the order of the file, with the language marks of the line.
func listItems(file, source string) ([]popRow, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var rows []popRow
	for i, line := range strings.Split(string(b), "\n") {
		if !listItemRE.MatchString(line) {
			continue
		}
		link := firstLink(line)
		g, ok := parseGitHubLink(link)
		if !ok {
			continue
		}
		var marks []string
		if strings.Contains(line, "📇") {
			marks = append(marks, "npm")
		}
		if strings.Contains(line, "🐍") {
			marks = append(marks, "pypi")
		}
		rows = append(rows, popRow{Source: source, Ref: fmt.Sprint(i + 1), Marks: strings.Join(marks, " "), OwnerRepo: g.Owner + "/" + g.Repo, Link: link})
	}
	return rows, nil
}

// ---------------------------------------------------------------- TSV

func clean(s string) string {
	s = strings.NewReplacer("\t", " ", "\r", " ", "\n", " ").Replace(s)
	return strings.TrimSpace(s)
}

func writeTSV(path string, header []string, n int, row func(int) []string) error {
	var sb strings.Builder
	sb.WriteString(strings.Join(header, "\t") + "\n")
	for i := 0; i < n; i++ {
		f := row(i)
		for j := range f {
			f[j] = clean(f[j])
		}
		sb.WriteString(strings.Join(f, "\t") + "\n")
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(sb.String()), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// readTSV returns the rows of a TSV file as maps keyed by its header.
func readTSV(path string) ([]map[string]string, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	var header []string
	var rows []map[string]string
	for sc.Scan() {
		line := sc.Text()
		if header == nil {
			header = strings.Split(line, "\t")
			continue
		}
		if line == "" {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != len(header) {
			return nil, nil, fmt.Errorf("%s: %d fields, want %d: %q", path, len(f), len(header), line)
		}
		m := map[string]string{}
		for i, h := range header {
			m[h] = f[i]
		}
		rows = append(rows, m)
	}
	return rows, header, sc.Err()
}

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

// ---------------------------------------------------------------- rules 2 to 5, 8

type candidate struct {
	Eco, Name, Version string
	Sources            []string
	Evidence           string
	Hash, Side, ID     string
	SplitByte          int
	Outcome            string
}

type dropped struct {
	Source, Ref, Eco, OwnerRepo, Link, Reason string
}

var candHeader = []string{"rank", "sha256", "ecosystem", "name", "version", "side", "id", "source", "evidence", "outcome"}
var dropHeader = []string{"source", "ref", "ecosystem", "owner_repo", "link", "reason"}

func sha(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }

func splitOf(eco, name string) (string, int) {
	h := sha256.Sum256([]byte("verifymcp-split-v1:" + eco + ":" + name))
	if h[0]%3 == 0 {
		return "tuning", int(h[0])
	}
	return "heldout", int(h[0])
}

// npmSlug is bench/inspector's id rule: the package name without its scope,
// lower case; a bare name that says nothing alone keeps its scope.
func npmSlug(name string) string {
	bare, scope := name, ""
	if strings.HasPrefix(name, "@") {
		p := strings.SplitN(name[1:], "/", 2)
		scope, bare = p[0], p[1]
	}
	s := strings.ToLower(bare)
	if scope != "" && (s == "mcp" || s == "mcp-server" || s == "server") {
		s = strings.ToLower(scope) + "-" + s
	}
	return regexp.MustCompile(`[^a-z0-9._-]+`).ReplaceAllString(s, "-")
}

// reviewed returns the packages of the earlier corpora (rule 4), by
// ECOSYSTEM:NAME, with the file that holds each.
func reviewed(globs ...string) (map[string]string, error) {
	out := map[string]string{}
	for _, g := range globs {
		files, err := filepath.Glob(g)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			var j struct {
				Target string `json:"target"`
			}
			if err := json.Unmarshal(b, &j); err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			eco, name, _, ok := parseTarget(j.Target)
			if !ok {
				return nil, fmt.Errorf("%s: target %q", f, j.Target)
			}
			if _, seen := out[eco+":"+name]; !seen {
				out[eco+":"+name] = f + " (" + j.Target + ")"
			}
		}
	}
	return out, nil
}

var (
	npmTargetRE  = regexp.MustCompile(`^npm:((?:@[^/@]+/)?[^@]+)@(.+)$`)
	pypiTargetRE = regexp.MustCompile(`^pypi:([^=<>!~ ]+)==(.+)$`)
)

func parseTarget(t string) (eco, name, version string, ok bool) {
	if m := npmTargetRE.FindStringSubmatch(t); m != nil {
		return "npm", strings.ToLower(m[1]), m[2], true
	}
	if m := pypiTargetRE.FindStringSubmatch(t); m != nil {
		return "pypi", pep503(m[1]), m[2], true
	}
	return "", "", "", false
}

func cmdSelect(args []string) error {
	fs := flag.NewFlagSet("select", flag.ExitOnError)
	pop := fs.String("population", "benchmark/realcorpus/population.tsv", "population.tsv")
	out := fs.String("o", "benchmark/realcorpus/candidates.tsv", "candidates.tsv")
	dropOut := fs.String("dropped", "benchmark/realcorpus/dropped.tsv", "dropped.tsv")
	cache := fs.String("cache", "/tmp/realcorpus-registry-cache", "registry answers kept here (not committed)")
	force := fs.Bool("force", false, "overwrite an existing candidates.tsv (its versions are pinned: rule 3)")
	_ = fs.Parse(args) // ExitOnError: Parse exits on a bad flag
	if _, err := os.Stat(*out); err == nil && !*force {
		return fmt.Errorf("%s exists: its versions are pinned on the selection date (rule 3); -force to select again", *out)
	}
	if err := os.MkdirAll(*cache, 0o755); err != nil {
		return err
	}
	rows, _, err := readTSV(*pop)
	if err != nil {
		return err
	}
	prior, err := reviewed("sandbox/testdata/realservers/*.inspector.json", "judge/checks/testdata/corpus/*.inspector.json")
	if err != nil {
		return err
	}
	reg := newRegistry(*cache)

	// What each row asks of the registries, in order (rule 2).
	asks, err := asksOf(rows)
	if err != nil {
		return err
	}

	// Fetch every document first (at most 3 requests in flight), then
	// apply the rule in population order.
	if err := prefetch(reg, asks); err != nil {
		return err
	}

	cands := map[string]*candidate{}
	var order []string
	var drops []dropped
	for _, a := range asks {
		r := a.row
		src := r["source"] + ":L" + r["ref"]
		if a.seed {
			_, _, src, _ = namedRow(r)
		}
		drop := func(reason string) {
			drops = append(drops, dropped{Source: r["source"], Ref: r["ref"], Eco: a.eco, OwnerRepo: r["owner_repo"], Link: r["link"], Reason: reason})
		}
		chosen, evidence, why, err := choose(reg, a)
		if err != nil {
			return err
		}
		if chosen == "" {
			drop("no name counts (rule 2): " + strings.Join(why, "; "))
			continue
		}
		key := a.eco + ":" + chosen
		if f, ok := prior[key]; ok {
			drop("already reviewed (rule 4): " + key + " is in " + f)
			continue
		}
		if c, ok := cands[key]; ok {
			c.Sources = append(c.Sources, src)
			continue
		}
		d, _ := reg.lookup(a.eco, chosen)
		c := &candidate{Eco: a.eco, Name: chosen, Version: d.Version, Sources: []string{src}, Evidence: evidence + " (" + src + ")"}
		c.Hash = sha(key)
		c.Side, c.SplitByte = splitOf(a.eco, chosen)
		cands[key] = c
		order = append(order, key)
	}
	list := make([]*candidate, 0, len(order))
	for _, k := range order {
		list = append(list, cands[k])
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Hash < list[j].Hash })
	assignIDs(list)
	if err := writeCandidates(*out, list); err != nil {
		return err
	}
	if err := writeTSV(*dropOut, dropHeader, len(drops), func(i int) []string {
		d := drops[i]
		return []string{d.Source, d.Ref, d.Eco, d.OwnerRepo, d.Link, d.Reason}
	}); err != nil {
		return err
	}
	n := map[string]int{}
	for _, c := range list {
		n[c.Eco]++
	}
	fmt.Printf("population rows %d; candidates: npm %d, pypi %d; dropped %d\n", len(rows), n["npm"], n["pypi"], len(drops))
	return nil
}

// ask is what one population row asks of one registry (rule 2).
type ask struct {
	row   map[string]string
	eco   string
	names []string // candidates names, in the rule's order
	seed  bool
}

// asksOf returns what each population row asks of the registries, in
// order (rule 2).
func asksOf(rows []map[string]string) ([]ask, error) {
	var asks []ask
	for _, r := range rows {
		if eco, n, _, ok := namedRow(r); ok {
			// The seed's packages, and amendment 2's, count as named.
			asks = append(asks, ask{row: r, eco: eco, names: []string{n}, seed: true})
			continue
		}
		g, ok := parseGitHubLink(r["link"])
		if !ok {
			return nil, fmt.Errorf("population line %s: %q is not a GitHub repository link", r["ref"], r["link"])
		}
		ecos := strings.Fields(r["marks"])
		if r["source"] == "servers" && len(ecos) == 0 {
			// Amendment 1: both ecosystems are tried for an item of the
			// servers README that carries no language mark.
			ecos = []string{"npm", "pypi"}
		}
		for _, eco := range ecos {
			var names []string
			add := func(n string) {
				for _, x := range names {
					if x == n {
						return
					}
				}
				names = append(names, n)
			}
			if eco == "npm" {
				add(strings.ToLower(g.Repo))
				add("@" + strings.ToLower(g.Owner) + "/" + strings.ToLower(g.Repo))
				if g.Dir != "" {
					add(strings.ToLower(g.Dir))
					add("@" + strings.ToLower(g.Owner) + "/" + strings.ToLower(g.Dir))
				}
			} else {
				add(pep503(g.Repo))
				if g.Dir != "" {
					add(pep503(g.Dir))
				}
			}
			asks = append(asks, ask{row: r, eco: eco, names: names})
		}
	}
	return asks, nil
}

// prefetch fetches every registry document the asks name, at most 3
// requests in flight, and returns the first error.
func prefetch(reg *registry, asks []ask) error {
	var wg sync.WaitGroup
	work := make(chan [2]string)
	var fetchErr error
	var feMu sync.Mutex
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range work {
				if _, err := reg.lookup(k[0], k[1]); err != nil {
					feMu.Lock()
					if fetchErr == nil {
						fetchErr = err
					}
					feMu.Unlock()
				}
			}
		}()
	}
	seen := map[string]bool{}
	for _, a := range asks {
		for _, n := range a.names {
			if validName(a.eco, n) && !seen[a.eco+":"+n] {
				seen[a.eco+":"+n] = true
				work <- [2]string{a.eco, n}
			}
		}
	}
	close(work)
	wg.Wait()
	return fetchErr
}

// choose applies rule 2 to a: the first of its names that counts, with the
// evidence that it does; why says of each name before it why it does not.
func choose(reg *registry, a ask) (chosen, evidence string, why []string, err error) {
	for _, n := range a.names {
		if !validName(a.eco, n) {
			why = append(why, n+": not a valid "+a.eco+" name")
			continue
		}
		d, err := reg.lookup(a.eco, n)
		if err != nil {
			return "", "", nil, err
		}
		if !d.Found {
			why = append(why, n+": not on "+a.eco)
			continue
		}
		if d.Version == "" {
			why = append(why, n+": the registry marks no latest version")
			continue
		}
		if a.seed {
			return n, a.row["source"] + " package", why, nil
		}
		owner, repo, _ := strings.Cut(a.row["owner_repo"], "/")
		if ev, ok := d.naming(a.eco, owner, repo); ok {
			return n, ev, why, nil
		}
		if named := d.githubNamed(a.eco); len(named) > 0 {
			why = append(why, n+": names "+strings.Join(named, ", "))
		} else {
			why = append(why, n+": names no GitHub repository")
		}
	}
	return "", "", why, nil
}

// assignIDs gives each candidate its recording id: bench/inspector's rule
// (npm: the name without its scope; PyPI: the PEP 503 name, prefixed pypi-
// only when an npm id has it). Two npm names with one id: the later in rule
// order keeps its scope in front (scope-name).
func assignIDs(list []*candidate) {
	used := map[string]bool{}
	for _, c := range list {
		if c.Eco != "npm" {
			continue
		}
		id := npmSlug(c.Name)
		if used[id] && strings.HasPrefix(c.Name, "@") {
			scope := strings.SplitN(c.Name[1:], "/", 2)[0]
			id = npmSlug("@x/"+scope) + "-" + id
		}
		for base, i := id, 2; used[id]; i++ {
			id = fmt.Sprintf("%s-%d", base, i)
		}
		used[id] = true
		c.ID = id
	}
	for _, c := range list {
		if c.Eco != "pypi" {
			continue
		}
		id := c.Name
		if used[id] {
			id = "pypi-" + id
		}
		used[id] = true
		c.ID = id
	}
}

func writeCandidates(path string, list []*candidate) error {
	return writeTSV(path, candHeader, len(list), func(i int) []string {
		c := list[i]
		return []string{fmt.Sprint(i + 1), c.Hash, c.Eco, c.Name, c.Version, c.Side, c.ID, strings.Join(c.Sources, ","), c.Evidence, c.Outcome}
	})
}

func readCandidates(path string) ([]*candidate, error) {
	rows, _, err := readTSV(path)
	if err != nil {
		return nil, err
	}
	var list []*candidate
	for _, r := range rows {
		c := &candidate{Eco: r["ecosystem"], Name: r["name"], Version: r["version"], Sources: strings.Split(r["source"], ","), Evidence: r["evidence"], Hash: r["sha256"], Side: r["side"], ID: r["id"], Outcome: r["outcome"]}
		_, c.SplitByte = splitOf(c.Eco, c.Name)
		if c.Hash != sha(c.Eco+":"+c.Name) {
			return nil, fmt.Errorf("%s: %s:%s: sha256 column does not match", path, c.Eco, c.Name)
		}
		list = append(list, c)
	}
	return list, nil
}

var _ = context.Background
