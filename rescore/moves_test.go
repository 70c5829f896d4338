package rescore

import (
	"encoding/json"
	"fmt"
	"maps"
	"testing"

	"github.com/verifymcp/verifymcp/rubric"
)

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
