package sandbox

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Pool keeps observers started ahead of the scans that will use them, so
// that a batch's next scan finds its observer ready instead of waiting for
// one to start (about 0.4 s of engine work on the critical path of a warm
// scan). Each pooled observer comes with its own run id, canaries and
// bounded places, and serves exactly one scan, which removes it with
// everything else of the run: an observer is never handed to a second scan,
// since its network and PID namespaces and the places it holds mounted
// would carry one package's leftovers (a listening socket, a process, a
// file, a canary) into the next, and wiping them would cost what starting
// a new one does.
type Pool struct {
	s     *Sandbox
	ctx   context.Context
	newID func() string

	mu     sync.Mutex
	ready  []string // run ids of started observers, oldest first
	size   int      // how many may be ready at once
	budget int      // how many more may start; negative: no limit
	closed bool
	pace   time.Duration // the least time between two starts
	next   time.Time     // the earliest the next start may begin
}

// NewPool starts up to size observers (fewer when budget, the number of
// scans still to come, is smaller; a negative budget has no limit), each
// under a run id from newID. Take hands them out and starts a replacement
// while the budget lasts. Starts are paced: each begins at least pace
// after the one before, so that a batch's first observers, and the
// replacements of observers taken together, do not all start at once
// (a container start is CPU work for the engine, and the scans starting
// beside them wait for it); a scan that takes an observer whose start is
// still waiting starts it at once. ctx bounds the observers' start-up;
// Close removes what was not taken, dropping the waiting ones unstarted. Without behaviour capture there is nothing
// to start, and Take just returns new ids.
func (s *Sandbox) NewPool(ctx context.Context, size, budget int, pace time.Duration, newID func() string) *Pool {
	p := &Pool{s: s, ctx: ctx, newID: newID, size: size, budget: budget, pace: pace}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fillLocked()
	return p
}

// Add says that n more scans are to come (a batch that learns of its
// scans as its targets resolve), and starts observers for them up to the
// pool's size. It does nothing to a pool without a limit.
func (p *Pool) Add(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.budget < 0 {
		return
	}
	p.budget += n
	p.fillLocked()
}

// fillLocked starts observers until size are ready or the budget is spent.
func (p *Pool) fillLocked() {
	if !p.s.opts.Behavior {
		return
	}
	for len(p.ready) < p.size && p.startLocked() {
	}
}

// startLocked starts one observer if the budget allows.
func (p *Pool) startLocked() bool {
	if p.closed || p.budget == 0 {
		return false
	}
	if p.budget > 0 {
		p.budget--
	}
	id := p.newID()
	now := time.Now()
	at := now
	if p.next.After(now) {
		at = p.next
	}
	p.next = at.Add(p.pace)
	p.s.prewarmAfter(p.ctx, id, at.Sub(now))
	p.ready = append(p.ready, id)
	return true
}

// Take returns the run id of the oldest ready observer, for one scan to
// use (Scan with that id), and starts another in its place while the
// budget lasts. With none ready, it returns a new id: that scan starts its
// own observer, as an unpooled one does.
func (p *Pool) Take() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.ready) == 0 {
		return p.newID()
	}
	id := p.ready[0]
	p.ready = p.ready[1:]
	p.fillLocked()
	return id
}

// Close removes every observer not taken, and starts no more.
func (p *Pool) Close(ctx context.Context) error {
	p.mu.Lock()
	ids := p.ready
	p.ready, p.closed = nil, true
	p.mu.Unlock()
	var errs []error
	for _, id := range ids {
		errs = append(errs, p.s.Discard(ctx, id))
	}
	return errors.Join(errs...)
}
