package report

import (
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
)

// Statuses of a supply-chain check and of the judge. A check is
// "observed" only when its signal was observed and its evidence is in the
// bundle; anything else is "unverified": what the check would have found
// is unknown, never clean.
const (
	StatusObserved   = "observed"
	StatusUnverified = "unverified"
)

// Supply is the supply-chain section: one part per third-party signal,
// each with its state and, when observed, what the third party said.
type Supply struct {
	Registry RegistryCheck `json:"registry"`
	OSV      OSVCheck      `json:"osv"`
	Socket   SocketCheck   `json:"socket"`
	GitHub   GitHubCheck   `json:"github"`
	DNSSEC   DNSSECCheck   `json:"dnssec"`
}

// Check is the part common to every supply-chain check and the judge.
type Check struct {
	// Signal names the evidence signal the check is.
	Signal string `json:"signal"`
	State  string `json:"state"`
	// Status is StatusObserved or StatusUnverified.
	Status string `json:"status"`
	Reason string `json:"reason"`
}

// RegistryCheck is the registry metadata check.
type RegistryCheck struct {
	Check
	Metadata *RegistryMeta `json:"metadata"` // nil unless observed
}

// OSVCheck is the OSV check of the installed tree.
type OSVCheck struct {
	Check
	Result *OSVResult `json:"result"` // nil unless observed
}

// SocketCheck is Socket's verdict.
type SocketCheck struct {
	Check
	Result *SocketResult `json:"result"` // nil unless observed
}

// GitHubCheck is GitHub's answer about the declared repository.
type GitHubCheck struct {
	Check
	Result *GitHubResult `json:"result"` // nil unless observed
}

// DNSSECCheck is the chain-of-trust validation of the domains the package
// leans on.
type DNSSECCheck struct {
	Check
	Result *DNSSECResult `json:"result"` // nil unless observed
}

// RegistryMeta is the registry's document for the exact version.
type RegistryMeta struct {
	Ecosystem           string            `json:"ecosystem"`
	Name                string            `json:"name"`
	Version             string            `json:"version"`
	PublishedAt         *string           `json:"published_at"`
	PreviousVersion     string            `json:"previous_version"`
	PreviousPublishedAt *string           `json:"previous_published_at"`
	VersionCount        int               `json:"version_count"`
	FirstPublishedAt    *string           `json:"first_published_at"`
	Maintainers         []Maintainer      `json:"maintainers"`
	Deprecated          string            `json:"deprecated"`
	RepositoryURL       string            `json:"repository_url"`
	Repository          *Repository       `json:"repository"`
	RepositoryError     string            `json:"repository_error"`
	Homepage            string            `json:"homepage"`
	AuthorURL           string            `json:"author_url"`
	License             string            `json:"license"`
	MCPName             string            `json:"mcp_name"`
	Provenance          bool              `json:"provenance"`
	LifecycleScripts    map[string]string `json:"lifecycle_scripts"`
}

// Maintainer is one maintainer, by name and email domain.
type Maintainer struct {
	Name        string `json:"name"`
	EmailDomain string `json:"email_domain"`
}

// Repository is a parsed source repository reference.
type Repository struct {
	Host      string `json:"host"`
	Owner     string `json:"owner"`
	Name      string `json:"name"`
	Directory string `json:"directory"`
}

// OSVResult is what OSV knows about the installed tree.
type OSVResult struct {
	Source          string          `json:"source"`
	Packages        int             `json:"packages"`
	Vulnerabilities []Vulnerability `json:"vulnerabilities"`
}

// Vulnerability is one advisory affecting one package of the tree.
type Vulnerability struct {
	ID       string   `json:"id"`
	Aliases  []string `json:"aliases"`
	Summary  string   `json:"summary"`
	Score    float64  `json:"score"`
	Severity string   `json:"severity"`
	Package  string   `json:"package"`
	Version  string   `json:"version"`
	// Reach is "target" (the scanned package), "direct" or "transitive".
	Reach   string   `json:"reach"`
	Fixed   []string `json:"fixed"`
	Malware bool     `json:"malware"`
}

