// Package sqliteopen opens a SQLite database file that several processes
// may be creating at once.
package sqliteopen

import (
	"context"
	"database/sql"
	"errors"
	mrand "math/rand/v2"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Ping opens db's first connection. A new SQLite file's first connections
// each switch it to WAL, which needs a lock that SQLite does not wait for
// (its busy timeout does not apply): one opened while another connection
// switches it fails with SQLITE_BUSY, and is tried again, for up to 10 s.
func Ping(ctx context.Context, db *sql.DB) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := db.PingContext(ctx)
		if err == nil || !busy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(5+mrand.IntN(20)) * time.Millisecond):
		}
	}
}

// busy reports whether err is SQLite's SQLITE_BUSY (any extended code).
func busy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}
