package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/pipeline"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/store"
	"github.com/verifymcp/verifymcp/store/queue"
	"github.com/verifymcp/verifymcp/supplychain"
)

// BatchSchemaVersion identifies the JSON form of a batch summary.
const BatchSchemaVersion = "verifymcp.batch/v1"

// Target statuses in a batch summary.
const (
	// batchCompleted: scanned now, saved, sandbox outcome ok.
	batchCompleted = "completed"
	// batchFailed: scanned now and saved with another sandbox outcome, or
	// not scanned because of an error (not found, registry, engine); only
	// the latter is tried again by the next run of the batch.
	batchFailed = "failed"
	// batchSkipped: a result for the same artefact, inputs, tool version
	// and rubric version was already stored, or the line repeats another.
	batchSkipped = "skipped"
	// batchAbandoned: in flight when a second interrupt came; nothing saved.
	batchAbandoned = "abandoned"
	// batchNotStarted: not started because of an interrupt.
	batchNotStarted = "not_started"
)

// resolveConcurrency bounds the registry lookups of the resolution pass.
const resolveConcurrency = 8

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
pkg:npm/NAME@VERSION, a path to a .tgz, relative to FILE's directory),
optionally followed by per-target options, as on scan's command line:
  --bin NAME  --arg VALUE (repeatable, in order)  --env NAME=VALUE (repeatable)
Words are separated by blanks; quote a value holding blanks with ' or ".
Blank lines and everything from a word starting with # are ignored.
A malformed line stops the batch before anything runs (exit 2, FILE:LINE).

Every target is resolved first (a few at a time); one that does not resolve
(a typo, a missing version) is counted as failed and the others go on.
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
skips those already stored, and submits the rest as jobs to the fleet's
Postgres queue (VERIFYMCP_DATABASE_URL or database_url), for
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
	fl.StringVar(&f.scan.format, "format", "table", "summary format: table or json")
	fl.StringVarP(&f.scan.output, "output", "o", "", "write the summary to this file instead of stdout")
	bindSandboxFlags(fl, &f.scan)
	return cmd
}

// batchLine is one target line of a batch file.
type batchLine struct {
	Line   int
	Target pipeline.Target
	Bin    string
	Args   []string
	Env    map[string]string
}

// readBatchFile reads and parses a batch file; every error is a usage
// error naming FILE:LINE.
func readBatchFile(path string) ([]batchLine, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("batch file: %v", err)
	}
	return parseBatch(data, path, filepath.Dir(path))
}

// parseBatch parses the lines of a batch file named name; relative tarball
// paths are taken from dir. It reports every malformed line, the first in
// full.
func parseBatch(data []byte, name, dir string) ([]batchLine, error) {
	var out []batchLine
	var bad []string
	var first error
	for i, text := range strings.Split(string(data), "\n") {
		bl, ok, err := parseBatchLine(strings.TrimSuffix(text, "\r"), dir)
		if err != nil {
			if first == nil {
				first = fmt.Errorf("%s:%d: %w", name, i+1, err)
			}
			bad = append(bad, fmt.Sprintf("%d", i+1))
			continue
		}
		if ok {
			bl.Line = i + 1
			out = append(out, bl)
		}
	}
	switch {
	case len(bad) > 1:
		return nil, usageError{fmt.Errorf("%w (and %d more malformed lines: %s)", first, len(bad)-1, strings.Join(bad[1:], ", "))}
	case first != nil:
		return nil, usageError{first}
	case len(out) == 0:
		return nil, usagef("%s: no target (want one per line: npm:NAME@VERSION, pkg:npm/NAME@VERSION or a .tgz path)", name)
	}
	return out, nil
}

