package batch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/verifymcp/verifymcp/ecosystem"

	"github.com/jackc/pgx/v5"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/pipeline"
	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/store"
	"github.com/verifymcp/verifymcp/store/queue"
	"github.com/verifymcp/verifymcp/supplychain"
)

// EnqueueSchemaVersion identifies the JSON form of a `batch --enqueue`
// summary.
const EnqueueSchemaVersion = "verifymcp.enqueue/v1"

// StatusSubmitted is a target sent to the queue, as a new job or as a
// duplicate of a job already queued, running or completed (the totals
// say how many of each).
const StatusSubmitted = "submitted"

// JobOptions are what a scan job carries besides its key.
type JobOptions struct {
	// Integrity is the artefact the target resolved to when enqueued; the
	// worker refuses to scan anything else.
	Integrity string `json:"integrity"`
	// Integrities are, for a PyPI release resolved on the index (which
	// has no one integrity: the fetch step picks one of its files), the
	// digests of its files when enqueued; the worker refuses a release
	// whose files changed since.
	Integrities []string          `json:"integrities,omitempty"`
	Bin         string            `json:"bin,omitempty"`
	Args        []string          `json:"args,omitempty"`
	Env         map[string]string `json:"env,omitempty"`
}

// JobTarget is the queue's target string for a resolved item: the exact
// registry version, a tarball's absolute path with its integrity after
// a '#', so that another tarball at the same path is another job, or a
// shipped release's ref (pipeline.QueueTarget).
func JobTarget(it *Item) string {
	if ref, ok := pipeline.QueueTarget(it.Resolved); ok {
		return ref
	}
	if it.Resolved.Source == "file" {
		return it.Resolved.Target.File + "#" + it.Resolved.Integrity
	}
	e := ecosystem.MustOf(it.Resolved.Target.Ecosystem)
	return e.Name() + ":" + e.Pin(it.Resolved.Name, it.Resolved.Version)
}

// jobIntegrities are the file digests a job of a PyPI release carries
// (see JobOptions.Integrities), sorted; nil for any other target.
func jobIntegrities(it *Item) []string {
	if it.Resolved.Integrity != "" {
		return nil
	}
	return slices.Sorted(slices.Values(it.Resolved.FileIntegrities()))
}

// SplitJobTarget undoes JobTarget's '#' before a local file's integrity
// (an SRI digest); a shipped release's ref keeps its own (mcpb's
// #sha256=HEX).
func SplitJobTarget(s string) string {
	if m := jobIntegrity.FindStringIndex(s); m != nil && m[0] > 0 {
		return s[:m[0]]
	}
	return s
}

// jobIntegrity is JobTarget's '#' and SRI digest at the end of a target.
var jobIntegrity = regexp.MustCompile(`#sha(1|256|384|512)-[A-Za-z0-9+/=_-]+$`)

// EnqueueTotals are the counts of an enqueue summary.
type EnqueueTotals struct {
	Targets int `json:"targets"`
	// Submitted = Enqueued + AlreadyQueued.
	Submitted     int `json:"submitted"`
	Enqueued      int `json:"enqueued"`
	AlreadyQueued int `json:"already_queued"`
	Skipped       int `json:"skipped"`
	Failed        int `json:"failed"`
}

// EnqueueSummary is what `batch --enqueue` reports.
type EnqueueSummary struct {
	SchemaVersion string        `json:"schema_version"`
	File          string        `json:"file"`
	ToolVersion   string        `json:"tool_version"`
	RubricVersion string        `json:"rubric_version"`
	Totals        EnqueueTotals `json:"totals"`
	Targets       []*Item       `json:"targets"`
}

// ErrVariant is a second line enqueuing a target already enqueued with
// other --bin/--arg/--env options (bad input).
var ErrVariant = errors.New("another variant of an enqueued target")

// variantError is an ErrVariant in its own words.
type variantError string

func (e variantError) Error() string        { return string(e) }
func (e variantError) Is(target error) bool { return target == ErrVariant }

// JobList makes the queue's jobs of the items left to scan, one at a
// time as they resolve (see Resolve).
type JobList struct {
	Jobs []queue.ScanArgs

	toolVersion, rubricVersion string
	byTarget                   map[string]*Item
}

// NewJobList makes jobs keyed by toolVersion and rubricVersion.
func NewJobList(toolVersion, rubricVersion string) *JobList {
	return &JobList{toolVersion: toolVersion, rubricVersion: rubricVersion, byTarget: map[string]*Item{}}
}

// Add makes the job of it and marks it StatusSubmitted, or fails it with
// ErrVariant when it repeats the target of an earlier item with other
// options (the queue keys a job by target, rubric and tool version, so a
// second variant would be taken for a duplicate). Either way it lets go of
// the item's resolved artefact: the job holds what a worker needs.
func (l *JobList) Add(it *Item) error {
	defer func() { it.Resolved = nil }()
	target := JobTarget(it)
	if other := l.byTarget[target]; other != nil {
		it.Fail(variantError(fmt.Sprintf("line %d enqueues %s with other --bin/--arg/--env options; the queue keys jobs by target, so scan variants of one target with a local batch", other.Line, target)))
		return nil
	}
	l.byTarget[target] = it
	opts, err := json.Marshal(JobOptions{Integrity: it.Resolved.Integrity, Integrities: jobIntegrities(it), Bin: it.Spec.Bin, Args: it.Spec.Args, Env: it.Spec.Env})
	if err != nil {
		return err
	}
	l.Jobs = append(l.Jobs, queue.ScanArgs{Target: target, RubricVersion: l.rubricVersion, ToolVersion: l.toolVersion, Options: opts})
	it.Status = StatusSubmitted
	return nil
}

