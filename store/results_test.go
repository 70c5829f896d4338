package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/rubric"
)

// summaryOf is res's summary built from the value, as the summary was
// defined: its codes sorted and each once (null when none), its
// dimensions (null when none), its composite.
func summaryOf(res *rubric.Result) Summary {
	s := Summary{Score: res.Score}
	var codes []string
	for _, f := range res.Findings {
		codes = append(codes, f.Code)
	}
	slices.Sort(codes)
	for _, c := range slices.Compact(codes) {
		s.Findings = append(s.Findings, SummaryFinding{Code: c})
	}
	for _, d := range res.Dimensions {
		s.Dimensions = append(s.Dimensions, SummaryDimension{ID: d.ID, Weight: d.Weight, State: string(d.State), Score: d.Score})
	}
	return s
}

// TestSummary: NewResult reads a result's version, hash and composite
// from its JSON, and its summary is exactly json.Marshal of summaryOf.
func TestSummary(t *testing.T) {
	var results []rubric.Result
	b := loadFixture(t, "supply.bundle.json")
	for _, v := range rubric.Versions() {
		r, err := rubric.Load(v)
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, rubric.Evaluate(b, r))
	}
	// The edges: nothing at all; no composite; codes repeated and out of
	// order, and strings JSON must escape.
	score := 61.5
	results = append(results,
		rubric.Result{RubricVersion: "x", RubricHash: "h"},
		rubric.Result{RubricVersion: "x", RubricHash: "h", Findings: []rubric.Finding{}, Dimensions: []rubric.DimensionScore{}},
		rubric.Result{RubricVersion: "x", RubricHash: "h", Dimensions: []rubric.DimensionScore{{ID: "a", Weight: 2.5, State: rubric.StateDropped}}},
		rubric.Result{RubricVersion: "x", RubricHash: "h", Score: &score,
			Findings:   []rubric.Finding{{Code: "pkg.z"}, {Code: "pkg.a\"<b>&\u2028"}, {Code: "pkg.z"}, {Code: "pkg.a\"<b>&\u2028"}},
			Dimensions: []rubric.DimensionScore{{ID: "d\u00e9", Weight: 1e-7, State: rubric.StateScored, Score: 33.3333333333}}},
	)
	for i, res := range results {
		j := mustJSON(t, res)
		got, err := NewResult("run", j)
		if err != nil {
			t.Fatalf("result %d: %v", i, err)
		}
		want := mustJSON(t, summaryOf(&res))
		if !bytes.Equal(got.Summary, want) {
			t.Fatalf("result %d: summary\n%s\nwant\n%s", i, got.Summary, want)
		}
		if got.RunID != "run" || got.RubricVersion != res.RubricVersion || got.RubricHash != res.RubricHash ||
			!reflect.DeepEqual(got.Score, res.Score) || !bytes.Equal(got.JSON, j) {
			t.Errorf("result %d: NewResult = %+v", i, got)
		}
		// A whole result read as a summary has the same dimensions and
		// composite.
		var fromSummary, fromResult Summary
		if err := json.Unmarshal(got.Summary, &fromSummary); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(j, &fromResult); err != nil {
			t.Fatal(err)
		}
		if len(fromResult.Dimensions) == 0 {
			fromResult.Dimensions = nil
		}
		if !reflect.DeepEqual(fromSummary.Dimensions, fromResult.Dimensions) || !reflect.DeepEqual(fromSummary.Score, fromResult.Score) {
			t.Errorf("result %d: read as a summary, the whole result differs", i)
		}
	}
}

