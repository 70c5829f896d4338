package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
)

func ptr[T any](v T) *T { return &v }

// openTemp opens an empty store for a test: a SQLite file in a temporary
// directory, or, while TestPostgres runs the backend-agnostic tests, a
// Postgres schema of its own.
func openTemp(t *testing.T) *Store {
	t.Helper()
	return newTestStore(t)
}

var newTestStore = func(t *testing.T) *Store {
	s, err := Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// run returns the fixture as run id, with its bytes (indented, as a user
// might have written them) and its result under rubric v1. The tests save
// runs scored under "1" and rescore or filter under "2", so they pin the
// version rather than follow rubric.Current.
func run(t *testing.T, id string, date time.Time) ([]byte, *evidence.Bundle, rubric.Result) {
	t.Helper()
	b := loadFixture(t, "everything.bundle.json")
	b.Run.ID = id
	b.Run.Date = date
	data, err := json.MarshalIndent(b, "", "\t")
	if err != nil {
		t.Fatal(err)
	}
	v1, err := rubric.Load("1")
	if err != nil {
		t.Fatal(err)
	}
	return data, b, rubric.Evaluate(b, v1)
}

var day = time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)

func TestDefaultDir(t *testing.T) {
	tests := []struct {
		name            string
		data, xdg, home string
		want            string
	}{
		{name: "verifymcp_data_dir_wins", data: "/srv/verifymcp", xdg: "/x", home: "/home/u", want: "/srv/verifymcp"},
		{name: "xdg_data_home", xdg: "/x/share", home: "/home/u", want: "/x/share/verifymcp"},
		{name: "relative_xdg_is_ignored", xdg: "rel/share", home: "/home/u", want: "/home/u/.local/share/verifymcp"},
		{name: "home", home: "/home/u", want: "/home/u/.local/share/verifymcp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("VERIFYMCP_DATA_DIR", tt.data)
			t.Setenv("XDG_DATA_HOME", tt.xdg)
			t.Setenv("HOME", tt.home)
			got, err := DefaultDir()
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("DefaultDir() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestOpen(t *testing.T) {
	ctx := context.Background()
	// Characters that would break a naive file: DSN.
	dir := filepath.Join(t.TempDir(), "data dir?x=1#frag%20")
	s, err := Open(ctx, dir)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o700 {
		t.Errorf("data directory mode %o, want 700", perm)
	}
	if _, err := os.Stat(filepath.Join(dir, FileName)); err != nil {
		t.Errorf("database file: %v", err)
	}
	var mode string
	var version int
	if err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		t.Fatal(err)
	}
	var pageSize int
	if err := s.db.QueryRowContext(ctx, "PRAGMA page_size").Scan(&pageSize); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" || version != SchemaVersion() || pageSize != 65536 {
		t.Errorf("journal_mode %q, user_version %d, page_size %d; want wal, %d, 65536", mode, version, pageSize, SchemaVersion())
	}
	data, b, res := run(t, "run-a", day)
	if err := s.SaveRun(ctx, data, b, res); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Reopening migrates nothing and keeps the data.
	s, err = Open(ctx, dir)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	if got, err := s.Bundle(ctx, "run-a"); err != nil || string(got) != string(data) {
		t.Errorf("Bundle after reopen = %d bytes, %v; want the saved bytes", len(got), err)
	}
}

func TestOpenRejectsNewerSchema(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion()+1)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open(ctx, dir); !errors.Is(err, ErrSchemaTooNew) {
		t.Errorf("Open of a newer schema: error %v, want ErrSchemaTooNew", err)
	}
}

