package batch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/pipeline"
	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/store"
)

// Resolver resolves a target to one exact artefact (a *pipeline.Pipeline
// is one).
type Resolver interface {
	Resolve(ctx context.Context, t pipeline.Target) (*pipeline.Resolved, error)
}

// ResumeFinder finds the stored run of a resume key (a *store.Store is
// one).
type ResumeFinder interface {
	ResumeFind(ctx context.Context, k store.ResumeKey) (store.ResumeRun, error)
}

// lookahead bounds the items Resolve has resolved, or is resolving, ahead
// of the one it hands out next.
const lookahead = 2 * resolveConcurrency

// Resolve resolves the items, a few at a time, in file order, and looks
// each up in the store (unless rescan). Each one left to scan is handed to
// next in file order, as soon as it and every item before it are dealt
// with; the others are failed (did not resolve) or skipped (stored, or a
// repeat), and done is called for each of them, in file order too. next
// may block (the scans are busy): the lookups run at most lookahead items
// ahead of it, so the resolved artefacts held meanwhile are bounded
// whatever the list's length, and the first scan need not wait for the
// last lookup. When next returns false, nothing after that item is looked
// at or handed out (those items keep no status). Only a store failure, or
// ctx's end, is returned as an error.
func Resolve(ctx context.Context, p Resolver, st ResumeFinder, toolVersion, rubricVersion string, items []*Item, rescan bool, done func(*Item), next func(*Item) bool) error {
	ready := make([]chan struct{}, len(items))
	for i := range ready {
		ready[i] = make(chan struct{})
	}
	window := make(chan struct{}, lookahead)
	lookups := make(chan struct{}, resolveConcurrency)
	// Lookups still in flight when Resolve stops are cut short.
	lctx, cancel := context.WithCancel(ctx)
	stop := make(chan struct{})
	launched := make(chan struct{})
	var wg sync.WaitGroup
	go func() {
		defer close(launched)
		for i, it := range items {
			select {
			case window <- struct{}{}:
			case <-stop:
				return
			}
			select {
			case lookups <- struct{}{}:
			case <-stop:
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer close(ready[i])
				defer func() { <-lookups }()
				rt, err := p.Resolve(lctx, it.Spec.Target)
				switch {
				case err != nil && lctx.Err() != nil:
					// Cut short, not a failure of the target's: no status.
				case err != nil:
					it.Fail(err)
				default:
					it.Resolved, it.Name, it.Version, it.Integrity = rt, rt.Name, rt.Version, rt.Integrity
				}
			}()
		}
	}()
	defer func() {
		close(stop)
		cancel()
		<-launched
		wg.Wait()
	}()

	seen := map[string]int{}
	for i, it := range items {
		select {
		case <-ready[i]:
		case <-ctx.Done():
			return ctx.Err()
		}
		<-window
		if err := ctx.Err(); err != nil {
			return err
		}
		if it.Resolved == nil {
			done(it)
			continue
		}
		if line, ok := seen[it.dedupKey()]; ok {
			it.Status, it.SkipReason = StatusSkipped, fmt.Sprintf("duplicate of line %d", line)
			it.Resolved = nil
			done(it)
			continue
		}
		seen[it.dedupKey()] = it.Line
		if !rescan && it.Resumable() {
			stored, err := st.ResumeFind(ctx, it.ResumeKey(toolVersion, rubricVersion))
			switch {
			case errors.Is(err, store.ErrNotFound):
			case err != nil:
				return err
			default:
				it.Status, it.SkipReason, it.RunID, it.Score, it.Outcome = StatusSkipped, "stored", stored.RunID, stored.Score, string(stored.Outcome)
				it.Resolved = nil
				done(it)
				continue
			}
		}
		if !next(it) {
			return nil
		}
	}
	return nil
}

// RunWorkers runs fn over the items that come from items, until it is
// closed, with n workers, starting nothing new once drain is closed. The
// first n items start i×spread/n after the first (i = 0 … n-1): scans of
// one list take about as long as each other, so workers that start at once
// would wait (the idle watch), tear down and start at once, wave after
// wave; spread over the idle watch, their waits interleave with the
// others' work.
func RunWorkers(ctx context.Context, drain <-chan struct{}, n int, spread time.Duration, items <-chan *Item, fn func(context.Context, *Item)) {
	jobs := make(chan *Item)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range jobs {
				fn(ctx, it)
			}
		}()
	}
	pc := &pacer{spread: spread, n: n}
dispatch:
	for {
		var it *Item
		select {
		case <-drain:
			break dispatch
		case v, ok := <-items:
			if !ok {
				break dispatch
			}
			it = v
		}
		if !pc.wait(ctx, drain) {
			break dispatch
		}
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

// pacer spreads the first n starts over spread: the k-th (k = 0 … n-1)
// waits until k×spread/n after the first began. Scans of one list take
// about as long as each other, so scans that start at once would wait
// (the idle watch), tear down and start at once, in waves that leave the
// CPU idle in their troughs.
type pacer struct {
	spread time.Duration
	n      int

	mu    sync.Mutex
	k     int
	first time.Time
}

// wait holds one start until its time; it returns false when drain
// closed meanwhile.
func (p *pacer) wait(ctx context.Context, drain <-chan struct{}) bool {
	if p.spread <= 0 || p.n <= 1 {
		return true
	}
	p.mu.Lock()
	k := p.k
	p.k++
	if k == 0 {
		p.first = time.Now()
	}
	at := p.first.Add(p.spread * time.Duration(k) / time.Duration(p.n))
	p.mu.Unlock()
	if k >= p.n {
		return true
	}
	if d := time.Until(at); d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
		case <-drain:
			return false
		}
	}
	return true
}

