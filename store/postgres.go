package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/internal/pg"
)

// ErrInvalidDSN means a Postgres DSN did not parse. The DSN itself is not
// quoted, because it may hold a password.
var ErrInvalidDSN = errors.New("store: the Postgres DSN does not parse (it is not shown because it may hold a password)")

// IsPostgresDSN reports whether OpenDSN opens target as a Postgres
// database rather than as a data directory.
func IsPostgresDSN(target string) bool { return pg.IsDSN(target) }

// OpenDSN opens the store in target: a Postgres database when target is a
// postgres:// or postgresql:// URL, else the SQLite file in the data
// directory target.
func OpenDSN(ctx context.Context, target string) (*Store, error) {
	if IsPostgresDSN(target) {
		return OpenPostgres(ctx, target)
	}
	return Open(ctx, target)
}

// migrateLock is the key of the advisory lock under which processes
// migrate the store's tables, so that workers starting together apply each
// migration once. It differs from the cache's.
const migrateLock int64 = 0x766d63702d72756e // "vmcp-run"

// OpenPostgres opens, creating or migrating its tables as needed, the
// store in the Postgres database that dsn names, as a URL
// (postgres://user:password@host:5432/db?sslmode=disable) or key=value
// pairs. The tables go in the first schema of the search path, which the
// DSN may set (search_path=name). Many processes on many machines may open
// the same database: runs stay immutable (a trigger refuses updates and
// deletes), a run id is saved once, and a result is replaced, never
// duplicated. The password never appears in an error or in Path.
func OpenPostgres(ctx context.Context, dsn string) (*Store, error) {
	db, cfg, err := pg.Open(dsn)
	if err != nil {
		return nil, ErrInvalidDSN
	}
	s := &Store{db: db, path: pg.Location(cfg), pg: true, secret: cfg.Password}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: connect to %s: %w", s.path, s.redact(err))
	}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, s.redact(err)
	}
	return s, nil
}

