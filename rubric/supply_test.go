package rubric

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
)

// runDate is the run date of okBundle; every supply-chain time is relative
// to it, never to the clock.
var runDate = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) *time.Time {
	t := runDate.Add(d)
	return &t
}

const day = 24 * time.Hour

// supplyBundle is okBundle with every supply-chain signal observed and
// evidence on which every supply-chain dimension scores 100: a declared
// GitHub repository that exists and was pushed to recently, a provenance
// attestation, a consistent mcpName, a version a month old, no advisory,
// no Socket alert above low, and the one domain the package names (its
// homepage and maintainer's email domain) DNSSEC-secure.
func supplyBundle() *evidence.Bundle {
	b := okBundle()
	for _, s := range []string{evidence.SignalRegistryMeta, evidence.SignalOSV, evidence.SignalSocket, evidence.SignalGitHub, evidence.SignalDNSSEC, evidence.SignalMCPRegistry} {
		b.Signals[s] = evidence.Signal{State: evidence.StateObserved, ThirdParty: true}
	}
	b.Supply = &evidence.Supply{
		Registry: &evidence.RegistryMeta{
			Ecosystem: "npm", Name: "mcp-notes", Version: "1.2.3",
			PublishedAt: at(-30 * day), PreviousVersion: "1.2.2", PreviousPublishedAt: at(-40 * day),
			VersionCount: 12, FirstPublishedAt: at(-400 * day),
			Maintainers:   []evidence.Maintainer{{Name: "acme", EmailDomain: "acme.dev"}},
			RepositoryURL: "git+https://github.com/acme/mcp-notes.git",
			Repository:    &evidence.Repository{Host: "github.com", Owner: "acme", Name: "mcp-notes"},
			Homepage:      "https://acme.dev/notes", License: "MIT",
			MCPName: "io.github.acme/mcp-notes", Provenance: true,
		},
		OSV: &evidence.OSVResult{Source: "api", Packages: 40, Vulnerabilities: []evidence.Vulnerability{}},
		Socket: &evidence.SocketResult{Alerts: []evidence.SocketAlert{
			{Type: "envVars", Severity: "low", Package: "mcp-notes", Version: "1.2.3", Target: true},
		}},
		GitHub: &evidence.GitHubResult{
			Requested: "acme/mcp-notes", Exists: true, FullName: "acme/mcp-notes", DefaultBranch: "main",
			PushedAt: at(-20 * day), CreatedAt: at(-500 * day), Stars: 31,
		},
		DNSSEC: &evidence.DNSSECResult{
			Resolver:  "127.0.0.1:53",
			Anchor:    evidence.DNSSECAnchor{Zone: ".", KeyTags: []uint16{20326, 38696}, Source: "embedded IANA root anchors"},
			CheckedAt: runDate.Add(-time.Minute),
			Domains:   []evidence.DNSDomain{secureDomain("acme.dev", "homepage", "maintainer_email")},
		},
		// Read from rubric v11: the MCP registry's entry of the mcpName
		// lists this package.
		MCPRegistry: &evidence.MCPNameCheck{
			Name: "io.github.acme/mcp-notes", Registry: "https://registry.modelcontextprotocol.io", CheckedAt: runDate.Add(-time.Minute),
			Found: true, AllVersions: true, VersionCount: 3, Latest: "1.2.3",
			Packages: []evidence.MCPListedPackage{{
				RegistryType: "npm", Identifier: "mcp-notes", ServerVersions: []string{"1.2.3", "1.2.2", "1.2.0"}, ServerVersionCount: 3,
				PackageVersions: []string{"1.2.3", "1.2.2", "1.2.0"}, Active: true,
			}},
		},
	}
	return b
}

// runSupplyCases runs each case on supplyBundle under every rubric
// version that has the dimension.
func runSupplyCases(t *testing.T, dimension string, tests []probeCase) {
	t.Helper()
	runSupplyCasesWhere(t, dimension, tests, func(string, string) bool { return true })
}

// runSupplyCasesWhere runs each case under the rubric versions that have
// the dimension and for which keep(version, case name) holds.
func runSupplyCasesWhere(t *testing.T, dimension string, tests []probeCase, keep func(version, name string) bool) {
	t.Helper()
	var rubrics []*Rubric
	for _, v := range Versions() {
		r := mustLoad(t, v)
		if _, ok := r.Dimension(dimension); ok {
			rubrics = append(rubrics, r)
		}
	}
	if len(rubrics) == 0 {
		t.Fatalf("no rubric version has dimension %s", dimension)
	}
	for _, tt := range tests {
		for _, r := range rubrics {
			if !keep(r.Version, tt.name) {
				continue
			}
			t.Run(tt.name+"/v"+r.Version, func(t *testing.T) {
				b := supplyBundle()
				if tt.modify != nil {
					tt.modify(b)
				}
				got := outcomeOf(Evaluate(b, r), dimension)
				if tt.want.Findings == nil {
					tt.want.Findings = []string{}
				}
				if d := diff(tt.want.under(r.Version), got); d != "" {
					t.Errorf("%s (-want +got):\n%s", dimension, d)
				}
			})
		}
	}
}

func setSignal(name, state, reason string) func(*evidence.Bundle) {
	return func(b *evidence.Bundle) {
		if state == "missing" {
			delete(b.Signals, name)
			return
		}
		b.Signals[name] = evidence.Signal{State: evidence.State(state), Reason: reason, ThirdParty: true}
	}
}

func both(fns ...func(*evidence.Bundle)) func(*evidence.Bundle) {
	return func(b *evidence.Bundle) {
		for _, fn := range fns {
			fn(b)
		}
	}
}

func vuln(id, pkg, version string, score float64, direct bool, fixed ...string) evidence.Vulnerability {
	return evidence.Vulnerability{ID: id, Score: score, Package: pkg, Version: version, Direct: direct, Fixed: fixed}
}

func withVulns(vs ...evidence.Vulnerability) func(*evidence.Bundle) {
	return func(b *evidence.Bundle) { b.Supply.OSV.Vulnerabilities = vs }
}

// signalStates are the cases every supply-chain signal is run through:
// the state, and what it does to a dimension that needs the signal.
var signalStates = []struct {
	state string
	want  State
}{
	{"unavailable", StateZeroPoint},
	{"error", StateZeroPoint},
	{"not_assessed", StateDropped},
	{"missing", StateZeroPoint},
}

