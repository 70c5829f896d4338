package rescore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/store"
)

// rescoreFixtures are the committed bundles the rescoring tests vary.
type rescoreFixtures struct {
	base, behavior, supply, dnssec, judge *evidence.Bundle
}

func loadRescoreFixtures(t testing.TB) rescoreFixtures {
	t.Helper()
	fx := rescoreFixtures{
		base:     loadFixture(t, "everything.bundle.json"),
		behavior: loadFixture(t, "behavior.bundle.json"),
		supply:   loadFixture(t, "supply.bundle.json"),
		dnssec:   loadFixture(t, "dnssec.bundle.json"),
		judge:    loadFixture(t, "judge.bundle.json"),
	}
	if !rubric.Current().JudgeCurrent(fx.judge.Judge) {
		t.Fatal("the judge fixture's verdicts are not under the judge spec the current rubric pins")
	}
	return fx
}

// without returns b without the named signals, as a bundle written before
// they were collected.
func without(b *evidence.Bundle, names ...string) *evidence.Bundle {
	c := *b
	c.Signals = maps.Clone(b.Signals)
	for _, n := range names {
		delete(c.Signals, n)
	}
	return &c
}

// vary is variant for a fixture of any number of tools: every third
// variant drops up to four of them, keeping at least one.
func vary(base *evidence.Bundle, i int) *evidence.Bundle {
	if base.Contract == nil || len(base.Contract.Tools) > 4 {
		return variant(base, i)
	}
	b := variant(base, i-i%3+1) // not a multiple of 3: the tools stay
	b.Run.ID, b.Run.Date = fmt.Sprintf("run-%06d", i), base.Run.Date.Add(time.Duration(i)*time.Minute)
	b.Target.Name, b.Target.Version = fmt.Sprintf("@bench/server-%d", i%500), fmt.Sprintf("1.%d.%d", i/500, i%7)
	if i%3 == 0 {
		c := *base.Contract
		c.Tools = c.Tools[:len(c.Tools)-i%len(c.Tools)]
		c.ProtocolVersion = []string{"2025-11-25", "2025-06-18", "2025-03-26"}[i%3]
		b.Contract = &c
	}
	return b
}

// mixed returns the i-th of a varied population of bundles: run ids,
// dates, targets and tool surfaces differ (variant), and so does the
// evidence: sandbox only, with supply-chain, DNSSEC and judge evidence,
// the behaviour fixture, bundles lacking signals written before they
// existed, and judge verdicts under a judge spec the current rubric does
// not pin.
func (fx rescoreFixtures) mixed(i int) *evidence.Bundle {
	switch i % 8 {
	case 0:
		return variant(fx.base, i)
	case 1:
		return withSupply(variant(fx.base, i), fx.supply)
	case 2:
		return withSupply(variant(fx.base, i), fx.dnssec)
	case 3:
		return withJudge(withSupply(variant(fx.base, i), fx.dnssec), fx.judge)
	case 4:
		return vary(fx.behavior, i)
	case 5:
		// Written before DNSSEC and the judge existed.
		return without(withSupply(variant(fx.base, i), fx.supply), evidence.SignalDNSSEC, evidence.SignalJudge)
	case 6:
		// Judge verdicts under an older judge spec.
		b := withJudge(withSupply(variant(fx.base, i), fx.dnssec), fx.judge)
		j := *b.Judge
		j.SpecVersion, j.SpecDigest = "0", "sha256:"+fmt.Sprintf("%064x", i)
		b.Judge = &j
		return b
	default:
		// A third party unavailable, the judge never asked.
		b := withSupply(vary(fx.behavior, i), fx.dnssec)
		b.Signals[evidence.SignalSocket] = evidence.Signal{State: evidence.StateUnavailable, Reason: "no SOCKET_API_KEY", ThirdParty: true}
		return without(b, evidence.SignalJudge)
	}
}

