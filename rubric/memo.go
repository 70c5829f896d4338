package rubric

import (
	"sync"
	"sync/atomic"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/evidence"
)

// Memo evaluates a series of bundles under one rubric, as Evaluate does,
// doing once the work that bundles sharing a contract share: the probes
// that read nothing of a bundle but its contract (the contract checks of
// rubric v5 above all) run once per contract, and their outcome, verdict
// and findings, serves every later bundle with the same contract. It is
// meant for one rescoring pass, whose decoder gives bundles with identical
// stored contracts one shared *contract.Contract.
//
// Contracts are told apart by identity, not compared: a Memo must only
// see contracts that are not modified once given to it, which holds for
// evidence (it is immutable). A memoised probe runs on a bundle holding
// nothing but the contract, so that its outcome cannot depend on anything
// else. A Memo is safe for concurrent use, and holds on to a bounded
// number of contracts.
type Memo struct {
	r  *Rubric
	mu sync.Mutex
	m  map[memoKey]*memoOutcome
	// most is the most findings an evaluation has had, the capacity the
	// next one starts with, so that its findings are allocated once.
	most atomic.Int32
}

type memoKey struct {
	c   *contract.Contract
	dim int // index in r.Dimensions
}

// memoOutcome is what a probe concluded and emitted; it is never
// modified once stored.
type memoOutcome struct {
	v        verdict
	findings []Finding
}

// memoOutcomes bounds a Memo; when full it is emptied.
const memoOutcomes = 2048

// NewMemo returns an empty memo for evaluations under r.
func NewMemo(r *Rubric) *Memo {
	return &Memo{r: r, m: map[memoKey]*memoOutcome{}}
}

// Evaluate returns Evaluate(b, r) for the memo's rubric r.
func (m *Memo) Evaluate(b *evidence.Bundle) Result { return evaluate(b, m.r, m) }

// score runs the contract-only probe sc of dimension i for p, or reuses
// its outcome for p's contract.
func (m *Memo) score(p *probe, i int, sc scorer) verdict {
	k := memoKey{p.b.Contract, i}
	m.mu.Lock()
	o := m.m[k]
	m.mu.Unlock()
	if o == nil {
		q := &probe{b: &evidence.Bundle{Contract: p.b.Contract}, r: p.r, p: p.p, dimension: p.dimension, signals: p.signals}
		o = &memoOutcome{v: sc.score(q), findings: q.findings}
		m.mu.Lock()
		if len(m.m) >= memoOutcomes {
			clear(m.m)
		}
		m.m[k] = o
		m.mu.Unlock()
	}
	for _, f := range o.findings {
		if f.Value != nil {
			// Each result owns its values.
			v := *f.Value
			f.Value = &v
		}
		p.findings = append(p.findings, f)
	}
	return o.v
}

// findingsCap is the capacity to allocate findings with: 16 without a
// memo, else the most an evaluation has had, up to 256.
func (m *Memo) findingsCap() int {
	if m == nil {
		return 16
	}
	return max(16, int(m.most.Load()))
}

// sawFindings records that an evaluation had n findings.
func (m *Memo) sawFindings(n int) {
	if m == nil || n > 256 {
		return
	}
	for {
		most := m.most.Load()
		if int32(n) <= most || m.most.CompareAndSwap(most, int32(n)) {
			return
		}
	}
}
