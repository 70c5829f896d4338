package rubric

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/evidence"
)

func ptr[T any](v T) *T { return &v }

func sig(state, reason string) evidence.Signal {
	return evidence.Signal{State: evidence.State(state), Reason: reason}
}

const sri = "sha512-3q1pWnJYb0f1m9cQ0W8oS3V4n6y2mY3B5k9Gd1Jx0v4rS8tUe7aP2qL6hN1cZ5wK9fD3bX8yR0oT4iM7uE2gA=="

// okBundle is a bundle in which every v1 dimension scores 100: installed
// with matching integrity, no scripts, a clean session, a current protocol
// version and two fully described, annotated tools.
func okBundle() *evidence.Bundle {
	return &evidence.Bundle{
		SchemaVersion: evidence.SchemaVersion,
		Run:           evidence.Run{ID: "run-1", Date: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC), Tool: evidence.Tool{Name: "verifymcp", Version: "0.1.0"}},
		Target:        evidence.Target{Ecosystem: "npm", Name: "mcp-notes", Version: "1.2.3", Requested: "npm:mcp-notes@1.2.3", Source: "registry", Integrity: sri},
		Sandbox:       evidence.Sandbox{Outcome: evidence.OutcomeOK},
		Signals: map[string]evidence.Signal{
			evidence.SignalInstall:  sig("observed", ""),
			evidence.SignalSession:  sig("observed", ""),
			evidence.SignalContract: sig("observed", ""),
		},
		Install: &evidence.Install{
			Outcome:   "ok",
			Integrity: evidence.Integrity{Expected: sri, Lockfile: sri, Computed: sri, Match: true},
			Scripts:   []evidence.Script{},
		},
		Session: &evidence.Session{Outcome: evidence.OutcomeOK, HandshakePath: evidence.HandshakeDiscover},
		Contract: &contract.Contract{
			ProtocolVersion: "2025-11-25",
			ServerInfo:      contract.Implementation{Name: "notes", Version: "1.2.3"},
			Tools: []contract.Tool{
				{
					Name:        "search_notes",
					Description: "Search the user's notes by full-text query.",
					InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"Full-text query"}},"required":["query"]}`),
					Annotations: &contract.Annotations{ReadOnlyHint: ptr(true), OpenWorldHint: ptr(false)},
				},
				{
					Name:        "archive_note",
					Description: "Move a note to the archive folder; it can be restored.",
					InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"Note id"}}}`),
					Annotations: &contract.Annotations{DestructiveHint: ptr(false), IdempotentHint: ptr(true), OpenWorldHint: ptr(false)},
				},
			},
		},
	}
}

func dim(res Result, id string) DimensionScore {
	for _, d := range res.Dimensions {
		if d.ID == id {
			return d
		}
	}
	return DimensionScore{}
}

// outcome is the part of a Result one probe test looks at.
type outcome struct {
	State State
	Score float64
	// Findings are "code subject" for the dimension's findings, in order.
	Findings []string
}

func outcomeOf(res Result, id string) outcome {
	d := dim(res, id)
	o := outcome{State: d.State, Score: d.Score, Findings: []string{}}
	for _, f := range res.Findings {
		if f.Dimension == id {
			o.Findings = append(o.Findings, strings.TrimSpace(f.Code+" "+f.Subject))
		}
	}
	return o
}

// under returns what o becomes under rubric version v: from rubric v11 the
// unverified markers (a signal not consulted, an integrity not checked)
// are no longer findings, and the dimension's state and score are the same.
func (o outcome) under(v string) outcome {
	if compareVersions(v, unverifiedUntil) < 0 {
		return o
	}
	out := o
	out.Findings = []string{}
	for _, f := range o.Findings {
		if code, _, _ := strings.Cut(f, " "); !strings.HasSuffix(code, ".unverified") {
			out.Findings = append(out.Findings, f)
		}
	}
	return out
}

type probeCase struct {
	name   string
	modify func(b *evidence.Bundle)
	want   outcome
}