func TestSaveRun(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	data, b, res := run(t, "run-1", day)
	if err := s.SaveRun(ctx, data, b, res); err != nil {
		t.Fatalf("SaveRun: %v", err)
	}

	got, err := s.Bundle(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(data) {
		t.Error("Bundle did not return the saved bytes exactly")
	}
	// Stored compressed (schema 6), under the digest of the bytes saved.
	var stored []byte
	var digest string
	if err := s.db.QueryRowContext(ctx, `SELECT bundle, bundle_sha256 FROM runs WHERE run_id = 'run-1'`).Scan(&stored, &digest); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(stored, []byte(storedS2)) || len(stored) >= len(data) {
		t.Errorf("stored bundle: %d bytes starting %q, for %d bytes of JSON", len(stored), stored[:min(len(stored), 4)], len(data))
	}
	if sum := sha256.Sum256(data); digest != hex.EncodeToString(sum[:]) {
		t.Errorf("bundle_sha256 %s is not the digest of the JSON saved", digest)
	}
	gotRes, err := s.Result(ctx, "run-1", "1")
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := json.Marshal(res); string(gotRes) != string(want) {
		t.Errorf("Result is not the result's JSON:\n%s", diff(json.RawMessage(want), gotRes))
	}

	// A second save of the same run id is refused and changes nothing.
	other, ob, ores := run(t, "run-1", day)
	ores.RubricHash = "sha256:other"
	if err := s.SaveRun(ctx, other, ob, ores); !errors.Is(err, ErrRunExists) {
		t.Errorf("second SaveRun: error %v, want ErrRunExists", err)
	}
	if got, _ := s.Result(ctx, "run-1", "1"); string(got) != string(gotRes) {
		t.Errorf("second SaveRun changed the result: %.80s", got)
	}

	// Evidence cannot be changed or deleted behind the store's back.
	for _, q := range []string{`UPDATE runs SET outcome = 'ok' WHERE run_id = 'run-1'`, `DELETE FROM runs WHERE run_id = 'run-1'`} {
		if _, err := s.db.ExecContext(ctx, q); err == nil || !strings.Contains(err.Error(), "immutable") {
			t.Errorf("%s: error %v, want the immutability trigger", q, err)
		}
	}
}

func TestSaveRunRejects(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	data, b, res := run(t, "run-1", day)
	otherData, _, _ := run(t, "run-2", day)
	tests := []struct {
		name string
		data []byte
		b    *evidence.Bundle
		res  rubric.Result
		want string
	}{
		{"bytes_of_another_run", otherData, b, res, "the bundle bytes are of run run-2"},
		{"not_json", []byte("{"), b, res, "bundle bytes"},
		{"no_rubric_version", data, b, rubric.Result{RubricHash: "sha256:x"}, "no rubric version"},
		{"nil_bundle", data, nil, res, "nil bundle"},
		{"invalid_bundle", data, &evidence.Bundle{SchemaVersion: evidence.SchemaVersion}, res, "run id and date are required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.SaveRun(ctx, tt.data, tt.b, tt.res)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("SaveRun error = %v, want one containing %q", err, tt.want)
			}
		})
	}
	if runs, err := s.Runs(ctx, Filter{}); err != nil || len(runs) != 0 {
		t.Errorf("Runs after rejected saves = %v, %v; want none", runs, err)
	}
}

// TestSaveRunIsAtomic makes the result insert fail after the run insert
// succeeded, and checks that the run was not saved either.
func TestSaveRunIsAtomic(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	inject, clear := `CREATE TRIGGER fail_results BEFORE INSERT ON results
		BEGIN SELECT RAISE(ABORT, 'injected failure'); END`, `DROP TRIGGER fail_results`
	if s.pg {
		inject = `CREATE FUNCTION fail_results() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN RAISE EXCEPTION 'injected failure'; END $$;
			CREATE TRIGGER fail_results BEFORE INSERT ON results FOR EACH ROW EXECUTE FUNCTION fail_results()`
		clear = `DROP TRIGGER fail_results ON results`
	}
	if _, err := s.db.ExecContext(ctx, inject); err != nil {
		t.Fatal(err)
	}
	data, b, res := run(t, "run-1", day)
	if err := s.SaveRun(ctx, data, b, res); err == nil || !strings.Contains(err.Error(), "injected failure") {
		t.Fatalf("SaveRun error = %v, want the injected failure", err)
	}
	if _, err := s.Bundle(ctx, "run-1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Bundle after a failed save: error %v, want ErrNotFound", err)
	}
	if _, err := s.db.ExecContext(ctx, clear); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveRun(ctx, data, b, res); err != nil {
		t.Errorf("SaveRun after the failure cleared: %v", err)
	}
}