// pgMigrations are the Postgres forms of migrations, one for one: the same
// tables, columns and guarantees. Version i+1 of both is the same schema.
// The applied version is kept in store_schema, changed in the migration's
// transaction.
var pgMigrations = []string{
	`
CREATE TABLE runs (
	run_id         TEXT COLLATE "C" PRIMARY KEY,
	schema_version TEXT NOT NULL,
	ecosystem      TEXT NOT NULL,
	target_name    TEXT NOT NULL,
	target_version TEXT NOT NULL,
	run_date       BIGINT NOT NULL,
	tool_name      TEXT NOT NULL,
	tool_version   TEXT NOT NULL,
	outcome        TEXT NOT NULL,
	bundle_sha256  TEXT NOT NULL,
	bundle         BYTEA NOT NULL
);
CREATE INDEX runs_by_target ON runs (target_name, target_version, run_date);
CREATE INDEX runs_by_date ON runs (run_date, run_id);
CREATE FUNCTION runs_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'runs are immutable evidence'; END $$;
CREATE TRIGGER runs_no_update BEFORE UPDATE OR DELETE ON runs
	FOR EACH ROW EXECUTE FUNCTION runs_immutable();
CREATE TRIGGER runs_no_truncate BEFORE TRUNCATE ON runs
	FOR EACH STATEMENT EXECUTE FUNCTION runs_immutable();

CREATE TABLE results (
	run_id         TEXT COLLATE "C" NOT NULL REFERENCES runs (run_id),
	rubric_version TEXT COLLATE "C" NOT NULL,
	rubric_hash    TEXT NOT NULL,
	score          DOUBLE PRECISION,
	result         BYTEA NOT NULL,
	PRIMARY KEY (run_id, rubric_version)
);
-- lz4 decompresses bundles and results several times faster than pglz,
-- the default; a server without it (or older than 14) keeps pglz.
DO $$ BEGIN
	ALTER TABLE runs ALTER COLUMN bundle SET COMPRESSION lz4;
	ALTER TABLE results ALTER COLUMN result SET COMPRESSION lz4;
EXCEPTION WHEN OTHERS THEN NULL;
END $$;

CREATE TABLE artifacts (
	sha256 TEXT PRIMARY KEY,
	size   BIGINT NOT NULL,
	data   BYTEA NOT NULL
);
CREATE FUNCTION artifacts_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'artifacts are content-addressed and immutable'; END $$;
CREATE TRIGGER artifacts_no_update BEFORE UPDATE ON artifacts
	FOR EACH ROW EXECUTE FUNCTION artifacts_immutable();
`,
	`
ALTER TABLE runs ADD COLUMN derived_from TEXT COLLATE "C";
CREATE INDEX runs_by_origin ON runs (derived_from) WHERE derived_from IS NOT NULL;
`,
	// 3: runs_by_date has been on (run_date, run_id) from the start here.
	`SELECT 1`,
	// 4: as in SQLite, each result's summary (see Summary); results
	// arrive compressed (see codec.go), and the server compressing them
	// again would spend its time for nothing.
	`
ALTER TABLE results ADD COLUMN summary BYTEA;
ALTER TABLE results ALTER COLUMN result SET STORAGE EXTERNAL;
`,
	// 5: a result still names a stored run, checked once per statement
	// over the rows it wrote rather than by the foreign key, row by row.
	// The key's check locked each run's row (FOR KEY SHARE), which wrote
	// to every runs page a rescoring pass walked, and cost the server
	// more than a tenth of its time in a pass; the lock guarded against a
	// concurrent delete, which the runs triggers already refuse. Each
	// statement's new rows are a transition table (one trigger per event:
	// Postgres allows no more). The check reads the runs table of the
	// store's schema whatever the search path of the session writing, as
	// the key, bound to the table, did. Summaries, compressed when a row
	// is toasted, use lz4 like the rest (pglz showed in the server's
	// profile).
	`
ALTER TABLE results DROP CONSTRAINT IF EXISTS results_run_id_fkey;
CREATE FUNCTION results_name_runs() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE missing TEXT;
BEGIN
	SELECT n.run_id INTO missing FROM new_results n
		WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.run_id = n.run_id) LIMIT 1;
	IF FOUND THEN
		RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation',
			MESSAGE = format('a result names run %s, which is not stored', missing);
	END IF;
	RETURN NULL;
END $$;
DO $$ BEGIN
	EXECUTE format('ALTER FUNCTION results_name_runs() SET search_path = pg_catalog, %I, pg_temp', current_schema());
END $$;
CREATE TRIGGER results_insert_names_run AFTER INSERT ON results
	REFERENCING NEW TABLE AS new_results
	FOR EACH STATEMENT EXECUTE FUNCTION results_name_runs();
CREATE TRIGGER results_update_names_run AFTER UPDATE ON results
	REFERENCING NEW TABLE AS new_results
	FOR EACH STATEMENT EXECUTE FUNCTION results_name_runs();
DO $$ BEGIN
	ALTER TABLE results ALTER COLUMN summary SET COMPRESSION lz4;
EXCEPTION WHEN OTHERS THEN NULL;
END $$;
`,
	// 6: bundles arrive compressed (see codec.go), as results do, and are
	// kept out of line as they are; bundles saved before keep their lz4.
	`ALTER TABLE runs ALTER COLUMN bundle SET STORAGE EXTERNAL;`,
	// 7: as in SQLite, contract pins and each run's identity key. Adding
	// a column with no default rewrites no row and fires no row trigger,
	// so runs_no_update lets it through; runs saved before keep NULL.
	// Pins refuse updates, deletes and truncation, as runs do. Their run
	// is a foreign key: pins are few, and the key's row lock on the run
	// costs nothing a pass would notice.
	`
ALTER TABLE runs ADD COLUMN identity_key TEXT COLLATE "C";
CREATE INDEX runs_by_identity ON runs (identity_key, run_date);

CREATE TABLE pins (
	identity_key TEXT COLLATE "C" NOT NULL,
	seq          INTEGER NOT NULL,
	ecosystem    TEXT NOT NULL,
	target_name  TEXT NOT NULL,
	args         TEXT NOT NULL,
	env_names    TEXT NOT NULL,
	run_id       TEXT COLLATE "C" NOT NULL REFERENCES runs (run_id),
	pinned_by    TEXT NOT NULL,
	pinned_at    BIGINT NOT NULL,
	reason       TEXT NOT NULL,
	PRIMARY KEY (identity_key, seq)
);
CREATE FUNCTION pins_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'pins are append-only history'; END $$;
CREATE TRIGGER pins_no_update BEFORE UPDATE OR DELETE ON pins
	FOR EACH ROW EXECUTE FUNCTION pins_append_only();
CREATE TRIGGER pins_no_truncate BEFORE TRUNCATE ON pins
	FOR EACH STATEMENT EXECUTE FUNCTION pins_append_only();
`,
}

