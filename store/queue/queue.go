// Package queue is the Postgres job queue that spreads scans over many
// machines. It is a thin layer over River (github.com/riverqueue/river):
// River owns the job table, fetching, retries with backoff, rescue of jobs
// left by dead workers, and leader election; this package fixes the job
// kind, its idempotency key, and the rule that a scan's result and its job's
// completion commit in one transaction.
//
// The queue never stores scan results. The caller's Handler writes them in
// the transaction it is given, and the queue completes the job in that same
// transaction, so a result exists if and only if its job completed.
package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
)

const (
	// KindScan is the River job kind of a scan job.
	KindScan = "verifymcp_scan"
	// QueueScan is the River queue scan jobs go to and workers pull from.
	// Other job kinds (rescoring, say) get queues of their own, so that a
	// fleet can size each separately.
	QueueScan = "scan"
)

// Defaults for a zero Config. A scan runs a package in a container, so one
// at a time per process unless the operator asks for more; a job that runs
// longer than JobTimeout is cancelled, and one still "running" after
// RescueStuckJobsAfter is presumed to belong to a dead worker.
const (
	DefaultWorkers              = 1
	DefaultMaxAttempts          = 8
	DefaultJobTimeout           = 30 * time.Minute
	DefaultRescueStuckJobsAfter = time.Hour
	DefaultRetention            = 30 * 24 * time.Hour
)

var (
	// ErrInvalidArgs means a ScanArgs lacks part of its key.
	ErrInvalidArgs = errors.New("scan job needs a target, a rubric version and a tool version")
	// ErrNoHandler means Start was called on an insert-only client.
	ErrNoHandler = errors.New("queue client has no handler: it can enqueue but not work")
	// ErrJobLost means that, by the time a worker came to commit its result,
	// the job was no longer running under this worker's attempt: the rescuer
	// had given it to another worker (this one was presumed dead), or it
	// was already finished. The result is rolled back so it cannot be a
	// duplicate.
	ErrJobLost = errors.New("job no longer held by this worker")
)

// ScanArgs is one scan job. Target, RubricVersion and ToolVersion are the
// job's idempotency key: River hashes exactly these three fields (tagged
// `river:"unique"`) into the job's unique key, so enqueueing the same key
// again is a no-op while an earlier job with it is pending, available,
// scheduled, running, retryable or completed (until the completed row is
// cleaned after Config.Retention). A discarded or cancelled job does not
// block a new one: re-running the batch retries what failed for good.
//
// The target is the exact version as the operator wrote it
// (npm:NAME@VERSION, pypi:NAME==VERSION, a purl): the artifact digest the
// architecture's key names is known only after the worker resolves the
// target, so the exact target string stands in for it at enqueue time.
type ScanArgs struct {
	Target        string `json:"target" river:"unique"`
	RubricVersion string `json:"rubric_version" river:"unique"`
	ToolVersion   string `json:"tool_version" river:"unique"`
	// Options are passed to the handler untouched and are not part of the
	// key: a second job differing only in options is a duplicate, and the
	// first one's options stand.
	Options json.RawMessage `json:"options,omitempty"`
}

// Kind implements river.JobArgs.
func (ScanArgs) Kind() string { return KindScan }

// InsertOpts implements river.JobArgsWithInsertOpts: the queue and the
// unique key. ByState is left at River's default (every state but
// discarded and cancelled).
func (ScanArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{
		Queue:      QueueScan,
		UniqueOpts: river.UniqueOpts{ByArgs: true},
	}
}

func (a ScanArgs) validate() error {
	if strings.TrimSpace(a.Target) == "" || strings.TrimSpace(a.RubricVersion) == "" || strings.TrimSpace(a.ToolVersion) == "" {
		return fmt.Errorf("%w: %+q", ErrInvalidArgs, []string{a.Target, a.RubricVersion, a.ToolVersion})
	}
	return nil
}

// key is the idempotency key as a comparable value.
func (a ScanArgs) key() [3]string { return [3]string{a.Target, a.RubricVersion, a.ToolVersion} }