// TestEachRunBaselines: EachRun gives each run's bundle as saved (plain
// or compressed), its baseline under the rule Rescore documents, the
// baseline's summary or, for a result saved before summaries, the whole
// result, and whether it is scored under the version asked for.
func TestEachRunBaselines(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	data, b, res := run(t, "run-1", day)
	if err := s.SaveRun(ctx, data, b, res); err != nil {
		t.Fatal(err)
	}
	r10 := res
	r10.RubricVersion, r10.Score = "10", nil
	saveResult(t, s, "run-1", r10)
	r9 := res
	r9.RubricVersion = "9"
	saveResult(t, s, "run-1", r9)
	data2, b2, res2 := run(t, "run-2", day.Add(time.Hour))
	if err := s.SaveRun(ctx, data2, b2, res2); err != nil {
		t.Fatal(err)
	}
	// run-2's result saved before summaries, and its bundle as plain JSON.
	if _, err := s.db.ExecContext(ctx, `UPDATE results SET summary = NULL WHERE run_id = 'run-2'`); err != nil {
		t.Fatal(err)
	}
	type got struct {
		id, ver string
		summary bool
		scored  bool
	}
	read := func(version, baseline string) []got {
		t.Helper()
		var out []got
		err := s.EachRun(ctx, Filter{}, version, baseline, func(r *StoredRun) error {
			want := data
			if r.ID == "run-2" {
				want = data2
			}
			if !bytes.Equal(r.Bundle, want) {
				t.Errorf("%s: bundle is not the JSON saved", r.ID)
			}
			var sum Summary
			if r.BaselineVersion != "" {
				if err := json.Unmarshal(r.Baseline, &sum); err != nil || len(sum.Dimensions) == 0 {
					t.Errorf("%s: baseline %.60q does not read as a summary: %v", r.ID, r.Baseline, err)
				}
			}
			out = append(out, got{r.ID, r.BaselineVersion, !bytes.Contains(r.Baseline, []byte(`"rubric_hash"`)), r.Scored})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, tt := range []struct {
		version, baseline string
		want              []got
	}{
		{"11", "", []got{{"run-1", "10", true, false}, {"run-2", "1", false, false}}},
		{"10", "", []got{{"run-1", "9", true, true}, {"run-2", "1", false, false}}},
		{"1", "", []got{{"run-1", "10", true, true}, {"run-2", "1", false, true}}},
		{"11", "9", []got{{"run-1", "9", true, false}, {"run-2", "", true, false}}},
	} {
		if d := diff(tt.want, read(tt.version, tt.baseline)); d != "" {
			t.Errorf("version %s, baseline %q (-want +got):\n%s", tt.version, tt.baseline, d)
		}
	}
	// Chunks: a run after the first chunk is read, once.
	defer func(n int) { readChunk = n }(readChunk)
	readChunk = 1
	if got := read("11", ""); len(got) != 2 || got[1].id != "run-2" {
		t.Errorf("in chunks of 1: %v", got)
	}
	// Limit and the callback's error.
	errStopHere := errors.New("stop")
	n := 0
	err := s.EachRun(ctx, Filter{Limit: 1}, "1", "", func(*StoredRun) error { n++; return nil })
	if err != nil || n != 1 {
		t.Errorf("Limit 1: %d runs, %v", n, err)
	}
	if err := s.EachRun(ctx, Filter{}, "1", "", func(*StoredRun) error { return errStopHere }); !errors.Is(err, errStopHere) {
		t.Errorf("EachRun returned %v, want fn's error", err)
	}
	if n, err := s.CountRuns(ctx, Filter{Limit: 1}); n != 1 || err != nil {
		t.Errorf("CountRuns with Limit 1 = %d, %v", n, err)
	}
}

// TestMigrateToSummaries: a schema-3 store (results without summaries)
// opens as schema 4; its results keep no summary and still serve as
// baselines; a result saved from then on has one.
func TestMigrateToSummaries(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sql.Open("sqlite", filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations[:3] {
		if _, err := db.ExecContext(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	data, b, res := run(t, "run-old", day)
	resJSON, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO runs (run_id, schema_version, ecosystem, target_name, target_version, run_date,
	tool_name, tool_version, outcome, bundle_sha256, bundle) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			[]any{b.Run.ID, b.SchemaVersion, b.Target.Ecosystem, b.Target.Name, b.Target.Version, b.Run.Date.UnixNano(),
				b.Run.Tool.Name, b.Run.Tool.Version, string(b.Sandbox.Outcome), "digest", data}},
		{`INSERT INTO results (run_id, rubric_version, rubric_hash, score, result) VALUES (?, ?, ?, ?, ?)`,
			[]any{b.Run.ID, "4", "sha256:old", *res.Score, resJSON}},
		{`PRAGMA user_version = 3`, nil},
	} {
		if _, err := db.ExecContext(ctx, q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	s, err := Open(ctx, dir)
	if err != nil {
		t.Fatalf("open a schema-3 store: %v", err)
	}
	defer s.Close()
	var version int
	var summaries int
	if err := s.db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil || version != SchemaVersion() {
		t.Fatalf("schema version %d, %v; want %d", version, err, SchemaVersion())
	}
	if err := s.db.QueryRowContext(ctx, `SELECT count(summary) FROM results`).Scan(&summaries); err != nil || summaries != 0 {
		t.Fatalf("%d summaries after migrating, %v; want 0", summaries, err)
	}
	err = s.EachRun(ctx, Filter{}, "5", "", func(r *StoredRun) error {
		if r.BaselineVersion != "4" || !bytes.Equal(r.Baseline, resJSON) || !bytes.Equal(r.Bundle, data) {
			t.Errorf("the schema-3 run reads as baseline %q %.40q", r.BaselineVersion, r.Baseline)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	res5 := res
	res5.RubricVersion = "5"
	saveResult(t, s, "run-old", res5)
	if err := s.db.QueryRowContext(ctx, `SELECT count(summary) FROM results`).Scan(&summaries); err != nil || summaries != 1 {
		t.Fatalf("%d summaries after saving a result, %v; want 1", summaries, err)
	}
	// The old result, stored as plain JSON, and the new one, compressed,
	// both read back.
	if got, err := s.Result(ctx, "run-old", "4"); err != nil || !bytes.Equal(got, resJSON) {
		t.Errorf("old result: %.40q, %v", got, err)
	}
	if got, err := s.Result(ctx, "run-old", "5"); err != nil || !bytes.Equal(got, mustJSON(t, res5)) {
		t.Errorf("new result: %.40q, %v", got, err)
	}
}

// TestResultCodec: a stored result is its JSON compressed behind a
// marker no JSON text starts with; plain JSON (results stored before)
// reads as itself; a damaged block is an error, not a result.
func TestResultCodec(t *testing.T) {
	for i, name := range []string{"everything.bundle.json", "supply.bundle.json", "dnssec.bundle.json", "judge.bundle.json", "behavior.bundle.json"} {
		res := rubric.Evaluate(loadFixture(t, name), rubric.Current())
		want := mustJSON(t, res)
		stored := compressJSON(want)
		if !strings.HasPrefix(string(stored), storedS2) || len(stored) >= len(want)/2 {
			t.Errorf("bundle %d: stored %d bytes for %d of JSON", i, len(stored), len(want))
		}
		for _, in := range [][]byte{stored, want} {
			got, err := storedJSON(in)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("bundle %d: resultJSON = %.40q, %v", i, got, err)
			}
		}
		if _, err := storedJSON(stored[:len(stored)-5]); err == nil {
			t.Errorf("bundle %d: a truncated result decoded", i)
		}
	}
}
