// Package store keeps run records: each run's evidence bundle, exactly as
// it was written and never changed afterwards; the result of scoring it
// under each rubric version; content-addressed artefacts such as
// lockfiles; and each server identity's contract pins (pins.go). One
// machine keeps them in a SQLite file (the pure-Go modernc.org/sqlite
// driver, so no cgo and no server); a fleet of machines shares one
// Postgres database (OpenPostgres). Both backends have the same tables,
// the same behaviour and the same tests.
package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/internal/sqliteopen"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// walAutocheckpoint is the write-ahead log's checkpoint interval in pages.
const walAutocheckpoint = 100

// FileName is the database file inside the data directory.
const FileName = "verifymcp.db"

var (
	// ErrNotFound is returned when a run, result or artefact is not stored.
	ErrNotFound = errors.New("store: not found")
	// ErrRunExists is returned by SaveRun for a run id already saved:
	// evidence is immutable, so a run is saved once.
	ErrRunExists = errors.New("store: run already saved")
	// ErrDigestMismatch is returned by SaveArtifact when the data does not
	// hash to the given digest.
	ErrDigestMismatch = errors.New("store: artifact digest mismatch")
	// ErrSchemaTooNew is returned by Open for a database written by a newer
	// program, whose schema this one does not know.
	ErrSchemaTooNew = errors.New("store: database schema is newer than this program")
)

// Store is an open run store. It is safe for concurrent use.
type Store struct {
	db   *sql.DB
	path string // the SQLite file, or the Postgres location without a password
	// pg is set for a Postgres store: statements are written with "?"
	// placeholders and rebound to "$n" (see Store.q).
	pg     bool
	secret string // a password to keep out of error messages, if any
}

// DefaultDir returns the data directory: $VERIFYMCP_DATA_DIR, else
// $XDG_DATA_HOME/verifymcp, else $HOME/.local/share/verifymcp. A relative
// XDG_DATA_HOME is ignored, as the XDG base directory specification asks.
func DefaultDir() (string, error) {
	if d := os.Getenv("VERIFYMCP_DATA_DIR"); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "verifymcp"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("store: find data directory: %w", err)
	}
	return filepath.Join(home, ".local", "share", "verifymcp"), nil
}