// seed saves n bundles made by bundle, each with its result under r
// (none when r is nil: SaveRun needs one, so the result is saved and then
// nothing else is). Results are computed on every core; the saves are
// serial, as SQLite's are.
func seed(t testing.TB, s *store.Store, n int, bundle func(i int) *evidence.Bundle, r *rubric.Rubric) {
	t.Helper()
	ctx := context.Background()
	type item struct {
		data []byte
		b    *evidence.Bundle
		res  rubric.Result
	}
	items := make([]item, n)
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				b := bundle(i)
				data, err := json.Marshal(b)
				if err != nil {
					panic(err)
				}
				items[i] = item{data, b, rubric.Evaluate(b, r)}
			}
		}()
	}
	wg.Wait()
	for _, it := range items {
		if err := s.SaveRun(ctx, it.data, it.b, it.res); err != nil {
			t.Fatal(err)
		}
	}
}

// openTemp opens a store in a temporary directory (or, with the postgres
// build tag and newTestStore set, elsewhere).
func openTemp(t testing.TB) *store.Store {
	t.Helper()
	if newTestStore != nil {
		return newTestStore(t)
	}
	s, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// newTestStore, when set, opens the stores of the tests.
var newTestStore func(t testing.TB) *store.Store

// saveResult saves res as the result of rescoring runID.
func saveResult(ctx context.Context, s *store.Store, runID string, res rubric.Result) error {
	j, err := json.Marshal(res)
	if err != nil {
		return err
	}
	r, err := store.NewResult(runID, j)
	if err != nil {
		return err
	}
	return s.SaveResults(ctx, []store.Result{r})
}

// reweighted returns r with every dimension's weight changed, as a new
// rubric version: the same probes and parameters, another composite.
func reweighted(r *rubric.Rubric) *rubric.Rubric {
	c := *r
	c.Version = r.Version + ".1-reweighted"
	c.Hash = "sha256:" + fmt.Sprintf("%064x", 51)
	c.Dimensions = slices.Clone(r.Dimensions)
	for i := range c.Dimensions {
		c.Dimensions[i].Weight = float64(1 + (i*7)%11)
	}
	return &c
}

// storedResults returns the JSON of the stored result of every run under
// version.
func storedResults(t testing.TB, s *store.Store, version string) map[string][]byte {
	t.Helper()
	ctx := context.Background()
	runs, err := s.Runs(ctx, store.Filter{RubricVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, r := range runs {
		if r.RubricVersion != version {
			continue
		}
		j, err := s.Result(ctx, r.RunID, version)
		if err != nil {
			t.Fatalf("run %s: %v", r.RunID, err)
		}
		out[r.RunID] = j
	}
	return out
}

// checkAgainstAlone checks that every result stored under r's version is
// byte for byte the result of scoring that run's stored bundle alone, and
// returns those results by run id.
func checkAgainstAlone(t *testing.T, s *store.Store, r *rubric.Rubric) map[string]rubric.Result {
	t.Helper()
	ctx := context.Background()
	got := storedResults(t, s, r.Version)
	alone := map[string]rubric.Result{}
	var mu sync.Mutex
	ids := slices.Collect(maps.Keys(got))
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(ids); i += workers {
				id := ids[i]
				data, err := s.Bundle(ctx, id)
				if err != nil {
					t.Error(err)
					return
				}
				b, err := evidence.Decode(data) // the reference decoder, not the fast one
				if err != nil {
					t.Error(err)
					return
				}
				res := rubric.Evaluate(b, r)
				want, err := json.Marshal(res)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				alone[id] = res
				if string(got[id]) != string(want) {
					t.Errorf("run %s: stored result differs from scoring the bundle alone:\n%s", id, diff(json.RawMessage(want), json.RawMessage(got[id])))
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return alone
}

// TestRescoreReweighted rescores 10,000 varied stored bundles under a
// reweighted rubric and checks every saved result against scoring its
// bundle alone, and the summary against the results: a reweighting moves
// composites and nothing else.
func TestRescoreReweighted(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 1000
	}
	ctx := context.Background()
	fx := loadRescoreFixtures(t)
	s := openTemp(t)
	v5 := rubric.Current()
	seed(t, s, n, fx.mixed, v5)
	before := map[string]rubric.Result{}
	for id, data := range storedResults(t, s, v5.Version) {
		var res rubric.Result
		if err := json.Unmarshal(data, &res); err != nil {
			t.Fatal(err)
		}
		before[id] = res
	}

	rw := reweighted(v5)
	var progress []int
	recollect := map[string][]string{}
	sum, err := Run(ctx, s, Options{
		Rubric:            rw,
		Save:              true,
		Workers:           3,
		Progress:          func(done, total int) { progress = append(progress, done) },
		NeedsRecollection: func(id string, sig []string) { recollect[id] = sig },
	})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Total != n || sum.Rescored != n || len(sum.Failed) != 0 || !sum.Saved {
		t.Fatalf("summary: total %d, rescored %d, failed %v, saved %v; want %d rescored and saved", sum.Total, sum.Rescored, sum.Failed, sum.Saved, n)
	}
	if want := []int{DefaultBatch, 2 * DefaultBatch}; len(progress) != n/DefaultBatch || !slices.Equal(progress[:2], want) || progress[len(progress)-1] != n {
		t.Errorf("progress %v..., want every %d up to %d", progress[:min(3, len(progress))], DefaultBatch, n)
	}

	after := checkAgainstAlone(t, s, rw)
	if len(after) != n {
		t.Fatalf("%d results stored under %s, want %d", len(after), rw.Version, n)
	}

	// The summary, recomputed from the results.
	var want CompositeMove
	var distinct = map[float64]bool{}
	for id, old := range before {
		nu := after[id]
		distinct[*nu.Score] = true
		want.Compared++
		want.Scored++
		d := math.Round((*nu.Score-*old.Score)*10) / 10
		switch {
		case d > 0:
			want.Up++
		case d < 0:
			want.Down++
		default:
			want.Unchanged++
		}
		if want.Scored == 1 || d < want.MinDelta {
			want.MinDelta = d
		}
		if want.Scored == 1 || d > want.MaxDelta {
			want.MaxDelta = d
		}
		want.MeanDelta += d / float64(n)
	}
	got := sum.Composite
	if got.Compared != want.Compared || got.Up != want.Up || got.Down != want.Down || got.Unchanged != want.Unchanged ||
		got.Scored != want.Scored || got.MinDelta != want.MinDelta || got.MaxDelta != want.MaxDelta {
		t.Errorf("composite move %+v, want %+v", got, want)
	}
	if d := got.MeanDelta - want.MeanDelta; d > 1e-9 || d < -1e-9 {
		t.Errorf("composite mean delta %v, want %v", got.MeanDelta, want.MeanDelta)
	}
	if got.Up == 0 || got.Down == 0 {
		t.Errorf("a reweighting moved no composite up (%d) or down (%d): the population is not varied enough", got.Up, got.Down)
	}
	if len(distinct) < 10 {
		t.Errorf("only %d distinct composites among %d runs: the population is not varied enough", len(distinct), n)
	}
	if !maps.Equal(sum.Baselines, map[string]int{v5.Version: n}) || sum.NoBaseline != 0 {
		t.Errorf("baselines %v, no baseline %d; want all %d against %s", sum.Baselines, sum.NoBaseline, n, v5.Version)
	}
	if len(sum.Dimensions) != len(rw.Dimensions) {
		t.Fatalf("%d dimensions in the summary, want %d", len(sum.Dimensions), len(rw.Dimensions))
	}
	for i, d := range sum.Dimensions {
		old, _ := v5.Dimension(d.ID)
		if d.ID != rw.Dimensions[i].ID || d.Weight != rw.Dimensions[i].Weight || !slices.Equal(d.OldWeights, []float64{old.Weight}) {
			t.Errorf("dimension %d: %s weight %v from %v, want %s weight %v from [%v]", i, d.ID, d.Weight, d.OldWeights, rw.Dimensions[i].ID, rw.Dimensions[i].Weight, old.Weight)
		}
		if d.Compared != n || d.Moved != 0 || d.MinDelta != 0 || d.MaxDelta != 0 || len(d.StateChanges) != 0 || d.Added != 0 || d.Removed != 0 {
			t.Errorf("dimension %s moved under a reweighting: %+v", d.ID, d)
		}
	}
	for _, c := range sum.Codes {
		if c.Appeared != 0 || c.Disappeared != 0 || c.Before != c.After || c.Before == 0 {
			t.Errorf("code %s moved under a reweighting: %+v", c.Code, c)
		}
	}

	// Re-collection: computed per bundle, counted per signal.
	wantRec := map[string]int{}
	wantRuns := 0
	for i := range n {
		b := fx.mixed(i)
		sig := RecollectSignals(b, rw)
		if !slices.Equal(sig, recollect[b.Run.ID]) {
			t.Fatalf("run %s: re-collect %v reported, want %v", b.Run.ID, recollect[b.Run.ID], sig)
		}
		if len(sig) > 0 {
			wantRuns++
		}
		for _, s := range sig {
			wantRec[s]++
		}
	}
	if !maps.Equal(sum.Recollect, wantRec) || sum.RecollectRuns != wantRuns {
		t.Errorf("re-collect %v in %d runs, want %v in %d", sum.Recollect, sum.RecollectRuns, wantRec, wantRuns)
	}
	if wantRec[evidence.SignalJudge] == 0 || wantRec[evidence.SignalDNSSEC] == 0 || wantRec[evidence.SignalRegistryMeta] == 0 {
		t.Errorf("re-collect %v: the population should lack judge, dnssec and registry.metadata", wantRec)
	}
	t.Logf("rescored %d in %v (%.0f results/s): %+v", n, sum.Elapsed, float64(n)/sum.Elapsed.Seconds(), sum.Stages)
}

func TestRecollectSignals(t *testing.T) {
	fx := loadRescoreFixtures(t)
	v3, err := rubric.Load("3")
	if err != nil {
		t.Fatal(err)
	}
	v5 := rubric.Current()
	v10, err := rubric.Load("10")
	if err != nil {
		t.Fatal(err)
	}
	stale := withJudge(withSupply(fx.base, fx.dnssec), fx.judge)
	j := *stale.Judge
	j.SpecDigest = "sha256:" + fmt.Sprintf("%064x", 1)
	stale.Judge = &j
	notAsked := withSupply(fx.base, fx.dnssec)
	notAsked.Signals[evidence.SignalJudge] = evidence.Signal{State: evidence.StateUnavailable, Reason: "no key"}
	tests := []struct {
		name string
		b    *evidence.Bundle
		r    *rubric.Rubric
		want []string
	}{
		// The fixtures were recorded before the MCP registry was asked about
		// their mcpName; rubric v11 reads that signal, v10 does not.
		{"complete_evidence", withJudge(withSupply(fx.base, fx.dnssec), fx.judge), v5, []string{evidence.SignalMCPRegistry}},
		{"complete_evidence_v10", withJudge(withSupply(fx.base, fx.dnssec), fx.judge), v10, nil},
		{"no_registry_metadata", fx.base, v5, []string{evidence.SignalRegistryMeta}},
		{"written_before_dnssec_and_judge", without(withSupply(fx.base, fx.supply), evidence.SignalDNSSEC, evidence.SignalJudge), v5, []string{evidence.SignalDNSSEC, evidence.SignalJudge, evidence.SignalMCPRegistry}},
		{"rubric_v3_reads_neither", without(withSupply(fx.base, fx.supply), evidence.SignalDNSSEC, evidence.SignalJudge), v3, nil},
		{"judge_under_another_spec", stale, v5, []string{evidence.SignalJudge, evidence.SignalMCPRegistry}},
		{"judge_spec_irrelevant_to_v3", stale, v3, nil},
		{"judge_unavailable_is_an_answer", notAsked, v10, nil},
		{"sandbox_signal_missing", without(withSupply(fx.base, fx.dnssec), evidence.SignalBehavior), v10, []string{evidence.SignalBehavior}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := RecollectSignals(tc.b, tc.r)
			if !slices.Equal(got, tc.want) {
				t.Errorf("RecollectSignals = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestMoveArithmetic checks the aggregation of what moved on hand-made
// results.
func TestMoveArithmetic(t *testing.T) {
	rb := &rubric.Rubric{Version: "new", Dimensions: []rubric.Dimension{{ID: "a", Weight: 2}, {ID: "b", Weight: 1}, {ID: "c", Weight: 1}}}
	dim := func(id string, w float64, st rubric.State, score float64) rubric.DimensionScore {
		return rubric.DimensionScore{ID: id, Weight: w, State: st, Score: score}
	}
	finding := func(code string) rubric.Finding { return rubric.Finding{Code: code} }
	type pair struct {
		old *rubric.Result // nil: no baseline
		new rubric.Result
	}
	pairs := []pair{
		{ // a +10, b unchanged, x disappears, y appears; composite up
			old: &rubric.Result{RubricVersion: "4", Score: ptr(50.0),
				Dimensions: []rubric.DimensionScore{dim("a", 1, rubric.StateScored, 50), dim("b", 1, rubric.StateScored, 50), dim("gone", 1, rubric.StateScored, 50)},
				Findings:   []rubric.Finding{finding("pkg.x"), finding("pkg.x"), finding("pkg.z")}},
			new: rubric.Result{Score: ptr(56.5),
				Dimensions: []rubric.DimensionScore{dim("a", 2, rubric.StateScored, 60), dim("b", 1, rubric.StateScored, 50), dim("c", 1, rubric.StateScored, 70)},
				Findings:   []rubric.Finding{finding("pkg.y"), finding("pkg.z")}},
		},
		{ // a -30 and to zero_point, b dropped to scored; composite down
			old: &rubric.Result{RubricVersion: "4", Score: ptr(80.0),
				Dimensions: []rubric.DimensionScore{dim("a", 1, rubric.StateScored, 30), dim("b", 1, rubric.StateDropped, 0), dim("c", 1, rubric.StateScored, 100)},
				Findings:   []rubric.Finding{finding("pkg.z")}},
			new: rubric.Result{Score: ptr(20.0),
				Dimensions: []rubric.DimensionScore{dim("a", 2, rubric.StateZeroPoint, 0), dim("b", 1, rubric.StateScored, 0), dim("c", 1, rubric.StateScored, 100)},
				Findings:   []rubric.Finding{finding("pkg.x")}},
		},
		{ // against the same version: nothing moves
			old: &rubric.Result{RubricVersion: "new", Score: ptr(40.0),
				Dimensions: []rubric.DimensionScore{dim("a", 2, rubric.StateScored, 40)}},
			new: rubric.Result{Score: ptr(40.0),
				Dimensions: []rubric.DimensionScore{dim("a", 2, rubric.StateScored, 40)}},
		},
		{ // every dimension dropped before: the composite is gained
			old: &rubric.Result{RubricVersion: "4"},
			new: rubric.Result{Score: ptr(10.0)},
		},
		{ // and lost
			old: &rubric.Result{RubricVersion: "4", Score: ptr(10.0)},
			new: rubric.Result{},
		},
		{ // no baseline: counted apart, compared with nothing
			new: rubric.Result{Score: ptr(99.0), Dimensions: []rubric.DimensionScore{dim("a", 2, rubric.StateScored, 99)}, Findings: []rubric.Finding{finding("pkg.x")}},
		},
	}
	acc := newMoveAcc(rb)
	for i, p := range pairs {
		r := &rescored{runID: fmt.Sprint(i), score: p.new.Score}
		if i == 0 {
			r.recollect = []string{"dnssec", "judge"}
		}
		if i == 1 {
			r.recollect = []string{"judge"}
		}
		if p.old != nil {
			data, err := json.Marshal(p.old)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.compare(p.old.RubricVersion, data, p.new); err != nil {
				t.Fatal(err)
			}
		}
		acc.add(r)
	}
	var got Summary
	acc.fill(&got)

	if want := map[string]int{"4": 4, "new": 1}; !maps.Equal(got.Baselines, want) || got.NoBaseline != 1 {
		t.Errorf("baselines %v, no baseline %d; want %v, 1", got.Baselines, got.NoBaseline, want)
	}
	wantComp := CompositeMove{Compared: 5, Up: 1, Down: 1, Unchanged: 1, Gained: 1, Lost: 1, Scored: 3,
		MeanDelta: (6.5 - 60 + 0) / 3, MinDelta: -60, MaxDelta: 6.5}
	if got.Composite != wantComp {
		t.Errorf("composite\n got %+v\nwant %+v", got.Composite, wantComp)
	}
	wantDims := []DimensionMove{
		{ID: "a", Weight: 2, OldWeights: []float64{1, 2}, Compared: 3, Moved: 2, MeanDelta: (10 - 30 + 0) / 3.0, MinDelta: -30, MaxDelta: 10,
			StateChanges: map[string]int{"scored->zero_point": 1}},
		{ID: "b", Weight: 1, OldWeights: []float64{1}, Compared: 2, Moved: 1, MeanDelta: 0, MinDelta: 0, MaxDelta: 0,
			StateChanges: map[string]int{"dropped->scored": 1}},
		{ID: "c", Weight: 1, OldWeights: []float64{1}, Compared: 1, Moved: 0, StateChanges: map[string]int{}, Added: 1},
		{ID: "gone", Weight: 0, OldWeights: []float64{1}, StateChanges: map[string]int{}, Removed: 1},
	}
	if d := diff(wantDims, got.Dimensions); d != "" {
		t.Errorf("dimensions (-want +got):\n%s", d)
	}
	wantCodes := []CodeMove{
		{Code: "pkg.x", Before: 1, After: 1, Appeared: 1, Disappeared: 1},
		{Code: "pkg.y", Before: 0, After: 1, Appeared: 1},
		{Code: "pkg.z", Before: 2, After: 1, Disappeared: 1},
	}
	if d := diff(wantCodes, got.Codes); d != "" {
		t.Errorf("codes (-want +got):\n%s", d)
	}
	if want := map[string]int{"dnssec": 1, "judge": 2}; !maps.Equal(got.Recollect, want) || got.RecollectRuns != 2 {
		t.Errorf("re-collect %v in %d runs, want %v in 2", got.Recollect, got.RecollectRuns, want)
	}
}

// TestRescoreBaseline checks which stored result a run is compared with:
// the highest other version, else the same version, else none; or the
// version asked for.
func TestRescoreBaseline(t *testing.T) {
	ctx := context.Background()
	fx := loadRescoreFixtures(t)
	s := openTemp(t)
	load := func(v string) *rubric.Rubric {
		r, err := rubric.Load(v)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	v2, v3, v4, v5 := load("2"), load("3"), load("4"), load("5")
	// Runs 0-2 are saved under v2, 3-5 under v5 only.
	seed(t, s, 3, func(i int) *evidence.Bundle { return fx.mixed(i) }, v2)
	seed(t, s, 3, func(i int) *evidence.Bundle { return fx.mixed(i + 3) }, v5)
	// Run 0 also has v3 and v4; run 1 v3.
	for _, r := range []*rubric.Rubric{v3, v4} {
		b := fx.mixed(0)
		if err := saveResult(ctx, s, b.Run.ID, rubric.Evaluate(b, r)); err != nil {
			t.Fatal(err)
		}
	}
	if b := fx.mixed(1); saveResult(ctx, s, b.Run.ID, rubric.Evaluate(b, v3)) != nil {
		t.Fatal("save")
	}
	tests := []struct {
		baseline string
		want     map[string]int
		none     int
	}{
		// run 0: v4; run 1: v3; run 2: v2; runs 3-5: v5 itself.
		{"", map[string]int{"4": 1, "3": 1, "2": 1, "5": 3}, 0},
		{"3", map[string]int{"3": 2}, 4},
	}
	for _, tc := range tests {
		t.Run("baseline="+tc.baseline, func(t *testing.T) {
			sum, err := Run(ctx, s, Options{Rubric: v5, Baseline: tc.baseline})
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(sum.Baselines, tc.want) || sum.NoBaseline != tc.none || sum.Rescored != 6 {
				t.Errorf("baselines %v, none %d, rescored %d; want %v, %d, 6", sum.Baselines, sum.NoBaseline, sum.Rescored, tc.want, tc.none)
			}
		})
	}
	// A dry run wrote nothing: runs 0-2 still have no v5 result.
	if got := storedResults(t, s, v5.Version); len(got) != 3 {
		t.Errorf("%d results under v5 after dry runs, want 3", len(got))
	}

	// Versions order as rubric versions do: "10" after "9".
	b := fx.mixed(2)
	for _, v := range []string{"9", "10"} {
		res := rubric.Evaluate(b, v5)
		res.RubricVersion = v
		if err := saveResult(ctx, s, b.Run.ID, res); err != nil {
			t.Fatal(err)
		}
	}
	sum, err := Run(ctx, s, Options{Rubric: v5, Filter: store.Filter{Limit: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int{"4": 1, "3": 1, "10": 1}; !maps.Equal(sum.Baselines, want) {
		t.Errorf("baselines %v, want %v", sum.Baselines, want)
	}
}

// TestRescoreInterrupted cancels a pass midway: the batches committed
// before stay, each whole and each result right; nothing else is written;
// the summary counts exactly what was committed; a second pass completes
// the store.
func TestRescoreInterrupted(t *testing.T) {
	const batch = 100
	n := 3000
	if testing.Short() {
		// Still well past the cancel at 7 batches, so that the pass is
		// cut midway.
		n = 1200
	}
	fx := loadRescoreFixtures(t)
	s := openTemp(t)
	v4, err := rubric.Load("4")
	if err != nil {
		t.Fatal(err)
	}
	v5 := rubric.Current()
	seed(t, s, n, fx.mixed, v4)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sum, err := Run(ctx, s, Options{
		Rubric: v5, Save: true, BatchSize: batch, Workers: 2,
		Progress: func(done, total int) {
			if done >= 7*batch {
				cancel()
			}
		},
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Rescore after cancel: %v, want context.Canceled", err)
	}
	saved := storedResults(t, s, v5.Version)
	if len(saved) != sum.Rescored || len(saved)%batch != 0 || len(saved) < 7*batch || len(saved) >= n {
		t.Fatalf("%d results saved, summary says %d: want whole batches of %d, at least 7, fewer than %d runs", len(saved), sum.Rescored, batch, n)
	}
	if sum.Composite.Compared != sum.Rescored || sum.Baselines["4"] != sum.Rescored {
		t.Errorf("summary compares %d runs (%v), want the %d committed", sum.Composite.Compared, sum.Baselines, sum.Rescored)
	}
	checkAgainstAlone(t, s, v5)
	// The v4 results are untouched.
	if got := storedResults(t, s, v4.Version); len(got) != n {
		t.Errorf("%d v4 results after the interruption, want %d", len(got), n)
	}

	sum, err = Run(context.Background(), s, Options{Rubric: v5, Save: true, BatchSize: batch})
	if err != nil || sum.Rescored != n {
		t.Fatalf("second pass: rescored %d, %v; want %d", sum.Rescored, err, n)
	}
	if got := checkAgainstAlone(t, s, v5); len(got) != n {
		t.Errorf("%d results after the second pass, want %d", len(got), n)
	}
}

// TestRescoreFilterAndFailures: the filter selects the runs; a bundle or
// a baseline that cannot be decoded is a failure of that run, reported
// with its id.
func TestRescoreFilterAndFailures(t *testing.T) {
	ctx := context.Background()
	fx := loadRescoreFixtures(t)
	s := openTemp(t)
	v5 := rubric.Current()
	seed(t, s, 40, fx.mixed, v5)
	sum, err := Run(ctx, s, Options{Rubric: reweighted(v5), Save: true})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Total != 40 || sum.Rescored != 40 || len(sum.Failed) != 0 {
		t.Errorf("total %d, rescored %d, failed %v; want 40, 40, none", sum.Total, sum.Rescored, sum.Failed)
	}

	target := fx.mixed(7).Target
	sum, err = Run(ctx, s, Options{Rubric: reweighted(v5), Filter: store.Filter{Name: target.Name}})
	if err != nil {
		t.Fatal(err)
	}
	var want int
	for i := range 40 {
		if fx.mixed(i).Target.Name == target.Name {
			want++
		}
	}
	if sum.Total != want || sum.Rescored != want {
		t.Errorf("filter by name: total %d, rescored %d, want %d", sum.Total, sum.Rescored, want)
	}
	sum, err = Run(ctx, s, Options{Rubric: reweighted(v5), Filter: store.Filter{Limit: 5}})
	if err != nil || sum.Total != 5 || sum.Rescored != 5 {
		t.Errorf("limit 5: total %d, rescored %d, %v", sum.Total, sum.Rescored, err)
	}
	// A stored bundle the program can no longer decode (a later evidence
	// schema version, written by a newer program sharing the store), and
	// a damaged baseline.
	var st [4]time.Duration
	bad := &row{runID: "run-v99", bundle: []byte(`{"schema_version":"verifymcp.evidence/v99"}`)}
	if r := rescoreOne(bad, v5, newNeeds(v5), rubric.NewMemo(v5), true, &st); r.err == nil || r.runID != "run-v99" {
		t.Errorf("an undecodable bundle: %+v", r)
	}
	good, err := json.Marshal(fx.mixed(1))
	if err != nil {
		t.Fatal(err)
	}
	damaged := &row{runID: "run-d", bundle: good, baselineVersion: "4", baseline: []byte(`{"findings":`)}
	if r := rescoreOne(damaged, v5, newNeeds(v5), rubric.NewMemo(v5), true, &st); r.err == nil {
		t.Errorf("a damaged baseline: %+v", r)
	}
}

// TestRescoreChunks: with runs that share a date, and limits, every run
// selected is rescored once (the store's reader splits the pass into
// chunks; store.TestEachRunBaselines reads across them).
func TestRescoreChunks(t *testing.T) {
	ctx := context.Background()
	fx := loadRescoreFixtures(t)
	s := openTemp(t)
	v5 := rubric.Current()
	// Runs 0-9 on one date, 10-19 on another, 20-29 on a third: in
	// (date, id) order, the runs are in the order of i.
	bundle := func(i int) *evidence.Bundle {
		b := fx.mixed(i)
		b.Run.Date = fx.base.Run.Date.Add(time.Duration(i/10) * time.Hour)
		return b
	}
	seed(t, s, 30, bundle, v5)
	rw := reweighted(v5)
	for _, chunk := range []int{1} {
		for _, limit := range []int{0, 4, 10, 11, 29} {
			var seen []string
			sum, err := Run(ctx, s, Options{
				Rubric: rw, Filter: store.Filter{Limit: limit}, Workers: 1,
				NeedsRecollection: func(id string, _ []string) { seen = append(seen, id) },
			})
			want := 30
			if limit > 0 {
				want = limit
			}
			if err != nil || sum.Rescored != want || sum.Total != want {
				t.Errorf("chunk %d, limit %d: rescored %d of %d, %v; want %d", chunk, limit, sum.Rescored, sum.Total, err, want)
			}
			// The runs whose evidence lacks a signal are reported by id:
			// each of the first want runs that does, once.
			var wantSeen []string
			for i := range want {
				if b := bundle(i); len(RecollectSignals(b, rw)) > 0 {
					wantSeen = append(wantSeen, b.Run.ID)
				}
			}
			slices.Sort(seen)
			if !slices.Equal(seen, wantSeen) {
				t.Errorf("chunk %d, limit %d: runs read %v, want %v", chunk, limit, seen, wantSeen)
			}
		}
	}
}

// TestStoredResult: a pass saves what store.NewResult reads from a
// result's JSON, as SaveRun saves it.
func TestStoredResult(t *testing.T) {
	fx := loadRescoreFixtures(t)
	for _, v := range rubric.Versions() {
		r, err := rubric.Load(v)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 8 {
			res := rubric.Evaluate(fx.mixed(i), r)
			got, err := storedResult("run", &res)
			if err != nil {
				t.Fatal(err)
			}
			j, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			want, err := store.NewResult("run", j)
			if err != nil {
				t.Fatal(err)
			}
			if d := diff(want, got); d != "" {
				t.Errorf("rubric %s, bundle %d: storedResult (-want +got):\n%s", v, i, d)
			}
		}
	}
}

// TestDecodeBundle: the pass's decoder gives what evidence.Decode gives,
// on every committed bundle fixture and the varied population the tests
// store, and refuses what it refuses.
func TestDecodeBundle(t *testing.T) {
	fx := loadRescoreFixtures(t)
	var inputs [][]byte
	files, err := filepath.Glob(filepath.Join("..", "*", "testdata", "*.bundle.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no bundle fixtures: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, data)
	}
	for i := range 16 {
		data, err := json.Marshal(fx.mixed(i))
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, data)
	}
	inputs = append(inputs, []byte(`{"schema_version":"verifymcp.evidence/v99"}`), []byte(`{"run":`), []byte(`[]`))
	for i, data := range inputs {
		want, wantErr := evidence.Decode(data)
		got, err := decodeBundle(data)
		if (err == nil) != (wantErr == nil) {
			t.Errorf("input %d: error %v, evidence.Decode's %v", i, err, wantErr)
			continue
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("input %d: decoded bundle differs from evidence.Decode's", i)
		}
	}
}