// mustLoad loads an embedded rubric version.
func mustLoad(t testing.TB, version string) *Rubric {
	t.Helper()
	r, err := Load(version)
	if err != nil {
		t.Fatalf("Load(%s): %v", version, err)
	}
	return r
}

// runProbeCases runs each case under every rubric version that has the
// dimension: a probe shared by versions must give the same outcome in
// each (only the weights differ).
func runProbeCases(t *testing.T, dimension string, tests []probeCase) {
	t.Helper()
	var rubrics []*Rubric
	for _, v := range Versions() {
		r := mustLoad(t, v)
		if _, ok := r.Dimension(dimension); ok {
			if dimension == DimensionPromptIntegrity && !r.ChecksRunnable() {
				// v5 and v6 score checks 1, which this build does not
				// run (TestContractChecksPin).
				continue
			}
			rubrics = append(rubrics, r)
		}
	}
	if len(rubrics) == 0 {
		t.Fatalf("no rubric version has dimension %s", dimension)
	}
	for _, tt := range tests {
		for _, r := range rubrics {
			t.Run(tt.name+"/v"+r.Version, func(t *testing.T) {
				b := okBundle()
				if tt.modify != nil {
					tt.modify(b)
				}
				got := outcomeOf(Evaluate(b, r), dimension)
				if tt.want.Findings == nil {
					tt.want.Findings = []string{}
				}
				if d := diff(tt.want.under(r.Version), got); d != "" {
					t.Errorf("%s (-want +got):\n%s", dimension, d)
				}
			})
		}
	}
}

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

func TestSchemaCompleteness(t *testing.T) {
	tools := func(ts ...contract.Tool) func(*evidence.Bundle) {
		return func(b *evidence.Bundle) { b.Contract.Tools = ts }
	}
	tool := func(name, schema string) contract.Tool {
		return contract.Tool{Name: name, Description: "A tool description that is long enough.", InputSchema: json.RawMessage(schema), Annotations: &contract.Annotations{ReadOnlyHint: ptr(true)}}
	}
	runProbeCases(t, "schema_completeness", []probeCase{
		{name: "complete", want: outcome{State: StateScored, Score: 100, Findings: []string{"pkg.contract.schema.completeness"}}},
		{
			name: "half_described_and_one_missing",
			modify: tools(
				tool("a", `{"type":"object","properties":{"x":{"type":"string","description":"X"},"y":{"type":"string"}}}`),
				tool("b", ``),
				tool("c", `{"type":"object"}`),
				tool("d", `{"type":"object","properties":{"e":{"enum":["1","2"],"description":"E"},"r":{"$ref":"#/$defs/r","description":" "}}}`),
			),
			// a: 1/2, b: 0, c: 1, d: 1/2 -> mean 0.5.
			want: outcome{State: StateScored, Score: 50, Findings: []string{
				"pkg.contract.schema.completeness", "pkg.contract.schema.missing b",
				"pkg.contract.schema.undescribed_parameter a", "pkg.contract.schema.undescribed_parameter d",
			}},
		},
		{
			name:   "no_tools_is_not_applicable",
			modify: tools(),
			want:   outcome{State: StateDropped, Score: 0},
		},
		{
			name:   "contract_not_assessed",
			modify: func(b *evidence.Bundle) { b.Signals[evidence.SignalContract] = sig("not_assessed", "opted out") },
			want:   outcome{State: StateDropped, Score: 0},
		},
		{
			name: "contract_not_reached_after_crash",
			modify: func(b *evidence.Bundle) {
				b.Sandbox.Outcome = evidence.OutcomeStartCrashed
				b.Session = &evidence.Session{Outcome: evidence.OutcomeStartCrashed}
				b.Contract = nil
				b.Signals[evidence.SignalContract] = sig("not_assessed", "no session")
			},
			want: outcome{State: StateZeroPoint, Score: 0},
		},
	})
}

