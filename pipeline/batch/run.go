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

// Resolve resolves every item, a few at a time, and looks each up in
// the store (unless rescan). It returns the items left to scan, in file
// order; the others are failed (did not resolve) or skipped (stored, or a
// repeat), and done is called for each of them. Only a store failure is
// returned as an error.
func Resolve(ctx context.Context, p Resolver, st ResumeFinder, toolVersion, rubricVersion string, items []*Item, done func(*Item), rescan bool) ([]*Item, error) {
	sem := make(chan struct{}, resolveConcurrency)
	var wg sync.WaitGroup
	for _, it := range items {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			rt, err := p.Resolve(ctx, it.Spec.Target)
			if err != nil {
				it.Fail(err)
				return
			}
			it.Resolved, it.Name, it.Version, it.Integrity = rt, rt.Name, rt.Version, rt.Integrity
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var todo []*Item
	seen := map[string]int{}
	for _, it := range items {
		if it.Resolved == nil {
			done(it)
			continue
		}
		if line, ok := seen[it.dedupKey()]; ok {
			it.Status, it.SkipReason = StatusSkipped, fmt.Sprintf("duplicate of line %d", line)
			done(it)
			continue
		}
		seen[it.dedupKey()] = it.Line
		if rescan || !it.Resumable() {
			todo = append(todo, it)
			continue
		}
		stored, err := st.ResumeFind(ctx, it.ResumeKey(toolVersion, rubricVersion))
		switch {
		case errors.Is(err, store.ErrNotFound):
			todo = append(todo, it)
		case err != nil:
			return nil, err
		default:
			it.Status, it.SkipReason, it.RunID, it.Score, it.Outcome = StatusSkipped, "stored", stored.RunID, stored.Score, string(stored.Outcome)
			done(it)
		}
	}
	return todo, nil
}

// RunWorkers runs fn over items with n workers, starting nothing new once
// drain is closed. Worker i takes its first item i×spread/n after the
// first worker: scans of one list take about as long as each other, so
// workers that start at once would wait (the idle watch), tear down and
// start at once, wave after wave; spread over the idle watch, their waits
// interleave with the others' work.
func RunWorkers(ctx context.Context, drain <-chan struct{}, n int, spread time.Duration, items []*Item, fn func(context.Context, *Item)) {
	jobs := make(chan *Item)
	var wg sync.WaitGroup
	workers := min(n, len(items))
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if d := spread * time.Duration(i) / time.Duration(workers); d > 0 {
				select {
				case <-time.After(d):
				case <-ctx.Done():
				case <-drain:
				}
			}
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
	// Scanning says that n scans are about to start.
	Scanning(n int)
	// Started says that a scan started.
	Started()
	// Finish says that it reached its final status; scanned says it was
	// one of the scans started (see Started).
	Finish(it *Item, scanned bool)
	// Note is a message for the operator (an environment fault).
	Note(msg string)
}

// ScanAll scans todo with n workers (see RunWorkers and Scan), reporting
// each to prog. An environment fault met by one of them calls stopNew:
// every other target would meet it too, so no new one starts.
func (s *Scans) ScanAll(ctx context.Context, drain <-chan struct{}, stopNew func(), n int, todo []*Item, prog Events) {
	prog.Scanning(len(todo))
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
