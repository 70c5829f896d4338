package rubric

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/evidence"
)

func ptr[T any](v T) *T { return &v }

func sig(state, reason string) evidence.Signal {
	return evidence.Signal{State: evidence.State(state), Reason: reason}
}

const sri = "sha512-3q1pWnJYb0f1m9cQ0W8oS3V4n6y2mY3B5k9Gd1Jx0v4rS8tUe7aP2qL6hN1cZ5wK9fD3bX8yR0oT4iM7uE2gA=="

// okBundle is a bundle in which every v1 dimension scores 100: installed
// with matching integrity, no scripts, a clean session, a current protocol
// version and two fully described, annotated tools.
func okBundle() *evidence.Bundle {
	return &evidence.Bundle{
		SchemaVersion: evidence.SchemaVersion,
		Run:           evidence.Run{ID: "run-1", Date: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC), Tool: evidence.Tool{Name: "verifymcp", Version: "0.1.0"}},
		Target:        evidence.Target{Ecosystem: "npm", Name: "mcp-notes", Version: "1.2.3", Requested: "npm:mcp-notes@1.2.3", Source: "registry", Integrity: sri},
		Sandbox:       evidence.Sandbox{Outcome: evidence.OutcomeOK},
		Signals: map[string]evidence.Signal{
			evidence.SignalInstall:  sig("observed", ""),
			evidence.SignalSession:  sig("observed", ""),
			evidence.SignalContract: sig("observed", ""),
		},
		Install: &evidence.Install{
			Outcome:   "ok",
			Integrity: evidence.Integrity{Expected: sri, Lockfile: sri, Computed: sri, Match: true},
			Scripts:   []evidence.Script{},
		},
		Session: &evidence.Session{Outcome: evidence.OutcomeOK, HandshakePath: evidence.HandshakeDiscover},
		Contract: &contract.Contract{
			ProtocolVersion: "2025-11-25",
			ServerInfo:      contract.Implementation{Name: "notes", Version: "1.2.3"},
			Tools: []contract.Tool{
				{
					Name:        "search_notes",
					Description: "Search the user's notes by full-text query.",
					InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"Full-text query"}},"required":["query"]}`),
					Annotations: &contract.Annotations{ReadOnlyHint: ptr(true), OpenWorldHint: ptr(false)},
				},
				{
					Name:        "archive_note",
					Description: "Move a note to the archive folder; it can be restored.",
					InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"Note id"}}}`),
					Annotations: &contract.Annotations{DestructiveHint: ptr(false), IdempotentHint: ptr(true), OpenWorldHint: ptr(false)},
				},
			},
		},
	}
}

func dim(res Result, id string) DimensionScore {
	for _, d := range res.Dimensions {
		if d.ID == id {
			return d
		}
	}
	return DimensionScore{}
}

// outcome is the part of a Result one probe test looks at.
type outcome struct {
	State State
	Score float64
	// Findings are "code subject" for the dimension's findings, in order.
	Findings []string
}

func outcomeOf(res Result, id string) outcome {
	d := dim(res, id)
	o := outcome{State: d.State, Score: d.Score, Findings: []string{}}
	for _, f := range res.Findings {
		if f.Dimension == id {
			o.Findings = append(o.Findings, strings.TrimSpace(f.Code+" "+f.Subject))
		}
	}
	return o
}

// under returns what o becomes under rubric version v: from rubric v11 the
// unverified markers (a signal not consulted, an integrity not checked)
// are no longer findings, and the dimension's state and score are the same.
func (o outcome) under(v string) outcome {
	if compareVersions(v, unverifiedUntil) < 0 {
		return o
	}
	out := o
	out.Findings = []string{}
	for _, f := range o.Findings {
		if code, _, _ := strings.Cut(f, " "); !strings.HasSuffix(code, ".unverified") {
			out.Findings = append(out.Findings, f)
		}
	}
	return out
}

type probeCase struct {
	name   string
	modify func(b *evidence.Bundle)
	want   outcome
}

