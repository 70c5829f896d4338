package pipeline

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/supplychain"
)

// fakeResolver knows one package, is-number@7.0.0.
type fakeResolver struct{}

func (fakeResolver) Resolve(_ context.Context, name, spec string) (*supplychain.Version, error) {
	if name != "is-number" {
		return nil, supplychain.ErrPackageNotFound
	}
	return &supplychain.Version{Name: name, Version: "7.0.0", Integrity: "sha512-x"}, nil
}
func (fakeResolver) Registry() string { return "http://127.0.0.1:1/" }

// TestPreparedSession: the prewarmed run id goes to the first scan only;
// closing a session whose prewarmed run no scan took removes it, and
// closing one whose run was taken removes nothing.
func TestPreparedSession(t *testing.T) {
	closed, discarded := 0, 0
	newSession := func() *Prepared {
		return &Prepared{first: "run-prewarmed", closeEngine: func() error { closed++; return nil }, discard: func() { discarded++ }}
	}
	s := newSession()
	if a, b := s.NextRunID(), s.NextRunID(); a != "run-prewarmed" || b == a || b == "" {
		t.Errorf("run ids %q, %q", a, b)
	}
	s.Close()
	if closed != 1 || discarded != 0 {
		t.Errorf("taken: closed %d, discarded %d", closed, discarded)
	}
	newSession().Close()
	if closed != 2 || discarded != 1 {
		t.Errorf("not taken: closed %d, discarded %d", closed, discarded)
	}
}

// TestOnDemand: nothing is prepared until a target resolved; the sandbox
// is prepared once, the first scan takes the prewarmed run id, and an
// engine failure is the infrastructure failure reported once cases ran,
// while a package's own failure is not.
func TestOnDemand(t *testing.T) {
	ctx := context.Background()
	var runIDs []string
	fail := error(nil)
	p := testPipeline(Config{
		Resolver: fakeResolver{},
		Scanner: scannerFunc(func(_ context.Context, runID string, _ sandbox.Target) (*sandbox.Result, error) {
			runIDs = append(runIDs, runID)
			if fail != nil {
				return nil, fail
			}
			return &sandbox.Result{Outcome: evidence.OutcomeInstallFailed, Install: &evidence.Install{Outcome: evidence.InstallFailed, FailedStep: evidence.StepFetch, Error: "E404"}}, nil
		}),
		Supply: skipAll(),
	})
	var prepared []string
	closed, discarded := 0, 0
	od := &OnDemand{Pipeline: p, Save: StoreSaver{Store: &memStore{}},
		Prepare: func(context.Context) (Session, error) {
			id := NewRunID(time.Now())
			prepared = append(prepared, id)
			return &Prepared{first: id, closeEngine: func() error { closed++; return nil }, discard: func() { discarded++ }}, nil
		}}

	if _, err := od.Run(ctx, "npm:not-there@1.0.0", Options{}); !errors.Is(err, supplychain.ErrPackageNotFound) {
		t.Fatalf("Run of an unknown package: %v", err)
	}
	if len(prepared) != 0 {
		t.Fatal("prepared the sandbox for a target that did not resolve")
	}
	if _, err := od.Run(ctx, "npm:is-number@7.0.0", Options{}); err != nil {
		t.Fatal(err)
	}
	fail = errors.New("create container: no space left on device")
	if _, err := od.Run(ctx, "npm:is-number@7.0.0", Options{}); !errors.Is(err, ErrSandbox) {
		t.Fatalf("engine failure: %v", err)
	}
	if len(prepared) != 1 || len(runIDs) != 2 || runIDs[0] != prepared[0] || runIDs[1] == prepared[0] {
		t.Errorf("prepared for %v, scans ran as %v: want one preparation, its run id taken by the first scan only", prepared, runIDs)
	}
	if !errors.Is(od.Infra(), ErrSandbox) {
		t.Errorf("Infra() = %v, want the engine failure", od.Infra())
	}
	od.Close()
	if closed != 1 || discarded != 0 {
		t.Errorf("closed %d, discarded %d; want the engine closed and nothing discarded (the prewarmed run was used)", closed, discarded)
	}
}