func TestCheckSchema(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   schemaCheck
	}{
		{"absent", ``, schemaCheck{problem: "no input schema"}},
		{"null", `null`, schemaCheck{problem: "no input schema"}},
		{"array", `[1]`, schemaCheck{problem: "input schema is not a JSON object: [1]"}},
		{"invalid", `{"type":"object",`, schemaCheck{problem: "input schema is not valid JSON"}},
		{"escaped_type", `{"typ\u0065":"obj\u0065ct"}`, schemaCheck{object: true}},
		{
			name:   "duplicate_keys_last_wins",
			schema: `{"type":"string","type":"object","properties":{"a":{"type":"string"},"a":{"type":"string","description":"A"}}}`,
			want:   schemaCheck{object: true, total: 1, complete: 1},
		},
		{
			name:   "nested_strings_with_braces",
			schema: `{"properties":{"q":{"description":"a \"}\" brace","default":"{]","type":"string"}},"type":"object"}`,
			want:   schemaCheck{object: true, total: 1, complete: 1},
		},
		{
			name:   "blank_escaped_description",
			schema: `{"type":"object","properties":{"q":{"type":"string","description":"\u0020\t"}}}`,
			want:   schemaCheck{object: true, total: 1, lacking: []string{"q (no description)"}},
		},
		{"no_type", `{"properties":{}}`, schemaCheck{problem: `input schema has no "type"`}},
		{"string_type", `{"type":"string"}`, schemaCheck{problem: `input schema "type" is "string", not "object"`}},
		{"type_list", `{"type":["object","null"]}`, schemaCheck{problem: `input schema "type" is ["object","null"], not "object"`}},
		{"bad_properties", `{"type":"object","properties":[]}`, schemaCheck{problem: `input schema "properties" is not an object`}},
		{"no_properties", `{"type":"object"}`, schemaCheck{object: true}},
		{"null_properties", `{"type":"object","properties":null}`, schemaCheck{object: true}},
		{
			name:   "mixed",
			schema: `{"type":"object","properties":{"z":{"type":"string","description":"Z"},"b":true,"a":{"description":"A"},"c":{"oneOf":[{"type":"string"}]},"d":{},"e":{"const":1,"Description":"case matters"}}}`,
			want: schemaCheck{object: true, total: 6, complete: 1, lacking: []string{
				"a (no type)", "b (not a schema object)", "c (no description)", "d (no type, no description)", "e (no description)",
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := checkSchema(json.RawMessage(tt.schema))
			if !reflect.DeepEqual(tt.want, got) {
				t.Errorf("checkSchema(%s) (-want +got):\n%s", tt.schema, lineDiff(
					strings.Split(fmt.Sprintf("%+v", tt.want), " "), strings.Split(fmt.Sprintf("%+v", got), " ")))
			}
		})
	}
}

func TestDescriptionCoverage(t *testing.T) {
	describe := func(descs ...string) func(*evidence.Bundle) {
		return func(b *evidence.Bundle) {
			b.Contract.Tools = nil
			for i, d := range descs {
				b.Contract.Tools = append(b.Contract.Tools, contract.Tool{
					Name: fmt.Sprintf("t%d", i), Description: d,
					InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: &contract.Annotations{ReadOnlyHint: ptr(true)},
				})
			}
		}
	}
	runProbeCases(t, "description_coverage", []probeCase{
		{name: "all_described", want: outcome{State: StateScored, Score: 100, Findings: []string{"pkg.contract.description.coverage"}}},
		{
			name: "threshold_is_20_trimmed_characters",
			// 19 characters padded with spaces, exactly 20, 20 multi-byte
			// runes, empty.
			modify: describe("   Lists all my notes.   ", "Lists all the notes.", "Ññññññññññññññññññññ", ""),
			want: outcome{State: StateScored, Score: 50, Findings: []string{
				"pkg.contract.description.coverage", "pkg.contract.description.missing t0", "pkg.contract.description.missing t3",
			}},
		},
		{name: "no_tools", modify: describe(), want: outcome{State: StateDropped, Score: 0}},
	})
}