// Handler runs one scan. It writes the scan's result in tx, which the queue
// commits together with the job's completion, and returns:
//   - nil when the result is written;
//   - an error wrapped with Permanent when the package itself failed (it
//     would not install, crashed, broke the protocol) and the handler has
//     written that outcome as the result: the job completes, no retry;
//   - any other error for an infrastructure failure (Docker engine, the
//     database, a network outage): tx is rolled back, and River retries the
//     job with backoff, on whichever worker fetches it, until MaxAttempts,
//     then discards it with every attempt's error kept in the job row.
//
// Handlers must return when ctx is done (JobTimeout or a hard stop).
//
// tx is open for the whole call and holds one pool connection. Nothing is
// locked or snapshotted until the handler first uses it, so the handler
// should scan first and write last.
type Handler func(ctx context.Context, tx pgx.Tx, args ScanArgs) error

// PermanentError marks a handler error as the package's own failure,
// recorded as its result rather than retried.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return "permanent: " + e.Err.Error() }
func (e *PermanentError) Unwrap() error { return e.Err }

// Permanent wraps err as a PermanentError; Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &PermanentError{Err: err}
}

// CancelError marks a handler error as one no worker and no retry can
// overcome, where there is no result to write: the target no longer
// resolves, or resolves to another artefact than the one enqueued.
type CancelError struct{ Err error }

func (e *CancelError) Error() string { return "cancelled: " + e.Err.Error() }
func (e *CancelError) Unwrap() error { return e.Err }

// Cancel wraps err as a CancelError; Cancel(nil) is nil. The job is
// cancelled at once, nothing the handler wrote is kept, and the reason is
// recorded in the job row, where Discarded shows it.
func Cancel(err error) error {
	if err == nil {
		return nil
	}
	return &CancelError{Err: err}
}

// Config configures a Client. The zero value (with a Handler) is a
// production worker; leave Handler nil for an insert-only client such as
// `batch --enqueue`.
type Config struct {
	// Schema holds River's tables; empty means the connection's
	// search_path. Every client of one queue must use the same schema.
	Schema string
	// Handler runs the scans. Nil makes an insert-only client.
	Handler Handler
	// Workers is how many jobs this process runs at once (default 1). The
	// pool needs a connection per running job plus a few for River.
	Workers int
	// MaxAttempts caps the attempts of the jobs this client enqueues
	// (River stores it in each job row at insert, so it is the enqueuer's
	// setting that counts). Default 8: with River's attempt^4-second
	// backoff, about 1.3 hours of retrying.
	MaxAttempts int
	// JobTimeout cancels a job's context after this long (default 30 min).
	JobTimeout time.Duration
	// RescueStuckJobsAfter is how long a job may stay "running" before the
	// leader's rescuer presumes its worker dead and schedules a retry, which
	// counts as an attempt (default 1 h, or twice JobTimeout if that is
	// longer). It must exceed JobTimeout: a live worker's job must
	// never outlive it, or it would run twice (the duplicate result is
	// still prevented, see ErrJobLost, but the scan is wasted). Every
	// worker of one queue should use the same value: the leader's counts.
	RescueStuckJobsAfter time.Duration
	// Retention is how long completed and discarded job rows are kept
	// (default 30 days; -1 keeps them forever). A completed job blocks
	// re-enqueueing its key only while its row exists, and Discarded shows
	// only what is retained.
	Retention time.Duration
	// Logger receives River's logs (default slog.Default()).
	Logger *slog.Logger
}

// Client enqueues scan jobs and, with a Handler, works them.
type Client struct {
	pool    *pgxpool.Pool
	schema  string
	handler Handler
	logger  *slog.Logger
	river   *river.Client[pgx.Tx]
}

// River requires its own schema names to be plain identifiers.
var schemaRE = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

func validSchema(schema string) error {
	if schema != "" && !schemaRE.MatchString(schema) {
		return fmt.Errorf("queue schema %q: not a plain identifier", schema)
	}
	return nil
}

