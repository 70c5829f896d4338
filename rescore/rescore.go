// Package rescore scores stored runs again under a rubric: a reader
// streams stored runs with their baselines, workers decode and evaluate
// them, and one writer saves the new results; the pass reports what
// moved and which runs lack evidence the rubric needs. Persistence is the
// store's (store.EachRun, store.SaveResults).
package rescore

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	segjson "github.com/segmentio/encoding/json"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/store"
)

// DefaultBatch is how many results Run writes per transaction.
// SQLite has one writer; a transaction per result would spend most of the
// pass committing, and a very large one would hold the write lock for long,
// lose more work to an interruption, and leave the workers waiting while
// it commits (200 measured a little faster than 500 and 100).
const DefaultBatch = 200

// Options parameterise Run.
type Options struct {
	// Rubric is the rubric to score under; nil means rubric.Current().
	Rubric *rubric.Rubric
	// Filter selects the runs, as in store.EachRun: every run matching it,
	// oldest first (Limit keeps the oldest), not only the newest run of
	// each target.
	Filter store.Filter
	// Baseline is the rubric version whose stored result each new result is
	// compared with. Empty chooses, per run, the stored result under the
	// highest rubric version other than Rubric's (what the run was scored
	// under before the rubric moved); failing that the stored result under
	// Rubric's own version (a re-run, which shows what changed in a rubric
	// file edited without a new version, normally nothing); failing that
	// none, and the run counts in NoBaseline. Versions order as rubric
	// versions do: "10" after "9".
	Baseline string
	// Workers decode and evaluate bundles; 0 means GOMAXPROCS. One reader
	// and one writer run beside them.
	Workers int
	// Save writes each new result, replacing a stored result of the same
	// run and rubric version. False is a dry run: nothing is written.
	Save bool
	// BatchSize is the number of results written per transaction; 0 means
	// DefaultBatch.
	BatchSize int
	// Progress, if set, is called after each batch is committed (or, in a
	// dry run, evaluated) with the runs rescored so far and the runs the
	// filter selects. It is called from one goroutine at a time.
	Progress func(done, total int)
	// NeedsRecollection, if set, is called for every rescored run whose
	// evidence lacks a signal Rubric needs (see RecollectSignals), after
	// its result is committed (in a dry run, evaluated). It is called from
	// one goroutine at a time.
	NeedsRecollection func(runID string, signals []string)
}

// Summary is what a rescoring pass did and what moved. Every count
// covers the runs whose new result was committed (in a dry run, evaluated),
// so that after an interruption it describes exactly what the store holds.
type Summary struct {
	RubricVersion string `json:"rubric_version"`
	RubricHash    string `json:"rubric_hash"`
	// Saved is false for a dry run.
	Saved bool `json:"saved"`
	// Total is the number of runs the filter selects; Rescored the number
	// rescored (and saved, unless a dry run).
	Total    int `json:"total"`
	Rescored int `json:"rescored"`
	// Failed lists the runs whose stored bundle or baseline result could
	// not be decoded; they are neither saved nor counted below.
	Failed []Failure `json:"failed"`
	// Baselines counts the rescored runs by the rubric version of the result
	// they were compared with; NoBaseline counts those with none.
	Baselines  map[string]int `json:"baselines"`
	NoBaseline int            `json:"no_baseline"`
	Composite  CompositeMove  `json:"composite"`
	// Dimensions has one entry per dimension of the new rubric, in its
	// order, then one per dimension only baselines had, by id.
	Dimensions []DimensionMove `json:"dimensions"`
	// Codes has one entry per reason code found in a new result or its
	// baseline, by code.
	Codes []CodeMove `json:"codes"`
	// Recollect counts, per signal, the rescored runs whose evidence lacks
	// it (see RecollectSignals); RecollectRuns counts the runs lacking any.
	Recollect     map[string]int `json:"recollect"`
	RecollectRuns int            `json:"recollect_runs"`
	// Elapsed is the wall time of the pass, Stages where it went.
	Elapsed time.Duration `json:"-"`
	Stages  Stages        `json:"-"`
}