// SocketResult is Socket's verdict on the package and its tree.
type SocketResult struct {
	Malware bool               `json:"malware"`
	Scores  map[string]float64 `json:"scores"`
	Alerts  []SocketAlert      `json:"alerts"`
}

// SocketAlert is one Socket alert.
type SocketAlert struct {
	Type     string `json:"type"`
	Severity string `json:"severity"`
	Category string `json:"category"`
	Package  string `json:"package"`
	Version  string `json:"version"`
	Target   bool   `json:"target"`
}

// GitHubResult is GitHub's answer about the declared repository.
type GitHubResult struct {
	Requested     string  `json:"requested"`
	Exists        bool    `json:"exists"`
	FullName      string  `json:"full_name"`
	Archived      bool    `json:"archived"`
	Disabled      bool    `json:"disabled"`
	Fork          bool    `json:"fork"`
	DefaultBranch string  `json:"default_branch"`
	PushedAt      *string `json:"pushed_at"`
	CreatedAt     *string `json:"created_at"`
	Stars         int     `json:"stars"`
}

// DNSSECResult is the DNSSEC validation of the domains taken from the
// package's metadata: which resolver was asked, from which trust anchor,
// and the judgement on each domain.
type DNSSECResult struct {
	// Resolver is the recursive resolver asked ("host:port").
	Resolver  string       `json:"resolver"`
	Anchor    DNSSECAnchor `json:"anchor"`
	CheckedAt *string      `json:"checked_at"`
	Domains   []DNSDomain  `json:"domains"`
}

// DNSSECAnchor is the trust anchor the chains start from.
type DNSSECAnchor struct {
	Zone    string   `json:"zone"`
	KeyTags []uint16 `json:"key_tags"`
	Source  string   `json:"source"`
}

// DNSDomain is the judgement on one domain.
type DNSDomain struct {
	Name    string   `json:"name"`
	Sources []string `json:"sources"`
	// Status is secure, insecure, bogus or indeterminate; BogusReason is
	// empty unless it is bogus.
	Status      string `json:"status"`
	BogusReason string `json:"bogus_reason"`
	// Exists is yes, no or unknown; NXDomainProof says how a nonexistence
	// (of the name, or of the end of its CNAME chain) was proven.
	Exists        string        `json:"exists"`
	NXDomainProof string        `json:"nxdomain_proof"`
	CNAMEs        []string      `json:"cnames"`
	DanglingCNAME bool          `json:"dangling_cname"`
	Chain         []DNSZoneStep `json:"chain"`
	Error         string        `json:"error"`
}

// DNSZoneStep is one zone on a chain of trust, from the anchor down.
type DNSZoneStep struct {
	Zone        string   `json:"zone"`
	Status      string   `json:"status"`
	BogusReason string   `json:"bogus_reason"`
	DSKeyTags   []uint16 `json:"ds_key_tags"`
	KeyTags     []uint16 `json:"key_tags"`
	Algorithms  []int    `json:"algorithms"`
	DSDenial    string   `json:"ds_denial"`
	Error       string   `json:"error"`
}

// supplySignals are the signals of the supply-chain section.
var supplySignals = []string{evidence.SignalRegistryMeta, evidence.SignalOSV, evidence.SignalSocket, evidence.SignalGitHub, evidence.SignalDNSSEC}

