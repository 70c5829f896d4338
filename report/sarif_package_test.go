package report

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/Masterminds/semver/v3"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/verifymcp/verifymcp/rubric"
)

// sarifFixtures are the bundles whose package SARIF is kept as a golden
// file, testdata/NAME.sarif.
var sarifFixtures = []string{"everything", "hostile", "judge", "behavior", "crashed"}

// sarifRubricVersion is the rubric the SARIF tests score the fixtures
// under: a released one, so that the goldens move with the SARIF writer,
// not with the rubric in the making.
const sarifRubricVersion = "11"

// sarifRubric0 is the rubric of sarifRubricVersion.
func sarifRubric0(t *testing.T) *rubric.Rubric {
	t.Helper()
	r, err := rubric.Load(sarifRubricVersion)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// buildSARIF builds the report of a fixture the way build does, under
// sarifRubricVersion.
func buildSARIF(t *testing.T, name string) Report {
	t.Helper()
	b, r := loadBundle(t, name), sarifRubric0(t)
	return Build(b, r, rubric.Evaluate(b, r))
}

var (
	sarifSchemaOnce sync.Once
	sarifSchema     *jsonschema.Schema
	sarifSchemaErr  error
)

// compileSARIFSchema compiles the vendored official SARIF 2.1.0 schema
// (draft-04), with its formats (uri, uri-reference, date-time) asserted.
func compileSARIFSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	sarifSchemaOnce.Do(func() {
		data, err := os.ReadFile(filepath.Join("schema", "sarif-2.1.0.json"))
		if err != nil {
			sarifSchemaErr = err
			return
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			sarifSchemaErr = err
			return
		}
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		if err := c.AddResource("sarif-2.1.0.json", doc); err != nil {
			sarifSchemaErr = err
			return
		}
		sarifSchema, sarifSchemaErr = c.Compile("sarif-2.1.0.json")
	})
	if sarifSchemaErr != nil {
		t.Fatalf("SARIF schema: %v", sarifSchemaErr)
	}
	return sarifSchema
}

// checkSARIF validates data against the SARIF schema and GitHub code
// scanning's documented limits.
func checkSARIF(t *testing.T, name string, data []byte) {
	t.Helper()
	if err := validate(t, compileSARIFSchema(t), data); err != nil {
		t.Errorf("%s does not validate against the SARIF 2.1.0 schema: %v", name, err)
	}
	for _, p := range githubLimits(t, data) {
		t.Errorf("%s: %s", name, p)
	}
}

// writeSARIF writes rep's SARIF with no options: every result at its
// package's stand-in path, whatever the machine.
func writeSARIF(t *testing.T, rep Report) []byte {
	t.Helper()
	return writeSARIFWith(t, rep, SARIFOptions{})
}