func TestVulnerabilityExposure(t *testing.T) {
	tests := []probeCase{
		{name: "no_advisories", want: outcome{State: StateScored, Score: 100}},
		{
			// 100 - 30 (direct high) - 15 (transitive high) - 2 (transitive low).
			name: "direct_and_transitive",
			modify: withVulns(
				vuln("GHSA-w48q-cv73-mx4w", "@modelcontextprotocol/sdk", "1.0.1", 7.5, true, "1.24.0"),
				vuln("GHSA-3xgq-45jj-v275", "cross-spawn", "7.0.3", 7.5, false, "7.0.5"),
				vuln("GHSA-v6h2-p8h4-qcjw", "brace-expansion", "1.1.11", 3.1, false, "1.1.12"),
			),
			want: outcome{State: StateScored, Score: 53, Findings: []string{
				"pkg.supply.osv.vulnerable @modelcontextprotocol/sdk@1.0.1",
				"pkg.supply.osv.vulnerable brace-expansion@1.1.11",
				"pkg.supply.osv.vulnerable cross-spawn@7.0.3",
			}},
		},
		{
			name: "critical_on_the_package_itself",
			modify: func(b *evidence.Bundle) {
				v := vuln("GHSA-aaaa-bbbb-cccc", "mcp-notes", "1.2.3", 9.8, true)
				v.Target = true
				withVulns(v)(b)
			},
			want: outcome{State: StateScored, Score: 50, Findings: []string{"pkg.supply.osv.vulnerable mcp-notes@1.2.3"}},
		},
		{
			// An unscored advisory takes the database's rating: moderate
			// is medium (10); with neither, low (5 direct, 2 transitive).
			name: "unscored_advisories",
			modify: func(b *evidence.Bundle) {
				rated := vuln("GHSA-rrrr-rrrr-rrrr", "a", "1.0.0", 0, true)
				rated.Severity = "MODERATE"
				withVulns(rated, vuln("GHSA-uuuu-uuuu-uuuu", "b", "1.0.0", 0, false))(b)
			},
			want: outcome{State: StateScored, Score: 88, Findings: []string{"pkg.supply.osv.vulnerable a@1.0.0", "pkg.supply.osv.vulnerable b@1.0.0"}},
		},
		{
			name: "alias_listed_twice_counts_once",
			modify: func(b *evidence.Bundle) {
				ghsa := vuln("GHSA-3xgq-45jj-v275", "cross-spawn", "7.0.3", 7.5, false, "7.0.5")
				ghsa.Aliases = []string{"CVE-2024-21538"}
				cve := vuln("CVE-2024-21538", "cross-spawn", "7.0.3", 7.5, false, "7.0.5")
				cve.Aliases = []string{"GHSA-3xgq-45jj-v275"}
				other := vuln("GHSA-3xgq-45jj-v275", "cross-spawn", "6.0.5", 7.5, false, "6.0.6")
				withVulns(cve, ghsa, other)(b)
			},
			want: outcome{State: StateScored, Score: 70, Findings: []string{
				"pkg.supply.osv.vulnerable cross-spawn@6.0.5", "pkg.supply.osv.vulnerable cross-spawn@7.0.3",
			}},
		},
		{
			name:   "malware_advisory_is_not_a_vulnerability",
			modify: withVulns(evidence.Vulnerability{ID: "MAL-2025-1234", Package: "mcp-notes-helper", Version: "1.0.0", Malware: true}),
			want:   outcome{State: StateScored, Score: 100},
		},
		{
			name: "clamped_at_zero",
			modify: withVulns(
				vuln("GHSA-1111-1111-1111", "a", "1.0.0", 9.1, true), vuln("GHSA-2222-2222-2222", "a", "1.0.0", 9.1, true),
				vuln("GHSA-3333-3333-3333", "a", "1.0.0", 9.1, true),
			),
			want: outcome{State: StateScored, Score: 0, Findings: []string{
				"pkg.supply.osv.vulnerable a@1.0.0", "pkg.supply.osv.vulnerable a@1.0.0", "pkg.supply.osv.vulnerable a@1.0.0",
			}},
		},
		{
			name:   "observed_without_osv_evidence",
			modify: func(b *evidence.Bundle) { b.Supply.OSV = nil },
			want:   outcome{State: StateZeroPoint, Score: 0},
		},
		{
			name: "evidence_of_a_signal_not_observed_is_not_read",
			modify: both(setSignal(evidence.SignalOSV, "unavailable", "api.osv.dev: 503"),
				withVulns(vuln("GHSA-1111-1111-1111", "a", "1.0.0", 9.1, true))),
			want: outcome{State: StateZeroPoint, Score: 0, Findings: []string{"pkg.supply.osv.unverified mcp-notes@1.2.3"}},
		},
	}
	for _, st := range signalStates {
		var findings []string
		if st.state != "not_assessed" {
			findings = []string{"pkg.supply.osv.unverified mcp-notes@1.2.3"}
		}
		tests = append(tests, probeCase{
			name:   "osv_" + st.state,
			modify: setSignal(evidence.SignalOSV, st.state, "why"),
			want:   outcome{State: st.want, Score: 0, Findings: findings},
		})
	}
	runSupplyCases(t, DimensionVulnerability, tests)
}

// TestVulnerableFinding checks the graded severity, message and evidence
// of one advisory finding.
func TestVulnerableFinding(t *testing.T) {
	b := supplyBundle()
	v := vuln("GHSA-w48q-cv73-mx4w", "@modelcontextprotocol/sdk", "1.0.1", 7.5, true, "1.24.0")
	v.Aliases = []string{"CVE-2025-66414"}
	v.Severity = "CVSS:3.1/AV:N/AC:H/PR:N/UI:R/S:U/C:H/I:H/A:H"
	v.Summary = "Model Context Protocol (MCP) TypeScript SDK does not enable DNS rebinding protection by default"
	t2 := vuln("GHSA-v6h2-p8h4-qcjw", "brace-expansion", "1.1.11", 3.1, false)
	withVulns(v, t2)(b)
	var got []Finding
	for _, f := range Evaluate(b, Current()).Findings {
		if f.Code == CodeOSVVulnerable {
			got = append(got, f)
		}
	}
	want := []Finding{
		{
			Code: CodeOSVVulnerable, Kind: KindFinding, Severity: SeverityHigh, Dimension: DimensionVulnerability,
			Subject: "@modelcontextprotocol/sdk@1.0.1",
			Message: "GHSA-w48q-cv73-mx4w (high, CVSS 7.5) affects @modelcontextprotocol/sdk@1.0.1, a direct dependency; fixed in 1.24.0",
			Evidence: "GHSA-w48q-cv73-mx4w; aliases CVE-2025-66414; CVSS 7.5 (CVSS:3.1/AV:N/AC:H/PR:N/UI:R/S:U/C:H/I:H/A:H); fixed: 1.24.0; " +
				"summary: Model Context Protocol (MCP) TypeScript SDK does not enable DNS rebinding protection by default",
		},
		{
			Code: CodeOSVVulnerable, Kind: KindFinding, Severity: SeverityLow, Dimension: DimensionVulnerability,
			Subject:  "brace-expansion@1.1.11",
			Message:  "GHSA-v6h2-p8h4-qcjw (low, CVSS 3.1) affects brace-expansion@1.1.11, a transitive dependency; no fixed version is listed",
			Evidence: "GHSA-v6h2-p8h4-qcjw; CVSS 3.1; fixed: none listed",
		},
	}
	if d := diff(want, got); d != "" {
		t.Errorf("findings (-want +got):\n%s", d)
	}
}

func TestAdvisorySeverity(t *testing.T) {
	vp := Current().Params.Supply.Vulnerability
	tests := []struct {
		score  float64
		rating string
		want   Severity
	}{
		{10, "", SeverityCritical}, {9, "", SeverityCritical}, {8.99, "", SeverityHigh}, {7, "", SeverityHigh},
		{6.9, "", SeverityMedium}, {4, "", SeverityMedium}, {3.9, "CRITICAL", SeverityLow}, {0.1, "", SeverityLow},
		{0, "CRITICAL", SeverityCritical}, {0, "high", SeverityHigh}, {0, "MODERATE", SeverityMedium},
		{0, "low", SeverityLow}, {0, "", SeverityLow}, {0, "CVSS:3.1/AV:N", SeverityLow},
	}
	for _, tt := range tests {
		if got, _ := vp.advisorySeverity(evidence.Vulnerability{Score: tt.score, Severity: tt.rating}); got != tt.want {
			t.Errorf("severity of score %v rating %q = %s, want %s", tt.score, tt.rating, got, tt.want)
		}
	}
}

