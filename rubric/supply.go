package rubric

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
)

// Reason codes of the supply-chain probes of rubric v3. The prefix after
// pkg.supply names the signal the evidence came from, so that a benchmark
// case can scope itself to one source.
const (
	CodeRegistryDeprecated            = "pkg.supply.registry.deprecated"
	CodeRegistryNoRepository          = "pkg.supply.registry.no_repository"
	CodeRegistryRepositoryUnparseable = "pkg.supply.registry.repository_unparseable"
	CodeRegistryNoProvenance          = "pkg.supply.registry.no_provenance"
	CodeRegistryMCPNameAbsent         = "pkg.supply.registry.mcpname_absent"
	CodeRegistryMCPNameMismatch       = "pkg.supply.registry.mcpname_mismatch"
	CodeRegistryRecentPublish         = "pkg.supply.registry.recent_publish"
	CodeRegistryNewPackage            = "pkg.supply.registry.new_package"
	CodeRegistryRapidRelease          = "pkg.supply.registry.rapid_release"

	CodeOSVVulnerable = "pkg.supply.osv.vulnerable"
	CodeOSVMalware    = "pkg.supply.osv.malware"
	CodeOSVUnverified = "pkg.supply.osv.unverified"

	CodeSocketMalware    = "pkg.supply.socket.malware"
	CodeSocketAlert      = "pkg.supply.socket.alert"
	CodeSocketUnverified = "pkg.supply.socket.unverified"

	CodeGitHubNotFound = "pkg.supply.github.not_found"
	CodeGitHubArchived = "pkg.supply.github.archived"
	CodeGitHubDisabled = "pkg.supply.github.disabled"
	CodeGitHubRenamed  = "pkg.supply.github.renamed"
	CodeGitHubStale    = "pkg.supply.github.stale"
)

// Supply-chain dimensions.
const (
	DimensionVulnerability = "vulnerability_exposure"
	DimensionMalware       = "malware_signal"
	DimensionProvenance    = "provenance"
	DimensionMaintenance   = "maintenance_signal"
)

// supplyDimensions are the dimensions whose probes read parameters.supply.
var supplyDimensions = map[string]bool{
	DimensionVulnerability: true, DimensionMalware: true, DimensionProvenance: true, DimensionMaintenance: true,
}

// SupplyParams parameterise the supply-chain dimensions (rubric v3 on).
type SupplyParams struct {
	Vulnerability VulnerabilityParams `yaml:"vulnerability"`
	Malware       MalwareParams       `yaml:"malware"`
	Provenance    ProvenanceParams    `yaml:"provenance"`
	Maintenance   MaintenanceParams   `yaml:"maintenance"`
	// DNSSEC parameterises what the provenance dimension takes from the
	// dnssec signal: required by a rubric whose provenance dimension names
	// that signal (v4 on), and absent from the others.
	DNSSEC *DNSSECParams `yaml:"dnssec"`
}

// VulnerabilityParams parameterise the vulnerability_exposure dimension.
type VulnerabilityParams struct {
	// CVSS holds the lowest CVSS score of each severity; a score below
	// medium is low.
	CVSS CVSSThresholds `yaml:"cvss"`
	// DirectPenalty applies to an advisory on the package itself or a
	// direct dependency, TransitivePenalty to one deeper in the tree.
	DirectPenalty     SeverityPenalties `yaml:"direct_penalty"`
	TransitivePenalty SeverityPenalties `yaml:"transitive_penalty"`
}

// CVSSThresholds are the lowest CVSS scores of the severities.
type CVSSThresholds struct {
	Critical float64 `yaml:"critical"`
	High     float64 `yaml:"high"`
	Medium   float64 `yaml:"medium"`
}

// SeverityPenalties are points subtracted per advisory, by severity.
type SeverityPenalties struct {
	Critical float64 `yaml:"critical"`
	High     float64 `yaml:"high"`
	Medium   float64 `yaml:"medium"`
	Low      float64 `yaml:"low"`
}