// parseBatchLine parses one line; ok is false for a blank or comment line.
func parseBatchLine(text, dir string) (bl batchLine, ok bool, err error) {
	words, err := splitWords(text)
	if err != nil || len(words) == 0 {
		return bl, false, err
	}
	raw := words[0]
	if strings.HasPrefix(raw, "-") {
		return bl, false, fmt.Errorf("%q: the target comes first, then its options", raw)
	}
	if (strings.HasSuffix(raw, ".tgz") || strings.HasSuffix(raw, ".tar.gz")) && !filepath.IsAbs(raw) && !strings.Contains(raw, ":") {
		raw = filepath.Join(dir, raw)
	}
	if bl.Target, err = pipeline.ParseTarget(raw); err != nil {
		return bl, false, err
	}
	var env []string
	for i := 1; i < len(words); i++ {
		opt, val, hasVal := strings.Cut(words[i], "=")
		switch opt {
		case "--arg", "--bin", "--env":
		default:
			// Only the option's name: a value may be a secret.
			return bl, false, fmt.Errorf("unknown option %q (a line takes --bin NAME, --arg VALUE, --env NAME=VALUE)", opt)
		}
		if !hasVal {
			if i+1 >= len(words) {
				return bl, false, fmt.Errorf("%s needs a value", opt)
			}
			i++
			val = words[i]
		}
		switch opt {
		case "--arg":
			bl.Args = append(bl.Args, val)
		case "--bin":
			if bl.Bin != "" {
				return bl, false, errors.New("--bin given twice")
			}
			bl.Bin = val
		case "--env":
			env = append(env, val)
		}
	}
	if len(env) > 0 {
		if bl.Env, err = parseEnv(env); err != nil {
			return bl, false, err
		}
	}
	return bl, true, nil
}

// splitWords splits a line into blank-separated words. A word may be
// quoted with ' or " (no escapes inside); a word starting with # outside
// quotes starts a comment that runs to the end of the line.
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case r == '#' && !inWord:
			return words, nil
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote", quote)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// batchItem is one target of a batch and what became of it.
type batchItem struct {
	Line int `json:"line"`
	// Target is the target as written (a tarball path made absolute).
	Target    string `json:"target"`
	Name      string `json:"name,omitempty"`
	Version   string `json:"version,omitempty"`
	Integrity string `json:"integrity,omitempty"`
	Status    string `json:"status"`
	// Outcome is the sandbox outcome of a scanned or skipped target, or
	// the class of error that stopped a target (not_found, ...).
	Outcome string `json:"outcome,omitempty"`
	// Error says what went wrong for a target that could not be scanned.
	Error string `json:"error,omitempty"`
	// SkipReason says why a target was skipped: "stored" or "duplicate of
	// line N".
	SkipReason string `json:"skip_reason,omitempty"`
	// RunID names the stored run: the new one, or the one that made the
	// target skip.
	RunID string `json:"run_id,omitempty"`
	// Score is the composite under the rubric in force (null when every
	// dimension was dropped or nothing was stored).
	Score *float64 `json:"score"`
	// PhasesMS are the times of a scan made now, by phase (see
	// batchPhases).
	PhasesMS map[string]int64 `json:"phases_ms,omitempty"`

	line batchLine
	rt   *pipeline.Resolved
	err  error
}

// batchTotals are the counts of a summary. Targets = Completed + Failed +
// Skipped + Abandoned + NotStarted; Scanned counts the scans saved now.
type batchTotals struct {
	Targets    int `json:"targets"`
	Completed  int `json:"completed"`
	Failed     int `json:"failed"`
	Skipped    int `json:"skipped"`
	Abandoned  int `json:"abandoned"`
	NotStarted int `json:"not_started"`
	Scanned    int `json:"scanned"`
}

// phaseStat sums up one phase over the scans made now.
type phaseStat struct {
	N        int   `json:"n"`
	MedianMS int64 `json:"median_ms"`
	TotalMS  int64 `json:"total_ms"`
}

// batchSummary is what a batch reports on stdout.
type batchSummary struct {
	SchemaVersion string      `json:"schema_version"`
	File          string      `json:"file"`
	ToolVersion   string      `json:"tool_version"`
	RubricVersion string      `json:"rubric_version"`
	RubricHash    string      `json:"rubric_hash"`
	Concurrency   int         `json:"concurrency"`
	StartedAt     time.Time   `json:"started_at"`
	DurationMS    int64       `json:"duration_ms"`
	Interrupted   bool        `json:"interrupted"`
	Totals        batchTotals `json:"totals"`
	// FailedByOutcome counts failed targets by sandbox outcome or error class.
	FailedByOutcome map[string]int `json:"failed_by_outcome"`
	// PackagesPerHour is Scanned over the batch's wall time, preparation
	// and resolution included.
	PackagesPerHour float64              `json:"packages_per_hour"`
	Phases          map[string]phaseStat `json:"phases"`
	Targets         []*batchItem         `json:"targets"`
}

