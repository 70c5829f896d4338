// Package cache is the content-addressed store of answers that cost a
// call: third-party signals (OSV, Socket, GitHub) now, judge verdicts next.
// Entries are keyed by (namespace, key), where the key is a hash of
// everything that determines the answer, and expire after a time to live.
// The cache stores bytes and never interprets them.
//
// One Cache type serves two backends with the same behaviour: SQLite (pure
// Go, the same database file as the run store) is the default for one
// machine, and Postgres is for a deployment where many machines share one
// cache. Open opens the SQLite file in a data directory, OpenPostgres opens
// a Postgres database, and OpenDSN picks one from its argument.
package cache

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/verifymcp/verifymcp/internal/pg"
	"github.com/verifymcp/verifymcp/internal/sqliteopen"
	_ "modernc.org/sqlite"
)

// FileName is the database file in the data directory, shared with the
// run store.
const FileName = "verifymcp.db"

// Cache is a TTL cache in SQLite or Postgres. It is safe for concurrent
// use, by goroutines and by processes sharing the database.
//
// Times (stored_at, expires_at) come from the clock of the process that
// reads or writes, so the machines sharing a Postgres cache should keep
// their clocks in step; a skew of seconds matters nothing against TTLs of
// hours.
type Cache struct {
	db       *sql.DB
	q        *dialect
	location string // where the database is, with no password
	secret   string // a password to keep out of error messages, if any
	now      func() time.Time

	mu       sync.Mutex
	counters map[string]*counter // per namespace, flushed on Close and Stats
}

type counter struct{ hits, misses int64 }

// dialect holds the statements of one backend. Each statement takes the
// same arguments in the same order on every backend; only the SQL differs.
type dialect struct {
	name    string
	migrate func(ctx context.Context, db *sql.DB) error
	get     string // namespace, key, now -> value, stored_at
	put     string // namespace, key, value, stored_at, expires_at
	count   string // namespace, hits, misses (added to the stored counts)
	stats   string // now -> namespace, entries, expired, bytes
	hits    string // -> namespace, hits, misses
	prune   string // now
	wipe    string
}

var sqliteDialect = &dialect{
	name:    "sqlite",
	migrate: migrateSQLite,
	get:     `SELECT value, stored_at FROM cache_entries WHERE namespace = ? AND key = ? AND expires_at > ?`,
	put: `INSERT INTO cache_entries (namespace, key, value, stored_at, expires_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, stored_at = excluded.stored_at, expires_at = excluded.expires_at`,
	count: `INSERT INTO cache_counters (namespace, hits, misses) VALUES (?, ?, ?)
		ON CONFLICT (namespace) DO UPDATE SET hits = cache_counters.hits + excluded.hits, misses = cache_counters.misses + excluded.misses`,
	stats: `SELECT namespace, COUNT(*), COALESCE(SUM(expires_at <= ?), 0), COALESCE(SUM(LENGTH(value)), 0) FROM cache_entries GROUP BY namespace`,
	hits:  `SELECT namespace, hits, misses FROM cache_counters`,
	prune: `DELETE FROM cache_entries WHERE expires_at <= ?`,
	wipe:  `DELETE FROM cache_entries`,
}

// Open opens (creating if needed) the cache in dir's SQLite database file.
func Open(ctx context.Context, dir string) (*Cache, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	path := filepath.Join(dir, FileName)
	// The page size matches the run store's, which shares the file, when
	// the cache creates it.
	dsn := "file:" + path + "?_busy_timeout=10000&_journal_mode=WAL&_synchronous=NORMAL&_pragma=page_size(65536)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("cache: open: %w", err)
	}
	db.SetMaxOpenConns(4)
	return newCache(ctx, db, sqliteDialect, path, "")
}

// OpenDSN opens the cache that target names: a postgres:// or
// postgresql:// URL opens that Postgres database (see OpenPostgres), and
// anything else is a data directory whose SQLite file is opened (see Open).
func OpenDSN(ctx context.Context, target string) (*Cache, error) {
	if pg.IsDSN(target) {
		return OpenPostgres(ctx, target)
	}
	return Open(ctx, target)
}

func migrateSQLite(ctx context.Context, db *sql.DB) error {
	for _, stmt := range []string{
		`CREATE TABLE IF NOT EXISTS cache_entries (
			namespace  TEXT NOT NULL,
			key        TEXT NOT NULL,
			value      BLOB NOT NULL,
			stored_at  INTEGER NOT NULL,
			expires_at INTEGER NOT NULL,
			PRIMARY KEY (namespace, key)
		)`,
		`CREATE INDEX IF NOT EXISTS cache_entries_expiry ON cache_entries (expires_at)`,
		`CREATE TABLE IF NOT EXISTS cache_counters (
			namespace TEXT PRIMARY KEY,
			hits      INTEGER NOT NULL DEFAULT 0,
			misses    INTEGER NOT NULL DEFAULT 0
		)`,
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}

func newCache(ctx context.Context, db *sql.DB, q *dialect, location, secret string) (*Cache, error) {
	c := &Cache{db: db, q: q, location: location, secret: secret, now: time.Now, counters: map[string]*counter{}}
	if err := sqliteopen.Ping(ctx, db); err != nil {
		db.Close()
		return nil, c.errorf("cache: open %s: %w", location, err)
	}
	if err := q.migrate(ctx, db); err != nil {
		db.Close()
		return nil, c.errorf("cache: migrate %s: %w", location, err)
	}
	return c, nil
}

// Backend names the database behind the cache: "sqlite" or "postgres".
func (c *Cache) Backend() string { return c.q.name }

// Location says where the database is: the SQLite file's path, or the
// Postgres URL without its password. It is safe to log.
func (c *Cache) Location() string { return c.location }

// Close flushes the hit and miss counters and closes the database.
func (c *Cache) Close() error {
	err := c.flush(context.Background())
	return errors.Join(err, c.db.Close())
}

// Get returns the value stored under (namespace, key) and when it was
// stored, if present and not expired.
func (c *Cache) Get(ctx context.Context, namespace, key string) ([]byte, time.Time, bool, error) {
	var value []byte
	var stored int64
	err := c.db.QueryRowContext(ctx, c.q.get, namespace, key, c.now().UnixMilli()).Scan(&value, &stored)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		c.count(namespace, false)
		return nil, time.Time{}, false, nil
	case err != nil:
		return nil, time.Time{}, false, c.errorf("cache get %s: %w", namespace, err)
	}
	if value == nil {
		value = []byte{}
	}
	c.count(namespace, true)
	return value, time.UnixMilli(stored).UTC(), true, nil
}

