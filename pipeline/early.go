package pipeline

import (
	"bytes"
	"context"
	"sync"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/sandbox"
)

// early starts third-party collection the moment its input exists, while
// the sandbox goes on: the tree scans (OSV, Socket) when the install phase
// has a lockfile, the judge when the first listing has a contract. The
// idle watch, the second listing and the teardown then overlap them
// instead of preceding them. What the sandbox returns is what is scored:
// an answer is used only when its input is byte for byte what the scan
// returned (the lockfile; the contract's schema hash), else it is asked
// again.
type early struct {
	p      *Pipeline
	ctx    context.Context
	cancel context.CancelFunc
	tree   treeInput

	mu      sync.Mutex
	lock    []byte
	treeC   chan treeAnswers
	surface string
	judgeC  chan judged
}

type judged struct {
	r   *evidence.JudgeResult
	sig evidence.Signal
}

func (p *Pipeline) earlyCollection(ctx context.Context, b *evidence.Bundle) *early {
	ctx, cancel := context.WithCancel(ctx)
	return &early{p: p, ctx: ctx, cancel: cancel,
		tree: treeInput{name: b.Target.Name, purl: b.Target.Purl, ecosystem: b.Target.Ecosystem}}
}

func (e *early) hooks() *sandbox.Hooks {
	return &sandbox.Hooks{
		Installed: func(lock []byte) {
			ch := make(chan treeAnswers, 1)
			e.mu.Lock()
			e.lock, e.treeC = lock, ch
			e.mu.Unlock()
			go func() { ch <- e.p.collectTree(e.ctx, e.tree, lock, true, true) }()
		},
		Listed: func(c *contract.Contract) {
			ch := make(chan judged, 1)
			e.mu.Lock()
			e.surface, e.judgeC = c.SchemaHash, ch
			e.mu.Unlock()
			go func() {
				r, sig := e.p.judgeContract(e.ctx, c)
				ch <- judged{r, sig}
			}()
		},
	}
}

// judgeFor returns the judge's answer about c: the early one when it was
// asked about the same surface, else a new question, started now.
func (e *early) judgeFor(c *contract.Contract) <-chan judged {
	e.mu.Lock()
	surface, ch := e.surface, e.judgeC
	e.mu.Unlock()
	if ch != nil && c != nil && c.SchemaHash == surface {
		return ch
	}
	out := make(chan judged, 1)
	go func() {
		r, sig := e.p.judgeContract(e.ctx, c)
		out <- judged{r, sig}
	}()
	return out
}

// treeFor returns the tree scans' answers about lockfile: the early ones
// when they were asked about the same bytes, else asked now.
func (e *early) treeFor(lockfile []byte, outcome evidence.Outcome, shipped bool) treeAnswers {
	e.mu.Lock()
	lock, ch := e.lock, e.treeC
	e.mu.Unlock()
	if ch != nil && bytes.Equal(lock, lockfile) {
		return <-ch
	}
	in := e.tree
	in.outcome, in.shipped = outcome, shipped
	return e.p.collectTree(e.ctx, in, lockfile, true, true)
}
