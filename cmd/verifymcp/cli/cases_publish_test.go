package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/benchmark"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/store"
)

// storedCrash saves the recorded scan of the crash-at-start fixture into a
// new store, changed by fn, and returns the data directory.
func storedCrash(t *testing.T, data string, fn func(b *evidence.Bundle)) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "benchmark", "testdata", "bundles", "crash-at-start.json"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := evidence.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	if fn != nil {
		fn(b)
		if raw, err = json.Marshal(b); err != nil {
			t.Fatal(err)
		}
	}
	st, err := store.Open(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.SaveRun(context.Background(), raw, b, rubric.Evaluate(b, rubric.Current())); err != nil {
		t.Fatal(err)
	}
}

// crashCorpus copies the crash-at-start case and fixture into a new
// corpus, its reviewer set to reviewer.
func crashCorpus(t *testing.T, reviewer string) string {
	t.Helper()
	src := filepath.Join("..", "..", "..", "benchmark")
	corpus := t.TempDir()
	copyTo := func(from, to string, edit func(string) string) {
		t.Helper()
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			data = []byte(edit(string(data)))
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyTo(filepath.Join(src, "cases", "synthetic", "crash-at-start.yaml"), filepath.Join(corpus, "cases", "synthetic", "crash-at-start.yaml"),
		func(s string) string {
			s = regexp.MustCompile(`(?m)^rubric_version: .*$`).ReplaceAllString(s, `rubric_version: "`+rubric.CurrentVersion+`"`)
			return strings.Replace(s, "reviewer: pending", "reviewer: "+reviewer, 1)
		})
	entries, err := os.ReadDir(filepath.Join(src, "fixtures", "crash-at-start"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		copyTo(filepath.Join(src, "fixtures", "crash-at-start", e.Name()), filepath.Join(corpus, "fixtures", "crash-at-start", e.Name()), nil)
	}
	copyTo(filepath.Join(src, "fixtures", "server.js"), filepath.Join(corpus, "fixtures", "server.js"), nil)
	return corpus
}

// TestCasesPublish: --publish refuses a kind that is not publishable (a
// case no person signed), with the reason and exit 2, writing nothing of
// it; signed, the kind is written with its ledger entry.
func TestCasesPublish(t *testing.T) {
	t.Setenv("VERIFYMCP_DATABASE_URL", "")
	t.Setenv("VERIFYMCP_CONFIG", "")
	data := t.TempDir()
	storedCrash(t, data, nil)
	out := t.TempDir()

	code, _, errOut := run(t, "--data-dir", data, "cases", "run", "--corpus", crashCorpus(t, "pending"), "--from-store", "--publish", out)
	if code != ExitUsage || !strings.Contains(errOut, "crash-at-start: no person has signed the case") || strings.Contains(errOut, "re-review") {
		t.Fatalf("exit %d, want %d naming the unsigned case:\n%s", code, ExitUsage, errOut)
	}
	if _, err := os.Stat(filepath.Join(out, "package", "synthetic.json")); !os.IsNotExist(err) {
		t.Errorf("synthetic.json written for a refused kind: %v", err)
	}

	code, _, errOut = run(t, "--data-dir", data, "cases", "run", "--corpus", crashCorpus(t, "Ada Lovelace <ada@lovelace.example>"), "--from-store", "--publish", out)
	if code != ExitOK {
		t.Fatalf("exit %d, want 0:\n%s", code, errOut)
	}
	for _, f := range []string{"package/synthetic.json", "package/synthetic.txt", benchmark.LedgerFile} {
		if !strings.Contains(errOut, "published "+filepath.Join(out, f)) {
			t.Errorf("stderr does not say %s was published:\n%s", f, errOut)
		}
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
}

// TestCasesSelectedAfterScoring: a reviewed case whose target the store
// scanned before the case's selection date is flagged on the run, through
// the store the command opens.
func TestCasesSelectedAfterScoring(t *testing.T) {
	t.Setenv("VERIFYMCP_DATABASE_URL", "")
	t.Setenv("VERIFYMCP_CONFIG", "")
	data := t.TempDir()
	storedCrash(t, data, func(b *evidence.Bundle) {
		b.Run.ID, b.Run.Date = "early-run", time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
		b.Target.Ecosystem, b.Target.Name, b.Target.Version, b.Target.Integrity = "npm", "example-crash-mcp", "1.0.0", ""
	})
	corpus := t.TempDir()
	c := `id: example-crash
kind: reviewed
track: package
target: npm:example-crash-mcp@1.0.0
reviewer: Ada Lovelace <ada@lovelace.example>
provenance: Proposed by a user in an issue on 2026-01-10, reviewed from its source before any scan.
selected: 2026-01-10
rubric_version: "` + rubric.CurrentVersion + `"
scope: [pkg.session.]
expected: [pkg.session.start_crashed]
`
	if err := os.MkdirAll(filepath.Join(corpus, "cases", "reviewed"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(corpus, "cases", "reviewed", "example-crash.yaml"), []byte(c), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "--data-dir", data, "cases", "run", "--corpus", corpus, "--from-store", "--format", "json")
	if code != ExitOK {
		t.Fatalf("exit %d:\n%s", code, errOut)
	}
	var rep benchmark.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Cases) != 1 {
		t.Fatalf("%v\n%s", err, out)
	}
	r := rep.Cases[0]
	if r.SelectedAfterScoring == nil || r.SelectedAfterScoring.RunID != "early-run" || r.Publishable {
		t.Errorf("case %+v: want it selected after scoring (run early-run) and not publishable; not publishable: %q", r.SelectedAfterScoring, r.NotPublishable)
	}
}
