package rescore

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
)

// variant returns the i-th realistic bundle: the server-everything fixture
// under a distinct run id, date, target version and, for every third run,
// a different tool surface, so rows are not identical.
func variant(base *evidence.Bundle, i int) *evidence.Bundle {
	b := *base
	b.Run.ID = fmt.Sprintf("run-%06d", i)
	b.Run.Date = base.Run.Date.Add(time.Duration(i) * time.Minute)
	b.Target.Name = fmt.Sprintf("@bench/server-%d", i%500)
	b.Target.Version = fmt.Sprintf("1.%d.%d", i/500, i%7)
	if i%3 == 0 {
		c := *base.Contract
		c.Tools = c.Tools[:len(c.Tools)-i%5]
		c.ProtocolVersion = []string{"2025-11-25", "2025-06-18", "2025-03-26"}[i%3]
		b.Contract = &c
	}
	return &b
}

// withSupply returns b carrying the supply-chain evidence and signals of
// supply (the supply fixture, as bundles written since rubric v3 do, or
// the dnssec fixture, which adds DNSSEC evidence, as since rubric v4).
func withSupply(b, supply *evidence.Bundle) *evidence.Bundle {
	c := *b
	c.Signals = maps.Clone(b.Signals)
	for _, name := range []string{evidence.SignalRegistryMeta, evidence.SignalOSV, evidence.SignalSocket, evidence.SignalGitHub, evidence.SignalDNSSEC} {
		c.Signals[name] = supply.Signals[name]
	}
	c.Supply = supply.Supply
	return &c
}

// withJudge returns b carrying the judge signal and verdicts of judge (the
// judge fixture, as bundles written since rubric v5 do).
func withJudge(b, judge *evidence.Bundle) *evidence.Bundle {
	c := *b
	c.Signals = maps.Clone(b.Signals)
	c.Signals[evidence.SignalJudge] = judge.Signals[evidence.SignalJudge]
	c.Judge = judge.Judge
	return &c
}

func loadFixture(t testing.TB, name string) *evidence.Bundle {
	t.Helper()
	// The store's fixtures: bundles as scans wrote them.
	data, err := os.ReadFile(filepath.Join("..", "store", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	b, err := evidence.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func ptr[T any](v T) *T { return &v }