// buildSupply builds the supply-chain section from the bundle and the
// report's signals (which hold every signal the rubric needed). It is nil
// only when the bundle carries neither supply-chain evidence nor any
// supply-chain signal: evidence from before supply-chain collection.
func buildSupply(b *evidence.Bundle, signals map[string]Signal) *Supply {
	present := b.Supply != nil
	for _, name := range supplySignals {
		if _, ok := signals[name]; ok {
			present = true
		}
	}
	if !present {
		return nil
	}
	var sp evidence.Supply
	if b.Supply != nil {
		sp = *b.Supply
	}
	check := func(name string, have bool) Check { return checkOf(b, signals, name, have) }
	out := &Supply{
		Registry: RegistryCheck{Check: check(evidence.SignalRegistryMeta, sp.Registry != nil)},
		OSV:      OSVCheck{Check: check(evidence.SignalOSV, sp.OSV != nil)},
		Socket:   SocketCheck{Check: check(evidence.SignalSocket, sp.Socket != nil)},
		GitHub:   GitHubCheck{Check: check(evidence.SignalGitHub, sp.GitHub != nil)},
		DNSSEC:   DNSSECCheck{Check: check(evidence.SignalDNSSEC, sp.DNSSEC != nil)},
	}
	// Evidence of a signal that was not observed is not shown: the
	// report would otherwise present it as a finding of a check that
	// did not run.
	if out.Registry.Status == StatusObserved {
		out.Registry.Metadata = registryMeta(sp.Registry)
	}
	if out.OSV.Status == StatusObserved {
		out.OSV.Result = osvResult(sp.OSV)
	}
	if out.Socket.Status == StatusObserved {
		out.Socket.Result = socketResult(sp.Socket)
	}
	if out.GitHub.Status == StatusObserved {
		out.GitHub.Result = githubResult(sp.GitHub)
	}
	if out.DNSSEC.Status == StatusObserved {
		out.DNSSEC.Result = dnssecResult(sp.DNSSEC)
	}
	return out
}

// checkOf is the state of the check that signal name is: observed only
// when the signal was observed and the bundle holds its evidence (have).
func checkOf(b *evidence.Bundle, signals map[string]Signal, name string, have bool) Check {
	s, ok := signals[name]
	if !ok {
		ev := b.Signal(name)
		s = Signal{State: string(ev.State), Reason: ev.Reason}
	}
	c := Check{Signal: name, State: s.State, Status: StatusUnverified, Reason: s.Reason}
	switch {
	case s.State == string(evidence.StateObserved) && have:
		c.Status = StatusObserved
	case s.State == string(evidence.StateObserved):
		c.Reason = "the signal is observed but the bundle holds no evidence of it"
	}
	return c
}

func registryMeta(m *evidence.RegistryMeta) *RegistryMeta {
	out := &RegistryMeta{
		Ecosystem: m.Ecosystem, Name: m.Name, Version: m.Version, PublishedAt: timePtr(m.PublishedAt),
		PreviousVersion: m.PreviousVersion, PreviousPublishedAt: timePtr(m.PreviousPublishedAt),
		VersionCount: m.VersionCount, FirstPublishedAt: timePtr(m.FirstPublishedAt),
		Maintainers: make([]Maintainer, 0, len(m.Maintainers)), Deprecated: m.Deprecated,
		RepositoryURL: m.RepositoryURL, RepositoryError: m.RepositoryError, Homepage: m.Homepage,
		AuthorURL: m.AuthorURL, License: m.License, MCPName: m.MCPName, Provenance: m.Provenance,
		LifecycleScripts: map[string]string{},
	}
	for _, mt := range m.Maintainers {
		out.Maintainers = append(out.Maintainers, Maintainer{Name: mt.Name, EmailDomain: mt.EmailDomain})
	}
	if r := m.Repository; r != nil {
		out.Repository = &Repository{Host: r.Host, Owner: r.Owner, Name: r.Name, Directory: r.Directory}
	}
	for k, v := range m.LifecycleScripts {
		out.LifecycleScripts[k] = v
	}
	return out
}

func osvResult(r *evidence.OSVResult) *OSVResult {
	out := &OSVResult{Source: r.Source, Packages: r.Packages, Vulnerabilities: make([]Vulnerability, 0, len(r.Vulnerabilities))}
	for _, v := range r.Vulnerabilities {
		reach := "transitive"
		switch {
		case v.Target:
			reach = "target"
		case v.Direct:
			reach = "direct"
		}
		out.Vulnerabilities = append(out.Vulnerabilities, Vulnerability{
			ID: v.ID, Aliases: nonNil(v.Aliases), Summary: v.Summary, Score: v.Score, Severity: v.Severity,
			Package: v.Package, Version: v.Version, Reach: reach, Fixed: nonNil(v.Fixed), Malware: v.Malware,
		})
	}
	return out
}

