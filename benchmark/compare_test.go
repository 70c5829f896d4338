package benchmark_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verifymcp/verifymcp/benchmark"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
)

const inForce = "5"

// testCase is a valid reviewed case over the session and supply areas.
func testCase(mod func(*benchmark.Case)) benchmark.Case {
	c := benchmark.Case{
		ID: "example", Kind: benchmark.KindReviewed, Track: benchmark.TrackPackage,
		Target: "npm:example-mcp@1.2.3", Reviewer: "Ada Lovelace <ada@lovelace.example>", Provenance: "Reported by a user.", Selected: "2026-01-05",
		RubricVersion: inForce,
		Scope:         []string{"pkg.session.", "pkg.supply.osv."},
		Expected:      []string{"pkg.session.start_crashed", "pkg.supply.osv.vulnerable"},
	}
	if mod != nil {
		mod(&c)
	}
	return c
}

var target = benchmark.ScanTarget{Name: "example-mcp", Version: "1.2.3"}

func observed(signals map[string]evidence.State, findings ...string) benchmark.Observed {
	o := benchmark.Observed{RunID: "r1", RubricVersion: inForce, Name: "example-mcp", Version: "1.2.3", Signals: map[string]benchmark.SignalState{}}
	for name, s := range signals {
		o.Signals[name] = benchmark.SignalState{State: s}
	}
	for _, f := range findings {
		code, subject, _ := strings.Cut(f, " ")
		o.Findings = append(o.Findings, benchmark.Emitted{Code: code, Subject: subject})
	}
	return o
}

var allObserved = map[string]evidence.State{
	evidence.SignalSession: evidence.StateObserved, evidence.SignalOSV: evidence.StateObserved,
	evidence.SignalContract: evidence.StateObserved, evidence.SignalSocket: evidence.StateObserved,
}

// codes lists the codes of matches, for compact expectations.
func codes(ms []benchmark.Match) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.Code)
	}
	return out
}

func missedCodes(ms []benchmark.Missed) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.Code)
	}
	return out
}

// unavailableCodes lists the false negatives whose producing signal was
// not observed.
func unavailableCodes(ms []benchmark.Missed) []string {
	out := []string{}
	for _, m := range ms {
		if m.SignalUnavailable {
			out = append(out, m.Code)
		}
	}
	return out
}

