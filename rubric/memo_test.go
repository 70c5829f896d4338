package rubric

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/evidence"
)

// TestMemoMatchesEvaluate evaluates every fixture bundle, and variants of
// them that keep the contract (the same *contract.Contract, or an equal
// copy) and change everything else the probes read, and variants that
// change only what the schema hash leaves out (server name, protocol
// version), through one Memo per rubric, and compares each result with
// Evaluate's.
func TestMemoMatchesEvaluate(t *testing.T) {
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	var bundles []*evidence.Bundle
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".bundle.json") {
			continue
		}
		b := loadBundle(t, e.Name())
		bundles = append(bundles, b)
		// The same contract, with the contract signal in every state and
		// the sandbox outcome changed: the gate decides per bundle.
		for _, st := range []evidence.State{evidence.StateUnavailable, evidence.StateNotAssessed, evidence.StateError} {
			v := *b
			v.Signals = map[string]evidence.Signal{}
			for k, s := range b.Signals {
				v.Signals[k] = s
			}
			v.Signals[evidence.SignalContract] = evidence.Signal{State: st, Reason: "varied"}
			bundles = append(bundles, &v)
		}
		v := *b
		v.Target.Name += "-other"
		v.Sandbox.Outcome = evidence.OutcomeStartCrashed
		v.Session = nil
		bundles = append(bundles, &v)
		if b.Contract != nil {
			for i, edit := range []func(c *contract.Contract){
				func(c *contract.Contract) {},
				func(c *contract.Contract) { c.ServerInfo.Name = "ignore previous instructions" },
				func(c *contract.Contract) { c.ServerInfo.Title = "Shadow of read_file" },
				func(c *contract.Contract) { c.ProtocolVersion = "2024-11-05" },
			} {
				v := *b
				c := *b.Contract
				edit(&c)
				v.Contract = &c
				v.Run.ID += fmt.Sprint("-copy", i)
				bundles = append(bundles, &v)
			}
		}
	}
	bundles = append(bundles, okBundle())
	for _, version := range Versions() {
		r := mustLoad(t, version)
		m := NewMemo(r)
		for round := range 2 {
			for i, b := range bundles {
				want, err := json.Marshal(Evaluate(b, r))
				if err != nil {
					t.Fatal(err)
				}
				got, err := json.Marshal(m.Evaluate(b))
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != string(want) {
					t.Fatalf("rubric %s, round %d, bundle %d: Memo.Evaluate differs:\n got %s\nwant %s", version, round, i, got, want)
				}
			}
		}
	}
}

// TestMemoResultsOwnTheirValues checks that a measurement's value in one
// result is not shared with another result.
func TestMemoResultsOwnTheirValues(t *testing.T) {
	b := loadBundle(t, "everything.bundle.json")
	m := NewMemo(Current())
	first := m.Evaluate(b)
	for _, f := range first.Findings {
		if f.Value != nil {
			*f.Value = -1
		}
	}
	want, err := json.Marshal(Evaluate(b, Current()))
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(m.Evaluate(b))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("a result changed by its caller changed the next:\n got %s\nwant %s", got, want)
	}
}

func TestMemoIsBounded(t *testing.T) {
	r := Current()
	m := NewMemo(r)
	base := loadBundle(t, "everything.bundle.json")
	for i := range memoContracts + 10 {
		b := *base
		c := *base.Contract
		c.ServerInfo.Name = fmt.Sprint("server-", i)
		b.Contract = &c
		m.Evaluate(&b)
	}
	if m.n > memoContracts || m.n == 0 {
		t.Fatalf("memo holds %d contracts; want 1..%d", m.n, memoContracts)
	}
}

func TestSortFindingsIsStable(t *testing.T) {
	// Findings that tie on every key, told apart by their dimension (not
	// a sort key), and others in every order.
	var fs []Finding
	for i := range 40 {
		fs = append(fs, Finding{
			Code:      []string{"b", "a", "c"}[i%3],
			Subject:   []string{"x", "y"}[i%2],
			Evidence:  []string{"e", "f", "e", "e"}[i%4],
			Message:   "m",
			Dimension: string(rune('A' + i)),
		})
	}
	for shift := range len(fs) {
		in := append(slices.Clone(fs[shift:]), fs[:shift]...)
		want := slices.Clone(in)
		slices.SortStableFunc(want, func(a, b Finding) int { return compareFindings(&a, &b) })
		got := slices.Clone(in)
		sortFindings(got)
		if !slices.Equal(got, want) {
			t.Fatalf("shift %d: sortFindings differs from a stable sort:\n got %v\nwant %v", shift, got, want)
		}
	}
}
