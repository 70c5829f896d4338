//go:build postgres

package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/internal/testpg"
	"github.com/verifymcp/verifymcp/rubric"
)

// newPostgresDSN makes a schema of its own for the test, dropped when it
// ends, and returns the test server's DSN with that schema as its
// search_path.
func newPostgresDSN(tb testing.TB) string {
	tb.Helper()
	return testpg.SchemaDSN(tb, "store_test_")
}

func openPostgresTemp(tb testing.TB) *Store {
	tb.Helper()
	s, err := OpenPostgres(context.Background(), newPostgresDSN(tb))
	if err != nil {
		tb.Fatalf("OpenPostgres: %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// TestPostgres runs the backend-agnostic store and rescoring tests against
// a Postgres store, each in a schema of its own.
func TestPostgres(t *testing.T) {
	orig := newTestStore
	newTestStore = func(t *testing.T) *Store { return openPostgresTemp(t) }
	defer func() { newTestStore = orig }()
	for _, tc := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"SaveRun", TestSaveRun},
		{"SaveRunRejects", TestSaveRunRejects},
		{"SaveRunIsAtomic", TestSaveRunIsAtomic},
		{"SaveResult", TestSaveResult},
		{"Runs", TestRuns},
		{"RunsShipped", TestRunsShipped},
		{"EachBundle", TestEachBundle},
		{"Artifacts", TestArtifacts},
		{"ResumeFind", TestResumeFind},
		{"Derived", TestDerived},
		{"EachRunBaselines", TestEachRunBaselines},
		{"SaveRunIdentityKey", TestSaveRunIdentityKey},
		{"PinFirst", TestPinFirst},
		{"PinRefusesRuns", TestPinRefusesRuns},
		{"AcceptPin", TestAcceptPin},
		{"AcceptPinWithoutPin", TestAcceptPinWithoutPin},
		{"AcceptPinConcurrent", TestAcceptPinConcurrent},
		{"PinsAppendOnly", TestPinsAppendOnly},
		{"LatestRun", TestLatestRun},
	} {
		t.Run(tc.name, tc.fn)
	}
}

// TestPostgresOpen: opening migrates once however many processes start
// together, reopening keeps the data, a newer schema is refused, and the
// password never shows in Path or in an error.
func TestPostgresOpen(t *testing.T) {
	ctx := context.Background()
	dsn := newPostgresDSN(t)
	var wg sync.WaitGroup
	stores := make([]*Store, 4)
	errs := make([]error, len(stores))
	for i := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stores[i], errs[i] = OpenDSN(ctx, dsn)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("concurrent open %d: %v", i, err)
		}
		defer stores[i].Close()
	}
	s := stores[0]
	pu, _ := url.Parse(dsn)
	if pw, ok := pu.User.Password(); !s.Postgres() || !strings.HasPrefix(s.Path(), "postgres://") || ok && strings.Contains(s.Path(), ":"+pw+"@") {
		t.Errorf("Path() = %q, Postgres() = %v: want a location with no password", s.Path(), s.Postgres())
	}
	var version int
	if err := s.db.QueryRowContext(ctx, `SELECT version FROM store_schema`).Scan(&version); err != nil || version != SchemaVersion() {
		t.Errorf("store_schema = %d, %v; want %d", version, err, SchemaVersion())
	}
	var rows int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM store_schema`).Scan(&rows); err != nil || rows != 1 {
		t.Errorf("store_schema has %d rows, %v; want 1", rows, err)
	}
	// Bundles and results arrive compressed: the server keeps them out of
	// line without compressing them again.
	for _, col := range []string{"runs.bundle", "results.result"} {
		table, column, _ := strings.Cut(col, ".")
		var storage string
		if err := s.db.QueryRowContext(ctx, `SELECT attstorage FROM pg_attribute WHERE attrelid = $1::regclass AND attname = $2`,
			table, column).Scan(&storage); err != nil || storage != "e" {
			t.Errorf("%s storage %q, %v; want e (external)", col, storage, err)
		}
	}
	data, b, res := run(t, "run-a", day)
	if err := stores[1].SaveRun(ctx, data, b, res); err != nil {
		t.Fatal(err)
	}
	if got, err := stores[2].Bundle(ctx, "run-a"); err != nil || string(got) != string(data) {
		t.Errorf("Bundle from another connection = %d bytes, %v; want the saved bytes", len(got), err)
	}

	if _, err := s.db.ExecContext(ctx, `UPDATE store_schema SET version = $1`, SchemaVersion()+1); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenPostgres(ctx, dsn); !errors.Is(err, ErrSchemaTooNew) {
		t.Errorf("OpenPostgres of a newer schema: error %v, want ErrSchemaTooNew", err)
	}

	// A wrong password: the error names the server, never the password.
	u, _ := url.Parse(dsn)
	u.User = url.UserPassword(u.User.Username(), "s3cret-Pa55:word")
	_, err := OpenPostgres(ctx, u.String())
	if err == nil {
		t.Fatal("OpenPostgres with a wrong password succeeded")
	}
	if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "Pa55") {
		t.Errorf("error shows the password: %v", err)
	}
	if _, err := OpenDSN(ctx, "postgres://%zz"); !errors.Is(err, ErrInvalidDSN) || strings.Contains(err.Error(), "%zz") {
		t.Errorf("OpenDSN of a malformed DSN: %v, want ErrInvalidDSN without the DSN", err)
	}
}

// TestPostgresConcurrentSaves: processes on many machines save runs and
// results into one database at once; each run is saved once, and a
// second save of a run id is refused whichever connection makes it.
func TestPostgresConcurrentSaves(t *testing.T) {
	ctx := context.Background()
	dsn := newPostgresDSN(t)
	stores := make([]*Store, 3)
	for i := range stores {
		s, err := OpenPostgres(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores[i] = s
	}
	const n = 60
	var wg sync.WaitGroup
	var exists, saved sync.Map
	for i := range 2 * n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("c%02d", i%n) // every id saved twice
			data, b, res := run(t, id, day.Add(time.Duration(i%n)*time.Second))
			switch err := stores[i%3].SaveRun(ctx, data, b, res); {
			case errors.Is(err, ErrRunExists):
				exists.Store(id, true)
			case err != nil:
				t.Errorf("SaveRun %s: %v", id, err)
			default:
				if _, dup := saved.LoadOrStore(id, true); dup {
					t.Errorf("run %s saved twice", id)
				}
			}
		}()
	}
	wg.Wait()
	runs, err := stores[0].Runs(ctx, Filter{})
	if err != nil || len(runs) != n {
		t.Errorf("Runs = %d rows, %v; want %d", len(runs), err, n)
	}
}

// storeAndConn opens a store in a fresh database and a connection of the
// caller's own to it, as the fleet's worker has; both close with the test.
func storeAndConn(t *testing.T) (*Store, *pgx.Conn) {
	t.Helper()
	ctx := context.Background()
	dsn := newPostgresDSN(t)
	s, err := OpenPostgres(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	return s, conn
}

// TestPostgresSaveRunTx: a run saved in a caller's transaction exists if
// and only if the transaction commits, as the fleet's worker needs.
func TestPostgresSaveRunTx(t *testing.T) {
	ctx := context.Background()
	s, conn := storeAndConn(t)

	save := func(id string, commit bool) error {
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		data, b, res := run(t, id, day)
		if err := s.SaveRunTx(ctx, tx, data, b, res); err != nil {
			return err
		}
		if commit {
			return tx.Commit(ctx)
		}
		return nil
	}
	if err := save("rolled-back", false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Bundle(ctx, "rolled-back"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a run saved in a rolled-back transaction: %v, want ErrNotFound", err)
	}
	if err := save("committed", true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Result(ctx, "committed", "1"); err != nil {
		t.Errorf("the committed run's result: %v", err)
	}
	if err := save("committed", true); !errors.Is(err, ErrRunExists) {
		t.Errorf("saving the run again: %v, want ErrRunExists", err)
	}

	sqlite := openTempSQLite(t)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	data, b, res := run(t, "x", day)
	if err := sqlite.SaveRunTx(ctx, tx, data, b, res); err == nil {
		t.Error("SaveRunTx on a SQLite store succeeded")
	}
}

func openTempSQLite(t *testing.T) *Store {
	s, err := Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestPostgresResultsNameRuns: a result must name a stored run, however
// it is written (insert, upsert, update, COPY) and whatever the writing
// session's search path; the statement that breaks this fails whole with
// a foreign-key violation, and a run saved earlier in the same
// transaction counts.
func TestPostgresResultsNameRuns(t *testing.T) {
	ctx := context.Background()
	s := openPostgresTemp(t)
	v5 := rubric.Current()
	data, b, res := run(t, "run-a", day)
	if err := s.SaveRun(ctx, data, b, res); err != nil {
		t.Fatal(err)
	}
	count := func() (n int) {
		if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM results`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := count()
	const ins = `INSERT INTO results (run_id, rubric_version, rubric_hash, score, result) VALUES `
	for _, q := range []string{
		ins + `('run-nope', '9', 'h', 1, '\x00')`,
		ins + `('run-a', '9', 'h', 1, '\x00'), ('run-nope', '9', 'h', 1, '\x00')`,
		ins + `('run-a', '5', 'h', 1, '\x00'), ('run-nope', '5', 'h', 1, '\x00') ON CONFLICT (run_id, rubric_version) DO UPDATE SET score = 2`,
		`UPDATE results SET run_id = 'run-nope'`,
	} {
		_, err := s.db.ExecContext(ctx, q)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "23503" || !strings.Contains(pgErr.Message, "run-nope") {
			t.Errorf("%s: error %v, want a foreign_key_violation naming run-nope", q, err)
		}
	}
	// A session whose search path finds another table named runs, which
	// holds the missing run, writes into the store's results: the check
	// still reads the store's runs.
	conn, err := s.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var schema string
	if err := conn.QueryRowContext(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	decoy := schema + "_decoy"
	t.Cleanup(func() { s.db.ExecContext(context.Background(), `DROP SCHEMA `+decoy+` CASCADE`) })
	for _, q := range []string{
		`CREATE SCHEMA ` + decoy,
		`CREATE TABLE ` + decoy + `.runs (run_id TEXT)`,
		`INSERT INTO ` + decoy + `.runs VALUES ('run-nope')`,
		`SET search_path = ` + decoy,
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	_, err = conn.ExecContext(ctx, `INSERT INTO `+schema+`.results (run_id, rubric_version, rubric_hash, score, result) VALUES ('run-nope', '9', 'h', 1, '\x00')`)
	if pgErr := (*pgconn.PgError)(nil); !errors.As(err, &pgErr) || pgErr.Code != "23503" {
		t.Errorf("a result naming no run of the store, from a session finding another runs table: error %v, want a foreign_key_violation", err)
	}
	if _, err := conn.ExecContext(ctx, `SET search_path = `+schema); err != nil {
		t.Fatal(err)
	}
	score := 1.0
	err = s.SaveResults(ctx, []Result{{RunID: "run-nope", Fresh: true, RubricVersion: "9", RubricHash: v5.Hash, Score: &score, JSON: []byte("{}")}})
	if pgErr := (*pgconn.PgError)(nil); !errors.As(err, &pgErr) || pgErr.Code != "23503" {
		t.Errorf("SaveResults of a result naming no run: error %v, want a foreign_key_violation", err)
	}
	if n := count(); n != before {
		t.Errorf("%d results after the refused writes, want %d", n, before)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO runs SELECT 'run-b', schema_version, ecosystem, target_name, target_version, run_date, tool_name, tool_version, outcome, bundle_sha256, bundle FROM runs WHERE run_id = 'run-a'`); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, ins+`('run-b', '9', 'h', 1, '\x00')`); err != nil {
		t.Errorf("a result for a run saved earlier in its transaction: %v", err)
	}
}

// TestPostgresChunkReadsPerRun: EachRun's chunk query reads each
// run's own results, however many are stored under the version being
// scored. Asked whether each run was scored by an EXISTS, the planner
// hashed every result under that version for each chunk whenever its
// statistics had not seen them yet, as at the start of every pass: a pass
// over n runs read n²/chunk index entries.
func TestPostgresChunkReadsPerRun(t *testing.T) {
	ctx := context.Background()
	s := openPostgresTemp(t)
	const runs, chunk = 400, 10
	for i := range runs {
		data, b, res := run(t, fmt.Sprintf("run-%03d", i), day.Add(time.Duration(i)*time.Minute))
		res.RubricVersion = "4"
		if err := s.SaveRun(ctx, data, b, res); err != nil {
			t.Fatal(err)
		}
	}
	// The statistics see only rubric 4's results; then every run gains
	// one under 5, as a pass under 5 leaves them.
	if _, err := s.db.ExecContext(ctx, `ANALYZE runs, results`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO results (run_id, rubric_version, rubric_hash, score, result, summary)
		SELECT run_id, '5', rubric_hash, score, result, summary FROM results WHERE rubric_version = '4'`); err != nil {
		t.Fatal(err)
	}
	for _, baseline := range []string{"", "4"} {
		args := []any{chunk, "5", "5"}
		if baseline != "" {
			args[2] = baseline
		}
		var plan []byte
		if err := s.db.QueryRowContext(ctx, `EXPLAIN (ANALYZE, FORMAT JSON) `+rebind(chunkQuery(true, "", baseline)), args...).Scan(&plan); err != nil {
			t.Fatal(err)
		}
		var nodes []struct {
			Plan pgPlanNode `json:"Plan"`
		}
		if err := json.Unmarshal(plan, &nodes); err != nil || len(nodes) != 1 {
			t.Fatalf("EXPLAIN: %v", err)
		}
		// Each run has two results: at most both for the baseline and one
		// for whether it is scored.
		if got := nodes[0].Plan.rowsOf("results"); got > 3*chunk {
			t.Errorf("baseline %q: a chunk of %d runs read %.0f rows of results, want at most %d:\n%s", baseline, chunk, got, 3*chunk, plan)
		}
	}
}

// pgPlanNode is a node of EXPLAIN (ANALYZE, FORMAT JSON).
type pgPlanNode struct {
	Relation string       `json:"Relation Name"`
	Rows     float64      `json:"Actual Rows"`
	Loops    float64      `json:"Actual Loops"`
	Plans    []pgPlanNode `json:"Plans"`
}

// rowsOf is how many rows the nodes under n scanning relation returned, in
// all their loops.
func (n pgPlanNode) rowsOf(relation string) float64 {
	var rows float64
	if n.Relation == relation {
		rows = n.Rows * n.Loops
	}
	for _, c := range n.Plans {
		rows += c.rowsOf(relation)
	}
	return rows
}

// openPostgresStores opens n stores on one Postgres database, as n
// processes would.
func openPostgresStores(t *testing.T, dsn string, n int) []*Store {
	t.Helper()
	stores := make([]*Store, n)
	for i := range stores {
		s, err := OpenPostgres(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		stores[i] = s
	}
	return stores
}

// TestPostgresPinSurvivesReopen: pins are in the database, not in the
// process.
func TestPostgresPinSurvivesReopen(t *testing.T) {
	dsn := newPostgresDSN(t)
	testPinSurvivesReopen(t, func() *Store {
		s, err := OpenPostgres(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestPostgresPinFirstConcurrent: processes on several connections race
// to pin an identity first; exactly one creates the pin.
func TestPostgresPinFirstConcurrent(t *testing.T) {
	testPinFirstConcurrent(t, openPostgresStores(t, newPostgresDSN(t), 3))
}

// TestPostgresAcceptPinConcurrent: acceptances racing on several
// connections each take a sequence number of their own.
func TestPostgresAcceptPinConcurrent(t *testing.T) {
	testAcceptPinConcurrent(t, openPostgresStores(t, newPostgresDSN(t), 3))
}

// TestPostgresMigrateToPins: a schema-6 database migrates under the runs
// triggers (adding the identity column writes no row); its runs keep no
// identity key and cannot be pinned.
func TestPostgresMigrateToPins(t *testing.T) {
	ctx := context.Background()
	dsn := newPostgresDSN(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, m := range pgMigrations[:6] {
		if _, err := conn.Exec(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	old := identityRun(t, "run-old", day, nil, nil, evidence.OutcomeOK)
	b := old.b
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`CREATE TABLE store_schema (version INTEGER NOT NULL)`, nil},
		{`INSERT INTO store_schema (version) VALUES (6)`, nil},
		{`INSERT INTO runs (run_id, schema_version, ecosystem, target_name, target_version, run_date,
	tool_name, tool_version, outcome, bundle_sha256, bundle) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
			[]any{b.Run.ID, b.SchemaVersion, b.Target.Ecosystem, b.Target.Name, b.Target.Version, b.Run.Date.UnixNano(),
				b.Run.Tool.Name, b.Run.Tool.Version, string(b.Sandbox.Outcome), "digest", old.data}},
	} {
		if _, err := conn.Exec(ctx, q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}
	s, err := OpenPostgres(ctx, dsn)
	if err != nil {
		t.Fatalf("open a schema-6 database: %v", err)
	}
	defer s.Close()
	var version int
	if err := s.db.QueryRowContext(ctx, `SELECT version FROM store_schema`).Scan(&version); err != nil || version != SchemaVersion() {
		t.Fatalf("store_schema = %d, %v; want %d", version, err, SchemaVersion())
	}
	testPinsAfterMigration(t, s)
}

// TestPostgresPinFirstTx: the fleet pins a first scan in the job's
// transaction, beside its run: both exist if and only if it commits, and
// a second worker's first scan of the identity pins nothing.
func TestPostgresPinFirstTx(t *testing.T) {
	ctx := context.Background()
	s, conn := storeAndConn(t)
	saveAndPin := func(id string, commit bool) (*Pin, bool) {
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		data, b, res := run(t, id, day)
		if err := s.SaveRunTx(ctx, tx, data, b, res); err != nil {
			t.Fatal(err)
		}
		pin, created, err := s.PinFirstTx(ctx, tx, IdentityOf(b.Target), id, day)
		if err != nil {
			t.Fatal(err)
		}
		if commit {
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
		}
		return pin, created
	}
	_, b, _ := run(t, "probe", day)
	key := IdentityKey(IdentityOf(b.Target))
	if _, created := saveAndPin("rolled-back", false); !created {
		t.Error("the first pin in a transaction was not created")
	}
	if _, err := s.CurrentPin(ctx, key); !errors.Is(err, ErrNotFound) {
		t.Errorf("a pin made in a rolled-back transaction: %v, want ErrNotFound", err)
	}
	if pin, created := saveAndPin("first", true); !created || pin.RunID != "first" || pin.PinnedBy != FirstScanPinner {
		t.Errorf("first committed pin = %+v, created %v", pin, created)
	}
	if pin, created := saveAndPin("second", true); created || pin.RunID != "first" {
		t.Errorf("second first scan: pin %+v, created %v; want the first run's pin, not created", pin, created)
	}
	if p, err := s.CurrentPin(ctx, key); err != nil || p.RunID != "first" {
		t.Errorf("CurrentPin = %+v, %v; want run first", p, err)
	}
}