func TestActionSafety(t *testing.T) {
	withTools := func(ts ...contract.Tool) func(*evidence.Bundle) {
		return func(b *evidence.Bundle) { b.Contract.Tools = ts }
	}
	readOnly := func(name, title string) contract.Tool {
		return contract.Tool{Name: name, Title: title, Annotations: &contract.Annotations{ReadOnlyHint: ptr(true)}}
	}
	runProbeCases(t, "action_safety", []probeCase{
		{name: "annotated_non_destructive", want: outcome{State: StateScored, Score: 100}},
		{
			name: "contradiction_in_name",
			modify: withTools(
				readOnly("delete_note", ""), readOnly("getNotes", ""),
			),
			want: outcome{State: StateScored, Score: 60, Findings: []string{"pkg.contract.annotation.contradiction delete_note"}},
		},
		{
			name: "contradiction_in_camel_case_and_title",
			modify: withTools(
				readOnly("dropTable", ""), readOnly("notes", "Send Email"), readOnly("runtime", "Runtime info"),
			),
			want: outcome{State: StateScored, Score: 20, Findings: []string{
				"pkg.contract.annotation.contradiction dropTable", "pkg.contract.annotation.contradiction notes",
			}},
		},
		{
			name: "absent_annotations_count_by_share",
			modify: withTools(
				contract.Tool{Name: "write_file"}, readOnly("read_file", ""), readOnly("list_dir", ""), readOnly("stat", ""),
			),
			// 100 - 50 * 1/4 = 87.5; write_file is destructive by default.
			want: outcome{State: StateScored, Score: 87.5, Findings: []string{
				"pkg.contract.annotation.absent write_file", "pkg.contract.tool.destructive write_file",
			}},
		},
		{
			name: "destructive_listed",
			modify: withTools(
				contract.Tool{Name: "drop_table", Annotations: &contract.Annotations{DestructiveHint: ptr(true)}},
				contract.Tool{Name: "insert_row", Annotations: &contract.Annotations{OpenWorldHint: ptr(false)}},
				contract.Tool{Name: "select", Annotations: &contract.Annotations{DestructiveHint: ptr(false)}},
			),
			want: outcome{State: StateScored, Score: 100, Findings: []string{
				"pkg.contract.tool.destructive drop_table", "pkg.contract.tool.destructive insert_row",
			}},
		},
		{
			name: "clamped_at_zero",
			modify: withTools(
				readOnly("delete_a", ""), readOnly("delete_b", ""), readOnly("delete_c", ""),
			),
			want: outcome{State: StateScored, Score: 0, Findings: []string{
				"pkg.contract.annotation.contradiction delete_a", "pkg.contract.annotation.contradiction delete_b",
				"pkg.contract.annotation.contradiction delete_c",
			}},
		},
		{name: "no_tools", modify: withTools(), want: outcome{State: StateDropped, Score: 0}},
		{
			name:   "contract_unavailable",
			modify: func(b *evidence.Bundle) { b.Signals[evidence.SignalContract] = sig("unavailable", "") },
			want:   outcome{State: StateZeroPoint, Score: 0},
		},
	})
}

func TestContradictionEvidence(t *testing.T) {
	b := okBundle()
	b.Contract.Tools = []contract.Tool{{Name: "notes", Title: "Send Email", Annotations: &contract.Annotations{ReadOnlyHint: ptr(true)}}}
	res := Evaluate(b, Current())
	want := Finding{
		Code: CodeAnnotationContradiction, Kind: KindFinding, Severity: SeverityHigh, Dimension: "action_safety", Subject: "notes",
		Message:  `tool "notes" claims readOnlyHint true, but its title puts it to "send", which changes its environment, and its description does not say it writes nothing`,
		Evidence: `title "Send Email"; readOnlyHint: true`,
	}
	var got Finding
	for _, f := range res.Findings {
		if f.Code == CodeAnnotationContradiction {
			got = f
		}
	}
	if d := diff(want, got); d != "" {
		t.Errorf("contradiction (-want +got):\n%s", d)
	}
	// A rubric value built without Load has no verb set; the probe must
	// find the same verbs by comparing them one by one.
	r := *Current()
	r.verbs = nil
	if d := diff(res, Evaluate(b, &r)); d != "" {
		t.Errorf("without the verb set (-want +got):\n%s", d)
	}
}