// Failure is a run Run could not rescore.
type Failure struct {
	RunID string `json:"run_id"`
	Error string `json:"error"`
}

// Stages is the time spent in each stage of a pass. Read and Write
// are the wall time of the single reader and writer; Decode, Evaluate,
// Encode (the new result's JSON) and Compare (with the baseline) are summed
// over the workers, so with several workers they can exceed Elapsed.
type Stages struct {
	Read, Decode, Evaluate, Encode, Compare, Write time.Duration
}

// CompositeMove is how the composite scores moved, over the runs with a
// baseline (Compared = Up + Down + Unchanged + Gained + Lost).
type CompositeMove struct {
	Compared  int `json:"compared"`
	Up        int `json:"up"`
	Down      int `json:"down"`
	Unchanged int `json:"unchanged"` // including runs with no score in either result
	// Gained counts runs that have a composite now and had none (every
	// dimension dropped), Lost the reverse.
	Gained int `json:"gained"`
	Lost   int `json:"lost"`
	// Scored counts runs with a composite in both results; the deltas
	// (new minus old) are over those, 0 when there are none.
	Scored    int     `json:"scored"`
	MeanDelta float64 `json:"mean_delta"`
	MinDelta  float64 `json:"min_delta"`
	MaxDelta  float64 `json:"max_delta"`
}

// DimensionMove is how one dimension moved.
type DimensionMove struct {
	ID string `json:"id"`
	// Weight is the dimension's weight under the new rubric (0 when only
	// baselines have it); OldWeights are the distinct weights it had in the
	// baselines, ascending, so a reweighting shows as a change here.
	Weight     float64   `json:"weight"`
	OldWeights []float64 `json:"old_weights"`
	// Compared counts runs whose new result and baseline both have the
	// dimension; Moved those among them whose score or state changed.
	Compared int `json:"compared"`
	Moved    int `json:"moved"`
	// The deltas (new score minus old) are over Compared, 0 when it is 0.
	MeanDelta float64 `json:"mean_delta"`
	MinDelta  float64 `json:"min_delta"`
	MaxDelta  float64 `json:"max_delta"`
	// StateChanges counts runs by "old->new" state, for those whose state
	// changed (scored, zero_point, dropped).
	StateChanges map[string]int `json:"state_changes"`
	// Added counts runs whose baseline lacks the dimension (a dimension new
	// in the rubric), Removed runs whose baseline has it and the new rubric
	// does not.
	Added   int `json:"added"`
	Removed int `json:"removed"`
}

// CodeMove is how one reason code moved, over the runs with a baseline:
// After - Before = Appeared - Disappeared.
type CodeMove struct {
	Code string `json:"code"`
	// Before and After count runs whose baseline, and new result, emit the
	// code at least once.
	Before int `json:"before"`
	After  int `json:"after"`
	// Appeared counts runs whose new result emits the code and whose
	// baseline did not; Disappeared the reverse.
	Appeared    int `json:"appeared"`
	Disappeared int `json:"disappeared"`
}

// RecollectSignals returns, sorted, the signals r needs that only
// collecting again can supply for b: every signal a dimension of r names
// that b does not record at all (evidence written before the signal
// existed), and the judge signal when b's verdicts were observed under a
// judge specification other than the one r pins. A signal recorded as
// unavailable, error or not_assessed is not listed: it was asked about, and
// the rubric scores that state (zero point or drop). Run saves the
// result the stored evidence supports, zero points included; collecting
// the listed signals again (only those) and scoring the new evidence is
// the caller's job. The sandbox signals (sandbox.install, sandbox.session,
// contract, sandbox.behavior) can only be collected again by a new scan.
func RecollectSignals(b *evidence.Bundle, r *rubric.Rubric) []string {
	return newNeeds(r).of(b)
}

