package rubric

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/evidence"
)

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