func (sp SeverityPenalties) of(s Severity) float64 {
	switch s {
	case SeverityCritical:
		return sp.Critical
	case SeverityHigh:
		return sp.High
	case SeverityMedium:
		return sp.Medium
	default:
		return sp.Low
	}
}

// MalwareParams parameterise the malware_signal dimension.
type MalwareParams struct {
	// MalwareAlertTypes are the Socket alert types that mean malware.
	MalwareAlertTypes []string `yaml:"malware_alert_types"`
	// AlertMinSeverity is the lowest severity of another Socket alert
	// that is reported (pkg.supply.socket.alert).
	AlertMinSeverity Severity `yaml:"alert_min_severity"`
}

// ProvenanceParams are the deductions of the provenance dimension.
type ProvenanceParams struct {
	RepositoryPenalty          float64 `yaml:"repository_penalty"`
	UncheckedRepositoryPenalty float64 `yaml:"unchecked_repository_penalty"`
	GitHubNotFoundPenalty      float64 `yaml:"github_not_found_penalty"`
	GitHubDisabledPenalty      float64 `yaml:"github_disabled_penalty"`
	GitHubRenamedPenalty       float64 `yaml:"github_renamed_penalty"`
	NoProvenancePenalty        float64 `yaml:"no_provenance_penalty"`
	MCPNameAbsentPenalty       float64 `yaml:"mcpname_absent_penalty"`
	MCPNameMismatchPenalty     float64 `yaml:"mcpname_mismatch_penalty"`
	// MCPNameUnverifiedPenalty is the deduction for an mcpName the MCP
	// registry neither corroborates nor contradicts, for a rubric whose
	// provenance dimension names the mcp_registry signal (v11 on); such
	// a rubric without it takes mcpname_absent_penalty.
	MCPNameUnverifiedPenalty *float64 `yaml:"mcpname_unverified_penalty"`
	// SharedHosts host anyone's code or pages, so a homepage or repository
	// there says nothing about who owns a domain.
	SharedHosts []string `yaml:"shared_hosts"`
}

// MaintenanceParams are the thresholds and deductions of the
// maintenance_signal dimension.
type MaintenanceParams struct {
	DeprecatedPenalty          float64 `yaml:"deprecated_penalty"`
	ArchivedPenalty            float64 `yaml:"archived_penalty"`
	StaleDays                  int     `yaml:"stale_days"`
	StalePenalty               float64 `yaml:"stale_penalty"`
	UncheckedRepositoryPenalty float64 `yaml:"unchecked_repository_penalty"`
	RecentPublishHours         int     `yaml:"recent_publish_hours"`
	RecentPublishPenalty       float64 `yaml:"recent_publish_penalty"`
	NewPackageDays             int     `yaml:"new_package_days"`
	NewPackagePenalty          float64 `yaml:"new_package_penalty"`
	RapidReleaseHours          int     `yaml:"rapid_release_hours"`
	RapidReleasePenalty        float64 `yaml:"rapid_release_penalty"`
}

// usesSupply reports whether any dimension of r is a supply-chain
// dimension, whose probe reads parameters.supply.
func (r *Rubric) usesSupply() bool {
	for _, d := range r.Dimensions {
		if supplyDimensions[d.ID] {
			return true
		}
	}
	return false
}

