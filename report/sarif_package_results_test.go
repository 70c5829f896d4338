package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/rubric"
)

func TestSARIFLevels(t *testing.T) {
	r := sarifRubric0(t)
	levels := map[rubric.Severity]string{
		rubric.SeverityCritical: "error", rubric.SeverityHigh: "error", rubric.SeverityMedium: "warning",
		rubric.SeverityLow: "note", rubric.SeverityInfo: "note",
	}
	// A graded code's findings take their own severity, whatever the
	// catalog's: one finding per severity of pkg.supply.osv.vulnerable.
	rep := buildSARIF(t, "supply")
	rep.Findings = nil
	for _, s := range rubric.Severities() {
		rep.Findings = append(rep.Findings, Finding{Code: "pkg.supply.osv.vulnerable", Kind: "finding", Severity: string(s),
			Dimension: "known_vulnerabilities", Subject: "dep@1.0.0", Message: "advisory of severity " + string(s)})
	}
	v := 92.3
	rep.Findings = append(rep.Findings, Finding{Code: "pkg.contract.description.coverage", Kind: "measurement", Severity: "info",
		Dimension: "description_coverage", Message: "12 of 13 tools described", Evidence: "92.3%", Value: &v})
	data := writeSARIF(t, rep)
	checkSARIF(t, "levels", data)
	log := decodeSARIF(t, data)
	run := log.Runs[0]
	for i, s := range rubric.Severities() {
		if res := run.Results[i]; res.Level != levels[s] || res.Kind != "" {
			t.Errorf("%s finding: level %q kind %q, want %q", s, res.Level, res.Kind, levels[s])
		}
	}
	// A measurement is informational: level none, as SARIF requires of a
	// result that is not a failure.
	if res := run.Results[len(run.Results)-1]; res.Kind != "informational" || res.Level != "none" || res.Props["value"] != 92.3 {
		t.Errorf("measurement: kind %q level %q value %v", res.Kind, res.Level, res.Props["value"])
	}
	for i, c := range r.Codes {
		rule := run.Tool.Driver.Rules[i]
		want := levels[c.Severity]
		if rule.Default.Level != want {
			t.Errorf("rule %s (%s): default level %q, want %q", c.Code, c.Severity, rule.Default.Level, want)
		}
		if m, _ := rule.Props["measurement"].(bool); m != (c.Kind == rubric.KindMeasurement) {
			t.Errorf("rule %s (%s): measurement property %v", c.Code, c.Kind, rule.Props["measurement"])
		}
	}
}

// A finding's fingerprint is its code, package name and subject: the same
// across versions and runs of the package, distinct between packages and
// within a run.
func TestSARIFFingerprints(t *testing.T) {
	rep := buildSARIF(t, "everything")
	next := rep
	next.Target.Version = "2026.1.1"
	next.Run.ID, next.Run.Date = "01JZZZZZZZZZZZZZZZZZZZZZZZ", "2027-01-01T00:00:00Z"
	next.Findings = append([]Finding(nil), rep.Findings...)
	for i, f := range next.Findings {
		f.Subject = strings.ReplaceAll(f.Subject, "@"+rep.Target.Version, "@"+next.Target.Version)
		f.Evidence = strings.ReplaceAll(f.Evidence, rep.Target.Version, next.Target.Version)
		f.Message += " (again)"
		next.Findings[i] = f
	}
	other := rep
	other.Target.Name = "@modelcontextprotocol/server-other"
	fps := func(rep Report) []map[string]string {
		var out []map[string]string
		for _, res := range decodeSARIF(t, writeSARIF(t, rep)).Runs[0].Results {
			out = append(out, res.Fingerprints)
		}
		return out
	}
	a, b, c := fps(rep), fps(next), fps(other)
	seen := map[string]bool{}
	for i := range a {
		for _, k := range []string{FingerprintKey, FingerprintKeyGitHub} {
			if a[i][k] == "" || a[i][k] != b[i][k] {
				t.Errorf("result %d (%s): %s %q at %s, %q at %s", i, rep.Findings[i].Code, k, a[i][k], rep.Target.Version, b[i][k], next.Target.Version)
			}
			if a[i][k] == c[i][k] {
				t.Errorf("result %d: %s %q for two packages", i, k, a[i][k])
			}
			if seen[k+a[i][k]] {
				t.Errorf("result %d: %s %q twice in a run", i, k, a[i][k])
			}
			seen[k+a[i][k]] = true
		}
	}
}

