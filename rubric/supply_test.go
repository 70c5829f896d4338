package rubric

import (
	"encoding/json"
	"os"
	"path/filepath"
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