// needs is what a rubric needs of a bundle's signals, computed once per
// pass.
type needs struct {
	r       *rubric.Rubric
	signals []string // every signal a dimension names, sorted, unique
	judge   bool     // a dimension names the judge signal
}

func newNeeds(r *rubric.Rubric) needs {
	n := needs{r: r}
	for _, d := range r.Dimensions {
		for _, s := range d.Signals {
			if !slices.Contains(n.signals, s) {
				n.signals = append(n.signals, s)
			}
			if s == evidence.SignalJudge {
				n.judge = true
			}
		}
	}
	slices.Sort(n.signals)
	return n
}

func (n needs) of(b *evidence.Bundle) []string {
	var out []string
	for _, s := range n.signals {
		sig, ok := b.Signals[s]
		switch {
		case !ok && s == evidence.SignalMCPRegistry && (b.Supply == nil || b.Supply.Registry == nil || b.Supply.Registry.MCPName == ""):
			// The MCP registry is asked about the mcpName the registry
			// metadata gives: with none stored (none declared, or the
			// metadata itself to be collected again) there is nothing to
			// ask yet, and the rubric reads the missing signal so.
		case !ok && s == evidence.SignalDrift:
			// A comparison with the pin of the day of the scan: it
			// cannot be made again later, so a bundle without it keeps
			// the dimension's no-credit zero point.
		case !ok:
			out = append(out, s)
		case s == evidence.SignalJudge && n.judge && sig.State == evidence.StateObserved && !n.r.JudgeCurrent(b.Judge):
			out = append(out, s)
		}
	}
	return out
}

// Run scores stored evidence again under opts.Rubric, with no sandbox and
// no network: every run matching opts.Filter is read, decoded with
// evidence.Decode and evaluated, and its new result is compared with a
// stored baseline (see Options.Baseline) and, unless a dry run, saved. A
// reader streams the runs (store.EachRun), opts.Workers decode, evaluate
// and compare them, and one writer saves results in transactions of
// opts.BatchSize (store.SaveResults; SQLite has one writer).
//
// Run is safe to interrupt: on cancellation it stops at the next batch,
// committed batches stay, the batch in flight is rolled back whole, and
// the summary counts only what was committed. Running it again recomputes
// everything; a result is replaced, never duplicated. It returns the
// summary with ctx's error then, or with the first read or write error.
// Bundles or baselines that cannot be decoded do not stop the pass: they
// are listed in the summary's Failed. A run saved during the pass is
// rescored too if it sorts after the runs already read.
func Run(ctx context.Context, s *store.Store, opts Options) (Summary, error) {
	return run(ctx, s, opts)
}

// runStore is what a pass needs of a store: *store.Store, or in tests a
// store that watches the pass.
type runStore interface {
	CountRuns(ctx context.Context, f store.Filter) (int, error)
	EachRun(ctx context.Context, f store.Filter, version, baseline string, fn func(*store.StoredRun) error) error
	SaveResults(ctx context.Context, rs []store.Result) error
}

// readBatch is how many runs travel together from the reader to a
// worker, and from a worker to the writer, so that waking a goroutine is
// paid once per batch rather than once per run; their buffers are reused.
const readBatch = 64

// maxInFlight bounds the runs a pass holds at once, read and not yet
// committed (in a dry run, evaluated), whatever the store's size: the
// reader's batch being filled, 2×workers batches queued for the workers,
// one per worker, 2×workers queued for the writer, the writer's current
// one, and the batchSize results it commits together.
func maxInFlight(workers, batchSize int) int {
	return readBatch*(1+2*workers+workers+2*workers+1) + batchSize
}