func TestMalwareSignal(t *testing.T) {
	socketAlert := func(a evidence.SocketAlert) func(*evidence.Bundle) {
		return func(b *evidence.Bundle) { b.Supply.Socket.Alerts = append(b.Supply.Socket.Alerts, a) }
	}
	mal := evidence.Vulnerability{ID: "MAL-2025-4242", Package: "mcp-notes", Version: "1.2.3", Target: true, Direct: true, Malware: true}
	tests := []probeCase{
		{name: "neither_reports_malware", want: outcome{State: StateScored, Score: 100}},
		{
			name:   "socket_verdict_on_the_package",
			modify: func(b *evidence.Bundle) { b.Supply.Socket.Malware = true },
			want:   outcome{State: StateScored, Score: 0, Findings: []string{"pkg.supply.socket.malware mcp-notes@1.2.3"}},
		},
		{
			name: "socket_malware_alert_on_a_dependency",
			modify: both(func(b *evidence.Bundle) { b.Supply.Socket.Malware = true },
				socketAlert(evidence.SocketAlert{Type: "malware", Severity: "critical", Package: "ua-parser-js", Version: "0.7.29"})),
			want: outcome{State: StateScored, Score: 0, Findings: []string{"pkg.supply.socket.malware ua-parser-js@0.7.29"}},
		},
		{
			name:   "osv_malicious_package_advisory",
			modify: withVulns(mal),
			want:   outcome{State: StateScored, Score: 0, Findings: []string{"pkg.supply.osv.malware mcp-notes@1.2.3"}},
		},
		{
			name:   "mal_prefix_without_the_flag",
			modify: withVulns(evidence.Vulnerability{ID: "MAL-2024-1", Package: "x", Version: "1.0.0"}),
			want:   outcome{State: StateScored, Score: 0, Findings: []string{"pkg.supply.osv.malware x@1.0.0"}},
		},
		{
			name: "high_and_critical_alerts_are_reported_without_changing_the_score",
			modify: both(
				socketAlert(evidence.SocketAlert{Type: "didYouMean", Severity: "critical", Package: "mcp-notes", Version: "1.2.3", Target: true}),
				socketAlert(evidence.SocketAlert{Type: "obfuscatedFile", Severity: "high", Package: "left-padd", Version: "1.0.0"}),
				socketAlert(evidence.SocketAlert{Type: "networkAccess", Severity: "middle", Package: "pg", Version: "8.13.1"}),
			),
			want: outcome{State: StateScored, Score: 100, Findings: []string{
				"pkg.supply.socket.alert left-padd@1.0.0", "pkg.supply.socket.alert mcp-notes@1.2.3",
			}},
		},
		{
			name:   "no_socket_key",
			modify: setSignal(evidence.SignalSocket, "unavailable", "no Socket API key configured"),
			want:   outcome{State: StateZeroPoint, Score: 0, Findings: []string{"pkg.supply.socket.unverified mcp-notes@1.2.3"}},
		},
		{
			// The malware evidence is positive, so the dimension is scored
			// 0, not given its zero point.
			name:   "no_socket_key_but_osv_lists_malware",
			modify: both(setSignal(evidence.SignalSocket, "unavailable", "no Socket API key configured"), withVulns(mal)),
			want: outcome{State: StateScored, Score: 0, Findings: []string{
				"pkg.supply.osv.malware mcp-notes@1.2.3", "pkg.supply.socket.unverified mcp-notes@1.2.3",
			}},
		},
		{
			name: "osv_down_but_socket_flags_malware",
			modify: both(setSignal(evidence.SignalOSV, "unavailable", "api.osv.dev: 503"),
				func(b *evidence.Bundle) { b.Supply.Socket.Malware = true }),
			want: outcome{State: StateScored, Score: 0, Findings: []string{"pkg.supply.socket.malware mcp-notes@1.2.3"}},
		},
		{
			name: "socket_verdict_of_a_signal_not_observed_is_not_read",
			modify: both(setSignal(evidence.SignalSocket, "error", "response did not match the schema"),
				func(b *evidence.Bundle) { b.Supply.Socket.Malware = true }),
			want: outcome{State: StateZeroPoint, Score: 0, Findings: []string{"pkg.supply.socket.unverified mcp-notes@1.2.3"}},
		},
		{
			name:   "socket_observed_without_an_answer",
			modify: func(b *evidence.Bundle) { b.Supply.Socket = nil },
			want:   outcome{State: StateZeroPoint, Score: 0},
		},
		{
			name:   "osv_observed_without_a_result",
			modify: func(b *evidence.Bundle) { b.Supply.OSV = nil },
			want:   outcome{State: StateZeroPoint, Score: 0},
		},
	}
	for _, st := range signalStates {
		tests = append(tests,
			probeCase{
				name:   "socket_" + st.state,
				modify: setSignal(evidence.SignalSocket, st.state, "why"),
				want:   outcome{State: st.want, Score: 0, Findings: []string{"pkg.supply.socket.unverified mcp-notes@1.2.3"}},
			},
			probeCase{
				name:   "osv_" + st.state,
				modify: setSignal(evidence.SignalOSV, st.state, "why"),
				want:   outcome{State: st.want, Score: 0},
			})
	}
	runSupplyCases(t, DimensionMalware, tests)
}

// TestNoSocketKey pins the rule the method insists on: with no Socket key
// the malware signal is unverified, and malware_signal never scores 100.
func TestNoSocketKey(t *testing.T) {
	b := supplyBundle()
	b.Signals[evidence.SignalSocket] = evidence.Signal{State: evidence.StateUnavailable, Reason: "no Socket API key configured", ThirdParty: true}
	b.Supply.Socket = nil
	// The unverified marker of rubrics before v11 (from v11 it is not a
	// finding: TestUnverifiedIsNotAFinding).
	r := mustLoad(t, "10")
	malware, _ := r.Dimension(DimensionMalware)
	res := Evaluate(b, r)
	got := dim(res, DimensionMalware)
	want := DimensionScore{ID: DimensionMalware, Weight: malware.Weight, State: StateZeroPoint, Score: 0,
		Reason: "signal socket is unavailable: no Socket API key configured"}
	if d := diff(want, got); d != "" {
		t.Errorf("malware_signal (-want +got):\n%s", d)
	}
	var unverified []Finding
	for _, f := range res.Findings {
		if f.Code == CodeSocketUnverified {
			unverified = append(unverified, f)
		}
	}
	if len(unverified) != 1 || unverified[0].Severity != SeverityMedium ||
		unverified[0].Evidence != "signal socket is unavailable: no Socket API key configured" {
		t.Errorf("socket.unverified findings = %+v, want one, medium, quoting the signal", unverified)
	}
	// The observed signal must not produce the finding.
	for _, f := range Evaluate(supplyBundle(), r).Findings {
		if f.Code == CodeSocketUnverified {
			t.Errorf("socket.unverified fired with the socket signal observed: %+v", f)
		}
	}
}