// NewClient builds a client on pool. It does not start working: call Start.
func NewClient(pool *pgxpool.Pool, cfg Config) (*Client, error) {
	if err := validSchema(cfg.Schema); err != nil {
		return nil, err
	}
	if cfg.Workers == 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.MaxAttempts == 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.JobTimeout == 0 {
		cfg.JobTimeout = DefaultJobTimeout
	}
	if cfg.RescueStuckJobsAfter == 0 {
		cfg.RescueStuckJobsAfter = max(DefaultRescueStuckJobsAfter, 2*cfg.JobTimeout)
	}
	if cfg.Retention == 0 {
		cfg.Retention = DefaultRetention
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	switch {
	case cfg.Workers < 0:
		return nil, fmt.Errorf("queue: Workers = %d, want > 0", cfg.Workers)
	case cfg.MaxAttempts < 0:
		return nil, fmt.Errorf("queue: MaxAttempts = %d, want > 0", cfg.MaxAttempts)
	case cfg.JobTimeout < 0:
		return nil, fmt.Errorf("queue: JobTimeout = %s, want > 0", cfg.JobTimeout)
	case cfg.RescueStuckJobsAfter <= cfg.JobTimeout:
		return nil, fmt.Errorf("queue: RescueStuckJobsAfter (%s) must exceed JobTimeout (%s), or live jobs would be rescued",
			cfg.RescueStuckJobsAfter, cfg.JobTimeout)
	}
	if cfg.Handler != nil {
		if need := int32(cfg.Workers + 3); pool.Config().MaxConns < need {
			cfg.Logger.Warn("queue: the pool may be too small: each running job holds a connection",
				"max_conns", pool.Config().MaxConns, "want_at_least", need)
		}
	}

	c := &Client{pool: pool, schema: cfg.Schema, handler: cfg.Handler, logger: cfg.Logger}
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, &scanWorker{c: c}); err != nil {
		return nil, fmt.Errorf("queue: register scan worker: %w", err)
	}
	rcfg := &river.Config{
		CompletedJobRetentionPeriod: cfg.Retention,
		DiscardedJobRetentionPeriod: cfg.Retention,
		JobTimeout:                  cfg.JobTimeout,
		Logger:                      cfg.Logger,
		MaxAttempts:                 cfg.MaxAttempts,
		RescueStuckJobsAfter:        cfg.RescueStuckJobsAfter,
		Schema:                      cfg.Schema,
		Workers:                     workers,
	}
	if cfg.Handler != nil {
		rcfg.Queues = map[string]river.QueueConfig{QueueScan: {MaxWorkers: cfg.Workers}}
	}
	rc, err := river.NewClient(riverpgxv5.New(pool), rcfg)
	if err != nil {
		return nil, fmt.Errorf("queue: new river client: %w", err)
	}
	c.river = rc
	return c, nil
}

// Start starts fetching and working jobs until ctx is done or Stop.
func (c *Client) Start(ctx context.Context) error {
	if c.handler == nil {
		return ErrNoHandler
	}
	if err := c.river.Start(ctx); err != nil {
		return fmt.Errorf("queue: start: %w", err)
	}
	return nil
}

// Stop stops fetching and waits for running jobs to finish (their results
// commit as usual) or for ctx to end, whichever is first. A job cut short
// by a process exit is rescued after RescueStuckJobsAfter.
func (c *Client) Stop(ctx context.Context) error {
	if c.handler == nil {
		return nil
	}
	if err := c.river.Stop(ctx); err != nil {
		return fmt.Errorf("queue: stop: %w", err)
	}
	return nil
}

// insertBatch bounds one InsertMany, which is one transaction.
const insertBatch = 1000

// Enqueue submits jobs and reports how many were new and how many were
// duplicates of a job already queued, running or completed (or of an
// earlier entry in jobs). Each batch of up to 1000 jobs is one
// transaction; if Enqueue fails part way, running it again with the same
// jobs inserts only what is missing.
func (c *Client) Enqueue(ctx context.Context, jobs []ScanArgs) (inserted, duplicates int, err error) {
	seen := make(map[[3]string]bool, len(jobs))
	params := make([]river.InsertManyParams, 0, min(len(jobs), insertBatch))
	flush := func() error {
		if len(params) == 0 {
			return nil
		}
		res, err := c.river.InsertMany(ctx, params)
		if err != nil {
			return fmt.Errorf("queue: enqueue %d scan jobs: %w", len(params), err)
		}
		for _, r := range res {
			if r.UniqueSkippedAsDuplicate {
				duplicates++
			} else {
				inserted++
			}
		}
		params = params[:0]
		return nil
	}
	for _, a := range jobs {
		if err := a.validate(); err != nil {
			return inserted, duplicates, err
		}
		// One INSERT cannot hit the same unique key twice, so duplicates
		// within the list are counted here and never sent.
		if seen[a.key()] {
			duplicates++
			continue
		}
		seen[a.key()] = true
		params = append(params, river.InsertManyParams{Args: a})
		if len(params) == insertBatch {
			if err := flush(); err != nil {
				return inserted, duplicates, err
			}
		}
	}
	if err := flush(); err != nil {
		return inserted, duplicates, err
	}
	return inserted, duplicates, nil
}