func run(ctx context.Context, s runStore, opts Options) (Summary, error) {
	start := time.Now()
	rb := opts.Rubric
	if rb == nil {
		rb = rubric.Current()
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	batchSize := opts.BatchSize
	if batchSize <= 0 {
		batchSize = DefaultBatch
	}
	acc := newMoveAcc(rb)
	sum := Summary{RubricVersion: rb.Version, RubricHash: rb.Hash, Saved: opts.Save}
	finish := func(err error) (Summary, error) {
		acc.fill(&sum)
		sum.Elapsed = time.Since(start)
		return sum, err
	}

	total, err := s.CountRuns(ctx, opts.Filter)
	if err != nil {
		return finish(fmt.Errorf("rescore: %w", err))
	}
	sum.Total = total

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// Runs travel in batches of readBatch; the channels' capacities are
	// those maxInFlight counts.
	rowsCh := make(chan []row, 2*workers)
	var pool sync.Pool

	var readErr error
	var readTime time.Duration
	go func() {
		defer close(rowsCh)
		readTime, readErr = read(ctx, s, opts.Filter, rb.Version, opts.Baseline, readBatch, &pool, rowsCh)
	}()

	var times stageTimes
	doneCh := startWorkers(ctx, workers, rowsCh, &pool, rb, opts.Save, &times)

	// The writer: this goroutine.
	var writeErr error
	var writeTime time.Duration
	pending := make([]*rescored, 0, batchSize)
	results := make([]store.Result, 0, batchSize)
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		if opts.Save {
			results = results[:0]
			for _, r := range pending {
				results = append(results, r.result)
			}
			t0 := time.Now()
			err := s.SaveResults(ctx, results)
			writeTime += time.Since(t0)
			if err != nil {
				return fmt.Errorf("rescore: %w", err)
			}
		}
		for _, r := range pending {
			acc.add(r)
			if len(r.recollect) > 0 && opts.NeedsRecollection != nil {
				opts.NeedsRecollection(r.runID, r.recollect)
			}
		}
		sum.Rescored += len(pending)
		pending = pending[:0]
		if opts.Progress != nil {
			opts.Progress(sum.Rescored, total)
		}
		return nil
	}
	for batch := range doneCh {
		if writeErr != nil || ctx.Err() != nil {
			continue // drain, so that the workers can stop
		}
		for _, r := range batch {
			if r.err != nil {
				sum.Failed = append(sum.Failed, Failure{RunID: r.runID, Error: r.err.Error()})
				continue
			}
			pending = append(pending, r)
			if len(pending) >= batchSize {
				if writeErr = flush(); writeErr != nil {
					cancel()
					break
				}
			}
		}
	}
	if writeErr == nil && ctx.Err() == nil {
		writeErr = flush()
	}
	sum.Stages = Stages{
		Read:     readTime,
		Decode:   time.Duration(times.decode.Load()),
		Evaluate: time.Duration(times.eval.Load()),
		Encode:   time.Duration(times.encode.Load()),
		Compare:  time.Duration(times.compare.Load()),
		Write:    writeTime,
	}
	switch {
	case writeErr != nil:
		return finish(writeErr)
	case ctx.Err() != nil:
		// The caller's cancellation: ours only follows a write error.
		return finish(ctx.Err())
	}
	return finish(readErr)
}

// stageTimes sums the time the workers spent in each stage.
type stageTimes struct{ decode, eval, encode, compare atomic.Int64 }

// startWorkers starts workers goroutines that rescore under rb the batches
// of runs on rowsCh, returning each batch's buffer to pool, and send each
// batch's results on the channel it returns, which is closed once they all
// end. Each adds its time per stage to times when it ends.
func startWorkers(ctx context.Context, workers int, rowsCh <-chan []row, pool *sync.Pool, rb *rubric.Rubric, save bool, times *stageTimes) <-chan []*rescored {
	doneCh := make(chan []*rescored, 2*workers)
	need := newNeeds(rb)
	memo := rubric.NewMemo(rb)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var st [4]time.Duration
			for batch := range rowsCh {
				if ctx.Err() != nil {
					continue // drain: nothing more will be written
				}
				out := make([]*rescored, 0, len(batch))
				for i := range batch {
					out = append(out, rescoreOne(&batch[i], rb, need, memo, save, &st))
				}
				batch = recycle(batch)
				pool.Put(&batch)
				select {
				case doneCh <- out:
				case <-ctx.Done():
				}
			}
			times.decode.Add(int64(st[0]))
			times.eval.Add(int64(st[1]))
			times.encode.Add(int64(st[2]))
			times.compare.Add(int64(st[3]))
		}()
	}
	go func() {
		wg.Wait()
		close(doneCh)
	}()
	return doneCh
}