func socketResult(r *evidence.SocketResult) *SocketResult {
	out := &SocketResult{Malware: r.Malware, Scores: map[string]float64{}, Alerts: make([]SocketAlert, 0, len(r.Alerts))}
	for k, v := range r.Scores {
		out.Scores[k] = v
	}
	for _, a := range r.Alerts {
		out.Alerts = append(out.Alerts, SocketAlert{Type: a.Type, Severity: a.Severity, Category: a.Category, Package: a.Package, Version: a.Version, Target: a.Target})
	}
	return out
}

func githubResult(r *evidence.GitHubResult) *GitHubResult {
	return &GitHubResult{
		Requested: r.Requested, Exists: r.Exists, FullName: r.FullName, Archived: r.Archived, Disabled: r.Disabled,
		Fork: r.Fork, DefaultBranch: r.DefaultBranch, PushedAt: timePtr(r.PushedAt), CreatedAt: timePtr(r.CreatedAt), Stars: r.Stars,
	}
}

func dnssecResult(r *evidence.DNSSECResult) *DNSSECResult {
	out := &DNSSECResult{
		Resolver:  endpoint(r.Resolver),
		Anchor:    DNSSECAnchor{Zone: r.Anchor.Zone, KeyTags: nonNil(r.Anchor.KeyTags), Source: r.Anchor.Source},
		CheckedAt: timePtr(&r.CheckedAt),
		Domains:   make([]DNSDomain, 0, len(r.Domains)),
	}
	for _, d := range r.Domains {
		dd := DNSDomain{
			Name: d.Name, Sources: nonNil(d.Sources), Status: d.Status, BogusReason: d.BogusReason, Exists: d.Exists,
			NXDomainProof: d.NXDomainProof, CNAMEs: nonNil(d.CNAMEs), DanglingCNAME: d.DanglingCNAME,
			Chain: make([]DNSZoneStep, 0, len(d.Chain)), Error: d.Error,
		}
		for _, z := range d.Chain {
			dd.Chain = append(dd.Chain, DNSZoneStep{
				Zone: z.Zone, Status: z.Status, BogusReason: z.BogusReason, DSKeyTags: nonNil(z.DSKeyTags),
				KeyTags: nonNil(z.KeyTags), Algorithms: nonNil(z.Algorithms), DSDenial: z.DSDenial, Error: z.Error,
			})
		}
		out.Domains = append(out.Domains, dd)
	}
	return out
}

// timePtr formats a time in UTC, RFC 3339, or nil.
func timePtr(t *time.Time) *string {
	if t == nil || t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.RFC3339Nano)
	return &s
}

// endpoint returns the base URL a signal was asked at, without anything
// that can carry a credential: user information, query and fragment are
// dropped. The evidence should never hold one; the report does not rely on
// it. A DNS resolver is asked at a "host:port", which is kept as it is; any
// other value that does not parse as a URL is withheld.
func endpoint(s string) string {
	if s == "" {
		return ""
	}
	if resolverAddr(s) {
		return s
	}
	u, err := url.Parse(s)
	// An opaque URL ("user:secret@host:53" parses as scheme "user") has no
	// user information to drop, so it is withheld as a whole.
	if err != nil || u.Opaque != "" {
		return "(withheld: not a URL)"
	}
	u.User = nil
	u.RawQuery, u.ForceQuery = "", false
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// resolverAddr reports whether s is a "host:port" with a numeric port and a
// host made of host-name or IP-literal characters only, so that it cannot
// carry user information, a path or a query.
func resolverAddr(s string) bool {
	host, port, err := net.SplitHostPort(s)
	if err != nil || host == "" || port == "" || len(port) > 5 {
		return false
	}
	for _, c := range port {
		if c < '0' || c > '9' {
			return false
		}
	}
	return strings.Trim(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_:%") == ""
}
