package rubric

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/verifymcp/verifymcp/evidence"
)

// ---- provenance ----

// repoEvidence is what the provenance and maintenance probes read.
type repoEvidence struct {
	reg *evidence.RegistryMeta // nil unless registry.metadata was observed
	gh  *evidence.GitHubResult // nil unless github was observed
	// ghAsked is true when the metadata names a repository on GitHub, so
	// GitHub had something to answer.
	ghAsked bool
	// repo is the repository the probe reads: the one the metadata
	// declares or, from rubric v11, one found where publishers put it
	// (found says where; see readsRepositoryLinks). nil when none.
	repo  *evidence.Repository
	found *evidence.FoundRepository
}

// repository reads the registry metadata and GitHub's answer, and decides
// from them and the gate whether the dimension is scored: decided is the
// verdict to return when it is not.
//
// GitHub not assessed because the metadata, observed, names no repository
// on GitHub is not an opt-out: there was nothing to ask, and the dimension
// is scored from the metadata, the missing or unchecked repository earning
// no credit. Any other not_assessed signal drops the dimension.
func (p *probe) repository(gate verdict) (e repoEvidence, decided *verdict) {
	e.reg, _, _, e.gh = p.supply()
	if e.reg != nil {
		e.repo = e.reg.Repository
		if f, ok := e.reg.FindRepository(); e.repo == nil && ok && p.readsRepositoryLinks() {
			e.found = &f
			e.repo = &f.Repository
		}
	}
	// GitHub's answer is about another repository than the one read: a
	// run recorded by a collector that reads links (and so may ask GitHub
	// about a repository found in one), scored by a rubric that does not
	// read them, or finds another. That rubric sees what it saw before:
	// GitHub not asked, because nothing on GitHub is named. Metadata
	// recorded before links were read names no other repository GitHub
	// could have been asked about, so its answer is read as always.
	elsewhere := false
	if e.reg != nil && e.reg.LinksRead && e.gh != nil &&
		(e.repo == nil || (e.gh.Requested != "" && !strings.EqualFold(e.gh.Requested, e.repo.Owner+"/"+e.repo.Name))) {
		e.gh, elsewhere = nil, true
	}
	if e.repo != nil && isGitHub(e.repo.Host) && !elsewhere {
		e.ghAsked = true
	}
	githubState := p.b.Signal(evidence.SignalGitHub).State
	githubSkipped := githubState == evidence.StateNotAssessed
	if e.reg != nil && e.reg.LinksRead && e.reg.Repository == nil && !p.readsRepositoryLinks() &&
		(githubState == evidence.StateUnavailable || githubState == evidence.StateError) {
		// GitHub failed to answer about a repository found in a link,
		// which this rubric does not read: it scores as it did when
		// nothing on GitHub was named and GitHub was not asked.
		others := make([]string, 0, len(p.signals))
		for _, s := range p.signals {
			if s == evidence.SignalGitHub || (s == evidence.SignalDNSSEC && p.b.Signal(s).State == evidence.StateNotAssessed) {
				continue
			}
			others = append(others, s)
		}
		if g := gateOf(p.b, Dimension{ID: p.dimension, Signals: others}); g.state != StateScored {
			return e, &g
		}
		if e.reg != nil {
			if _, ok := p.observed(evidence.SignalRegistryMeta); ok {
				return e, nil
			}
		}
	}
	switch gate.state {
	case StateZeroPoint:
		return e, &gate
	case StateDropped:
		// A repository found in the homepage of metadata recorded
		// before links were read: GitHub was never asked about it.
		unasked := e.found != nil && !e.reg.LinksRead
		if e.reg != nil && (!e.ghAsked || unasked) && githubSkipped {
			if _, ok := p.observed(evidence.SignalRegistryMeta); ok {
				return e, nil
			}
		}
		return e, &gate
	}
	if e.reg == nil {
		v := noEvidence(evidence.SignalRegistryMeta, "registry metadata")
		return e, &v
	}
	if elsewhere {
		return e, nil
	}
	if e.gh == nil {
		v := noEvidence(evidence.SignalGitHub, "GitHub answer")
		return e, &v
	}
	return e, nil
}

func isGitHub(host string) bool {
	h := strings.ToLower(host)
	return h == "github.com" || h == "www.github.com"
}

// repoSubject names a repository as host/owner/name.
func repoSubject(r *evidence.Repository) string {
	return strings.ToLower(orUnknown(r.Host)) + "/" + r.Owner + "/" + r.Name
}

// ghSubject names the repository GitHub was asked about.
func (e repoEvidence) ghSubject() string {
	if e.gh.Requested != "" {
		return "github.com/" + e.gh.Requested
	}
	if e.repo != nil {
		return repoSubject(e.repo)
	}
	return "github.com/(unknown)"
}

