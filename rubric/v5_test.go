package rubric

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/contract/checks"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/judge"
)

// v4Hash is the SHA-256 of rubric v4 as released.
const v4Hash = "sha256:1901af7887fcea5a78cb050f188d0a22142f6c965972fd13acd7ddea736cbede"

func TestV4Unchanged(t *testing.T) {
	if got := mustLoad(t, "4").Hash; got != v4Hash {
		t.Errorf("rubric v4 hash = %s, want %s: v4.yaml was edited; make a new version instead", got, v4Hash)
	}
}

// goldenKeys are the fixtures of the v3 and v4 goldens: a bundle name,
// with "+rich_behavior" for the everything fixture with every behaviour
// probe firing.
func goldenBundle(t *testing.T, name string) *evidence.Bundle {
	t.Helper()
	if base, ok := strings.CutSuffix(name, "+rich_behavior"); ok {
		b := loadBundle(t, base+".bundle.json")
		watched(func(bh *evidence.Behavior) { *bh = *richBehavior() })(b)
		return b
	}
	return loadBundle(t, name+".bundle.json")
}

// TestV4Golden evaluates the fixtures under rubric v4 and compares with the
// results the code gave before rubric v5 existed (never rewritten): the
// contract checks and the judge probe of v5 must not change a finding,
// reason or score under v4.
func TestV4Golden(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "v4.results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var golden map[string]json.RawMessage
	if err := json.Unmarshal(data, &golden); err != nil {
		t.Fatal(err)
	}
	if len(golden) != 9 {
		t.Fatalf("golden holds %d results, want 9", len(golden))
	}
	v4 := mustLoad(t, "4")
	for key, want := range golden {
		t.Run(key, func(t *testing.T) {
			name, _ := strings.CutSuffix(key, "/v4")
			compareGolden(t, want, Evaluate(goldenBundle(t, name), v4))
		})
	}
	// The poisoned fixture, judged, is new with v5: under v4 it scores as
	// the surface's static quality alone says.
	res := Evaluate(loadBundle(t, "poisoned.bundle.json"), v4)
	for _, f := range res.Findings {
		if strings.HasPrefix(f.Code, "pkg.judge.") || f.Dimension == DimensionPromptIntegrity {
			t.Errorf("v4 emitted %s", f.Code)
		}
	}
	if d := diff(ptr(85.8), res.Score); d != "" {
		t.Errorf("poisoned fixture under v4 (-want +got):\n%s", d)
	}
}

func compareGolden(t *testing.T, want json.RawMessage, res Result) {
	t.Helper()
	got, err := json.Marshal(res)
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
		t.Errorf("result differs from the released one (-want +got):\n%s", d)
	}
}

