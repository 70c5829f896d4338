package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/pipeline"
	"github.com/verifymcp/verifymcp/pipeline/batch"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/store"
	"github.com/verifymcp/verifymcp/store/queue"
	"github.com/verifymcp/verifymcp/supplychain"
)

// EnqueueSchemaVersion identifies the JSON form of a `batch --enqueue`
// summary.
const EnqueueSchemaVersion = "verifymcp.enqueue/v1"

// Target statuses of an enqueue summary (besides skipped and failed).
const (
	// batchSubmitted: sent to the queue, as a new job or as a duplicate of
	// a job already queued, running or completed (the totals say how many
	// of each).
	batchSubmitted = "submitted"
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

// jobOptions are what a scan job carries besides its key.
type jobOptions struct {
	// Integrity is the artefact the target resolved to when enqueued; the
	// worker refuses to scan anything else.
	Integrity string            `json:"integrity"`
	Bin       string            `json:"bin,omitempty"`
	Args      []string          `json:"args,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
}

// jobTarget is the queue's target string for a resolved item: the exact
// registry version, or a tarball's absolute path with its integrity after
// a '#', so that another tarball at the same path is another job.
func jobTarget(it *batch.Item) string {
	if it.Resolved.Source == "file" {
		return it.Resolved.Target.File + "#" + it.Resolved.Integrity
	}
	return "npm:" + it.Resolved.Name + "@" + it.Resolved.Version
}

// splitJobTarget undoes jobTarget's '#'.
func splitJobTarget(s string) string {
	if i := strings.LastIndex(s, "#sha"); i > 0 {
		return s[:i]
	}
	return s
}

type enqueueTotals struct {
	Targets int `json:"targets"`
	// Submitted = Enqueued + AlreadyQueued.
	Submitted     int `json:"submitted"`
	Enqueued      int `json:"enqueued"`
	AlreadyQueued int `json:"already_queued"`
	Skipped       int `json:"skipped"`
	Failed        int `json:"failed"`
}

type enqueueSummary struct {
	SchemaVersion string        `json:"schema_version"`
	File          string        `json:"file"`
	ToolVersion   string        `json:"tool_version"`
	RubricVersion string        `json:"rubric_version"`
	Totals        enqueueTotals `json:"totals"`
	Targets       []*batch.Item `json:"targets"`
}

// enqueueBatch resolves the batch's targets, skips those already stored,
// and submits the rest to the fleet's queue.
func (g *globals) enqueueBatch(ctx context.Context, file string, lines []batch.Line, f *batchFlags) error {
	dsn, err := g.fleetDSN()
	if err != nil {
		return err
	}
	if f.maxAttempts < 1 || f.maxAttempts > 100 {
		return usagef("--max-attempts must be between 1 and 100, not %d", f.maxAttempts)
	}
	prog := batch.NewProgress(g.stderr, batch.IsTerminal(g.stderr), g.quiet)
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
	todo, err := batch.Resolve(ctx, p, st, Version, rb.Version, items, func(it *batch.Item) { prog.Finish(it, false) }, false)
	if err != nil {
		return err
	}
	var jobs []queue.ScanArgs
	byTarget := map[string]*batch.Item{}
	for _, it := range todo {
		target := jobTarget(it)
		if other := byTarget[target]; other != nil {
			// The queue keys a job by target, rubric and tool version, so
			// a second variant would be taken for a duplicate.
			it.Fail(usagef("line %d enqueues %s with other --bin/--arg/--env options; the queue keys jobs by target, so scan variants of one target with a local batch", other.Line, target))
			prog.Finish(it, false)
			continue
		}
		byTarget[target] = it
		opts, err := json.Marshal(jobOptions{Integrity: it.Resolved.Integrity, Bin: it.Spec.Bin, Args: it.Spec.Args, Env: it.Spec.Env})
		if err != nil {
			return err
		}
		jobs = append(jobs, queue.ScanArgs{Target: target, RubricVersion: rb.Version, ToolVersion: Version, Options: opts})
		it.Status = batchSubmitted
		prog.Finish(it, false)
	}
	inserted, dups, err := client.Enqueue(ctx, jobs)
	if err != nil {
		return fmt.Errorf("%w (%d jobs were enqueued before the failure; running the same command again submits only what is missing)", err, inserted)
	}
	prog.Close()

	sum := enqueueSummary{SchemaVersion: EnqueueSchemaVersion, File: file, ToolVersion: Version, RubricVersion: rb.Version, Targets: items}
	t := &sum.Totals
	t.Targets, t.Enqueued, t.AlreadyQueued = len(items), inserted, dups
	for _, it := range items {
		switch it.Status {
		case batchSubmitted:
			t.Submitted++
		case batch.StatusSkipped:
			t.Skipped++
		default:
			t.Failed++
		}
	}
	if err := g.writeEnqueueSummary(sum, f.scan.format, f.scan.output); err != nil {
		return err
	}
	return batch.Stopped(items, file, "enqueued (fix them and run the command again)")
}

func (g *globals) writeEnqueueSummary(s enqueueSummary, format, output string) error {
	return g.writeOutput(output, func(w io.Writer) error {
		if format == "json" {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(s)
		}
		t := s.Totals
		fmt.Fprintf(w, "enqueued %d new scan jobs, %d already queued, running or done (tool %s, rubric %s)\n",
			t.Enqueued, t.AlreadyQueued, s.ToolVersion, s.RubricVersion)
		fmt.Fprintf(w, "targets %d: submitted %d, skipped %d (already stored or repeated), failed %d\n",
			t.Targets, t.Submitted, t.Skipped, t.Failed)
		if t.Failed > 0 {
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "LINE\tTARGET\tOUTCOME\tERROR")
			for _, it := range s.Targets {
				if it.Status == batch.StatusFailed {
					fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", it.Line, it.Target, it.Outcome, it.Error)
				}
			}
			tw.Flush()
		}
		fmt.Fprintln(w, "run `verifymcp worker` on each machine of the fleet; `verifymcp queue status` shows progress")
		return nil
	})
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

	// The first signal cancels ctx (Run's signal context): stop fetching,
	// let running jobs finish. A second cancels hard.
	hard, cancelHard := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelHard()
	sigC := make(chan os.Signal, 2)
	signal.Notify(sigC, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigC)

	rb := rubric.Current()
	st, dataDir, p, ca, closeAll, err := g.openScanning(hard, sf, rb)
	if err != nil {
		return err
	}
	defer closeAll()
	bs := &batch.Scans{Pipeline: p, FirstID: pipeline.NewRunID(time.Now())}
	engine, discard, err := g.prepareSandbox(hard, p, sf, dataDir, p.Resolver.Registry(), ca, mem, bs.FirstID, func() error { return nil })
	if err != nil {
		return err
	}
	defer engine.Close()
	defer func() {
		if !bs.UsedFirst() {
			discard()
		}
	}()

	w := &fleetWorker{g: g, bs: bs, st: st, rubricVersion: rb.Version}
	// River reports its own workings (job counts every few seconds, client
	// ids) at info: only its warnings show, unless --verbose.
	riverLog := slog.New(newProgressHandler(g.stderr, slog.LevelWarn))
	if g.verbose {
		riverLog = g.log
	}
	pool, client, err := g.openQueue(hard, dsn, queue.Config{
		Schema: f.queueSchema, Handler: w.handle, Workers: f.concurrency,
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
		case <-ctx.Done():
			interrupted = true
			break wait
		case <-sigC:
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
		go func() {
			select {
			case <-sigC:
				g.log.Warn("second interrupt: abandoning running jobs; they are rolled back and rescued by another worker")
				cancelHard()
			case <-hard.Done():
			}
		}()
	}
	stopErr := client.Stop(hard)
	g.log.Info("worker stopped", "jobs", w.done.Load(), "saved", w.saved.Load())
	if interrupted {
		return context.Canceled
	}
	return stopErr
}

// fleetWorker runs the queue's scan jobs.
type fleetWorker struct {
	g             *globals
	bs            *batch.Scans
	st            *store.Store
	rubricVersion string
	done, saved   atomic.Int64
}

// handle runs one scan job and saves its run in tx (see queue.Handler).
func (w *fleetWorker) handle(ctx context.Context, tx pgx.Tx, args queue.ScanArgs) error {
	defer w.done.Add(1)
	bs, log := w.bs, w.g.log.With("target", args.Target)
	if args.ToolVersion != Version || args.RubricVersion != w.rubricVersion {
		// Another worker of the fleet may run that version: retry.
		return fmt.Errorf("this worker runs verifymcp %s under rubric %s; the job was enqueued for verifymcp %s under rubric %s",
			Version, w.rubricVersion, args.ToolVersion, args.RubricVersion)
	}
	var o jobOptions
	if len(args.Options) > 0 {
		if err := json.Unmarshal(args.Options, &o); err != nil {
			return queue.Cancel(fmt.Errorf("the job's options do not parse: %v", err))
		}
	}
	target, err := pipeline.ParseTarget(splitJobTarget(args.Target))
	if err != nil {
		return queue.Cancel(err)
	}
	rt, err := bs.Pipeline.Resolve(ctx, target)
	switch {
	case err == nil:
	case errors.Is(err, supplychain.ErrPackageNotFound), errors.Is(err, supplychain.ErrVersionNotFound),
		errors.Is(err, pipeline.ErrBadTarget), errors.Is(err, pipeline.ErrUnsupported), errors.Is(err, supplychain.ErrBadName):
		return queue.Cancel(err)
	default:
		return err
	}
	if o.Integrity != "" && rt.Integrity != o.Integrity {
		return queue.Cancel(fmt.Errorf("%s@%s now resolves to %s, not to %s as when it was enqueued; nothing was scanned",
			rt.Name, rt.Version, rt.Integrity, o.Integrity))
	}
	it := &batch.Item{Resolved: rt, Spec: batch.Line{Target: target, Bin: o.Bin, Args: o.Args, Env: o.Env}}
	if rr, err := w.st.ResumeFind(ctx, it.ResumeKey(Version, w.rubricVersion)); err == nil {
		log.Info("already stored; nothing to scan", "run", rr.RunID)
		return nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}

	log.Info("scanning", "version", rt.Version)
	start := time.Now()
	ran, err := bs.Pipeline.Run(ctx, pipeline.Job{Target: rt, Options: pipeline.Options{RunID: bs.RunID(), Bin: o.Bin, Args: o.Args, Env: o.Env}},
		pipeline.StoreSaver{Store: txStore{w.st, tx}})
	switch {
	case err == nil:
	case ran != nil:
		return err // the save: retried
	case errors.Is(err, sandbox.ErrBadBin):
		return queue.Cancel(err)
	default:
		return err // the engine or the registry: retried
	}
	b, res := ran.Bundle, ran.Result
	w.saved.Add(1)
	score := "none"
	if res.Score != nil {
		score = fmt.Sprintf("%.1f", *res.Score)
	}
	log.Info("scanned", "outcome", b.Sandbox.Outcome, "run", b.Run.ID, "score", score, "took", time.Since(start).Round(100*time.Millisecond))
	if b.Sandbox.Outcome != evidence.OutcomeOK {
		return queue.Permanent(fmt.Errorf("sandbox outcome %s", b.Sandbox.Outcome))
	}
	return nil
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

type queueStatusJSON struct {
	Pending   int                  `json:"pending"`
	Running   int                  `json:"running"`
	Completed int                  `json:"completed"`
	Discarded int                  `json:"discarded"`
	Cancelled int                  `json:"cancelled"`
	Failed    []queue.DiscardedJob `json:"failed"`
}

func (g *globals) queueStatus(ctx context.Context, f *queueFlags) error {
	if _, err := checkFormat(f.format); err != nil {
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
	out := queueStatusJSON{Pending: n.Pending, Running: n.Running, Completed: n.Completed, Discarded: n.Discarded, Cancelled: n.Cancelled, Failed: failed}
	if out.Failed == nil {
		out.Failed = []queue.DiscardedJob{}
	}
	if f.format == "json" {
		enc := json.NewEncoder(g.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	fmt.Fprintf(g.stdout, "pending %d (running %d), completed %d, discarded %d, cancelled %d\n",
		out.Pending, out.Running, out.Completed, out.Discarded, out.Cancelled)
	if len(failed) > 0 {
		tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "JOB\tSTATE\tTARGET\tATTEMPTS\tLAST ERROR")
		for _, j := range failed {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\n", j.ID, j.State, j.Target, j.Attempts, oneLine(j.LastError))
		}
		tw.Flush()
	}
	return nil
}
