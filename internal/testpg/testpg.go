// Package testpg is the tests' one way to the Postgres test server: its
// DSN, and a schema of each test's own. scripts/setup.sh (or
// scripts/setup.sh postgres) installs and starts the server with the
// default DSN's role and database. The tests fail, not skip, when it is
// not there: a missing server must not pass as a green run.
package testpg

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

const (
	// DSNEnv names the test server's DSN when it is not DefaultDSN.
	DSNEnv = "VERIFYMCP_TEST_POSTGRES_DSN"
	// DefaultDSN is the server scripts/setup.sh starts.
	DefaultDSN = "postgres://verifymcp:verifymcp@127.0.0.1:5432/verifymcp_test?sslmode=disable"
)

// DSN is the test server's DSN: $VERIFYMCP_TEST_POSTGRES_DSN, else
// DefaultDSN.
func DSN() string {
	if dsn := os.Getenv(DSNEnv); dsn != "" {
		return dsn
	}
	return DefaultDSN
}

// Connect connects to the test server, closed when the test ends, and
// fails the test when it cannot, saying how to start the server. The
// password never shows in the failure.
func Connect(tb testing.TB) *pgx.Conn {
	tb.Helper()
	cfg, err := pgx.ParseConfig(DSN())
	if err != nil {
		tb.Fatalf("%s: the Postgres DSN does not parse (it is not shown because it may hold a password)", DSNEnv)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		msg := err.Error()
		if cfg.Password != "" {
			msg = strings.ReplaceAll(msg, cfg.Password, "xxxxx")
		}
		tb.Fatalf("the Postgres test server at %s:%d is unreachable: %s\n"+
			"run scripts/setup.sh (or scripts/setup.sh postgres) to install and start it, or set %s",
			cfg.Host, cfg.Port, msg, DSNEnv)
	}
	tb.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// Schema makes a schema of the test's own on the test server, named
// prefix and twelve random hex digits, drops it (CASCADE) when the test
// ends, and returns its name.
func Schema(tb testing.TB, prefix string) string {
	tb.Helper()
	conn := Connect(tb)
	b := make([]byte, 6)
	rand.Read(b)
	schema := prefix + hex.EncodeToString(b)
	if _, err := conn.Exec(context.Background(), "CREATE SCHEMA "+schema); err != nil {
		tb.Fatalf("create schema: %v", err)
	}
	tb.Cleanup(func() {
		if _, err := conn.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			tb.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return schema
}

// WithSearchPath returns dsn with schema as its search_path, a run-time
// parameter that pgx sends to the server: a query parameter of a URL, a
// pair of key=value pairs.
func WithSearchPath(tb testing.TB, dsn, schema string) string {
	tb.Helper()
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		return dsn + " search_path=" + schema
	}
	u, err := url.Parse(dsn)
	if err != nil {
		tb.Fatalf("%s: the Postgres DSN does not parse (it is not shown because it may hold a password)", DSNEnv)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// SchemaDSN makes a schema of the test's own (see Schema) and returns the
// test server's DSN with that schema as its search_path.
func SchemaDSN(tb testing.TB, prefix string) string {
	tb.Helper()
	return WithSearchPath(tb, DSN(), Schema(tb, prefix))
}
