package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/verifymcp/verifymcp/report"
	"github.com/verifymcp/verifymcp/report/batchreport"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/pipeline"
	"github.com/verifymcp/verifymcp/pipeline/batch"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/store"
	"github.com/verifymcp/verifymcp/store/queue"
)

const noFleetDatabase = "the fleet needs a Postgres database: set VERIFYMCP_DATABASE_URL (or database_url in the config file) to its DSN, e.g. postgres://USER:PASSWORD@HOST:5432/DB"

// fleetDSN returns the fleet database's DSN, or a usage error naming how
// to set it.
func (g *globals) fleetDSN() (string, error) {
	dsn, err := g.databaseURL()
	if err != nil {
		return "", err
	}
	if dsn == "" {
		return "", usagef("%s", noFleetDatabase)
	}
	return dsn, nil
}

// openQueue connects a pool to the fleet database, brings River's tables
// up to date and builds a queue client on it.
func (g *globals) openQueue(ctx context.Context, dsn string, cfg queue.Config) (*pgxpool.Pool, *queue.Client, error) {
	pc, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, nil, usagef("%v", store.ErrInvalidDSN)
	}
	if pc.ConnConfig.ConnectTimeout == 0 {
		pc.ConnConfig.ConnectTimeout = 10 * time.Second
	}
	// A connection per running job, and a few for River's own work.
	pc.MaxConns = int32(max(cfg.Workers, 1) + 4)
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, nil, fmt.Errorf("queue: connect: %w", err)
	}
	if cfg.Logger == nil {
		cfg.Logger = g.log
	}
	// River's migrator says "No migrations to apply" at every start.
	quiet := slog.New(newProgressHandler(g.stderr, slog.LevelWarn))
	if err := queue.Migrate(ctx, pool, cfg.Schema, quiet); err != nil {
		pool.Close()
		return nil, nil, err
	}
	c, err := queue.NewClient(pool, cfg)
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	return pool, c, nil
}

// enqueueChunk is how many jobs `batch --enqueue` submits at a time.
const enqueueChunk = 100

// enqueueBatch resolves the batch's targets, skips those already stored,
// and submits the rest to the fleet's queue as they resolve.
func (g *globals) enqueueBatch(ctx context.Context, file string, lines []batch.Line, f *batchFlags) error {
	dsn, err := g.fleetDSN()
	if err != nil {
		return err
	}
	if f.maxAttempts < 1 || f.maxAttempts > 100 {
		return usagef("--max-attempts must be between 1 and 100, not %d", f.maxAttempts)
	}
	prog := newProgressBar(g.stderr, isTerminal(g.stderr), g.quiet)
	defer prog.Close()
	g.log = slog.New(newProgressHandler(prog, slog.LevelWarn))

	rb := rubric.Current()
	st, _, p, _, closeAll, err := g.openScanning(ctx, &f.scan, rb)
	if err != nil {
		return err
	}
	defer closeAll()
	pool, client, err := g.openQueue(ctx, dsn, queue.Config{Schema: f.queueSchema, MaxAttempts: f.maxAttempts})
	if err != nil {
		return err
	}
	defer pool.Close()

	items := batch.NewItems(lines)
	prog.Begin(len(items))
	// Each job is made as its target resolves, holding only what a worker
	// needs, and submitted with the next enqueueChunk: workers start on
	// the first jobs while the rest of a long list resolves.
	jl := batch.NewJobList(Version, rb.Version)
	var inserted, dups int
	submit := func() error {
		n, d, err := client.Enqueue(ctx, jl.Jobs)
		inserted, dups = inserted+n, dups+d
		jl.Jobs = jl.Jobs[:0]
		return err
	}
	var jobErr error
	err = batch.Resolve(ctx, p, st, Version, rb.Version, items, false, func(it *batch.Item) { prog.Finish(it, false) }, func(it *batch.Item) bool {
		if jobErr = jl.Add(it); jobErr == nil && len(jl.Jobs) >= enqueueChunk {
			jobErr = submit()
		}
		if jobErr != nil {
			return false
		}
		prog.Finish(it, false)
		return true
	})
	if err == nil {
		err = jobErr
	}
	if err == nil {
		err = submit()
	}
	if err != nil {
		if inserted > 0 {
			return fmt.Errorf("%w (%d jobs were enqueued before the failure; running the same command again submits only what is missing)", err, inserted)
		}
		return err
	}
	prog.Close()

	sum := batch.EnqueueSummary{SchemaVersion: batch.EnqueueSchemaVersion, File: file, ToolVersion: Version, RubricVersion: rb.Version, Targets: items}
	batch.CountEnqueued(&sum, inserted, dups)
	if err := g.writeEnqueueSummary(sum, f.scan.format, f.scan.output); err != nil {
		return err
	}
	return batch.Stopped(items, file, "enqueued (fix them and run the command again)")
}

