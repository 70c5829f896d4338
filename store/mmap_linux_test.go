package store

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
)

// rssFile is this process's resident file-backed memory in bytes
// (RssFile in /proc/self/status): the pages of files it has mapped and
// touched, the SQLite file's among them when it is memory-mapped.
func rssFile(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("RssFile: %q: %v", v, err)
			}
			return kb << 10
		}
	}
	t.Skip("no RssFile in /proc/self/status")
	return 0
}

// TestEachRunMapsNothing reads a 64 MiB SQLite store whole and checks that
// the process's resident set did not take its pages: a store read through
// a memory mapping keeps every page read resident for as long as the
// mapping lasts, so a rescoring pass grew with the store it read.
func TestEachRunMapsNothing(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	// 4,096 runs of 16 KiB each, incompressible (the bundle bytes are
	// stored as given when they are not S2, as bundles saved before schema 6 were),
	// written straight into the table: what the read costs, not the saves.
	const runs, size = 4096, 16 << 10
	rng := rand.New(rand.NewPCG(1, 2))
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	blob := make([]byte, size)
	for i := range runs {
		for j := range blob {
			blob[j] = byte(rng.Uint32())
		}
		blob[0] = '{'
		id := "run-" + strconv.Itoa(100000+i)
		if _, err := tx.ExecContext(ctx, `INSERT INTO runs (run_id, schema_version, ecosystem, target_name, target_version, run_date,
	tool_name, tool_version, outcome, bundle_sha256, bundle, identity_key) VALUES (?, '1', 'npm', 'x', '1.0.0', ?, 'verifymcp', 'dev', 'ok', '', ?, 'npm:x')`,
			id, int64(i), blob); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	// Every page in the database file itself, where a mapping reads it,
	// rather than in the write-ahead log.
	if _, err := s.db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}

	before := rssFile(t)
	var n int
	var bytes int64
	if err := s.EachRun(ctx, Filter{}, "2", "", func(r *StoredRun) error {
		n++
		bytes += int64(len(r.Bundle))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	grew := rssFile(t) - before
	if n != runs || bytes != runs*size {
		t.Fatalf("read %d runs, %d bytes; want %d, %d", n, bytes, runs, runs*size)
	}
	t.Logf("read %d MiB; resident file pages grew by %d KiB", bytes>>20, grew>>10)
	if grew > bytes/4 {
		t.Errorf("reading %d MiB of runs took %d MiB more resident file pages: the store is memory-mapped, so a pass's memory grows with the store", bytes>>20, grew>>20)
	}
}
