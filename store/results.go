package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Result is a result as the store saves it: the JSON of a scored result
// (a rubric.Result as json.Marshal writes it), and what the store reads
// from that JSON into columns of its own: the rubric version and hash it
// was scored under, its composite, and its summary.
type Result struct {
	RunID         string
	RubricVersion string
	RubricHash    string
	Score         *float64 // nil when every dimension was dropped
	JSON          []byte
	// Summary is the JSON of the result's Summary.
	Summary []byte
	// Fresh says the run had no result under RubricVersion when it was
	// read (StoredRun.Scored was false); SaveResults may then insert
	// rather than replace.
	Fresh bool
}

// Summary is what comparing a later result with a stored one needs, and
// nothing else: its reason codes (sorted, each once), its dimensions' id,
// weight, state and score, and its composite. A result is around 9 KiB of
// findings' messages and evidence, its summary a few hundred bytes. Schema
// 4 stores it beside the result, written by the same statement; results
// saved before have none, and a result's own JSON decodes into a Summary
// with the same dimensions and composite (its codes as they come).
type Summary struct {
	Findings   []SummaryFinding   `json:"findings"`
	Dimensions []SummaryDimension `json:"dimensions"`
	Score      *float64           `json:"score"`
}

// SummaryFinding is one reason code of a Summary.
type SummaryFinding struct {
	Code string `json:"code"`
}

// SummaryDimension is one dimension of a Summary.
type SummaryDimension struct {
	ID     string  `json:"id"`
	Weight float64 `json:"weight"`
	State  string  `json:"state"`
	Score  float64 `json:"score"`
}

// NewResult returns the Result of run runID whose JSON is resultJSON,
// reading its version, hash, composite and summary from it.
func NewResult(runID string, resultJSON []byte) (Result, error) {
	var f struct {
		RubricVersion string `json:"rubric_version"`
		RubricHash    string `json:"rubric_hash"`
		Summary
	}
	if err := json.Unmarshal(resultJSON, &f); err != nil {
		return Result{}, fmt.Errorf("read result: %w", err)
	}
	if f.RubricVersion == "" || f.RubricHash == "" {
		return Result{}, errors.New("result has no rubric version or hash")
	}
	codes := make([]string, 0, len(f.Findings))
	for _, x := range f.Findings {
		codes = append(codes, x.Code)
	}
	sum := NewSummary(codes, f.Dimensions, f.Score)
	summary, err := json.Marshal(sum)
	if err != nil {
		return Result{}, fmt.Errorf("encode summary: %w", err)
	}
	return Result{RunID: runID, RubricVersion: f.RubricVersion, RubricHash: f.RubricHash, Score: sum.Score,
		JSON: resultJSON, Summary: summary}, nil
}

// NewSummary returns the summary of a result with these reason codes (in
// any order, repeated or not), dimensions and composite. A summary with
// no codes or no dimensions has them null, as summaries have always been
// written.
func NewSummary(codes []string, dims []SummaryDimension, score *float64) Summary {
	sum := Summary{Score: score}
	codes = slices.Clone(codes)
	slices.Sort(codes)
	for _, c := range slices.Compact(codes) {
		sum.Findings = append(sum.Findings, SummaryFinding{Code: c})
	}
	if len(dims) > 0 {
		sum.Dimensions = dims
	}
	return sum
}

// resultOf is NewResult of res's JSON.
func resultOf(runID string, res any) (Result, error) {
	j, err := json.Marshal(res)
	if err != nil {
		return Result{}, fmt.Errorf("encode result: %w", err)
	}
	return NewResult(runID, j)
}

// upsertResult saves a result, replacing the one of the same run and
// rubric version.
const upsertResult = `
INSERT INTO results (run_id, rubric_version, rubric_hash, score, result, summary) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (run_id, rubric_version) DO UPDATE SET
	rubric_hash = excluded.rubric_hash, score = excluded.score, result = excluded.result, summary = excluded.summary`

// upsertRows is how many results one statement of SaveResults saves: a
// statement per result would spend a rescoring pass on round trips to
// Postgres and on statement overhead in SQLite.
const upsertRows = 100

// upsertMany returns upsertResult for n rows.
func upsertMany(n int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO results (run_id, rubric_version, rubric_hash, score, result, summary) VALUES ")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?, ?, ?)")
	}
	b.WriteString(`
ON CONFLICT (run_id, rubric_version) DO UPDATE SET
	rubric_hash = excluded.rubric_hash, score = excluded.score, result = excluded.result, summary = excluded.summary`)
	return b.String()
}

var upsertFull = upsertMany(upsertRows)