func (g *globals) writeEnqueueSummary(s batch.EnqueueSummary, format, output string) error {
	f, err := checkFormat(report.OutputOther, format)
	if err != nil {
		return err
	}
	return g.writeOutput(output, func(w io.Writer) error { return batchreport.WriteEnqueue(w, f, s) })
}

type workerFlags struct {
	scan        scanFlags
	concurrency int
	jobTimeout  time.Duration
	rescue      time.Duration
	untilDone   bool
	queueSchema string
}

func newWorkerCmd(g *globals) *cobra.Command {
	f := &workerFlags{}
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Pull scan jobs from the fleet's Postgres queue and run them on this machine's Docker engine",
		Long: `Run scan jobs that ` + "`batch --enqueue`" + ` submitted to the fleet's queue, on this
machine's Docker engine, and save each result in the fleet's Postgres store.
Run one worker per machine, on as many machines as you like; they share the
database named by VERIFYMCP_DATABASE_URL (or database_url in the config file),
which holds the run store, the answer cache and the queue (River).

Each job's result and the job's completion commit in one transaction, so a
job has exactly one stored run. A worker that dies mid-job (killed, machine
lost) leaves its job running until --rescue-after, when another worker takes
it and writes the one result.

What happens to a job:
  scanned (any sandbox outcome, install_failed included)  completed; the run is stored
  already stored (same artefact, inputs, tool, rubric)    completed; nothing new stored
  target gone, or resolves to another artefact, bad --bin  cancelled, reason recorded
  engine, registry or database failure                     retried with backoff on any
                                                           worker, then discarded with
                                                           every attempt's error
  job for another tool or rubric version                   retried, for a worker that
                                                           runs that version
` + "`verifymcp queue status`" + ` shows the counts and every discarded or cancelled job.

The sandbox flags apply to every scan this worker runs. SIGINT or SIGTERM
stops fetching and lets running jobs finish; a second one abandons them
(they are rolled back and rescued later). --until-done exits once no scan
job is pending or running anywhere in the fleet.

` + exitCodesHelp,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.runWorker(cmd.Context(), f)
		},
	}
	fl := cmd.Flags()
	fl.IntVarP(&f.concurrency, "concurrency", "j", 1, "jobs this worker runs at once")
	fl.DurationVar(&f.jobTimeout, "job-timeout", queue.DefaultJobTimeout, "cancel a job (and retry it later) after this long")
	fl.DurationVar(&f.rescue, "rescue-after", queue.DefaultRescueStuckJobsAfter, "a job running this long is presumed to belong to a dead worker and handed to another (must exceed --job-timeout; use the same value on every worker)")
	fl.BoolVar(&f.untilDone, "until-done", false, "exit once no scan job is pending or running in the queue")
	fl.StringVar(&f.queueSchema, "queue-schema", "", "Postgres schema of the queue's tables (default: the DSN's search_path)")
	bindSandboxFlags(fl, &f.scan)
	return cmd
}