// row is one run as read for rescoring (store.StoredRun), its byte slices
// owned by the row and reused through the pool once it is processed.
type row struct {
	runID           string
	bundle          []byte
	baselineVersion string // "" when there is no baseline
	baseline        []byte
	scored          bool
}

// maxPooledBuffer is the largest bundle or baseline buffer a row keeps
// for reuse. Bundles are tens of kilobytes; a run with a bundle of many
// megabytes (a listing of thousands of tools) must not leave a buffer of
// its size in a pooled batch for the rest of the pass, and over a store of
// many such runs in every one of them.
const maxPooledBuffer = 1 << 20

// recycle returns batch emptied for reuse, with the buffers of its rows
// larger than maxPooledBuffer dropped.
func recycle(batch []row) []row {
	for i := range batch {
		r := &batch[i]
		if cap(r.bundle) > maxPooledBuffer {
			r.bundle = nil
		}
		if cap(r.baseline) > maxPooledBuffer {
			r.baseline = nil
		}
	}
	return batch[:0]
}

// read streams the runs f selects, oldest first, each with its baseline
// result, in batches to out, and returns the time spent reading, not
// waiting for workers.
func read(ctx context.Context, s runStore, f store.Filter, version, baseline string, batchSize int, pool *sync.Pool, out chan<- []row) (time.Duration, error) {
	start := time.Now()
	var blocked time.Duration
	elapsed := func() time.Duration { return time.Since(start) - blocked }
	var batch []row
	send := func() error {
		t0 := time.Now()
		defer func() { blocked += time.Since(t0) }()
		select {
		case out <- batch:
			batch = nil
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	err := s.EachRun(ctx, f, version, baseline, func(r *store.StoredRun) error {
		if batch == nil {
			if p, ok := pool.Get().(*[]row); ok {
				batch = *p
			}
			if batch == nil {
				batch = make([]row, 0, batchSize)
			}
		}
		k := len(batch)
		batch = batch[:k+1]
		w := &batch[k]
		w.runID = r.ID
		w.bundle = append(w.bundle[:0], r.Bundle...)
		w.baselineVersion = r.BaselineVersion
		w.baseline = append(w.baseline[:0], r.Baseline...)
		w.scored = r.Scored
		if len(batch) == batchSize {
			return send()
		}
		return nil
	})
	if err == nil && len(batch) > 0 {
		err = send()
	}
	if err != nil && ctx.Err() == nil {
		err = fmt.Errorf("rescore: %w", err)
	}
	return elapsed(), err
}

// rescored is one run's new result and how it moved from its baseline.
type rescored struct {
	runID     string
	err       error
	score     *float64
	result    store.Result // when saving
	recollect []string

	baseline string // version; "" when there is none
	oldScore *float64
	dims     []dimPair
	codesOld []string // sorted, unique
	codesNew []string // sorted, unique
}

// dimPair is one dimension in the new result and the baseline.
type dimPair struct {
	id                 string
	inOld, inNew       bool
	oldState, newState rubric.State
	oldScore, newScore float64
	oldWeight          float64
}

// rescoreOne decodes, evaluates, encodes and compares one run; st
// accumulates the time of each of those stages. The result is encoded
// only when it is to be saved.
func rescoreOne(w *row, rb *rubric.Rubric, need needs, memo *rubric.Memo, save bool, st *[4]time.Duration) *rescored {
	out := &rescored{runID: w.runID}
	t0 := time.Now()
	b, err := decodeBundle(w.bundle)
	t1 := time.Now()
	st[0] += t1.Sub(t0)
	if err != nil {
		out.err = fmt.Errorf("decode bundle: %w", err)
		return out
	}
	res := memo.Evaluate(b)
	t2 := time.Now()
	st[1] += t2.Sub(t1)
	out.score = res.Score
	if save {
		if out.result, err = storedResult(w.runID, &res); err != nil {
			out.err = fmt.Errorf("encode result: %w", err)
			return out
		}
		out.result.Fresh = !w.scored
	}
	t3 := time.Now()
	st[2] += t3.Sub(t2)
	out.recollect = need.of(b)
	if w.baselineVersion != "" {
		if err := out.compare(w.baselineVersion, w.baseline, res); err != nil {
			out.err = fmt.Errorf("decode baseline result under rubric %s: %w", w.baselineVersion, err)
		}
	}
	st[3] += time.Since(t3)
	return out
}

// storedResult is res as the store saves it for run runID: what
// store.NewResult reads from res's JSON, taken from res itself.
func storedResult(runID string, res *rubric.Result) (store.Result, error) {
	j, err := json.Marshal(res)
	if err != nil {
		return store.Result{}, err
	}
	codes := make([]string, 0, len(res.Findings))
	for i := range res.Findings {
		codes = append(codes, res.Findings[i].Code)
	}
	dims := make([]store.SummaryDimension, 0, len(res.Dimensions))
	for _, d := range res.Dimensions {
		dims = append(dims, store.SummaryDimension{ID: d.ID, Weight: d.Weight, State: string(d.State), Score: d.Score})
	}
	summary, err := json.Marshal(store.NewSummary(codes, dims, res.Score))
	if err != nil {
		return store.Result{}, err
	}
	return store.Result{RunID: runID, RubricVersion: res.RubricVersion, RubricHash: res.RubricHash, Score: res.Score,
		JSON: j, Summary: summary}, nil
}

// decodeBundle is evidence.Decode with segmentio's decoder, a drop-in
// for encoding/json's: the same values from the same bytes (compared on
// every committed bundle fixture), in under half the time, and decoding
// is the largest part of a pass. Results are still encoded by
// encoding/json, so that what is saved is what json.Marshal writes.
func decodeBundle(data []byte) (*evidence.Bundle, error) {
	var b evidence.Bundle
	if err := segjson.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("evidence: decode bundle: %w", err)
	}
	if err := b.Validate(); err != nil {
		return nil, err
	}
	return &b, nil
}

// compare records how res moved from the stored result of rubric version
// ver, given as its summary or (saved before summaries were) in full: a
// result's JSON decodes into a store.Summary too.
func (r *rescored) compare(ver string, data []byte, res rubric.Result) error {
	r.baseline = ver
	r.codesNew = make([]string, 0, len(res.Findings))
	for _, f := range res.Findings {
		r.codesNew = append(r.codesNew, f.Code)
	}
	r.codesNew = sortedUnique(r.codesNew)
	var old store.Summary
	if err := json.Unmarshal(data, &old); err != nil {
		return err
	}
	r.oldScore = old.Score
	r.codesOld = make([]string, 0, len(old.Findings))
	for _, f := range old.Findings {
		r.codesOld = append(r.codesOld, f.Code)
	}
	r.codesOld = sortedUnique(r.codesOld)

	r.dims = make([]dimPair, 0, len(res.Dimensions)+1)
	for _, d := range res.Dimensions {
		r.dims = append(r.dims, dimPair{id: d.ID, inNew: true, newState: d.State, newScore: d.Score})
	}
	for _, od := range old.Dimensions {
		i := slices.IndexFunc(r.dims, func(p dimPair) bool { return p.id == od.ID })
		if i < 0 {
			r.dims = append(r.dims, dimPair{id: od.ID})
			i = len(r.dims) - 1
		}
		p := &r.dims[i]
		p.inOld, p.oldState, p.oldScore, p.oldWeight = true, rubric.State(od.State), od.Score, od.Weight
	}
	return nil
}

func sortedUnique(s []string) []string {
	if !slices.IsSorted(s) {
		slices.Sort(s)
	}
	return slices.Compact(s)
}