func resultArgs(r *Result) []any {
	var score any // NULL when every dimension was dropped
	if r.Score != nil {
		score = *r.Score
	}
	return []any{r.RunID, r.RubricVersion, r.RubricHash, score, compressJSON(r.JSON), r.Summary}
}

func insertResult(ctx context.Context, exec execFunc, r *Result) error {
	_, err := exec(ctx, upsertResult, resultArgs(r)...)
	return err
}

// SaveResults saves results of saved runs in one transaction, all of them
// or none, each replacing an earlier result of its run under the same
// rubric version: results are derived from the immutable bundle and can
// always be recomputed. A result of a run that is not stored fails the
// whole batch.
func (s *Store) SaveResults(ctx context.Context, rs []Result) error {
	if len(rs) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: save results: %w", s.redact(err))
	}
	defer tx.Rollback()
	if s.pg {
		// Results are derived: the worst a crash of the database server
		// can do to a batch committed without waiting for its WAL is lose
		// it whole, which saving it again writes.
		if _, err := tx.ExecContext(ctx, "SET LOCAL synchronous_commit = off"); err != nil {
			return fmt.Errorf("store: save results: %w", s.redact(err))
		}
	}
	args := make([]any, 0, 6*upsertRows)
	for batch := range slices.Chunk(rs, upsertRows) {
		args = args[:0]
		for i := range batch {
			if batch[i].RubricVersion == "" || batch[i].RubricHash == "" {
				return fmt.Errorf("store: save result %s: result has no rubric version or hash", batch[i].RunID)
			}
			args = append(args, resultArgs(&batch[i])...)
		}
		q := upsertFull
		if len(batch) < upsertRows {
			q = upsertMany(len(batch))
		}
		if _, err := tx.ExecContext(ctx, s.q(q), args...); err != nil {
			return fmt.Errorf("store: save results of runs %s to %s: %w", batch[0].RunID, batch[len(batch)-1].RunID, s.redact(err))
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: save results: commit: %w", s.redact(err))
	}
	return nil
}

// StoredRun is one run as EachRun reads it.
type StoredRun struct {
	ID string
	// Bundle is the bundle JSON, exactly as saved.
	Bundle []byte
	// BaselineVersion is the rubric version of the baseline result, ""
	// when there is none; Baseline is its Summary's JSON, or the whole
	// result's JSON for a result saved before summaries were.
	BaselineVersion string
	Baseline        []byte
	// Scored is whether the run had a result under the version being
	// scored when it was read.
	Scored bool
}