func (p *SupplyParams) validate() []error {
	if p == nil {
		return []error{errors.New("parameters.supply: missing, and the rubric has supply-chain dimensions")}
	}
	var errs []error
	add := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("parameters.supply."+format, args...))
	}
	penalty := func(name string, v float64) {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			add("%s: %v must be 0 or more", name, v)
		}
	}
	positive := func(name string, v int) {
		if v < 1 {
			add("%s: %d must be at least 1", name, v)
		}
	}
	vp := p.Vulnerability
	if c := vp.CVSS; !(0 < c.Medium && c.Medium < c.High && c.High < c.Critical && c.Critical <= 10) {
		add("vulnerability.cvss: want 0 < medium < high < critical <= 10, have %v, %v, %v", c.Medium, c.High, c.Critical)
	}
	for name, sp := range map[string]SeverityPenalties{"direct_penalty": vp.DirectPenalty, "transitive_penalty": vp.TransitivePenalty} {
		for _, s := range []Severity{SeverityCritical, SeverityHigh, SeverityMedium, SeverityLow} {
			penalty("vulnerability."+name+"."+string(s), sp.of(s))
		}
	}
	for _, t := range p.Malware.MalwareAlertTypes {
		if strings.TrimSpace(t) == "" {
			add("malware.malware_alert_types: empty type")
		}
	}
	if p.Malware.AlertMinSeverity.Rank() < 1 {
		add("malware.alert_min_severity: %q is not low, medium, high or critical", p.Malware.AlertMinSeverity)
	}
	pp := p.Provenance
	penalty("provenance.repository_penalty", pp.RepositoryPenalty)
	penalty("provenance.unchecked_repository_penalty", pp.UncheckedRepositoryPenalty)
	penalty("provenance.github_not_found_penalty", pp.GitHubNotFoundPenalty)
	penalty("provenance.github_disabled_penalty", pp.GitHubDisabledPenalty)
	penalty("provenance.github_renamed_penalty", pp.GitHubRenamedPenalty)
	penalty("provenance.no_provenance_penalty", pp.NoProvenancePenalty)
	penalty("provenance.mcpname_absent_penalty", pp.MCPNameAbsentPenalty)
	penalty("provenance.mcpname_mismatch_penalty", pp.MCPNameMismatchPenalty)
	if pp.MCPNameUnverifiedPenalty != nil {
		penalty("provenance.mcpname_unverified_penalty", *pp.MCPNameUnverifiedPenalty)
	}
	for _, h := range pp.SharedHosts {
		if h == "" || h != strings.ToLower(h) || strings.ContainsAny(h, "/: \t") {
			add("provenance.shared_hosts: %q is not a lower-case host name", h)
		}
	}
	mp := p.Maintenance
	penalty("maintenance.deprecated_penalty", mp.DeprecatedPenalty)
	penalty("maintenance.archived_penalty", mp.ArchivedPenalty)
	penalty("maintenance.stale_penalty", mp.StalePenalty)
	penalty("maintenance.unchecked_repository_penalty", mp.UncheckedRepositoryPenalty)
	penalty("maintenance.recent_publish_penalty", mp.RecentPublishPenalty)
	penalty("maintenance.new_package_penalty", mp.NewPackagePenalty)
	penalty("maintenance.rapid_release_penalty", mp.RapidReleasePenalty)
	positive("maintenance.stale_days", mp.StaleDays)
	positive("maintenance.recent_publish_hours", mp.RecentPublishHours)
	positive("maintenance.new_package_days", mp.NewPackageDays)
	positive("maintenance.rapid_release_hours", mp.RapidReleaseHours)
	return errs
}

// observed reports whether the named signal was observed, and the signal;
// a signal missing from the bundle comes back as an error.
func (p *probe) observed(name string) (evidence.Signal, bool) {
	s := p.b.Signal(name)
	return s, s.State == evidence.StateObserved
}

// supply returns the parts of the supply-chain evidence whose signals were
// observed; the others are nil whatever the bundle holds, because evidence
// of a signal that was not observed is not evidence.
func (p *probe) supply() (reg *evidence.RegistryMeta, osv *evidence.OSVResult, sock *evidence.SocketResult, gh *evidence.GitHubResult) {
	sp := p.b.Supply
	if sp == nil {
		return nil, nil, nil, nil
	}
	if _, ok := p.observed(evidence.SignalRegistryMeta); ok {
		reg = sp.Registry
	}
	if _, ok := p.observed(evidence.SignalOSV); ok {
		osv = sp.OSV
	}
	if _, ok := p.observed(evidence.SignalSocket); ok {
		sock = sp.Socket
	}
	if _, ok := p.observed(evidence.SignalGitHub); ok {
		gh = sp.GitHub
	}
	return reg, osv, sock, gh
}

