package cli

import (
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/report"
)

// --sarif-declared-in is checked before anything resolves: a place that is
// no file of the repository by a relative path is a usage error.
func TestScanSARIFDeclaredInUsage(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"absolute", []string{"--format", "sarif", "--sarif-declared-in", "/home/dev/repo/package.json"}, "not absolute"},
		{"a file URI", []string{"--format", "sarif", "--sarif-declared-in", "file:///repo/package.json"}, "not a URI"},
		{"a purl", []string{"--format", "sarif", "--sarif-declared-in", "pkg:npm/x@1"}, "not a URI"},
		{"leaving the repository", []string{"--format", "sarif", "--sarif-declared-in", "../package.json:3"}, "no .."},
		{"line 0", []string{"--format", "sarif", "--sarif-declared-in", "package.json:0"}, "not 1 or more"},
		{"not SARIF", []string{"--format", "json", "--sarif-declared-in", "package.json"}, "--format sarif only"},
		{"the default format", []string{"--sarif-declared-in", "package.json"}, "--format sarif only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, append(append([]string{"scan"}, tc.args...), "npm:x@1")...)
			if code != ExitUsage || !strings.Contains(stderr, "--sarif-declared-in") || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d saying %q", code, stderr, ExitUsage, tc.want)
			}
		})
	}
}

func TestScanSARIFOptions(t *testing.T) {
	o, err := sarifOptions(report.FormatSARIF, "./tools/package.json:14")
	if err != nil || o.DeclaredIn != (report.RepoLocation{Path: "tools/package.json", Line: 14}) || o.Root == "" {
		t.Errorf("sarifOptions = %+v, %v; want tools/package.json:14 from the working directory", o, err)
	}
	o, err = sarifOptions(report.FormatSARIF, "")
	if err != nil || o.DeclaredIn != (report.RepoLocation{}) {
		t.Errorf("sarifOptions without the flag = %+v, %v; want no declaring file", o, err)
	}
}
