package rescore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
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
// nothing else is). Results are computed on every core, seedChunk runs at
// a time, so that seeding a store of any size holds a bounded number of
// runs; the saves are serial, as SQLite's are.
func seed(t testing.TB, s *store.Store, n int, bundle func(i int) *evidence.Bundle, r *rubric.Rubric) {
	t.Helper()
	seedFrom(t, s, 0, n, bundle, r)
}

// seedChunk is how many runs seed prepares before saving them.
const seedChunk = 1000

// seedFrom is seed for the runs from to n-1.
func seedFrom(t testing.TB, s *store.Store, from, n int, bundle func(i int) *evidence.Bundle, r *rubric.Rubric) {
	t.Helper()
	ctx := context.Background()
	type item struct {
		data []byte
		b    *evidence.Bundle
		res  rubric.Result
	}
	items := make([]item, seedChunk)
	workers := runtime.GOMAXPROCS(0)
	for lo := from; lo < n; lo += seedChunk {
		hi := min(lo+seedChunk, n)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := lo + w; i < hi; i += workers {
					b := bundle(i)
					data, err := json.Marshal(b)
					if err != nil {
						panic(err)
					}
					items[i-lo] = item{data, b, rubric.Evaluate(b, r)}
				}
			}()
		}
		wg.Wait()
		for _, it := range items[:hi-lo] {
			if err := s.SaveRun(ctx, it.data, it.b, it.res); err != nil {
				t.Fatal(err)
			}
		}
		clear(items)
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
