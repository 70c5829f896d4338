package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestFailOn: the gate through the command line, on a stored bundle with
// high findings (report/testdata/hostile.bundle.json): each level, the
// ignore file (an entry that applies, one that expired), unverified
// markers, and bad input, which is exit 2 before anything is read.
func TestFailOn(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("VERIFYMCP_CONFIG", cfg)
	bundle := "../../../report/testdata/hostile.bundle.json"
	dir := t.TempDir()
	ignore := filepath.Join(dir, "ignore.yaml")
	if err := os.WriteFile(ignore, []byte(`ignore:
  - code: pkg.contract.annotation.contradiction
    subject: deleteFile
    reason: called on a scratch volume only
    by: alice
    expires: 2999-12-31
  - code: pkg.contract.unicode.bidi
    reason: reviewed
    by: bob
    expires: 2020-01-31
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		out  []string
	}{
		{"no gate", nil, ExitOK, nil},
		{"critical", []string{"--fail-on", "critical"}, ExitOK, []string{"gate passed  no finding at or above critical"}},
		{"high", []string{"--fail-on", "high"}, ExitGate, []string{"gate failed  2 finding(s) at or above high", "pkg.contract.annotation.contradiction  deleteFile"}},
		{"high, one ignored, one expired", []string{"--fail-on", "high", "--ignore-file", ignore}, ExitGate,
			[]string{"gate failed  1 finding(s) at or above high", "(ignored until 2999-12-31 by alice)"}},
		{"signals not observed only with the flag", []string{"--fail-on", "critical", "--fail-on-unverified"}, ExitGate,
			[]string{"gate failed  3 signal(s) not observed (--fail-on-unverified)"}},
		{"info is no gate", []string{"--fail-on", "info"}, ExitUsage, nil},
		{"unverified without a severity", []string{"--fail-on-unverified"}, ExitUsage, nil},
		{"missing ignore file", []string{"--ignore-file", filepath.Join(dir, "nope.yaml")}, ExitUsage, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, append([]string{"score", bundle}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", code, tc.code, errOut)
			}
			for _, w := range tc.out {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q", w)
				}
			}
			if code == ExitGate && !strings.Contains(errOut, "--fail-on: ") {
				t.Errorf("stderr does not list the findings that failed the gate: %q", errOut)
			}
			if code == ExitUsage && out != "" {
				t.Errorf("bad input wrote a report: %q", out[:min(len(out), 200)])
			}
		})
	}
	// The expired entry, in the JSON summary (the table wraps it).
	if _, out, _ := run(t, "score", bundle, "--format", "json", "--fail-on", "high", "--ignore-file", ignore); !strings.Contains(out, "pkg.contract.unicode.bidi expired on 2020-01-31: no longer applied") {
		t.Error("the JSON summary does not say the bidi entry expired")
	}
	// JSON: the summary is the first member and carries the gate.
	code, out, _ := run(t, "score", bundle, "--format", "json", "--fail-on", "high")
	if code != ExitGate || !strings.HasPrefix(out, "{\n  \"summary\": {") || !strings.Contains(out, `"result": "failed"`) {
		t.Errorf("JSON with --fail-on high: exit %d, starts %q", code, out[:min(len(out), 80)])
	}
}

// TestIgnoreFileBadInput: every bad ignore file is exit 2 before anything
// is read, with one line on stderr naming FILE:LINE and what is wrong, and
// no report.
func TestIgnoreFileBadInput(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("VERIFYMCP_CONFIG", cfg)
	bundle := "../../../report/testdata/hostile.bundle.json"
	dir := t.TempDir()
	for _, tc := range []struct {
		name, file, want string
	}{
		{"an entry without a reason", "ignore:\n  - code: pkg.contract.schema.missing\n    by: alice\n    expires: 2999-01-01\n",
			"ignore file IGNORE:2: ignoring pkg.contract.schema.missing needs a reason"},
		{"an entry without an expiry", "# reviewed\nignore:\n  - code: pkg.contract.schema.missing\n    reason: r\n    by: alice\n",
			"ignore file IGNORE:3: ignoring pkg.contract.schema.missing needs an expiry date (expires: YYYY-MM-DD): an acceptance is reviewed again"},
		{"a date that is not one", "ignore:\n  - code: pkg.contract.schema.missing\n    reason: r\n    by: alice\n    expires: soon\n",
			`ignore file IGNORE:5: expires "soon" is not a date YYYY-MM-DD`},
		{"an unknown field", "ignore:\n  - code: pkg.contract.schema.missing\n    reason: r\n    by: alice\n    expires: 2999-01-01\n    until: x\n",
			`ignore file IGNORE:6: unknown field "until" in an ignore entry (it takes code, subject, target, reason, by, expires)`},
		{"a code no rubric defines", "ignore:\n  - code: pkg.contract.schema.missing\n    reason: r\n    by: alice\n    expires: 2999-01-01\n  - code: pkg.made.up\n    reason: r\n    by: alice\n    expires: 2999-01-01\n",
			`ignore file IGNORE:6: "pkg.made.up" is not a reason code of any rubric (v1 to v15) or of the config catalog; ` + "`verifymcp rubric show` lists them"},
		{"not YAML", "ignore:\n  - code: [\n", "ignore file IGNORE:2: not YAML: did not find expected node content"},
		{"no file", "", "ignore file IGNORE: no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".yaml")
			if tc.file != "" {
				if err := os.WriteFile(path, []byte(tc.file), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			code, out, errOut := run(t, "score", bundle, "--fail-on", "high", "--ignore-file", path)
			if code != ExitUsage {
				t.Errorf("exit %d, want %d (bad input)", code, ExitUsage)
			}
			want := "verifymcp: " + strings.ReplaceAll(tc.want, "IGNORE", path)
			if lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], want) {
				t.Errorf("stderr %q, want one line starting %q", errOut, want)
			}
			if strings.Contains(errOut, "<nil>") {
				t.Errorf("stderr %q", errOut)
			}
			if out != "" {
				t.Errorf("bad input wrote a report: %q", out[:min(len(out), 200)])
			}
		})
	}
}

// TestGateAdviceCLI: after a failed gate, each code that failed it comes
// with the command that explains it and an ignore entry; the entries,
// pasted into the ignore file and filled in, make the same gate pass. In
// the table they are in the report; after JSON, on stderr.
func TestGateAdviceCLI(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("VERIFYMCP_CONFIG", cfg)
	t.Setenv("COLUMNS", "80")
	bundle := "../../../report/testdata/hostile.bundle.json"
	code, out, errOut := run(t, "score", bundle, "--fail-on", "high")
	if code != ExitGate {
		t.Fatalf("exit %d, want %d", code, ExitGate)
	}
	for _, w := range []string{"GATE FAILED", "read more: verifymcp rubric explain pkg.contract.annotation.contradiction", "read more: verifymcp rubric explain pkg.contract.unicode.bidi", "\nignore:\n  - code: "} {
		if !strings.Contains(out, w) {
			t.Errorf("the table lacks %q", w)
		}
	}
	if strings.Contains(errOut, "GATE FAILED") || !strings.Contains(errOut, "verifymcp: --fail-on: ") {
		t.Errorf("table on stdout: stderr %q, want the gate's one line only", errOut)
	}
	// The tool name that tripped the gate carries a right-to-left
	// override: stderr shows it escaped, as the table does.
	if !strings.Contains(errOut, `pkg.contract.unicode.bidi sync\u202egnp.exe`) || strings.ContainsRune(errOut+out, '\u202e') {
		t.Errorf("a bidirectional control reached the terminal: %q", errOut)
	}
	code, out, errOut = run(t, "score", bundle, "--fail-on", "high", "--format", "json")
	if code != ExitGate || !strings.HasPrefix(out, "{") {
		t.Fatalf("json: exit %d, stdout %q", code, out[:min(len(out), 80)])
	}
	_, entries, ok := strings.Cut(errOut, "\nignore:\n")
	if !ok || !strings.Contains(errOut, "read more: verifymcp rubric explain pkg.contract.unicode.bidi") {
		t.Fatalf("json: stderr lacks the advice: %q", errOut)
	}
	entries, _, _ = strings.Cut(entries, "verifymcp: --fail-on")
	filled := strings.NewReplacer(`"FILL IN: why this finding is accepted"`, "reviewed", `"FILL IN: who decided"`, "alice").Replace(entries)
	ignore := filepath.Join(t.TempDir(), "ignore.yaml")
	if err := os.WriteFile(ignore, []byte("ignore:\n"+filled), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := run(t, "score", bundle, "--fail-on", "high", "--ignore-file", ignore); code != ExitOK {
		t.Errorf("with the suggested entries filled in: exit %d, want %d\n%s\n%s", code, ExitOK, errOut, filled)
	}
}

// TestTableWidth: piped, the table is wrapped to $COLUMNS, else to 80
// columns, and never cut.
func TestTableWidth(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("VERIFYMCP_CONFIG", cfg)
	bundle := "../../../report/testdata/everything.bundle.json"
	for _, tc := range []struct {
		columns string
		want    int
	}{{"", 80}, {"80", 80}, {"120", 120}, {"wide", 80}, {"-3", 80}, {"20", 60}} {
		t.Run("COLUMNS="+tc.columns, func(t *testing.T) {
			t.Setenv("COLUMNS", tc.columns)
			code, out, errOut := run(t, "score", bundle)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			widest := 0
			for _, l := range strings.Split(out, "\n") {
				widest = max(widest, utf8.RuneCountInString(l))
			}
			if widest > tc.want || widest < tc.want-10 {
				t.Errorf("widest line %d columns, want at most %d and near it", widest, tc.want)
			}
			if strings.Contains(out, "…") {
				t.Error("the table cut some text")
			}
			if strings.Contains(out, "\x1b[") {
				t.Error("colour on a pipe")
			}
		})
	}
}
