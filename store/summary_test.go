package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/rubric"
)

// TestSummary: a result's summary is exactly json.Marshal of summaryOf,
// and read as a baseline it holds what the whole result holds: the same
// reason codes (each once), dimensions and composite.
func TestSummary(t *testing.T) {
	fx := loadRescoreFixtures(t)
	var results []rubric.Result
	for _, v := range []string{"2", "3", "4", "5"} {
		r, err := rubric.Load(v)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 16 {
			results = append(results, rubric.Evaluate(fx.mixed(i), r))
		}
	}
	// The edges: nothing at all; no composite; codes repeated and out of
	// order, and strings JSON must escape.
	score := 61.5
	results = append(results,
		rubric.Result{RubricVersion: "x", RubricHash: "h"},
		rubric.Result{RubricVersion: "x", RubricHash: "h", Dimensions: []rubric.DimensionScore{{ID: "a", Weight: 2.5, State: rubric.StateDropped}}},
		rubric.Result{RubricVersion: "x", RubricHash: "h", Score: &score,
			Findings:   []rubric.Finding{{Code: "pkg.z"}, {Code: "pkg.a\"<b>&\u2028"}, {Code: "pkg.z"}, {Code: "pkg.a\"<b>&\u2028"}},
			Dimensions: []rubric.DimensionScore{{ID: "d\u00e9", Weight: 1e-7, State: rubric.StateScored, Score: 33.3333333333}}},
	)
	for i, res := range results {
		got, err := encodeSummary(&res)
		if err != nil {
			t.Fatalf("result %d: %v", i, err)
		}
		want, err := json.Marshal(summaryOf(&res))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("result %d: summary\n%s\nwant\n%s", i, got, want)
		}
		full, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		var fromSummary, fromResult baselineResult
		if err := unmarshal(got, &fromSummary); err != nil {
			t.Fatalf("result %d: decode summary: %v", i, err)
		}
		if err := unmarshal(full, &fromResult); err != nil {
			t.Fatalf("result %d: decode result: %v", i, err)
		}
		if !sameBaseline(fromSummary, fromResult) {
			t.Errorf("result %d: summary reads as %+v, the result as %+v", i, fromSummary, fromResult)
		}
		// The fast reading of a summary: taken for every summary of plain
		// names (all but the last edge), and the same as unmarshal's.
		var parsed baselineResult
		codes := summaryOf(&res)
		var names []string
		for _, f := range codes.Findings {
			names = append(names, f.Code)
		}
		ok := parseSummary(got, &parsed, names, res.Dimensions)
		if plain := i < len(results)-1; ok != plain {
			t.Errorf("result %d: parseSummary took it: %v, want %v", i, ok, plain)
		}
		if ok && !reflect.DeepEqual(parsed, fromSummary) {
			t.Errorf("result %d: parseSummary read %+v, unmarshal %+v", i, parsed, fromSummary)
		}
		if !ok && (len(parsed.Findings) > 0 || len(parsed.Dimensions) > 0 || parsed.Score != nil) {
			t.Errorf("result %d: parseSummary declined but left %+v", i, parsed)
		}
		if len(got) >= len(full) && len(res.Findings) > 2 {
			t.Errorf("result %d: summary of %d bytes for a result of %d", i, len(got), len(full))
		}
	}
	nan := math.NaN()
	if _, err := encodeSummary(&rubric.Result{Score: &nan}); err == nil {
		t.Error("a NaN composite encoded without an error")
	}
}

// FuzzParseSummary: whatever parseSummary takes, json.Unmarshal takes
// too, and reads the same way.
func FuzzParseSummary(f *testing.F) {
	for _, seed := range []string{
		`{"findings":null,"dimensions":null,"score":null}`,
		`{"findings":[{"code":"pkg.a"},{"code":"pkg.b"}],"dimensions":[{"id":"d","weight":0.25,"state":"scored","score":-1.5e-7}],"score":61.5}`,
		`{"findings":[{"code":"pkg.a"}],"dimensions":[{"id":"d","weight":1,"state":"zero_point","score":0}],"score":0}`,
		`{"findings":[{"code":"pkg.a"}], "dimensions":null,"score":null}`,
		`{"findings":[{"code":"pkg.\u0061"}],"dimensions":null,"score":null}`,
		`{"findings":null,"dimensions":[{"id":"d","weight":01,"state":"scored","score":1}],"score":null}`,
		`{"findings":null,"dimensions":[{"id":"d","weight":1.,"state":"scored","score":1e}],"score":null}`,
		`{"findings":null,"dimensions":null,"score":1e400}`,
		`{"findings":null,"dimensions":null,"score":-}`,
		`{"findings":[],"dimensions":null,"score":null}`,
		`{"findings":null,"dimensions":null,"score":null}x`,
		`{"findings":null,"dimensions":null,"score":null`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var parsed, want baselineResult
		if !parseSummary(data, &parsed, []string{"pkg.a", "pkg.b"}, []rubric.DimensionScore{{ID: "d"}}) {
			if !reflect.DeepEqual(parsed, baselineResult{}) {
				t.Fatalf("parseSummary declined %q but left %+v", data, parsed)
			}
			return
		}
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("parseSummary took %q, which json.Unmarshal refuses: %v", data, err)
		}
		if !reflect.DeepEqual(parsed, want) {
			t.Fatalf("%q: parseSummary read %+v, json.Unmarshal %+v", data, parsed, want)
		}
	})
}

