package evidence

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// RegistryLink is a URL the registry's document names in a field where
// publishers put their source repository when they declare none in the
// field meant for it (RegistryMeta.Links).
type RegistryLink struct {
	// Field names where the URL was read: npm's "homepage" and "bugs.url";
	// PyPI's "project_urls.<label>" (the label as published), "home_page"
	// and "download_url".
	Field string `json:"field"`
	URL   string `json:"url"`
}

// FoundRepository is a repository read from one of the metadata's links.
type FoundRepository struct {
	Repository Repository
	// Field and URL are the link it was read from.
	Field string
	URL   string
}

// FindRepository returns the repository that the first link naming one
// gives, in the order publishers put a repository when they declare none
// in the repository field (npm) or under a source label (PyPI):
//
//  0. a PyPI project URL under a source label (Source, Source Code,
//     Repository, Code, GitHub, ...) that the collector could not read;
//  1. the homepage: npm's homepage; PyPI's project_urls labelled Homepage
//     or Home, then its home_page;
//  2. the issue tracker: npm's bugs.url; PyPI's project_urls labelled
//     Issues, Bug Tracker, Bugs, Tracker;
//  3. any other PyPI project URL, in the document's order (Documentation,
//     Changelog, ...);
//  4. PyPI's download_url.
//
// A link names a repository when it is a web URL on a code host that
// names an owner and a repository (see CodeHostRepository). Metadata
// recorded before its links were kept (LinksRead false) is read from its
// homepage alone. The repository field itself is not read here: it is
// Repository.
func (m *RegistryMeta) FindRepository() (FoundRepository, bool) {
	if m == nil {
		return FoundRepository{}, false
	}
	links := m.Links
	if !m.LinksRead {
		links = nil
		if m.Homepage != "" {
			links = []RegistryLink{{Field: "homepage", URL: m.Homepage}}
		}
	}
	order := make([]int, len(links))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return linkRank(links[a].Field) - linkRank(links[b].Field) })
	for _, i := range order {
		if r, ok := CodeHostRepository(links[i].URL); ok {
			return FoundRepository{Repository: *r, Field: links[i].Field, URL: links[i].URL}, true
		}
	}
	return FoundRepository{}, false
}

// Labels of PyPI project URLs, normalised as PyPI compares them (PEP 753:
// lower case, punctuation and white space removed), by what they name.
var (
	sourceLinkLabels = []string{"source", "sourcecode", "sources", "repository", "repo", "code", "github", "gitlab", "git", "sourcerepository"}
	homeLinkLabels   = []string{"homepage", "home"}
	issueLinkLabels  = []string{"issues", "bugtracker", "bugs", "tracker", "issuetracker", "bugreports"}
)

// linkRank orders links by where publishers put a repository (see
// FindRepository).
func linkRank(field string) int {
	switch field {
	case "homepage", "home_page":
		return 1
	case "bugs.url":
		return 2
	case "download_url":
		return 4
	}
	label, ok := strings.CutPrefix(field, "project_urls.")
	if !ok {
		return 3
	}
	switch norm := NormalizeLinkLabel(label); {
	case slices.Contains(sourceLinkLabels, norm):
		return 0
	case slices.Contains(homeLinkLabels, norm):
		return 1
	case slices.Contains(issueLinkLabels, norm):
		return 2
	default:
		return 3
	}
}

// NormalizeLinkLabel normalises a project URL's label as PyPI compares
// them (PEP 753): lower case, keeping letters and digits only, so "Source
// Code", "source-code" and "SourceCode" agree.
func NormalizeLinkLabel(label string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(label) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// codeHosts are the hosts whose web URLs CodeHostRepository reads.
var codeHosts = []string{"github.com", "gitlab.com", "bitbucket.org", "codeberg.org"}

// reservedOwners are first path segments of a code host that are its own
// pages, not an owner's (github.com/sponsors/x is a sponsor page).
var reservedOwners = map[string][]string{
	"github.com": {"about", "apps", "codespaces", "collections", "contact", "customer-stories", "enterprise", "events", "explore",
		"features", "issues", "login", "marketplace", "new", "notifications", "orgs", "organizations", "pricing", "pulls",
		"readme", "search", "security", "settings", "site", "solutions", "sponsors", "team", "topics", "trending", "users"},
	"gitlab.com":    {"-", "dashboard", "explore", "groups", "help", "users", "search", "projects"},
	"bitbucket.org": {"account", "dashboard", "product", "site", "repo"},
	"codeberg.org":  {"explore", "user", "org", "repo", "admin", "notifications", "api"},
}

// gitlabPages are path segments that, in a GitLab URL without the "/-/"
// separator (older links), start a page of the project rather than a
// subgroup.
var gitlabPages = []string{"issues", "merge_requests", "wikis", "tree", "blob", "commits", "releases", "tags", "pipelines", "raw", "boards"}

var repoSegmentRe = regexp.MustCompile(`^[A-Za-z0-9_.~-]+$`)

// CodeHostRepository reads a web URL on a code host (github.com,
// gitlab.com, bitbucket.org, codeberg.org; "www." aside) that names an
// owner and a repository: https://github.com/OWNER/REPO with anything
// after it (#readme, /issues, /tree/main/dir, /blob/...), GitLab's
// group/subgroup/project up to "/-/". A host's own pages
// (github.com/sponsors/x, github.com/orgs/x) and a bare owner
// (github.com/OWNER) name no repository. It is a pure reading of the
// text: whether the repository exists is GitHub's to answer.
func CodeHostRepository(raw string) (*Repository, bool) {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.User != nil {
		return nil, false
	}
	host := strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
	if !slices.Contains(codeHosts, host) {
		return nil, false
	}
	var segs []string
	for s := range strings.SplitSeq(u.Path, "/") {
		if s != "" {
			segs = append(segs, s)
		}
	}
	if len(segs) < 2 || slices.Contains(reservedOwners[host], strings.ToLower(segs[0])) {
		return nil, false
	}
	owner, name := segs[0], segs[1]
	if host == "gitlab.com" {
		proj := segs
		if i := slices.Index(segs, "-"); i >= 0 {
			proj = segs[:i]
		} else {
			for i := 2; i < len(segs); i++ {
				if slices.Contains(gitlabPages, segs[i]) {
					proj = segs[:i]
					break
				}
			}
		}
		if len(proj) < 2 {
			return nil, false
		}
		owner, name = strings.Join(proj[:len(proj)-1], "/"), proj[len(proj)-1]
	}
	name = strings.TrimSuffix(name, ".git")
	for _, s := range append(strings.Split(owner, "/"), name) {
		if !repoSegmentRe.MatchString(s) || s == "." || s == ".." {
			return nil, false
		}
	}
	return &Repository{Host: host, Owner: owner, Name: name}, true
}
