package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
)

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