// CountRuns counts the runs f selects, Limit included.
func (s *Store) CountRuns(ctx context.Context, f Filter) (int, error) {
	if err := f.columnsOnly("count runs"); err != nil {
		return 0, err
	}
	where, args := f.where(false)
	var n int
	if err := s.db.QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM runs r`+where), args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count runs: %w", s.redact(err))
	}
	if f.Limit > 0 && n > f.Limit {
		n = f.Limit
	}
	return n, nil
}

// readChunk is how many runs one query of EachRun returns. EachRun reads
// in chunks, each query its own snapshot, because a reader holding one
// snapshot for a whole pass would keep SQLite from checkpointing the
// results written meanwhile: the write-ahead log would grow by every
// result of the pass. A variable, so that tests can make chunks small.
var readChunk = 2000

// EachRun streams the runs f selects, oldest first by (run date, run id),
// each with its baseline result, calling fn with each; the run's bytes
// are valid only until fn returns. The baseline is the stored result
// under rubric version baseline or, when baseline is empty, under the
// highest version other than version (versions order as rubric versions
// do: "10" after "9"), failing that under version itself. EachRun stops at
// the first error fn returns and returns it.
//
// Runs are read in chunks, each starting after the last run of the one
// before, so a run saved meanwhile is read too if it sorts after the runs
// already read, and a run's baseline is read before a caller that saves
// results as it goes rewrites any result of that run.
func (s *Store) EachRun(ctx context.Context, f Filter, version, baseline string, fn func(*StoredRun) error) error {
	if err := f.columnsOnly("read runs"); err != nil {
		return err
	}
	where, wargs := f.where(false)
	after := " WHERE (r.run_date, r.run_id) > (?, ?)"
	if where != "" {
		after = where + " AND (r.run_date, r.run_id) > (?, ?)"
	}
	var run StoredRun
	var jb, rb jsonBuffer
	var lastDate int64
	var lastID string
	// chunk reads up to n runs after (lastDate, lastID), or from the first
	// when first is set, and returns how many it read.
	chunk := func(first bool, n int) (int, error) {
		sel := where
		var args []any
		if !s.pg {
			args = append(args, version) // scored, first in SQLite's query
		}
		args = append(args, wargs...)
		if !first {
			sel = after
			args = append(args, lastDate, lastID)
		}
		args = append(args, n)
		if s.pg {
			args = append(args, version)
		}
		if baseline != "" {
			args = append(args, baseline)
		} else {
			args = append(args, version)
		}
		rows, err := s.db.QueryContext(ctx, s.q(chunkQuery(s.pg, sel, baseline)), args...)
		if err != nil {
			return 0, err
		}
		defer rows.Close()
		read := 0
		for rows.Next() {
			// RawBytes saves a copy of every bundle.
			var bundle, res sql.RawBytes
			var ver sql.NullString
			if err := rows.Scan(&run.ID, &lastDate, &bundle, &ver, &res, &run.Scored); err != nil {
				return read, err
			}
			read++
			lastID = run.ID
			if run.Bundle, err = jb.json(bundle); err != nil {
				return read, fmt.Errorf("bundle of run %s: %w", run.ID, err)
			}
			run.BaselineVersion = ver.String
			if run.Baseline, err = rb.json(res); err != nil {
				return read, fmt.Errorf("result of run %s under rubric %s: %w", run.ID, ver.String, err)
			}
			if err := fn(&run); err != nil {
				return read, errStop{err}
			}
		}
		return read, rows.Err()
	}
	remaining := f.Limit // 0: no limit
	for first := true; ; first = false {
		n := readChunk
		if f.Limit > 0 {
			n = min(n, remaining)
		}
		if n == 0 {
			return nil
		}
		read, err := chunk(first, n)
		var stop errStop
		switch {
		case errors.As(err, &stop):
			return stop.err
		case err != nil && ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			return fmt.Errorf("store: read runs: %w", s.redact(err))
		}
		remaining -= read
		if read < n {
			return nil
		}
	}
}

// errStop carries the error of EachRun's fn out of a chunk.
type errStop struct{ err error }

func (e errStop) Error() string { return e.err.Error() }

// chunkQuery is EachRun's query for one chunk. Its parameters are the
// version being scored (to tell whether each run has a result under it;
// on Postgres after LIMIT), those of sel, which selects the runs, LIMIT,
// then the baseline version asked for, or the version being scored to
// order the others against.
//
// The chunk's runs are selected by the (run_date, run_id) index first,
// then each run's baseline and whether it is scored by one lookup each:
// Postgres would otherwise join every run before taking the chunk's first
// n. On Postgres, "scored" as an EXISTS in the select list may be hashed,
// which scans every result stored under the version for each chunk (when
// the statistics have not yet seen a pass's new results, it always was,
// and a pass over n runs read n²/chunk index entries); LIMIT keeps the
// lateral lookups from being pulled up into joins, which the planner
// could hash too.
func chunkQuery(pg bool, sel, baseline string) string {
	chunk := `SELECT r.run_id, r.run_date, r.bundle FROM runs r` + sel + ` ORDER BY r.run_date, r.run_id LIMIT ?`
	// Another version first, the highest one; then the same version.
	// "10" sorts after "9": longer first, then lexically.
	pick := `o.rubric_version = ?`
	order := ``
	if baseline == "" {
		pick = `true`
		order = ` ORDER BY o.rubric_version = ?, length(o.rubric_version) DESC, o.rubric_version DESC`
	}
	if pg {
		return `SELECT r.run_id, r.run_date, r.bundle, b.rubric_version, b.result, s.scored IS NOT NULL
FROM (` + chunk + `) r
LEFT JOIN LATERAL (SELECT true AS scored FROM results x WHERE x.run_id = r.run_id AND x.rubric_version = ? LIMIT 1) s ON true
LEFT JOIN LATERAL (SELECT o.rubric_version, coalesce(o.summary, o.result) AS result FROM results o
	WHERE o.run_id = r.run_id AND ` + pick + order + ` LIMIT 1) b ON true
ORDER BY r.run_date, r.run_id`
	}
	return `SELECT r.run_id, r.run_date, r.bundle, b.rubric_version, coalesce(b.summary, b.result),
	EXISTS (SELECT 1 FROM results x WHERE x.run_id = r.run_id AND x.rubric_version = ?)
FROM (` + chunk + `) r
LEFT JOIN results b ON b.run_id = r.run_id AND b.rubric_version = (
	SELECT o.rubric_version FROM results o WHERE o.run_id = r.run_id AND ` + pick + order + ` LIMIT 1)
ORDER BY r.run_date, r.run_id`
}
