package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/report"
	"github.com/verifymcp/verifymcp/report/batchreport"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/judge/judgetest"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/store"
)

// runRescore is run with the rescore command registered even where the
// root does not list it yet.
func runRescore(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	g := &globals{stdout: &out, stderr: &errb}
	root := newRoot(g)
	if c, _, err := root.Find([]string{"rescore"}); err != nil || c.Name() != "rescore" {
		root.AddCommand(newRescoreCmd(g))
	}
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errb)
	code := ExitOK
	if err := root.ExecuteContext(context.Background()); err != nil {
		code = exitCode(err)
		fmt.Fprintln(&errb, "verifymcp: "+report.FirstLine(err.Error()))
	}
	return code, out.String(), errb.String()
}

// seedStore saves the report fixtures in a new data directory, three runs
// of each on three days, scored under rubric v4, and returns the directory
// and the run ids.
func seedStore(t *testing.T) (string, []string) {
	t.Helper()
	return seedStoreWith(t, nil)
}

// seedStoreWith is seedStore with each bundle changed by mutate first.
func seedStoreWith(t *testing.T, mutate func(*evidence.Bundle)) (string, []string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	v4, err := rubric.Load("4")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("../../../report/testdata/*.bundle.json")
	if len(files) < 5 {
		t.Fatalf("%d fixture bundles", len(files))
	}
	var ids []string
	for i, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for day := range 3 {
			b, err := evidence.Decode(data)
			if err != nil {
				t.Fatal(err)
			}
			b.Run.ID = fmt.Sprintf("20260%d01t000000z-%08x", day+3, i)
			b.Run.Date = time.Date(2026, time.Month(day+3), 1, 0, 0, i, 0, time.UTC)
			if mutate != nil {
				mutate(b)
			}
			raw, err := json.Marshal(b)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.SaveRun(ctx, raw, b, rubric.Evaluate(b, v4)); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, b.Run.ID)
		}
	}
	return dir, ids
}

// TestRescore rescores a seeded store from rubric v4 to v5: the table says
// what moved, the results are saved under v5, and score RUN_ID --rubric 5
// agrees with each.
func TestRescore(t *testing.T) {
	ctx := context.Background()
	dir, ids := seedStore(t)

	code, out, errOut := runRescore(t, "--data-dir", dir, "rescore", "--rubric", "5")
	if code != ExitOK {
		t.Fatalf("rescore: exit %d\n%s", code, errOut)
	}
	for _, want := range []string{
		fmt.Sprintf("Rescored %d of %d stored runs under rubric 5", len(ids), len(ids)),
		fmt.Sprintf("Compared with: rubric 4 (%d runs)", len(ids)),
		"Composite score over",
		"DIMENSION", "installability",
		"prompt_contract_integrity", "new: ",
		"tool_capability_clarity",
		"CODE", "pkg.judge.", // the judge's codes appear under v5
		"Needs re-collection:",
		"results/s",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	// The v4 weights, scaled from 100 to 85 in v5, show as moved.
	if !strings.Contains(out, "6.3→5.355") {
		t.Errorf("table does not show installability reweighted from 6.3 to 5.355:\n%s", out)
	}
	if !strings.Contains(errOut, "rescoring stored runs") || !strings.Contains(errOut, fmt.Sprintf("runs=%d/%d", len(ids), len(ids))) {
		t.Errorf("stderr lacks progress lines:\n%s", errOut)
	}

	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, id := range ids {
		saved, err := scoredStore{st}.Result(ctx, id, "5")
		if err != nil {
			t.Fatalf("run %s: no result under v5 after rescore: %v", id, err)
		}
		code, rep, errOut := run(t, "--data-dir", dir, "score", id, "--rubric", "5", "--format", "json")
		if code != ExitOK {
			t.Fatalf("score %s: exit %d: %s", id, code, errOut)
		}
		var got struct {
			Score    *float64 `json:"score"`
			Findings []struct {
				Code string `json:"code"`
			} `json:"findings"`
			Rubric struct {
				Version string `json:"version"`
				Hash    string `json:"hash"`
			} `json:"rubric"`
		}
		if err := json.Unmarshal([]byte(rep), &got); err != nil {
			t.Fatal(err)
		}
		if (got.Score == nil) != (saved.Score == nil) || got.Score != nil && *got.Score != *saved.Score {
			t.Errorf("run %s: score --rubric 5 gives %v, rescore saved %v", id, deref(got.Score), deref(saved.Score))
		}
		var codes, savedCodes []string
		for _, f := range got.Findings {
			codes = append(codes, f.Code)
		}
		for _, f := range saved.Findings {
			savedCodes = append(savedCodes, f.Code)
		}
		slices.Sort(codes)
		if !slices.Equal(codes, savedCodes) {
			t.Errorf("run %s: score --rubric 5 finds %v, rescore saved %v", id, codes, savedCodes)
		}
		if v5, _ := rubric.Load("5"); saved.RubricHash != v5.Hash {
			t.Errorf("run %s: saved under hash %s, want v5's %s", id, saved.RubricHash, v5.Hash)
		}
	}

	// Again, as JSON: every run is now compared with v4 still (the highest
	// other version), and nothing is saved in a dry run under v3.
	code, out, errOut = runRescore(t, "--data-dir", dir, "rescore", "--rubric", "3", "--dry-run", "--format", "json")
	if code != ExitOK {
		t.Fatalf("rescore --dry-run: exit %d\n%s", code, errOut)
	}
	var sum struct {
		SchemaVersion    string         `json:"schema_version"`
		DryRun           bool           `json:"dry_run"`
		Saved            bool           `json:"saved"`
		Rescored         int            `json:"rescored"`
		Baselines        map[string]int `json:"baselines"`
		ResultsPerSecond float64        `json:"results_per_second"`
		Dimensions       []struct {
			ID      string `json:"id"`
			Removed int    `json:"removed"`
		} `json:"dimensions"`
		Failed []any `json:"failed"`
	}
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("rescore --format json: %v\n%s", err, out)
	}
	if sum.SchemaVersion != batchreport.RescoreSchemaVersion || !sum.DryRun || sum.Saved || sum.Rescored != len(ids) ||
		sum.Baselines["5"] != len(ids) || sum.ResultsPerSecond <= 0 || sum.Failed == nil {
		t.Errorf("dry run summary %+v", sum)
	}
	// v3 lacks v5's two dimensions that read the surface for text aimed at
	// the agent: they show as removed.
	var removed []string
	for _, d := range sum.Dimensions {
		if d.Removed > 0 {
			removed = append(removed, d.ID)
		}
	}
	if want := []string{"prompt_contract_integrity", "tool_capability_clarity"}; !slices.Equal(removed, want) {
		t.Errorf("dimensions removed going from v5 to v3: %v, want %v", removed, want)
	}
	if _, err := st.Result(ctx, ids[0], "3"); err == nil {
		t.Error("a dry run saved a result")
	}
}

