package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/internal/testnpm"
	"github.com/verifymcp/verifymcp/pipeline/batch"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/store"
)

// writeTarball is testnpm.Tarball.
func writeTarball(t *testing.T, path, name string) string { return testnpm.Tarball(t, path, name) }

// TestEngineErrorIsAnEngineError: an engine failure met before the
// pipeline ran (connecting, the image) is counted like the pipeline's own.
func TestEngineErrorIsAnEngineError(t *testing.T) {
	if got := batch.ErrorOutcome(engineError{errors.New("down")}); got != "engine_error" {
		t.Errorf("ErrorOutcome(engineError) = %q, want engine_error", got)
	}
}

// TestBatchResumeWithoutEngine runs the command: a target already stored
// is skipped without the engine (none is reachable here), a target the
// registry does not know fails with exit 3, and a malformed file fails
// before anything with exit 2 and FILE:LINE.
func TestBatchResumeWithoutEngine(t *testing.T) {
	t.Setenv("VERIFYMCP_CONFIG", "")
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
	t.Setenv("VERIFYMCP_CA_BUNDLE", "")
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	integrity := writeTarball(t, filepath.Join(dir, "stored.tgz"), "stored-fx")

	// Store a run of stored.tgz by this tool under the rubric in force.
	raw, err := os.ReadFile("../../../store/testdata/everything.bundle.json")
	if err != nil {
		t.Fatal(err)
	}
	b, err := evidence.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	b.Run.ID, b.Run.Tool.Version = "stored-run", Version
	b.Target.Name, b.Target.Version, b.Target.Integrity, b.Target.Source = "stored-fx", "1.0.0", integrity, "file"
	b.Target.Args, b.Target.EnvNames = []string{}, []string{}
	bundle, _ := json.Marshal(b)
	st, err := store.Open(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	res := rubric.Evaluate(b, rubric.Current())
	if err := st.SaveRun(context.Background(), bundle, b, res); err != nil {
		t.Fatal(err)
	}
	st.Close()

	registry := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":"Not found"}`, http.StatusNotFound)
	}))
	defer registry.Close()

	list := filepath.Join(dir, "batch.txt")
	os.WriteFile(list, []byte("stored.tgz\nstored.tgz # again\nnpm:no-such-mcp-server@1.0.0\n"), 0o600)
	code, out, errOut := run(t, "batch", "--data-dir", data, "--registry", registry.URL, "--format", "json", list)
	if code != ExitNotFound {
		t.Fatalf("exit %d, want %d (a target not found)\n%s", code, ExitNotFound, errOut)
	}
	if !strings.Contains(errOut, "1 of 3 targets could not be scanned") || !strings.Contains(errOut, list+":3") {
		t.Errorf("stderr does not say which target failed:\n%s", errOut)
	}
	var sum batch.Summary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(batch.Totals{Targets: 3, Failed: 1, Skipped: 2}, sum.Totals); diff != "" {
		t.Errorf("totals (-want +got):\n%s", diff)
	}
	got := []string{}
	for _, it := range sum.Targets {
		got = append(got, fmt.Sprintf("%d %s %s %s %s", it.Line, it.Status, it.Outcome, it.SkipReason, it.RunID))
	}
	want := []string{"1 skipped ok stored stored-run", "2 skipped  duplicate of line 1 ", "3 failed not_found  "}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("targets (-want +got):\n%s", diff)
	}
	if sum.Targets[0].Score == nil || *sum.Targets[0].Score != *res.Score || sum.RubricVersion != rubric.CurrentVersion || sum.SchemaVersion != batch.SchemaVersion {
		t.Errorf("summary header or stored score: %+v", sum)
	}

	code, out, _ = run(t, "batch", "--data-dir", data, list, "--registry", registry.URL)
	if code != ExitNotFound || !strings.Contains(out, "skipped (stored)") || !strings.Contains(out, "failed       1 (not_found 1)") ||
		!strings.Contains(out, "line 3: npm:no-such-mcp-server@1.0.0: package not found") {
		t.Errorf("table summary (exit %d):\n%s", code, out)
	}

	os.WriteFile(list, []byte("stored.tgz\nnpm:Bad_Name@1\n"), 0o600)
	code, out, errOut = run(t, "batch", "--data-dir", data, list)
	if code != ExitUsage || !strings.Contains(errOut, list+":2: invalid target") || out != "" {
		t.Errorf("malformed file: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, args := range [][]string{
		{"batch", "--concurrency", "0", list},
		{"batch", "--format", "sarif", list},
		{"batch"},
		{"batch", filepath.Join(dir, "missing.txt")},
	} {
		if code, _, errOut := run(t, args...); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, ExitUsage, errOut)
		}
	}
}

func TestBatchHelp(t *testing.T) {
	code, out, _ := run(t, "batch", "--help")
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	for _, w := range []string{"--concurrency", "FILE:LINE", "--arg VALUE", "skipped when the store already holds", "second abandons", "130", "--no-behavior"} {
		if !strings.Contains(out, w) {
			t.Errorf("batch help lacks %q", w)
		}
	}
}