func TestCompare(t *testing.T) {
	tests := []struct {
		name    string
		c       benchmark.Case
		o       benchmark.Observed
		cat     *rubric.Rubric
		tp, fp  []string
		fn, fnU []string // fnU: those of fn whose producing signal was not observed
		out     []string
		counts  benchmark.Counts
	}{
		{
			name: "tp_fp_fn_and_out_of_scope_counted_in_nothing",
			c:    testCase(nil),
			o: observed(allObserved, "pkg.session.start_crashed", "pkg.session.oom",
				"pkg.contract.annotation.absent add", "pkg.supply.socket.unverified example-mcp@1.2.3"),
			tp: []string{"pkg.session.start_crashed"}, fp: []string{"pkg.session.oom"},
			fn: []string{"pkg.supply.osv.vulnerable"}, fnU: []string{},
			out:    []string{"pkg.contract.annotation.absent", "pkg.supply.socket.unverified"},
			counts: benchmark.Counts{TP: 1, FP: 1, FN: 1},
		},
		{
			name: "a_code_emitted_for_several_subjects_counts_once",
			c: testCase(func(c *benchmark.Case) {
				c.Scope, c.Expected = []string{"pkg.contract.annotation."}, []string{"pkg.contract.annotation.absent"}
			}),
			o: observed(allObserved, "pkg.contract.annotation.absent add", "pkg.contract.annotation.absent get_weather",
				"pkg.contract.annotation.absent add", "pkg.contract.annotation.contradiction delete_file", "pkg.contract.annotation.contradiction rm"),
			tp: []string{"pkg.contract.annotation.absent"}, fp: []string{"pkg.contract.annotation.contradiction"},
			fn: []string{}, fnU: []string{}, out: []string{},
			counts: benchmark.Counts{TP: 1, FP: 1},
		},
		{
			name: "expected_codes_listed_twice_count_once",
			c: testCase(func(c *benchmark.Case) {
				c.Expected = []string{"pkg.session.start_crashed", "pkg.session.start_crashed"}
			}),
			o:  observed(allObserved),
			tp: []string{}, fp: []string{}, fn: []string{"pkg.session.start_crashed"}, fnU: []string{}, out: []string{},
			counts: benchmark.Counts{FN: 1},
		},
		{
			// The method's FN is "expected and not emitted": a miss whose
			// signal did not answer is an FN, and is also counted beside it.
			name: "fn_whose_signal_was_not_observed_is_an_fn_all_the_same",
			c:    testCase(nil),
			o: observed(map[string]evidence.State{evidence.SignalSession: evidence.StateObserved, evidence.SignalOSV: evidence.StateUnavailable},
				"pkg.supply.osv.unverified example-mcp@1.2.3"),
			tp: []string{}, fp: []string{"pkg.supply.osv.unverified"},
			fn: []string{"pkg.session.start_crashed", "pkg.supply.osv.vulnerable"}, fnU: []string{"pkg.supply.osv.vulnerable"}, out: []string{},
			counts: benchmark.Counts{FP: 1, FN: 2, FNUnavailable: 1},
		},
		{
			name: "a_signal_not_recorded_never_reads_as_observed",
			c:    testCase(nil),
			o:    observed(map[string]evidence.State{evidence.SignalOSV: evidence.StateObserved}),
			tp:   []string{}, fp: []string{}, fn: []string{"pkg.session.start_crashed", "pkg.supply.osv.vulnerable"}, fnU: []string{"pkg.session.start_crashed"}, out: []string{},
			counts: benchmark.Counts{FN: 2, FNUnavailable: 1},
		},
		{
			name: "a_not_assessed_signal_is_not_observed_either",
			c:    testCase(nil),
			o: observed(map[string]evidence.State{evidence.SignalSession: evidence.StateObserved, evidence.SignalOSV: evidence.StateNotAssessed},
				"pkg.session.start_crashed"),
			tp: []string{"pkg.session.start_crashed"}, fp: []string{}, fn: []string{"pkg.supply.osv.vulnerable"}, fnU: []string{"pkg.supply.osv.vulnerable"}, out: []string{},
			counts: benchmark.Counts{TP: 1, FN: 1, FNUnavailable: 1},
		},
		{
			name: "empty_scope_counts_nothing",
			c:    testCase(func(c *benchmark.Case) { c.Scope, c.Expected = nil, nil }),
			o:    observed(allObserved, "pkg.session.start_crashed", "pkg.session.oom"),
			tp:   []string{}, fp: []string{}, fn: []string{}, fnU: []string{},
			out: []string{"pkg.session.oom", "pkg.session.start_crashed"},
		},
		{
			name: "an_exact_code_in_scope_covers_that_code_alone",
			c: testCase(func(c *benchmark.Case) {
				c.Scope, c.Expected = []string{"pkg.session.oom"}, []string{}
			}),
			o:  observed(allObserved, "pkg.session.oom", "pkg.session.oom_extra", "pkg.session.start_crashed"),
			tp: []string{}, fp: []string{"pkg.session.oom"}, fn: []string{}, fnU: []string{},
			out:    []string{"pkg.session.oom_extra", "pkg.session.start_crashed"},
			counts: benchmark.Counts{FP: 1},
		},
		{
			name: "a_prefix_matches_whole_segments_only",
			c: testCase(func(c *benchmark.Case) {
				c.Scope, c.Expected = []string{"pkg.session."}, []string{}
			}),
			o:  observed(allObserved, "pkg.sessionx.crash"),
			tp: []string{}, fp: []string{}, fn: []string{}, fnU: []string{}, out: []string{"pkg.sessionx.crash"},
		},
		{
			name: "the_producing_signal_decides_not_the_dimension",
			c: testCase(func(c *benchmark.Case) {
				c.Scope, c.Expected = []string{"pkg.supply.socket."}, []string{"pkg.supply.socket.malware"}
			}),
			// malware_signal reads socket and osv, but Socket produces
			// socket.malware: it answered, so osv being unavailable
			// explains nothing.
			o:   observed(map[string]evidence.State{evidence.SignalSocket: evidence.StateObserved, evidence.SignalOSV: evidence.StateUnavailable}),
			cat: rubric.Current(),
			tp:  []string{}, fp: []string{}, fn: []string{"pkg.supply.socket.malware"}, fnU: []string{}, out: []string{},
			counts: benchmark.Counts{FN: 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := benchmark.Compare(tc.c, target, tc.o, inForce, tc.cat)
			if got.Error != "" {
				t.Fatalf("error %q", got.Error)
			}
			for _, d := range []struct {
				what      string
				want, got []string
			}{
				{"TP", tc.tp, codes(got.TP)}, {"FP", tc.fp, codes(got.FP)}, {"FN", tc.fn, missedCodes(got.FN)},
				{"FN of which signal unavailable", tc.fnU, unavailableCodes(got.FN)}, {"out of scope", tc.out, codes(got.OutOfScope)},
			} {
				if diff := cmp.Diff(d.want, d.got); diff != "" {
					t.Errorf("%s (-want +got):\n%s", d.what, diff)
				}
			}
			if diff := cmp.Diff(tc.counts, got.Counts); diff != "" {
				t.Errorf("counts (-want +got):\n%s", diff)
			}
			if !got.Publishable {
				t.Errorf("not publishable: %v", got.NotPublishable)
			}
		})
	}
}

