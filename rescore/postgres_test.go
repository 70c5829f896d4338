//go:build postgres

package rescore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/verifymcp/verifymcp/store"
)

// The Postgres tests need a real server: scripts/setup.sh (or
// scripts/setup.sh postgres) installs and starts one with this role and
// database. They fail, not skip, when it is not there.
const (
	postgresDSNEnv     = "VERIFYMCP_TEST_POSTGRES_DSN"
	defaultPostgresDSN = "postgres://verifymcp:verifymcp@127.0.0.1:5432/verifymcp_test?sslmode=disable"
)

// openPostgresTemp opens a store in a schema of its own on the test
// server, dropped when the test ends.
func openPostgresTemp(tb testing.TB) *store.Store {
	tb.Helper()
	ctx := context.Background()
	dsn := os.Getenv(postgresDSNEnv)
	if dsn == "" {
		dsn = defaultPostgresDSN
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		tb.Fatalf("the Postgres test server is unreachable: %v\nrun scripts/setup.sh postgres, or set %s", err, postgresDSNEnv)
	}
	tb.Cleanup(func() { conn.Close(context.Background()) })
	b := make([]byte, 6)
	rand.Read(b)
	schema := "rescore_test_" + hex.EncodeToString(b)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		tb.Fatalf("create schema: %v", err)
	}
	tb.Cleanup(func() {
		if _, err := conn.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			tb.Errorf("drop schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(dsn)
	if err != nil {
		tb.Fatal(store.ErrInvalidDSN)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	s, err := store.OpenPostgres(ctx, u.String())
	if err != nil {
		tb.Fatalf("OpenPostgres: %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// TestPostgres runs the rescoring tests against a Postgres store, each in
// a schema of its own.
func TestPostgres(t *testing.T) {
	newTestStore = openPostgresTemp
	defer func() { newTestStore = nil }()
	for _, tc := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"RescoreReweighted", TestRescoreReweighted},
		{"RescoreBaseline", TestRescoreBaseline},
		{"RescoreInterrupted", TestRescoreInterrupted},
		{"RescoreFilterAndFailures", TestRescoreFilterAndFailures},
		{"RescoreChunks", TestRescoreChunks},
	} {
		t.Run(tc.name, tc.fn)
	}
}

// BenchmarkRescorePostgres is BenchmarkRescore on a Postgres store on
// loopback. cpu-µs/result counts this process only; server-cpu-µs/result
// counts the processes named postgres on this machine, when the server
// runs here.
func BenchmarkRescorePostgres(b *testing.B) {
	benchmarkRescore(b, openPostgresTemp(b))
}