func TestProvenance(t *testing.T) {
	noGitHubAsked := setSignal(evidence.SignalGitHub, "not_assessed", "no repository on GitHub declared")
	reg := func(fn func(r *evidence.RegistryMeta)) func(*evidence.Bundle) {
		return func(b *evidence.Bundle) { fn(b.Supply.Registry) }
	}
	gh := func(fn func(g *evidence.GitHubResult)) func(*evidence.Bundle) {
		return func(b *evidence.Bundle) { fn(b.Supply.GitHub) }
	}
	tests := []probeCase{
		{name: "traceable", want: outcome{State: StateScored, Score: 100}},
		{
			// 100 - 50 (no repository) - 30 (the GitHub namespace cannot
			// be the repository's owner's).
			name: "no_repository",
			modify: both(noGitHubAsked, reg(func(r *evidence.RegistryMeta) { r.RepositoryURL, r.Repository = "", nil }),
				func(b *evidence.Bundle) { b.Supply.GitHub = nil }),
			want: outcome{State: StateScored, Score: 20, Findings: []string{
				"pkg.supply.registry.mcpname_mismatch mcp-notes@1.2.3", "pkg.supply.registry.no_repository mcp-notes@1.2.3",
			}},
		},
		{
			name: "unparseable_repository",
			modify: both(noGitHubAsked, reg(func(r *evidence.RegistryMeta) {
				r.RepositoryURL, r.Repository, r.RepositoryError = "acme notes", nil, "not a URL or shorthand"
				r.MCPName = ""
			}), func(b *evidence.Bundle) { b.Supply.GitHub = nil }),
			want: outcome{State: StateScored, Score: 40, Findings: []string{
				"pkg.supply.registry.mcpname_absent mcp-notes@1.2.3", "pkg.supply.registry.repository_unparseable mcp-notes@1.2.3",
			}},
		},
		{
			// A repository elsewhere is not checked, so it earns no credit
			// for existing (-25); the reverse-DNS mcpName matches the
			// homepage's domain.
			name: "repository_on_another_host",
			modify: both(noGitHubAsked, reg(func(r *evidence.RegistryMeta) {
				r.RepositoryURL = "git+https://gitlab.com/acme/mcp-notes.git"
				r.Repository = &evidence.Repository{Host: "gitlab.com", Owner: "acme", Name: "mcp-notes"}
				r.MCPName = "dev.acme/notes"
			}), func(b *evidence.Bundle) { b.Supply.GitHub = nil }),
			want: outcome{State: StateScored, Score: 75},
		},
		{
			name:   "no_provenance",
			modify: reg(func(r *evidence.RegistryMeta) { r.Provenance = false }),
			want:   outcome{State: StateScored, Score: 70, Findings: []string{"pkg.supply.registry.no_provenance mcp-notes@1.2.3"}},
		},
		{
			name:   "mcpname_absent",
			modify: reg(func(r *evidence.RegistryMeta) { r.MCPName = "" }),
			want:   outcome{State: StateScored, Score: 90, Findings: []string{"pkg.supply.registry.mcpname_absent mcp-notes@1.2.3"}},
		},
		{
			name:   "mcpname_of_another_owner",
			modify: reg(func(r *evidence.RegistryMeta) { r.MCPName = "io.github.modelcontextprotocol/notes" }),
			want:   outcome{State: StateScored, Score: 70, Findings: []string{"pkg.supply.registry.mcpname_mismatch mcp-notes@1.2.3"}},
		},
		{
			name:   "repository_not_found",
			modify: gh(func(g *evidence.GitHubResult) { *g = evidence.GitHubResult{Requested: "acme/mcp-notes"} }),
			want:   outcome{State: StateScored, Score: 50, Findings: []string{"pkg.supply.github.not_found github.com/acme/mcp-notes"}},
		},
		{
			name:   "repository_disabled",
			modify: gh(func(g *evidence.GitHubResult) { g.Disabled = true }),
			want:   outcome{State: StateScored, Score: 50, Findings: []string{"pkg.supply.github.disabled github.com/acme/mcp-notes"}},
		},
		{
			name:   "repository_renamed",
			modify: gh(func(g *evidence.GitHubResult) { g.FullName = "acme-archive/mcp-notes" }),
			want:   outcome{State: StateScored, Score: 85, Findings: []string{"pkg.supply.github.renamed github.com/acme/mcp-notes"}},
		},
		{
			name:   "case_of_the_name_is_not_a_rename",
			modify: gh(func(g *evidence.GitHubResult) { g.FullName = "Acme/MCP-Notes" }),
			want:   outcome{State: StateScored, Score: 100},
		},
		{
			name: "clamped_at_zero",
			modify: both(reg(func(r *evidence.RegistryMeta) { r.Provenance, r.MCPName = false, "com.evil/notes" }),
				gh(func(g *evidence.GitHubResult) { *g = evidence.GitHubResult{Requested: "acme/mcp-notes"} })),
			want: outcome{State: StateScored, Score: 0, Findings: []string{
				"pkg.supply.github.not_found github.com/acme/mcp-notes", "pkg.supply.registry.mcpname_mismatch mcp-notes@1.2.3",
				"pkg.supply.registry.no_provenance mcp-notes@1.2.3",
			}},
		},
		{
			// Registry findings fire although GitHub did not answer.
			name: "github_unavailable_still_reports_the_metadata",
			modify: both(setSignal(evidence.SignalGitHub, "unavailable", "no GitHub token configured"),
				reg(func(r *evidence.RegistryMeta) { r.Provenance = false })),
			want: outcome{State: StateZeroPoint, Score: 0, Findings: []string{"pkg.supply.registry.no_provenance mcp-notes@1.2.3"}},
		},
		{
			// --skip github with a GitHub repository declared is an opt-out.
			name: "github_skipped_with_a_github_repository",
			modify: both(setSignal(evidence.SignalGitHub, "not_assessed", "--skip github"),
				reg(func(r *evidence.RegistryMeta) { r.MCPName = "" })),
			want: outcome{State: StateDropped, Score: 0, Findings: []string{"pkg.supply.registry.mcpname_absent mcp-notes@1.2.3"}},
		},
		{
			name: "metadata_unavailable_still_reports_github",
			modify: both(setSignal(evidence.SignalRegistryMeta, "unavailable", "registry: 503"),
				gh(func(g *evidence.GitHubResult) { *g = evidence.GitHubResult{Requested: "acme/mcp-notes"} })),
			want: outcome{State: StateZeroPoint, Score: 0, Findings: []string{"pkg.supply.github.not_found github.com/acme/mcp-notes"}},
		},
		{
			name:   "metadata_observed_without_metadata",
			modify: func(b *evidence.Bundle) { b.Supply.Registry = nil },
			want:   outcome{State: StateZeroPoint, Score: 0},
		},
		{
			name:   "github_observed_without_an_answer",
			modify: func(b *evidence.Bundle) { b.Supply.GitHub = nil },
			want:   outcome{State: StateZeroPoint, Score: 0},
		},
		{
			name:   "no_supply_evidence_at_all",
			modify: func(b *evidence.Bundle) { b.Supply = nil },
			want:   outcome{State: StateZeroPoint, Score: 0},
		},
	}
	for _, st := range signalStates {
		tests = append(tests,
			probeCase{name: "registry_metadata_" + st.state, modify: setSignal(evidence.SignalRegistryMeta, st.state, "why"), want: outcome{State: st.want, Score: 0}},
			probeCase{name: "github_" + st.state, modify: setSignal(evidence.SignalGitHub, st.state, "why"), want: outcome{State: st.want, Score: 0}},
		)
	}
	// How versions 3 to 10 read the repository and the mcpName; version
	// 11 reads them as TestProvenanceV11 says.
	untilV11 := map[string]bool{"no_repository": true, "repository_on_another_host": true, "mcpname_of_another_owner": true, "clamped_at_zero": true}
	runSupplyCasesWhere(t, DimensionProvenance, tests, func(v, name string) bool {
		return !untilV11[name] || compareVersions(v, repositoryLinksSince) < 0
	})
}