// TestComposite pins composites under rubric v1, whose weights the comments
// spell out; TestCompositeV2 does the same for v2.
func TestComposite(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*evidence.Bundle)
		want   *float64
	}{
		{name: "everything_100", want: ptr(100.0)},
		{
			// installability 0 (15), install_scripts 0 because the script
			// step failed (10), session 80 (15), the rest 100 (60):
			// (0 + 0 + 1200 + 6000) / 100.
			name: "weighted_mean",
			modify: func(b *evidence.Bundle) {
				b.Install.Outcome = "failed"
				b.Install.FailedStep = "scripts"
				b.Install.Scripts = nil
				b.Session.HandshakePath = evidence.HandshakeInitializeFallback
			},
			want: ptr(72.0),
		},
		{
			// The four dimensions that need the contract (weight 50) are
			// dropped, so the composite is over the sandbox dimensions.
			name: "dropped_dimensions_leave_the_denominator",
			modify: func(b *evidence.Bundle) {
				b.Signals[evidence.SignalContract] = sig("not_assessed", "opted out")
				b.Session.NonJSONLines = 1
			},
			// (15*100 + 10*100 + 15*100 + 10*50) / 50 = 90.
			want: ptr(90.0),
		},
		{
			name: "zero_points_stay_in_the_denominator",
			modify: func(b *evidence.Bundle) {
				b.Signals[evidence.SignalContract] = sig("unavailable", "")
			},
			// (1500 + 1000 + 1500 + 1000 + 0 * 60) / 100 = 50.
			want: ptr(50.0),
		},
		{
			name: "rounded_to_one_decimal",
			modify: func(b *evidence.Bundle) {
				b.Contract.Tools[0].Description = "short"
				b.Contract.Tools = append(b.Contract.Tools, b.Contract.Tools[1])
			},
			// description_coverage 66.66… rounds to 66.7; composite
			// (9000 + 667) / 100 = 96.67 -> 96.7.
			want: ptr(96.7),
		},
		{
			name: "all_dropped_is_nil",
			modify: func(b *evidence.Bundle) {
				for _, s := range []string{evidence.SignalInstall, evidence.SignalSession, evidence.SignalContract} {
					b.Signals[s] = sig("not_assessed", "dry run")
				}
			},
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := okBundle()
			if tt.modify != nil {
				tt.modify(b)
			}
			res := Evaluate(b, mustLoad(t, "1"))
			if d := diff(tt.want, res.Score); d != "" {
				t.Errorf("Score (-want +got):\n%s\ndimensions: %+v", d, res.Dimensions)
			}
		})
	}
}

func TestGateReasons(t *testing.T) {
	v1 := mustLoad(t, "1")
	b := okBundle()
	b.Signals[evidence.SignalSession] = sig("not_assessed", "--install-only")
	b.Signals[evidence.SignalContract] = sig("error", "listing panicked")
	res := Evaluate(b, v1)
	got := dim(res, "spec_recency")
	want := DimensionScore{ID: "spec_recency", Weight: 10, State: StateZeroPoint, Score: 0,
		Reason: "signal contract is error: listing panicked"}
	if d := diff(want, got); d != "" {
		t.Errorf("an error outranks not_assessed (-want +got):\n%s", d)
	}
	got = dim(res, "session")
	want = DimensionScore{ID: "session", Weight: 15, State: StateDropped, Score: 0,
		Reason: "signal sandbox.session is not_assessed: --install-only"}
	if d := diff(want, got); d != "" {
		t.Errorf("session (-want +got):\n%s", d)
	}
	delete(b.Signals, evidence.SignalInstall)
	got = dim(Evaluate(b, v1), "installability")
	want = DimensionScore{ID: "installability", Weight: 15, State: StateZeroPoint, Score: 0,
		Reason: "signal sandbox.install is not recorded in the bundle"}
	if d := diff(want, got); d != "" {
		t.Errorf("missing signal (-want +got):\n%s", d)
	}
}