func writeSARIFWith(t *testing.T, rep Report, o SARIFOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteSARIF(&buf, rep, nil, o); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestPackageSARIFGolden(t *testing.T) {
	for _, name := range sarifFixtures {
		t.Run(name, func(t *testing.T) {
			got := writeSARIF(t, buildSARIF(t, name))
			checkSARIF(t, "output", got)
			golden(t, name+".sarif", got, jsonEqual)
			committed, err := os.ReadFile(filepath.Join("testdata", name+".sarif"))
			if err != nil {
				t.Fatal(err)
			}
			checkSARIF(t, "golden "+name+".sarif", committed)
		})
	}
}

// The config report's SARIF, written by WriteConfig (placed from this
// machine's working directory and home) and by WriteConfigSARIF with a
// file in the repository and one outside it, meets the same bars.
func TestConfigSARIFValidates(t *testing.T) {
	checkSARIF(t, "config output", writeConfig(t, FormatSARIF, configReport(t)))
	checkSARIF(t, "config output with a root", writeConfigSARIF(t, configReport(t), configSARIFOptions))
	checkSARIF(t, "config output with no root", writeConfigSARIF(t, configReport(t), SARIFOptions{}))
	// A file named relative to the working directory stays relative.
	in := configInput()
	for i := range in.Findings {
		in.Findings[i].File = "./.cursor/mcp.json"
	}
	r, err := NewConfigReport(in)
	if err != nil {
		t.Fatal(err)
	}
	data := writeConfigSARIF(t, r, SARIFOptions{})
	checkSARIF(t, "config output of a relative file", data)
	for i, res := range decodeSARIF(t, data).Runs[0].Results {
		if ph := res.Locations[0].Physical; ph == nil || ph.Artifact.URI != ".cursor/mcp.json" {
			t.Errorf("result %d: physical location %+v, want .cursor/mcp.json", i, ph)
		}
	}
	committed, err := os.ReadFile(filepath.Join("testdata", "config.sarif.json"))
	if err != nil {
		t.Fatal(err)
	}
	checkSARIF(t, "golden config.sarif.json", committed)
}

// sarifLog is the part of a SARIF log the tests read.
type sarifLog struct {
	Runs []struct {
		Tool struct {
			Driver struct {
				Name            string `json:"name"`
				Version         string `json:"version"`
				SemanticVersion string `json:"semanticVersion"`
				Rules           []struct {
					ID      string                 `json:"id"`
					Default struct{ Level string } `json:"defaultConfiguration"`
					Props   map[string]any         `json:"properties"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		AutomationDetails struct {
			ID string `json:"id"`
		} `json:"automationDetails"`
		LogicalLocations []sarifLogical `json:"logicalLocations"`
		Results          []struct {
			RuleID       string                `json:"ruleId"`
			RuleIndex    int                   `json:"ruleIndex"`
			Kind         string                `json:"kind"`
			Level        string                `json:"level"`
			Message      struct{ Text string } `json:"message"`
			Fingerprints map[string]string     `json:"partialFingerprints"`
			Locations    []sarifLocation       `json:"locations"`
			Related      []sarifLocation       `json:"relatedLocations"`
			Suppressions []map[string]any      `json:"suppressions"`
			Props        map[string]any        `json:"properties"`
		} `json:"results"`
		Properties map[string]any `json:"properties"`
	} `json:"runs"`
}

type sarifLocation struct {
	Logical  []sarifLogical `json:"logicalLocations"`
	Physical *struct {
		Artifact struct {
			URI  string `json:"uri"`
			Base string `json:"uriBaseId"`
		} `json:"artifactLocation"`
		Region struct {
			StartLine int `json:"startLine"`
		} `json:"region"`
	} `json:"physicalLocation"`
	Message struct{ Text string } `json:"message"`
}

type sarifLogical struct {
	Index  *int   `json:"index"`
	Parent *int   `json:"parentIndex"`
	Name   string `json:"name"`
	FQN    string `json:"fullyQualifiedName"`
	Kind   string `json:"kind"`
}

func decodeSARIF(t *testing.T, data []byte) sarifLog {
	t.Helper()
	var log sarifLog
	if err := json.Unmarshal(data, &log); err != nil {
		t.Fatal(err)
	}
	if len(log.Runs) != 1 {
		t.Fatalf("%d runs, want 1", len(log.Runs))
	}
	return log
}

func TestPackageSARIFContent(t *testing.T) {
	rep := buildSARIF(t, "everything")
	r := sarifRubric0(t)
	log := decodeSARIF(t, writeSARIF(t, rep))
	run := log.Runs[0]
	d := run.Tool.Driver
	if d.Name != "verifymcp" || d.Version != rep.Tool.Version || d.SemanticVersion != rep.Tool.Version {
		t.Errorf("driver %q %q %q", d.Name, d.Version, d.SemanticVersion)
	}
	if len(d.Rules) != len(r.Codes) {
		t.Fatalf("%d rules, want one per code of rubric v%s (%d)", len(d.Rules), r.Version, len(r.Codes))
	}
	for i, c := range r.Codes {
		rule := d.Rules[i]
		if rule.ID != c.Code || rule.Props["dimension"] != c.Dimension || rule.Props["kind"] != string(c.Kind) || rule.Props["severity"] != string(c.Severity) {
			t.Errorf("rule %d = %+v, want %s", i, rule, c.Code)
		}
	}
	if want := "verifymcp/" + rep.Target.Name + "/" + rep.Run.ID; run.AutomationDetails.ID != want {
		t.Errorf("automationDetails.id = %q, want %q", run.AutomationDetails.ID, want)
	}
	p := run.Properties
	if p["rubric_version"] != rep.Rubric.Version || p["rubric_hash"] != rep.Rubric.Hash || p["run_date"] != rep.Run.Date ||
		p["tool_version"] != rep.Tool.Version || p["notice"] != rep.Notice {
		t.Errorf("run properties = %v", p)
	}
	if score, ok := p["score"].(float64); !ok || rep.Score == nil || score != *rep.Score {
		t.Errorf("score = %v, want %v", p["score"], rep.Score)
	}
	signals, _ := p["signals"].(map[string]any)
	if len(signals) != len(rep.Signals) {
		t.Errorf("%d signals, want %d", len(signals), len(rep.Signals))
	}
	for name, s := range rep.Signals {
		got, _ := signals[name].(map[string]any)
		if got["state"] != s.State || (s.Reason != "" && got["reason"] != s.Reason) {
			t.Errorf("signal %s = %v, want %s %q", name, got, s.State, s.Reason)
		}
	}
	if len(run.Results) != len(rep.Findings) {
		t.Fatalf("%d results for %d findings", len(run.Results), len(rep.Findings))
	}
	for i, res := range run.Results {
		f := rep.Findings[i]
		if res.RuleID != f.Code || d.Rules[res.RuleIndex].ID != f.Code {
			t.Errorf("result %d: rule %s (index %d), want %s", i, res.RuleID, res.RuleIndex, f.Code)
		}
		if !strings.HasPrefix(res.Message.Text, f.Message) || !strings.Contains(res.Message.Text, "Evidence: "+f.Evidence) {
			t.Errorf("result %d message %q lacks the message or the evidence", i, res.Message.Text)
		}
		pkg := run.LogicalLocations[*res.Locations[0].Logical[0].Index]
		for pkg.Parent != nil {
			pkg = run.LogicalLocations[*pkg.Parent]
		}
		if pkg.FQN != "npm:@modelcontextprotocol/server-everything@2025.9.25" || pkg.Kind != "module" {
			t.Errorf("result %d: outermost logical location %+v, want the package", i, pkg)
		}
	}
}

// resultsBy returns the results of code, in order.
func resultsBy(log sarifLog, code string) []int {
	var out []int
	for i, res := range log.Runs[0].Results {
		if res.RuleID == code {
			out = append(out, i)
		}
	}
	return out
}

func TestPackageSARIFLocations(t *testing.T) {
	type want struct {
		code, subject string
		logical       []string // kind:fullyQualifiedName, innermost first
		uri, base     string   // the related location, "" for none
	}
	for _, tc := range []struct {
		fixture string
		at      string // the stand-in path every result stands at
		want    []want
	}{
		{"everything", ".verifymcp/npm/@modelcontextprotocol/server-everything", []want{
			{"pkg.drift.parameter_added", "tool:printEnv", []string{
				"member:npm:@modelcontextprotocol/server-everything@2025.9.25/tool:printEnv/properties/filter",
				"function:npm:@modelcontextprotocol/server-everything@2025.9.25/tool:printEnv",
				"module:npm:@modelcontextprotocol/server-everything@2025.9.25"}, "", ""},
			{"pkg.contract.capability.environment", "printEnv", []string{
				"function:npm:@modelcontextprotocol/server-everything@2025.9.25/tool:printEnv",
				"module:npm:@modelcontextprotocol/server-everything@2025.9.25"}, "", ""},
			{"pkg.session.spec.outdated", "", []string{"module:npm:@modelcontextprotocol/server-everything@2025.9.25"}, "", ""},
		}},
		{"hostile", ".verifymcp/npm/mcp-fs-helper", []want{
			{"pkg.contract.capability.arbitrary_path", "deleteFile", []string{
				"member:npm:mcp-fs-helper@1.0.7/tool:deleteFile/properties/path",
				"function:npm:mcp-fs-helper@1.0.7/tool:deleteFile",
				"module:npm:mcp-fs-helper@1.0.7"}, "", ""},
			// The bidirectional override is escaped, never shown as is.
			{"pkg.contract.unicode.bidi", "sync\u202egnp.exe", []string{
				`function:npm:mcp-fs-helper@1.0.7/tool:sync\u202egnp.exe`, "module:npm:mcp-fs-helper@1.0.7"}, "", ""},
			{"pkg.install.scripts.present", "fs-native-watch", []string{"module:npm:mcp-fs-helper@1.0.7"},
				"node_modules/fs-native-watch/package.json", BaseInstallTree},
		}},
		{"crashed", ".verifymcp/npm/@acme/mcp-github-tools", []want{
			{"pkg.install.scripts.present", "@acme/mcp-github-tools", []string{"module:npm:@acme/mcp-github-tools@2.3.0"}, "package.json", BasePackageRoot},
		}},
		{"behavior", ".verifymcp/npm/mcp-server-filesystem-pro", []want{
			{"pkg.behavior.file.write", "run", []string{"module:npm:mcp-server-filesystem-pro@2.1.4"}, ".cache/fs-pro/state.json", BaseSandboxHome},
			{"pkg.behavior.file.sensitive_write", "scripts:node-telemetry-helper", []string{"module:npm:mcp-server-filesystem-pro@2.1.4"},
				".config/autostart/telemetry-helper.desktop", BaseSandboxHome},
			{"pkg.install.scripts.present", "node-telemetry-helper", []string{"module:npm:mcp-server-filesystem-pro@2.1.4"},
				"node_modules/node-telemetry-helper/package.json", BaseInstallTree},
		}},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			rep := buildSARIF(t, tc.fixture)
			log := decodeSARIF(t, writeSARIF(t, rep))
			run := log.Runs[0]
			for _, w := range tc.want {
				found := false
				for _, i := range resultsBy(log, w.code) {
					if rep.Findings[i].Subject != w.subject {
						continue
					}
					found = true
					res := run.Results[i]
					if len(res.Locations) != 1 || len(res.Locations[0].Logical) != 1 {
						t.Fatalf("%s %s: locations %+v", w.code, w.subject, res.Locations)
					}
					var chain []string
					for l := &res.Locations[0].Logical[0]; ; {
						chain = append(chain, l.Kind+":"+l.FQN)
						if l.Index != nil && run.LogicalLocations[*l.Index].FQN != l.FQN {
							t.Errorf("%s: logical location %d is %s in the run, %s in the result", w.code, *l.Index, run.LogicalLocations[*l.Index].FQN, l.FQN)
						}
						if l.Parent == nil {
							if l.Index == nil || run.LogicalLocations[*l.Index].Parent == nil {
								break
							}
							l = &run.LogicalLocations[*run.LogicalLocations[*l.Index].Parent]
							continue
						}
						l = &run.LogicalLocations[*l.Parent]
					}
					if strings.Join(chain, " < ") != strings.Join(w.logical, " < ") {
						t.Errorf("%s %q: logical locations\n  %s\nwant\n  %s", w.code, w.subject, strings.Join(chain, " < "), strings.Join(w.logical, " < "))
					}
					if ph := res.Locations[0].Physical; ph == nil || ph.Artifact.URI != tc.at || ph.Artifact.Base != "" || ph.Region.StartLine != 1 {
						t.Errorf("%s %q: physical location %+v, want %s line 1", w.code, w.subject, ph, tc.at)
					}
					switch {
					case w.uri == "" && len(res.Related) > 0:
						t.Errorf("%s %q: related locations %+v, want none", w.code, w.subject, res.Related)
					case w.uri != "" && (len(res.Related) != 1 || res.Related[0].Physical == nil ||
						res.Related[0].Physical.Artifact.URI != w.uri || res.Related[0].Physical.Artifact.Base != w.base || res.Related[0].Message.Text == ""):
						t.Errorf("%s %q: related locations %+v, want %s at %s with a message", w.code, w.subject, res.Related, w.uri, w.base)
					}
				}
				if !found {
					t.Errorf("no %s result about %q", w.code, w.subject)
				}
			}
		})
	}
}

func TestBatchSARIF(t *testing.T) {
	a, b := buildSARIF(t, "everything"), buildSARIF(t, "hostile")
	var buf bytes.Buffer
	if err := WriteBatchSARIF(&buf, []Report{a, b}, sarifRubric0(t), SARIFOptions{}); err != nil {
		t.Fatal(err)
	}
	checkSARIF(t, "batch", buf.Bytes())
	golden(t, "batch.sarif", buf.Bytes(), jsonEqual)
	committed, err := os.ReadFile(filepath.Join("testdata", "batch.sarif"))
	if err != nil {
		t.Fatal(err)
	}
	checkSARIF(t, "golden batch.sarif", committed)
	log := decodeSARIF(t, buf.Bytes())
	run := log.Runs[0]
	if len(run.Results) != len(a.Findings)+len(b.Findings) {
		t.Fatalf("%d results, want %d + %d", len(run.Results), len(a.Findings), len(b.Findings))
	}
	for i, res := range run.Results {
		rep, f := a, i
		if i >= len(a.Findings) {
			rep, f = b, i-len(a.Findings)
		}
		if res.RuleID != rep.Findings[f].Code || res.Props["package"] != packageName(rep.Target) {
			t.Errorf("result %d: %s of %v, want %s of %s", i, res.RuleID, res.Props["package"], rep.Findings[f].Code, packageName(rep.Target))
		}
		// Each package's results stand at its own stand-in path.
		if at := ".verifymcp/npm/" + rep.Target.Name; res.Locations[0].Physical == nil || res.Locations[0].Physical.Artifact.URI != at {
			t.Errorf("result %d: physical location %+v, want %s", i, res.Locations[0].Physical, at)
		}
	}
	pkgs, _ := run.Properties["packages"].([]any)
	if len(pkgs) != 2 {
		t.Fatalf("packages = %v", run.Properties["packages"])
	}
	for i, rep := range []Report{a, b} {
		p := pkgs[i].(map[string]any)
		if p["target"] != packageName(rep.Target) || p["run_date"] != rep.Run.Date || p["rubric_hash"] != rep.Rubric.Hash {
			t.Errorf("package %d = %v", i, p)
		}
	}
	if run.AutomationDetails.ID != "verifymcp/batch/" {
		t.Errorf("automationDetails.id = %q", run.AutomationDetails.ID)
	}
	// One run has one set of rules: a report of another rubric is refused.
	old := b
	old.Rubric.Version = "7"
	if err := WriteBatchSARIF(&bytes.Buffer{}, []Report{a, old}, nil, SARIFOptions{}); err == nil || !strings.Contains(err.Error(), "scored under rubric v7") {
		t.Errorf("batch of two rubrics: %v", err)
	}
	// An empty batch has the rules and no result.
	buf.Reset()
	if err := WriteBatchSARIF(&buf, nil, sarifRubric0(t), SARIFOptions{}); err != nil {
		t.Fatal(err)
	}
	checkSARIF(t, "empty batch", buf.Bytes())
	if err := WriteBatchSARIF(&bytes.Buffer{}, nil, nil, SARIFOptions{}); err == nil {
		t.Error("an empty batch without a rubric = nil error")
	}
}

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

// githubLimits checks a SARIF log against what GitHub code scanning
// documents (docs.github.com, code-security/reference/code-scanning/
// sarif-files/sarif-support and troubleshoot-sarif-uploads/
// results-exceed-limit, file-too-large): at most 10 MB gzip-compressed, at
// most 20 runs, 25,000 results and 25,000 rules per run, 100 tool
// extensions; tool.driver.name set; each rule with an id, a name of at
// most 255 characters, short and full descriptions of at most 1,024, help
// text, a default level of note, warning or error and at most 20 tags;
// each result with a ruleId of a rule, a level of SARIF's four, a message,
// 1 to 10 locations, at most 1,000 related locations, and
// partialFingerprints with primaryLocationLineHash, the only key GitHub
// reads, once per rule in a run (two results of a rule with one
// fingerprint are one alert). Every location of a result has a physical
// location with an artifactLocation.uri (without one GitHub refuses the
// file: "expected artifact location"), relative to the repository's root:
// no scheme ("unrecognized SARIF location URI scheme"), not absolute, no
// .. segment, no backslash, no uriBaseId (GitHub reads the uri from the
// checkout's root) and a region.startLine of 1 or more. Related and
// suppression locations that have a uri meet the same bar, except that
// a uriBaseId declared in originalUriBaseIds is allowed. Rule ids are kept
// to 255 characters too, and messages to sarifMessageMax: GitHub documents
// no bound for either.
func githubLimits(t *testing.T, data []byte) []string {
	t.Helper()
	type artifact struct {
		URI  *string `json:"uri"`
		Base *string `json:"uriBaseId"`
	}
	type physical struct {
		Artifact *artifact                `json:"artifactLocation"`
		Region   *struct{ StartLine int } `json:"region"`
	}
	type location struct {
		Physical *physical `json:"physicalLocation"`
	}
	var log struct {
		Runs []struct {
			Tool struct {
				Driver struct {
					Name            string  `json:"name"`
					SemanticVersion *string `json:"semanticVersion"`
					Rules           []struct {
						ID               string                           `json:"id"`
						Name             *string                          `json:"name"`
						ShortDescription *struct{ Text string }           `json:"shortDescription"`
						FullDescription  *struct{ Text string }           `json:"fullDescription"`
						Help             *struct{ Text, Markdown string } `json:"help"`
						Default          *struct{ Level string }          `json:"defaultConfiguration"`
						Props            struct{ Tags []string }          `json:"properties"`
					} `json:"rules"`
				} `json:"driver"`
				Extensions []any `json:"extensions"`
			} `json:"tool"`
			OriginalURIBaseIDs map[string]any       `json:"originalUriBaseIds"`
			AutomationDetails  *struct{ ID string } `json:"automationDetails"`
			Results            []struct {
				RuleID       *string               `json:"ruleId"`
				RuleIndex    *int                  `json:"ruleIndex"`
				Level        *string               `json:"level"`
				Message      struct{ Text string } `json:"message"`
				Locations    []location            `json:"locations"`
				Related      []location            `json:"relatedLocations"`
				Suppressions []struct {
					Location *location `json:"location"`
				} `json:"suppressions"`
				Fingerprints map[string]string `json:"partialFingerprints"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(data, &log); err != nil {
		t.Fatal(err)
	}
	var p []string
	bad := func(format string, a ...any) { p = append(p, fmt.Sprintf(format, a...)) }
	n := utf8.RuneCountInString
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if gz.Len() > githubMaxGzip {
		bad("%d bytes gzip-compressed, GitHub takes %d", gz.Len(), githubMaxGzip)
	}
	if len(log.Runs) == 0 || len(log.Runs) > 20 {
		bad("%d runs, GitHub takes 1 to 20", len(log.Runs))
	}
	// checkURI checks the artifact location of a physical location; a
	// result's own (primary) may not lean on a uriBaseId.
	checkURI := func(where string, ph *physical, bases map[string]any, primary bool) {
		if ph == nil {
			bad("%s: no physicalLocation", where)
			return
		}
		if ph.Artifact == nil || ph.Artifact.URI == nil || *ph.Artifact.URI == "" {
			bad("%s: a physical location without artifactLocation.uri", where)
			return
		}
		raw := *ph.Artifact.URI
		u, err := url.Parse(raw)
		switch {
		case err != nil:
			bad("%s: uri %q is no URI reference: %v", where, raw, err)
		case u.Scheme != "" || u.Host != "" || u.Opaque != "":
			bad("%s: uri %q has a scheme or a host; GitHub takes a path relative to the repository", where, raw)
		case strings.HasPrefix(u.Path, "/"):
			bad("%s: uri %q is absolute; GitHub takes a path relative to the repository", where, raw)
		case strings.Contains(raw, `\`) || u.RawQuery != "" || u.Fragment != "":
			bad("%s: uri %q has a backslash, a query or a fragment", where, raw)
		case slices.Contains(strings.Split(u.Path, "/"), ".."):
			bad("%s: uri %q leaves its root (..)", where, raw)
		}
		if b := ph.Artifact.Base; b != nil {
			if primary {
				bad("%s: uriBaseId %s on a result's location; GitHub reads its uri from the repository's root", where, *b)
			} else if bases[*b] == nil {
				bad("%s: uriBaseId %s is not in originalUriBaseIds", where, *b)
			}
		}
		if primary && (ph.Region == nil || ph.Region.StartLine < 1) {
			bad("%s: no region.startLine of 1 or more", where)
		} else if ph.Region != nil && ph.Region.StartLine < 1 {
			bad("%s: region.startLine %d", where, ph.Region.StartLine)
		}
	}
	for ri, run := range log.Runs {
		d := run.Tool.Driver
		if d.Name == "" {
			bad("run %d: tool.driver.name is not set", ri)
		}
		if d.SemanticVersion != nil {
			if _, err := semver.StrictNewVersion(*d.SemanticVersion); err != nil {
				bad("run %d: semanticVersion %q is not SemVer 2.0", ri, *d.SemanticVersion)
			}
		}
		if len(run.Results) > 25000 || len(d.Rules) > 25000 || len(run.Tool.Extensions) > 100 {
			bad("run %d: %d results, %d rules, %d extensions (GitHub: 25,000, 25,000, 100)", ri, len(run.Results), len(d.Rules), len(run.Tool.Extensions))
		}
		if a := run.AutomationDetails; a != nil && a.ID == "" {
			bad("run %d: automationDetails.id is empty", ri)
		}
		ids := map[string]bool{}
		for _, rule := range d.Rules {
			switch {
			case rule.ID == "" || n(rule.ID) > 255 || ids[rule.ID]:
				bad("rule %q: id empty, longer than 255 characters or repeated", rule.ID)
			case rule.Name != nil && (*rule.Name == "" || n(*rule.Name) > 255):
				bad("rule %s: name %q", rule.ID, *rule.Name)
			case rule.ShortDescription == nil || rule.ShortDescription.Text == "" || n(rule.ShortDescription.Text) > 1024:
				bad("rule %s: shortDescription.text missing or longer than 1,024 characters", rule.ID)
			case rule.FullDescription == nil || rule.FullDescription.Text == "" || n(rule.FullDescription.Text) > 1024:
				bad("rule %s: fullDescription.text missing or longer than 1,024 characters", rule.ID)
			case rule.Help == nil || rule.Help.Text == "":
				bad("rule %s: help.text missing", rule.ID)
			case rule.Default != nil && rule.Default.Level != "note" && rule.Default.Level != "warning" && rule.Default.Level != "error":
				bad("rule %s: defaultConfiguration.level %q (GitHub: note, warning or error)", rule.ID, rule.Default.Level)
			case len(rule.Props.Tags) > 20:
				bad("rule %s: %d tags", rule.ID, len(rule.Props.Tags))
			}
			ids[rule.ID] = true
		}
		fingerprints := map[string]int{}
		for i, res := range run.Results {
			where := fmt.Sprintf("run %d result %d", ri, i)
			switch {
			case res.RuleID == nil || !ids[*res.RuleID]:
				bad("%s: ruleId %v is no rule's", where, res.RuleID)
			case res.RuleIndex != nil && (*res.RuleIndex < 0 || *res.RuleIndex >= len(d.Rules) || d.Rules[*res.RuleIndex].ID != *res.RuleID):
				bad("%s: ruleIndex %d is not rule %s", where, *res.RuleIndex, *res.RuleID)
			case res.Level != nil && !slices.Contains([]string{"none", "note", "warning", "error"}, *res.Level):
				bad("%s: level %q (SARIF: none, note, warning or error)", where, *res.Level)
			case res.Message.Text == "" || n(res.Message.Text) > sarifMessageMax:
				bad("%s: message.text empty or longer than %d characters", where, sarifMessageMax)
			case len(res.Locations) == 0 || len(res.Locations) > 10:
				bad("%s: %d locations (GitHub: 1 to 10)", where, len(res.Locations))
			case len(res.Related) > 1000:
				bad("%s: %d related locations (GitHub: 1,000)", where, len(res.Related))
			case res.Fingerprints[FingerprintKeyGitHub] == "":
				bad("%s: no partialFingerprints.%s", where, FingerprintKeyGitHub)
			}
			if res.RuleID != nil && res.Fingerprints[FingerprintKeyGitHub] != "" {
				key := *res.RuleID + "\x00" + res.Fingerprints[FingerprintKeyGitHub]
				if j, dup := fingerprints[key]; dup {
					bad("%s: rule %s and partialFingerprints.%s as result %d", where, *res.RuleID, FingerprintKeyGitHub, j)
				}
				fingerprints[key] = i
			}
			for li, l := range res.Locations {
				checkURI(fmt.Sprintf("%s location %d", where, li), l.Physical, run.OriginalURIBaseIDs, true)
			}
			for li, l := range res.Related {
				if l.Physical != nil {
					checkURI(fmt.Sprintf("%s related location %d", where, li), l.Physical, run.OriginalURIBaseIDs, false)
				}
			}
			for si, sup := range res.Suppressions {
				if sup.Location != nil && sup.Location.Physical != nil {
					checkURI(fmt.Sprintf("%s suppression %d", where, si), sup.Location.Physical, run.OriginalURIBaseIDs, false)
				}
			}
		}
	}
	return p
}

// githubMaxGzip is GitHub code scanning's bound on an uploaded SARIF file,
// gzip-compressed: 10 MB.
const githubMaxGzip = 10_000_000

// With the declaring file named, every result stands there, at its line,
// with the package still its logical location; nothing else moves, the
// fingerprints least of all.
func TestSARIFDeclaredIn(t *testing.T) {
	rep := buildSARIF(t, "everything")
	plain := decodeSARIF(t, writeSARIF(t, rep)).Runs[0].Results
	for _, tc := range []struct {
		at   RepoLocation
		line int
	}{
		{RepoLocation{Path: "package.json", Line: 14}, 14},
		{RepoLocation{Path: "tools/mcp servers/.mcp.json"}, 1},
	} {
		data := writeSARIFWith(t, rep, SARIFOptions{DeclaredIn: tc.at})
		checkSARIF(t, "declared in "+tc.at.String(), data)
		got := decodeSARIF(t, data).Runs[0].Results
		if len(got) != len(plain) || len(got) == 0 {
			t.Fatalf("%d results, want %d", len(got), len(plain))
		}
		for i, res := range got {
			ph := res.Locations[0].Physical
			if ph == nil || ph.Artifact.URI != relativeURI(tc.at.Path) || ph.Artifact.Base != "" || ph.Region.StartLine != tc.line ||
				!strings.HasPrefix(res.Locations[0].Message.Text, "Where this repository declares npm:@modelcontextprotocol/server-everything@") {
				t.Errorf("%s result %d: location %+v", tc.at, i, res.Locations[0])
			}
			if len(res.Locations[0].Logical) != 1 || res.Locations[0].Logical[0].FQN != plain[i].Locations[0].Logical[0].FQN {
				t.Errorf("%s result %d: logical location %+v, want %+v", tc.at, i, res.Locations[0].Logical, plain[i].Locations[0].Logical)
			}
			for k, v := range plain[i].Fingerprints {
				if res.Fingerprints[k] != v {
					t.Errorf("%s result %d: %s %q, %q with no declaring file", tc.at, i, k, res.Fingerprints[k], v)
				}
			}
		}
	}
	if got := plain[0].Locations[0].Message.Text; !strings.Contains(got, "stand-in path") {
		t.Errorf("stand-in location's message %q", got)
	}
}

// A package named to climb out of the stand-in directory, or to read as a
// scheme, and a file written by its absolute path, stay relative URIs that
// GitHub takes.
func TestSARIFHostilePaths(t *testing.T) {
	rep := buildSARIF(t, "behavior")
	rep.Target.Name = "../../../etc/x:y #?"
	for i, e := range rep.Behavior.Files {
		if e.Path == "~/.cache/fs-pro/state.json" {
			rep.Behavior.Files[i].Path = "/var/../etc/cron.d/x"
		}
	}
	found := false
	for i, f := range rep.Findings {
		if f.Code == "pkg.behavior.file.write" && f.Evidence == "created ~/.cache/fs-pro/state.json" {
			rep.Findings[i].Evidence, found = "created /var/../etc/cron.d/x", true
		}
	}
	if !found {
		t.Fatal("the behavior fixture has no pkg.behavior.file.write of ~/.cache/fs-pro/state.json")
	}
	data := writeSARIF(t, rep)
	checkSARIF(t, "hostile paths", data)
	log := decodeSARIF(t, data)
	for i, res := range log.Runs[0].Results {
		if ph := res.Locations[0].Physical; ph == nil || ph.Artifact.URI != ".verifymcp/npm/_../_../_../etc/x:y%20%23%3F" {
			t.Errorf("result %d: physical location %+v", i, ph)
		}
	}
	i := resultsBy(log, "pkg.behavior.file.write")
	if len(i) != 1 {
		t.Fatalf("%d pkg.behavior.file.write results", len(i))
	}
	rel := log.Runs[0].Results[i[0]].Related
	if len(rel) != 1 || rel[0].Physical == nil || rel[0].Physical.Artifact.URI != "var/_../etc/cron.d/x" || rel[0].Physical.Artifact.Base != BaseSandboxRoot ||
		!strings.Contains(rel[0].Message.Text, "absolute path") {
		t.Errorf("related locations %+v, want var/_../etc/cron.d/x at %s", rel, BaseSandboxRoot)
	}
}

// githubLimits is the test that says GitHub takes a file, so it must
// refuse each thing GitHub refuses: every case breaks one rule of a file
// it passes.
func TestGitHubLimitsRejects(t *testing.T) {
	base := writeSARIF(t, buildSARIF(t, "behavior"))
	if p := githubLimits(t, base); len(p) > 0 {
		t.Fatalf("the base file fails: %v", p)
	}
	type doc = map[string]any
	run0 := func(d doc) doc { return d["runs"].([]any)[0].(doc) }
	result0 := func(d doc) doc { return run0(d)["results"].([]any)[0].(doc) }
	loc0 := func(d doc) doc { return result0(d)["locations"].([]any)[0].(doc) }
	artifact0 := func(d doc) doc { return loc0(d)["physicalLocation"].(doc)["artifactLocation"].(doc) }
	related := func(d doc) doc {
		for _, r := range run0(d)["results"].([]any) {
			if rel, ok := r.(doc)["relatedLocations"].([]any); ok {
				return rel[0].(doc)["physicalLocation"].(doc)["artifactLocation"].(doc)
			}
		}
		t.Fatal("no result has a related location")
		return nil
	}
	long := strings.Repeat("x", 256)
	for _, tc := range []struct {
		name, want string
		breakIt    func(d doc)
	}{
		{"no locations", "0 locations", func(d doc) { delete(result0(d), "locations") }},
		{"eleven locations", "11 locations", func(d doc) {
			r := result0(d)
			for range 10 {
				r["locations"] = append(r["locations"].([]any), loc0(d))
			}
		}},
		{"a logical location only", "no physicalLocation", func(d doc) { delete(loc0(d), "physicalLocation") }},
		{"no artifact location", "without artifactLocation.uri", func(d doc) { delete(loc0(d)["physicalLocation"].(doc), "artifactLocation") }},
		{"an empty uri", "without artifactLocation.uri", func(d doc) { artifact0(d)["uri"] = "" }},
		{"an absolute path", "is absolute", func(d doc) { artifact0(d)["uri"] = "/home/dev/repo/package.json" }},
		{"a file URI", "has a scheme", func(d doc) { artifact0(d)["uri"] = "file:///home/dev/repo/package.json" }},
		{"a purl", "has a scheme", func(d doc) { artifact0(d)["uri"] = "pkg:npm/left-pad@1.3.0" }},
		{"a drive", "has a scheme", func(d doc) { artifact0(d)["uri"] = "C:/repo/package.json" }},
		{"a host", "has a scheme or a host", func(d doc) { artifact0(d)["uri"] = "//host/package.json" }},
		{"a climbing path", "leaves its root", func(d doc) { artifact0(d)["uri"] = "a/../../package.json" }},
		{"an escaped climbing path", "leaves its root", func(d doc) { artifact0(d)["uri"] = "a/%2E%2E/%2e%2e/package.json" }},
		{"a backslash", "backslash", func(d doc) { artifact0(d)["uri"] = `a\package.json` }},
		{"a fragment", "fragment", func(d doc) { artifact0(d)["uri"] = "package.json#L3" }},
		{"a uriBaseId on the result's location", "uriBaseId PACKAGE_ROOT on a result's location", func(d doc) { artifact0(d)["uriBaseId"] = BasePackageRoot }},
		{"no region", "no region.startLine", func(d doc) { delete(loc0(d)["physicalLocation"].(doc), "region") }},
		{"line 0", "no region.startLine", func(d doc) { loc0(d)["physicalLocation"].(doc)["region"] = doc{"startLine": 0} }},
		{"a related file URI", "related location 0: uri \"file:///etc/x\" has a scheme", func(d doc) { related(d)["uri"] = "file:///etc/x" }},
		{"a related absolute path", "related location 0: uri \"/etc/x\" is absolute", func(d doc) { related(d)["uri"] = "/etc/x" }},
		{"an undeclared uriBaseId", "uriBaseId ELSEWHERE is not in originalUriBaseIds", func(d doc) { related(d)["uriBaseId"] = "ELSEWHERE" }},
		{"a suppression at an absolute path", "suppression 0: uri \"file:///home/dev/.verifymcp-ignore.yaml\" has a scheme", func(d doc) {
			result0(d)["suppressions"] = []any{doc{"kind": "external", "location": doc{"physicalLocation": doc{
				"artifactLocation": doc{"uri": "file:///home/dev/.verifymcp-ignore.yaml"}}}}}
		}},
		{"no primaryLocationLineHash", "no partialFingerprints.primaryLocationLineHash", func(d doc) {
			delete(result0(d)["partialFingerprints"].(doc), FingerprintKeyGitHub)
		}},
		{"no partialFingerprints", "no partialFingerprints.primaryLocationLineHash", func(d doc) { delete(result0(d), "partialFingerprints") }},
		{"a fingerprint twice", "as result 0", func(d doc) {
			rs := run0(d)["results"].([]any)
			dup, _ := json.Marshal(rs[0])
			var again doc
			if err := json.Unmarshal(dup, &again); err != nil {
				t.Fatal(err)
			}
			run0(d)["results"] = append(rs, again)
		}},
		{"a level GitHub does not know", `level "fatal"`, func(d doc) { result0(d)["level"] = "fatal" }},
		{"a default level of none", `defaultConfiguration.level "none"`, func(d doc) {
			run0(d)["tool"].(doc)["driver"].(doc)["rules"].([]any)[0].(doc)["defaultConfiguration"] = doc{"level": "none"}
		}},
		{"a rule id of 256 characters", "longer than 255", func(d doc) {
			rule := run0(d)["tool"].(doc)["driver"].(doc)["rules"].([]any)[0].(doc)
			rule["id"] = long
		}},
		{"a ruleId of no rule", "is no rule's", func(d doc) { result0(d)["ruleId"] = "pkg.no.such.code" }},
		{"no message", "message.text empty", func(d doc) { result0(d)["message"] = doc{"text": ""} }},
		{"twenty-one runs", "21 runs", func(d doc) {
			runs := d["runs"].([]any)
			for range 20 {
				runs = append(runs, runs[0])
			}
			d["runs"] = runs
		}},
		{"no run", "0 runs", func(d doc) { d["runs"] = []any{} }},
		{"25,001 results", "25001 results", func(d doc) {
			r := result0(d)
			rs := make([]any, 25001)
			for i := range rs {
				// Small results, each its own fingerprint, so that only
				// their number is wrong.
				rs[i] = doc{"ruleId": r["ruleId"], "message": doc{"text": "x"}, "locations": r["locations"],
					"partialFingerprints": doc{FingerprintKeyGitHub: fmt.Sprintf("%016x:1", i)}}
			}
			run0(d)["results"] = rs
		}},
		{"over 10 MB gzip-compressed", "bytes gzip-compressed", func(d doc) {
			// Random bytes, base64-encoded: gzip cannot bring 16 MiB of
			// them under 10 MB.
			noise := make([]byte, 12<<20)
			rng := rand.New(rand.NewPCG(34, 1))
			for i := range noise {
				noise[i] = byte(rng.Uint32())
			}
			run0(d)["properties"].(doc)["noise"] = base64.StdEncoding.EncodeToString(noise)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d doc
			if err := json.Unmarshal(base, &d); err != nil {
				t.Fatal(err)
			}
			tc.breakIt(d)
			data, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			p := githubLimits(t, data)
			if !slices.ContainsFunc(p, func(s string) bool { return strings.Contains(s, tc.want) }) {
				t.Errorf("githubLimits = %q, want a problem saying %q", p, tc.want)
			}
		})
	}
}

func TestSARIFArtifact(t *testing.T) {
	for _, tc := range []struct{ path, want string }{
		{".config/autostart/x.desktop", ".config/autostart/x.desktop"},
		{"./../a//b", "_../a/b"},
		{"etc/cron d/#x", "etc/cron%20d/%23x"},
		{"", ""},
		{"/./", ""},
	} {
		a := artifact(tc.path, BaseSandboxRoot)
		switch {
		case tc.want == "" && a != nil:
			t.Errorf("artifact(%q) = %v, want nil", tc.path, *a.URI)
		case tc.want != "" && (a == nil || *a.URI != tc.want || *a.URIBaseId != BaseSandboxRoot):
			t.Errorf("artifact(%q) = %+v, want %s at %s", tc.path, a, tc.want, BaseSandboxRoot)
		}
	}
}