func TestRescoreFilters(t *testing.T) {
	dir, ids := seedStore(t)
	tests := []struct {
		args []string
		want int
	}{
		{[]string{"--since", "2026-04-01"}, 2 * len(ids) / 3},
		{[]string{"--since", "2026-04-01", "--until", "2026-05-01T00:00:00Z"}, len(ids) / 3},
		{[]string{"--limit", "4"}, 4},
		{[]string{"--name", "@modelcontextprotocol/server-nothing"}, 0},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			args := append([]string{"--data-dir", dir, "rescore", "--dry-run", "--format", "json", "--workers", "1"}, tc.args...)
			code, out, errOut := runRescore(t, args...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var sum struct {
				Total, Rescored int
			}
			if err := json.Unmarshal([]byte(out), &sum); err != nil {
				t.Fatal(err)
			}
			if sum.Total != tc.want || sum.Rescored != tc.want {
				t.Errorf("total %d, rescored %d, want %d", sum.Total, sum.Rescored, tc.want)
			}
		})
	}
}

func TestRescoreBadInput(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"unknown rubric version", []string{"--rubric", "99"}, `unknown version "99" (have 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)`},
		{"bad format", []string{"--format", "xml"}, "--format"},
		{"bad date", []string{"--since", "yesterday"}, "--since wants YYYY-MM-DD"},
		{"empty range", []string{"--since", "2026-05-01", "--until", "2026-04-01"}, "not before --until"},
		{"negative limit", []string{"--limit", "-1"}, "negative"},
		{"argument", []string{"npm:x@1"}, "takes no arguments"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runRescore(t, append([]string{"--data-dir", dir, "rescore"}, tc.args...)...)
			if code != ExitUsage {
				t.Errorf("exit %d, want %d (stderr %q)", code, ExitUsage, errOut)
			}
			if out != "" {
				t.Errorf("stdout must stay empty on error, got %q", out)
			}
			if !strings.Contains(errOut, tc.msg) {
				t.Errorf("stderr %q lacks %q", errOut, tc.msg)
			}
		})
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestRescoreHelp(t *testing.T) {
	code, out, _ := runRescore(t, "rescore", "--help")
	for _, want := range []string{"--rubric", "--baseline", "--name", "--version", "--since", "--until", "--limit", "--workers", "--dry-run", "--format", "no sandbox", "zero point", "collected again", "Exit codes"} {
		if code != ExitOK || !strings.Contains(out, want) {
			t.Errorf("rescore --help lacks %q:\n%s", want, out)
		}
	}
}

