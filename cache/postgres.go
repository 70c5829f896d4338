package cache

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"

	"github.com/verifymcp/verifymcp/internal/pg"
)

// migrateLock is the key of the advisory lock under which processes create
// the schema, so that several starting at once do not race on
// CREATE TABLE IF NOT EXISTS (which can fail with a duplicate key in
// pg_type when two sessions run it together).
const migrateLock int64 = 0x7665726966796d63 // "verifymc"

var postgresDialect = &dialect{
	name:    "postgres",
	migrate: migratePostgres,
	get:     `SELECT value, stored_at FROM cache_entries WHERE namespace = $1 AND key = $2 AND expires_at > $3`,
	put: `INSERT INTO cache_entries (namespace, key, value, stored_at, expires_at) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (namespace, key) DO UPDATE SET value = EXCLUDED.value, stored_at = EXCLUDED.stored_at, expires_at = EXCLUDED.expires_at`,
	count: `INSERT INTO cache_counters (namespace, hits, misses) VALUES ($1, $2, $3)
		ON CONFLICT (namespace) DO UPDATE SET hits = cache_counters.hits + EXCLUDED.hits, misses = cache_counters.misses + EXCLUDED.misses`,
	stats: `SELECT namespace, COUNT(*), COUNT(*) FILTER (WHERE expires_at <= $1), COALESCE(SUM(octet_length(value)), 0)::BIGINT
		FROM cache_entries GROUP BY namespace`,
	hits:  `SELECT namespace, hits, misses FROM cache_counters`,
	prune: `DELETE FROM cache_entries WHERE expires_at <= $1`,
	wipe:  `DELETE FROM cache_entries`,
}

// OpenPostgres opens (creating the tables if needed) the cache in the
// Postgres database that dsn names, as a URL
// (postgres://user:password@host:5432/db?sslmode=disable) or as key=value
// pairs. The tables go in the first schema of the search path, which the
// DSN may set (search_path=name). The password, from the DSN, PGPASSWORD
// or a password file, never appears in an error or in Location.
func OpenPostgres(ctx context.Context, dsn string) (*Cache, error) {
	db, cfg, err := pg.Open(dsn)
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	return newCache(ctx, db, postgresDialect, pg.Location(cfg), cfg.Password)
}

func migratePostgres(ctx context.Context, db *sql.DB) error {
	// A role that may use but not create the tables (made by a DBA) must
	// still open the cache, and the lock is not needed once they exist.
	var ready bool
	if err := db.QueryRowContext(ctx,
		`SELECT to_regclass('cache_entries') IS NOT NULL AND to_regclass('cache_counters') IS NOT NULL`).Scan(&ready); err != nil {
		return err
	}
	if ready {
		return nil
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, stmt := range []string{
		`SELECT pg_advisory_xact_lock(` + strconv.FormatInt(migrateLock, 10) + `)`,
		`CREATE TABLE IF NOT EXISTS cache_entries (
			namespace  TEXT NOT NULL,
			key        TEXT NOT NULL,
			value      BYTEA NOT NULL,
			stored_at  BIGINT NOT NULL,
			expires_at BIGINT NOT NULL,
			PRIMARY KEY (namespace, key)
		)`,
		`CREATE INDEX IF NOT EXISTS cache_entries_expiry ON cache_entries (expires_at)`,
		`CREATE TABLE IF NOT EXISTS cache_counters (
			namespace TEXT PRIMARY KEY,
			hits      BIGINT NOT NULL DEFAULT 0,
			misses    BIGINT NOT NULL DEFAULT 0
		)`,
	} {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return tx.Commit()
}