// summarize counts the items' statuses, failures by outcome and the
// phases of the scans made now.
func summarize(items []*batchItem, wall time.Duration) (batchTotals, map[string]int, map[string]phaseStat, float64) {
	t := batchTotals{Targets: len(items)}
	failed := map[string]int{}
	phases := map[string][]int64{}
	for _, it := range items {
		switch it.Status {
		case batchCompleted:
			t.Completed++
		case batchFailed:
			t.Failed++
			failed[it.Outcome]++
		case batchSkipped:
			t.Skipped++
		case batchAbandoned:
			t.Abandoned++
		default:
			t.NotStarted++
		}
		if it.PhasesMS != nil {
			t.Scanned++
			for k, v := range it.PhasesMS {
				phases[k] = append(phases[k], v)
			}
		}
	}
	stats := map[string]phaseStat{}
	for k, vs := range phases {
		slices.Sort(vs)
		var sum int64
		for _, v := range vs {
			sum += v
		}
		// The lower median: a value some scan really took.
		stats[k] = phaseStat{N: len(vs), MedianMS: vs[(len(vs)-1)/2], TotalMS: sum}
	}
	perHour := 0.0
	if wall > 0 {
		perHour = float64(t.Scanned) / wall.Hours()
	}
	return t, failed, stats, perHour
}

// batchPhases are the phase times of one scan, from its bundle and the
// wall times measured around it. session.handshake excludes start-up;
// other is the scan's wall time less the install and session phases:
// container and observer set-up and removal, the home comparison, and the
// collectors that run after the sandbox (OSV, Socket, the judge).
func batchPhases(b *evidence.Bundle, scan, save time.Duration) map[string]int64 {
	ph := map[string]int64{"scan": scan.Milliseconds(), "save": save.Milliseconds()}
	ph["resolve"] = b.Signal(evidence.SignalRegistry).DurationMS
	accounted := int64(0)
	if b.Install != nil {
		ph["install.fetch"], ph["install.scripts"] = b.Install.FetchMS, b.Install.ScriptsMS
		accounted += b.Install.FetchMS + b.Install.ScriptsMS
	}
	if s := b.Session; s != nil {
		ph["session.start"], ph["session.handshake"], ph["session.list"] = s.StartMS, s.HandshakeMS-s.StartMS, s.ListMS
		accounted += s.HandshakeMS + s.ListMS
	}
	if b.Behavior != nil {
		var idle int64
		for _, w := range b.Behavior.Watches {
			idle += w.IdleMS
		}
		ph["session.idle"] = idle
		accounted += idle
	}
	for _, name := range []string{evidence.SignalOSV, evidence.SignalSocket, evidence.SignalGitHub, evidence.SignalDNSSEC, evidence.SignalJudge} {
		if s := b.Signal(name); s.State != evidence.StateNotAssessed {
			ph[name] = s.DurationMS
		}
	}
	ph["other"] = max(0, scan.Milliseconds()-accounted)
	return ph
}

// errorOutcome names the class of error that stopped a target.
func errorOutcome(err error) string {
	var ee engineError
	var env *sandbox.EnvironmentError
	switch {
	case errors.Is(err, context.Canceled):
		return "interrupted"
	case errors.Is(err, supplychain.ErrPackageNotFound), errors.Is(err, supplychain.ErrVersionNotFound):
		return "not_found"
	case errors.Is(err, supplychain.ErrRegistryUnreachable):
		return "registry_unreachable"
	case errors.As(err, &env):
		// tls_verification, registry_dns, registry_unreachable,
		// registry_failing, egress_proxy: met in the sandbox.
		return string(env.Kind)
	case errors.Is(err, sandbox.ErrBadBin):
		return "bad_bin"
	case errors.Is(err, pipeline.ErrBadTarget), errors.Is(err, pipeline.ErrUnsupported), errors.Is(err, supplychain.ErrBadName):
		return "bad_target"
	case errors.Is(err, pipeline.ErrSandbox), errors.As(err, &ee):
		return "engine_error"
	default:
		return "error"
	}
}

// batchScan is the shared state of one batch run's scans.
type batchScan struct {
	p       *pipeline.Pipeline
	st      *store.Store
	dataDir string
	rb      *rubric.Rubric
	// firstID is the run id the sandbox was prewarmed for; the first scan
	// takes it.
	firstID   string
	usedFirst atomic.Bool
}

func (bs *batchScan) runID() string {
	if bs.usedFirst.CompareAndSwap(false, true) {
		return bs.firstID
	}
	return pipeline.NewRunID(time.Now())
}