// TestRescoreRecollect: runs stored before the judge existed lack the
// signal rubric v5 reads. rescore --recollect collects the judge's verdicts
// again, and nothing else, from each stored contract, into new runs that
// carry the earlier evidence over; the judge is asked once per distinct
// tool surface (its cache answers the rest), and a second pass asks nothing
// and makes no run.
func TestRescoreRecollect(t *testing.T) {
	ctx := context.Background()
	// Evidence from before the judge: no judge signal at all.
	dir, ids := seedStoreWith(t, func(b *evidence.Bundle) {
		delete(b.Signals, evidence.SignalJudge)
		b.Judge = nil
	})
	fake := judgetest.New(judgetest.Always(judgetest.Reply{Content: judgetest.Verdicts()}))
	defer fake.Close()
	t.Setenv("VERIFYMCP_CONFIG", "")
	t.Setenv("VERIFYMCP_JUDGE_API_KEY", "sk-test-recollect")
	args := []string{"--data-dir", dir, "rescore", "--rubric", "5", "--recollect", "--format", "json",
		"--judge-endpoint", fake.BaseURL(), "--skip", "osv,socket,github,dnssec"}

	code, out, errOut := runRescore(t, args...)
	if code != ExitOK {
		t.Fatalf("rescore --recollect: exit %d\n%s", code, errOut)
	}
	if strings.Contains(out+errOut, "sk-test-recollect") {
		t.Error("the judge key shows in the output")
	}
	var sum struct {
		Recollect    map[string]int `json:"recollect"`
		Recollection struct {
			Runs           int                       `json:"runs"`
			Derived        int                       `json:"derived"`
			AlreadyDerived int                       `json:"already_derived"`
			Signals        map[string]map[string]int `json:"signals"`
			NeedScan       map[string]int            `json:"need_scan"`
			Failed         []any                     `json:"failed"`
		} `json:"recollection"`
	}
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	rec := sum.Recollection
	lacking := sum.Recollect[evidence.SignalJudge]
	if lacking == 0 || rec.Runs < lacking || rec.Derived == 0 || len(rec.Failed) != 0 || rec.AlreadyDerived != 0 {
		t.Fatalf("recollection %+v (runs lacking the judge: %d)", rec, lacking)
	}
	if n := rec.Signals[evidence.SignalJudge]["observed"]; n == 0 {
		t.Errorf("no new run has the judge observed: %v", rec.Signals)
	}
	for s := range rec.Signals {
		if s != evidence.SignalJudge {
			t.Errorf("collected %s again; only the judge was lacking", s)
		}
	}
	calls := fake.Count()
	if calls == 0 || calls > len(ids)/3 {
		t.Errorf("the judge was asked %d times for %d runs of %d distinct packages: want at most one call per surface", calls, rec.Derived, len(ids)/3)
	}

	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	derived := 0
	for _, id := range ids {
		ds, err := st.Derived(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) > 1 {
			t.Errorf("run %s: %d derived runs, want at most 1", id, len(ds))
		}
		for _, d := range ds {
			derived++
			oldData, _ := st.Bundle(ctx, id)
			newData, _ := st.Bundle(ctx, d)
			old, err1 := evidence.Decode(oldData)
			nb, err2 := evidence.Decode(newData)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			r := nb.Run.Recollected
			if r == nil || r.From != id || !slices.Equal(r.Signals, []string{evidence.SignalJudge}) || !nb.Run.Date.Equal(old.Run.Date) {
				t.Errorf("derived run %s: recollected %+v, date %v (earlier run's %v)", d, r, nb.Run.Date, old.Run.Date)
			}
			// Everything but the judge is carried over as it was.
			for name, sig := range old.Signals {
				if name != evidence.SignalJudge && !sameSignal(sig, nb.Signals[name]) {
					t.Errorf("derived run %s: signal %s changed from %+v to %+v", d, name, sig, nb.Signals[name])
				}
			}
			if res, err := (scoredStore{st}).Result(ctx, d, "5"); err != nil || res.RubricVersion != "5" {
				t.Errorf("derived run %s: result under v5: %v", d, err)
			}
		}
	}
	st.Close()
	if derived != rec.Derived {
		t.Errorf("%d derived runs stored, summary says %d", derived, rec.Derived)
	}

	// Again: every lacking run was recollected before; nothing is asked.
	code, out, errOut = runRescore(t, args...)
	if code != ExitOK {
		t.Fatalf("second rescore --recollect: exit %d\n%s", code, errOut)
	}
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Recollection.Derived != 0 || sum.Recollection.AlreadyDerived != rec.Derived || fake.Count() != calls {
		t.Errorf("second pass: %+v, judge calls %d (first pass %d); want nothing new", sum.Recollection, fake.Count(), calls)
	}
	if code, _, errOut := runRescore(t, "--data-dir", dir, "rescore", "--recollect", "--dry-run"); code != ExitUsage || !strings.Contains(errOut, "--dry-run") {
		t.Errorf("--recollect --dry-run: exit %d, %s; want a usage error", code, errOut)
	}
}

func sameSignal(a, b evidence.Signal) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
