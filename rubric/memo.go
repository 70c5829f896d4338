package rubric

import (
	"reflect"
	"sync"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/contract/checks"
	"github.com/verifymcp/verifymcp/evidence"
)

// Memo evaluates a series of bundles under one rubric, as Evaluate does,
// doing once per contract the work that reads nothing of a bundle but its
// contract: the contract checks (contract/checks) when the rubric recomputes
// them from the stored contract, which is most of what Evaluate costs,
// and the probes of the dimensions that read only the contract. A store
// holds many runs of the same package, whose contracts are the same, so a
// rescoring pass gives one Memo every bundle it scores.
//
// Contracts are keyed by their content: by the schema hash stored with
// them, then compared in full (reflect.DeepEqual), since the hash leaves
// out the server's name and title and the protocol version, which the
// checks and spec_recency read, and since a stored hash is only as good
// as the bundle that carries it. A memoised probe runs on a bundle holding
// nothing but the contract, so that its outcome cannot depend on anything
// else. A Memo is safe for concurrent use and holds a bounded number of
// contracts; nothing it hands out is modified by Evaluate or meant to be
// modified by its callers, except the findings' values, which each result
// owns.
type Memo struct {
	r  *Rubric
	mu sync.Mutex
	m  map[string][]*memoContract // by stored schema hash
	n  int
}

// memoContract is what a Memo knows of one contract.
type memoContract struct {
	c  *contract.Contract
	mu sync.Mutex
	// outcomes are by index in the rubric's dimensions; nil until that
	// dimension's contract-only probe ran.
	outcomes []*memoOutcome
	checks   []checks.Finding
	checked  bool
}

// memoOutcome is what a probe concluded and emitted; it is never
// modified once stored.
type memoOutcome struct {
	v        verdict
	findings []Finding
}

// memoContracts bounds a Memo; when full it is emptied.
const memoContracts = 1024

// NewMemo returns an empty memo for evaluations under r.
func NewMemo(r *Rubric) *Memo {
	return &Memo{r: r, m: map[string][]*memoContract{}}
}

// Evaluate returns Evaluate(b, r) for the memo's rubric r.
func (m *Memo) Evaluate(b *evidence.Bundle) Result { return evaluate(b, m.r, m) }

// contract returns the memo's entry for a contract equal to c, adding
// one for c if there is none. It returns nil for a nil memo or contract.
func (m *Memo) contract(c *contract.Contract) *memoContract {
	if m == nil || c == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.m[c.SchemaHash] {
		if reflect.DeepEqual(e.c, c) {
			return e
		}
	}
	if m.n >= memoContracts {
		clear(m.m)
		m.n = 0
	}
	e := &memoContract{c: c, outcomes: make([]*memoOutcome, len(m.r.Dimensions))}
	m.m[c.SchemaHash] = append(m.m[c.SchemaHash], e)
	m.n++
	return e
}

// score runs the contract-only probe sc of dimension i for p, or reuses
// its outcome for p's contract.
func (e *memoContract) score(p *probe, i int, sc scorer) verdict {
	e.mu.Lock()
	o := e.outcomes[i]
	e.mu.Unlock()
	if o == nil {
		q := &probe{b: &evidence.Bundle{Contract: p.b.Contract}, r: p.r, p: p.p, dimension: p.dimension, signals: p.signals}
		o = &memoOutcome{v: sc.score(q), findings: q.findings}
		e.mu.Lock()
		e.outcomes[i] = o
		e.mu.Unlock()
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

// check returns checks.Check(c) for the entry's contract c, running the
// checks once. Their findings are shared and only read.
func (e *memoContract) check(c *contract.Contract) []checks.Finding {
	if e == nil {
		return checks.Check(c)
	}
	e.mu.Lock()
	fs, ok := e.checks, e.checked
	e.mu.Unlock()
	if !ok {
		fs = checks.Check(c)
		e.mu.Lock()
		e.checks, e.checked = fs, true
		e.mu.Unlock()
	}
	return fs
}
