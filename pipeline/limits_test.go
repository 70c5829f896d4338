package pipeline

import (
	"context"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/sandbox"
)

// TestScanRecordsLimits: a scan whose sandbox outcome shows a limit of the
// sandbox records the signals it stopped as not_assessed with its reason;
// the package's own failure keeps the signal states it always had. The
// outcomes are those the sandbox returned for real packages.
func TestScanRecordsLimits(t *testing.T) {
	one := 1
	tests := []struct {
		name string
		res  *sandbox.Result
		// want maps a signal to its state and a part of its reason.
		want map[string][2]string
	}{
		{"pypi:basic-memory==0.24.1 needs Python >= 3.12",
			&sandbox.Result{Outcome: evidence.OutcomeInstallFailed, Install: &evidence.Install{Outcome: evidence.InstallFailed, FailedStep: evidence.StepFetch,
				Error: "uv could not resolve the tree: no release of the tree fits the sandbox's Python 3.11: error: No solution found when resolving dependencies cause: Because the current Python version (3.11.2) does not satisfy Python>=3.12 and basic-memory==0.24.1 depends on Python>=3.12, we can conclude that basic-memory==0.24.1 cannot be used."}},
			map[string][2]string{
				evidence.SignalInstall:  {"not_assessed", "a limit of the sandbox, not a failure of the package: basic-memory==0.24.1 requires Python>=3.12"},
				evidence.SignalSession:  {"not_assessed", "not collected: basic-memory==0.24.1 requires Python>=3.12"},
				evidence.SignalContract: {"not_assessed", "Python>=3.12"},
				evidence.SignalBehavior: {"not_assessed", "Python>=3.12"},
			}},
		{"npm:@modelcontextprotocol/server-brave-search without BRAVE_API_KEY",
			&sandbox.Result{Outcome: evidence.OutcomeStartCrashed, Install: &evidence.Install{Outcome: evidence.InstallOK},
				Session:  &evidence.Session{Outcome: evidence.OutcomeStartCrashed, ExitCode: &one, StderrTail: "Error: BRAVE_API_KEY environment variable is required\n"},
				Behavior: &evidence.Behavior{Watches: []evidence.Watch{{Phase: evidence.PhaseRun, WatchedMS: 200, Sink: "ok", Tracer: "ok", Files: "ok"}}}},
			map[string][2]string{
				evidence.SignalInstall:  {"observed", ""},
				evidence.SignalSession:  {"not_assessed", "--env BRAVE_API_KEY=…"},
				evidence.SignalContract: {"not_assessed", "BRAVE_API_KEY"},
				evidence.SignalBehavior: {"observed", ""},
			}},
		{"npm E404: the package's own failure",
			&sandbox.Result{Outcome: evidence.OutcomeInstallFailed, Install: &evidence.Install{Outcome: evidence.InstallFailed, FailedStep: evidence.StepFetch,
				Error: "npm install failed (E404): 404 Not Found - GET https://registry.npmjs.org/mcp-server-weather-pro/-/mcp-server-weather-pro-0.4.2.tgz - Not found"}},
			map[string][2]string{
				evidence.SignalInstall: {"observed", ""},
				evidence.SignalSession: {"error", "not run: the install phase ended with install_failed"},
			}},
		{"pypi:mindmap-mcp-server==0.1.1 crashes on its own import",
			&sandbox.Result{Outcome: evidence.OutcomeStartCrashed, Install: &evidence.Install{Outcome: evidence.InstallOK},
				Session: &evidence.Session{Outcome: evidence.OutcomeStartCrashed, ExitCode: &one, StderrTail: "ModuleNotFoundError: No module named 'mcp.server.fastmcp'. This is mcp 2.x\n"}},
			map[string][2]string{
				evidence.SignalSession:  {"observed", ""},
				evidence.SignalContract: {"error", "not captured"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := testPipeline(Config{
				Scanner: scannerFunc(func(context.Context, string, sandbox.Target) (*sandbox.Result, error) { return tt.res, nil }),
				Supply:  Supply{Skip: map[string]bool{evidence.SignalOSV: true, evidence.SignalSocket: true, evidence.SignalGitHub: true, evidence.SignalDNSSEC: true, evidence.SignalJudge: true}},
				Sandbox: SandboxInfo{Behavior: true},
			})
			rt := &Resolved{Target: Target{Raw: "npm:x@1.0.0"}, Name: "x", Version: "1.0.0", Source: "registry", registrySig: evidence.Signal{State: evidence.StateObserved}}
			scanned, err := p.Scan(context.Background(), rt, Options{RunID: "20261201t000000z-00000000"})
			if err != nil {
				t.Fatal(err)
			}
			for name, w := range tt.want {
				s := scanned.Bundle.Signals[name]
				if string(s.State) != w[0] || !strings.Contains(s.Reason, w[1]) {
					t.Errorf("%s: %s %q, want %s with %q", name, s.State, s.Reason, w[0], w[1])
				}
			}
		})
	}
}
