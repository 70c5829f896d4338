// Package cache is the content-addressed store of answers that cost a
// call: third-party signals (OSV, Socket, GitHub) now, judge verdicts next.
// Entries are keyed by (namespace, key), where the key is a hash of
// everything that determines the answer, and expire after a time to live.
// The cache stores bytes and never interprets them. SQLite (pure Go, the
// same database file as the run store) is the default.
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

	_ "modernc.org/sqlite"
)

// FileName is the database file in the data directory, shared with the
// run store.
const FileName = "verifymcp.db"

// Cache is a TTL cache in SQLite. It is safe for concurrent use, by
// goroutines and by processes sharing the file.
type Cache struct {
	db  *sql.DB
	now func() time.Time

	mu       sync.Mutex
	counters map[string]*counter // per namespace, flushed on Close and Stats
}

type counter struct{ hits, misses int64 }

// Open opens (creating if needed) the cache in dir's database file.
func Open(ctx context.Context, dir string) (*Cache, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	dsn := "file:" + filepath.Join(dir, FileName) + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("cache: open: %w", err)
	}
	db.SetMaxOpenConns(4)
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
			db.Close()
			return nil, fmt.Errorf("cache: migrate: %w", err)
		}
	}
	return &Cache{db: db, now: time.Now, counters: map[string]*counter{}}, nil
}

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
	err := c.db.QueryRowContext(ctx,
		`SELECT value, stored_at FROM cache_entries WHERE namespace = ? AND key = ? AND expires_at > ?`,
		namespace, key, c.now().UnixMilli()).Scan(&value, &stored)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		c.count(namespace, false)
		return nil, time.Time{}, false, nil
	case err != nil:
		return nil, time.Time{}, false, fmt.Errorf("cache get %s: %w", namespace, err)
	}
	c.count(namespace, true)
	return value, time.UnixMilli(stored).UTC(), true, nil
}

// Put stores value under (namespace, key) for ttl, replacing any entry.
func (c *Cache) Put(ctx context.Context, namespace, key string, value []byte, ttl time.Duration) error {
	if ttl <= 0 {
		return nil
	}
	now := c.now()
	_, err := c.db.ExecContext(ctx,
		`INSERT INTO cache_entries (namespace, key, value, stored_at, expires_at) VALUES (?, ?, ?, ?, ?)
		 ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, stored_at = excluded.stored_at, expires_at = excluded.expires_at`,
		namespace, key, value, now.UnixMilli(), now.Add(ttl).UnixMilli())
	if err != nil {
		return fmt.Errorf("cache put %s: %w", namespace, err)
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

func (c *Cache) flush(ctx context.Context) error {
	c.mu.Lock()
	counters := c.counters
	c.counters = map[string]*counter{}
	c.mu.Unlock()
	for ns, ct := range counters {
		if _, err := c.db.ExecContext(ctx,
			`INSERT INTO cache_counters (namespace, hits, misses) VALUES (?, ?, ?)
			 ON CONFLICT (namespace) DO UPDATE SET hits = hits + excluded.hits, misses = misses + excluded.misses`,
			ns, ct.hits, ct.misses); err != nil {
			return fmt.Errorf("cache counters: %w", err)
		}
	}
	return nil
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
// namespace.
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
	rows, err := c.db.QueryContext(ctx,
		`SELECT namespace, COUNT(*), COALESCE(SUM(expires_at <= ?), 0), COALESCE(SUM(LENGTH(value)), 0) FROM cache_entries GROUP BY namespace`,
		c.now().UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("cache stats: %w", err)
	}
	for rows.Next() {
		var ns string
		var n, expired, bytes int64
		if err := rows.Scan(&ns, &n, &expired, &bytes); err != nil {
			rows.Close()
			return nil, fmt.Errorf("cache stats: %w", err)
		}
		s := get(ns)
		s.Entries, s.Expired, s.Bytes = n, expired, bytes
	}
	rows.Close()
	rows, err = c.db.QueryContext(ctx, `SELECT namespace, hits, misses FROM cache_counters`)
	if err != nil {
		return nil, fmt.Errorf("cache stats: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var ns string
		var hits, misses int64
		if err := rows.Scan(&ns, &hits, &misses); err != nil {
			return nil, fmt.Errorf("cache stats: %w", err)
		}
		s := get(ns)
		s.Hits, s.Misses = hits, misses
	}
	out := make([]NamespaceStats, 0, len(by))
	for _, s := range by {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Namespace < out[j].Namespace })
	return out, rows.Err()
}

// Prune removes expired entries, or every entry when all is set, and
// returns how many it removed.
func (c *Cache) Prune(ctx context.Context, all bool) (int64, error) {
	q, args := `DELETE FROM cache_entries WHERE expires_at <= ?`, []any{c.now().UnixMilli()}
	if all {
		q, args = `DELETE FROM cache_entries`, nil
	}
	res, err := c.db.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("cache prune: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}
