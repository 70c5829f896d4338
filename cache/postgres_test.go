//go:build postgres

package cache

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/verifymcp/verifymcp/internal/testpg"
)

// postgresBackend gives each test its own schema, dropped when it ends, so
// that tests and concurrent runs never share tables.
var postgresBackend = &backend{name: "postgres", newTarget: newPostgresTarget}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func newPostgresTarget(tb testing.TB) string {
	tb.Helper()
	return testpg.SchemaDSN(tb, "cache_test_")
}

func TestPostgresSchemaInSearchPath(t *testing.T) {
	ctx := context.Background()
	target := newPostgresTarget(t)
	c := openTarget(t, target)
	if err := c.Put(ctx, "osv", "k", []byte("v"), time.Hour); err != nil {
		t.Fatal(err)
	}
	schema, _ := url.Parse(target)
	var got string
	err := testpg.Connect(t).QueryRow(ctx,
		`SELECT table_schema FROM information_schema.tables WHERE table_name = 'cache_entries' AND table_schema = $1`,
		schema.Query().Get("search_path")).Scan(&got)
	if err != nil {
		t.Fatalf("the tables are not in the DSN's schema: %v", err)
	}
	if got, want := c.Backend(), "postgres"; got != want {
		t.Errorf("Backend() = %q, want %q", got, want)
	}
}

// TestPostgresExistingTablesNoDDL: once the tables exist, opening the
// cache runs no DDL, so a role that may use the tables but not create
// anything (they were made by a DBA) still opens it. A read-only session
// stands in for such a role.
func TestPostgresExistingTablesNoDDL(t *testing.T) {
	ctx := context.Background()
	target := newPostgresTarget(t)
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("default_transaction_read_only", "on")
	u.RawQuery = q.Encode()
	readOnly := u.String()
	if c, err := OpenPostgres(ctx, readOnly); err == nil {
		c.Close()
		t.Fatal("a read-only session created the tables: the test cannot tell DDL from none")
	}
	w := openTarget(t, target)
	if err := w.Put(ctx, "osv", "k", []byte("v"), time.Hour); err != nil {
		t.Fatal(err)
	}
	c := openTarget(t, readOnly)
	if v, _, ok, err := c.Get(ctx, "osv", "k"); !ok || err != nil || string(v) != "v" {
		t.Errorf("get: %q ok=%v err=%v", v, ok, err)
	}
}

// TestPostgresWrongPassword: the error says the login failed, unwraps to
// the server's error, and shows neither the password nor the DSN's.
func TestPostgresWrongPassword(t *testing.T) {
	testpg.Connect(t) // the server is there, so the failure is the password's
	u, err := url.Parse(testpg.DSN())
	if err != nil {
		t.Fatal(err)
	}
	wrong := "Wr0ng/p@ss:" + randomHex(8)
	u.User = url.UserPassword(u.User.Username(), wrong)
	dsn := u.String()
	c, err := OpenPostgres(context.Background(), dsn)
	if err == nil {
		c.Close()
		t.Fatal("opened with a wrong password")
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "28P01" { // invalid_password
		t.Errorf("got %v, want the server's invalid_password (28P01)", err)
	}
	msg := err.Error()
	for _, leak := range []string{wrong, url.QueryEscape(wrong), u.User.String(), dsn} {
		if strings.Contains(msg, leak) {
			t.Errorf("the error shows %q: %s", leak, msg)
		}
	}
	t.Logf("error: %s", msg)
}

// TestPostgresUnreachable: a server that is not there fails fast, with an
// error that does not show the password.
func TestPostgresUnreachable(t *testing.T) {
	const secret = "n0t-th3re-pw"
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	// Port 1 on loopback refuses connections.
	_, err := OpenDSN(ctx, "postgres://verifymcp:"+secret+"@127.0.0.1:1/verifymcp_test?sslmode=disable")
	if err == nil {
		t.Fatal("opened a server that is not there")
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("the error shows the password: %v", err)
	}
	if ctx.Err() != nil {
		t.Errorf("the failure took the whole timeout: %v", err)
	}
}

func TestPostgresLocation(t *testing.T) {
	c := openTarget(t, newPostgresTarget(t))
	cfg, err := pgx.ParseConfig(testpg.DSN())
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("postgres://%s@%s:%d/%s", cfg.User, cfg.Host, cfg.Port, cfg.Database)
	if got := c.Location(); got != want {
		t.Errorf("Location() = %q, want %q", got, want)
	}
	if cfg.Password != "" && strings.Contains(c.Location(), ":"+cfg.Password+"@") {
		t.Errorf("Location() shows the password: %q", c.Location())
	}
}