func loadBundle(t testing.TB, name string) *evidence.Bundle {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	b, err := evidence.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEvaluateDeterministic(t *testing.T) {
	b := loadBundle(t, "everything.bundle.json")
	watched(func(bh *evidence.Behavior) { *bh = *richBehavior() })(b)
	s := loadBundle(t, "supply.bundle.json")
	b.Supply, b.Run.Date = s.Supply, s.Run.Date
	for _, name := range []string{evidence.SignalRegistryMeta, evidence.SignalOSV, evidence.SignalSocket, evidence.SignalGitHub} {
		b.Signals[name] = s.Signals[name]
	}
	// An alias listed again, and a malware advisory, so that order could
	// matter to both supply probes.
	dup := b.Supply.OSV.Vulnerabilities[1]
	dup.ID, dup.Aliases = dup.Aliases[0], []string{dup.ID}
	b.Supply.OSV.Vulnerabilities = append(b.Supply.OSV.Vulnerabilities, dup,
		evidence.Vulnerability{ID: "MAL-2025-7", Package: "pg-hstore", Version: "2.3.4", Malware: true})
	b.Session.ListErrors = map[string]string{"prompts/list": "a", "resources/list": "b", "resources/templates/list": "c"}
	b.Install.Scripts = []evidence.Script{
		{Package: "z", Event: "postinstall", Ran: true, ExitCode: 1},
		{Package: "a", Event: "install", Ran: true},
		{Package: "a", Event: "preinstall", Ran: true},
	}
	first, err := json.Marshal(Evaluate(b, Current()))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		// Reversing the tools and scripts must not change the result.
		c := *b
		ct := *b.Contract
		ct.Tools = append([]contract.Tool(nil), b.Contract.Tools...)
		for l, r := 0, len(ct.Tools)-1; l < r; l, r = l+1, r-1 {
			ct.Tools[l], ct.Tools[r] = ct.Tools[r], ct.Tools[l]
		}
		c.Contract = &ct
		// And the behaviour events.
		bh := *b.Behavior
		bh.Network = slices.Clone(bh.Network)
		slices.Reverse(bh.Network)
		bh.Processes = slices.Clone(bh.Processes)
		slices.Reverse(bh.Processes)
		bh.Files = slices.Clone(bh.Files)
		slices.Reverse(bh.Files)
		bh.Exfiltration = slices.Clone(bh.Exfiltration)
		slices.Reverse(bh.Exfiltration)
		c.Behavior = &bh
		// And the supply-chain lists.
		sp := *b.Supply
		osv := *sp.OSV
		osv.Vulnerabilities = slices.Clone(osv.Vulnerabilities)
		slices.Reverse(osv.Vulnerabilities)
		sock := *sp.Socket
		sock.Alerts = slices.Clone(sock.Alerts)
		slices.Reverse(sock.Alerts)
		sp.OSV, sp.Socket = &osv, &sock
		c.Supply = &sp
		if i%2 == 1 {
			c = *b
		}
		got, err := json.Marshal(Evaluate(&c, Current()))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(first) {
			t.Fatalf("run %d differs:\n%s", i, lineDiff(strings.Split(string(first), ","), strings.Split(string(got), ",")))
		}
	}
}

// TestEverything pins the score of the realistic fixture, whose tools
// mirror @modelcontextprotocol/server-everything, under rubric v1.
func TestEverything(t *testing.T) {
	v1 := mustLoad(t, "1")
	res := Evaluate(loadBundle(t, "everything.bundle.json"), v1)
	var codes []string
	for _, f := range res.Findings {
		codes = append(codes, strings.TrimSpace(f.Code+" "+f.Subject))
	}
	wantCodes := []string{
		"pkg.contract.annotation.absent startElicitation",
		"pkg.contract.annotation.absent zip",
		"pkg.contract.description.coverage",
		"pkg.contract.description.missing add",
		"pkg.contract.schema.completeness",
		"pkg.contract.tool.destructive startElicitation",
		"pkg.contract.tool.destructive zip",
		"pkg.session.spec.outdated",
	}
	if d := diff(wantCodes, codes); d != "" {
		t.Errorf("findings (-want +got):\n%s", d)
	}
	// (1500 + 1000 + 1500 + 1000 + 700 + 1500 + 923 + 1384.5) / 100.
	if d := diff(ptr(95.1), res.Score); d != "" {
		t.Errorf("Score (-want +got):\n%s", d)
	}
	if res.RubricVersion != "1" || res.RubricHash != v1.Hash {
		t.Errorf("result carries rubric %s %s, want 1 %s", res.RubricVersion, res.RubricHash, v1.Hash)
	}
	for _, f := range res.Findings {
		if f.Kind == KindMeasurement && f.Value == nil {
			t.Errorf("measurement %s has no value", f.Code)
		}
		if f.Kind == KindFinding && f.Value != nil {
			t.Errorf("finding %s has a value", f.Code)
		}
	}
}

