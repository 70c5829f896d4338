package rubric

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/evidence"
)

// v8Hash is the SHA-256 of rubric v8 as released, the last version
// without a critical cap.
const v8Hash = "sha256:d022d5c2bb5e3cc9ff1466f1970b061e2d77462380cbe7c7f8e2feb923aca40d"

func TestV8Unchanged(t *testing.T) {
	if got := mustLoad(t, "8").Hash; got != v8Hash {
		t.Errorf("rubric v8 hash = %s, want %s: v8.yaml was edited; make a new version instead", got, v8Hash)
	}
}

// fixtureBundles are every bundle of testdata, by file name.
func fixtureBundles(t *testing.T) map[string]*evidence.Bundle {
	t.Helper()
	names, err := filepath.Glob(filepath.Join("testdata", "*.bundle.json"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no fixture bundles (%v)", err)
	}
	out := map[string]*evidence.Bundle{}
	for _, n := range names {
		out[filepath.Base(n)] = loadBundle(t, filepath.Base(n))
	}
	return out
}

func criticalCodes(res Result) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range res.Findings {
		if f.Kind == KindFinding && f.Severity == SeverityCritical && !seen[f.Code] {
			seen[f.Code] = true
			out = append(out, f.Code)
		}
	}
	return out
}

func TestLoadV9(t *testing.T) {
	v8, v9 := mustLoad(t, "8"), mustLoad(t, "9")
	if v8.Params.Composite != nil {
		t.Errorf("v8 has a composite block: %+v", v8.Params.Composite)
	}
	c := v9.Params.Composite
	if c == nil || c.CriticalCap == nil || *c.CriticalCap != 20 || strings.TrimSpace(c.CriticalCapReason) == "" {
		t.Fatalf("v9 composite = %+v, want critical_cap 20 with a reason", c)
	}
	for _, want := range []string{"ceiling, not a score", "23.3", "failed install"} {
		if !strings.Contains(c.CriticalCapReason, want) {
			t.Errorf("critical_cap_reason lacks %q: %s", want, c.CriticalCapReason)
		}
	}
	// Everything else is v8's: dimensions, weights, zero points, codes and
	// the other parameters.
	if d := diff(v8.Dimensions, v9.Dimensions); d != "" {
		t.Errorf("dimensions differ from v8 (-v8 +v9):\n%s", d)
	}
	if d := diff(v8.Codes, v9.Codes); d != "" {
		t.Errorf("codes differ from v8 (-v8 +v9):\n%s", d)
	}
	p8, p9 := v8.Params, v9.Params
	p9.Composite = nil
	if d := diff(p8, p9); d != "" {
		t.Errorf("parameters beyond composite differ from v8 (-v8 +v9):\n%s", d)
	}
}