// CountEnqueued fills in the totals of s from its targets and what the
// queue said (inserted new jobs, dups already queued, running or done).
func CountEnqueued(s *EnqueueSummary, inserted, dups int) {
	t := &s.Totals
	t.Targets, t.Enqueued, t.AlreadyQueued = len(s.Targets), inserted, dups
	for _, it := range s.Targets {
		switch it.Status {
		case StatusSubmitted:
			t.Submitted++
		case StatusSkipped:
			t.Skipped++
		default:
			t.Failed++
		}
	}
}

// Worker runs the fleet queue's scan jobs (see Handle).
type Worker struct {
	Scans *Scans
	Store ResumeFinder
	// Saver saves a job's run in the job's transaction, so that the result
	// and the job's completion commit together.
	Saver                      func(tx pgx.Tx) pipeline.Saver
	ToolVersion, RubricVersion string
	Logger                     *slog.Logger
	// Concurrency is how many jobs the worker runs at once: its first
	// scans are spread over Scans.Spread, as a batch's are (see pacer).
	Concurrency int
	done, saved atomic.Int64

	paceOnce sync.Once
	pc       *pacer
}

// pace holds the worker's first Concurrency scans, spread over the idle
// watch (see pacer): River hands a new worker its jobs at once.
func (w *Worker) pace(ctx context.Context) {
	w.paceOnce.Do(func() { w.pc = &pacer{spread: w.Scans.Spread, n: w.Concurrency} })
	w.pc.wait(ctx, nil)
}

// Jobs and Saved count the jobs handled and the runs saved.
func (w *Worker) Jobs() int64  { return w.done.Load() }
func (w *Worker) Saved() int64 { return w.saved.Load() }

// Handle runs one scan job and saves its run in tx (a queue.Handler):
// a job for another version is retried (for a worker that runs it); a
// target that is gone, resolves to another artefact or names a bad bin is
// cancelled; an engine, registry or database failure is retried; a run
// already stored completes the job with nothing new; a package that failed
// in the sandbox completes it for good.
func (w *Worker) Handle(ctx context.Context, tx pgx.Tx, args queue.ScanArgs) error {
	defer w.done.Add(1)
	bs, log := w.Scans, w.Logger.With("target", args.Target)
	if args.ToolVersion != w.ToolVersion || args.RubricVersion != w.RubricVersion {
		// Another worker of the fleet may run that version: retry.
		return fmt.Errorf("this worker runs verifymcp %s under rubric %s; the job was enqueued for verifymcp %s under rubric %s",
			w.ToolVersion, w.RubricVersion, args.ToolVersion, args.RubricVersion)
	}
	var o JobOptions
	if len(args.Options) > 0 {
		if err := json.Unmarshal(args.Options, &o); err != nil {
			return queue.Cancel(fmt.Errorf("the job's options do not parse: %v", err))
		}
	}
	target, err := pipeline.ParseTarget(SplitJobTarget(args.Target))
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
	if now := slices.Sorted(slices.Values(rt.FileIntegrities())); len(o.Integrities) > 0 && !slices.Equal(now, o.Integrities) {
		return queue.Cancel(fmt.Errorf("the files of %s %s changed since it was enqueued (%s, not %s); nothing was scanned",
			rt.Name, rt.Version, strings.Join(now, " "), strings.Join(o.Integrities, " ")))
	}
	it := &Item{Resolved: rt, Spec: Line{Target: target, Bin: o.Bin, Args: o.Args, Env: o.Env}}
	if !it.Resumable() {
		// Its digest is known once it is pulled: scanned every time.
	} else if rr, err := w.Store.ResumeFind(ctx, it.ResumeKey(w.ToolVersion, w.RubricVersion)); err == nil {
		log.Info("already stored; nothing to scan", "run", rr.RunID)
		return nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}

	w.pace(ctx)
	log.Info("scanning", "version", rt.Version)
	start := time.Now()
	ran, err := bs.Pipeline.Run(ctx, pipeline.Job{Target: rt, Options: pipeline.Options{RunID: bs.RunID(), Bin: o.Bin, Args: o.Args, Env: o.Env}},
		w.Saver(tx))
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

// QueueStatus is what `queue status` reports: the scan jobs by state, and
// the discarded and cancelled ones with every attempt's error.
type QueueStatus struct {
	Pending   int                  `json:"pending"`
	Running   int                  `json:"running"`
	Completed int                  `json:"completed"`
	Discarded int                  `json:"discarded"`
	Cancelled int                  `json:"cancelled"`
	Failed    []queue.DiscardedJob `json:"failed"`
}
