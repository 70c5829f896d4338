package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/internal/sariftest"
	"github.com/verifymcp/verifymcp/rubric"
)

// sarifFixtures are the bundles whose package SARIF is kept as a golden
// file, testdata/NAME.sarif.
var sarifFixtures = []string{"everything", "hostile", "judge", "behavior", "crashed", "shipped_image", "shipped_root", "shipped_bundle"}

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

// checkSARIF validates data against the SARIF schema and GitHub code
// scanning's documented limits.
func checkSARIF(t *testing.T, name string, data []byte) {
	t.Helper()
	sariftest.Check(t, filepath.Join("schema", "sarif-2.1.0.json"), name, data)
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
		if res.RuleID != rep.Findings[f].Code || res.Props["package"] != packageName(rep) {
			t.Errorf("result %d: %s of %v, want %s of %s", i, res.RuleID, res.Props["package"], rep.Findings[f].Code, packageName(rep))
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
		if p["target"] != packageName(rep) || p["run_date"] != rep.Run.Date || p["rubric_hash"] != rep.Rubric.Hash {
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
