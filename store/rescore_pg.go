package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// A rescoring pass on Postgres reads and writes through pgx itself rather
// than database/sql: database/sql copies every bundle and result into a
// new slice of its own before the reader copies it into its buffers, and
// builds each multi-row upsert in a buffer grown to the size of its
// results, then copies that into the message. Measured in a pass over
// 20,000 runs, those copies were most of the client's cost of the
// database work.

// pgConnOf runs f with the pgx connection under c.
func pgConnOf(c *sql.Conn, f func(*pgx.Conn) error) error {
	return c.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("store: a Postgres store's connection is a %T, not pgx's", dc)
		}
		return f(sc.Conn())
	})
}

// pgReadChunk runs the chunk query q (with ? placeholders) on c and calls
// add for each row: run id, run date, bundle, baseline version ("" for
// none), baseline, and whether the run has a result under the version
// being scored. The byte slices are valid only until add returns.
func (s *Store) pgReadChunk(ctx context.Context, c *sql.Conn, q string, args []any,
	add func(runID string, runDate int64, bundle []byte, ver string, baseline []byte, scored bool) error) error {
	return pgConnOf(c, func(pc *pgx.Conn) error {
		rows, err := pc.Query(ctx, rebind(q), append([]any{pgx.QueryResultFormats{pgx.BinaryFormatCode}}, args...)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			v := rows.RawValues()
			// Binary formats: text as its bytes, bigint as 8 bytes big
			// endian, bytea as its bytes, boolean as one byte.
			if len(v) != 6 || len(v[1]) != 8 || len(v[5]) != 1 {
				return errors.New("unexpected row shape")
			}
			if err := add(string(v[0]), int64(binary.BigEndian.Uint64(v[1])), v[2], string(v[3]), v[4], v[5][0] == 1); err != nil {
				return err
			}
		}
		return rows.Err()
	})
}

// pgResultColumns are the columns pgWriteResults copies.
var pgResultColumns = []string{"run_id", "rubric_version", "rubric_hash", "score", "result", "summary"}

// pgWriteResults saves results in one transaction on c, all of them or
// none, as writeResults does. Results of runs that had none under their
// rubric version when read (a pass under a new version: all of them) are
// copied into the table with COPY, the cheapest way into Postgres for
// client and server alike; the others are upserted. If a result was
// saved meanwhile for one of the copied runs (another pass, or a scan
// saving it), COPY fails on the key, and the whole batch is upserted
// instead.
func (s *Store) pgWriteResults(ctx context.Context, c *sql.Conn, rs []*rescored) error {
	err := pgConnOf(c, func(pc *pgx.Conn) error {
		err := pgWriteBatch(ctx, pc, rs, true)
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23505" { // unique_violation
			err = pgWriteBatch(ctx, pc, rs, false)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("store: rescore: save results of runs %s to %s: %w", rs[0].runID, rs[len(rs)-1].runID, s.redact(err))
	}
	return nil
}

// pgWriteBatch writes rs in one transaction, copying the fresh ones when
// copy is set and upserting the rest.
//
// The transaction commits without waiting for its WAL to reach the disk
// (synchronous_commit off, for it alone). Results are derived: each is a
// pure function of a stored run and a rubric, so the worst a crash of the
// database server or its machine can do is lose the last few hundred
// milliseconds of a pass's batches, whole and never part of one, which
// running the pass again writes; runs themselves, the evidence, are saved
// as before. (SQLite commits everything in this store much alike: in WAL
// mode with synchronous NORMAL, a power failure can lose the last
// commits.) Waiting on the flush held up the writer, the stage that sets
// a pass's pace: measured in five interleaved pairs, 7,800-10,100
// results/s waiting against 8,100-10,700 not.
func pgWriteBatch(ctx context.Context, pc *pgx.Conn, rs []*rescored, copy bool) error {
	tx, err := pc.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SET LOCAL synchronous_commit = off"); err != nil {
		return err
	}
	var fresh, rest []*rescored
	for _, r := range rs {
		if copy && r.fresh {
			fresh = append(fresh, r)
		} else {
			rest = append(rest, r)
		}
	}
	if len(fresh) > 0 {
		i := 0
		src := pgx.CopyFromFunc(func() ([]any, error) {
			if i == len(fresh) {
				return nil, nil
			}
			r := fresh[i]
			i++
			return []any{r.runID, r.newRubric, r.newHash, r.score, r.result, r.summary}, nil
		})
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"results"}, pgResultColumns, src); err != nil {
			return err
		}
	}
	if err := eachUpsert(rest, func(q string, args []any, _ []*rescored) error {
		_, err := tx.Exec(ctx, rebind(q), args...)
		return err
	}); err != nil {
		return err
	}
	return tx.Commit(ctx)
}