// TestFindingsMatchCatalog runs every probe case's bundle shape through
// Evaluate and checks each finding against the catalog entry of its code.
func TestFindingsMatchCatalog(t *testing.T) {
	b := loadBundle(t, "everything.bundle.json")
	b.Session.NonJSONLines, b.Session.Truncated = 2, true
	b.Session.ListErrors = map[string]string{"prompts/list": "x"}
	b.Install.Scripts = []evidence.Script{{Package: "a", Event: "install", Ran: true, ExitCode: 2}}
	b.Contract.Tools = append(b.Contract.Tools, contract.Tool{Name: "rm", Annotations: &contract.Annotations{ReadOnlyHint: ptr(true), Title: "Delete"}})
	watched(func(bh *evidence.Behavior) { *bh = *richBehavior() })(b)
	res := Evaluate(b, Current())
	seen := map[string]bool{}
	for _, f := range res.Findings {
		def, ok := Current().Code(f.Code)
		if !ok {
			t.Errorf("%s not in catalog", f.Code)
			continue
		}
		checkAgainstCatalog(t, f, def)
		if scorers[f.Dimension].emits[f.Code] != f.Kind {
			t.Errorf("%s: not listed in the emits of %s", f.Code, f.Dimension)
		}
		if f.Message == "" || f.Evidence == "" {
			t.Errorf("%s %s: empty message or evidence", f.Code, f.Subject)
		}
		seen[f.Code] = true
	}
	if len(seen) < 22 {
		t.Errorf("only %d distinct codes fired; the fixture should exercise most probes", len(seen))
	}
	for _, c := range Current().Codes {
		if strings.HasPrefix(c.Code, "pkg.behavior.") && !seen[c.Code] {
			t.Errorf("%s did not fire; the rich behaviour should exercise every behaviour code", c.Code)
		}
	}
}

// checkAgainstCatalog checks a finding's kind, severity and dimension
// against its code's catalog entry: a graded code's severity is any up to
// the catalog's, others are the catalog's.
func checkAgainstCatalog(t *testing.T, f Finding, def CodeDef) {
	t.Helper()
	sevOK := f.Severity == def.Severity
	if def.Graded {
		sevOK = f.Severity.Rank() >= 0 && f.Severity.Rank() <= def.Severity.Rank()
	}
	if f.Kind != def.Kind || !sevOK || f.Dimension != def.Dimension {
		t.Errorf("%s: finding %s/%s/%s, catalog %s/%s/%s (graded %v)", f.Code, f.Kind, f.Severity, f.Dimension, def.Kind, def.Severity, def.Dimension, def.Graded)
	}
}