// mustLoad loads an embedded rubric version.
func mustLoad(t testing.TB, version string) *Rubric {
	t.Helper()
	r, err := Load(version)
	if err != nil {
		t.Fatalf("Load(%s): %v", version, err)
	}
	return r
}

// runProbeCases runs each case under every rubric version that has the
// dimension: a probe shared by versions must give the same outcome in
// each (only the weights differ).
func runProbeCases(t *testing.T, dimension string, tests []probeCase) {
	t.Helper()
	var rubrics []*Rubric
	for _, v := range Versions() {
		r := mustLoad(t, v)
		if _, ok := r.Dimension(dimension); ok {
			if dimension == DimensionPromptIntegrity && !r.ChecksRunnable() {
				// v5 and v6 score checks 1, which this build does not
				// run (TestContractChecksPin).
				continue
			}
			rubrics = append(rubrics, r)
		}
	}
	if len(rubrics) == 0 {
		t.Fatalf("no rubric version has dimension %s", dimension)
	}
	for _, tt := range tests {
		for _, r := range rubrics {
			t.Run(tt.name+"/v"+r.Version, func(t *testing.T) {
				b := okBundle()
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

// TestComposite pins composites under rubric v1, whose weights the comments
// spell out; TestCompositeV2 does the same for v2.
func TestComposite(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*evidence.Bundle)
		want   *float64
	}{
		{name: "everything_100", want: ptr(100.0)},
		{
			// installability 0 (15), install_scripts 0 because the script
			// step failed (10), session 80 (15), the rest 100 (60):
			// (0 + 0 + 1200 + 6000) / 100.
			name: "weighted_mean",
			modify: func(b *evidence.Bundle) {
				b.Install.Outcome = "failed"
				b.Install.FailedStep = "scripts"
				b.Install.Scripts = nil
				b.Session.HandshakePath = evidence.HandshakeInitializeFallback
			},
			want: ptr(72.0),
		},
		{
			// The four dimensions that need the contract (weight 50) are
			// dropped, so the composite is over the sandbox dimensions.
			name: "dropped_dimensions_leave_the_denominator",
			modify: func(b *evidence.Bundle) {
				b.Signals[evidence.SignalContract] = sig("not_assessed", "opted out")
				b.Session.NonJSONLines = 1
			},
			// (15*100 + 10*100 + 15*100 + 10*50) / 50 = 90.
			want: ptr(90.0),
		},
		{
			name: "zero_points_stay_in_the_denominator",
			modify: func(b *evidence.Bundle) {
				b.Signals[evidence.SignalContract] = sig("unavailable", "")
			},
			// (1500 + 1000 + 1500 + 1000 + 0 * 60) / 100 = 50.
			want: ptr(50.0),
		},
		{
			name: "rounded_to_one_decimal",
			modify: func(b *evidence.Bundle) {
				b.Contract.Tools[0].Description = "short"
				b.Contract.Tools = append(b.Contract.Tools, b.Contract.Tools[1])
			},
			// description_coverage 66.66… rounds to 66.7; composite
			// (9000 + 667) / 100 = 96.67 -> 96.7.
			want: ptr(96.7),
		},
		{
			name: "all_dropped_is_nil",
			modify: func(b *evidence.Bundle) {
				for _, s := range []string{evidence.SignalInstall, evidence.SignalSession, evidence.SignalContract} {
					b.Signals[s] = sig("not_assessed", "dry run")
				}
			},
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := okBundle()
			if tt.modify != nil {
				tt.modify(b)
			}
			res := Evaluate(b, mustLoad(t, "1"))
			if d := diff(tt.want, res.Score); d != "" {
				t.Errorf("Score (-want +got):\n%s\ndimensions: %+v", d, res.Dimensions)
			}
		})
	}
}

func TestGateReasons(t *testing.T) {
	v1 := mustLoad(t, "1")
	b := okBundle()
	b.Signals[evidence.SignalSession] = sig("not_assessed", "--install-only")
	b.Signals[evidence.SignalContract] = sig("error", "listing panicked")
	res := Evaluate(b, v1)
	got := dim(res, "spec_recency")
	want := DimensionScore{ID: "spec_recency", Weight: 10, State: StateZeroPoint, Score: 0,
		Reason: "signal contract is error: listing panicked"}
	if d := diff(want, got); d != "" {
		t.Errorf("an error outranks not_assessed (-want +got):\n%s", d)
	}
	got = dim(res, "session")
	want = DimensionScore{ID: "session", Weight: 15, State: StateDropped, Score: 0,
		Reason: "signal sandbox.session is not_assessed: --install-only"}
	if d := diff(want, got); d != "" {
		t.Errorf("session (-want +got):\n%s", d)
	}
	delete(b.Signals, evidence.SignalInstall)
	got = dim(Evaluate(b, v1), "installability")
	want = DimensionScore{ID: "installability", Weight: 15, State: StateZeroPoint, Score: 0,
		Reason: "signal sandbox.install is not recorded in the bundle"}
	if d := diff(want, got); d != "" {
		t.Errorf("missing signal (-want +got):\n%s", d)
	}
}

func loadBundle(t testing.TB, name string) *evidence.Bundle {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	b, err := evidence.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEvaluateDeterministic(t *testing.T) {
	b := loadBundle(t, "everything.bundle.json")
	watched(func(bh *evidence.Behavior) { *bh = *richBehavior() })(b)
	s := loadBundle(t, "supply.bundle.json")
	b.Supply, b.Run.Date = s.Supply, s.Run.Date
	for _, name := range []string{evidence.SignalRegistryMeta, evidence.SignalOSV, evidence.SignalSocket, evidence.SignalGitHub} {
		b.Signals[name] = s.Signals[name]
	}
	// An alias listed again, and a malware advisory, so that order could
	// matter to both supply probes.
	dup := b.Supply.OSV.Vulnerabilities[1]
	dup.ID, dup.Aliases = dup.Aliases[0], []string{dup.ID}
	b.Supply.OSV.Vulnerabilities = append(b.Supply.OSV.Vulnerabilities, dup,
		evidence.Vulnerability{ID: "MAL-2025-7", Package: "pg-hstore", Version: "2.3.4", Malware: true})
	b.Session.ListErrors = map[string]string{"prompts/list": "a", "resources/list": "b", "resources/templates/list": "c"}
	b.Install.Scripts = []evidence.Script{
		{Package: "z", Event: "postinstall", Ran: true, ExitCode: 1},
		{Package: "a", Event: "install", Ran: true},
		{Package: "a", Event: "preinstall", Ran: true},
	}
	first, err := json.Marshal(Evaluate(b, Current()))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		// Reversing the tools and scripts must not change the result.
		c := *b
		ct := *b.Contract
		ct.Tools = append([]contract.Tool(nil), b.Contract.Tools...)
		for l, r := 0, len(ct.Tools)-1; l < r; l, r = l+1, r-1 {
			ct.Tools[l], ct.Tools[r] = ct.Tools[r], ct.Tools[l]
		}
		c.Contract = &ct
		// And the behaviour events.
		bh := *b.Behavior
		bh.Network = slices.Clone(bh.Network)
		slices.Reverse(bh.Network)
		bh.Processes = slices.Clone(bh.Processes)
		slices.Reverse(bh.Processes)
		bh.Files = slices.Clone(bh.Files)
		slices.Reverse(bh.Files)
		bh.Exfiltration = slices.Clone(bh.Exfiltration)
		slices.Reverse(bh.Exfiltration)
		c.Behavior = &bh
		// And the supply-chain lists.
		sp := *b.Supply
		osv := *sp.OSV
		osv.Vulnerabilities = slices.Clone(osv.Vulnerabilities)
		slices.Reverse(osv.Vulnerabilities)
		sock := *sp.Socket
		sock.Alerts = slices.Clone(sock.Alerts)
		slices.Reverse(sock.Alerts)
		sp.OSV, sp.Socket = &osv, &sock
		c.Supply = &sp
		if i%2 == 1 {
			c = *b
		}
		got, err := json.Marshal(Evaluate(&c, Current()))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(first) {
			t.Fatalf("run %d differs:\n%s", i, lineDiff(strings.Split(string(first), ","), strings.Split(string(got), ",")))
		}
	}
}

// TestEverything pins the score of the realistic fixture, whose tools
// mirror @modelcontextprotocol/server-everything, under rubric v1.
func TestEverything(t *testing.T) {
	v1 := mustLoad(t, "1")
	res := Evaluate(loadBundle(t, "everything.bundle.json"), v1)
	var codes []string
	for _, f := range res.Findings {
		codes = append(codes, strings.TrimSpace(f.Code+" "+f.Subject))
	}
	wantCodes := []string{
		"pkg.contract.annotation.absent startElicitation",
		"pkg.contract.annotation.absent zip",
		"pkg.contract.description.coverage",
		"pkg.contract.description.missing add",
		"pkg.contract.schema.completeness",
		"pkg.contract.tool.destructive startElicitation",
		"pkg.contract.tool.destructive zip",
		"pkg.session.spec.outdated",
	}
	if d := diff(wantCodes, codes); d != "" {
		t.Errorf("findings (-want +got):\n%s", d)
	}
	// (1500 + 1000 + 1500 + 1000 + 700 + 1500 + 923 + 1384.5) / 100.
	if d := diff(ptr(95.1), res.Score); d != "" {
		t.Errorf("Score (-want +got):\n%s", d)
	}
	if res.RubricVersion != "1" || res.RubricHash != v1.Hash {
		t.Errorf("result carries rubric %s %s, want 1 %s", res.RubricVersion, res.RubricHash, v1.Hash)
	}
	for _, f := range res.Findings {
		if f.Kind == KindMeasurement && f.Value == nil {
			t.Errorf("measurement %s has no value", f.Code)
		}
		if f.Kind == KindFinding && f.Value != nil {
			t.Errorf("finding %s has a value", f.Code)
		}
	}
}

func BenchmarkEvaluate(b *testing.B) {
	bundle := loadBundle(b, "everything.bundle.json")
	r := Current()
	b.ReportAllocs()
	for b.Loop() {
		Evaluate(bundle, r)
	}
}

// BenchmarkEvaluateV4 evaluates the same fixture under rubric v4, which
// does not run the contract checks: the difference from BenchmarkEvaluate
// is their cost.
func BenchmarkEvaluateV4(b *testing.B) {
	bundle := loadBundle(b, "everything.bundle.json")
	r := mustLoad(b, "4")
	b.ReportAllocs()
	for b.Loop() {
		Evaluate(bundle, r)
	}
}

// BenchmarkEvaluateBehavior evaluates the fixture with rich behaviour
// evidence, every behaviour probe firing.
func BenchmarkEvaluateBehavior(b *testing.B) {
	bundle := loadBundle(b, "everything.bundle.json")
	watched(func(bh *evidence.Behavior) { *bh = *richBehavior() })(bundle)
	r := Current()
	b.ReportAllocs()
	for b.Loop() {
		Evaluate(bundle, r)
	}
}

func TestFormatScore(t *testing.T) {
	// The reference is the formula formatScore replaced, which results
	// stored under rubric v1 were written with.
	ref := func(x float64) string {
		return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.1f", x), "0"), ".")
	}
	for _, x := range []float64{0, 100, 87.5, 92.3, 66.66666, 0.04, 0.05, math.Copysign(0, -1), 99.95, 1e21, -3, math.NaN(), math.Inf(1), math.Inf(-1)} {
		if got, want := formatScore(x), ref(x); got != want {
			t.Errorf("formatScore(%v) = %q, want %q", x, got, want)
		}
	}
}