// label names the repository read, and where it was found when that is
// not the repository field.
func (e repoEvidence) label() string {
	if e.repo == nil {
		return "(none)"
	}
	if e.found != nil {
		return repoSubject(e.repo) + " (" + foundWhere(*e.found) + ")"
	}
	return repoSubject(e.repo)
}

// ghUsable reports whether GitHub found the repository and can tell its
// activity: it exists and is not disabled.
func (e repoEvidence) ghUsable() bool { return e.gh != nil && e.gh.Exists && !e.gh.Disabled }

func scoreProvenance(p *probe, gate verdict) verdict {
	dns, gate := p.dnssecGate(gate)
	mcp, gate := p.mcpRegistryGate(gate, dns)
	e, decided := p.repository(gate)
	pp := p.p.Supply.Provenance
	d := newDeductions()
	target := p.targetSubject()
	mcpNote := ""
	if reg := e.reg; reg != nil {
		switch {
		case reg.Repository != nil:
		case e.found != nil:
			// From v11 a repository found where publishers put one is
			// declared; the reason says where it was read.
		case p.readsRepositoryLinks() && strings.TrimSpace(reg.RepositoryURL) == "":
			p.noRepository(reg, d)
		case strings.TrimSpace(reg.RepositoryURL) == "":
			p.emit(CodeRegistryNoRepository, target, target+" declares no source repository",
				p.clip("repository: (none); homepage: "+orNone(reg.Homepage)))
			d.add(pp.RepositoryPenalty, "no repository declared")
		default:
			p.emit(CodeRegistryRepositoryUnparseable, target,
				target+" declares a repository that cannot be read as host, owner and name",
				p.clip(fmt.Sprintf("repository: %q; %s", reg.RepositoryURL, orNone(reg.RepositoryError))))
			d.add(pp.RepositoryPenalty, "repository unparseable")
		}
		switch {
		case !reg.Provenance && unserved(reg, "provenance"):
			d.add(pp.NoProvenancePenalty, "provenance not served by the registry")
		case !reg.Provenance && p.readsPyPI():
			p.emit(CodeRegistryNoProvenance, target,
				"the index's Integrity API serves no PEP 740 attestation for any file of "+target+", so nothing ties its distribution files to a source repository and a trusted-publishing build",
				"PEP 740 attestations: none for any file")
			d.add(pp.NoProvenancePenalty, "no PEP 740 attestation")
		case !reg.Provenance:
			p.emit(CodeRegistryNoProvenance, target,
				"the registry holds no provenance attestation for "+target+", so nothing ties the tarball to a source commit and build",
				"provenance attestation: none")
			d.add(pp.NoProvenancePenalty, "no provenance attestation")
		}
		switch check := checkMCPName(reg, pp.SharedHosts); {
		case mcp.named:
			mcpNote = p.mcpNameFromRegistry(reg, mcp, d)
		case reg.MCPName == "" && p.readsPyPI():
			p.emit(CodeRegistryMCPNameAbsent, target, target+"'s PyPI description (its README) carries no mcp-name marker, so it cannot be matched to an MCP registry entry",
				"mcp-name: (none in the description)")
			d.add(pp.MCPNameAbsentPenalty, "no mcp-name")
		case reg.MCPName == "":
			p.emit(CodeRegistryMCPNameAbsent, target, target+" declares no mcpName, so it cannot be matched to an MCP registry entry",
				"mcpName: (none)")
			d.add(pp.MCPNameAbsentPenalty, "no mcpName")
		case check != "":
			p.emit(CodeRegistryMCPNameMismatch, target,
				"the mcpName "+strconv.Quote(reg.MCPName)+" does not match the package's declared sources: "+check,
				p.clip(mcpNameEvidence(reg)))
			d.add(pp.MCPNameMismatchPenalty, "mcpName inconsistent")
		}
	}
	if gh := e.gh; gh != nil {
		subject := e.ghSubject()
		switch {
		case !gh.Exists:
			p.emit(CodeGitHubNotFound, subject, "GitHub has no repository "+subject+", which the package names as its source",
				p.clip("requested "+orUnknown(gh.Requested)+"; exists: false"))
			d.add(pp.GitHubNotFoundPenalty, "repository not found on GitHub")
		case gh.Disabled:
			p.emit(CodeGitHubDisabled, subject, "GitHub has disabled the repository "+subject,
				p.clip("https://github.com/"+orUnknown(gh.FullName)+"; disabled: true"))
			d.add(pp.GitHubDisabledPenalty, "repository disabled on GitHub")
		}
		if gh.Exists && gh.FullName != "" && !strings.EqualFold(gh.FullName, gh.Requested) {
			p.emit(CodeGitHubRenamed, subject,
				"the repository "+subject+" now answers as github.com/"+gh.FullName+": it was renamed or transferred",
				p.clip("requested "+orUnknown(gh.Requested)+"; GitHub full_name "+gh.FullName))
			d.add(pp.GitHubRenamedPenalty, "repository renamed or transferred")
		}
	}
	// The DNSSEC findings are reported whatever the other signals' states.
	dnsDeductions := p.dnssecFindings(dns)
	if decided != nil {
		return *decided
	}
	if dns.named && dns.sig.State == evidence.StateObserved && dns.res == nil {
		return noEvidence(evidence.SignalDNSSEC, "DNSSEC result")
	}
	if mcp.named && mcp.sig.State == evidence.StateObserved && mcp.res == nil {
		return noEvidence(evidence.SignalMCPRegistry, "MCP registry answer")
	}
	switch {
	case e.gh == nil && e.found != nil && isGitHub(e.repo.Host):
		// Found in metadata recorded before links were read: GitHub was
		// not asked about it then.
		d.add(pp.UncheckedRepositoryPenalty, "repository "+e.label()+" not checked: GitHub was not asked about it")
	case e.gh == nil && e.repo != nil:
		// Only a repository on another host gets here: GitHub had
		// nothing to answer, and no other host is checked.
		d.add(pp.UncheckedRepositoryPenalty, "repository on "+strings.ToLower(e.repo.Host)+" not checked")
	}
	for _, dd := range dnsDeductions {
		d.add(dd.penalty, dd.why)
	}
	v := d.verdict(func() string {
		if mcp.named {
			return "repository " + e.label() + " declared and found on GitHub; provenance attestation present; " + mcpNote
		}
		return "repository " + repoLabel(e.reg) + " declared and found on GitHub; provenance attestation present; mcpName " +
			strconv.Quote(e.reg.MCPName) + " consistent"
	})
	if e.found != nil && len(d.notes) > 0 && e.gh != nil {
		// Say where the repository GitHub was asked about was read.
		v.reason += "; repository " + e.label()
	}
	if len(dnsDeductions) == 0 {
		v.reason += dns.note()
	}
	return v
}