// TestSupplyFindingsMatchCatalog runs bundles that together fire every
// supply-chain and DNSSEC code and checks each finding against the
// catalog.
func TestSupplyFindingsMatchCatalog(t *testing.T) {
	r := Current()
	seen := map[string]bool{}
	supplyCode := func(code string) bool {
		return strings.HasPrefix(code, "pkg.supply.") || strings.HasPrefix(code, "pkg.dnssec.")
	}
	check := func(b *evidence.Bundle) {
		for _, f := range Evaluate(b, r).Findings {
			def, ok := r.Code(f.Code)
			if !ok {
				t.Errorf("%s not in catalog", f.Code)
				continue
			}
			checkAgainstCatalog(t, f, def)
			if !supplyCode(f.Code) {
				continue
			}
			if f.Message == "" || f.Evidence == "" || f.Subject == "" {
				t.Errorf("%s: empty message, evidence or subject: %+v", f.Code, f)
			}
			seen[f.Code] = true
		}
	}
	check(loadBundle(t, "supply.bundle.json"))
	check(loadBundle(t, "unavailable.bundle.json"))
	b := supplyBundle()
	rg := b.Supply.Registry
	rg.RepositoryURL, rg.Repository, rg.MCPName = "", nil, ""
	rg.PublishedAt, rg.FirstPublishedAt = at(-time.Hour), at(-2*day)
	b.Supply.GitHub = &evidence.GitHubResult{Requested: "acme/mcp-notes"}
	b.Supply.Socket.Malware = true
	b.Supply.Socket.Alerts = append(b.Supply.Socket.Alerts, evidence.SocketAlert{Type: "didYouMean", Severity: "critical", Package: "mcp-notes", Version: "1.2.3"})
	b.Supply.OSV.Vulnerabilities = []evidence.Vulnerability{{ID: "MAL-2025-1", Package: "mcp-notes", Version: "1.2.3", Malware: true}}
	check(b)
	b = supplyBundle()
	b.Supply.Registry.RepositoryURL, b.Supply.Registry.Repository = "acme notes", nil
	b.Supply.Registry.MCPName = "com.example/notes"
	b.Supply.GitHub.Disabled = true
	check(b)
	b = supplyBundle()
	b.Supply.GitHub.FullName = "acme2/notes"
	check(b)
	b = supplyBundle()
	b.Supply.MCPRegistry.Packages[0].Identifier = "notes-mcp"
	check(b)
	check(loadBundle(t, "dnssec.bundle.json"))
	check(loadBundle(t, "pypi.bundle.json"))
	b = supplyBundle()
	b.Supply.DNSSEC.Domains = []evidence.DNSDomain{
		bogusDomain("acme.dev", "no_dnskey_matching_ds", "homepage"),
		{Name: "kato.codes", Sources: []string{"author_url"}, Status: evidence.DNSIndeterminate, Exists: "unknown", Error: "timeout"},
	}
	check(b)
	b = supplyBundle()
	b.Signals[evidence.SignalDNSSEC] = evidence.Signal{State: evidence.StateError, Reason: "dnssec result: bad JSON"}
	check(b)
	for _, c := range r.Codes {
		if supplyCode(c.Code) && !seen[c.Code] {
			t.Errorf("%s did not fire", c.Code)
		}
	}
}

func BenchmarkEvaluate(b *testing.B) {
	bundle := loadBundle(b, "everything.bundle.json")
	r := Current()
	b.ReportAllocs()
	for b.Loop() {
		Evaluate(bundle, r)
	}
}

// BenchmarkEvaluateV4 evaluates the same fixture under rubric v4, which
// does not run the contract checks: the difference from BenchmarkEvaluate
// is their cost.
func BenchmarkEvaluateV4(b *testing.B) {
	bundle := loadBundle(b, "everything.bundle.json")
	r := mustLoad(b, "4")
	b.ReportAllocs()
	for b.Loop() {
		Evaluate(bundle, r)
	}
}

// BenchmarkEvaluateBehavior evaluates the fixture with rich behaviour
// evidence, every behaviour probe firing.
func BenchmarkEvaluateBehavior(b *testing.B) {
	bundle := loadBundle(b, "everything.bundle.json")
	watched(func(bh *evidence.Behavior) { *bh = *richBehavior() })(bundle)
	r := Current()
	b.ReportAllocs()
	for b.Loop() {
		Evaluate(bundle, r)
	}
}

func TestFormatScore(t *testing.T) {
	// The reference is the formula formatScore replaced, which results
	// stored under rubric v1 were written with.
	ref := func(x float64) string {
		return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.1f", x), "0"), ".")
	}
	for _, x := range []float64{0, 100, 87.5, 92.3, 66.66666, 0.04, 0.05, math.Copysign(0, -1), 99.95, 1e21, -3, math.NaN(), math.Inf(1), math.Inf(-1)} {
		if got, want := formatScore(x), ref(x); got != want {
			t.Errorf("formatScore(%v) = %q, want %q", x, got, want)
		}
	}
}