// DiscardedJob is a scan job River gave up on, with the reason.
type DiscardedJob struct {
	ID int64
	// State is "discarded" (attempts exhausted) or "cancelled" (the
	// handler returned a Cancel error).
	State         string
	Target        string
	RubricVersion string
	ToolVersion   string
	Attempts      int
	// LastError is the last attempt's error; Errors has every attempt's,
	// oldest first ("Stuck job rescued by JobRescuer" marks an attempt
	// whose worker died or outlived RescueStuckJobsAfter).
	LastError   string
	Errors      []string
	DiscardedAt time.Time
}

// Discarded lists the retained discarded and cancelled scan jobs, oldest
// first, so an operator can see why they failed and re-enqueue them once
// fixed.
func (c *Client) Discarded(ctx context.Context) ([]DiscardedJob, error) {
	params := river.NewJobListParams().
		Kinds(KindScan).
		States(rivertype.JobStateDiscarded, rivertype.JobStateCancelled).
		OrderBy(river.JobListOrderByID, river.SortOrderAsc).
		First(1000)
	var out []DiscardedJob
	for {
		res, err := c.river.JobList(ctx, params)
		if err != nil {
			return nil, fmt.Errorf("queue: list discarded jobs: %w", err)
		}
		for _, j := range res.Jobs {
			d, err := discardedJob(j)
			if err != nil {
				return nil, err
			}
			out = append(out, d)
		}
		if len(res.Jobs) < 1000 {
			return out, nil
		}
		params = params.After(res.LastCursor)
	}
}

func discardedJob(j *rivertype.JobRow) (DiscardedJob, error) {
	var a ScanArgs
	if err := json.Unmarshal(j.EncodedArgs, &a); err != nil {
		return DiscardedJob{}, fmt.Errorf("queue: job %d args: %w", j.ID, err)
	}
	d := DiscardedJob{
		ID:            j.ID,
		State:         string(j.State),
		Target:        a.Target,
		RubricVersion: a.RubricVersion,
		ToolVersion:   a.ToolVersion,
		Attempts:      j.Attempt,
	}
	for _, e := range j.Errors {
		d.Errors = append(d.Errors, e.Error)
	}
	if n := len(d.Errors); n > 0 {
		d.LastError = d.Errors[n-1]
	}
	if j.FinalizedAt != nil {
		d.DiscardedAt = *j.FinalizedAt
	}
	return d, nil
}

// scanWorker adapts a Handler to River.
type scanWorker struct {
	river.WorkerDefaults[ScanArgs]
	c *Client
}

func (w *scanWorker) Work(ctx context.Context, job *river.Job[ScanArgs]) error {
	tx, err := w.c.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("scan %s: begin: %w", job.Args.Target, err)
	}
	// Rolls back everything the handler wrote unless the commit below ran;
	// it must run even when ctx is already done.
	defer tx.Rollback(context.WithoutCancel(ctx))

	herr := w.c.handler(ctx, tx, job.Args)
	var perm *PermanentError
	var cancel *CancelError
	if errors.As(herr, &cancel) {
		w.c.logger.WarnContext(ctx, "queue: job cancelled, not retried",
			"target", job.Args.Target, "job_id", job.ID, "error", cancel.Err)
		return river.JobCancel(fmt.Errorf("scan %s: %w", job.Args.Target, cancel.Err))
	}
	if herr != nil && !errors.As(herr, &perm) {
		return fmt.Errorf("scan %s: %w", job.Args.Target, herr)
	}
	if err := w.c.holdJob(ctx, tx, job.JobRow); err != nil {
		return fmt.Errorf("scan %s: %w", job.Args.Target, err)
	}
	if _, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job); err != nil {
		return fmt.Errorf("scan %s: complete job: %w", job.Args.Target, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("scan %s: commit result: %w", job.Args.Target, err)
	}
	if perm != nil {
		w.c.logger.InfoContext(ctx, "queue: package failure recorded as its result, not retried",
			"target", job.Args.Target, "job_id", job.ID, "error", perm.Err)
	}
	return nil
}

