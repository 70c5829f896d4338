package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/evidence"
)

// TestInstallPython: the interpreter a PyPI target ran on is in the JSON
// report (valid under the schema) and on the table's install line.
func TestInstallPython(t *testing.T) {
	b := loadBundle(t, "hostile")
	b.Install.Python = &evidence.Python{Version: "3.13.5", RequiresPython: ">=3.12", Offered: "3.11.2, 3.13.5",
		Rule: `the newest offered Python that satisfies Requires-Python ">=3.12"`}
	rep := build(t, b)
	var js bytes.Buffer
	if err := WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	if err := validate(t, compileSchema(t), js.Bytes()); err != nil {
		t.Fatalf("report with install.python does not validate: %v", err)
	}
	if !strings.Contains(js.String(), `"requires_python": ">=3.12"`) {
		t.Errorf("JSON lacks install.python")
	}
	if got := installLine(rep.Install); !strings.Contains(got, "CPython 3.13.5") {
		t.Errorf("install line %q does not name the interpreter", got)
	}
}

// TestInstallTreeCheck: the installed tree's check is in the JSON report
// (valid under the schema) and on the install line, changed or not.
func TestInstallTreeCheck(t *testing.T) {
	for _, tc := range []struct {
		check *evidence.TreeCheck
		line  string
	}{
		{&evidence.TreeCheck{Files: 1731, Digest: "aa", Checked: "aa", Match: true}, "venv unchanged at start"},
		{&evidence.TreeCheck{Files: 1731, Digest: "aa", Checked: "bb", Changed: []string{"lib/x.py"}}, "VENV CHANGED BEFORE START"},
	} {
		b := loadBundle(t, "hostile")
		b.Install.TreeCheck = tc.check
		rep := build(t, b)
		var js bytes.Buffer
		if err := WriteJSON(&js, rep); err != nil {
			t.Fatal(err)
		}
		if err := validate(t, compileSchema(t), js.Bytes()); err != nil {
			t.Fatalf("report with install.tree_check does not validate: %v", err)
		}
		if !strings.Contains(js.String(), `"tree_check"`) {
			t.Errorf("JSON lacks install.tree_check")
		}
		if got := installLine(rep.Install); !strings.Contains(got, tc.line) {
			t.Errorf("install line %q, want %q", got, tc.line)
		}
	}
}