// Put stores value under (namespace, key) for ttl, replacing any entry. A
// ttl of zero or less stores nothing.
func (c *Cache) Put(ctx context.Context, namespace, key string, value []byte, ttl time.Duration) error {
	if ttl <= 0 {
		return nil
	}
	if value == nil {
		// A nil slice binds as NULL; an empty answer is still an answer.
		value = []byte{}
	}
	now := c.now()
	if _, err := c.db.ExecContext(ctx, c.q.put, namespace, key, value, now.UnixMilli(), now.Add(ttl).UnixMilli()); err != nil {
		return c.errorf("cache put %s: %w", namespace, err)
	}
	return nil
}

func (c *Cache) count(namespace string, hit bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ct := c.counters[namespace]
	if ct == nil {
		ct = &counter{}
		c.counters[namespace] = ct
	}
	if hit {
		ct.hits++
	} else {
		ct.misses++
	}
}

// flush adds the counts gathered in memory to the stored ones, which every
// process sharing the database adds to. Counts that could not be written
// are kept for the next flush.
func (c *Cache) flush(ctx context.Context) error {
	c.mu.Lock()
	counters := c.counters
	c.counters = map[string]*counter{}
	c.mu.Unlock()
	var errs []error
	for ns, ct := range counters {
		if _, err := c.db.ExecContext(ctx, c.q.count, ns, ct.hits, ct.misses); err != nil {
			errs = append(errs, c.errorf("cache counters %s: %w", ns, err))
			c.mu.Lock()
			if c.counters[ns] == nil {
				c.counters[ns] = &counter{}
			}
			c.counters[ns].hits += ct.hits
			c.counters[ns].misses += ct.misses
			c.mu.Unlock()
		}
	}
	return errors.Join(errs...)
}

// NamespaceStats describes one namespace of the cache.
type NamespaceStats struct {
	Namespace string
	Entries   int64
	Expired   int64
	Bytes     int64
	Hits      int64
	Misses    int64
}

// Stats reports entries, expired entries, bytes, hits and misses per
// namespace. Hits and misses are those of every process that has used the
// database and flushed its counts (on Close or Stats).
func (c *Cache) Stats(ctx context.Context) ([]NamespaceStats, error) {
	if err := c.flush(ctx); err != nil {
		return nil, err
	}
	by := map[string]*NamespaceStats{}
	get := func(ns string) *NamespaceStats {
		if by[ns] == nil {
			by[ns] = &NamespaceStats{Namespace: ns}
		}
		return by[ns]
	}
	rows, err := c.db.QueryContext(ctx, c.q.stats, c.now().UnixMilli())
	if err != nil {
		return nil, c.errorf("cache stats: %w", err)
	}
	for rows.Next() {
		var ns string
		var n, expired, bytes int64
		if err := rows.Scan(&ns, &n, &expired, &bytes); err != nil {
			rows.Close()
			return nil, c.errorf("cache stats: %w", err)
		}
		s := get(ns)
		s.Entries, s.Expired, s.Bytes = n, expired, bytes
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, c.errorf("cache stats: %w", err)
	}
	rows, err = c.db.QueryContext(ctx, c.q.hits)
	if err != nil {
		return nil, c.errorf("cache stats: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var ns string
		var hits, misses int64
		if err := rows.Scan(&ns, &hits, &misses); err != nil {
			return nil, c.errorf("cache stats: %w", err)
		}
		s := get(ns)
		s.Hits, s.Misses = hits, misses
	}
	if err := rows.Err(); err != nil {
		return nil, c.errorf("cache stats: %w", err)
	}
	out := make([]NamespaceStats, 0, len(by))
	for _, s := range by {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Namespace < out[j].Namespace })
	return out, nil
}

// Prune removes expired entries, or every entry when all is set, and
// returns how many it removed.
func (c *Cache) Prune(ctx context.Context, all bool) (int64, error) {
	q, args := c.q.prune, []any{c.now().UnixMilli()}
	if all {
		q, args = c.q.wipe, nil
	}
	res, err := c.db.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, c.errorf("cache prune: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, c.errorf("cache prune: %w", err)
	}
	return n, nil
}

// errorf is fmt.Errorf with the backend's password, if any, masked.
func (c *Cache) errorf(format string, args ...any) error {
	return pg.Redact(fmt.Errorf(format, args...), c.secret)
}
