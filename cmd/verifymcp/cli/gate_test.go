package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