func TestLoadV5(t *testing.T) {
	v4, v5 := mustLoad(t, "4"), mustLoad(t, "5")
	data, err := os.ReadFile(filepath.Join("versions", "v5.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if v5.Hash != mustParse(t, data).Hash || v5.Hash == v4.Hash {
		t.Errorf("Hash = %s is not the file's", v5.Hash)
	}
	if len(v5.Dimensions) != len(v4.Dimensions)+2 {
		t.Fatalf("v5 has %d dimensions, want v4's %d and two", len(v5.Dimensions), len(v4.Dimensions))
	}
	// v4's dimensions, in order, with their weights scaled to 85.
	var total float64
	for i, d4 := range v4.Dimensions {
		d5 := v5.Dimensions[i]
		if math.Abs(d5.Weight-d4.Weight*0.85) > 1e-9 {
			t.Errorf("%s: v5 weight %v, want %v (v4 %v scaled to 85)", d4.ID, d5.Weight, d4.Weight*0.85, d4.Weight)
		}
		d4.Weight = d5.Weight
		if d := diff(d4, d5); d != "" {
			t.Errorf("%s differs from v4 beyond its weight (-v4 +v5):\n%s", d4.ID, d)
		}
	}
	for _, d := range v5.Dimensions {
		total += d.Weight
	}
	if math.Abs(total-100) > 1e-9 {
		t.Errorf("v5 weights sum to %v, want 100", total)
	}
	for _, want := range []struct {
		id     string
		weight float64
		signal string
	}{{DimensionPromptIntegrity, 10, evidence.SignalContract}, {DimensionCapabilityClarity, 5, evidence.SignalJudge}} {
		d, ok := v5.Dimension(want.id)
		if !ok || d.Weight != want.weight || !slices.Equal(d.Signals, []string{want.signal}) || d.ZeroPoint != 0 || d.ZeroPointReason != "" {
			t.Errorf("%s = %+v, %v; want weight %v, signals [%s], zero point 0", want.id, d, ok, want.weight, want.signal)
		}
	}
	// Every v4 code stays, word for word; the new ones are the checks'
	// and the judge's.
	for _, c := range v4.Codes {
		c5, ok := v5.Code(c.Code)
		if d := diff(c, c5); !ok || d != "" {
			t.Errorf("%s differs from v4 (-v4 +v5):\n%s", c.Code, d)
		}
	}
	added := 0
	for _, c := range v5.Codes {
		if _, ok := v4.Code(c.Code); !ok {
			added++
			if c.Dimension != DimensionPromptIntegrity && c.Dimension != DimensionCapabilityClarity {
				t.Errorf("%s: new in v5 under %s", c.Code, c.Dimension)
			}
		}
	}
	// Checks 1 and 2 emit 17 codes; checks 3 added one, which rubric v11
	// adopts.
	if want := 17 + len(judge.SpecV1.Codes) + 1; added != want {
		t.Errorf("v5 adds %d codes, want %d (the checks', the judge spec's and pkg.judge.unverified)", added, want)
	}
	// The parameters are v4's and three new blocks.
	p4, p5 := v4.Params, v5.Params
	p5.PromptIntegrity, p5.CapabilityClarity, p5.Judge = nil, nil, nil
	if d := diff(p4, p5); d != "" {
		t.Errorf("parameters differ from v4 (-v4 +v5):\n%s", d)
	}
	if v4.Params.PromptIntegrity != nil || v4.Params.CapabilityClarity != nil || v4.Params.Judge != nil {
		t.Error("v4 has v5's parameters")
	}
	wantPI := &PromptIntegrityParams{SeverityPenalties: map[Severity]float64{
		SeverityCritical: 100, SeverityHigh: 40, SeverityMedium: 20, SeverityLow: 10, SeverityInfo: 0,
	}}
	if d := diff(wantPI, v5.Params.PromptIntegrity); d != "" {
		t.Errorf("parameters.prompt_contract_integrity (-want +got):\n%s", d)
	}
	wantCC := &CapabilityClarityParams{CodePenalties: map[string]float64{
		CodeJudgeInjection: 50, CodeJudgeExfiltration: 50, CodeJudgeConcealment: 50, CodeJudgeShadowing: 50,
		CodeJudgeCredentialRequest: 30, CodeJudgeSensitiveAccess: 30, CodeJudgeMismatch: 20,
	}}
	if d := diff(wantCC, v5.Params.CapabilityClarity); d != "" {
		t.Errorf("parameters.tool_capability_clarity (-want +got):\n%s", d)
	}
}

// TestJudgePinMatchesSpec ties rubric v5 to the judge spec file: editing
// judge/specs/v1.yaml changes its digest and fails here, so the spec
// cannot change under a released rubric; a new spec needs a new rubric
// version that pins it.
func TestJudgePinMatchesSpec(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "judge", "specs", "v1.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	file := "sha256:" + hex.EncodeToString(sum[:])
	pin := mustLoad(t, "5").Params.Judge
	if pin == nil {
		t.Fatal("v5 pins no judge spec")
	}
	want := JudgePin{SpecVersion: judge.SpecV1.Version, PromptVersion: judge.SpecV1.PromptVersion, SpecDigest: judge.SpecV1.Digest}
	if d := diff(want, *pin); d != "" {
		t.Errorf("v5 parameters.judge differs from judge.SpecV1 (-spec +rubric):\n%s", d)
	}
	if pin.SpecDigest != file {
		t.Errorf("pinned digest %s, judge/specs/v1.yaml is %s", pin.SpecDigest, file)
	}
}

// TestContractCheckCatalog checks that every code the contract checks can
// emit is catalogued under prompt_contract_integrity with the checks'
// severity, and that the dimension catalogues nothing else.
func TestContractCheckCatalog(t *testing.T) {
	r := Current()
	codes := map[string]bool{}
	for _, ci := range checks.CheckCodes() {
		codes[ci.Code] = true
		def, ok := r.Code(ci.Code)
		if !ok {
			t.Errorf("%s: emitted by the contract checks, missing from the catalog of the rubric in force (a new check needs a new rubric version)", ci.Code)
			continue
		}
		if def.Dimension != DimensionPromptIntegrity || def.Kind != KindFinding || string(def.Severity) != string(ci.Severity) || def.Graded {
			t.Errorf("%s: catalog %s %s %s graded %v, want finding %s %s", ci.Code, def.Kind, def.Severity, def.Dimension, def.Graded,
				ci.Severity, DimensionPromptIntegrity)
		}
		if strings.TrimSpace(def.Description) == "" || strings.TrimSpace(def.Remediation) == "" {
			t.Errorf("%s: description or remediation missing", ci.Code)
		}
		if !strings.HasPrefix(ci.Code, "pkg.contract.") {
			t.Errorf("%s: not under pkg.contract.", ci.Code)
		}
	}
	if len(codes) != len(integrityCodes) {
		t.Errorf("the checks have %d codes, the probe reports %d", len(codes), len(integrityCodes))
	}
	for _, c := range r.Codes {
		if c.Dimension == DimensionPromptIntegrity && !codes[c.Code] && !strings.HasPrefix(c.Code, "pkg.behavior.tool.") {
			t.Errorf("%s: catalogued under %s, but the checks do not emit it", c.Code, DimensionPromptIntegrity)
		}
	}
	// No version before v5 catalogues them.
	for _, v := range []string{"1", "2", "3", "4"} {
		for code := range codes {
			if _, ok := mustLoad(t, v).Code(code); ok {
				t.Errorf("v%s catalogues %s", v, code)
			}
		}
	}
}

// TestJudgeCatalog checks that the verdict codes are judge spec 1's, each
// catalogued under tool_capability_clarity with the severity it was
// specified with and a penalty.
func TestJudgeCatalog(t *testing.T) {
	if d := diff(judge.SpecV1.Codes, judgeVerdictCodes); d != "" {
		t.Errorf("verdict codes differ from judge spec 1 (-spec +rubric):\n%s", d)
	}
	want := map[string]Severity{
		CodeJudgeInjection: SeverityHigh, CodeJudgeExfiltration: SeverityHigh, CodeJudgeConcealment: SeverityHigh,
		CodeJudgeShadowing: SeverityHigh, CodeJudgeCredentialRequest: SeverityMedium, CodeJudgeSensitiveAccess: SeverityMedium,
		CodeJudgeMismatch: SeverityLow, CodeJudgeUnverified: SeverityLow,
	}
	r := mustLoad(t, "5")
	n := 0
	for _, c := range r.Codes {
		if strings.HasPrefix(c.Code, "pkg.judge.") {
			n++
		}
	}
	if n != len(want) {
		t.Errorf("v5 has %d pkg.judge codes, want %d", n, len(want))
	}
	for code, sev := range want {
		def, ok := r.Code(code)
		if !ok {
			t.Errorf("%s missing", code)
			continue
		}
		if def.Severity != sev || def.Dimension != DimensionCapabilityClarity || def.Kind != KindFinding || def.Graded {
			t.Errorf("%s: %s %s %s, want finding %s %s", code, def.Kind, def.Severity, def.Dimension, sev, DimensionCapabilityClarity)
		}
		if strings.TrimSpace(def.Description) == "" || strings.TrimSpace(def.Remediation) == "" {
			t.Errorf("%s: description or remediation missing", code)
		}
		if _, ok := r.Params.CapabilityClarity.CodePenalties[code]; ok != (code != CodeJudgeUnverified) {
			t.Errorf("%s: has a penalty %v; every verdict code and only they have one", code, ok)
		}
	}
}

// TestLoadRejectsBadV5 mutates the embedded v5 file and checks that
// validation catches each mutation.
func TestLoadRejectsBadV5(t *testing.T) {
	base, err := os.ReadFile(filepath.Join("versions", "v5.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	b := string(base)
	// block removes the parameter block of the given name: its line and
	// the more indented lines after it.
	block := func(name string) string {
		lines := strings.SplitAfter(b, "\n")
		start := slices.Index(lines, "  "+name+":\n")
		if start < 0 {
			t.Fatalf("block %s not found", name)
		}
		end := start + 1
		for end < len(lines) && strings.HasPrefix(lines[end], "    ") {
			end++
		}
		return strings.Join(lines[:start], "") + strings.Join(lines[end:], "")
	}
	tests := []struct {
		name, data, want string
	}{
		{"integrity_parameters_missing", block("prompt_contract_integrity"), "parameters.prompt_contract_integrity: missing"},
		{"clarity_parameters_missing", block("tool_capability_clarity"), "parameters.tool_capability_clarity: missing"},
		{"judge_pin_missing", block("judge"), "parameters.judge: missing, and a dimension names signal judge"},
		{"severity_penalty_missing", strings.Replace(b, "      low: 10\n", "", 1), "severity_penalties: low missing"},
		{"unknown_severity", strings.Replace(b, "      low: 10\n", "      low: 10\n      severe: 5\n", 1), `unknown severity "severe"`},
		{"negative_penalty", strings.Replace(b, "      high: 40\n", "      high: -40\n", 1), "severity_penalties.high: -40 must be 0 or more"},
		{"code_penalty_missing", strings.Replace(b, "      pkg.judge.mismatch: 20\n", "", 1), "code_penalties: pkg.judge.mismatch missing"},
		{"code_penalty_for_unknown_code", strings.Replace(b, "      pkg.judge.mismatch: 20\n", "      pkg.judge.mismatch: 20\n      pkg.judge.vibes: 5\n", 1),
			"pkg.judge.vibes is not a verdict code of the judge"},
		{"bad_digest", strings.Replace(b, `spec_digest: "sha256:426c`, `spec_digest: "md5:426c`, 1), "parameters.judge.spec_digest"},
		{"no_spec_version", strings.Replace(b, `    spec_version: "1"`, `    spec_version: ""`, 1), "spec_version and prompt_version are required"},
		{"judge_code_missing", strings.Replace(b, "  - code: pkg.judge.mismatch\n", "  - code: pkg.judge.mismatched\n", 1),
			"probe emits pkg.judge.mismatch, which is not in the catalog"},
		{"check_code_wrong_dimension", strings.Replace(b, "  - code: pkg.contract.shadowing\n    kind: finding\n    severity: high\n    dimension: prompt_contract_integrity",
			"  - code: pkg.contract.shadowing\n    kind: finding\n    severity: high\n    dimension: tool_capability_clarity", 1),
			`code pkg.contract.shadowing: catalogued under "tool_capability_clarity", but emitted by dimension "prompt_contract_integrity"`},
		{"parameters_without_their_dimension", strings.Replace(b, "  - id: tool_capability_clarity\n", "  - id: tool_capability_clarity_old\n", 1),
			"parameters.tool_capability_clarity: present, but the rubric has no dimension tool_capability_clarity"},
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
	// A judge pin in a rubric that reads no judge is an error too.
	v4, err := os.ReadFile(filepath.Join("versions", "v4.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	withPin := strings.Replace(string(v4), "\ndimensions:\n", "\n  judge:\n    spec_version: \"1\"\n    prompt_version: \"1\"\n    spec_digest: \"sha256:"+strings.Repeat("0", 64)+"\"\n\ndimensions:\n", 1)
	if _, err := parse([]byte(withPin)); err == nil || !strings.Contains(err.Error(), "parameters.judge: present, but no dimension names signal judge") {
		t.Errorf("parse(v4 with a judge pin) = %v, want the pin reported as read by nothing", err)
	}
}

// TestPoisonedFixture scores the v5 fixture: the Invariant Labs tool
// beside a clean one, judged under spec 1. Both new dimensions score 0,
// and the composite falls from v4's 85.8.
func TestPoisonedFixture(t *testing.T) {
	b := loadBundle(t, "poisoned.bundle.json")
	// The fixture is what the pipeline would store: the contract's hash is
	// its own, and the judge's quotes occur in the tool's text.
	if h, err := contract.Hash(b.Contract); err != nil || h != b.Contract.SchemaHash || b.Judge.SchemaHash != h {
		t.Fatalf("fixture schema hash %s, judged %s, computed %s (%v)", b.Contract.SchemaHash, b.Judge.SchemaHash, h, err)
	}
	for _, v := range b.Judge.Verdicts {
		if !strings.Contains(b.Contract.Tools[0].Description, v.Evidence) || v.Tool != b.Contract.Tools[0].Name {
			t.Errorf("verdict %s quotes %q, not in tool %s", v.Code, v.Evidence, v.Tool)
		}
	}
	// v7 scored as v5 did, with the checks it pins (v5's checks 1 are
	// gone: TestV5Golden); v8 and v9 score these dimensions as v7.
	res := Evaluate(b, Current())
	if d := diff(outcome{State: StateScored, Score: 0, Findings: []string{
		"pkg.contract.injection.concealment add",
		"pkg.contract.injection.exfiltration add",
		"pkg.contract.injection.secret_access add",
		"pkg.contract.injection.tag add",
	}}, outcomeOf(res, DimensionPromptIntegrity)); d != "" {
		t.Errorf("%s (-want +got):\n%s", DimensionPromptIntegrity, d)
	}
	if d := diff(outcome{State: StateScored, Score: 0, Findings: []string{
		"pkg.judge.concealment add", "pkg.judge.exfiltration add", "pkg.judge.injection add", "pkg.judge.mismatch add",
	}}, outcomeOf(res, DimensionCapabilityClarity)); d != "" {
		t.Errorf("%s (-want +got):\n%s", DimensionCapabilityClarity, d)
	}
	if got, want := dim(res, DimensionCapabilityClarity).Reason,
		"the LLM judge (gpt-4o-2024-08-06, judge spec 1) returned 4 verdicts, counting each code once per subject: injection on 1 subject (-50); exfiltration on 1 subject (-50); concealment on 1 subject (-50); mismatch on 1 subject (-20)"; got != want {
		t.Errorf("reason = %q, want %q", got, want)
	}
	// installability, install_scripts, session, protocol_hygiene and
	// description_coverage 100, spec_recency 70, schema_completeness 50,
	// action_safety 75, the two new dimensions 0; behaviour and supply
	// dropped; contract_drift (v8) 0, the bundle having no drift
	// evidence: 3061.275 / 55.7 = 54.96, so 55.0 under v8. Under v9 the
	// two critical contract findings cap it at 20, and the result keeps
	// the 55.0.
	if d := diff(ptr(20.0), res.Score); d != "" {
		t.Errorf("Score (-want +got):\n%s\n%+v", d, res.Dimensions)
	}
	if d := diff(&Cap{Value: 20, Reason: strings.TrimSpace(Current().Params.Composite.CriticalCapReason),
		Codes: []string{"pkg.contract.injection.exfiltration", "pkg.contract.injection.secret_access"}, Uncapped: 55}, res.Cap); d != "" {
		t.Errorf("Cap (-want +got):\n%s", d)
	}
	if v8 := Evaluate(b, mustLoad(t, "8")); v8.Cap != nil || v8.Score == nil || *v8.Score != 55 {
		t.Errorf("under v8: score %v, cap %+v; want 55 and no cap", v8.Score, v8.Cap)
	}
	for _, f := range res.Findings {
		def, ok := Current().Code(f.Code)
		if !ok {
			t.Errorf("%s not in the catalog", f.Code)
			continue
		}
		checkAgainstCatalog(t, f, def)
		if f.Message == "" || f.Evidence == "" {
			t.Errorf("%s %s: empty message or evidence", f.Code, f.Subject)
		}
	}
}

// TestV5Golden pins the results of every fixture under rubric v5, as
// released. v5 scored contract checks 1, which no build has any more (the
// checks are versioned since, and v7 pins checks 2), so its
// prompt_contract_integrity now gets the zero point, saying so; every
// other dimension must be exactly as released.
func TestV5Golden(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "v5.results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var golden map[string]json.RawMessage
	if err := json.Unmarshal(data, &golden); err != nil {
		t.Fatal(err)
	}
	if len(golden) != 10 {
		t.Fatalf("golden holds %d results, want 10", len(golden))
	}
	v5 := mustLoad(t, "5")
	for key, want := range golden {
		t.Run(key, func(t *testing.T) {
			name, _ := strings.CutSuffix(key, "/v5")
			res := Evaluate(goldenBundle(t, name), v5)
			if d := dim(res, DimensionPromptIntegrity); d.State != StateZeroPoint || res.ContractChecks.Source == ChecksUnavailable && !strings.Contains(d.Reason, "contract checks 1") {
				t.Errorf("%s: %s %q, want the zero point for checks 1", DimensionPromptIntegrity, d.State, d.Reason)
			}
			var got Result
			if err := json.Unmarshal(withoutIntegrity(t, mustJSON(t, res)), &got); err != nil {
				t.Fatal(err)
			}
			compareGolden(t, withoutIntegrity(t, want), got)
		})
	}
}

// withoutIntegrity is a result's JSON without prompt_contract_integrity:
// its dimension, its findings, the composite it is part of and the
// checks it scored.
func withoutIntegrity(t *testing.T, j []byte) []byte {
	t.Helper()
	var r Result
	if err := json.Unmarshal(j, &r); err != nil {
		t.Fatal(err)
	}
	r.Dimensions = slices.DeleteFunc(r.Dimensions, func(d DimensionScore) bool { return d.ID == DimensionPromptIntegrity })
	r.Findings = slices.DeleteFunc(r.Findings, func(f Finding) bool { return f.Dimension == DimensionPromptIntegrity })
	r.Score, r.ContractChecks = nil, nil
	return mustJSON(t, r)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var updateV7 = flag.Bool("update-v7", false, "rewrite testdata/v7.results.json from the current code")

// TestV7Golden pins the results of every fixture under rubric v7, the
// first to pin its contract checks: a change to the checks cannot change
// a v7 result without failing here and in TestV7PinsTheseChecks.
// Rewritten (and reviewed) with -args -update-v7.
func TestV7Golden(t *testing.T) {
	path := filepath.Join("testdata", "v7.results.json")
	v7 := mustLoad(t, "7")
	names := []string{"behavior", "crashed", "dnssec", "everything", "everything+rich_behavior", "hostile", "install_failed", "poisoned", "supply", "unavailable"}
	// This build runs contract checks 3; rubric v7 scores checks 2, which
	// a bundle recorded since v7 stores. testdata/checks2.findings.json
	// holds the findings checks 2 gave on each fixture (run at the last
	// commit that had them), stored as a scan would have stored them.
	var stored struct {
		Version, Digest string
		Findings        map[string][]evidence.CheckFinding
	}
	data, err := os.ReadFile(filepath.Join("testdata", "checks2.findings.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &stored); err != nil {
		t.Fatal(err)
	}
	if pin, _ := v7.ContractChecks(); pin.Version != stored.Version || pin.Digest != stored.Digest {
		t.Fatalf("checks2.findings.json holds checks %s (%s), v7 pins %s", stored.Version, stored.Digest, pin)
	}
	bundle := func(name string) *evidence.Bundle {
		b := goldenBundle(t, name)
		if fs, ok := stored.Findings[name]; ok {
			b.ContractChecks = &evidence.ContractChecks{Version: stored.Version, Digest: stored.Digest, Findings: fs}
		}
		return b
	}
	if *updateV7 {
		out := map[string]Result{}
		for _, name := range names {
			out[name+"/v7"] = Evaluate(bundle(name), v7)
		}
		b, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err = os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var golden map[string]json.RawMessage
	if err := json.Unmarshal(data, &golden); err != nil {
		t.Fatal(err)
	}
	if len(golden) != len(names) {
		t.Fatalf("golden holds %d results, want %d", len(golden), len(names))
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			compareGolden(t, golden[name+"/v7"], Evaluate(bundle(name), v7))
		})
	}
}