// TestCriticalCap evaluates every fixture under v8 and v9: v9 gives the
// same dimensions and findings, and the same composite unless a critical
// finding caps it at 20, which its Cap records.
func TestCriticalCap(t *testing.T) {
	v8, v9 := mustLoad(t, "8"), mustLoad(t, "9")
	capped := 0
	for name, b := range fixtureBundles(t) {
		t.Run(name, func(t *testing.T) {
			r8, r9 := Evaluate(b, v8), Evaluate(b, v9)
			if d := diff(r8.Dimensions, r9.Dimensions); d != "" {
				t.Errorf("dimensions differ from v8 (-v8 +v9):\n%s", d)
			}
			if d := diff(r8.Findings, r9.Findings); d != "" {
				t.Errorf("findings differ from v8 (-v8 +v9):\n%s", d)
			}
			if r8.Cap != nil {
				t.Errorf("v8 capped: %+v", r8.Cap)
			}
			crit := criticalCodes(r9)
			switch {
			case r8.Score == nil:
				if r9.Score != nil || r9.Cap != nil {
					t.Errorf("v9 score %v, cap %+v; want no score, as v8", ptrText(r9.Score), r9.Cap)
				}
			case len(crit) == 0 || *r8.Score <= 20:
				if r9.Cap != nil || r9.Score == nil || *r9.Score != *r8.Score {
					t.Errorf("v9 score %v, cap %+v; want v8's %v and no cap (critical: %v)", ptrText(r9.Score), r9.Cap, *r8.Score, crit)
				}
			default:
				capped++
				want := &Cap{Value: 20, Reason: strings.TrimSpace(v9.Params.Composite.CriticalCapReason), Codes: sorted(crit), Uncapped: *r8.Score}
				if d := diff(want, r9.Cap); d != "" {
					t.Errorf("cap (-want +got):\n%s", d)
				}
				if d := diff(ptr(20.0), r9.Score); d != "" {
					t.Errorf("score (-want +got):\n%s", d)
				}
			}
		})
	}
	// The behaviour fixture (canaries out, 40.8 under v8) and the poisoned
	// one (55.0) are capped.
	if capped < 2 {
		t.Errorf("%d fixtures capped, want at least 2", capped)
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func ptrText(f *float64) any {
	if f == nil {
		return "nil"
	}
	return *f
}

// TestCriticalCapCodes checks the codes of a cap: the behaviour fixture
// has three canary findings of one code, which the cap names once.
func TestCriticalCapCodes(t *testing.T) {
	res := Evaluate(loadBundle(t, "behavior.bundle.json"), Current())
	if res.Cap == nil {
		t.Fatal("behaviour fixture not capped")
	}
	if d := diff([]string{"pkg.behavior.canary_exfiltration"}, res.Cap.Codes); d != "" {
		t.Errorf("codes (-want +got):\n%s", d)
	}
	if res.Cap.Uncapped != 40.8 || *res.Score != 20 {
		t.Errorf("score %v, uncapped %v; want 20 and 40.8", *res.Score, res.Cap.Uncapped)
	}
	// The JSON form carries it.
	var j struct {
		Score float64 `json:"score"`
		Cap   *struct {
			Value    float64  `json:"value"`
			Reason   string   `json:"reason"`
			Codes    []string `json:"codes"`
			Uncapped float64  `json:"uncapped"`
		} `json:"cap"`
	}
	if err := json.Unmarshal(mustJSON(t, res), &j); err != nil {
		t.Fatal(err)
	}
	if j.Cap == nil || j.Cap.Value != 20 || j.Cap.Uncapped != 40.8 || j.Cap.Reason == "" || len(j.Cap.Codes) != 1 || j.Score != 20 {
		t.Errorf("JSON = %s", mustJSON(t, res))
	}
}

// TestNoCriticalNoCap checks a clean bundle and a bundle whose worst
// finding is high: no cap, and no "cap" in the JSON.
func TestNoCriticalNoCap(t *testing.T) {
	for _, name := range []string{"hostile.bundle.json", "everything.bundle.json"} {
		res := Evaluate(loadBundle(t, name), Current())
		if crit := criticalCodes(res); len(crit) != 0 {
			t.Fatalf("%s: critical findings %v; the test needs a fixture without", name, crit)
		}
		if res.Cap != nil || strings.Contains(string(mustJSON(t, res)), `"cap"`) {
			t.Errorf("%s: cap %+v, want none", name, res.Cap)
		}
	}
	res := Evaluate(okBundle(), Current())
	if res.Cap != nil || res.Score == nil {
		t.Errorf("okBundle: score %v, cap %+v", ptrText(res.Score), res.Cap)
	}
}

// TestCriticalCapBelow checks that a composite at or below the cap is left
// as it is, with no Cap: the behaviour fixture (40.8) under a rubric that
// caps at 50, then at exactly 40.8.
func TestCriticalCapBelow(t *testing.T) {
	// The rubric in force, whose contract checks this build runs (v9 pins
	// checks 2, which it no longer does).
	base, err := os.ReadFile(filepath.Join("versions", "v"+CurrentVersion+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	b := loadBundle(t, "behavior.bundle.json")
	for _, value := range []string{"50", "40.8", "100"} {
		r := mustParse(t, []byte(strings.Replace(string(base), "    critical_cap: 20\n", "    critical_cap: "+value+"\n", 1)))
		res := Evaluate(b, r)
		if res.Cap != nil || res.Score == nil || *res.Score != 40.8 {
			t.Errorf("cap %s: score %v, cap %+v; want 40.8 and no cap", value, ptrText(res.Score), res.Cap)
		}
	}
	// A cap of 0 is allowed, and takes the composite to 0.
	r := mustParse(t, []byte(strings.Replace(string(base), "    critical_cap: 20\n", "    critical_cap: 0\n", 1)))
	if res := Evaluate(b, r); res.Cap == nil || *res.Score != 0 || res.Cap.Uncapped != 40.8 {
		t.Errorf("cap 0: score %v, cap %+v", ptrText(res.Score), res.Cap)
	}
}

// TestCriticalCapFindings checks which findings trigger the cap: a finding
// of severity critical does; a measurement does not, whatever severity it
// carries (validation keeps measurements at info, but the cap does not
// rely on it); a graded code whose evidence made it high does not.
func TestCriticalCapFindings(t *testing.T) {
	p := Current().Params.Composite
	crit := Finding{Code: "pkg.supply.osv.vulnerable", Kind: KindFinding, Severity: SeverityCritical}
	tests := []struct {
		name     string
		findings []Finding
		score    float64
		want     []string // codes; nil for no cap
	}{
		{"none", nil, 90, nil},
		{"high only", []Finding{{Code: "pkg.contract.injection.concealment", Kind: KindFinding, Severity: SeverityHigh}}, 90, nil},
		{"graded down to high", []Finding{{Code: "pkg.supply.osv.vulnerable", Kind: KindFinding, Severity: SeverityHigh}}, 90, nil},
		{"critical measurement", []Finding{{Code: "pkg.contract.schema.completeness", Kind: KindMeasurement, Severity: SeverityCritical, Value: ptr(12.0)}}, 90, nil},
		{"critical", []Finding{crit}, 90, []string{"pkg.supply.osv.vulnerable"}},
		{"sorted and unique", []Finding{crit, {Code: "pkg.behavior.canary_exfiltration", Kind: KindFinding, Severity: SeverityCritical}, crit}, 20.1,
			[]string{"pkg.behavior.canary_exfiltration", "pkg.supply.osv.vulnerable"}},
		{"at the cap", []Finding{crit}, 20, nil},
		{"below the cap", []Finding{crit}, 7.5, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := criticalCap(p, tt.findings, tt.score)
			if tt.want == nil {
				if got != nil {
					t.Errorf("cap %+v, want none", got)
				}
				return
			}
			want := &Cap{Value: 20, Reason: strings.TrimSpace(p.CriticalCapReason), Codes: tt.want, Uncapped: tt.score}
			if d := diff(want, got); d != "" {
				t.Errorf("cap (-want +got):\n%s", d)
			}
		})
	}
	if got := criticalCap(nil, []Finding{crit}, 90); got != nil {
		t.Errorf("no composite parameters: cap %+v", got)
	}
}

// TestOlderVersionsNeverCap evaluates every fixture under every version
// before v9: no cap, and no "cap" in the JSON the goldens pin.
func TestOlderVersionsNeverCap(t *testing.T) {
	bundles := fixtureBundles(t)
	for _, v := range Versions() {
		if hasCap(v) {
			continue
		}
		r := mustLoad(t, v)
		for name, b := range bundles {
			res := Evaluate(b, r)
			if res.Cap != nil || strings.Contains(string(mustJSON(t, res)), `"cap"`) {
				t.Errorf("v%s %s: cap %+v", v, name, res.Cap)
			}
		}
	}
	if hasCap("8") || !hasCap("9") || !hasCap("10") {
		t.Error("hasCap: wrong versions")
	}
}

func TestLoadRejectsBadCap(t *testing.T) {
	base, err := os.ReadFile(filepath.Join("versions", "v9.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	b := string(base)
	const capLine = "    critical_cap: 20\n"
	reasonStart := strings.Index(b, "    critical_cap_reason: >-\n")
	reasonEnd := strings.Index(b[reasonStart:], "\n\ndimensions:\n") + reasonStart + 1
	if reasonStart < 0 || reasonEnd <= reasonStart {
		t.Fatal("critical_cap_reason not found")
	}
	withoutReason := b[:reasonStart] + b[reasonEnd:]
	blockStart := strings.Index(b, "  composite:\n")
	withoutBlock := b[:blockStart] + b[reasonEnd:]
	v8, err := os.ReadFile(filepath.Join("versions", "v8.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, data, want string
	}{
		{"block_missing", withoutBlock, "parameters.composite: missing, and rubric v9 has a critical cap"},
		{"block_before_v9", strings.Replace(string(v8), "\ndimensions:\n", "\n  composite:\n    critical_cap: 20\n    critical_cap_reason: x\n\ndimensions:\n", 1),
			"parameters.composite: present, but rubric v8 is older than v9"},
		{"cap_missing", strings.Replace(b, capLine, "", 1), "parameters.composite.critical_cap: missing"},
		{"cap_negative", strings.Replace(b, capLine, "    critical_cap: -1\n", 1), "parameters.composite.critical_cap: -1 outside 0..100"},
		{"cap_over_100", strings.Replace(b, capLine, "    critical_cap: 101\n", 1), "parameters.composite.critical_cap: 101 outside 0..100"},
		{"cap_nan", strings.Replace(b, capLine, "    critical_cap: .nan\n", 1), "parameters.composite.critical_cap: NaN outside 0..100"},
		{"reason_missing", withoutReason, "parameters.composite.critical_cap_reason: missing"},
		{"reason_blank", withoutReason[:strings.Index(withoutReason, "\n\ndimensions:\n")] + "\n    critical_cap_reason: \"  \"" + withoutReason[strings.Index(withoutReason, "\n\ndimensions:\n"):],
			"parameters.composite.critical_cap_reason: missing"},
		{"unknown_field", strings.Replace(b, capLine, "    critical_cap: 20\n    critical_floor: 5\n", 1), "field critical_floor not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse([]byte(tt.data))
			if err == nil {
				t.Fatalf("parse succeeded, want an error containing %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error:\n%v\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

// TestMemoMatchesEvaluateCapped checks that the rescoring memo caps as
// Evaluate does: the capped fixtures and variants that share their
// contract (so that the memo reuses the contract-only probes whose
// critical findings trigger the cap) give the same result, in two rounds.
func TestMemoMatchesEvaluateCapped(t *testing.T) {
	r := Current()
	var bundles []*evidence.Bundle
	for _, name := range []string{"poisoned.bundle.json", "behavior.bundle.json", "everything.bundle.json"} {
		b := loadBundle(t, name)
		bundles = append(bundles, b)
		// The same contract with its signal unavailable: the contract
		// dimensions get their zero point and raise no finding, so the
		// cap must not carry over from the memo's earlier outcome.
		v := *b
		v.Signals = map[string]evidence.Signal{}
		for k, s := range b.Signals {
			v.Signals[k] = s
		}
		v.Signals[evidence.SignalContract] = sig("unavailable", "varied")
		bundles = append(bundles, &v)
		w := *b
		w.Run.ID += "-again"
		bundles = append(bundles, &w)
	}
	m := NewMemo(r)
	capped := 0
	for round := range 2 {
		for i, b := range bundles {
			want := Evaluate(b, r)
			got := m.Evaluate(b)
			if string(mustJSON(t, got)) != string(mustJSON(t, want)) {
				t.Fatalf("round %d, bundle %d: Memo.Evaluate differs:\n got %s\nwant %s", round, i, mustJSON(t, got), mustJSON(t, want))
			}
			if got.Cap != nil {
				capped++
			}
		}
	}
	if capped == 0 {
		t.Error("no bundle was capped; the test checks nothing")
	}
}