// scanOne scans one resolved target and saves it like scan does. The save
// is not cancelled by an interrupt: a scan that finished is kept.
func (g *globals) scanOne(ctx context.Context, bs *batchScan, it *batchItem) {
	start := time.Now()
	save := g.storeSaver(bs.st, bs.dataDir)
	save.Detached = true
	var scanWall time.Duration
	saver := saverFunc(func(ctx context.Context, r *pipeline.Ran) error {
		scanWall = time.Since(start)
		return save.Save(ctx, r)
	})
	ran, err := bs.p.Run(ctx, pipeline.Job{Target: it.rt, Options: pipeline.Options{RunID: bs.runID(), Bin: it.line.Bin, Args: it.line.Args, Env: it.line.Env}}, saver)
	switch {
	case err != nil && ran == nil && ctx.Err() != nil:
		it.Status, it.Outcome, it.err = batchAbandoned, "interrupted", err
		return
	case err != nil:
		it.fail(err)
		return
	}
	b := ran.Bundle
	it.RunID, it.Score, it.Outcome = b.Run.ID, ran.Result.Score, string(b.Sandbox.Outcome)
	it.Status = batchCompleted
	if b.Sandbox.Outcome != evidence.OutcomeOK {
		it.Status = batchFailed
	}
	it.PhasesMS = batchPhases(b, scanWall, time.Since(start)-scanWall)
}

// saverFunc is a pipeline.Saver of one function.
type saverFunc func(context.Context, *pipeline.Ran) error

func (f saverFunc) Save(ctx context.Context, r *pipeline.Ran) error { return f(ctx, r) }

func (it *batchItem) fail(err error) {
	it.Status, it.Outcome, it.Error, it.err = batchFailed, errorOutcome(err), oneLine(err.Error()), err
}

// resumeKey is the store key of a resolved item.
func (it *batchItem) resumeKey(rb *rubric.Rubric) store.ResumeKey {
	return store.ResumeKey{
		Ecosystem: "npm", Name: it.rt.Name, Version: it.rt.Version, Integrity: it.rt.Integrity,
		ToolVersion: Version, RubricVersion: rb.Version,
		Args: it.line.Args, EnvNames: slices.Sorted(maps.Keys(it.line.Env)), Bin: it.line.Bin,
	}
}

// dedupKey identifies what one line asks to scan, for finding repeats.
func (it *batchItem) dedupKey() string {
	k := it.resumeKey(&rubric.Rubric{})
	return strings.Join(append([]string{k.Name, k.Version, k.Integrity, k.Bin, strings.Join(k.EnvNames, ","), "--"}, k.Args...), "\x00")
}