// Open creates dir (mode 0700) if needed, opens or creates the database in
// it, and migrates its schema to the current version.
func Open(ctx context.Context, dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("store: open: empty data directory")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("store: create data directory: %w", err)
	}
	path := filepath.Join(dir, FileName)
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	// A file: URI, so that any character in the path is escaped rather than
	// read as the start of the parameters. WAL lets readers run beside the
	// writer; the busy timeout makes concurrent writers wait instead of
	// failing; immediate transactions take the write lock up front, so two
	// writers never deadlock upgrading a read lock. Bundles and results
	// are blobs of ten kilobytes and more: 64 KiB pages (set when the file
	// is created; a store created with smaller pages keeps them) hold
	// several, which makes inserting a result three times cheaper than
	// with 16 KiB pages, where each took a page of its own. Checkpointing
	// every 100 pages keeps the write-ahead log small.
	//
	// Nothing is memory-mapped (mmap_size 0, SQLite's own default, set
	// here so that a build with another default cannot map): every page a
	// connection reads through a mapping stays in the process's resident
	// set until the mapping is dropped, so a rescoring pass, which reads
	// every page of the file, grew with the store (a dry pass over 100,000
	// runs peaked at 1.2 GiB with a 1 GiB mapping, 1 GiB of it the mapped
	// file). Pages are read into each connection's page cache instead,
	// bounded by its cache_size; with the bundles and results compressed
	// (codec.go) the mapping saved nothing measurable
	// (TestEachRunMapsNothing, docs/rescoring.md).
	dsn := "file:" + (&url.URL{Path: abs}).EscapedPath() +
		"?_busy_timeout=10000&_journal_mode=WAL&_synchronous=NORMAL&_foreign_keys=1&_txlock=immediate" +
		"&_pragma=page_size(65536)&_pragma=mmap_size(0)&_pragma=wal_autocheckpoint(" + strconv.Itoa(walAutocheckpoint) + ")"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	s := &Store{db: db, path: path}
	if err := sqliteopen.Ping(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Path returns the database file's path, or for Postgres its location as
// a URL with no password.
func (s *Store) Path() string { return s.path }

// Postgres reports whether the store is in Postgres.
func (s *Store) Postgres() bool { return s.pg }

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// migrations are the schema versions in order; migrations[i] takes the
// schema from version i to i+1. The applied version is kept in SQLite's
// user_version, changed in the same transaction as the migration. Never edit
// a released migration: append a new one.
var migrations = []string{
	`
CREATE TABLE runs (
	run_id         TEXT PRIMARY KEY,
	schema_version TEXT NOT NULL,  -- evidence.SchemaVersion of the bundle
	ecosystem      TEXT NOT NULL,
	target_name    TEXT NOT NULL,
	target_version TEXT NOT NULL,
	run_date       INTEGER NOT NULL, -- Unix nanoseconds, so that it sorts
	tool_name      TEXT NOT NULL,
	tool_version   TEXT NOT NULL,
	outcome        TEXT NOT NULL,
	bundle_sha256  TEXT NOT NULL,
	bundle         BLOB NOT NULL   -- the bundle JSON exactly as given
) STRICT;
CREATE INDEX runs_by_target ON runs (target_name, target_version, run_date);
CREATE INDEX runs_by_date ON runs (run_date);
CREATE TRIGGER runs_no_update BEFORE UPDATE ON runs
	BEGIN SELECT RAISE(ABORT, 'runs are immutable evidence'); END;
CREATE TRIGGER runs_no_delete BEFORE DELETE ON runs
	BEGIN SELECT RAISE(ABORT, 'runs are immutable evidence'); END;

CREATE TABLE results (
	run_id         TEXT NOT NULL REFERENCES runs (run_id),
	rubric_version TEXT NOT NULL,
	rubric_hash    TEXT NOT NULL,
	score          REAL,            -- NULL when every dimension was dropped
	result         BLOB NOT NULL,   -- rubric.Result as JSON
	PRIMARY KEY (run_id, rubric_version)
) STRICT;

CREATE TABLE artifacts (
	sha256 TEXT PRIMARY KEY,
	size   INTEGER NOT NULL,
	data   BLOB NOT NULL
) STRICT;
CREATE TRIGGER artifacts_no_update BEFORE UPDATE ON artifacts
	BEGIN SELECT RAISE(ABORT, 'artifacts are content-addressed and immutable'); END;
`,
	// 2: runs made by rescore --recollect name the run they carry over.
	`
ALTER TABLE runs ADD COLUMN derived_from TEXT;
CREATE INDEX runs_by_origin ON runs (derived_from) WHERE derived_from IS NOT NULL;
`,
	// 3: the rescoring reader walks runs in (run_date, run_id) order; with
	// run_date alone indexed, SQLite sorted every row, bundle and baseline
	// included, on run_id.
	`
CREATE INDEX runs_by_date_id ON runs (run_date, run_id);
DROP INDEX runs_by_date;
`,
	// 4: each result's summary (see Summary), what rescoring compares a
	// new result with, so that it need not read and decode the result;
	// NULL for results saved before.
	`ALTER TABLE results ADD COLUMN summary BLOB;`,
	// 5: on Postgres, the foreign key from results to runs became a check
	// per statement (see pgMigrations); SQLite keeps its key.
	`SELECT 1`,
	// 6: bundles are saved compressed (see codec.go); nothing changes in
	// the tables, but a program of schema 5 could not read them, so the
	// version moves and such a program refuses the store.
	`SELECT 1`,
	// 7: contract pins (see pins.go): each server identity's baselines,
	// append-only history, and each run's identity key, which SaveRun
	// fills from the bundle's target. Runs saved before keep NULL (the
	// runs are immutable, and adding a column writes no row): pins and
	// LatestRun see only runs saved from this version on.
	`
ALTER TABLE runs ADD COLUMN identity_key TEXT;
CREATE INDEX runs_by_identity ON runs (identity_key, run_date);

CREATE TABLE pins (
	identity_key TEXT NOT NULL,     -- IdentityKey of the identity
	seq          INTEGER NOT NULL,  -- 1 for the first pin, then 2, 3, ...
	ecosystem    TEXT NOT NULL,
	target_name  TEXT NOT NULL,
	args         TEXT NOT NULL,     -- JSON array, in order
	env_names    TEXT NOT NULL,     -- JSON array, sorted, no duplicates
	run_id       TEXT NOT NULL REFERENCES runs (run_id),
	pinned_by    TEXT NOT NULL,
	pinned_at    INTEGER NOT NULL,  -- Unix nanoseconds
	reason       TEXT NOT NULL,
	PRIMARY KEY (identity_key, seq)
) STRICT;
CREATE TRIGGER pins_no_update BEFORE UPDATE ON pins
	BEGIN SELECT RAISE(ABORT, 'pins are append-only history'); END;
CREATE TRIGGER pins_no_delete BEFORE DELETE ON pins
	BEGIN SELECT RAISE(ABORT, 'pins are append-only history'); END;
`,
}

// SchemaVersion is the database schema version this program writes.
func SchemaVersion() int { return len(migrations) }

func (s *Store) migrate(ctx context.Context) error {
	if s.pg {
		return s.migratePostgres(ctx)
	}
	for {
		done, err := s.migrateOne(ctx)
		if err != nil {
			return err
		}
		if done {
			return nil
		}
	}
}

// migrateOne applies the next migration, if any, in its own transaction,
// re-reading the version under the write lock so that two processes
// opening the same file do not both apply it.
func (s *Store) migrateOne(ctx context.Context) (done bool, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("store: migrate: %w", err)
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return false, fmt.Errorf("store: read schema version: %w", err)
	}
	switch {
	case v > len(migrations):
		return false, fmt.Errorf("%w: %s has version %d, this program knows %d", ErrSchemaTooNew, s.path, v, len(migrations))
	case v == len(migrations):
		return true, nil
	}
	if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
		return false, fmt.Errorf("store: migrate to schema version %d: %w", v+1, err)
	}
	// PRAGMA takes no bound parameters; v+1 is an int from this program.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v+1)); err != nil {
		return false, fmt.Errorf("store: set schema version %d: %w", v+1, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("store: commit schema version %d: %w", v+1, err)
	}
	return false, nil
}