func TestSaveResult(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	data, b, res := run(t, "run-1", day)
	if err := s.SaveRun(ctx, data, b, res); err != nil {
		t.Fatal(err)
	}
	// A rescore under another rubric version adds a row; a rescore under
	// the same version replaces it.
	v2 := rubric.Result{RubricVersion: "2", RubricHash: "sha256:two", Findings: []rubric.Finding{}, Dimensions: []rubric.DimensionScore{}}
	for _, score := range []*float64{ptr(10.0), nil} {
		v2.Score = score
		saveResult(t, s, "run-1", v2)
	}
	runs, err := s.Runs(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	want := []RunSummary{
		{RunID: "run-1", Ecosystem: "npm", Name: b.Target.Name, Version: b.Target.Version, Date: day, ToolVersion: "0.1.0",
			Outcome: evidence.OutcomeOK, RubricVersion: "1", RubricHash: res.RubricHash, Score: res.Score},
		{RunID: "run-1", Ecosystem: "npm", Name: b.Target.Name, Version: b.Target.Version, Date: day, ToolVersion: "0.1.0",
			Outcome: evidence.OutcomeOK, RubricVersion: "2", RubricHash: "sha256:two", Score: nil},
	}
	if d := diff(want, runs); d != "" {
		t.Errorf("Runs (-want +got):\n%s", d)
	}
	r, err := NewResult("no-such-run", mustJSON(t, v2))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SaveResults(ctx, []Result{r}); err == nil {
		t.Error("SaveResults saved a result of an unknown run")
	}
	if _, err := NewResult("run-1", []byte(`{"rubric_version":"2"}`)); err == nil {
		t.Error("NewResult took a result with no rubric hash")
	}
	if _, err := s.Result(ctx, "run-1", "3"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Result under an unknown rubric: error %v, want ErrNotFound", err)
	}
}

// saveResult saves res as the result of rescoring runID.
func saveResult(t *testing.T, s *Store, runID string, res rubric.Result) {
	t.Helper()
	r, err := NewResult(runID, mustJSON(t, res))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SaveResults(context.Background(), []Result{r}); err != nil {
		t.Fatalf("SaveResults: %v", err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	j, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func TestRuns(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	type target struct{ id, name, version string }
	for i, tg := range []target{
		{"r1", "mcp-a", "1.0.0"}, {"r2", "mcp-a", "1.1.0"}, {"r3", "mcp-b", "0.1.0"}, {"r4", "mcp-a", "1.1.0"},
	} {
		_, b, res := run(t, tg.id, day.Add(time.Duration(i)*time.Hour))
		b.Target.Name, b.Target.Version = tg.name, tg.version
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SaveRun(ctx, data, b, res); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		f    Filter
		want []string
	}{
		{"all_newest_first", Filter{}, []string{"r4", "r3", "r2", "r1"}},
		{"by_name", Filter{Name: "mcp-a"}, []string{"r4", "r2", "r1"}},
		{"by_name_and_version", Filter{Name: "mcp-a", Version: "1.1.0"}, []string{"r4", "r2"}},
		{"date_range", Filter{Since: day.Add(time.Hour), Until: day.Add(3 * time.Hour)}, []string{"r3", "r2"}},
		{"limit", Filter{Limit: 2}, []string{"r4", "r3"}},
		{"rubric_version", Filter{RubricVersion: "1"}, []string{"r4", "r3", "r2", "r1"}},
		{"unscored_rubric_version", Filter{RubricVersion: "2"}, []string{}},
		{"ecosystem", Filter{Ecosystem: "pypi"}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs, err := s.Runs(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			got := []string{}
			for _, r := range runs {
				got = append(got, r.RunID)
			}
			if d := diff(tt.want, got); d != "" {
				t.Errorf("Runs(%+v) (-want +got):\n%s", tt.f, d)
			}
		})
	}
}

// TestRunsShipped selects the runs of a release that ran as shipped by
// what its bundle records: its digest (the target's integrity, or the
// digest preparing an image scanned by tag found) and its reference.
func TestRunsShipped(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	d1, d2 := "sha256:"+strings.Repeat("1", 64), "sha256:"+strings.Repeat("2", 64)
	for i, tg := range []struct {
		id, eco, name, version, integrity string
		shipped                           *evidence.Shipped
	}{
		// an image scanned by tag: its digest is what preparing found
		{"t1", "oci", "ghcr.io/a/img", "1.0", "", &evidence.Shipped{Kind: "image", Digest: d1, Reference: "ghcr.io/a/img@" + d1}},
		{"t2", "oci", "ghcr.io/a/img", d2, d2, &evidence.Shipped{Kind: "image", Digest: d2, Reference: "ghcr.io/a/img@" + d2}},
		{"t3", "mcpb", "tools", "0.1.0", d1, &evidence.Shipped{Kind: "bundle", Digest: d1, Reference: "dist/tools.mcpb"}},
		{"t4", "mcpb", "tools", "0.1.0", d1, &evidence.Shipped{Kind: "bundle", Digest: d1, Reference: "https://example.com/tools.mcpb"}},
		{"t5", "npm", "mcp-a", "1.0.0", "", nil},
	} {
		_, b, res := run(t, tg.id, day.Add(time.Duration(i)*time.Hour))
		b.Target.Ecosystem, b.Target.Name, b.Target.Version, b.Shipped = tg.eco, tg.name, tg.version, tg.shipped
		if tg.shipped != nil {
			b.Target.Integrity = tg.integrity
		}
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SaveRun(ctx, data, b, res); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name string
		f    Filter
		want []string
	}{
		{"digest_of_a_tag_scan", Filter{Ecosystem: "oci", Name: "ghcr.io/a/img", Digest: d1}, []string{"t1"}},
		{"digest_of_a_digest_scan", Filter{Ecosystem: "oci", Name: "ghcr.io/a/img", Digest: d2}, []string{"t2"}},
		{"digest_any_ecosystem", Filter{Digest: d1}, []string{"t4", "t3", "t1"}},
		{"digest_limit", Filter{Digest: d1, Limit: 2}, []string{"t4", "t3"}},
		{"reference", Filter{Ecosystem: "mcpb", Reference: "dist/tools.mcpb"}, []string{"t3"}},
		{"reference_and_digest", Filter{Reference: "https://example.com/tools.mcpb", Digest: d2}, []string{}},
		{"rubric_version", Filter{Digest: d2, RubricVersion: "1"}, []string{"t2"}},
		{"not_shipped", Filter{Ecosystem: "npm", Reference: "mcp-a"}, []string{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			runs, err := s.Runs(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			got := []string{}
			for _, r := range runs {
				got = append(got, r.RunID)
			}
			if d := diff(tt.want, got); d != "" {
				t.Errorf("Runs(%+v) (-want +got):\n%s", tt.f, d)
			}
		})
	}
	f := Filter{Digest: d1}
	if _, err := s.CountRuns(ctx, f); err == nil {
		t.Error("CountRuns took a filter by digest it cannot apply")
	}
	if err := s.EachBundle(ctx, f, func(string, []byte) error { return nil }); err == nil {
		t.Error("EachBundle took a filter by digest it cannot apply")
	}
	if err := s.EachRun(ctx, f, "1", "", func(*StoredRun) error { return nil }); err == nil {
		t.Error("EachRun took a filter by digest it cannot apply")
	}
}

func TestEachBundle(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	saved := map[string][]byte{}
	for i := range 3 {
		data, b, res := run(t, fmt.Sprintf("r%d", i), day.Add(time.Duration(-i)*time.Hour))
		if err := s.SaveRun(ctx, data, b, res); err != nil {
			t.Fatal(err)
		}
		saved[b.Run.ID] = data
	}
	// A run saved before schema 6, its bundle plain JSON, reads the same:
	// SaveRun's rows and statements, the bundle argument left as given.
	data, b, res := run(t, "r3", day.Add(-3*time.Hour))
	p, err := prepareRun(data, b, res)
	if err != nil {
		t.Fatal(err)
	}
	plain := false
	for i, a := range p.runArgs {
		if stored, ok := a.([]byte); ok && bytes.HasPrefix(stored, []byte(storedS2)) {
			p.runArgs[i], plain = data, true
		}
	}
	if !plain {
		t.Fatal("SaveRun's arguments hold no compressed bundle to save plain instead")
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.save(ctx, s.sqlExec(tx)); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	saved[b.Run.ID] = data
	if got, err := s.Bundle(ctx, "r3"); err != nil || string(got) != string(data) {
		t.Errorf("Bundle of a plain stored bundle: %.40q, %v", got, err)
	}
	var order []string
	err = s.EachBundle(ctx, Filter{}, func(id string, data []byte) error {
		if string(data) != string(saved[id]) {
			t.Errorf("run %s: bytes differ from those saved", id)
		}
		order = append(order, id)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := diff([]string{"r3", "r2", "r1", "r0"}, order); d != "" {
		t.Errorf("EachBundle order, oldest first (-want +got):\n%s", d)
	}
	filtered := 0
	if err := s.EachBundle(ctx, Filter{RubricVersion: "1", Limit: 2}, func(string, []byte) error { filtered++; return nil }); err != nil || filtered != 2 {
		t.Errorf("EachBundle with a limit: %d calls, error %v; want 2", filtered, err)
	}
	if err := s.EachBundle(ctx, Filter{RubricVersion: "2"}, func(id string, _ []byte) error {
		t.Errorf("EachBundle under an unused rubric version returned %s", id)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	n := 0
	err = s.EachBundle(ctx, Filter{}, func(string, []byte) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("EachBundle after fn error: %d calls, error %v; want 1 call and the error", n, err)
	}
}

func TestArtifacts(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	lock := []byte(`{"name":"x","lockfileVersion":3,"packages":{}}`)
	sum := sha256.Sum256(lock)
	digest := hex.EncodeToString(sum[:])
	for range 2 { // idempotent
		if err := s.SaveArtifact(ctx, digest, lock); err != nil {
			t.Fatalf("SaveArtifact: %v", err)
		}
	}
	got, err := s.Artifact(ctx, digest)
	if err != nil || string(got) != string(lock) {
		t.Errorf("Artifact = %q, %v; want the saved bytes", got, err)
	}
	empty := sha256.Sum256(nil)
	if err := s.SaveArtifact(ctx, hex.EncodeToString(empty[:]), nil); err != nil {
		t.Errorf("SaveArtifact(empty): %v", err)
	}
	if got, err := s.Artifact(ctx, hex.EncodeToString(empty[:])); err != nil || got == nil || len(got) != 0 {
		t.Errorf("Artifact(empty) = %v, %v; want an empty, non-nil slice", got, err)
	}

	if err := s.SaveArtifact(ctx, digest, []byte("tampered")); !errors.Is(err, ErrDigestMismatch) {
		t.Errorf("SaveArtifact with a wrong digest: error %v, want ErrDigestMismatch", err)
	}
	if err := s.SaveArtifact(ctx, strings.ToUpper(digest), lock); err == nil {
		t.Error("SaveArtifact accepted an upper-case digest")
	}
	if _, err := s.Artifact(ctx, strings.Repeat("0", 64)); !errors.Is(err, ErrNotFound) {
		t.Errorf("Artifact of an unknown digest: error %v, want ErrNotFound", err)
	}
	if _, err := s.Bundle(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Bundle of an unknown run: error %v, want ErrNotFound", err)
	}
}

// TestConcurrentSaves saves from several goroutines through two Store
// values on the same file, as two processes would; the busy timeout and
// immediate transactions must serialise them without errors.
func TestConcurrentSaves(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	stores := make([]*Store, 2)
	for i := range stores {
		s, err := Open(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores[i] = s
	}
	const n = 40
	inputs := make([]struct {
		data []byte
		b    *evidence.Bundle
		res  rubric.Result
	}, n)
	for i := range inputs {
		inputs[i].data, inputs[i].b, inputs[i].res = run(t, fmt.Sprintf("c%02d", i), day.Add(time.Duration(i)*time.Second))
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range inputs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := inputs[i]
			errs <- stores[i%2].SaveRun(ctx, in.data, in.b, in.res)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent SaveRun: %v", err)
		}
	}
	runs, err := stores[0].Runs(ctx, Filter{})
	if err != nil || len(runs) != n {
		t.Errorf("Runs = %d rows, %v; want %d", len(runs), err, n)
	}
}

// TestDerived: a run made by rescore --recollect is saved as a run of its
// own, naming the run it carries over, which Derived finds.
func TestDerived(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	data, b, res := run(t, "run-1", day)
	if err := s.SaveRun(ctx, data, b, res); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Derived(ctx, "run-1"); err != nil || len(got) != 0 {
		t.Fatalf("Derived before any = %v, %v; want none", got, err)
	}
	for _, id := range []string{"run-1.b", "run-1.a"} {
		_, d, res := run(t, id, day)
		d.Run.Recollected = &evidence.Recollection{From: "run-1", Signals: []string{evidence.SignalJudge}, At: day.Add(time.Hour)}
		dd, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SaveRun(ctx, dd, d, res); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := s.Derived(ctx, "run-1"); err != nil || strings.Join(got, ",") != "run-1.a,run-1.b" {
		t.Errorf("Derived = %v, %v; want run-1.a,run-1.b", got, err)
	}
	if got, err := s.Derived(ctx, "run-1.a"); err != nil || len(got) != 0 {
		t.Errorf("Derived of a derived run = %v, %v; want none", got, err)
	}
}
