package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/verifymcp/verifymcp/report/batchreport"

	"github.com/spf13/cobra"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/pipeline"
	"github.com/verifymcp/verifymcp/pipeline/batch"
	"github.com/verifymcp/verifymcp/report"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/store"
	"github.com/verifymcp/verifymcp/store/queue"
	"github.com/verifymcp/verifymcp/supplychain"
)

type batchFlags struct {
	scan        scanFlags
	concurrency int
	rescan      bool
	enqueue     bool
	maxAttempts int
	queueSchema string
}

func newBatchCmd(g *globals) *cobra.Command {
	f := &batchFlags{}
	cmd := &cobra.Command{
		Use:   "batch FILE",
		Short: "Scan a list of targets, N at a time, resuming where an earlier run of the list stopped",
		Long: `Scan every target listed in FILE through the same pipeline as scan, saving
each run like scan does, and print a summary.

FILE holds one target per line, in any form scan accepts (npm:NAME@VERSION,
pypi:NAME==VERSION, uvx:NAME, pkg:npm/... or pkg:pypi/..., an MCP registry
name, a path to a .tgz, .whl or sdist, relative to FILE's directory),
optionally followed by per-target options, as on scan's command line:
  --bin NAME  --arg VALUE (repeatable, in order)  --env NAME=VALUE (repeatable)
Words are separated by blanks; quote a value holding blanks with ' or ".
Blank lines and everything from a word starting with # are ignored.
A malformed line stops the batch before anything runs (exit 2, FILE:LINE).

Targets are resolved a few at a time, in FILE's order, a little ahead of
the scans: the first scan starts as soon as its target resolves, and a long
list holds only a window of resolved targets. One that does not resolve (a
typo, a missing version) is counted as failed and the others go on.
A target is skipped when the store already holds a result for the same
artefact (name, version and integrity), the same --arg/--env names/--bin,
this tool version and the rubric version in force: running the same batch
again does only what is missing. The other flags (limits, timeouts,
--no-behavior, --skip) are not part of that key. --rescan scans every
target again all the same.

A target that could not be scanned because of the environment (the
sandbox could not verify the registry's TLS certificate, resolve or reach
the registry; the engine failed) stores nothing, so the next run of the
batch tries it again. Such a fault stops the batch: no new target starts,
the scans in flight finish, and the batch exits 4 (registry, network) or
5 (engine) with the cause and the fix.

--concurrency N scans run at once on the one Docker engine, sharing one
prepared sandbox. Progress goes to stderr: a bar with counts and an ETA on
a terminal, one line per finished target otherwise. The summary goes to
stdout: completed, failed by sandbox outcome or error, skipped.

The first SIGINT or SIGTERM starts no new target and lets the scans in
flight finish and be saved; a second abandons them (their containers,
networks and volumes are removed). Either way the exit code is 130 and the
store holds every scan that finished. A killed process loses at most the
scans in flight: each result is saved in one transaction, and the next
scan or batch that prepares the sandbox removes what it left on the engine.

Exit codes: as below; when every target was scanned, skipped or failed as a
package (install_failed, start_crashed, ...) the batch exits 0; when a
target could not be scanned, with the code of the first such target in
FILE's order (3 not found, 4 registry, 5 engine, ...).

With --enqueue the batch scans nothing here: it resolves every target,
skips those already stored, and submits the rest, a hundred at a time as
they resolve, as jobs to the fleet's Postgres queue (VERIFYMCP_DATABASE_URL
or database_url), for
` + "`verifymcp worker`" + ` on any number of machines. A job is keyed by target,
rubric version and tool version: submitting the same list again adds
nothing that is queued, running or done, and re-submits what was discarded
or cancelled. A tarball is submitted by its absolute path, which every
worker must be able to read, and its digest. --env values travel in the
job row: give servers placeholders, never real credentials.

` + exitCodesHelp,
		Args: exactArgs(1, "exactly one FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.runBatch(cmd.Context(), args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.IntVarP(&f.concurrency, "concurrency", "j", 1, "scans in flight at once")
	fl.BoolVar(&f.rescan, "rescan", false, "scan every target again, even one whose result is stored (the new run is saved beside the old)")
	fl.BoolVar(&f.enqueue, "enqueue", false, "submit the targets to the fleet's queue for `verifymcp worker` instead of scanning them here")
	fl.IntVar(&f.maxAttempts, "max-attempts", queue.DefaultMaxAttempts, "with --enqueue: attempts of a job failing for infrastructure reasons before it is discarded")
	fl.StringVar(&f.queueSchema, "queue-schema", "", "with --enqueue: Postgres schema of the queue's tables (default: the DSN's search_path)")
	fl.StringVar(&f.scan.format, "format", "table", "summary format: table or json; sarif writes the findings of every target's run as one SARIF 2.1.0 file instead")
	fl.StringVarP(&f.scan.output, "output", "o", "", "write the summary to this file instead of stdout")
	bindGateFlags(fl, &f.scan.gate)
	bindSandboxFlags(fl, &f.scan)
	return cmd
}

func (g *globals) runBatch(ctx context.Context, file string, f *batchFlags) error {
	sf := &f.scan
	sarif := sf.format == string(report.FormatSARIF)
	if !sarif {
		if _, err := checkFormat(report.OutputOther, sf.format); err != nil {
			return err
		}
	}
	pol, err := g.policy(&sf.gate)
	if err != nil {
		return err
	}
	if f.concurrency < 1 || f.concurrency > 64 {
		return usagef("--concurrency must be between 1 and 64, not %d", f.concurrency)
	}
	mem, err := checkSandboxFlags(sf)
	if err != nil {
		return err
	}
	lines, err := batch.ReadFile(file)
	if err != nil {
		return usageError{err}
	}
	if err := checkOutput(sf.output); err != nil {
		return err
	}
	if f.enqueue {
		if f.rescan {
			return usagef("--rescan does not apply to --enqueue: a job is keyed by target, tool and rubric version, and a worker skips what is stored")
		}
		return g.enqueueBatch(ctx, file, lines, f)
	}
	sum, items, err := g.scanLines(ctx, file, lines, f, mem)
	if err != nil {
		return err
	}
	var gateErr error
	if sarif || pol.FailOn != "" {
		// The findings of every stored run of the batch, under the
		// rubric in force, for the SARIF file and the gate.
		reps, err := g.batchReports(ctx, items)
		if err != nil {
			return err
		}
		var tripped []string
		for i := range reps {
			if err := gate(pol, &reps[i]); err != nil {
				for _, f := range reps[i].Summary.Gate.Tripped {
					tripped = append(tripped, reps[i].Target.Name+"@"+reps[i].Target.Version+": "+f)
				}
			}
		}
		if len(tripped) > 0 {
			gateErr = gateError{tripped: tripped}
		}
		if sarif {
			err = g.writeOutput(sf.output, func(w io.Writer) error {
				return report.WriteBatchSARIF(w, reps, rubric.Current(), report.DefaultSARIFOptions())
			})
		} else {
			err = g.writeBatchSummary(sum, sf.format, sf.output)
		}
		if err != nil {
			return err
		}
		// What to do about each code that failed the gate, per package
		// (the summary table has no room for it).
		for i := range reps {
			if err := report.WriteGateAdvice(g.stderr, reps[i], report.TableOptions{Width: writerWidth(g.stderr), Now: time.Now()}); err != nil {
				return err
			}
		}
	} else if err := g.writeBatchSummary(sum, sf.format, sf.output); err != nil {
		return err
	}
	if sum.Interrupted {
		return context.Canceled
	}
	if err := batch.Stopped(items, file, "scanned (run the batch again to retry them)"); err != nil {
		return err
	}
	return gateErr
}

// batchReports builds the report of every stored run a batch's items name
// (scanned now or skipped as stored), scored under the rubric in force.
func (g *globals) batchReports(ctx context.Context, items []*batch.Item) ([]report.Report, error) {
	st, _, err := g.openStore(ctx)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	rb := rubric.Current()
	reps := make([]report.Report, 0, len(items))
	for _, it := range items {
		if it.RunID == "" {
			continue
		}
		data, err := st.Bundle(ctx, it.RunID)
		if err != nil {
			return nil, err
		}
		b, err := evidence.Decode(data)
		if err != nil {
			return nil, fmt.Errorf("stored run %s: %w", it.RunID, err)
		}
		reps = append(reps, report.Build(b, rb, rubric.Evaluate(b, rb)))
	}
	return reps, nil
}

// scanLines scans the targets of a batch's lines (a batch file's, or the
// servers of client config files) as batch does: resolved a few ahead of
// the scans, resumable, with progress on stderr, the first interrupt letting the
// scans in flight finish. It returns the summary and its items; an
// interrupt before anything was scanned is context.Canceled.
func (g *globals) scanLines(ctx context.Context, file string, lines []batch.Line, f *batchFlags, mem int64) (batch.Summary, []*batch.Item, error) {
	sf := &f.scan
	started := time.Now()

	// Progress owns stderr: log records go through it, so that they never
	// tear the bar. The pipeline's own progress lines name no target, and
	// N scans would interleave them: below --verbose only warnings show.
	prog := newProgressBar(g.stderr, isTerminal(g.stderr), g.quiet)
	defer prog.Close()
	level := slog.LevelWarn
	if g.verbose {
		level = slog.LevelDebug
	}
	g.log = slog.New(newProgressHandler(prog, level))

	// The first interrupt only stops new targets from starting, unless
	// nothing is in flight yet; a second abandons the scans in flight.
	// drain closes when no new target may start: on an interrupt, or on an
	// environment fault (every other target would meet it too).
	drain := make(chan struct{})
	stopNew := sync.OnceFunc(func() { close(drain) })
	var scanning atomic.Bool
	var interrupted atomic.Bool
	hard, _, stopWatch := twoStage(ctx, func(abandon func()) {
		interrupted.Store(true)
		stopNew()
		if !scanning.Load() {
			abandon()
			return
		}
		prog.Note("interrupt: no new target starts; the scans in flight finish (interrupt again to abandon them)")
	}, func() { prog.Note("second interrupt: abandoning the scans in flight and removing their containers") })
	defer stopWatch()

	rb := rubric.Current()
	st, dataDir, p, ca, closeAll, err := g.openScanning(hard, sf, rb)
	if err != nil {
		return batch.Summary{}, nil, err
	}
	defer closeAll()

	items := batch.NewItems(lines)
	prog.Begin(len(items))
	save := g.storeSaver(st, dataDir)
	save.Detached = true
	bs := &batch.Scans{Pipeline: p, Save: save, Spread: f.scan.idle}

	// The targets resolve a few at a time, ahead of the scans, and each
	// one left to scan goes to the workers as it comes: the first scan
	// does not wait for the last lookup, and a long list holds only a
	// window of resolved artefacts. The sandbox is prepared when the first
	// target to scan comes: a batch whose targets are all stored needs no
	// engine. A worker's worth of targets wait resolved, so that the
	// observer of each is started a scan ahead of it (see startAhead).
	todo := make(chan *batch.Item, f.concurrency)
	var workers sync.WaitGroup
	var prepErr error
	closeAhead := func() {}
	err = batch.Resolve(hard, p, st, Version, rb.Version, items, f.rescan, func(it *batch.Item) { prog.Finish(it, false) }, func(it *batch.Item) bool {
		if !scanning.Load() {
			session, err := g.prepareSandbox(hard, p, sf, dataDir, p.Resolver().Registry(), ca, mem, func() error { return nil })
			if err != nil {
				prepErr = err
				return false
			}
			bs.Session = session
			// The first scan's observer is starting already; the next
			// ones start as their targets come, one per worker ahead.
			closeAhead = g.startAhead(hard, p, bs, f.concurrency, 0)
			scanning.Store(true)
			workers.Add(1)
			go func() {
				defer workers.Done()
				bs.ScanAll(hard, drain, stopNew, f.concurrency, todo, prog)
			}()
		} else if bs.Ahead != nil {
			bs.Ahead.Add(1)
		}
		select {
		case todo <- it:
			return true
		case <-drain:
			return false
		case <-hard.Done():
			return false
		}
	})
	switch {
	case err != nil && scanning.Load() && hard.Err() != nil:
		// The second interrupt: the summary says what was abandoned.
		err = nil
	case err != nil:
		// The store failed: no target waiting starts.
		stopNew()
	}
	close(todo)
	workers.Wait()
	defer func() {
		closeAhead()
		if bs.Session != nil {
			_ = bs.Session.Close()
		}
	}()
	if err == nil {
		err = prepErr
	}
	if err == nil && interrupted.Load() && !scanning.Load() {
		err = context.Canceled
	}
	if err != nil {
		if interrupted.Load() {
			return batch.Summary{}, nil, context.Canceled
		}
		return batch.Summary{}, nil, err
	}
	batch.NotStarted(items, prog)
	prog.Close()

	return batch.NewSummary(file, Version, rb, f.concurrency, started, interrupted.Load(), items), items, nil
}

// startAhead gives bs a pool of observers started ahead of its scans (see
// sandbox.Pool): size at a time, budget in all (negative: no limit; the
// pool's Add raises it). The returned function removes those not taken.
func (g *globals) startAhead(ctx context.Context, p *pipeline.Pipeline, bs *batch.Scans, size, budget int) func() {
	sb, ok := p.Scanner().(*sandbox.Sandbox)
	if !ok {
		return func() {}
	}
	// Its starts are paced as the workers' first scans are spread: one
	// every spread / size, so that observers do not all start at once.
	bs.Ahead = sb.NewPool(ctx, size, budget, bs.Spread/time.Duration(max(size, 1)), func() string { return pipeline.NewRunID(time.Now()) })
	return func() {
		if err := bs.Ahead.Close(context.WithoutCancel(ctx)); err != nil {
			g.log.Warn("could not remove the observers started ahead", "err", err)
		}
	}
}

// openScanning opens the store and builds the scan pipeline, as batch,
// its --enqueue and the worker need them; closeAll closes both.
func (g *globals) openScanning(ctx context.Context, sf *scanFlags, rb *rubric.Rubric) (*store.Store, string, *pipeline.Pipeline, *caBundle, func(), error) {
	st, dataDir, err := g.openStore(ctx)
	if err != nil {
		return nil, "", nil, nil, nil, err
	}
	p, ca, closeScanner, err := g.newScanPipeline(ctx, sf, dataDir, rb, st)
	if err != nil {
		st.Close()
		return nil, "", nil, nil, nil, err
	}
	return st, dataDir, p, ca, func() { closeScanner(); st.Close() }, nil
}

// newScanPipeline builds the pipeline batch and cases run scan with: the
// registry client and the third-party clients, as scan builds them. The
// sandbox is prepared later, and only when something is left to scan.
// pins (nil: none) keeps the pins of server identities.
func (g *globals) newScanPipeline(ctx context.Context, f *scanFlags, dataDir string, rb *rubric.Rubric, pins pipeline.Pins) (*pipeline.Pipeline, *caBundle, func(), error) {
	sc, err := g.newResolving(f, rb)
	if err != nil {
		return nil, nil, nil, err
	}
	closeFn, err := g.attachClients(ctx, sc, dataDir, pins)
	if err != nil {
		return nil, nil, nil, err
	}
	return sc.p, sc.ca, closeFn, nil
}

// scanConfig is a pipeline that can resolve targets, its configuration,
// and what its third-party clients are built from.
type scanConfig struct {
	p        *pipeline.Pipeline
	cfg      pipeline.Config
	ca       *caBundle
	sup      *supplyConfig
	registry string
}

// newResolving reads the configuration and builds a pipeline with its
// registry client only, so that resolution can start before the store and
// the caches are opened.
func (g *globals) newResolving(f *scanFlags, rb *rubric.Rubric) (*scanConfig, error) {
	cfg, _, err := loadConfig(g.config)
	if err != nil {
		return nil, err
	}
	if f.caBundle == "" {
		f.caBundle = cfg.CABundle
	}
	ca, err := loadCABundle(f.caBundle)
	if err != nil {
		return nil, err
	}
	sup, err := resolveSupply(f, cfg)
	if err != nil {
		return nil, err
	}
	registry := pick(f.registry, os.Getenv("VERIFYMCP_NPM_REGISTRY"), cfg.Registry, supplychain.DefaultNPMRegistry)
	indexURL, err := checkIndexURL(pick(f.indexURL, os.Getenv("VERIFYMCP_INDEX_URL"), cfg.IndexURL, supplychain.DefaultPyPIIndex))
	if err != nil {
		return nil, err
	}
	pc := pipeline.Config{Resolver: supplychain.NewNPM(httpClient(ca, 60*time.Second), registry), ToolVersion: Version, Logger: g.log, Rubric: rb,
		MCPRegistry: supplychain.NewMCPRegistry(httpClient(ca, 60*time.Second), pick(f.mcpRegistry, os.Getenv("VERIFYMCP_MCP_REGISTRY"), cfg.MCPRegistry)),
		PyPI:        supplychain.NewPyPI(httpClient(ca, 60*time.Second), indexURL)}
	p, err := pipeline.New(pc)
	if err != nil {
		return nil, err
	}
	return &scanConfig{p: p, cfg: pc, ca: ca, sup: sup, registry: registry}, nil
}

// attachClients opens the answer cache in dataDir and makes sc.p the
// pipeline with its third-party clients, the judge, the secrets to mask
// and pins (nil: none); the returned function closes the cache.
func (g *globals) attachClients(ctx context.Context, sc *scanConfig, dataDir string, pins pipeline.Pins) (func(), error) {
	answers, err := g.openAnswers(ctx, dataDir)
	if err != nil {
		return nil, err
	}
	c := sc.cfg
	c.Pins, c.Secrets = pins, sc.sup.secrets()
	if c.Supply, err = g.supplyClients(sc.sup, answers, sc.ca); err != nil {
		answers.Close()
		return nil, err
	}
	if c.Judge, err = judgeClient(sc.sup, answers, sc.ca); err != nil {
		answers.Close()
		return nil, err
	}
	if sc.p, err = pipeline.New(c); err != nil {
		answers.Close()
		return nil, err
	}
	sc.cfg = c
	return func() { answers.Close() }, nil
}

func (g *globals) writeBatchSummary(s batch.Summary, format, output string) error {
	f, err := checkFormat(report.OutputOther, format)
	if err != nil {
		return err
	}
	return g.writeOutput(output, func(w io.Writer) error {
		if err := batchreport.WriteBatch(w, f, s, g.tableOptions(output)); err != nil {
			return fmt.Errorf("write summary: %w", err)
		}
		return nil
	})
}
