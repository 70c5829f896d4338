package rubric

import (
	"strings"

	"github.com/verifymcp/verifymcp/evidence"
)

// repositoryLinksSince is the first rubric version that reads a
// repository where publishers put one when the repository field names
// none: npm's homepage and bugs URL, PyPI's project URLs of any label,
// home_page and download_url (evidence.RegistryMeta.FindRepository). Such
// a repository counts as declared, and the reason says where it was read.
const repositoryLinksSince = "11"

func (p *probe) readsRepositoryLinks() bool { return p.atLeast(repositoryLinksSince) }

// foundWhere says where a repository was read, for messages.
func foundWhere(f evidence.FoundRepository) string {
	switch {
	case f.Field == "homepage":
		return "read from the homepage"
	case f.Field == "bugs.url":
		return "read from the bugs URL"
	case f.Field == "home_page":
		return "read from the home_page"
	case f.Field == "download_url":
		return "read from the download_url"
	}
	if label, ok := strings.CutPrefix(f.Field, "project_urls."); ok {
		return "read from the project URL labelled " + label
	}
	return "read from " + f.Field
}

// noRepository reports a package whose metadata names no repository in
// any place publishers put one (from v11). PyPI metadata recorded before
// every project URL was kept says too little to claim that: the
// repository is unknown, which earns no credit and raises no finding.
func (p *probe) noRepository(reg *evidence.RegistryMeta, d *deductions) {
	pp := p.p.Supply.Provenance
	target := p.targetSubject()
	if !reg.LinksRead && p.readsPyPI() {
		d.add(pp.RepositoryPenalty, "repository unknown: the metadata was recorded before every project URL was kept, and none it kept names one")
		return
	}
	read := "its repository field, homepage and bugs URL name none"
	if !reg.LinksRead {
		read = "its repository field and homepage name none (the bugs URL was not recorded)"
	}
	if p.readsPyPI() {
		read = "no project URL, home_page or download_url names a repository on a code host"
	}
	p.emit(CodeRegistryNoRepository, target, target+" declares no source repository: "+read,
		p.clip("repository: (none); homepage: "+orNone(reg.Homepage)+linksEvidence(reg)))
	d.add(pp.RepositoryPenalty, "no repository declared")
}

// linksEvidence lists the links read, for evidence.
func linksEvidence(reg *evidence.RegistryMeta) string {
	var parts []string
	for _, l := range reg.Links {
		if l.Field == "homepage" {
			continue
		}
		parts = append(parts, l.Field+": "+l.URL)
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, "; ")
}

// gateOf is gate, for functions whose gate verdict parameter hides it.
var gateOf = gate