// noEvidence is the zero point of a dimension whose signal is observed but
// whose evidence the bundle does not hold.
func noEvidence(signal, what string) verdict {
	return zeroPoint("signal " + signal + " is observed but the bundle holds no " + what)
}

// targetSubject names the scanned package and version.
func (p *probe) targetSubject() string {
	return nameAt(p.b.Target.Name, p.b.Target.Version)
}

func nameAt(name, version string) string {
	name = orUnknown(name)
	if version == "" {
		return name
	}
	return name + "@" + version
}

// signalEvidence quotes a signal's state and reason.
func (p *probe) signalEvidence(name string, s evidence.Signal) string {
	return p.clip("signal " + name + " is " + string(s.State) + because(s.Reason))
}

// deductions accumulates a score of 100 minus penalties, and says why.
type deductions struct {
	score float64
	notes []string
}

func newDeductions() *deductions { return &deductions{score: 100} }

func (d *deductions) add(penalty float64, why string) {
	d.score -= penalty
	d.notes = append(d.notes, why+" (-"+formatScore(penalty)+")")
}

// verdict scores the deductions; none, called only when there are none,
// says why the score is 100.
func (d *deductions) verdict(none func() string) verdict {
	if len(d.notes) == 0 {
		return scored(100, none())
	}
	return scored(d.score, strings.Join(d.notes, "; "))
}

// ---- vulnerability_exposure ----

// advisorySeverity is an advisory's severity: from its CVSS score when it
// has one, else from the database's rating (GHSA's "moderate" is medium),
// else low.
func (vp VulnerabilityParams) advisorySeverity(v evidence.Vulnerability) (Severity, string) {
	switch c := vp.CVSS; {
	case v.Score >= c.Critical:
		return SeverityCritical, "CVSS " + formatScore(v.Score)
	case v.Score >= c.High:
		return SeverityHigh, "CVSS " + formatScore(v.Score)
	case v.Score >= c.Medium:
		return SeverityMedium, "CVSS " + formatScore(v.Score)
	case v.Score > 0:
		return SeverityLow, "CVSS " + formatScore(v.Score)
	}
	if s, ok := rating(v.Severity); ok {
		return s, "no CVSS score; rated " + strings.ToLower(strings.TrimSpace(v.Severity))
	}
	return SeverityLow, "no CVSS score or rating"
}

// rating reads a severity word as databases and Socket write them.
func rating(s string) (Severity, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "critical":
		return SeverityCritical, true
	case "high":
		return SeverityHigh, true
	case "moderate", "medium", "middle":
		return SeverityMedium, true
	case "low":
		return SeverityLow, true
	default:
		return "", false
	}
}

// Where an advisory's package sits in the tree, in the order reasons
// list them.
const (
	reachTarget = iota
	reachDirect
	reachTransitive
)

func reach(v evidence.Vulnerability) int {
	switch {
	case v.Target:
		return reachTarget
	case v.Direct:
		return reachDirect
	default:
		return reachTransitive
	}
}

// reachNote says where an advisory's package sits, for messages.
func reachNote(v evidence.Vulnerability) string {
	return [...]string{"the package itself", "a direct dependency", "a transitive dependency"}[reach(v)]
}