// identity is the part of a bundle SaveRun checks against the decoded
// bundle it is given, so that bytes and metadata cannot come from
// different runs.
type identity struct {
	SchemaVersion string `json:"schema_version"`
	Run           struct {
		ID   string    `json:"id"`
		Date time.Time `json:"date"`
	} `json:"run"`
	Target struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"target"`
}

// SaveRun stores a run: the bundle bytes exactly as given, which are
// immutable from then on, and the result of scoring them, res (a
// rubric.Result), saved as json.Marshal writes it (see NewResult). b must
// be the decoded form of bundleJSON; its identity is checked against the
// bytes. Saving a run id a second time returns ErrRunExists and changes
// nothing. Both rows are written in one transaction.
func (s *Store) SaveRun(ctx context.Context, bundleJSON []byte, b *evidence.Bundle, res any) error {
	p, err := prepareRun(bundleJSON, b, res)
	if err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: save run %s: %w", b.Run.ID, s.redact(err))
	}
	defer tx.Rollback()
	if err := p.save(ctx, s.sqlExec(tx)); err != nil {
		return s.redact(err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: save run %s: commit: %w", b.Run.ID, s.redact(err))
	}
	return nil
}

// preparedRun is a run checked and encoded for saving.
type preparedRun struct {
	runID   string
	runArgs []any
	res     Result
}

func prepareRun(bundleJSON []byte, b *evidence.Bundle, res any) (*preparedRun, error) {
	if b == nil {
		return nil, errors.New("store: save run: nil bundle")
	}
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("store: save run %s: %w", b.Run.ID, err)
	}
	r, err := resultOf(b.Run.ID, res)
	if err != nil {
		return nil, fmt.Errorf("store: save run %s: %w", b.Run.ID, err)
	}
	var id identity
	if err := json.Unmarshal(bundleJSON, &id); err != nil {
		return nil, fmt.Errorf("store: save run %s: bundle bytes: %w", b.Run.ID, err)
	}
	if id.SchemaVersion != b.SchemaVersion || id.Run.ID != b.Run.ID || !id.Run.Date.Equal(b.Run.Date) ||
		id.Target.Name != b.Target.Name || id.Target.Version != b.Target.Version {
		return nil, fmt.Errorf("store: save run %s: the bundle bytes are of run %s (%s@%s), not of the bundle given",
			b.Run.ID, id.Run.ID, id.Target.Name, id.Target.Version)
	}
	sum := sha256.Sum256(bundleJSON)
	var from any // NULL for a run that carries over no other
	if b.Run.Recollected != nil {
		from = b.Run.Recollected.From
	}
	return &preparedRun{
		runID: b.Run.ID,
		runArgs: []any{b.Run.ID, b.SchemaVersion, b.Target.Ecosystem, b.Target.Name, b.Target.Version, b.Run.Date.UnixNano(),
			b.Run.Tool.Name, b.Run.Tool.Version, string(b.Sandbox.Outcome), hex.EncodeToString(sum[:]), compressJSON(bundleJSON), from,
			IdentityKey(IdentityOf(b.Target))},
		res: r,
	}, nil
}

// execFunc runs one statement, written with "?" placeholders, in a
// transaction and returns the number of rows it affected.
type execFunc func(ctx context.Context, query string, args ...any) (int64, error)

// sqlExec runs statements in a database/sql transaction of the store.
func (s *Store) sqlExec(tx *sql.Tx) execFunc {
	return func(ctx context.Context, query string, args ...any) (int64, error) {
		r, err := tx.ExecContext(ctx, s.q(query), args...)
		if err != nil {
			return 0, err
		}
		return r.RowsAffected()
	}
}

func (p *preparedRun) save(ctx context.Context, exec execFunc) error {
	n, err := exec(ctx, `
INSERT INTO runs (run_id, schema_version, ecosystem, target_name, target_version, run_date,
	tool_name, tool_version, outcome, bundle_sha256, bundle, derived_from, identity_key)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (run_id) DO NOTHING`, p.runArgs...)
	if err != nil {
		return fmt.Errorf("store: save run %s: %w", p.runID, err)
	}
	if n == 0 {
		return fmt.Errorf("%w: %s", ErrRunExists, p.runID)
	}
	if err := insertResult(ctx, exec, &p.res); err != nil {
		return fmt.Errorf("store: save run %s: %w", p.runID, err)
	}
	return nil
}

// Bundle returns the bundle bytes of a run, exactly as saved (stored
// compressed, see codec.go).
func (s *Store) Bundle(ctx context.Context, runID string) ([]byte, error) {
	var data []byte
	err := s.db.QueryRowContext(ctx, s.q(`SELECT bundle FROM runs WHERE run_id = ?`), runID).Scan(&data)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("store: bundle of run %s: %w", runID, ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("store: bundle of run %s: %w", runID, err)
	}
	j, err := storedJSON(data)
	if err != nil {
		return nil, fmt.Errorf("store: bundle of run %s: %w", runID, err)
	}
	return j, nil
}

// Result returns the JSON of the stored result of a run under a rubric
// version, exactly as saved.
func (s *Store) Result(ctx context.Context, runID, rubricVersion string) (json.RawMessage, error) {
	var data []byte
	err := s.db.QueryRowContext(ctx, s.q(`SELECT result FROM results WHERE run_id = ? AND rubric_version = ?`),
		runID, rubricVersion).Scan(&data)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("store: result of run %s under rubric %s: %w", runID, rubricVersion, ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("store: result of run %s under rubric %s: %w", runID, rubricVersion, err)
	}
	j, err := storedJSON(data)
	if err != nil {
		return nil, fmt.Errorf("store: result of run %s under rubric %s: %w", runID, rubricVersion, err)
	}
	return j, nil
}

// EachBundle streams the stored bundles matching f (Filter.RubricVersion
// and Limit apply as in Runs), oldest first, calling fn with each run id
// and its bundle bytes. The bytes are valid only until fn returns: copy
// them to keep them. EachBundle stops at the first error fn returns and
// returns it. It reads a large store in one query without holding it in
// memory; a rescoring pass reads with EachRun, which also gives each
// run's baseline.
func (s *Store) EachBundle(ctx context.Context, f Filter, fn func(runID string, bundle []byte) error) error {
	if err := f.columnsOnly("read bundles"); err != nil {
		return err
	}
	where, args := f.where(false)
	q := `SELECT r.run_id, r.bundle FROM runs r` + where + ` ORDER BY r.run_date, r.run_id` + f.limit()
	rows, err := s.db.QueryContext(ctx, s.q(q), args...)
	if err != nil {
		return fmt.Errorf("store: read bundles: %w", err)
	}
	defer rows.Close()
	var jb jsonBuffer
	for rows.Next() {
		var id string
		// RawBytes saves a copy of every bundle, and the bundles are
		// decompressed into one buffer: it is why the bytes are only lent
		// to fn.
		var data sql.RawBytes
		if err := rows.Scan(&id, &data); err != nil {
			return fmt.Errorf("store: read bundles: %w", err)
		}
		j, err := jb.json(data)
		if err != nil {
			return fmt.Errorf("store: read bundle of run %s: %w", id, err)
		}
		if err := fn(id, j); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: read bundles: %w", err)
	}
	return nil
}

// Filter selects runs. Zero fields select everything.
type Filter struct {
	Ecosystem string
	Name      string // exact target name
	Version   string // exact target version
	// RubricVersion keeps only runs with a result under that version.
	RubricVersion string
	// Since and Until bound the run date: Since <= date < Until.
	Since, Until time.Time
	Limit        int // 0 means no limit
	// Digest and Reference select a release that ran as shipped (an
	// image, a bundle) by what its bundle records, not by a column: Digest
	// is its content digest ("sha256:..."), the target's integrity or the
	// digest preparing it found (evidence.Shipped.Digest), so that an
	// image scanned by tag is found by the digest it resolved to;
	// Reference is evidence.Shipped.Reference exactly as recorded (a
	// bundle's file or URL). Only Runs reads them: the other readers
	// refuse a filter that sets them.
	Digest, Reference string
}

// inBundle reports whether f selects by what only the bundle records.
func (f Filter) inBundle() bool { return f.Digest != "" || f.Reference != "" }

// columnsOnly is the error of a reader that selects by columns alone
// given a filter that selects by the bundle too.
func (f Filter) columnsOnly(op string) error {
	if f.inBundle() {
		return fmt.Errorf("store: %s: a filter by digest or reference is read by Runs only", op)
	}
	return nil
}

// releaseRecord is the part of a bundle Filter.Digest and
// Filter.Reference compare.
type releaseRecord struct {
	Target struct {
		Integrity string `json:"integrity"`
	} `json:"target"`
	Shipped *struct {
		Digest    string `json:"digest"`
		Reference string `json:"reference"`
	} `json:"shipped"`
}

// matchesBundle reports whether a stored bundle (its stored form) is of
// the release f's Digest and Reference name; a bundle that cannot be read
// is not.
func (f Filter) matchesBundle(stored []byte) bool {
	j, err := storedJSON(stored)
	if err != nil {
		return false
	}
	var rec releaseRecord
	if json.Unmarshal(j, &rec) != nil {
		return false
	}
	sh := rec.Shipped
	if f.Reference != "" && (sh == nil || sh.Reference != f.Reference) {
		return false
	}
	if f.Digest != "" && rec.Target.Integrity != f.Digest && (sh == nil || sh.Digest != f.Digest) {
		return false
	}
	return true
}

// where returns the WHERE clause over runs r selecting f. joined says the
// query already joins results as res, so the rubric version is matched on
// the joined row rather than by a subquery.
func (f Filter) where(joined bool) (string, []any) {
	var conds []string
	var args []any
	add := func(cond string, arg any) {
		conds = append(conds, cond)
		args = append(args, arg)
	}
	if f.Ecosystem != "" {
		add("r.ecosystem = ?", f.Ecosystem)
	}
	if f.Name != "" {
		add("r.target_name = ?", f.Name)
	}
	if f.Version != "" {
		add("r.target_version = ?", f.Version)
	}
	if !f.Since.IsZero() {
		add("r.run_date >= ?", f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		add("r.run_date < ?", f.Until.UnixNano())
	}
	switch {
	case f.RubricVersion != "" && joined:
		add("res.rubric_version = ?", f.RubricVersion)
	case f.RubricVersion != "":
		add("EXISTS (SELECT 1 FROM results x WHERE x.run_id = r.run_id AND x.rubric_version = ?)", f.RubricVersion)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

func (f Filter) limit() string {
	if f.Limit > 0 {
		return fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	return ""
}

// RunSummary is one row of Runs: a run and one of its results.
type RunSummary struct {
	RunID       string
	Ecosystem   string
	Name        string
	Version     string
	Date        time.Time // UTC
	ToolVersion string
	Outcome     evidence.Outcome
	// RubricVersion and RubricHash are empty for a run with no result.
	RubricVersion string
	RubricHash    string
	Score         *float64 // nil when every dimension was dropped
}

// Runs lists runs matching f, newest first, one row per run and rubric
// version it was scored under.
//
// A filter by Digest or Reference reads the bundle of each run the
// columns select, and applies Limit to the runs that match.
func (s *Store) Runs(ctx context.Context, f Filter) ([]RunSummary, error) {
	where, args := f.where(true)
	bundle, limit := "", f.limit()
	if f.inBundle() {
		bundle, limit = ", r.bundle", ""
	}
	q := `
SELECT r.run_id, r.ecosystem, r.target_name, r.target_version, r.run_date, r.tool_version, r.outcome,
	COALESCE(res.rubric_version, ''), COALESCE(res.rubric_hash, ''), res.score` + bundle + `
FROM runs r LEFT JOIN results res ON res.run_id = r.run_id` + where + `
ORDER BY r.run_date DESC, r.run_id, res.rubric_version` + limit
	rows, err := s.db.QueryContext(ctx, s.q(q), args...)
	if err != nil {
		return nil, fmt.Errorf("store: list runs: %w", err)
	}
	defer rows.Close()
	out := []RunSummary{}
	matched := map[string]bool{} // by run id: a run has a row per result
	for rows.Next() {
		var rs RunSummary
		var date int64
		var outcome string
		var score sql.NullFloat64
		var stored sql.RawBytes
		dest := []any{&rs.RunID, &rs.Ecosystem, &rs.Name, &rs.Version, &date, &rs.ToolVersion, &outcome,
			&rs.RubricVersion, &rs.RubricHash, &score}
		if bundle != "" {
			dest = append(dest, &stored)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("store: list runs: %w", err)
		}
		if bundle != "" {
			m, ok := matched[rs.RunID]
			if !ok {
				m = f.matchesBundle(stored)
				matched[rs.RunID] = m
			}
			if !m {
				continue
			}
			if f.Limit > 0 && len(out) == f.Limit {
				break
			}
		}
		rs.Date = time.Unix(0, date).UTC()
		rs.Outcome = evidence.Outcome(outcome)
		if score.Valid {
			v := score.Float64
			rs.Score = &v
		}
		out = append(out, rs)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list runs: %w", err)
	}
	return out, nil
}

// SaveArtifact stores data under its SHA-256, given in lower-case hex. The
// digest is verified; saving the same artefact again is a no-op.
func (s *Store) SaveArtifact(ctx context.Context, sha256hex string, data []byte) error {
	if !isDigest(sha256hex) {
		return fmt.Errorf("store: save artifact: %q is not a lower-case hex SHA-256", sha256hex)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != sha256hex {
		return fmt.Errorf("%w: named %s, data hashes to %s", ErrDigestMismatch, sha256hex, got)
	}
	if data == nil {
		data = []byte{} // NOT NULL: an empty artefact is still an artefact
	}
	_, err := s.db.ExecContext(ctx, s.q(
		`INSERT INTO artifacts (sha256, size, data) VALUES (?, ?, ?) ON CONFLICT (sha256) DO NOTHING`),
		sha256hex, len(data), data)
	if err != nil {
		return fmt.Errorf("store: save artifact %s: %w", sha256hex, err)
	}
	return nil
}

// Derived returns the ids of the runs made from runID by rescore
// --recollect (see evidence.Recollection), oldest first.
func (s *Store) Derived(ctx context.Context, runID string) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT run_id FROM runs WHERE derived_from = ? ORDER BY run_date, run_id`), runID)
	if err != nil {
		return nil, fmt.Errorf("store: runs derived from %s: %w", runID, s.redact(err))
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: runs derived from %s: %w", runID, s.redact(err))
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// Artifact returns the artefact stored under a SHA-256.
func (s *Store) Artifact(ctx context.Context, sha256hex string) ([]byte, error) {
	var data []byte
	err := s.db.QueryRowContext(ctx, s.q(`SELECT data FROM artifacts WHERE sha256 = ?`), sha256hex).Scan(&data)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("store: artifact %s: %w", sha256hex, ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("store: artifact %s: %w", sha256hex, err)
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}

func isDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