func TestMaintenanceSignal(t *testing.T) {
	reg := func(fn func(r *evidence.RegistryMeta)) func(*evidence.Bundle) {
		return func(b *evidence.Bundle) { fn(b.Supply.Registry) }
	}
	gh := func(fn func(g *evidence.GitHubResult)) func(*evidence.Bundle) {
		return func(b *evidence.Bundle) { fn(b.Supply.GitHub) }
	}
	tests := []probeCase{
		{name: "maintained", want: outcome{State: StateScored, Score: 100}},
		{
			name:   "deprecated",
			modify: reg(func(r *evidence.RegistryMeta) { r.Deprecated = "use @acme/notes instead" }),
			want:   outcome{State: StateScored, Score: 40, Findings: []string{"pkg.supply.registry.deprecated mcp-notes@1.2.3"}},
		},
		{
			name:   "archived",
			modify: gh(func(g *evidence.GitHubResult) { g.Archived = true }),
			want:   outcome{State: StateScored, Score: 60, Findings: []string{"pkg.supply.github.archived github.com/acme/mcp-notes"}},
		},
		{
			name:   "stale",
			modify: gh(func(g *evidence.GitHubResult) { g.PushedAt = at(-366 * day) }),
			want:   outcome{State: StateScored, Score: 75, Findings: []string{"pkg.supply.github.stale github.com/acme/mcp-notes"}},
		},
		{
			name:   "pushed_exactly_the_threshold_ago_is_not_stale",
			modify: gh(func(g *evidence.GitHubResult) { g.PushedAt = at(-365 * day) }),
			want:   outcome{State: StateScored, Score: 100},
		},
		{
			name:   "last_push_unknown_earns_no_credit",
			modify: gh(func(g *evidence.GitHubResult) { g.PushedAt = nil }),
			want:   outcome{State: StateScored, Score: 75},
		},
		{
			name: "published_hours_before_the_run",
			modify: reg(func(r *evidence.RegistryMeta) {
				r.PublishedAt = at(-5 * time.Hour)
			}),
			want: outcome{State: StateScored, Score: 80, Findings: []string{"pkg.supply.registry.recent_publish mcp-notes@1.2.3"}},
		},
		{
			name:   "published_exactly_the_threshold_before",
			modify: reg(func(r *evidence.RegistryMeta) { r.PublishedAt = at(-72 * time.Hour) }),
			want:   outcome{State: StateScored, Score: 100},
		},
		{
			name: "publish_time_from_the_target_when_the_metadata_lacks_it",
			modify: both(reg(func(r *evidence.RegistryMeta) { r.PublishedAt = nil }),
				func(b *evidence.Bundle) { b.Target.PublishedAt = at(-2 * time.Hour) }),
			// Recent (-20); the previous version's gap is measured from
			// the same time: 40 days minus 2 hours.
			want: outcome{State: StateScored, Score: 80, Findings: []string{"pkg.supply.registry.recent_publish mcp-notes@1.2.3"}},
		},
		{
			// Unknown publish time: no credit for recency (-20) nor for
			// the gap since the previous version (-10); no finding.
			name:   "publish_time_unknown",
			modify: reg(func(r *evidence.RegistryMeta) { r.PublishedAt = nil }),
			want:   outcome{State: StateScored, Score: 70},
		},
		{
			name:   "new_package",
			modify: reg(func(r *evidence.RegistryMeta) { r.FirstPublishedAt, r.PublishedAt = at(-10*day), at(-4*day) }),
			want:   outcome{State: StateScored, Score: 80, Findings: []string{"pkg.supply.registry.new_package mcp-notes@1.2.3"}},
		},
		{
			name:   "rapid_release",
			modify: reg(func(r *evidence.RegistryMeta) { r.PreviousPublishedAt = at(-30*day - 2*time.Hour) }),
			want:   outcome{State: StateScored, Score: 90, Findings: []string{"pkg.supply.registry.rapid_release mcp-notes@1.2.3"}},
		},
		{
			name: "first_version_has_no_previous",
			modify: reg(func(r *evidence.RegistryMeta) {
				r.PreviousVersion, r.PreviousPublishedAt, r.VersionCount = "", nil, 1
				r.FirstPublishedAt = r.PublishedAt
			}),
			want: outcome{State: StateScored, Score: 100},
		},
		{
			name:   "previous_time_unknown",
			modify: reg(func(r *evidence.RegistryMeta) { r.PreviousPublishedAt = nil }),
			want:   outcome{State: StateScored, Score: 90},
		},
		{
			// No repository: nothing to ask GitHub, so the dimension is
			// scored, and the unknown activity earns no credit.
			name: "no_repository",
			modify: both(setSignal(evidence.SignalGitHub, "not_assessed", "no repository declared"),
				reg(func(r *evidence.RegistryMeta) { r.RepositoryURL, r.Repository = "", nil }),
				func(b *evidence.Bundle) { b.Supply.GitHub = nil }),
			want: outcome{State: StateScored, Score: 75},
		},
		{
			name:   "repository_not_found",
			modify: gh(func(g *evidence.GitHubResult) { *g = evidence.GitHubResult{Requested: "acme/mcp-notes"} }),
			want:   outcome{State: StateScored, Score: 75},
		},
		{
			// Deprecated, archived and stale, a rapid release: clamped.
			name: "clamped_at_zero",
			modify: both(reg(func(r *evidence.RegistryMeta) {
				r.Deprecated = "unmaintained"
				r.PreviousPublishedAt = at(-30*day - time.Hour)
			}), gh(func(g *evidence.GitHubResult) { g.Archived, g.PushedAt = true, at(-800*day) })),
			want: outcome{State: StateScored, Score: 0, Findings: []string{
				"pkg.supply.github.archived github.com/acme/mcp-notes", "pkg.supply.github.stale github.com/acme/mcp-notes",
				"pkg.supply.registry.deprecated mcp-notes@1.2.3", "pkg.supply.registry.rapid_release mcp-notes@1.2.3",
			}},
		},
		{
			name: "github_unavailable_still_reports_the_metadata",
			modify: both(setSignal(evidence.SignalGitHub, "unavailable", "rate limited"),
				reg(func(r *evidence.RegistryMeta) { r.Deprecated = "use v2" })),
			want: outcome{State: StateZeroPoint, Score: 0, Findings: []string{"pkg.supply.registry.deprecated mcp-notes@1.2.3"}},
		},
	}
	for _, st := range signalStates {
		tests = append(tests,
			probeCase{name: "registry_metadata_" + st.state, modify: setSignal(evidence.SignalRegistryMeta, st.state, "why"), want: outcome{State: st.want, Score: 0}},
			probeCase{name: "github_" + st.state, modify: setSignal(evidence.SignalGitHub, st.state, "why"), want: outcome{State: st.want, Score: 0}},
		)
	}
	runSupplyCases(t, DimensionMaintenance, tests)
}

