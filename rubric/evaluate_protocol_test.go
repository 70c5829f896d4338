package rubric

import (
	"testing"

	"github.com/verifymcp/verifymcp/evidence"
)

func TestSession(t *testing.T) {
	runProbeCases(t, "session", []probeCase{
		{name: "discover", want: outcome{State: StateScored, Score: 100}},
		{
			name:   "initialize_after_discover_error",
			modify: func(b *evidence.Bundle) { b.Session.HandshakePath = evidence.HandshakeInitialize },
			want:   outcome{State: StateScored, Score: 100},
		},
		{
			name:   "discover_unanswered",
			modify: func(b *evidence.Bundle) { b.Session.HandshakePath = evidence.HandshakeInitializeFallback },
			want:   outcome{State: StateScored, Score: 80, Findings: []string{"pkg.session.discover.unanswered"}},
		},
		{
			name: "start_crashed",
			modify: func(b *evidence.Bundle) {
				// A crash on the package's own code: from rubric v11 a
				// server that stops for configuration the scan did not
				// give is not assessed instead (limits_test.go).
				b.Session = &evidence.Session{Outcome: evidence.OutcomeStartCrashed, ExitCode: ptr(1), StderrTail: "Error: Cannot find module './build/index.js'"}
			},
			want: outcome{State: StateScored, Score: 0, Findings: []string{"pkg.session.start_crashed"}},
		},
		{
			name:   "handshake_timeout",
			modify: func(b *evidence.Bundle) { b.Session = &evidence.Session{Outcome: evidence.OutcomeHandshakeTimeout} },
			want:   outcome{State: StateScored, Score: 0, Findings: []string{"pkg.session.handshake_timeout"}},
		},
		{
			name: "protocol_error",
			modify: func(b *evidence.Bundle) {
				b.Session = &evidence.Session{Outcome: evidence.OutcomeProtocolError, Error: "invalid character 'S'"}
			},
			want: outcome{State: StateScored, Score: 0, Findings: []string{"pkg.session.protocol_error"}},
		},
		// A kill at the memory limit: pkg.session.oom until rubric v10, not
		// assessed from v11 (TestLimitsMemory).
		{
			name:   "signal_missing_from_bundle",
			modify: func(b *evidence.Bundle) { delete(b.Signals, evidence.SignalSession) },
			want:   outcome{State: StateZeroPoint, Score: 0},
		},
		{
			name:   "session_not_assessed_by_choice",
			modify: func(b *evidence.Bundle) { b.Signals[evidence.SignalSession] = sig("not_assessed", "--install-only") },
			want:   outcome{State: StateDropped, Score: 0},
		},
		{
			name: "session_not_reached_after_failed_install",
			modify: func(b *evidence.Bundle) {
				b.Sandbox.Outcome = evidence.OutcomeInstallFailed
				b.Signals[evidence.SignalSession] = sig("not_assessed", "install failed")
			},
			want: outcome{State: StateZeroPoint, Score: 0},
		},
	})
}

func TestProtocolHygiene(t *testing.T) {
	runProbeCases(t, "protocol_hygiene", []probeCase{
		{name: "clean", want: outcome{State: StateScored, Score: 100}},
		{
			name: "non_json_stdout",
			modify: func(b *evidence.Bundle) {
				b.Session.NonJSONLines, b.Session.NonJSONSample = 3, []string{"Server running on stdio"}
			},
			want: outcome{State: StateScored, Score: 50, Findings: []string{"pkg.protocol.stdout.non_json"}},
		},
		{
			name: "two_list_errors_and_truncation",
			modify: func(b *evidence.Bundle) {
				b.Session.ListErrors = map[string]string{"resources/list": "-32603 internal error", "prompts/list": "-32002 request timed out"}
				b.Session.Truncated = true
			},
			want: outcome{State: StateScored, Score: 25, Findings: []string{
				"pkg.protocol.list.failed prompts/list", "pkg.protocol.list.failed resources/list", "pkg.protocol.output.truncated",
			}},
		},
		{
			name: "penalties_clamp_at_zero",
			modify: func(b *evidence.Bundle) {
				b.Session.NonJSONLines = 1
				b.Session.ListErrors = map[string]string{"tools/list": "x", "prompts/list": "y", "resources/list": "z"}
			},
			want: outcome{State: StateScored, Score: 0, Findings: []string{
				"pkg.protocol.list.failed prompts/list", "pkg.protocol.list.failed resources/list", "pkg.protocol.list.failed tools/list",
				"pkg.protocol.stdout.non_json",
			}},
		},
		{
			name: "crashed_session_is_zero_point_but_findings_fire",
			modify: func(b *evidence.Bundle) {
				b.Session = &evidence.Session{Outcome: evidence.OutcomeProtocolError, NonJSONLines: 1, NonJSONSample: []string{"debug: ready"}}
			},
			want: outcome{State: StateZeroPoint, Score: 0, Findings: []string{"pkg.protocol.stdout.non_json"}},
		},
	})
}

func TestSpecRecency(t *testing.T) {
	version := func(v string) func(*evidence.Bundle) {
		return func(b *evidence.Bundle) { b.Contract.ProtocolVersion = v }
	}
	runProbeCases(t, "spec_recency", []probeCase{
		{name: "2026-07-28", modify: version("2026-07-28"), want: outcome{State: StateScored, Score: 100}},
		{name: "2025-11-25", modify: version("2025-11-25"), want: outcome{State: StateScored, Score: 100}},
		{name: "2025-06-18", modify: version("2025-06-18"), want: outcome{State: StateScored, Score: 70, Findings: []string{"pkg.session.spec.outdated"}}},
		{name: "2025-03-26", modify: version("2025-03-26"), want: outcome{State: StateScored, Score: 40, Findings: []string{"pkg.session.spec.outdated"}}},
		{name: "2024-11-05", modify: version("2024-11-05"), want: outcome{State: StateScored, Score: 20, Findings: []string{"pkg.session.spec.outdated"}}},
		{name: "unlisted", modify: version("2024-10-07"), want: outcome{State: StateScored, Score: 0, Findings: []string{"pkg.session.spec.outdated"}}},
		{
			name:   "contract_signal_error",
			modify: func(b *evidence.Bundle) { b.Signals[evidence.SignalContract] = sig("error", "tools/list: EOF") },
			want:   outcome{State: StateZeroPoint, Score: 0},
		},
		{
			name:   "observed_without_contract",
			modify: func(b *evidence.Bundle) { b.Contract = nil },
			want:   outcome{State: StateZeroPoint, Score: 0},
		},
	})
}