func TestCompareSubjects(t *testing.T) {
	c := testCase(func(c *benchmark.Case) {
		c.Scope, c.Expected = []string{"pkg.contract.annotation."}, []string{"pkg.contract.annotation.absent"}
	})
	got := benchmark.Compare(c, target, observed(allObserved,
		"pkg.contract.annotation.absent write_note", "pkg.contract.annotation.absent add", "pkg.contract.annotation.absent write_note"), inForce, nil)
	want := []benchmark.Match{{Code: "pkg.contract.annotation.absent", Subjects: []string{"add", "write_note"}}}
	if diff := cmp.Diff(want, got.TP); diff != "" {
		t.Errorf("TP (-want +got):\n%s", diff)
	}
}

func TestCompareMissedSignals(t *testing.T) {
	got := benchmark.Compare(testCase(nil), target,
		observed(map[string]evidence.State{evidence.SignalSession: evidence.StateObserved, evidence.SignalOSV: evidence.StateError}), inForce, nil)
	want := []benchmark.Missed{
		{Code: "pkg.session.start_crashed", Signals: []benchmark.NamedSignal{{Name: evidence.SignalSession, State: evidence.StateObserved}}},
		{Code: "pkg.supply.osv.vulnerable", Signals: []benchmark.NamedSignal{{Name: evidence.SignalOSV, State: evidence.StateError}}, SignalUnavailable: true},
	}
	if diff := cmp.Diff(want, got.FN); diff != "" {
		t.Errorf("FN (-want +got):\n%s", diff)
	}
}