func (g *globals) runBatch(ctx context.Context, file string, f *batchFlags) error {
	sf := &f.scan
	if _, err := checkFormat(sf.format); err != nil {
		return err
	}
	if f.concurrency < 1 || f.concurrency > 64 {
		return usagef("--concurrency must be between 1 and 64, not %d", f.concurrency)
	}
	mem, err := checkSandboxFlags(sf)
	if err != nil {
		return err
	}
	lines, err := readBatchFile(file)
	if err != nil {
		return err
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
	started := time.Now()

	// Progress owns stderr: log records go through it, so that they never
	// tear the bar. The pipeline's own progress lines name no target, and
	// N scans would interleave them: below --verbose only warnings show.
	prog := newBatchProgress(g.stderr, isTerminal(g.stderr), g.quiet)
	defer prog.close()
	level := slog.LevelWarn
	if g.verbose {
		level = slog.LevelDebug
	}
	g.log = slog.New(newProgressHandler(prog, level))

	// The first interrupt cancels ctx (Run's signal context); here it only
	// stops new targets from starting, unless nothing is in flight yet. A
	// second interrupt cancels hard, which abandons the scans in flight.
	hard, cancelHard := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelHard()
	sigC := make(chan os.Signal, 4)
	signal.Notify(sigC, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigC)
	// drain closes when no new target may start: on an interrupt, or on an
	// environment fault (every other target would meet it too).
	drain := make(chan struct{})
	stopNew := sync.OnceFunc(func() { close(drain) })
	var scanning atomic.Bool
	var interrupted atomic.Bool
	first := sync.OnceFunc(func() {
		interrupted.Store(true)
		stopNew()
		if !scanning.Load() {
			cancelHard()
			return
		}
		prog.note("interrupt: no new target starts; the scans in flight finish (interrupt again to abandon them)")
	})
	stopWatch := make(chan struct{})
	defer close(stopWatch)
	go func() {
		n := 0
		parentDone := ctx.Done()
		for {
			select {
			case <-parentDone:
				first()
				parentDone = nil // seen; wait for signals only
			case <-sigC:
				n++
				first()
				if n == 2 {
					prog.note("second interrupt: abandoning the scans in flight and removing their containers")
					cancelHard()
				}
			case <-stopWatch:
				return
			}
		}
	}()

	rb := rubric.Current()
	st, dataDir, p, ca, closeAll, err := g.openScanning(hard, sf, rb)
	if err != nil {
		return err
	}
	defer closeAll()

	items := newBatchItems(lines)
	prog.begin(len(items))
	todo, err := resolveBatch(hard, p, st, rb, items, prog, f.rescan)
	if err != nil {
		return err
	}
	if interrupted.Load() {
		return context.Canceled
	}

	bs := &batchScan{p: p, st: st, dataDir: dataDir, rb: rb, firstID: pipeline.NewRunID(time.Now())}
	if len(todo) > 0 {
		engine, discard, err := g.prepareSandbox(hard, p, sf, dataDir, p.Resolver.Registry(), ca, mem, bs.firstID, func() error { return nil })
		if err != nil {
			if interrupted.Load() {
				return context.Canceled
			}
			return err
		}
		defer engine.Close()
		defer func() {
			if !bs.usedFirst.Load() {
				discard()
			}
		}()
		scanning.Store(true)
		prog.scanning(len(todo))
		runWorkers(hard, drain, f.concurrency, todo, func(ctx context.Context, it *batchItem) {
			prog.started()
			g.scanOne(ctx, bs, it)
			prog.finish(it, true)
			var env *sandbox.EnvironmentError
			if errors.As(it.err, &env) {
				stopNew()
				prog.note(fmt.Sprintf("an environment fault (%s), not the package's: no new target starts; nothing was stored, so the next run of the batch retries", env.Kind))
			}
		})
	}
	for _, it := range items {
		if it.Status == "" {
			it.Status = batchNotStarted
			prog.finish(it, false)
		}
	}
	prog.close()

	sum := batchSummary{
		SchemaVersion: BatchSchemaVersion, File: file, ToolVersion: Version, RubricVersion: rb.Version, RubricHash: rb.Hash,
		Concurrency: f.concurrency, StartedAt: started.UTC(), Interrupted: interrupted.Load(), Targets: items,
	}
	wall := time.Since(started)
	sum.DurationMS = wall.Milliseconds()
	sum.Totals, sum.FailedByOutcome, sum.Phases, sum.PackagesPerHour = summarize(items, wall)
	if err := g.writeBatchSummary(sum, sf.format, sf.output); err != nil {
		return err
	}
	if sum.Interrupted {
		return context.Canceled
	}
	// A target that could not be scanned makes the batch fail with that
	// target's exit code; a package that failed in the sandbox does not.
	return stoppedError(items, file, "scanned (run the batch again to retry them)")
}

func newBatchItems(lines []batchLine) []*batchItem {
	items := make([]*batchItem, len(lines))
	for i, bl := range lines {
		items[i] = &batchItem{Line: bl.Line, Target: bl.Target.Raw, line: bl}
	}
	return items
}

// stoppedError is nil when every item was dealt with, else an error with
// the first stopped item's error (and so its exit code): "N of M targets
// could not be " + what.
func stoppedError(items []*batchItem, file, what string) error {
	var stopped []*batchItem
	for _, it := range items {
		if it.err != nil {
			stopped = append(stopped, it)
		}
	}
	if len(stopped) == 0 {
		return nil
	}
	it := stopped[0]
	return fmt.Errorf("%d of %d targets could not be %s; first, %s:%d %s: %w",
		len(stopped), len(items), what, file, it.Line, it.Target, it.err)
}

// openScanning opens the store and builds the scan pipeline, as batch,
// its --enqueue and the worker need them; closeAll closes both.
func (g *globals) openScanning(ctx context.Context, sf *scanFlags, rb *rubric.Rubric) (*store.Store, string, *pipeline.Pipeline, *caBundle, func(), error) {
	st, dataDir, err := g.openStore(ctx)
	if err != nil {
		return nil, "", nil, nil, nil, err
	}
	p, ca, closeScanner, err := g.newScanPipeline(ctx, sf, dataDir, rb)
	if err != nil {
		st.Close()
		return nil, "", nil, nil, nil, err
	}
	return st, dataDir, p, ca, func() { closeScanner(); st.Close() }, nil
}

// newScanPipeline builds the pipeline batch and cases run scan with: the registry
// client and the third-party clients, as scan builds them. The sandbox is
// prepared later, and only when something is left to scan.
func (g *globals) newScanPipeline(ctx context.Context, f *scanFlags, dataDir string, rb *rubric.Rubric) (*pipeline.Pipeline, *caBundle, func(), error) {
	cfg, _, err := loadConfig(g.config)
	if err != nil {
		return nil, nil, nil, err
	}
	if f.caBundle == "" {
		f.caBundle = cfg.CABundle
	}
	ca, err := loadCABundle(f.caBundle)
	if err != nil {
		return nil, nil, nil, err
	}
	sup, err := resolveSupply(f, cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	registry := pick(f.registry, os.Getenv("VERIFYMCP_NPM_REGISTRY"), cfg.Registry, supplychain.DefaultNPMRegistry)
	p := &pipeline.Pipeline{Resolver: supplychain.NewNPM(httpClient(ca, 60*time.Second), registry), ToolVersion: Version, Logger: g.log, RubricVersion: rb.Version, Rubric: rb}
	answers, err := g.openAnswers(ctx, dataDir)
	if err != nil {
		return nil, nil, nil, err
	}
	closeFn := func() { answers.Close() }
	p.Secrets = sup.secrets()
	if p.Supply, err = g.supplyClients(sup, answers, ca); err != nil {
		closeFn()
		return nil, nil, nil, err
	}
	if p.Judge, err = judgeClient(sup, answers, ca); err != nil {
		closeFn()
		return nil, nil, nil, err
	}
	return p, ca, closeFn, nil
}

// resolveBatch resolves every item, a few at a time, and looks each up in
// the store (unless rescan). It returns the items left to scan, in file
// order; the others are failed (did not resolve) or skipped (stored, or a
// repeat). Only a store failure is returned as an error.
func resolveBatch(ctx context.Context, p *pipeline.Pipeline, st *store.Store, rb *rubric.Rubric, items []*batchItem, prog *batchProgress, rescan bool) ([]*batchItem, error) {
	sem := make(chan struct{}, resolveConcurrency)
	var wg sync.WaitGroup
	for _, it := range items {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			rt, err := p.Resolve(ctx, it.line.Target)
			if err != nil {
				it.fail(err)
				return
			}
			it.rt, it.Name, it.Version, it.Integrity = rt, rt.Name, rt.Version, rt.Integrity
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var todo []*batchItem
	seen := map[string]int{}
	for _, it := range items {
		if it.rt == nil {
			prog.finish(it, false)
			continue
		}
		if line, ok := seen[it.dedupKey()]; ok {
			it.Status, it.SkipReason = batchSkipped, fmt.Sprintf("duplicate of line %d", line)
			prog.finish(it, false)
			continue
		}
		seen[it.dedupKey()] = it.Line
		if rescan {
			todo = append(todo, it)
			continue
		}
		done, err := st.ResumeFind(ctx, it.resumeKey(rb))
		switch {
		case errors.Is(err, store.ErrNotFound):
			todo = append(todo, it)
		case err != nil:
			return nil, err
		default:
			it.Status, it.SkipReason, it.RunID, it.Score, it.Outcome = batchSkipped, "stored", done.RunID, done.Score, string(done.Outcome)
			prog.finish(it, false)
		}
	}
	return todo, nil
}

// runWorkers runs fn over items with n workers, starting nothing new once
// drain is closed.
func runWorkers(ctx context.Context, drain <-chan struct{}, n int, items []*batchItem, fn func(context.Context, *batchItem)) {
	jobs := make(chan *batchItem)
	var wg sync.WaitGroup
	for range min(n, len(items)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range jobs {
				fn(ctx, it)
			}
		}()
	}
dispatch:
	for _, it := range items {
		// Checked first: select picks at random among ready cases.
		select {
		case <-drain:
			break dispatch
		default:
		}
		select {
		case <-drain:
			break dispatch
		case jobs <- it:
		}
	}
	close(jobs)
	wg.Wait()
}

func (g *globals) writeBatchSummary(s batchSummary, format, output string) error {
	return g.writeOutput(output, func(w io.Writer) error {
		var err error
		if format == "json" {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			err = enc.Encode(s)
		} else {
			err = writeBatchTable(w, s)
		}
		if err != nil {
			return fmt.Errorf("write summary: %w", err)
		}
		return nil
	})
}

// phaseOrder is the order phases are shown in, roughly the order they run.
var phaseOrder = []string{"resolve", "install.fetch", "install.scripts", "session.start", "session.handshake", "session.list", "session.idle",
	evidence.SignalOSV, evidence.SignalSocket, evidence.SignalGitHub, evidence.SignalDNSSEC, evidence.SignalJudge, "other", "save", "scan"}

func writeBatchTable(w io.Writer, s batchSummary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LINE\tTARGET\tVERSION\tSTATUS\tOUTCOME\tSCORE\tRUN")
	for _, it := range s.Targets {
		score := "-"
		if it.Score != nil {
			score = fmt.Sprintf("%.1f", *it.Score)
		}
		name := it.Name
		if name == "" {
			name = it.Target
		}
		status := it.Status
		if it.SkipReason != "" {
			status += " (" + it.SkipReason + ")"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", it.Line, name, dash(it.Version), status, dash(it.Outcome), score, dash(it.RunID))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// Errors are long: below the table, not in it.
	for _, it := range s.Targets {
		if it.Error != "" {
			fmt.Fprintf(w, "line %d: %s: %s\n", it.Line, it.Target, it.Error)
		}
	}
	t := s.Totals
	fmt.Fprintf(w, "\nbatch %s: %d targets, concurrency %d, %s, tool %s, rubric v%s\n", s.File, t.Targets, s.Concurrency,
		(time.Duration(s.DurationMS) * time.Millisecond).Round(time.Second), s.ToolVersion, s.RubricVersion)
	fmt.Fprintf(w, "  completed    %d\n  failed       %d", t.Completed, t.Failed)
	if len(s.FailedByOutcome) > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(s.FailedByOutcome)) {
			parts = append(parts, fmt.Sprintf("%s %d", k, s.FailedByOutcome[k]))
		}
		fmt.Fprintf(w, " (%s)", strings.Join(parts, ", "))
	}
	fmt.Fprintf(w, "\n  skipped      %d\n", t.Skipped)
	switch {
	case s.Interrupted || t.Abandoned > 0:
		fmt.Fprintf(w, "  interrupted  %d abandoned in flight, %d not started\n", t.Abandoned, t.NotStarted)
	case t.NotStarted > 0:
		fmt.Fprintf(w, "  stopped      %d not started: the environment failed (run the batch again once it is fixed)\n", t.NotStarted)
	}
	if t.Scanned > 0 {
		fmt.Fprintf(w, "  throughput   %d scans saved, %.1f packages/hour\n", t.Scanned, s.PackagesPerHour)
		fmt.Fprintln(w, "\ntime per scan by phase (median, total over the scans made now):")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		for _, k := range phaseOrder {
			ps, ok := s.Phases[k]
			if !ok {
				continue
			}
			fmt.Fprintf(tw, "  %s\t%.1fs\t%.1fs\t\n", k, float64(ps.MedianMS)/1000, float64(ps.TotalMS)/1000)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// isTerminal reports whether w is a terminal (a character device that is
// not /dev/null), where a redrawn progress bar makes sense.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(fi, null)
}

// batchProgress shows a batch's progress on stderr: a bar redrawn in place
// on a terminal, one line per finished target otherwise. Log records are
// written through it, so that they appear above the bar.
type batchProgress struct {
	mu    sync.Mutex
	w     io.Writer
	bar   bool
	quiet bool
	now   func() time.Time
	start time.Time

	total, done, failed, skipped int
	toScan, scanned, running     int
	scanStart, etaAt             time.Time
	shown, closed                bool
	stopTick                     chan struct{}
}

func newBatchProgress(w io.Writer, bar, quiet bool) *batchProgress {
	p := &batchProgress{w: w, bar: bar && !quiet, quiet: quiet, now: time.Now}
	p.start = p.now()
	return p
}

// Write passes a log record through, above the bar.
func (p *batchProgress) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	n, err := p.w.Write(b)
	p.draw()
	return n, err
}

func (p *batchProgress) begin(total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total = total
	if p.bar && p.stopTick == nil {
		// Redraw every second so the ETA counts down between targets.
		p.stopTick = make(chan struct{})
		go func() {
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				select {
				case <-t.C:
					p.mu.Lock()
					p.clear()
					p.draw()
					p.mu.Unlock()
				case <-p.stopTick:
					return
				}
			}
		}()
	}
	p.draw()
}

func (p *batchProgress) scanning(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.toScan, p.scanStart = n, p.now()
}

func (p *batchProgress) started() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running++
	p.clear()
	p.draw()
}

// note shows a message (an interrupt) whatever the mode, except quiet.
func (p *batchProgress) note(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	fmt.Fprintf(p.w, "verifymcp: %s\n", msg)
	p.draw()
}

// finish records a target that reached its final status; scanned says
// it was one of the scans started (see started).
func (p *batchProgress) finish(it *batchItem, scanned bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	switch it.Status {
	case batchFailed:
		p.failed++
	case batchSkipped:
		p.skipped++
	}
	if scanned {
		p.scanned++
		p.running--
		// The estimate is made when a scan finishes and counts down until
		// the next one does.
		if eta, ok := batchETA(p.scanned, p.toScan, p.now().Sub(p.scanStart)); ok {
			p.etaAt = p.now().Add(eta)
		}
	}
	p.clear()
	if !p.bar && !p.quiet {
		fmt.Fprintf(p.w, "[%5.1fs] %d/%d %s\n", p.now().Sub(p.start).Seconds(), p.done, p.total, describeItem(it))
	}
	p.draw()
}

// describeItem is the progress line of a finished target.
func describeItem(it *batchItem) string {
	var b strings.Builder
	b.WriteString(it.Status)
	b.WriteString(" ")
	b.WriteString(it.Target)
	if it.Version != "" && !strings.HasSuffix(it.Target, "@"+it.Version) {
		fmt.Fprintf(&b, " (%s@%s)", it.Name, it.Version)
	}
	if it.Outcome != "" {
		b.WriteString(" outcome=" + it.Outcome)
	}
	if it.Score != nil {
		fmt.Fprintf(&b, " score=%.1f", *it.Score)
	}
	if it.SkipReason != "" {
		b.WriteString(" reason=" + strings.ReplaceAll(it.SkipReason, " ", "_"))
	}
	if it.RunID != "" {
		b.WriteString(" run=" + it.RunID)
	}
	if ms, ok := it.PhasesMS["scan"]; ok {
		fmt.Fprintf(&b, " took=%.1fs", float64(ms)/1000)
	}
	if it.Error != "" {
		b.WriteString(": " + it.Error)
	}
	return b.String()
}

// close removes the bar for good, leaving its last state on screen.
func (p *batchProgress) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	if p.stopTick != nil {
		close(p.stopTick)
	}
	if p.shown {
		fmt.Fprintln(p.w)
		p.shown = false
	}
}