// TestSupplyTimesFollowTheRunDate moves the run date, and nothing else:
// the same evidence is recent under one date and not under the other.
func TestSupplyTimesFollowTheRunDate(t *testing.T) {
	b := supplyBundle()
	b.Supply.Registry.PublishedAt = at(-30 * time.Hour)
	if got := outcomeOf(Evaluate(b, Current()), DimensionMaintenance); got.Score != 80 {
		t.Errorf("published 30 hours before the run: %+v, want 80 with recent_publish", got)
	}
	b.Run.Date = b.Run.Date.Add(10 * day)
	if got := outcomeOf(Evaluate(b, Current()), DimensionMaintenance); got.Score != 100 || len(got.Findings) != 0 {
		t.Errorf("run ten days later: %+v, want 100 and no finding", got)
	}
}

func TestCheckMCPName(t *testing.T) {
	shared := Current().Params.Supply.Provenance.SharedHosts
	gh := &evidence.Repository{Host: "github.com", Owner: "Acme", Name: "mcp-notes"}
	tests := []struct {
		name, mcpName, homepage string
		repo                    *evidence.Repository
		consistent              bool
	}{
		{"github_owner", "io.github.acme/mcp-notes", "", gh, true},
		{"github_owner_case", "io.github.ACME/notes", "", gh, true},
		{"github_other_owner", "io.github.modelcontextprotocol/notes", "", gh, false},
		{"github_no_repository", "io.github.acme/notes", "", nil, false},
		{"github_repository_elsewhere", "io.github.acme/notes", "", &evidence.Repository{Host: "gitlab.com", Owner: "acme", Name: "x"}, false},
		{"domain_of_homepage", "dev.acme/notes", "https://acme.dev/notes", gh, true},
		{"homepage_with_www_and_port", "dev.acme/notes", "https://www.acme.dev:8443/", gh, true},
		{"namespace_subdomain_of_homepage", "dev.acme.mcp/notes", "https://acme.dev", gh, true},
		{"homepage_subdomain_of_namespace", "dev.acme/notes", "https://docs.acme.dev", gh, true},
		{"self_hosted_repository", "dev.acme/notes", "", &evidence.Repository{Host: "git.acme.dev", Owner: "a", Name: "b"}, true},
		{"homepage_on_github_says_nothing", "com.github/notes", "https://github.com/acme/mcp-notes#readme", gh, false},
		{"other_domain", "com.example/notes", "https://acme.dev", gh, false},
		{"lookalike_domain", "dev.acme/notes", "https://notacme.dev", gh, false},
		{"no_slash", "io.github.acme", "", gh, false},
		{"one_label", "acme/notes", "https://acme", gh, false},
		{"empty_label", "dev..acme/notes", "https://acme.dev", gh, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := &evidence.RegistryMeta{MCPName: tt.mcpName, Homepage: tt.homepage, Repository: tt.repo}
			why := checkMCPName(reg, shared)
			if (why == "") != tt.consistent {
				t.Errorf("checkMCPName(%q, homepage %q) = %q, want consistent %v", tt.mcpName, tt.homepage, why, tt.consistent)
			}
		})
	}
}

// TestSupplyFixture scores the realistic fixture: a deprecated version
// without provenance, published five hours after the previous one, whose
// archived repository was last pushed to a year and a half before the run;
// a vulnerable direct dependency and two transitive ones; a high Socket
// alert. The fixture was run with --skip dnssec, so rubric v4 scores it as
// v3 does, and says so in the provenance reason.
func TestSupplyFixture(t *testing.T) {
	res := Evaluate(loadBundle(t, "supply.bundle.json"), mustLoad(t, "3"))
	v4 := Evaluate(loadBundle(t, "supply.bundle.json"), mustLoad(t, "4"))
	if d := diff(res.Findings, v4.Findings); d != "" {
		t.Errorf("findings under v4 differ from v3 (-v3 +v4):\n%s", d)
	}
	for i, d := range res.Dimensions {
		if d.ID == DimensionProvenance {
			d.Reason += "; scored without DNSSEC: signal dnssec is not_assessed: disabled with --skip dnssec"
		}
		if x := diff(d, v4.Dimensions[i]); x != "" {
			t.Errorf("%s under v4 (-want +got):\n%s", d.ID, x)
		}
	}
	var codes []string
	for _, f := range res.Findings {
		if strings.HasPrefix(f.Code, "pkg.supply.") {
			codes = append(codes, string(f.Severity)+" "+f.Code+" "+f.Subject)
		}
	}
	wantCodes := []string{
		"medium pkg.supply.github.archived github.com/pgtools/mcp-server",
		"low pkg.supply.github.stale github.com/pgtools/mcp-server",
		"high pkg.supply.osv.vulnerable @modelcontextprotocol/sdk@1.0.1",
		"low pkg.supply.osv.vulnerable brace-expansion@1.1.11",
		"high pkg.supply.osv.vulnerable cross-spawn@7.0.3",
		"medium pkg.supply.registry.deprecated @pgtools/mcp-server@0.9.3",
		"low pkg.supply.registry.no_provenance @pgtools/mcp-server@0.9.3",
		"low pkg.supply.registry.rapid_release @pgtools/mcp-server@0.9.3",
		"high pkg.supply.socket.alert @modelcontextprotocol/sdk@1.0.1",
	}
	if d := diff(wantCodes, codes); d != "" {
		t.Errorf("supply findings (-want +got):\n%s", d)
	}
	want := map[string]DimensionScore{
		DimensionVulnerability: {ID: DimensionVulnerability, Weight: 10, State: StateScored, Score: 53,
			Reason: "advisories: 1 high direct (-30), 1 high transitive (-15), 1 low transitive (-2); 87 packages queried"},
		DimensionMalware: {ID: DimensionMalware, Weight: 10, State: StateScored, Score: 100,
			Reason: "Socket flags no package as malware (4 alerts in all) and OSV lists no malicious-package advisory for the 87 packages queried"},
		DimensionProvenance: {ID: DimensionProvenance, Weight: 5, State: StateScored, Score: 70,
			Reason: "no provenance attestation (-30)"},
		DimensionMaintenance: {ID: DimensionMaintenance, Weight: 5, State: StateScored, Score: 0,
			Reason: "version deprecated (-60); published 5 hours after the previous version (-10); repository archived (-40); last push 535 days before the run (-25)"},
	}
	for id, w := range want {
		if d := diff(w, dim(res, id)); d != "" {
			t.Errorf("%s (-want +got):\n%s", id, d)
		}
	}
}

