//go:build postgres

package rescore

import (
	"context"
	"testing"

	"github.com/verifymcp/verifymcp/internal/testpg"
	"github.com/verifymcp/verifymcp/store"
)

// openPostgresTemp opens a store in a schema of its own on the test
// server, dropped when the test ends.
func openPostgresTemp(tb testing.TB) *store.Store {
	tb.Helper()
	s, err := store.OpenPostgres(context.Background(), testpg.SchemaDSN(tb, "rescore_test_"))
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
