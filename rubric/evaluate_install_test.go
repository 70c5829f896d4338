package rubric

import (
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/evidence"
)

func TestInstallability(t *testing.T) {
	runProbeCases(t, "installability", []probeCase{
		{name: "installed_with_matching_integrity", want: outcome{State: StateScored, Score: 100}},
		{
			name: "fetch_failed",
			modify: func(b *evidence.Bundle) {
				b.Install = &evidence.Install{Outcome: "failed", FailedStep: "fetch", Error: "npm ERR! code ETARGET"}
			},
			want: outcome{State: StateScored, Score: 0, Findings: []string{"pkg.install.failed mcp-notes"}},
		},
		{
			name: "timed_out",
			modify: func(b *evidence.Bundle) {
				b.Install.Outcome, b.Install.FailedStep = "timeout", "scripts"
			},
			want: outcome{State: StateScored, Score: 0, Findings: []string{"pkg.install.timeout mcp-notes"}},
		},
		{
			name: "integrity_mismatch",
			modify: func(b *evidence.Bundle) {
				b.Install.Integrity.Computed = "sha512-AAAA"
				b.Install.Integrity.Match = false
			},
			want: outcome{State: StateScored, Score: 0, Findings: []string{"pkg.install.integrity.mismatch mcp-notes"}},
		},
		{
			name: "mismatch_and_failure_both_reported",
			modify: func(b *evidence.Bundle) {
				b.Install.Outcome, b.Install.FailedStep = "failed", "fetch"
				b.Install.Integrity.Lockfile, b.Install.Integrity.Computed = "sha512-BBBB", ""
				b.Install.Integrity.Match = false
			},
			want: outcome{State: StateScored, Score: 0, Findings: []string{"pkg.install.failed mcp-notes", "pkg.install.integrity.mismatch mcp-notes"}},
		},
		{
			name: "fetch_failed_before_hashing_is_no_mismatch_claim",
			modify: func(b *evidence.Bundle) {
				b.Install = &evidence.Install{Outcome: "failed", FailedStep: "fetch", Integrity: evidence.Integrity{Expected: sri}}
			},
			want: outcome{State: StateScored, Score: 0, Findings: []string{"pkg.install.failed mcp-notes"}},
		},
		{
			name: "installed_without_registry_integrity",
			modify: func(b *evidence.Bundle) {
				b.Install.Integrity = evidence.Integrity{Computed: sri}
			},
			want: outcome{State: StateScored, Score: 0, Findings: []string{"pkg.install.integrity.unverified mcp-notes"}},
		},
		{
			name:   "observed_signal_without_install_evidence",
			modify: func(b *evidence.Bundle) { b.Install = nil },
			want:   outcome{State: StateZeroPoint, Score: 0},
		},
		{
			name:   "unknown_outcome",
			modify: func(b *evidence.Bundle) { b.Install.Outcome = "partial" },
			want:   outcome{State: StateZeroPoint, Score: 0},
		},
	})
}

func TestInstallScripts(t *testing.T) {
	script := func(pkg, event string, ran bool, exit int) evidence.Script {
		return evidence.Script{Package: pkg, Version: "1.0.0", Path: "node_modules/" + pkg, Event: event, Command: "node install.js", Ran: ran, ExitCode: exit}
	}
	runProbeCases(t, "install_scripts", []probeCase{
		{name: "no_scripts", want: outcome{State: StateScored, Score: 100}},
		{
			name: "scripts_ran_cleanly",
			modify: func(b *evidence.Bundle) {
				b.Install.Scripts = []evidence.Script{script("esbuild", "postinstall", true, 0), script("bufferutil", "install", true, 0)}
			},
			want: outcome{State: StateScored, Score: 50, Findings: []string{"pkg.install.scripts.present bufferutil", "pkg.install.scripts.present esbuild"}},
		},
		{
			name: "one_script_failed",
			modify: func(b *evidence.Bundle) {
				b.Install.Scripts = []evidence.Script{script("esbuild", "postinstall", true, 0), script("sharp", "install", true, 1)}
			},
			want: outcome{State: StateScored, Score: 0, Findings: []string{
				"pkg.install.scripts.failed sharp", "pkg.install.scripts.present esbuild", "pkg.install.scripts.present sharp",
			}},
		},
		{
			name: "script_timed_out",
			modify: func(b *evidence.Bundle) {
				s := script("sharp", "install", true, 0)
				s.TimedOut = true
				b.Install.Scripts = []evidence.Script{s}
				b.Install.Outcome, b.Install.FailedStep = "timeout", "scripts"
			},
			want: outcome{State: StateScored, Score: 0, Findings: []string{"pkg.install.scripts.failed sharp", "pkg.install.scripts.present sharp"}},
		},
		{
			name: "script_step_failed_without_a_failing_script",
			modify: func(b *evidence.Bundle) {
				b.Install.Scripts = []evidence.Script{script("sharp", "install", false, 0)}
				b.Install.Outcome, b.Install.FailedStep = "failed", "scripts"
			},
			want: outcome{State: StateScored, Score: 0, Findings: []string{"pkg.install.scripts.present sharp"}},
		},
		{
			name: "fetch_failed_leaves_no_script_evidence",
			modify: func(b *evidence.Bundle) {
				b.Install = &evidence.Install{Outcome: "failed", FailedStep: "fetch"}
			},
			want: outcome{State: StateZeroPoint, Score: 0},
		},
		{
			name:   "signal_error",
			modify: func(b *evidence.Bundle) { b.Signals[evidence.SignalInstall] = sig("error", "docker: image not found") },
			want:   outcome{State: StateZeroPoint, Score: 0},
		},
	})
}

func TestScriptFindingEvidence(t *testing.T) {
	b := okBundle()
	b.Install.Scripts = []evidence.Script{{
		Package: "sharp", Version: "0.33.5", Path: "node_modules/sharp", Event: "install",
		Command: "node install/check", Ran: true, ExitCode: 1,
		OutputTail: strings.Repeat("x", 500) + "\nsharp: Installation error: getaddrinfo EAI_AGAIN github.com",
	}}
	// Under v5, which words a failed script as this (see v6_test.go).
	res := Evaluate(b, mustLoad(t, "5"))
	var got []Finding
	for _, f := range res.Findings {
		if f.Dimension == "install_scripts" {
			got = append(got, f)
		}
	}
	tail := "…" + string([]rune(strings.Repeat("x", 500) + "\nsharp: Installation error: getaddrinfo EAI_AGAIN github.com")[500+60-239:])
	want := []Finding{
		{
			Code: CodeScriptsFailed, Kind: KindFinding, Severity: SeverityMedium, Dimension: "install_scripts", Subject: "sharp",
			Message:  "the install script of sharp@0.33.5 exited with code 1",
			Evidence: "install: node install/check; exit code 1; output: " + tail,
		},
		{
			Code: CodeScriptsPresent, Kind: KindFinding, Severity: SeverityLow, Dimension: "install_scripts", Subject: "sharp",
			Message:  `sharp@0.33.5 declares lifecycle script "install"`,
			Evidence: "install: node install/check",
		},
	}
	if d := diff(want, got); d != "" {
		t.Errorf("findings (-want +got):\n%s", d)
	}
	if n := len([]rune(tail)); n != 240 {
		t.Errorf("output tail is %d runes, want evidence_max_chars 240", n)
	}
}
