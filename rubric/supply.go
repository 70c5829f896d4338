package rubric

import (
	"errors"
	"fmt"
	"math"
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

// ---- maintenance_signal ----

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
