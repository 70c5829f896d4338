package pipeline

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/supplychain"
)

// countingSupply answers every third-party question and counts them.
type countingSupply struct{ osv, socket, github atomic.Int32 }

func (c *countingSupply) fetch() supplychain.Fetch {
	return supplychain.Fetch{Endpoint: "http://127.0.0.1:1/fake", FetchedAt: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
}

type osvFake struct{ *countingSupply }

func (f osvFake) Scan(ctx context.Context, lockfile []byte, target string) (*evidence.OSVResult, supplychain.Fetch, error) {
	f.osv.Add(1)
	if !strings.Contains(string(lockfile), `"lockfileVersion"`) {
		panic("the stored lockfile was not passed on")
	}
	return &evidence.OSVResult{Source: "api", Packages: 3}, f.fetch(), nil
}

type socketFake struct{ *countingSupply }

func (f socketFake) Scan(ctx context.Context, target string, purls []string) (*evidence.SocketResult, supplychain.Fetch, error) {
	f.socket.Add(1)
	return &evidence.SocketResult{}, f.fetch(), nil
}

type githubFake struct{ *countingSupply }

func (f githubFake) Repo(ctx context.Context, owner, name string) (*evidence.GitHubResult, supplychain.Fetch, error) {
	f.github.Add(1)
	return &evidence.GitHubResult{Requested: owner + "/" + name, Exists: true, FullName: owner + "/" + name}, f.fetch(), nil
}

func storedRun(t *testing.T) *evidence.Bundle {
	t.Helper()
	date := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	b := &evidence.Bundle{
		SchemaVersion: evidence.SchemaVersion,
		Run:           evidence.Run{ID: "20260301t000000z-00000001", Date: date, Tool: evidence.Tool{Name: "verifymcp", Version: "0.4.0"}},
		Target:        evidence.Target{Ecosystem: "npm", Name: "pkg", Version: "1.0.0", Purl: "pkg:npm/pkg@1.0.0"},
		Sandbox:       evidence.Sandbox{Outcome: evidence.OutcomeOK},
		Install:       &evidence.Install{LockfileSHA256: strings.Repeat("a", 64)},
		Signals: map[string]evidence.Signal{
			evidence.SignalRegistryMeta: {State: evidence.StateObserved},
			evidence.SignalOSV:          {State: evidence.StateUnavailable, Reason: "api.osv.dev: no such host", ThirdParty: true},
			evidence.SignalContract:     {State: evidence.StateObserved},
		},
		Supply: &evidence.Supply{Registry: &evidence.RegistryMeta{Repository: &evidence.Repository{Host: "github.com", Owner: "acme", Name: "pkg"}}},
	}
	if err := b.Validate(); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRecollect: only the signals asked for are collected, each from what
// the stored run holds; everything else is carried over as it was, the
// run date included; the stored run is left untouched; and the new run
// names the one it carries over.
func TestRecollect(t *testing.T) {
	ctx := context.Background()
	c := &countingSupply{}
	now := time.Date(2026, 11, 30, 13, 0, 0, 0, time.UTC)
	p := testPipeline(Config{ToolVersion: "0.9.0", Now: func() time.Time { return now },
		Supply: Supply{OSV: osvFake{c}, Socket: socketFake{c}, GitHub: githubFake{c}}})
	old := storedRun(t)
	before, _ := json.Marshal(old)
	lockfile := []byte(`{"lockfileVersion":3,"packages":{"":{"name":"pkg"}}}`)

	got, err := p.Recollect(ctx, old, []string{evidence.SignalOSV, evidence.SignalGitHub}, lockfile, "20261130t130000z-00000002")
	if err != nil {
		t.Fatal(err)
	}
	if c.osv.Load() != 1 || c.github.Load() != 1 || c.socket.Load() != 0 {
		t.Errorf("asked OSV %d, GitHub %d, Socket %d times; want 1, 1, 0", c.osv.Load(), c.github.Load(), c.socket.Load())
	}
	b := got.Bundle
	if b.Signal(evidence.SignalOSV).State != evidence.StateObserved || b.Supply.OSV == nil || b.Supply.OSV.Packages != 3 {
		t.Errorf("osv: %+v %+v", b.Signal(evidence.SignalOSV), b.Supply.OSV)
	}
	if b.Signal(evidence.SignalGitHub).State != evidence.StateObserved || b.Supply.GitHub == nil || b.Supply.GitHub.Requested != "acme/pkg" {
		t.Errorf("github: %+v %+v", b.Signal(evidence.SignalGitHub), b.Supply.GitHub)
	}
	if _, ok := b.Signals[evidence.SignalSocket]; ok {
		t.Error("socket was not asked for but is in the new run")
	}
	if b.Supply.Registry == nil || b.Signal(evidence.SignalContract).State != evidence.StateObserved {
		t.Error("the carried-over evidence was lost")
	}
	want := &evidence.Recollection{From: old.Run.ID, Signals: []string{evidence.SignalGitHub, evidence.SignalOSV}, At: now,
		Tool: evidence.Tool{Name: "verifymcp", Version: "0.9.0"}}
	if r := b.Run.Recollected; r == nil || r.From != want.From || !slices.Equal(r.Signals, want.Signals) || !r.At.Equal(now) || r.Tool != want.Tool {
		t.Errorf("Recollected = %+v, want %+v", r, want)
	}
	if b.Run.ID != "20261130t130000z-00000002" || !b.Run.Date.Equal(old.Run.Date) || b.Run.Tool != old.Run.Tool {
		t.Errorf("run %+v: want the new id with the earlier run's date and tool", b.Run)
	}
	if after, _ := json.Marshal(old); string(after) != string(before) {
		t.Error("Recollect changed the stored run")
	}
	var round evidence.Bundle
	if err := json.Unmarshal(got.BundleJSON, &round); err != nil || round.Run.Recollected == nil {
		t.Errorf("BundleJSON does not hold the recollection: %v", err)
	}

	// From the derived run, the signals add up and the origin stays.
	again, err := p.Recollect(ctx, b, []string{evidence.SignalSocket}, lockfile, "")
	if err != nil {
		t.Fatal(err)
	}
	if r := again.Bundle.Run.Recollected; r.From != old.Run.ID || !slices.Equal(r.Signals, []string{evidence.SignalGitHub, evidence.SignalOSV, evidence.SignalSocket}) {
		t.Errorf("recollected from a derived run: %+v", r)
	}

	// What only a scan can collect is refused.
	for _, s := range []string{evidence.SignalBehavior, evidence.SignalContract, evidence.SignalRegistryMeta} {
		if _, err := p.Recollect(ctx, old, []string{s}, nil, ""); err == nil || !strings.Contains(err.Error(), "new scan") {
			t.Errorf("Recollect %s: %v, want a new scan to be needed", s, err)
		}
	}
}