func TestCompareNotPublishable(t *testing.T) {
	tests := []struct {
		name string
		c    benchmark.Case
		want string
	}{
		{"case_under_an_old_rubric", testCase(func(c *benchmark.Case) { c.RubricVersion = "4" }), "reviewed under rubric 4, but rubric 5 is in force"},
		{"case_with_no_person_signed", testCase(func(c *benchmark.Case) { c.Reviewer = "pending" }), "no person has signed"},
		{"case_with_an_open_dispute", testCase(func(c *benchmark.Case) {
			c.Disputes = []benchmark.Dispute{{RaisedBy: "Grace Hopper", Date: "2026-02-01", Question: "Is the crash a crash?"}}
		}), "1 open dispute"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := benchmark.Compare(tc.c, target, observed(allObserved, "pkg.session.start_crashed", "pkg.supply.osv.vulnerable GHSA-1"), inForce, nil)
			if got.Publishable || len(got.NotPublishable) != 1 || !strings.Contains(got.NotPublishable[0], tc.want) {
				t.Errorf("publishable %v %q, want not publishable: %q", got.Publishable, got.NotPublishable, tc.want)
			}
			// The figures are still computed and shown.
			if got.Counts != (benchmark.Counts{TP: 2}) {
				t.Errorf("counts %+v", got.Counts)
			}
			rep := benchmark.NewReport(benchmark.RunInfo{RubricVersion: inForce, Source: benchmark.SourceScan}, []benchmark.CaseResult{got})
			if rep.Kinds[1].Publishable || len(rep.Kinds[1].NotPublishable) != 1 {
				t.Errorf("kind summary %+v must not be publishable", rep.Kinds[1])
			}
			var buf bytes.Buffer
			if err := benchmark.WriteTable(&buf, rep); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(buf.String(), "NOT PUBLISHABLE\n  example: "+got.NotPublishable[0]) {
				t.Errorf("table does not flag the case:\n%s", buf.String())
			}
		})
	}
}

func TestCompareRefusesWhatItCannotCompare(t *testing.T) {
	fixture := benchmark.ScanTarget{Name: "verifymcp-case-x", Version: "1.0.0", Integrity: "sha512-AAAA"}
	tests := []struct {
		name   string
		target benchmark.ScanTarget
		o      func(*benchmark.Observed)
		want   string
	}{
		{"scan_failed", target, func(o *benchmark.Observed) { o.Error = "engine unreachable" }, "engine unreachable"},
		{"scored_under_another_rubric", target, func(o *benchmark.Observed) { o.RubricVersion = "4" }, "scored under rubric 4, not 5"},
		{"no_rubric_version", target, func(o *benchmark.Observed) { o.RubricVersion = "" }, "no rubric version"},
		{"another_version", target, func(o *benchmark.Observed) { o.Version = "1.2.4" }, "example-mcp@1.2.4, not example-mcp@1.2.3"},
		{"other_arguments", target, func(o *benchmark.Observed) { o.Args = []string{"--debug"} }, "with arguments \"--debug\""},
		{"other_environment", target, func(o *benchmark.Observed) { o.EnvNames = []string{"TOKEN"} }, "environment variables TOKEN"},
		{"another_build_of_a_fixture", fixture, func(o *benchmark.Observed) {
			o.Name, o.Version, o.Integrity = "verifymcp-case-x", "1.0.0", "sha512-BBBB"
		}, "another build"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := observed(allObserved, "pkg.session.start_crashed", "pkg.session.oom")
			tc.o(&o)
			got := benchmark.Compare(testCase(nil), tc.target, o, inForce, nil)
			if !strings.Contains(got.Error, tc.want) {
				t.Errorf("error %q, want %q", got.Error, tc.want)
			}
			if got.Publishable || got.Counts != (benchmark.Counts{}) || len(got.TP)+len(got.FP)+len(got.OutOfScope) != 0 {
				t.Errorf("an uncompared case counts in nothing: %+v", got)
			}
			rep := benchmark.NewReport(benchmark.RunInfo{RubricVersion: inForce}, []benchmark.CaseResult{got})
			if k := rep.Kinds[1]; k.Compared != 0 || k.Cases != 1 || len(k.Failed) != 1 || k.FalseDiscoveryRate != nil || k.Publishable {
				t.Errorf("kind summary %+v", k)
			}
		})
	}
}