// holdJob locks the job's row in tx and checks that it is still running
// under this attempt. River's JobCompleteTx completes any running job and
// returns the row even when it changed nothing, so on its own it cannot
// stop a worker that the rescuer presumed dead (a long pause, a partition)
// from committing a second result after the job was handed to another
// worker. The row lock orders two such commits; the attempt number, which
// River increments on every fetch, tells whose turn it is.
func (c *Client) holdJob(ctx context.Context, tx pgx.Tx, job *rivertype.JobRow) error {
	table := pgx.Identifier{"river_job"}
	if c.schema != "" {
		table = pgx.Identifier{c.schema, "river_job"}
	}
	var state string
	var attempt int
	err := tx.QueryRow(ctx, "SELECT state::text, attempt FROM "+table.Sanitize()+" WHERE id = $1 FOR UPDATE", job.ID).
		Scan(&state, &attempt)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%w: job %d is gone", ErrJobLost, job.ID)
	}
	if err != nil {
		return fmt.Errorf("lock job %d: %w", job.ID, err)
	}
	if state != string(rivertype.JobStateRunning) || attempt != job.Attempt {
		// Returning an error, not nil, matters: nil would let River mark a
		// job completed that another worker is running, and that worker's
		// result would then be refused. An error at worst makes River
		// schedule one more attempt.
		return fmt.Errorf("%w: job %d is %s at attempt %d, this worker ran attempt %d",
			ErrJobLost, job.ID, state, attempt, job.Attempt)
	}
	return nil
}

// Counts are the retained scan jobs by state: Pending counts the jobs not
// yet finished (available, scheduled, retryable, pending, running).
type Counts struct {
	Pending   int
	Running   int
	Completed int
	Discarded int
	Cancelled int
}

// Count counts the retained scan jobs by state.
func (c *Client) Count(ctx context.Context) (Counts, error) {
	table := pgx.Identifier{"river_job"}
	if c.schema != "" {
		table = pgx.Identifier{c.schema, "river_job"}
	}
	rows, err := c.pool.Query(ctx, "SELECT state::text, count(*) FROM "+table.Sanitize()+" WHERE kind = $1 GROUP BY state", KindScan)
	if err != nil {
		return Counts{}, fmt.Errorf("queue: count jobs: %w", err)
	}
	defer rows.Close()
	var n Counts
	for rows.Next() {
		var state string
		var k int
		if err := rows.Scan(&state, &k); err != nil {
			return Counts{}, fmt.Errorf("queue: count jobs: %w", err)
		}
		switch rivertype.JobState(state) {
		case rivertype.JobStateCompleted:
			n.Completed += k
		case rivertype.JobStateDiscarded:
			n.Discarded += k
		case rivertype.JobStateCancelled:
			n.Cancelled += k
		case rivertype.JobStateRunning:
			n.Running += k
			n.Pending += k
		default:
			n.Pending += k
		}
	}
	if err := rows.Err(); err != nil {
		return Counts{}, fmt.Errorf("queue: count jobs: %w", err)
	}
	return n, nil
}

// migrateLockClass namespaces this package's advisory lock (two-key form)
// away from others in the same database.
const migrateLockClass = 0x76_6d_71 // "vmq"

// Migrate brings River's tables in schema (empty: the search_path) up to
// date. It is idempotent, and safe when many workers start at once: an
// advisory lock runs one migration at a time per schema.
//
// River's migrator logs what it applies to logger (nil: slog.Default()).
func Migrate(ctx context.Context, pool *pgxpool.Pool, schema string, logger ...*slog.Logger) error {
	if err := validSchema(schema); err != nil {
		return err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("queue migrate: acquire connection: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1, hashtext($2))", migrateLockClass, schema); err != nil {
		return fmt.Errorf("queue migrate: lock: %w", err)
	}
	defer func() {
		// A session lock outlives a failed unlock, so then the connection
		// goes rather than back to the pool still holding it.
		ctx := context.WithoutCancel(ctx)
		if _, err := conn.Exec(ctx, "SELECT pg_advisory_unlock($1, hashtext($2))", migrateLockClass, schema); err != nil {
			conn.Conn().Close(ctx)
		}
	}()

	m, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{
		Schema: schema,
		// Its default logger writes to stdout, which belongs to the report.
		Logger: migrateLogger(logger),
	})
	if err != nil {
		return fmt.Errorf("queue migrate: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("queue migrate: %w", err)
	}
	return nil
}

func migrateLogger(l []*slog.Logger) *slog.Logger {
	if len(l) > 0 && l[0] != nil {
		return l[0]
	}
	return slog.Default()
}