// TestUnavailableFixture scores the fixture in which every third-party
// signal is unavailable: no keys, servers down. Every supply-chain
// dimension is at its zero point, the unverified codes fire, and nothing
// is credited.
func TestUnavailableFixture(t *testing.T) {
	// Rubric v10, the last that lists unverified markers among the
	// findings (TestUnverifiedIsNotAFinding covers v11).
	r := mustLoad(t, "10")
	res := Evaluate(loadBundle(t, "unavailable.bundle.json"), r)
	for _, id := range []string{DimensionVulnerability, DimensionMalware, DimensionProvenance, DimensionMaintenance} {
		d := dim(res, id)
		if d.State != StateZeroPoint || d.Score != 0 || !strings.Contains(d.Reason, "is unavailable") {
			t.Errorf("%s = %+v, want the zero point 0 with the unavailable signal as reason", id, d)
		}
	}
	var supply []string
	for _, f := range res.Findings {
		if strings.HasPrefix(f.Code, "pkg.supply.") {
			supply = append(supply, f.Code+" "+f.Subject)
		}
	}
	want := []string{
		"pkg.supply.osv.unverified @modelcontextprotocol/server-everything@2025.9.25",
		"pkg.supply.socket.unverified @modelcontextprotocol/server-everything@2025.9.25",
	}
	if d := diff(want, supply); d != "" {
		t.Errorf("supply findings (-want +got):\n%s", d)
	}
	// The composite counts the four zero points: the twelve other
	// dimensions as in the everything fixture, over 70 + 30.
	everything := Evaluate(loadBundle(t, "everything.bundle.json"), r)
	if d := diff(everything.Dimensions[:12], res.Dimensions[:12]); d != "" {
		t.Errorf("the non-supply dimensions differ from the everything fixture (-want +got):\n%s", d)
	}
	var sum, weights float64
	for _, d := range res.Dimensions {
		if d.State != StateDropped {
			sum += d.Weight * d.Score
			weights += d.Weight
		}
	}
	if want := round1(sum / weights); res.Score == nil || *res.Score != want {
		t.Errorf("score %v, want %v", res.Score, want)
	}
}

