package benchmark_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/benchmark"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
)

// captureCases returns the static captures of the committed corpus.
func captureCases(t *testing.T) []benchmark.Case {
	t.Helper()
	cases, err := benchmark.LoadCorpus(".")
	if err != nil {
		t.Fatal(err)
	}
	cases = slices.DeleteFunc(cases, func(c benchmark.Case) bool { return c.Form() != benchmark.FormCapture })
	if len(cases) == 0 {
		t.Fatal("no static capture in the corpus")
	}
	return cases
}

// scoreCaptures scores the corpus's static captures with no scanner at all
// (a live case would be an error of its case) and returns the report's JSON.
func scoreCaptures(t *testing.T, cases []benchmark.Case) []byte {
	t.Helper()
	rb := rubric.Current()
	rep, err := benchmark.RunCases(context.Background(), goldenRun, cases, ".", t.TempDir(), benchmark.WithCaptures(nil, rb), rb)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := benchmark.WriteJSON(&out, rep); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestCaptureCorpus: every contract code of the rubric in force has a
// static capture that expects it; every capture is compared (no engine, no
// network, no scanner) and, as a synthetic case, emits its expected codes
// and nothing else in scope; and two runs give the same JSON, byte for
// byte.
func TestCaptureCorpus(t *testing.T) {
	cases := captureCases(t)
	rb := rubric.Current()
	covered := map[string]bool{}
	for _, c := range cases {
		if c.Kind != benchmark.KindSynthetic {
			t.Errorf("%s: a static capture of kind %s", c.ID, c.Kind)
		}
		for _, code := range c.Expected {
			covered[code] = true
		}
	}
	for _, def := range rb.Codes {
		if strings.HasPrefix(def.Code, "pkg.contract.") && !covered[def.Code] {
			t.Errorf("%s (rubric %s) has no static capture expecting it", def.Code, rb.Version)
		}
	}
	first := scoreCaptures(t, cases)
	second := scoreCaptures(t, cases)
	if !bytes.Equal(first, second) {
		t.Errorf("two runs over the static captures differ:\n%s\n---\n%s", first, second)
	}
	rep, err := benchmark.RunCases(context.Background(), goldenRun, cases, ".", t.TempDir(), benchmark.WithCaptures(nil, rb), rb)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Cases {
		if r.Error != "" || r.Form != benchmark.FormCapture {
			t.Errorf("%s: form %q, not compared: %s", r.ID, r.Form, r.Error)
			continue
		}
		if r.Counts.TP != len(r.Expected) || r.Counts.FP != 0 || r.Counts.FN != 0 {
			t.Errorf("%s: counts %+v (TP %v FP %v FN %v), want every expected code and nothing else in scope", r.ID, r.Counts, r.TP, r.FP, r.FN)
		}
		for name, s := range r.Signals {
			switch {
			case name == evidence.SignalContract && s.State != evidence.StateObserved:
				t.Errorf("%s: contract %s", r.ID, s.State)
			case name != evidence.SignalContract && (s.State != evidence.StateNotAssessed || s.Reason != benchmark.NotAssessedCapture):
				t.Errorf("%s: signal %s is %s (%q), want not_assessed for %q", r.ID, name, s.State, s.Reason, benchmark.NotAssessedCapture)
			}
		}
	}
	if len(rep.Kinds) == 0 || len(rep.Kinds[0].Forms) != 1 || rep.Kinds[0].Forms[0].Form != benchmark.FormCapture || rep.Kinds[0].Forms[0].DependsOnWorld {
		t.Errorf("synthetic forms %+v, want the static captures alone, not depending on the world", rep.Kinds[0].Forms)
	}
}

// captureChildEnv, when set, makes TestCaptureCorpusWithoutNetwork the
// child run: score the captures and write the JSON to the file it names.
const captureChildEnv = "VERIFYMCP_CAPTURE_CHILD_OUT"

// TestCaptureCorpusWithoutNetwork runs this test binary twice in a new,
// empty network namespace (unshare -n: no interface but a loopback that is
// down), each run scoring the static captures, and compares the two
// outputs byte for byte, and with a run made here with the network open.
func TestCaptureCorpusWithoutNetwork(t *testing.T) {
	if out := os.Getenv(captureChildEnv); out != "" {
		// The child: prove the network is closed, then score.
		ifaces, err := net.Interfaces()
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range ifaces {
			if i.Flags&net.FlagUp != 0 && i.Flags&net.FlagLoopback == 0 {
				t.Fatalf("interface %s is up: the network is not closed", i.Name)
			}
		}
		if err := os.WriteFile(out, scoreCaptures(t, captureCases(t)), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("SKIPPED, NOT RUN: unshare (util-linux) is not installed, so the captures cannot be scored in a closed network namespace here")
	}
	args := []string{"-n"}
	if os.Geteuid() != 0 {
		// Without root, a user namespace may still allow a network one.
		args = []string{"-r", "-n"}
	}
	if msg, err := exec.Command(unshare, append(args, "true")...).CombinedOutput(); err != nil {
		t.Skipf("SKIPPED, NOT RUN: unshare %s cannot make a network namespace here (uid %d; run as root): %v %s",
			strings.Join(args, " "), os.Geteuid(), err, bytes.TrimSpace(msg))
	}
	want := scoreCaptures(t, captureCases(t))
	var outs [][]byte
	for i := range 2 {
		out := filepath.Join(t.TempDir(), "captures.json")
		cmd := exec.Command(unshare, append(args, os.Args[0], "-test.run=^TestCaptureCorpusWithoutNetwork$", "-test.count=1")...)
		cmd.Env = append(os.Environ(), captureChildEnv+"="+out)
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("run %d under unshare %s: %v\n%s", i+1, strings.Join(args, " "), err, msg)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatalf("run %d wrote nothing: %v", i+1, err)
		}
		outs = append(outs, data)
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Errorf("two runs with no network differ:\n%s\n---\n%s", outs[0], outs[1])
	}
	if !bytes.Equal(outs[0], want) {
		t.Errorf("the run with no network differs from the run with it:\n%s\n---\n%s", outs[0], want)
	}
}

const validCapture = `{
  "format": "verifymcp.capture/v1",
  "name": "verifymcp-case-cap",
  "version": "1.0.0",
  "recorded": "2026-12-06T00:00:00Z",
  "initialize": {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "cap", "version": "1.0.0"}},
  "tools/list": [
    {"tools": [
      {"name": "delete_note", "description": "Deletes a note from the workspace.",
       "inputSchema": {"type": "object", "properties": {"id": {"type": "string", "description": "The note's id."}}},
       "annotations": {"readOnlyHint": true}}
    ]}
  ]
}
`

const validCaptureCase = `id: cap
kind: synthetic
track: package
target: capture:cap@1.0.0
reviewer: pending
provenance: Built by the project for a test.
rubric_version: "12"
scope: [pkg.contract.annotation.]
expected: [pkg.contract.annotation.contradiction]
statement: delete_note claims to be read-only; it would not fire if it did not.
`

// TestCaptureRules: what is refused in a static capture, each with its
// file (and line where one is known) and why; a capture is scored with no
// scanner, a live case without one is its case's error, and a recorded
// behaviour (bundle.json) is observed.
func TestCaptureRules(t *testing.T) {
	rb := rubric.Current()
	read := func(t *testing.T, files map[string]string) benchmark.Case {
		t.Helper()
		fsys := corpus(files)
		cases, err := benchmark.ReadCorpusFS(fsys, rb)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			if c.ID == "cap" {
				return c
			}
		}
		t.Fatalf("no case cap in %v", cases)
		return benchmark.Case{}
	}
	refusals := []struct {
		name, capture, bundle, where, msg string
	}{
		{"syntax", strings.Replace(validCapture, `"version": "1.0.0",`, `"version": "1.0.0"`, 1), "", "capture.json:5", "invalid character"},
		{"unknown_member", strings.Replace(validCapture, `"recorded"`, `"recordedd"`, 1), "", "capture.json:5", `unknown member "recordedd"`},
		{"wrong_name", strings.Replace(validCapture, `verifymcp-case-cap"`, `other"`, 1), "", "capture.json:3", `names "other", want "verifymcp-case-cap"`},
		{"wrong_version", strings.Replace(validCapture, `"version": "1.0.0",`, `"version": "1.0.1",`, 1), "", "capture.json:4", "the target pins 1.0.0"},
		{"no_date", strings.Replace(validCapture, `2026-12-06T00:00:00Z`, `yesterday`, 1), "", "capture.json:5", "RFC 3339"},
		{"no_initialize", strings.Replace(validCapture, `"initialize"`, `"note": "x", "_i"`, 1), "", "capture.json", `unknown member "_i"`},
		{"no_tools_list", strings.Replace(validCapture, `"tools/list"`, `"prompts/list"`, 1), "", "capture.json", "no tools/list result"},
		{"page_not_object", strings.Replace(validCapture, `"tools/list": [`, `"tools/list": ["page",`, 1), "", "capture.json:7", "tools/list page 1: not a result object"},
		{"bad_tool", strings.Replace(validCapture, `"description": "Deletes`, `"description": 7, "x": "Deletes`, 1), "", "capture.json:9", "tools/list page 1: tool:"},
		{"duplicate_tool", strings.Replace(validCapture, `"annotations": {"readOnlyHint": true}}`, `"annotations": {"readOnlyHint": true}}, {"name": "delete_note"}`, 1), "", "capture.json", `tool "delete_note" is listed twice`},
		{"bundle_unknown_field", validCapture, `{"behavior": {"watches": []}, "contract": {}}`, "bundle.json", `unknown field "contract"`},
		{"bundle_no_watch", validCapture, `{"behavior": {"watches": []}}`, "bundle.json", "no behaviour watched"},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"cases/synthetic/cap.yaml": validCaptureCase, "fixtures/cap/capture.json": tc.capture}
			if tc.bundle != "" {
				files["fixtures/cap/bundle.json"] = tc.bundle
			}
			c := read(t, files)
			if len(c.Refused) != 1 {
				t.Fatalf("refused %v, want one problem", c.Refused)
			}
			msg := c.Refused[0].Error()
			if !strings.Contains(msg, "fixtures/cap/"+tc.where) || !strings.Contains(msg, tc.msg) || !errors.Is(c.Refused[0], benchmark.ErrInvalidCase) {
				t.Errorf("refused with %q, want %q at fixtures/cap/%s", msg, tc.msg, tc.where)
			}
		})
	}

	t.Run("reviewed_capture", func(t *testing.T) {
		yaml := strings.NewReplacer("kind: synthetic", "kind: reviewed", "reviewer: pending", "reviewer: Ada Lovelace <ada@lovelace.example>").Replace(validCaptureCase) + "selected: 2026-01-05\n"
		c := read(t, map[string]string{"cases/reviewed/cap.yaml": yaml, "fixtures/cap/capture.json": validCapture})
		if len(c.Refused) == 0 || !strings.Contains(c.Refused[0].Error(), "static captures are synthetic cases") {
			t.Errorf("a reviewed case on a capture: refused %v", c.Refused)
		}
	})

	t.Run("scored_without_scanner", func(t *testing.T) {
		dir := writeCorpus(t, corpus(map[string]string{
			"cases/synthetic/cap.yaml":   validCaptureCase,
			"fixtures/cap/capture.json":  validCapture,
			"cases/synthetic/crash.yaml": validSynthetic,
		}))
		cases, err := benchmark.ReadCorpus(dir, rb)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := benchmark.RunCases(context.Background(), goldenRun, cases, dir, t.TempDir(), benchmark.WithCaptures(nil, rb), rb)
		if err != nil {
			t.Fatal(err)
		}
		byID := map[string]benchmark.CaseResult{}
		for _, r := range rep.Cases {
			byID[r.ID] = r
		}
		if r := byID["cap"]; r.Error != "" || r.Counts.TP != 1 || r.Form != benchmark.FormCapture || !strings.HasPrefix(r.Artefact.Integrity, "sha512-") {
			t.Errorf("capture: %+v", r)
		}
		if r := byID["crash"]; r.Form != benchmark.FormLive || !strings.Contains(r.Error, "this run has no scanner") {
			t.Errorf("a live case with no scanner: form %q, error %q", r.Form, r.Error)
		}
		forms := rep.Kinds[0].Forms
		if len(forms) != 2 || forms[0].Form != benchmark.FormCapture || forms[1].Form != benchmark.FormLive || !forms[1].DependsOnWorld ||
			forms[0].Compared != 1 || len(forms[1].Failed) != 1 {
			t.Errorf("forms %+v", forms)
		}
		var table bytes.Buffer
		if err := benchmark.WriteTable(&table, rep); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"static captures:", "live:", "depends on the world", "cap (synthetic, static capture) capture:cap@1.0.0",
			"crash (synthetic, live: depends on the world)"} {
			if !strings.Contains(table.String(), want) {
				t.Errorf("table lacks %q:\n%s", want, table.String())
			}
		}
	})

	t.Run("recorded_behaviour", func(t *testing.T) {
		dir := writeCorpus(t, corpus(map[string]string{
			"cases/synthetic/cap.yaml":  validCaptureCase,
			"fixtures/cap/capture.json": validCapture,
			"fixtures/cap/bundle.json":  `{"behavior": {"watches": [{"phase": "startup", "watched_ms": 1500}]}}`,
		}))
		ref, err := benchmark.ParseTarget("capture:cap@1.0.0")
		if err != nil {
			t.Fatal(err)
		}
		cp, err := benchmark.ReadCapture(os.DirFS(dir), ref)
		if err != nil {
			t.Fatal(err)
		}
		b := cp.Bundle()
		if s := b.Signal(evidence.SignalBehavior); s.State != evidence.StateObserved || b.Behavior == nil {
			t.Errorf("behaviour %+v with a recorded watch", s)
		}
		if err := b.Validate(); err != nil {
			t.Errorf("the bundle of a capture: %v", err)
		}
		if b.Target.Integrity == "" || b.Run.Tool.Version != benchmark.CaptureToolVersion || !b.Run.Date.Equal(cp.Recorded) {
			t.Errorf("run %+v target %+v", b.Run, b.Target)
		}
	})
}
