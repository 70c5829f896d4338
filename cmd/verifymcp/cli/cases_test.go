package cli

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/benchmark"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/store"
)

// TestCasesRunRefusesOneCaseAndScoresTheRest runs `cases run --from-store`
// over a corpus of one synthetic case, whose recorded scan is in the store,
// and one remote-track case: the remote case is reported as refused, with
// its file, line and why, and the synthetic case is scored. No engine is
// needed: nothing is scanned.
func TestCasesRunRefusesOneCaseAndScoresTheRest(t *testing.T) {
	t.Setenv("VERIFYMCP_DATABASE_URL", "")
	t.Setenv("VERIFYMCP_CONFIG", "")
	const id = "crash-at-start"
	src := filepath.Join("..", "..", "..", "benchmark")
	corpus := t.TempDir()
	copyFile := func(from, to string) {
		t.Helper()
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(filepath.Join(src, "cases", "synthetic", id+".yaml"), filepath.Join(corpus, "cases", "synthetic", id+".yaml"))
	fixtures, err := os.ReadDir(filepath.Join(src, "fixtures", id))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fixtures {
		copyFile(filepath.Join(src, "fixtures", id, f.Name()), filepath.Join(corpus, "fixtures", id, f.Name()))
	}
	// The fixtures' shared server.
	copyFile(filepath.Join(src, "fixtures", "server.js"), filepath.Join(corpus, "fixtures", "server.js"))
	remote := `id: remote-endpoint
kind: reviewed
track: remote
target: npm:example-mcp@1.2.3
reviewer: Ada Lovelace <ada@lovelace.example>
selected: 2026-01-05
provenance: A remote endpoint, filed by mistake in the package corpus.
rubric_version: "` + rubric.CurrentVersion + `"
scope: [pkg.session.]
expected: []
`
	if err := os.MkdirAll(filepath.Join(corpus, "cases", "reviewed"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(corpus, "cases", "reviewed", "remote-endpoint.yaml"), []byte(remote), 0o644); err != nil {
		t.Fatal(err)
	}

	// The store holds the scan the real scanner recorded for the fixture.
	data := t.TempDir()
	st, err := store.Open(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	bundle, err := os.ReadFile(filepath.Join(src, "testdata", "bundles", id+".json"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := evidence.Decode(bundle)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SaveRun(context.Background(), bundle, b, rubric.Evaluate(b, rubric.Current())); err != nil {
		t.Fatal(err)
	}
	st.Close()

	code, out, errOut := run(t, "--data-dir", data, "cases", "run", "--corpus", corpus, "--from-store", "--format", "json")
	if code != ExitOK {
		t.Fatalf("exit %d, want %d: one refused case does not refuse the corpus\n%s", code, ExitOK, errOut)
	}
	var rep benchmark.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var scored, refused bool
	for _, r := range rep.Cases {
		switch r.ID {
		case id:
			scored = r.Error == "" && r.Counts.TP == 1 && r.Counts.FN == 0
		case "remote-endpoint":
			refused = strings.Contains(strings.Join(r.Refused, "\n"), "cases/reviewed/remote-endpoint.yaml:3: track") &&
				strings.Contains(strings.Join(r.Refused, "\n"), "package track only")
		}
	}
	if !scored || !refused {
		t.Errorf("want %s scored (TP 1) and remote-endpoint refused at its track line:\n%s", id, out)
	}
}

// TestCasesRunCaptures runs `cases run --form capture` over the project's
// corpus twice, and once more with --from-store: the static captures are
// scored with no engine (none is configured here) and no stored run, and
// every run gives the same cases, byte for byte. A --form that is neither
// form is a usage error.
func TestCasesRunCaptures(t *testing.T) {
	t.Setenv("VERIFYMCP_DATABASE_URL", "")
	t.Setenv("VERIFYMCP_CONFIG", "")
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
	src := filepath.Join("..", "..", "..", "benchmark")
	var runs []string
	for _, extra := range [][]string{nil, nil, {"--from-store"}} {
		args := append([]string{"--data-dir", t.TempDir(), "cases", "run", "--corpus", src, "--form", "capture", "--format", "json"}, extra...)
		code, out, errOut := run(t, args...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d\n%s", extra, code, errOut)
		}
		var rep benchmark.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if len(rep.Cases) < 26 {
			t.Fatalf("%d cases, want every static capture", len(rep.Cases))
		}
		for _, r := range rep.Cases {
			if r.Form != benchmark.FormCapture || r.Error != "" || r.Counts.FP != 0 || r.Counts.TP != len(r.Expected) {
				t.Errorf("%s: form %s, error %q, counts %+v", r.ID, r.Form, r.Error, r.Counts)
			}
		}
		cases, err := json.Marshal(struct {
			K []benchmark.KindSummary
			C []benchmark.CaseResult
		}{rep.Kinds, rep.Cases})
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, string(cases))
	}
	if runs[0] != runs[1] || runs[0] != runs[2] {
		t.Errorf("the static captures scored differently across runs:\n%s\n---\n%s\n---\n%s", runs[0], runs[1], runs[2])
	}
	if code, _, errOut := run(t, "--data-dir", t.TempDir(), "cases", "run", "--corpus", src, "--form", "remote"); code != ExitUsage || !strings.Contains(errOut, "--form must be capture or live") {
		t.Errorf("--form remote: exit %d\n%s", code, errOut)
	}
}

// capturesChildEnv, when set, makes TestCasesRunCapturesWithoutNetwork the
// child run: `cases run --form capture`, its cases written to the file it
// names.
const capturesChildEnv = "VERIFYMCP_CASES_CAPTURE_CHILD_OUT"

// TestCasesRunCapturesWithoutNetwork runs `cases run --form capture` twice
// in a new, empty network namespace (unshare -n) and compares the cases and
// kinds of the two reports byte for byte (the run's own date differs).
func TestCasesRunCapturesWithoutNetwork(t *testing.T) {
	t.Setenv("VERIFYMCP_DATABASE_URL", "")
	t.Setenv("VERIFYMCP_CONFIG", "")
	src := filepath.Join("..", "..", "..", "benchmark")
	if out := os.Getenv(capturesChildEnv); out != "" {
		ifaces, err := net.Interfaces()
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range ifaces {
			if i.Flags&net.FlagUp != 0 && i.Flags&net.FlagLoopback == 0 {
				t.Fatalf("interface %s is up: the network is not closed", i.Name)
			}
		}
		code, stdout, errOut := run(t, "--data-dir", t.TempDir(), "cases", "run", "--corpus", src, "--form", "capture", "--format", "json")
		if code != ExitOK {
			t.Fatalf("exit %d\n%s", code, errOut)
		}
		var rep benchmark.Report
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatal(err)
		}
		data, err := json.MarshalIndent(struct {
			K []benchmark.KindSummary
			C []benchmark.CaseResult
		}{rep.Kinds, rep.Cases}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("SKIPPED, NOT RUN: unshare (util-linux) is not installed, so cases run cannot be tried in a closed network namespace here")
	}
	args := []string{"-n"}
	if os.Geteuid() != 0 {
		args = []string{"-r", "-n"}
	}
	if msg, err := exec.Command(unshare, append(args, "true")...).CombinedOutput(); err != nil {
		t.Skipf("SKIPPED, NOT RUN: unshare %s cannot make a network namespace here (uid %d; run as root): %v %s",
			strings.Join(args, " "), os.Geteuid(), err, strings.TrimSpace(string(msg)))
	}
	var outs []string
	for i := range 2 {
		out := filepath.Join(t.TempDir(), "cases.json")
		cmd := exec.Command(unshare, append(args, os.Args[0], "-test.run=^TestCasesRunCapturesWithoutNetwork$", "-test.count=1")...)
		cmd.Env = append(os.Environ(), capturesChildEnv+"="+out)
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("run %d under unshare %s: %v\n%s", i+1, strings.Join(args, " "), err, msg)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatalf("run %d wrote nothing: %v", i+1, err)
		}
		outs = append(outs, string(data))
	}
	if outs[0] != outs[1] {
		t.Errorf("two runs of cases run --form capture with no network differ:\n%s\n---\n%s", outs[0], outs[1])
	}
	if !strings.Contains(outs[0], `"form": "capture"`) {
		t.Errorf("no static capture in the report:\n%s", outs[0])
	}
}
