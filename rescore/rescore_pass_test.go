package rescore

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/store"
)

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