// sameBaseline reports whether two decoded baselines hold the same
// values, codes compared as sets.
func sameBaseline(a, b baselineResult) bool {
	codes := func(fs []baselineFinding) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Code)
		}
		return sortedUnique(out)
	}
	return slices.Equal(codes(a.Findings), codes(b.Findings)) && slices.Equal(a.Dimensions, b.Dimensions) &&
		(a.Score == nil) == (b.Score == nil) && (a.Score == nil || *a.Score == *b.Score)
}

// TestRescoreWithoutSummaries: results saved before schema 4 have no
// summary, and rescoring compares with the result itself; with none, some
// or all summaries missing, a pass finds exactly the same moves. Every
// result a pass saves carries its summary.
func TestRescoreWithoutSummaries(t *testing.T) {
	ctx := context.Background()
	fx := loadRescoreFixtures(t)
	s := openTemp(t)
	v4, err := rubric.Load("4")
	if err != nil {
		t.Fatal(err)
	}
	v5 := rubric.Current()
	seedBulk(t, s, 300, fx.mixed, v4)
	pass := func(save bool) string {
		t.Helper()
		sum, err := Rescore(ctx, s, RescoreOptions{Rubric: v5, Save: save})
		if err != nil || sum.Rescored != 300 || len(sum.Failed) != 0 {
			t.Fatalf("rescore: %v, rescored %d, failed %v", err, sum.Rescored, sum.Failed)
		}
		data, err := json.Marshal(sum)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	withSummaries := pass(false)
	if !bytes.Contains([]byte(withSummaries), []byte(`"composite":{"compared":300`)) {
		t.Fatalf("no composite compared for every run: %s", withSummaries)
	}
	for _, q := range []string{
		`UPDATE results SET summary = NULL WHERE run_id < 'run-000150'`,
		`UPDATE results SET summary = NULL`,
	} {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
		if got := pass(false); got != withSummaries {
			t.Errorf("after %s:\n%s\nwant\n%s", q, got, withSummaries)
		}
	}
	if got := strings.Replace(pass(true), `"saved":true`, `"saved":false`, 1); got != withSummaries {
		t.Errorf("saving pass:\n%s\nwant\n%s", got, withSummaries)
	}
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT run_id, result, summary FROM results WHERE rubric_version = ?`), v5.Version)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id string
		var data, summary []byte
		if err := rows.Scan(&id, &data, &summary); err != nil {
			t.Fatal(err)
		}
		j, err := storedJSON(data)
		if err != nil {
			t.Fatal(err)
		}
		var res rubric.Result
		if err := json.Unmarshal(j, &res); err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(summaryOf(&res))
		if !bytes.Equal(summary, want) {
			t.Fatalf("run %s: stored summary\n%s\nwant\n%s", id, summary, want)
		}
		n++
	}
	if err := rows.Err(); err != nil || n != 300 {
		t.Fatalf("%d results under v5, %v; want 300", n, err)
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
	sum, err := Rescore(ctx, s, RescoreOptions{Save: true})
	if err != nil || sum.Rescored != 1 || sum.Baselines["4"] != 1 || sum.Composite.Compared != 1 {
		t.Fatalf("rescore: %v, %+v", err, sum)
	}
	if err := s.db.QueryRowContext(ctx, `SELECT count(summary) FROM results`).Scan(&summaries); err != nil || summaries != 1 {
		t.Fatalf("%d summaries after a saving pass, %v; want 1", summaries, err)
	}
	// The old result, stored as plain JSON, and the new one, compressed,
	// both read back.
	if got, err := s.Result(ctx, "run-old", "4"); err != nil || *got.Score != *res.Score {
		t.Errorf("old result: %v, %v", got.Score, err)
	}
	if got, err := s.Result(ctx, "run-old", rubric.Current().Version); err != nil || got.RubricVersion != rubric.Current().Version {
		t.Errorf("new result: %+v, %v", got.RubricVersion, err)
	}
}

// TestResultCodec: a stored result is its JSON compressed behind a
// marker no JSON text starts with; plain JSON (results stored before)
// reads as itself; a damaged block is an error, not a result.
func TestResultCodec(t *testing.T) {
	fx := loadRescoreFixtures(t)
	for i := range 24 {
		res := rubric.Evaluate(fx.mixed(i), rubric.Current())
		stored, err := encodeStoredResult(&res)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
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
