package pipeline

import (
	"context"
	"errors"
	"testing"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/sandbox"
)

// scannerFunc is a Scanner made of a function.
type scannerFunc func(ctx context.Context, runID string, t sandbox.Target) (*sandbox.Result, error)

func (f scannerFunc) Scan(ctx context.Context, runID string, t sandbox.Target) (*sandbox.Result, error) {
	return f(ctx, runID, t)
}

// TestScanPassesEnvironmentFaultsOn: an environment fault of the sandbox
// is returned as itself, never as a bundle (nothing to save) and never as
// an engine failure (another exit code), while an engine failure is still
// ErrSandbox and a package's failure is still evidence.
func TestScanPassesEnvironmentFaultsOn(t *testing.T) {
	fault := &sandbox.EnvironmentError{Kind: sandbox.FaultTLS, Host: "registry.npmjs.org:443", Code: "SELF_SIGNED_CERT_IN_CHAIN",
		Cause: "the fetch step does not trust the TLS certificate it was shown for registry.npmjs.org:443", Fix: "pass --ca-bundle"}
	engine := errors.New("create fetch container: Error response from daemon: no space left on device")
	tests := []struct {
		name        string
		res         *sandbox.Result
		err         error
		wantFault   bool
		wantSandbox bool
		wantOutcome evidence.Outcome
	}{
		{name: "environment fault", err: fault, wantFault: true},
		{name: "engine failure", err: engine, wantSandbox: true},
		{name: "package failure", res: &sandbox.Result{Outcome: evidence.OutcomeInstallFailed, Install: &evidence.Install{Outcome: evidence.InstallFailed, FailedStep: evidence.StepFetch, Error: "npm install failed (E404): Not Found"}},
			wantOutcome: evidence.OutcomeInstallFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := testPipeline(Config{
				Scanner: scannerFunc(func(context.Context, string, sandbox.Target) (*sandbox.Result, error) { return tt.res, tt.err }),
				Supply:  Supply{Skip: map[string]bool{evidence.SignalOSV: true, evidence.SignalSocket: true, evidence.SignalGitHub: true, evidence.SignalDNSSEC: true, evidence.SignalJudge: true}},
			})
			rt := &Resolved{Target: Target{Raw: "npm:is-number@7.0.0"}, Name: "is-number", Version: "7.0.0", Source: "registry",
				registrySig: evidence.Signal{State: evidence.StateObserved}}
			scanned, err := p.Scan(context.Background(), rt, Options{RunID: "20261201t000000z-00000000"})
			var env *sandbox.EnvironmentError
			if got := errors.As(err, &env); got != tt.wantFault {
				t.Errorf("errors.As(%v, *EnvironmentError) = %v, want %v", err, got, tt.wantFault)
			}
			if got := errors.Is(err, ErrSandbox); got != tt.wantSandbox {
				t.Errorf("errors.Is(%v, ErrSandbox) = %v, want %v", err, got, tt.wantSandbox)
			}
			if tt.wantOutcome == "" {
				if scanned != nil {
					t.Errorf("Scan returned a bundle (outcome %s) with error %v", scanned.Bundle.Sandbox.Outcome, err)
				}
				return
			}
			if err != nil || scanned == nil || scanned.Bundle.Sandbox.Outcome != tt.wantOutcome {
				t.Fatalf("Scan = %v, %v; want a bundle with outcome %s", scanned, err, tt.wantOutcome)
			}
		})
	}
}

// testPipeline is New for tests, under the rubric in force unless c
// names one; it panics on a bad c.
func testPipeline(c Config) *Pipeline {
	if c.Rubric == nil {
		c.Rubric = rubric.Current()
	}
	p, err := New(c)
	if err != nil {
		panic(err)
	}
	return p
}

// TestNew: New refuses a configuration without a rubric, or one that
// describes a sandbox without a Scanner; a pipeline without a Scanner
// resolves but refuses to scan.
func TestNew(t *testing.T) {
	scanner := scannerFunc(func(context.Context, string, sandbox.Target) (*sandbox.Result, error) {
		return nil, errors.New("not called")
	})
	rb := rubric.Current()
	tests := []struct {
		name    string
		c       Config
		wantErr string
	}{
		{name: "rubric only", c: Config{Rubric: rb}},
		{name: "scanner", c: Config{Rubric: rb, Scanner: scanner}},
		{name: "scanner and its sandbox", c: Config{Rubric: rb, Scanner: scanner, Sandbox: SandboxInfo{Image: "verifymcp-sandbox:1", Behavior: true}}},
		{name: "no rubric", c: Config{Scanner: scanner}, wantErr: "pipeline: no rubric (Config.Rubric scores the runs and keys the judgments)"},
		{name: "sandbox without scanner", c: Config{Rubric: rb, Sandbox: SandboxInfo{Image: "verifymcp-sandbox:1"}},
			wantErr: "pipeline: a sandbox is described (Config.Sandbox) but there is no Scanner"},
		{name: "behaviour without scanner", c: Config{Rubric: rb, Sandbox: SandboxInfo{Behavior: true}},
			wantErr: "pipeline: a sandbox is described (Config.Sandbox) but there is no Scanner"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(tt.c)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr || p != nil {
					t.Fatalf("New = %v, %v; want the error %q", p, err, tt.wantErr)
				}
				return
			}
			if err != nil || p == nil {
				t.Fatalf("New = %v, %v", p, err)
			}
			if p.cfg.Rubric.Version != rb.Version || (p.Scanner() == nil) != (tt.c.Scanner == nil) {
				t.Errorf("pipeline: rubric %q, scanner %v", p.cfg.Rubric.Version, p.Scanner())
			}
		})
	}
	t.Run("scan without scanner", func(t *testing.T) {
		rt := &Resolved{Target: Target{Raw: "npm:x@1.0.0"}, Name: "x", Version: "1.0.0", Source: "registry"}
		if _, err := testPipeline(Config{}).Scan(context.Background(), rt, Options{}); !errors.Is(err, ErrNoScanner) {
			t.Errorf("Scan without a scanner = %v, want ErrNoScanner", err)
		}
	})
}