// distinctAdvisories returns the advisories that are not malware, one per
// vulnerability and package version: an advisory listed again under an
// alias (a GHSA and its CVE) is counted once, keeping the one with the
// highest score, then the lowest id. The order of the input does not
// matter.
func distinctAdvisories(vs []evidence.Vulnerability) []evidence.Vulnerability {
	list := make([]evidence.Vulnerability, 0, len(vs))
	for _, v := range vs {
		if !isMalwareAdvisory(v) {
			list = append(list, v)
		}
	}
	slices.SortStableFunc(list, func(a, b evidence.Vulnerability) int {
		if c := strings.Compare(a.Package, b.Package); c != 0 {
			return c
		}
		if c := strings.Compare(a.Version, b.Version); c != 0 {
			return c
		}
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
	if len(list) < 2 {
		return list
	}
	type key struct{ pkg, version, id string }
	seen := map[key]bool{}
	out := list[:0]
	for _, v := range list {
		dup := seen[key{v.Package, v.Version, v.ID}]
		for _, a := range v.Aliases {
			dup = dup || seen[key{v.Package, v.Version, a}]
		}
		seen[key{v.Package, v.Version, v.ID}] = true
		for _, a := range v.Aliases {
			seen[key{v.Package, v.Version, a}] = true
		}
		if !dup {
			out = append(out, v)
		}
	}
	return out
}

func isMalwareAdvisory(v evidence.Vulnerability) bool {
	return v.Malware || strings.HasPrefix(v.ID, "MAL-")
}

func scoreVulnerability(p *probe, gate verdict) verdict {
	sig, ok := p.observed(evidence.SignalOSV)
	switch sig.State {
	case evidence.StateObserved, evidence.StateNotAssessed:
	case evidence.StateUnavailable, evidence.StateError:
		p.unverified(CodeOSVUnverified, p.targetSubject(),
			"OSV was not consulted ("+string(sig.State)+"): known vulnerabilities in the installed tree are unknown, not absent",
			p.signalEvidence(evidence.SignalOSV, sig))
	default:
		p.unverified(CodeOSVUnverified, p.targetSubject(),
			"the OSV signal has an unknown state: known vulnerabilities in the installed tree are unknown, not absent",
			p.signalEvidence(evidence.SignalOSV, sig))
	}
	_, osv, _, _ := p.supply()
	if !ok || osv == nil {
		if gate.state != StateScored {
			return gate
		}
		return noEvidence(evidence.SignalOSV, "OSV result")
	}
	vp := p.p.Supply.Vulnerability
	// tally counts advisories by reach and severity, for the reason.
	type tally struct {
		reach   int
		sev     Severity
		n       int
		penalty float64
	}
	var backing [8]tally
	tallies := backing[:0]
	score := 100.0
	for _, v := range distinctAdvisories(osv.Vulnerabilities) {
		sev, basis := vp.advisorySeverity(v)
		table := vp.TransitivePenalty
		if reach(v) != reachTransitive {
			table = vp.DirectPenalty
		}
		fixed := "no fixed version is listed"
		if len(v.Fixed) > 0 {
			fixed = "fixed in " + strings.Join(v.Fixed, ", ")
		}
		subject := nameAt(v.Package, v.Version)
		p.emitGraded(CodeOSVVulnerable, sev, subject,
			v.ID+" ("+string(sev)+", "+basis+") affects "+subject+", "+p.reachNote(v)+"; "+fixed,
			p.clip(advisoryEvidence(v, basis)))
		pen := table.of(sev)
		score -= pen
		i := 0
		for i < len(tallies) && (tallies[i].reach != reach(v) || tallies[i].sev != sev) {
			i++
		}
		if i == len(tallies) {
			tallies = append(tallies, tally{reach: reach(v), sev: sev})
		}
		tallies[i].n++
		tallies[i].penalty += pen
	}
	if len(tallies) == 0 {
		return scored(100, "OSV lists no advisory for the "+plural(osv.Packages, "package")+" queried")
	}
	slices.SortFunc(tallies, func(a, b tally) int {
		if a.reach != b.reach {
			return a.reach - b.reach
		}
		return b.sev.Rank() - a.sev.Rank()
	})
	parts := make([]string, 0, len(tallies))
	for _, t := range tallies {
		where := p.reachLabel(t.reach)
		parts = append(parts, strconv.Itoa(t.n)+" "+string(t.sev)+" "+where+" (-"+formatScore(t.penalty)+")")
	}
	return scored(score, "advisories: "+strings.Join(parts, ", ")+"; "+plural(osv.Packages, "package")+" queried")
}

func advisoryEvidence(v evidence.Vulnerability, basis string) string {
	var b strings.Builder
	b.Grow(len(v.ID) + len(basis) + len(v.Severity) + len(v.Summary) + 64)
	b.WriteString(v.ID)
	if len(v.Aliases) > 0 {
		aliases := v.Aliases
		if len(aliases) > 1 {
			aliases = sortedCopy(aliases)
		}
		b.WriteString("; aliases ")
		b.WriteString(strings.Join(aliases, ", "))
	}
	b.WriteString("; ")
	b.WriteString(basis)
	if v.Score > 0 && v.Severity != "" {
		b.WriteString(" (" + v.Severity + ")")
	}
	if len(v.Fixed) > 0 {
		b.WriteString("; fixed: ")
		b.WriteString(strings.Join(v.Fixed, ", "))
	} else {
		b.WriteString("; fixed: none listed")
	}
	if v.Summary != "" {
		b.WriteString("; summary: ")
		b.WriteString(v.Summary)
	}
	return b.String()
}

// ---- malware_signal ----

// scoreMalware combines Socket and OSV. Positive evidence of malware from
// either observed signal scores 0 whatever the other's state, because the
// evidence is there; otherwise both must be observed to score 100, and a
// signal that was not observed gives the gate's verdict (the zero point
// when unavailable, error or missing; dropped when not assessed). A missing
// Socket verdict is never credited as clean.
func scoreMalware(p *probe, gate verdict) verdict {
	sockSig, sockOK := p.observed(evidence.SignalSocket)
	if !sockOK {
		p.unverified(CodeSocketUnverified, p.targetSubject(),
			"Socket was not consulted ("+string(sockSig.State)+"): whether Socket flags this package as malware is unverified, which is not a clean verdict",
			p.signalEvidence(evidence.SignalSocket, sockSig))
	}
	_, osv, sock, _ := p.supply()
	var sources []string
	if sock != nil {
		if n := p.socketFindings(sock); n > 0 {
			sources = append(sources, "Socket flags "+plural(n, "package")+" as malware")
		}
	}
	if osv != nil {
		n := 0
		for _, v := range osv.Vulnerabilities {
			if !isMalwareAdvisory(v) {
				continue
			}
			n++
			subject := nameAt(v.Package, v.Version)
			p.emit(CodeOSVMalware, subject,
				fmt.Sprintf("OSV lists %s, a malicious-package advisory, for %s, %s", v.ID, subject, p.reachNote(v)),
				p.clip(advisoryEvidence(v, "malware")))
		}
		if n > 0 {
			sources = append(sources, "OSV lists "+plural(n, "malicious-package advisory"))
		}
	}
	if len(sources) > 0 {
		return scored(0, strings.Join(sources, "; ")+"; positive evidence of malware scores 0 whatever the other signal's state")
	}
	if gate.state != StateScored {
		return gate
	}
	if sock == nil {
		return noEvidence(evidence.SignalSocket, "Socket answer")
	}
	if osv == nil {
		return noEvidence(evidence.SignalOSV, "OSV result")
	}
	return scored(100, "Socket flags no package as malware ("+plural(len(sock.Alerts), "alert")+" in all) and OSV lists no malicious-package advisory for the "+
		plural(osv.Packages, "package")+" queried")
}

// socketFindings emits the Socket malware verdicts and the alerts of the
// reported severities, and returns how many packages Socket flags as
// malware.
func (p *probe) socketFindings(sock *evidence.SocketResult) int {
	mp := p.p.Supply.Malware
	var flagged map[string]bool
	for _, a := range sock.Alerts {
		malware := slices.Contains(mp.MalwareAlertTypes, a.Type)
		sev, rated := rating(a.Severity)
		if !malware && (!rated || sev.Rank() < mp.AlertMinSeverity.Rank()) {
			continue // neither reported nor scored
		}
		if flagged == nil {
			flagged = map[string]bool{}
		}
		subject := nameAt(a.Package, a.Version)
		if a.Package == "" {
			subject = p.targetSubject()
		}
		if malware {
			if !flagged[subject] {
				flagged[subject] = true
				p.emit(CodeSocketMalware, subject, "Socket flags "+subject+" as malware (alert "+strconv.Quote(a.Type)+")", p.clip(alertEvidence(a)))
			}
			continue
		}
		p.emitGraded(CodeSocketAlert, sev, subject,
			fmt.Sprintf("Socket raises a %s %q alert on %s", sev, a.Type, subject), p.clip(alertEvidence(a)))
	}
	if sock.Malware && len(flagged) == 0 {
		// The verdict without an alert naming the package is on the
		// package itself.
		subject := p.targetSubject()
		flagged = map[string]bool{subject: true}
		p.emit(CodeSocketMalware, subject, "Socket flags "+subject+" as malware", "socket verdict: malware")
	}
	return len(flagged)
}

func alertEvidence(a evidence.SocketAlert) string {
	parts := []string{"alert " + orUnknown(a.Type), "severity " + orUnknown(a.Severity)}
	if a.Category != "" {
		parts = append(parts, "category "+a.Category)
	}
	parts = append(parts, "package "+nameAt(a.Package, a.Version))
	return strings.Join(parts, "; ")
}

// ---- provenance and maintenance_signal ----

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

func scoreMaintenance(p *probe, gate verdict) verdict {
	e, decided := p.repository(gate)
	mp := p.p.Supply.Maintenance
	run := p.b.Run.Date
	d := newDeductions()
	target := p.targetSubject()
	pypi := p.readsPyPI()
	if reg := e.reg; reg != nil {
		yank, yanked := yankReason(reg.Deprecated)
		switch {
		case pypi && yanked:
			// A yank is the index withdrawing the release, not a
			// deprecation notice: its own code, the same deduction.
			p.emitYank(target, yank)
			d.add(mp.DeprecatedPenalty, "release yanked")
		case reg.Deprecated != "":
			p.emit(CodeRegistryDeprecated, target, "the registry marks "+target+" as deprecated",
				p.clip("deprecated: "+strconv.Quote(reg.Deprecated)))
			d.add(mp.DeprecatedPenalty, "version deprecated")
		case unserved(reg, "deprecation"):
			d.add(mp.DeprecatedPenalty, "deprecation not served by the registry")
		}
		published := reg.PublishedAt
		if published == nil {
			published = p.b.Target.PublishedAt
		}
		recent := time.Duration(mp.RecentPublishHours) * time.Hour
		switch {
		case published == nil:
			d.add(mp.RecentPublishPenalty, "publish time unknown")
		case run.Sub(*published) < recent:
			p.emit(CodeRegistryRecentPublish, target,
				fmt.Sprintf("%s was published %s before the run, less than %s: too recent for others to have vetted it", target, ago(run.Sub(*published)), plural(mp.RecentPublishHours, "hour")),
				"published "+stamp(*published)+"; run "+stamp(run))
			d.add(mp.RecentPublishPenalty, "published "+ago(run.Sub(*published))+" before the run")
		}
		young := time.Duration(mp.NewPackageDays) * 24 * time.Hour
		switch first := reg.FirstPublishedAt; {
		case first == nil:
			d.add(mp.NewPackagePenalty, "first publish time unknown")
		case run.Sub(*first) < young:
			p.emit(CodeRegistryNewPackage, target,
				fmt.Sprintf("the package's first version was published %s before the run, less than %s", ago(run.Sub(*first)), plural(mp.NewPackageDays, "day")),
				fmt.Sprintf("first published %s; %s; run %s", stamp(*first), plural(reg.VersionCount, "version"), stamp(run)))
			d.add(mp.NewPackagePenalty, "package first published "+ago(run.Sub(*first))+" before the run")
		}
		rapid := time.Duration(mp.RapidReleaseHours) * time.Hour
		// From v10 a version count of 0 is an unknown release history
		// (PyPI's release document carries none), not a first version.
		first := reg.VersionCount == 1 || (reg.VersionCount == 0 && !p.atLeast(pypiSince))
		switch prev := reg.PreviousPublishedAt; {
		case reg.PreviousVersion == "" && prev == nil && first:
			// The first version has no previous one.
		case reg.VersionCount == 0 && prev == nil:
			d.add(mp.RapidReleasePenalty, "time since the previous version unknown: the metadata carries no release history")
		case prev == nil || published == nil:
			d.add(mp.RapidReleasePenalty, "time since the previous version unknown")
		case published.Sub(*prev) < rapid:
			gap := published.Sub(*prev)
			p.emit(CodeRegistryRapidRelease, target,
				fmt.Sprintf("%s was published %s after the previous version %s, less than %s", target, ago(gap), orUnknown(reg.PreviousVersion), plural(mp.RapidReleaseHours, "hour")),
				fmt.Sprintf("%s published %s; %s published %s", orUnknown(reg.Version), stamp(*published), orUnknown(reg.PreviousVersion), stamp(*prev)))
			d.add(mp.RapidReleasePenalty, "published "+ago(gap)+" after the previous version")
		}
	}
	if e.ghUsable() {
		gh := e.gh
		subject := e.ghSubject()
		if gh.Archived {
			p.emit(CodeGitHubArchived, subject, "the repository "+subject+" is archived on GitHub: read-only, no longer maintained",
				p.clip("https://github.com/"+orUnknown(gh.FullName)+"; archived: true"))
			d.add(mp.ArchivedPenalty, "repository archived")
		}
		stale := time.Duration(mp.StaleDays) * 24 * time.Hour
		switch {
		case gh.PushedAt == nil:
			d.add(mp.StalePenalty, "last push unknown")
		case run.Sub(*gh.PushedAt) > stale:
			p.emit(CodeGitHubStale, subject,
				fmt.Sprintf("nothing was pushed to %s for %s before the run, more than %s", subject, ago(run.Sub(*gh.PushedAt)), plural(mp.StaleDays, "day")),
				"pushed_at "+stamp(*gh.PushedAt)+"; run "+stamp(run))
			d.add(mp.StalePenalty, "last push "+ago(run.Sub(*gh.PushedAt))+" before the run")
		}
	}
	if decided != nil {
		return *decided
	}
	if !e.ghUsable() {
		why := "repository activity unknown: "
		switch {
		case e.gh != nil && !e.gh.Exists:
			why += "not found on GitHub"
		case e.gh != nil:
			why += "disabled on GitHub"
		case e.found != nil && isGitHub(e.repo.Host):
			why += "repository " + e.label() + " not checked: GitHub was not asked about it"
		case e.repo != nil:
			why += "repository on " + strings.ToLower(e.repo.Host) + " not checked"
		default:
			why += "no repository declared"
		}
		d.add(mp.UncheckedRepositoryPenalty, why)
	}
	return d.verdict(func() string {
		if pypi {
			return "not yanked; " + plural(e.reg.VersionCount, "version") + "; repository " + e.label() + " active and not archived"
		}
		return "not deprecated; " + plural(e.reg.VersionCount, "version") + "; repository " + e.label() + " active and not archived"
	})
}

// stamp writes a time in UTC, RFC 3339.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// ago writes a duration in whole hours below three days, else in days.
func ago(d time.Duration) string {
	if d < 0 {
		return "-" + ago(-d)
	}
	if d < 72*time.Hour {
		return plural(int(d/time.Hour), "hour")
	}
	return plural(int(d/(24*time.Hour)), "day")
}

// unserved reports whether the registry's document left out a fact
// altogether (a mirror that strips documents): nothing can be claimed
// about it, so no finding fires and the check earns no credit.
func unserved(reg *evidence.RegistryMeta, fact string) bool {
	return slices.Contains(reg.Unserved, fact)
}