func TestLoadV3(t *testing.T) {
	v2, v3 := mustLoad(t, "2"), mustLoad(t, "3")
	data, err := os.ReadFile(filepath.Join("versions", "v3.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if v3.Hash != mustParse(t, data).Hash {
		t.Errorf("Hash = %s is not the file's", v3.Hash)
	}
	var total float64
	weights := map[string]float64{}
	var ids []string
	for _, d := range v3.Dimensions {
		total += d.Weight
		weights[d.ID] = d.Weight
		ids = append(ids, d.ID)
		if d.ZeroPoint != 0 || d.ZeroPointReason != "" {
			t.Errorf("%s: zero point %v (%q), want 0", d.ID, d.ZeroPoint, d.ZeroPointReason)
		}
	}
	if math.Abs(total-100) > 1e-9 {
		t.Errorf("v3 weights sum to %v, want 100", total)
	}
	var wantIDs []string
	for _, d := range v2.Dimensions {
		wantIDs = append(wantIDs, d.ID)
		// The v2 dimensions keep their proportions, scaled to 70.
		if got, want := weights[d.ID], d.Weight*0.7; math.Abs(got-want) > 1e-9 {
			t.Errorf("%s: v3 weight %v, want %v (v2 %v scaled to 70)", d.ID, got, want, d.Weight)
		}
		d3, _ := v3.Dimension(d.ID)
		if !slices.Equal(d.Signals, d3.Signals) {
			t.Errorf("%s: v3 signals %v, want v2's %v", d.ID, d3.Signals, d.Signals)
		}
	}
	wantIDs = append(wantIDs, DimensionVulnerability, DimensionMalware, DimensionProvenance, DimensionMaintenance)
	if d := diff(wantIDs, ids); d != "" {
		t.Errorf("dimensions (-want +got):\n%s", d)
	}
	for id, want := range map[string]struct {
		weight  float64
		signals []string
	}{
		DimensionVulnerability: {10, []string{"osv"}},
		DimensionMalware:       {10, []string{"socket", "osv"}},
		DimensionProvenance:    {5, []string{"registry.metadata", "github"}},
		DimensionMaintenance:   {5, []string{"registry.metadata", "github"}},
	} {
		d, _ := v3.Dimension(id)
		if d.Weight != want.weight || !slices.Equal(d.Signals, want.signals) {
			t.Errorf("%s: weight %v signals %v, want %v %v", id, d.Weight, d.Signals, want.weight, want.signals)
		}
	}
	// Every v2 code stays in v3 with the same meaning.
	for _, c := range v2.Codes {
		c3, ok := v3.Code(c.Code)
		if !ok || c3.Kind != c.Kind || c3.Severity != c.Severity || c3.Dimension != c.Dimension || c3.Graded {
			t.Errorf("%s: v3 has %+v, %v; want it as in v2", c.Code, c3, ok)
		}
	}
	if v2.Params.Supply != nil || mustLoad(t, "1").Params.Supply != nil {
		t.Error("v1 or v2 has supply parameters")
	}
	sp := v3.Params.Supply
	if sp == nil || sp.Maintenance.RecentPublishHours != 72 || sp.Maintenance.NewPackageDays != 30 ||
		sp.Maintenance.RapidReleaseHours != 24 || sp.Maintenance.StaleDays != 365 || sp.Vulnerability.CVSS.Critical != 9 ||
		sp.Malware.AlertMinSeverity != SeverityHigh {
		t.Errorf("v3 supply parameters = %+v", sp)
	}
}

func mustParse(t *testing.T, data []byte) *Rubric {
	t.Helper()
	r, err := parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSupplyCatalog checks the severities, dimensions and grading the
// supply-chain codes were specified with, and that their prefixes name
// the signal the evidence comes from.
func TestSupplyCatalog(t *testing.T) {
	want := map[string]struct {
		severity  Severity
		dimension string
		graded    bool
	}{
		CodeRegistryDeprecated:            {SeverityMedium, DimensionMaintenance, false},
		CodeRegistryNoRepository:          {SeverityMedium, DimensionProvenance, false},
		CodeRegistryRepositoryUnparseable: {SeverityMedium, DimensionProvenance, false},
		CodeRegistryNoProvenance:          {SeverityLow, DimensionProvenance, false},
		CodeRegistryMCPNameAbsent:         {SeverityLow, DimensionProvenance, false},
		CodeRegistryMCPNameMismatch:       {SeverityHigh, DimensionProvenance, false},
		CodeRegistryRecentPublish:         {SeverityMedium, DimensionMaintenance, false},
		CodeRegistryNewPackage:            {SeverityMedium, DimensionMaintenance, false},
		CodeRegistryRapidRelease:          {SeverityLow, DimensionMaintenance, false},
		CodeOSVVulnerable:                 {SeverityCritical, DimensionVulnerability, true},
		CodeOSVMalware:                    {SeverityCritical, DimensionMalware, false},
		CodeOSVUnverified:                 {SeverityInfo, DimensionVulnerability, false},
		CodeSocketMalware:                 {SeverityCritical, DimensionMalware, false},
		CodeSocketAlert:                   {SeverityCritical, DimensionMalware, true},
		CodeSocketUnverified:              {SeverityMedium, DimensionMalware, false},
		CodeGitHubNotFound:                {SeverityHigh, DimensionProvenance, false},
		CodeGitHubArchived:                {SeverityMedium, DimensionMaintenance, false},
		CodeGitHubDisabled:                {SeverityHigh, DimensionProvenance, false},
		CodeGitHubRenamed:                 {SeverityLow, DimensionProvenance, false},
		CodeGitHubStale:                   {SeverityLow, DimensionMaintenance, false},
	}
	r := mustLoad(t, "3")
	n := 0
	for _, c := range r.Codes {
		if strings.HasPrefix(c.Code, "pkg.supply.") {
			n++
		}
	}
	if n != len(want) {
		t.Errorf("v3 has %d pkg.supply codes, want %d", n, len(want))
	}
	sources := map[string][]string{
		"pkg.supply.registry.": {evidence.SignalRegistryMeta},
		"pkg.supply.osv.":      {evidence.SignalOSV},
		"pkg.supply.socket.":   {evidence.SignalSocket},
		"pkg.supply.github.":   {evidence.SignalGitHub},
	}
	for code, w := range want {
		def, ok := r.Code(code)
		if !ok {
			t.Errorf("%s missing", code)
			continue
		}
		if def.Severity != w.severity || def.Dimension != w.dimension || def.Kind != KindFinding || def.Graded != w.graded {
			t.Errorf("%s: %s %s %s graded %v, want finding %s %s graded %v", code, def.Kind, def.Severity, def.Dimension, def.Graded,
				w.severity, w.dimension, w.graded)
		}
		if strings.TrimSpace(def.Description) == "" || strings.TrimSpace(def.Remediation) == "" {
			t.Errorf("%s: description or remediation missing", code)
		}
		matched := false
		for prefix, signals := range sources {
			if strings.HasPrefix(code, prefix) {
				matched = true
				d, _ := r.Dimension(def.Dimension)
				for _, s := range signals {
					if !slices.Contains(d.Signals, s) {
						t.Errorf("%s: its dimension %s does not need signal %s", code, d.ID, s)
					}
				}
			}
		}
		if !matched {
			t.Errorf("%s: prefix names no evidence source", code)
		}
	}
}

// TestLoadRejectsBadV3 mutates the embedded v3 file and checks that
// validation catches each mutation.
func TestLoadRejectsBadV3(t *testing.T) {
	base, err := os.ReadFile(filepath.Join("versions", "v3.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	b := string(base)
	tests := []struct {
		name, data, want string
	}{
		{"supply_parameters_missing", b[:strings.Index(b, "  supply:\n")] + b[strings.Index(b, "\ndimensions:")+1:], "parameters.supply: missing"},
		{"cvss_out_of_order", strings.Replace(b, "        high: 7\n        medium: 4\n", "        high: 3\n        medium: 4\n", 1), "vulnerability.cvss: want 0 < medium < high < critical <= 10"},
		{"negative_penalty", strings.Replace(b, "deprecated_penalty: 60", "deprecated_penalty: -60", 1), "maintenance.deprecated_penalty: -60 must be 0 or more"},
		{"zero_hours", strings.Replace(b, "recent_publish_hours: 72", "recent_publish_hours: 0", 1), "maintenance.recent_publish_hours: 0 must be at least 1"},
		{"bad_alert_severity", strings.Replace(b, "alert_min_severity: high", "alert_min_severity: severe", 1), `malware.alert_min_severity: "severe"`},
		{"shared_host_url", strings.Replace(b, "shared_hosts: [github.com,", "shared_hosts: [https://github.com,", 1), `shared_hosts: "https://github.com" is not a lower-case host name`},
		{"misspelt_parameter", strings.Replace(b, "stale_days:", "stale_day:", 1), "field stale_day not found"},
		{"graded_flag_removed", strings.Replace(b, "    graded: true\n    dimension: vulnerability_exposure\n", "    dimension: vulnerability_exposure\n", 1),
			"code pkg.supply.osv.vulnerable: its probe grades each finding's severity, so the catalog must mark it graded"},
		{"graded_flag_added", strings.Replace(b, "    severity: critical\n    dimension: malware_signal\n    description: >-\n      OSV lists", "    severity: critical\n    graded: true\n    dimension: malware_signal\n    description: >-\n      OSV lists", 1),
			"code pkg.supply.osv.malware: catalogued as graded, but its probe gives it the catalog severity"},
		{"graded_measurement", strings.Replace(b, "    kind: measurement\n    severity: info\n    dimension: schema_completeness\n", "    kind: measurement\n    severity: info\n    graded: true\n    dimension: schema_completeness\n", 1),
			"a measurement cannot be graded"},
		{"dimension_without_a_signal_its_probe_reads", strings.Replace(b, "signals: [socket, osv]", "signals: [socket]", 1),
			`"malware_signal": the probe reads signal "osv", which the dimension does not name`},
		{"unknown_signal", strings.Replace(b, "signals: [registry.metadata, github]", "signals: [registry.meta, github]", 1), `unknown signal "registry.meta"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.data == b {
				t.Fatal("the mutation changed nothing")
			}
			_, err := parse([]byte(tt.data))
			if err == nil {
				t.Fatalf("parse succeeded, want an error containing %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("parse error:\n%v\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

// TestV1V2Golden evaluates the fixtures under rubrics v1 and v2 and
// compares with the results the released code gave (generated before
// rubric v3 existed, and never rewritten): adding v3 and its probes must
// not change a single finding, reason or score under the older rubrics.
func TestV1V2Golden(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "v1_v2.results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var golden map[string]json.RawMessage
	if err := json.Unmarshal(data, &golden); err != nil {
		t.Fatal(err)
	}
	if len(golden) != 16 {
		t.Fatalf("golden holds %d results, want 16", len(golden))
	}
	for key, want := range golden {
		t.Run(key, func(t *testing.T) {
			name, version, _ := strings.Cut(key, "/v")
			var b *evidence.Bundle
			if base, ok := strings.CutSuffix(name, "+rich_behavior"); ok {
				b = loadBundle(t, base+".bundle.json")
				watched(func(bh *evidence.Behavior) { *bh = *richBehavior() })(b)
			} else {
				b = loadBundle(t, name+".bundle.json")
			}
			got, err := json.Marshal(Evaluate(b, mustLoad(t, version)))
			if err != nil {
				t.Fatal(err)
			}
			var w, g any
			if err := json.Unmarshal(want, &w); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatal(err)
			}
			if d := diff(w, g); d != "" {
				t.Errorf("result under rubric v%s differs from the released one (-want +got):\n%s", version, d)
			}
		})
	}
}

// TestSupplyUnserved: facts a stripping mirror did not serve raise no
// finding in either direction, and earn no credit.
func TestSupplyUnserved(t *testing.T) {
	b := supplyBundle()
	b.Supply.Registry.Provenance = false
	b.Supply.Registry.Unserved = []string{"provenance", "maintainers", "deprecation"}
	res := Evaluate(b, Current())
	for _, f := range res.Findings {
		if f.Code == CodeRegistryNoProvenance || f.Code == CodeRegistryDeprecated {
			t.Errorf("unserved fact raised %s", f.Code)
		}
	}
	full := Evaluate(supplyBundle(), Current())
	for _, id := range []string{DimensionProvenance, DimensionMaintenance} {
		got, served := dim(res, id), dim(full, id)
		if got.Score >= served.Score || !strings.Contains(got.Reason, "not served by the registry") {
			t.Errorf("%s: unserved facts scored %v (%q), served %v: unserved must earn no credit and say why", id, got.Score, got.Reason, served.Score)
		}
	}
}