func repoLabel(reg *evidence.RegistryMeta) string {
	if reg == nil || reg.Repository == nil {
		return "(none)"
	}
	return repoSubject(reg.Repository)
}

func mcpNameEvidence(reg *evidence.RegistryMeta) string {
	return fmt.Sprintf("mcpName %q; repository %s; homepage %s", reg.MCPName, orNone(reg.RepositoryURL), orNone(reg.Homepage))
}

// checkMCPName returns "" when the mcpName is consistent with the
// metadata, else why it is not. An empty mcpName is not checked here.
//
//   - The name must be "namespace/name", with a namespace of at least two
//     dot-separated labels of letters, digits and hyphens.
//   - "io.github.<owner>/..." is consistent when the repository is parsed,
//     on github.com, and its owner is <owner> (case-insensitively).
//   - Any other namespace is a reversed domain ("com.example.mcp" is
//     mcp.example.com). It is consistent when the homepage's host or the
//     repository's host, not counting shared hosts (github.com and the
//     like, which host anyone's code) and a leading "www.", equals that
//     domain or one is a subdomain of the other.
func checkMCPName(reg *evidence.RegistryMeta, shared []string) string {
	name := reg.MCPName
	if name == "" {
		return ""
	}
	ns, rest, ok := strings.Cut(name, "/")
	labels := strings.Split(strings.ToLower(ns), ".")
	if !ok || rest == "" || len(labels) < 2 || !validLabels(labels) {
		return "it is not of the form namespace/name with a reverse-DNS namespace"
	}
	if len(labels) == 3 && labels[0] == "io" && labels[1] == "github" {
		owner := labels[2]
		repo := reg.Repository
		switch {
		case repo == nil:
			return "it claims the GitHub namespace of " + owner + ", but the package names no repository that can be read"
		case !isGitHub(repo.Host):
			return "it claims the GitHub namespace of " + owner + ", but the repository is on " + strings.ToLower(repo.Host)
		case !strings.EqualFold(repo.Owner, owner):
			return "it claims the GitHub namespace of " + owner + ", but the repository's owner is " + repo.Owner
		}
		return ""
	}
	slices.Reverse(labels)
	domain := strings.Join(labels, ".")
	var hosts []string
	if h := urlHost(reg.Homepage); h != "" {
		hosts = append(hosts, h)
	}
	if reg.Repository != nil {
		hosts = append(hosts, strings.ToLower(reg.Repository.Host))
	}
	for _, h := range hosts {
		h = strings.TrimPrefix(h, "www.")
		if h == "" || slices.Contains(shared, h) {
			continue
		}
		if h == domain || strings.HasSuffix(h, "."+domain) || strings.HasSuffix(domain, "."+h) {
			return ""
		}
	}
	return "its namespace names the domain " + domain + ", and neither the homepage nor the repository is on a host under it"
}

func validLabels(labels []string) bool {
	for _, l := range labels {
		if l == "" {
			return false
		}
		for _, c := range l {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// urlHost is the lower-case host of a URL, without a port; "" when s is not
// an absolute URL.
func urlHost(s string) string {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Host == "" {
		return ""
	}
	return strings.ToLower(u.Hostname())
}