func TestReportKeepsKindsApart(t *testing.T) {
	syn := func(id string, emitted ...string) benchmark.CaseResult {
		c := testCase(func(c *benchmark.Case) {
			c.ID, c.Kind, c.Target, c.Statement = id, benchmark.KindSynthetic, "fixture:"+id+"@1.0.0", "s"
			c.Scope, c.Expected = []string{"pkg.session."}, []string{"pkg.session.start_crashed"}
		})
		return benchmark.Compare(c, benchmark.ScanTarget{}, observed(allObserved, emitted...), inForce, nil)
	}
	rev := func(id string, emitted ...string) benchmark.CaseResult {
		return benchmark.Compare(testCase(func(c *benchmark.Case) { c.ID = id }), target, observed(allObserved, emitted...), inForce, nil)
	}
	results := []benchmark.CaseResult{
		// synthetic: TP 3, FP 1 (oom once, however many subjects)
		syn("s1", "pkg.session.start_crashed"),
		syn("s2", "pkg.session.start_crashed", "pkg.session.oom a", "pkg.session.oom b"),
		syn("s3", "pkg.session.start_crashed", "pkg.behavior.dns.lookup x.example"),
		// reviewed: TP 2, FP 2, FN 2
		rev("r1", "pkg.session.start_crashed", "pkg.supply.osv.vulnerable GHSA-1", "pkg.session.oom"),
		rev("r2", "pkg.session.handshake_timeout"),
	}
	rep := benchmark.NewReport(benchmark.RunInfo{RubricVersion: inForce, ToolVersion: "test", Source: benchmark.SourceScan}, results)
	if len(rep.Kinds) != 2 || rep.Kinds[0].Kind != benchmark.KindSynthetic || rep.Kinds[1].Kind != benchmark.KindReviewed {
		t.Fatalf("kinds %+v", rep.Kinds)
	}
	s, r := rep.Kinds[0], rep.Kinds[1]
	if s.Counts != (benchmark.Counts{TP: 3, FP: 1}) || s.FalseDiscoveryRate == nil || *s.FalseDiscoveryRate != 0.25 {
		t.Errorf("synthetic %+v fdr %v, want TP 3 FP 1 and 0.25", s.Counts, s.FalseDiscoveryRate)
	}
	if r.Counts != (benchmark.Counts{TP: 2, FP: 2, FN: 2}) || r.FalseDiscoveryRate == nil || *r.FalseDiscoveryRate != 0.5 {
		t.Errorf("reviewed %+v fdr %v, want TP 2 FP 2 FN 2 and 0.5", r.Counts, r.FalseDiscoveryRate)
	}
	wantCodes := []benchmark.CodeSummary{
		{Code: "pkg.session.handshake_timeout", Counts: benchmark.Counts{FP: 1}},
		{Code: "pkg.session.oom", Counts: benchmark.Counts{FP: 1}},
		{Code: "pkg.session.start_crashed", Counts: benchmark.Counts{TP: 1, FN: 1}},
		{Code: "pkg.supply.osv.vulnerable", Counts: benchmark.Counts{TP: 1, FN: 1}},
	}
	if diff := cmp.Diff(wantCodes, r.Codes); diff != "" {
		t.Errorf("reviewed codes (-want +got):\n%s", diff)
	}
	var buf bytes.Buffer
	if err := benchmark.WriteTable(&buf, rep); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	checkNoRate(t, out)
	for _, want := range []string{
		"false discovery rate, FP/(TP+FP): 25.0% (1 of 4 in-scope findings)",
		"false discovery rate, FP/(TP+FP): 50.0% (2 of 4 in-scope findings)",
		"pkg.session.oom (a, b)",
		"out of scope:  pkg.behavior.dns.lookup (x.example)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "33.3%") || strings.Contains(out, "37.5%") {
		t.Errorf("the kinds were pooled:\n%s", out)
	}
}