func (g *globals) runWorker(ctx context.Context, f *workerFlags) error {
	sf := &f.scan
	if f.concurrency < 1 || f.concurrency > 64 {
		return usagef("--concurrency must be between 1 and 64, not %d", f.concurrency)
	}
	if f.jobTimeout <= 0 || f.rescue <= f.jobTimeout {
		return usagef("--job-timeout must be positive and --rescue-after (%s) longer than it (%s)", f.rescue, f.jobTimeout)
	}
	mem, err := checkSandboxFlags(sf)
	if err != nil {
		return err
	}
	dsn, err := g.fleetDSN()
	if err != nil {
		return err
	}

	// The first interrupt stops fetching jobs and lets running ones finish;
	// a second abandons them.
	hard, interruptC, stopWatch := twoStage(ctx, nil, func() {
		g.log.Warn("second interrupt: abandoning running jobs; they are rolled back and rescued by another worker")
	})
	defer stopWatch()

	rb := rubric.Current()
	st, dataDir, p, ca, closeAll, err := g.openScanning(hard, sf, rb)
	if err != nil {
		return err
	}
	defer closeAll()
	bs := &batch.Scans{Pipeline: p, Spread: f.scan.idle}
	session, err := g.prepareSandbox(hard, p, sf, dataDir, p.Resolver().Registry(), ca, mem, func() error { return nil })
	if err != nil {
		return err
	}
	defer session.Close()
	bs.Session = session
	// Each job finds its observer started.
	defer g.startAhead(hard, p, bs, f.concurrency, -1)()

	w := &batch.Worker{Scans: bs, Store: st, ToolVersion: Version, RubricVersion: rb.Version, Logger: g.log, Concurrency: f.concurrency,
		Saver: func(tx pgx.Tx) pipeline.Saver { return pipeline.StoreSaver{Store: txStore{st, tx}} }}
	// River reports its own workings (job counts every few seconds, client
	// ids) at info: only its warnings show, unless --verbose.
	riverLog := slog.New(newProgressHandler(g.stderr, slog.LevelWarn))
	if g.verbose {
		riverLog = g.log
	}
	pool, client, err := g.openQueue(hard, dsn, queue.Config{
		Schema: f.queueSchema, Handler: w.Handle, Workers: f.concurrency,
		JobTimeout: f.jobTimeout, RescueStuckJobsAfter: f.rescue, Logger: riverLog,
	})
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := client.Start(hard); err != nil {
		return err
	}
	g.log.Info("worker started", "store", st.Path(), "concurrency", f.concurrency, "tool", Version, "rubric", rb.Version)

	var tick <-chan time.Time
	if f.untilDone {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		tick = t.C
	}
	interrupted := false
wait:
	for {
		select {
		case <-interruptC:
			interrupted = true
			break wait
		case <-tick:
			n, err := client.Count(hard)
			if err != nil {
				g.log.Warn("could not count the queue's jobs", "err", err)
				continue
			}
			if n.Pending == 0 {
				break wait
			}
		}
	}
	if interrupted {
		g.log.Warn("stopping: no new job starts; running jobs finish (interrupt again to abandon them)")
	}
	stopErr := client.Stop(hard)
	g.log.Info("worker stopped", "jobs", w.Jobs(), "saved", w.Saved())
	if interrupted {
		return context.Canceled
	}
	return stopErr
}

// txStore saves a job's run in the job's transaction, so that the result
// and the job's completion commit together. The lockfile is content
// addressed and immutable: saved outside it, harmless if the job rolls
// back.
type txStore struct {
	*store.Store
	tx pgx.Tx
}

func (t txStore) SaveRun(ctx context.Context, bundleJSON []byte, b *evidence.Bundle, res rubric.Result) error {
	return t.SaveRunTx(ctx, t.tx, bundleJSON, b, res)
}

// PinFirst pins a saved first scan in the job's transaction, beside its run.
func (t txStore) PinFirst(ctx context.Context, id store.Identity, runID string, at time.Time) (*store.Pin, bool, error) {
	return t.PinFirstTx(ctx, t.tx, id, runID, at)
}

type queueFlags struct {
	format      string
	queueSchema string
}

func newQueueCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "queue",
		Short: "Inspect the fleet's scan queue",
		Args:  noArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	f := &queueFlags{}
	status := &cobra.Command{
		Use:   "status",
		Short: "Count the queue's scan jobs by state and list the discarded and cancelled ones with their reasons",
		Long: `Count the scan jobs in the fleet's queue (VERIFYMCP_DATABASE_URL or
database_url) by state: pending (available, scheduled, retryable, running),
running, completed, discarded (attempts exhausted by infrastructure
failures) and cancelled (no retry could help: the target is gone or changed).
Discarded and cancelled jobs are listed with every attempt's error; running
the same ` + "`batch --enqueue`" + ` again re-submits exactly them.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.queueStatus(cmd.Context(), f)
		},
	}
	status.Flags().StringVar(&f.format, "format", "table", "output format: table or json")
	status.Flags().StringVar(&f.queueSchema, "queue-schema", "", "Postgres schema of the queue's tables (default: the DSN's search_path)")
	cmd.AddCommand(status)
	return cmd
}

func (g *globals) queueStatus(ctx context.Context, f *queueFlags) error {
	format, err := checkFormat(report.OutputOther, f.format)
	if err != nil {
		return err
	}
	dsn, err := g.fleetDSN()
	if err != nil {
		return err
	}
	pool, client, err := g.openQueue(ctx, dsn, queue.Config{Schema: f.queueSchema})
	if err != nil {
		return err
	}
	defer pool.Close()
	n, err := client.Count(ctx)
	if err != nil {
		return err
	}
	failed, err := client.Discarded(ctx)
	if err != nil {
		return err
	}
	return batchreport.WriteQueueStatus(g.stdout, format, batch.QueueStatus{Pending: n.Pending, Running: n.Running, Completed: n.Completed, Discarded: n.Discarded, Cancelled: n.Cancelled, Failed: failed})
}