func init() {
	if len(pgMigrations) != len(migrations) {
		panic("store: the SQLite and Postgres migrations differ in number")
	}
}

// migratePostgres applies the missing migrations in one transaction under
// an advisory lock, so that processes starting together apply each once.
func (s *Store) migratePostgres(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(`+strconv.FormatInt(migrateLock, 10)+`)`); err != nil {
		return fmt.Errorf("store: migrate: lock: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS store_schema (version INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	var v int
	switch err := tx.QueryRowContext(ctx, `SELECT version FROM store_schema`).Scan(&v); {
	case err == nil:
	case errors.Is(err, sql.ErrNoRows):
		if _, err := tx.ExecContext(ctx, `INSERT INTO store_schema (version) VALUES (0)`); err != nil {
			return fmt.Errorf("store: migrate: %w", err)
		}
	default:
		return fmt.Errorf("store: read schema version: %w", err)
	}
	if v > len(pgMigrations) {
		return fmt.Errorf("%w: %s has version %d, this program knows %d", ErrSchemaTooNew, s.path, v, len(pgMigrations))
	}
	for ; v < len(pgMigrations); v++ {
		if _, err := tx.ExecContext(ctx, pgMigrations[v]); err != nil {
			return fmt.Errorf("store: migrate to schema version %d: %w", v+1, err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE store_schema SET version = $1`, v+1); err != nil {
			return fmt.Errorf("store: set schema version %d: %w", v+1, err)
		}
	}
	return tx.Commit()
}

// rebound caches statements rebound for Postgres: they are few and
// constant, and rescoring issues some of them thousands of times.
var rebound sync.Map // string -> string

// q returns query for the store's backend: unchanged for SQLite, with each
// "?" placeholder numbered as "$1", "$2", ... for Postgres. The package's
// statements hold no "?" but placeholders.
func (s *Store) q(query string) string {
	if !s.pg {
		return query
	}
	return rebind(query)
}

func rebind(query string) string {
	if v, ok := rebound.Load(query); ok {
		return v.(string)
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(query[i])
	}
	out := b.String()
	rebound.Store(query, out)
	return out
}

// redact masks the store's password in err's message.
func (s *Store) redact(err error) error { return pg.Redact(err, s.secret) }

// SaveRunTx saves a run as SaveRun does, in tx: a transaction on this
// store's Postgres database that the caller commits or rolls back. The
// fleet's worker saves a scan's run in the transaction that completes its
// job, so that the run exists if and only if the job completed.
func (s *Store) SaveRunTx(ctx context.Context, tx pgx.Tx, bundleJSON []byte, b *evidence.Bundle, res any) error {
	if !s.pg {
		return errors.New("store: SaveRunTx needs a Postgres store")
	}
	p, err := prepareRun(bundleJSON, b, res)
	if err != nil {
		return err
	}
	return s.redact(p.save(ctx, pgxExec(tx)))
}

// pgxExec runs statements, written with "?" placeholders, in tx.
func pgxExec(tx pgx.Tx) execFunc {
	return func(ctx context.Context, query string, args ...any) (int64, error) {
		tag, err := tx.Exec(ctx, rebind(query), args...)
		if err != nil {
			return 0, err
		}
		return tag.RowsAffected(), nil
	}
}

// PinFirstTx pins runID as its identity's first baseline when the
// identity has no pin, in tx, the fleet job's transaction in which the
// run was saved (SaveRunTx), so that the pin commits with the run. The
// run must have captured a contract, which the caller knows: it saved
// it. Of workers racing, one inserts the pin and the others, waiting for
// it, insert nothing and get created=false; no error aborts tx.
func (s *Store) PinFirstTx(ctx context.Context, tx pgx.Tx, id Identity, runID string, at time.Time) (pin *Pin, created bool, err error) {
	if !s.pg {
		return nil, false, errors.New("store: PinFirstTx needs a Postgres store")
	}
	key := IdentityKey(id)
	n, err := insertPin(ctx, pgxExec(tx), key, id, 1, runID, FirstScanPinner, "", at)
	if err != nil {
		return nil, false, fmt.Errorf("store: pin %s as the first baseline of %s: %w", runID, key, s.redact(err))
	}
	p, err := scanPin(tx.QueryRow(ctx, rebind(pinColumns+` WHERE p.identity_key = ? ORDER BY p.seq DESC LIMIT 1`), key))
	if err != nil {
		return nil, false, fmt.Errorf("store: pin of %s: %w", key, s.redact(err))
	}
	return &p, n == 1, nil
}
