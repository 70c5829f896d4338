// Package pg is the Postgres plumbing the answer cache and the run store
// share: what names a Postgres database, opening its small connection
// pool from a DSN, where it points without the password, and masking the
// password in errors.
package pg

import (
	"database/sql"
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// ErrInvalidDSN means a Postgres DSN did not parse. The DSN itself is not
// quoted in the error, because it may hold a password.
var ErrInvalidDSN = errors.New("the Postgres DSN does not parse (it is not shown because it may hold a password)")

// IsDSN reports whether target names a Postgres database (a postgres://
// or postgresql:// URL) rather than a data directory.
func IsDSN(target string) bool {
	return strings.HasPrefix(target, "postgres://") || strings.HasPrefix(target, "postgresql://")
}

// Open parses dsn and returns a small connection pool on it (no
// connection is made yet) and the parsed configuration. A DSN that does
// not parse is ErrInvalidDSN, with none of pgx's message: pgx masks
// passwords in what it quotes only on a best-effort basis for malformed
// input.
func Open(dsn string) (*sql.DB, *pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, nil, ErrInvalidDSN
	}
	if cfg.ConnectTimeout == 0 {
		// Without one, a host that drops packets would hang a scan.
		cfg.ConnectTimeout = 10 * time.Second
	}
	db := stdlib.OpenDB(*cfg)
	// Many workers may share one server (100 connections by default), so
	// each process keeps a small pool.
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8)
	db.SetConnMaxIdleTime(5 * time.Minute)
	return db, cfg, nil
}

// Location is where cfg points, as a postgres:// URL with the user
// and no password, fit for logs and errors.
func Location(cfg *pgx.ConnConfig) string {
	u := url.URL{
		Scheme: "postgres",
		User:   url.User(cfg.User),
		Host:   net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))),
		Path:   "/" + cfg.Database,
	}
	if strings.HasPrefix(cfg.Host, "/") {
		// A Unix socket directory.
		u.Host = ""
		u.RawQuery = url.Values{"host": {cfg.Host}}.Encode()
	}
	return u.String()
}

// Redact masks secret, as written and as percent-encoded in a URL, in
// err's message. The result still unwraps to err, so errors.Is works, but
// its own message is the only one a caller should print.
func Redact(err error, secret string) error {
	if err == nil || secret == "" {
		return err
	}
	// The userinfo form escapes what a URL's password must: ":" becomes
	// "%3A", which PathEscape leaves alone.
	userinfo := strings.TrimPrefix(url.UserPassword("", secret).String(), ":")
	msg := err.Error()
	masked := msg
	for _, s := range []string{secret, url.QueryEscape(secret), url.PathEscape(secret), userinfo} {
		masked = strings.ReplaceAll(masked, s, "xxxxx")
	}
	if masked == msg {
		return err
	}
	return &redactedError{msg: masked, err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