// clear erases the bar; the caller holds mu.
func (p *batchProgress) clear() {
	if p.shown {
		io.WriteString(p.w, "\r\x1b[K")
		p.shown = false
	}
}

// draw shows the bar; the caller holds mu.
func (p *batchProgress) draw() {
	if !p.bar || p.closed || p.total == 0 {
		return
	}
	eta := max(0, p.etaAt.Sub(p.now())).Round(time.Second)
	io.WriteString(p.w, renderBar(p.done, p.total, p.failed, p.skipped, p.running, eta, !p.etaAt.IsZero()))
	p.shown = true
}

// batchETA estimates the time left from the scans finished so far: the
// rate measured since scanning began, which already reflects concurrency.
func batchETA(scanned, toScan int, elapsed time.Duration) (time.Duration, bool) {
	if scanned <= 0 || elapsed <= 0 {
		return 0, false
	}
	left := max(0, toScan-scanned)
	return (elapsed * time.Duration(left) / time.Duration(scanned)).Round(time.Second), true
}

// barWidth is the number of cells of the progress bar.
const barWidth = 20

func renderBar(done, total, failed, skipped, running int, eta time.Duration, etaOK bool) string {
	filled := 0
	if total > 0 {
		filled = min(barWidth, done*barWidth/total)
	}
	s := fmt.Sprintf("[%s%s] %d/%d done (%d failed, %d skipped)", strings.Repeat("#", filled), strings.Repeat(".", barWidth-filled), done, total, failed, skipped)
	if running > 0 {
		s += fmt.Sprintf(" %d running", running)
	}
	switch {
	case done == total:
	case etaOK:
		s += " ETA " + eta.String()
	default:
		s += " ETA --"
	}
	return s
}
