package benchmark_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/verifymcp/verifymcp/benchmark"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
)

var update = flag.Bool("update", false, "rewrite golden files")

// goldenRun is the run record of the golden table: the cmd end-to-end test
// sets the same date and tool version on its report before rendering.
var goldenRun = benchmark.RunInfo{
	Date:          time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
	RubricVersion: rubric.CurrentVersion,
	ToolVersion:   "test",
	Source:        benchmark.SourceScan,
}

// TestSyntheticCorpus runs the harness over the real corpus with the
// evidence the real scanner recorded for each synthetic fixture
// (testdata/bundles, scanned with --no-behavior --skip
// osv,socket,github,dnssec,judge), rescored under the rubric in force. It
// is the --from-store path end to end, and its table is the golden the
// scanning end-to-end test in cmd/ compares against.
func TestSyntheticCorpus(t *testing.T) {
	cases, err := benchmark.LoadCorpus(".")
	if err != nil {
		t.Fatal(err)
	}
	// The reviewed cases are real servers, scanned by the regression test
	// (sandbox/realservers_docker_test.go); this golden is the synthetic
	// corpus's.
	cases = slices.DeleteFunc(cases, func(c benchmark.Case) bool { return c.Kind != benchmark.KindSynthetic })
	if len(cases) < 5 {
		t.Fatalf("%d cases in the corpus, want the synthetic seeds", len(cases))
	}
	rb := rubric.Current()
	scan := benchmark.WithCaptures(func(_ context.Context, c benchmark.Case, target benchmark.ScanTarget) (benchmark.Observed, error) {
		data, err := os.ReadFile(filepath.Join("testdata", "bundles", c.ID+".json"))
		if err != nil {
			return benchmark.Observed{}, err
		}
		b, err := evidence.Decode(data)
		if err != nil {
			return benchmark.Observed{}, err
		}
		return benchmark.Observe(b, rubric.Evaluate(b, rb)), nil
	}, rb)
	rep, err := benchmark.RunCases(context.Background(), goldenRun, cases, ".", t.TempDir(), scan, rb)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Cases {
		if r.Error != "" {
			t.Errorf("case %s not compared: %s", r.ID, r.Error)
		}
		if r.Kind == benchmark.KindSynthetic && (r.Counts.TP != len(r.Expected) || r.Counts.FP != 0 || r.Counts.FN != 0) {
			t.Errorf("synthetic case %s: counts %+v, want every expected code and nothing else in scope (TP %v FP %v FN %v)",
				r.ID, r.Counts, r.TP, r.FP, r.FN)
		}
	}
	var buf bytes.Buffer
	if err := benchmark.WriteTable(&buf, rep); err != nil {
		t.Fatal(err)
	}
	checkNoRate(t, buf.String())
	golden := filepath.Join("testdata", "synthetic.table.txt")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), buf.String()); diff != "" {
		t.Errorf("table (-want +got), run with -update if the change is intended:\n%s", diff)
	}

	// The JSON form carries the same figures and reads back.
	var js bytes.Buffer
	if err := benchmark.WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	checkNoRate(t, js.String())
	var back benchmark.Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rep, back, cmp.AllowUnexported(benchmark.Case{})); diff != "" {
		t.Errorf("JSON round trip (-want +got):\n%s", diff)
	}
}

// TestFixtureTargets checks that every synthetic case's fixture packs to
// the very tarball the recorded evidence was scanned from, so the bundles
// in testdata are evidence about these sources.
func TestFixtureTargets(t *testing.T) {
	cases, err := benchmark.LoadCorpus(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if c.Kind != benchmark.KindSynthetic || c.Form() == benchmark.FormCapture {
			continue // a static capture has no tarball (TestCaptureCorpus)
		}
		t.Run(c.ID, func(t *testing.T) {
			st, err := c.ResolveTarget(".", t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(st.Arg, ".tgz") || st.Name != "verifymcp-case-"+c.ID || st.Version != "1.0.0" {
				t.Errorf("scan target %+v", st)
			}
			data, err := os.ReadFile(st.Arg)
			if err != nil {
				t.Fatal(err)
			}
			if got := benchmark.Integrity(data); got != st.Integrity {
				t.Errorf("integrity %s, tarball hashes to %s", st.Integrity, got)
			}
			bundle, err := os.ReadFile(filepath.Join("testdata", "bundles", c.ID+".json"))
			if err != nil {
				t.Fatal(err)
			}
			b, err := evidence.Decode(bundle)
			if err != nil {
				t.Fatal(err)
			}
			if b.Target.Integrity != st.Integrity {
				t.Errorf("the recorded scan is of %s, the fixture packs to %s: rescan it (see testdata/README.md)", b.Target.Integrity, st.Integrity)
			}
		})
	}
}

// integrities matches an SRI sha512 integrity.
var integrities = regexp.MustCompile(`sha512-[A-Za-z0-9+/=]+`)

func checkNoRate(t *testing.T, out string) {
	t.Helper()
	// Integrities are base64, where any three letters may occur.
	lower := strings.ToLower(integrities.ReplaceAllString(out, "sha512-"))
	for _, banned := range []string{"fpr", "false positive rate", "false_positive_rate"} {
		if strings.Contains(lower, banned) {
			t.Errorf("output contains %q; the harness reports the false discovery rate only", banned)
		}
	}
	if !strings.Contains(lower, "false discovery rate") && !strings.Contains(lower, "false_discovery_rate") {
		t.Errorf("output names no false discovery rate")
	}
}
