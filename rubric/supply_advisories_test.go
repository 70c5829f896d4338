package rubric

import (
	"testing"

	"github.com/verifymcp/verifymcp/evidence"
)

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