// Scans runs a batch's resolved items through the pipeline, each saved
// through Save like a scan is. Save should be Detached: a scan that
// finished is kept even when an interrupt came meanwhile.
type Scans struct {
	Pipeline *pipeline.Pipeline
	Save     pipeline.Saver
	// Session, when set, hands out the first scan's run id, the one the
	// sandbox was prewarmed for.
	Session pipeline.Session
	// Ahead, when set, hands out the later scans' run ids, each with an
	// observer started ahead of it (see sandbox.Pool).
	Ahead *sandbox.Pool
	// Spread spreads the workers' first scans (see RunWorkers): the idle
	// watch's length.
	Spread time.Duration

	sessionTaken atomic.Bool
}

// RunID returns the next scan's run id: Session's prewarmed one first,
// then ids from Ahead, or new ones.
func (s *Scans) RunID() string {
	if s.Session != nil && s.sessionTaken.CompareAndSwap(false, true) {
		return s.Session.NextRunID()
	}
	if s.Ahead != nil {
		return s.Ahead.Take()
	}
	if s.Session != nil {
		return s.Session.NextRunID()
	}
	return pipeline.NewRunID(time.Now())
}

// Scan scans one resolved item and saves it, and records what became of
// it: completed, failed (a package failure in the sandbox, or an error),
// or abandoned when ctx was cancelled mid-scan.
func (s *Scans) Scan(ctx context.Context, it *Item) {
	start := time.Now()
	var scanWall time.Duration
	save := saverFunc(func(ctx context.Context, r *pipeline.Ran) error {
		scanWall = time.Since(start)
		return s.Save.Save(ctx, r)
	})
	ran, err := s.Pipeline.Run(ctx, pipeline.Job{Target: it.Resolved, Options: pipeline.Options{RunID: s.RunID(), Bin: it.Spec.Bin, Args: it.Spec.Args, Env: it.Spec.Env}}, save)
	// The artefact's registry documents are not needed any more: a long
	// batch holds only its items' results.
	it.Resolved = nil
	switch {
	case err != nil && ran == nil && ctx.Err() != nil:
		it.Status, it.Outcome, it.Err = StatusAbandoned, "interrupted", err
		return
	case err != nil:
		it.Fail(err)
		return
	}
	b := ran.Bundle
	it.RunID, it.Score, it.Outcome = b.Run.ID, ran.Result.Score, string(b.Sandbox.Outcome)
	it.Drift = ItemDriftOf(b)
	it.Status = StatusCompleted
	if b.Sandbox.Outcome != evidence.OutcomeOK {
		it.Status = StatusFailed
	}
	it.PhasesMS = Phases(b, scanWall, time.Since(start)-scanWall)
}

// saverFunc is a pipeline.Saver of one function.
type saverFunc func(context.Context, *pipeline.Ran) error

func (f saverFunc) Save(ctx context.Context, r *pipeline.Ran) error { return f(ctx, r) }

// Events is what ScanAll and NotStarted report as a batch runs; the
// caller shows them (the CLI draws a bar, or a line per target).
type Events interface {
	// Scanning says that the scans are about to start (the first of
	// them; the others start as their targets resolve).
	Scanning()
	// Started says that a scan started.
	Started()
	// Finish says that it reached its final status; scanned says it was
	// one of the scans started (see Started).
	Finish(it *Item, scanned bool)
	// Note is a message for the operator (an environment fault).
	Note(msg string)
}

// ScanAll scans the items that come from todo, until it is closed, with n
// workers (see RunWorkers and Scan), reporting each to prog. An
// environment fault met by one of them calls stopNew: every other target
// would meet it too, so no new one starts.
func (s *Scans) ScanAll(ctx context.Context, drain <-chan struct{}, stopNew func(), n int, todo <-chan *Item, prog Events) {
	prog.Scanning()
	RunWorkers(ctx, drain, n, s.Spread, todo, func(ctx context.Context, it *Item) {
		prog.Started()
		s.Scan(ctx, it)
		prog.Finish(it, true)
		var env *sandbox.EnvironmentError
		if errors.As(it.Err, &env) {
			stopNew()
			prog.Note(fmt.Sprintf("an environment fault (%s), not the package's: no new target starts; nothing was stored, so the next run of the batch retries", env.Kind))
		}
	})
}

// NotStarted marks the items that reached no status StatusNotStarted,
// and reports each to prog.
func NotStarted(items []*Item, prog Events) {
	for _, it := range items {
		if it.Status == "" {
			it.Status = StatusNotStarted
			prog.Finish(it, false)
		}
	}
}
