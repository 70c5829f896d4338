package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
)

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
	prior, err := reviewed("sandbox/testdata/realservers/*.inspector.json", "contract/checks/testdata/corpus/*.inspector.json")
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
