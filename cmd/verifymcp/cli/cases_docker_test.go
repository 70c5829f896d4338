//go:build docker

package cli_test

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/benchmark"
)

// TestCasesRun runs the whole synthetic corpus through the real scanner,
// as `verifymcp cases run` does for the production pipeline, and compares
// the harness's table with the expected one; then diffs the same runs from
// the store without scanning again.
func TestCasesRun(t *testing.T) {
	data := t.TempDir()
	args := []string{"cases", "run", "--corpus", "../../../benchmark", "--kind", "synthetic", "--format", "json", "--no-behavior",
		"--skip", "osv,socket,github,dnssec,judge", "--data-dir", data}
	env := []string{"VERIFYMCP_CONFIG="}
	golden, err := os.ReadFile("../../../benchmark/testdata/synthetic.table.txt")
	if err != nil {
		t.Fatal(err)
	}
	check := func(t *testing.T, res result, source string) {
		t.Helper()
		if res.code != 0 {
			t.Fatalf("cases run: exit %d\n%s", res.code, res.stderr)
		}
		var rep benchmark.Report
		if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Run.Source != source || rep.Run.RubricVersion == "" || rep.Run.ToolVersion == "" || rep.Run.Date.IsZero() {
			t.Errorf("run record: %+v", rep.Run)
		}
		rep.Run.Date = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		rep.Run.ToolVersion, rep.Run.RubricHash = "test", ""
		var buf bytes.Buffer
		if err := benchmark.WriteTable(&buf, rep); err != nil {
			t.Fatal(err)
		}
		got := buf.String()
		if source == benchmark.SourceStore {
			// The golden was rendered from scans: the source line says where
			// the findings came from, and each case names its stored run.
			var kept []string
			for _, l := range strings.Split(got, "\n") {
				switch {
				case strings.HasPrefix(strings.TrimSpace(l), "stored run:"):
				case strings.HasPrefix(l, "source:"):
					kept = append(kept, goldenLine(string(golden), "source:"))
				default:
					kept = append(kept, l)
				}
			}
			got = strings.Join(kept, "\n")
		}
		if got != string(golden) {
			t.Errorf("cases run table differs from benchmark/testdata/synthetic.table.txt:\n%s", got)
		}
		// Integrities are base64, where any three letters may occur.
		low := strings.ToLower(regexp.MustCompile(`sha512-[A-Za-z0-9+/=]+`).ReplaceAllString(res.stdout, "sha512-"))
		if strings.Contains(low, "false positive rate") || strings.Contains(low, "fpr") {
			t.Error("the output names a false positive rate")
		}
	}
	t.Run("scan", func(t *testing.T) { check(t, verifymcp(t, env, args...), benchmark.SourceScan) })
	t.Run("from store", func(t *testing.T) {
		check(t, verifymcp(t, env, append(args, "--from-store")...), benchmark.SourceStore)
	})
	t.Run("bad input", func(t *testing.T) {
		res := verifymcp(t, env, "cases", "run", "--corpus", "../../../benchmark", "--case", "no-such-case", "--data-dir", data)
		if res.code != 2 || !strings.Contains(res.stderr, "no-such-case") {
			t.Errorf("unknown case id: exit %d %s", res.code, res.stderr)
		}
	})
}

// goldenLine returns the golden's line that starts with prefix.
func goldenLine(golden, prefix string) string {
	for _, l := range strings.Split(golden, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