func TestFalseDiscoveryRateUndefinedWithoutFindings(t *testing.T) {
	c := testCase(func(c *benchmark.Case) { c.Expected = []string{} })
	res := benchmark.Compare(c, target, observed(allObserved, "pkg.contract.annotation.absent add"), inForce, nil)
	rep := benchmark.NewReport(benchmark.RunInfo{RubricVersion: inForce}, []benchmark.CaseResult{res})
	if rep.Kinds[1].FalseDiscoveryRate != nil {
		t.Errorf("fdr %v with no in-scope finding, want undefined", *rep.Kinds[1].FalseDiscoveryRate)
	}
	var buf bytes.Buffer
	if err := benchmark.WriteTable(&buf, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "false discovery rate, FP/(TP+FP): undefined") {
		t.Errorf("table:\n%s", buf.String())
	}
	var js bytes.Buffer
	if err := benchmark.WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"false_discovery_rate": null`) {
		t.Errorf("JSON must say null, not 0:\n%s", js.String())
	}
}

func TestRunCases(t *testing.T) {
	cases := []benchmark.Case{testCase(nil), testCase(func(c *benchmark.Case) { c.ID, c.Target = "other", "npm:other-mcp@2.0.0" })}
	var scanned []string
	scan := func(_ context.Context, c benchmark.Case, st benchmark.ScanTarget) (benchmark.Observed, error) {
		scanned = append(scanned, st.Arg)
		if c.ID == "other" {
			return benchmark.Observed{}, errors.New("registry unreachable")
		}
		return observed(allObserved, "pkg.session.start_crashed"), nil
	}
	rep, err := benchmark.RunCases(context.Background(), benchmark.RunInfo{RubricVersion: inForce}, cases, t.TempDir(), t.TempDir(), scan, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"npm:example-mcp@1.2.3", "npm:other-mcp@2.0.0"}, scanned); diff != "" {
		t.Errorf("scan targets (-want +got):\n%s", diff)
	}
	if len(rep.Cases) != 2 || rep.Cases[0].ID != "example" || rep.Cases[0].Counts.TP != 1 || rep.Cases[1].Error != "registry unreachable" {
		t.Errorf("results %+v", rep.Cases)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := benchmark.RunCases(ctx, benchmark.RunInfo{RubricVersion: inForce}, cases, t.TempDir(), t.TempDir(), scan, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run: %v", err)
	}
}

// TestCompareFNIsExpectedAndNotEmitted: the method's false negative is an
// expected code that was not emitted, full stop. Registry metadata answered
// and no_repository was not emitted: a true miss, which GitHub being down
// (another signal of the same dimension, provenance) must not hide. The
// unavailable split is shown beside FN, by the signal that produces each
// code.
func TestCompareFNIsExpectedAndNotEmitted(t *testing.T) {
	c := testCase(func(c *benchmark.Case) {
		c.Scope = []string{"pkg.supply.registry.", "pkg.supply.github."}
		c.Expected = []string{"pkg.supply.registry.no_repository", "pkg.supply.github.not_found"}
	})
	o := observed(map[string]evidence.State{
		evidence.SignalRegistryMeta: evidence.StateObserved, evidence.SignalGitHub: evidence.StateUnavailable,
		evidence.SignalDNSSEC: evidence.StateUnavailable,
	})
	got := benchmark.Compare(c, target, o, inForce, rubric.Current())
	if diff := cmp.Diff(benchmark.Counts{FN: 2, FNUnavailable: 1}, got.Counts); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	wantFN := []benchmark.Missed{
		{Code: "pkg.supply.github.not_found", Signals: []benchmark.NamedSignal{{Name: evidence.SignalGitHub, State: evidence.StateUnavailable}}, SignalUnavailable: true},
		{Code: "pkg.supply.registry.no_repository", Signals: []benchmark.NamedSignal{{Name: evidence.SignalRegistryMeta, State: evidence.StateObserved}}},
	}
	if diff := cmp.Diff(wantFN, got.FN); diff != "" {
		t.Errorf("FN (-want +got):\n%s", diff)
	}
	rep := benchmark.NewReport(benchmark.RunInfo{RubricVersion: inForce}, []benchmark.CaseResult{got})
	wantCodes := []benchmark.CodeSummary{
		{Code: "pkg.supply.github.not_found", Counts: benchmark.Counts{FN: 1, FNUnavailable: 1}},
		{Code: "pkg.supply.registry.no_repository", Counts: benchmark.Counts{FN: 1}},
	}
	if diff := cmp.Diff(wantCodes, rep.Kinds[1].Codes); diff != "" {
		t.Errorf("codes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(benchmark.Counts{FN: 2, FNUnavailable: 1}, rep.Kinds[1].Counts); diff != "" {
		t.Errorf("kind totals (-want +got):\n%s", diff)
	}
	var buf bytes.Buffer
	if err := benchmark.WriteTable(&buf, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"CODE                               TP  FP  FN  OF-WHICH-UNAVAIL",
		"pkg.supply.github.not_found         0   0   1                 1",
		"pkg.supply.registry.no_repository   0   0   1                 0",
		"TOTAL                               0   0   2                 1",
		"pkg.supply.github.not_found (producing signal github unavailable)",
		"pkg.supply.registry.no_repository (producing signal registry.metadata observed)",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, buf.String())
		}
	}
}

// TestCompareMeasurement: a measurement in scope is matched as "the
// measurement was made", whatever its value, and shown so.
func TestCompareMeasurement(t *testing.T) {
	c := testCase(func(c *benchmark.Case) {
		c.Scope = []string{"pkg.contract.description."}
		c.Expected = []string{"pkg.contract.description.coverage", "pkg.contract.description.missing"}
	})
	got := benchmark.Compare(c, target, observed(allObserved, "pkg.contract.description.coverage"), inForce, rubric.Current())
	if diff := cmp.Diff(benchmark.Counts{TP: 1, FN: 1}, got.Counts); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	var buf bytes.Buffer
	if err := benchmark.WriteTable(&buf, benchmark.NewReport(benchmark.RunInfo{RubricVersion: inForce}, []benchmark.CaseResult{got})); err != nil {
		t.Fatal(err)
	}
	if want := "TP:            pkg.contract.description.coverage (measurement made: the package)"; !strings.Contains(buf.String(), want) {
		t.Errorf("table lacks %q:\n%s", want, buf.String())
	}
}

// TestCompareUnverifiedScope: a signal that produces codes within the
// scope and did not answer leaves that part of the scope unverified, not
// clean. The case has no FP and no FN either way; only Unverified tells
// them apart.
func TestCompareUnverifiedScope(t *testing.T) {
	c := testCase(func(c *benchmark.Case) {
		c.Scope, c.Expected = []string{"pkg.supply.socket.", "pkg.session."}, []string{}
	})
	states := map[string]evidence.State{evidence.SignalSession: evidence.StateObserved, evidence.SignalSocket: evidence.StateUnavailable}
	cat := rubric.Current()
	got := benchmark.Compare(c, target, observed(states), inForce, cat)
	want := []benchmark.NamedSignal{{Name: evidence.SignalSocket, State: evidence.StateUnavailable}}
	if diff := cmp.Diff(want, got.Unverified); diff != "" {
		t.Errorf("Unverified (-want +got):\n%s", diff)
	}
	if got.Counts != (benchmark.Counts{}) {
		t.Errorf("Counts = %+v, want none: an unverified signal is counted in nothing", got.Counts)
	}
	states[evidence.SignalSocket] = evidence.StateObserved
	if got := benchmark.Compare(c, target, observed(states), inForce, cat); len(got.Unverified) != 0 {
		t.Errorf("Unverified = %v with every in-scope signal observed, want none", got.Unverified)
	}
	delete(states, evidence.SignalSocket)
	got = benchmark.Compare(c, target, observed(states), inForce, nil)
	want = []benchmark.NamedSignal{{Name: evidence.SignalSocket, State: evidence.StateError}}
	if diff := cmp.Diff(want, got.Unverified); diff != "" {
		t.Errorf("a signal the scan did not record (-want +got):\n%s", diff)
	}
}