func TestSARIFSuppression(t *testing.T) {
	for _, tc := range []struct {
		name, file, root string
		uri              string // "" for none: the file is named in properties
	}{
		{"relative", ".verifymcp-ignore.yaml", "", ".verifymcp-ignore.yaml"},
		{"under the root", "/work/repo/ci/verifymcp ignore.yaml", "/work/repo", "ci/verifymcp%20ignore.yaml"},
		{"outside the root", "/home/dev/.verifymcp-ignore.yaml", "/work/repo", ""},
		{"absolute, no root", "/work/repo/.verifymcp-ignore.yaml", "", ""},
		{"relative, leaving", "../other/.verifymcp-ignore.yaml", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := buildSARIF(t, "everything")
			rep.Findings[0].Ignored = &Ignored{Reason: "tracked upstream", By: "dev@example.com", Expires: "2027-01-01", File: tc.file, Line: 3}
			data := writeSARIFWith(t, rep, SARIFOptions{Root: tc.root})
			checkSARIF(t, "suppressed", data)
			res := decodeSARIF(t, data).Runs[0].Results
			if len(res[0].Suppressions) != 1 || res[0].Suppressions[0]["kind"] != "external" || res[0].Suppressions[0]["status"] != "accepted" ||
				!strings.Contains(res[0].Suppressions[0]["justification"].(string), "tracked upstream") {
				t.Fatalf("suppressions = %v", res[0].Suppressions)
			}
			sup := res[0].Suppressions[0]
			loc, _ := sup["location"].(map[string]any)
			props, _ := sup["properties"].(map[string]any)
			if tc.uri != "" {
				b, _ := json.Marshal(loc)
				if want := fmt.Sprintf(`{"physicalLocation":{"artifactLocation":{"uri":%q},"region":{"startLine":3}}}`, tc.uri); string(b) != want {
					t.Errorf("location = %s, want %s", b, want)
				}
				if props != nil {
					t.Errorf("properties = %v, want none", props)
				}
			} else if len(loc) != 0 || props["file"] != tc.file || props["line"] != 3.0 {
				t.Errorf("location %v properties %v, want an empty one and the file %s line 3", loc, props, tc.file)
			}
			if len(res[1].Suppressions) != 0 {
				t.Errorf("a finding not ignored is suppressed: %v", res[1].Suppressions)
			}
		})
	}
}

func TestWriteSARIFFormat(t *testing.T) {
	rep := buildSARIF(t, "hostile")
	var got bytes.Buffer
	if err := Write(&got, FormatSARIF, rep); err != nil {
		t.Fatal(err)
	}
	if d := textEqual(writeSARIF(t, rep), got.Bytes()); d != "" {
		t.Errorf("Write(sarif) differs from WriteSARIF:\n%s", d)
	}
	unknown := rep
	unknown.Rubric.Version = "99"
	if err := Write(&bytes.Buffer{}, FormatSARIF, unknown); err == nil || !strings.Contains(err.Error(), "unknown version") {
		t.Errorf("Write(sarif) of an unknown rubric version: %v", err)
	}
	if err := Write(&bytes.Buffer{}, FormatSARIF, Report{}); err == nil {
		t.Error("Write(sarif) of a report without a rubric = nil error")
	}
	// A report whose hash is not the embedded rubric's is refused.
	moved := rep
	moved.Rubric.Hash = "sha256:0000"
	if err := WriteSARIF(&bytes.Buffer{}, moved, nil, SARIFOptions{}); err == nil {
		t.Error("WriteSARIF of a report of another rubric hash = nil error")
	}
}
