//go:build docker

package cli_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/store"
)

// batchFixtures packs n quick fixture servers (dependency-free, from
// sandbox/testdata/fixture-server.js) into dir, the last one crashing at
// start, and writes a batch file listing them. Package names carry a nonce
// so that no other test shares their tree cache entries.
func batchFixtures(t *testing.T, dir string, n int) (list string, names []string) {
	t.Helper()
	server, err := os.ReadFile("../../../sandbox/testdata/fixture-server.js")
	if err != nil {
		t.Fatal(err)
	}
	nonce := time.Now().UnixNano() % 1e9
	var lines []string
	for i := range n {
		name := fmt.Sprintf("verifymcp-batch-fx%d-%d", i, nonce)
		cfg := `{"name":"fx","tools":[{"name":"add","description":"Add two numbers and return the sum.","inputSchema":{"type":"object","properties":{"a":{"type":"number","description":"First"}}},"annotations":{"readOnlyHint":true}}]}`
		if i == n-1 {
			cfg = `{"crash":3}`
		}
		var buf bytes.Buffer
		gz := gzip.NewWriter(&buf)
		tw := tar.NewWriter(gz)
		for _, f := range []struct {
			name, body string
			mode       int64
		}{
			{"package/fixture.json", cfg, 0o644},
			{"package/package.json", fmt.Sprintf(`{"name":%q,"version":"1.0.0","bin":{"fx":"server.js"}}`, name), 0o644},
			{"package/server.js", string(server), 0o755},
		} {
			tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.body)), ModTime: time.Unix(1e9, 0)})
			tw.Write([]byte(f.body))
		}
		tw.Close()
		gz.Close()
		file := fmt.Sprintf("fx%d.tgz", i)
		if err := os.WriteFile(filepath.Join(dir, file), buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, file)
		names = append(names, name)
	}
	list = filepath.Join(dir, "batch.txt")
	body := "# quick fixtures\n\n" + strings.Join(lines, "\n") + "\n"
	if err := os.WriteFile(list, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return list, names
}

// batchArgs are the flags of a fast batch: no behaviour capture, no third
// parties, which the sandbox path under test does not need.
func batchArgs(data, list string, concurrency int) []string {
	return []string{"batch", "--data-dir", data, "--concurrency", fmt.Sprint(concurrency), "--format", "json",
		"--no-behavior", "--skip", "osv,socket,github,dnssec,judge", "--handshake-timeout", "20s", list}
}

type batchSummaryJSON struct {
	Interrupted bool `json:"interrupted"`
	Totals      struct {
		Targets, Completed, Failed, Skipped, Abandoned, Scanned int
		NotStarted                                              int `json:"not_started"`
	} `json:"totals"`
	FailedByOutcome map[string]int `json:"failed_by_outcome"`
	Targets         []struct {
		Name, Status, Outcome string
		RunID                 string `json:"run_id"`
		SkipReason            string `json:"skip_reason"`
	} `json:"targets"`
}

func startBatch(t *testing.T, args []string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "VERIFYMCP_CONFIG=")
	if _, ok := os.LookupEnv("VERIFYMCP_CA_BUNDLE"); !ok {
		cmd.Env = append(cmd.Env, "VERIFYMCP_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt")
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pruneOwnTrees(t, cmd.Process.Pid)
	return cmd, &out, &errb
}

// runsPerTarget counts the stored runs of each target name, and checks the
// database file's integrity.
func runsPerTarget(t *testing.T, data string) map[string]int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, store.FileName)+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check: %q, %v", check, err)
	}
	rows, err := db.Query(`SELECT r.target_name, COUNT(*) FROM runs r JOIN results res ON res.run_id = r.run_id GROUP BY r.target_name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]int{}
	for rows.Next() {
		var name string
		var n int
		if err := rows.Scan(&name, &n); err != nil {
			t.Fatal(err)
		}
		got[name] = n
	}
	var orphans int
	if err := db.QueryRow(`SELECT COUNT(*) FROM runs r WHERE NOT EXISTS (SELECT 1 FROM results x WHERE x.run_id = r.run_id)`).Scan(&orphans); err != nil || orphans != 0 {
		t.Errorf("runs without a result: %d (%v)", orphans, err)
	}
	return got
}

// waitStored polls the store until at least n runs are saved or the
// process ends.
func waitStored(t *testing.T, data string, n int, cmd *exec.Cmd, exited <-chan struct{}) int {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			t.Fatalf("the batch ended before %d runs were stored", n)
		default:
		}
		if st, err := store.Open(context.Background(), data); err == nil {
			runs, err := st.Runs(context.Background(), store.Filter{})
			st.Close()
			if err == nil && len(runs) >= n {
				return len(runs)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	cmd.Process.Kill()
	t.Fatalf("fewer than %d runs stored in time", n)
	return 0
}

// noLeftovers fails if an engine object owned by one of pids remains.
func noLeftovers(t *testing.T, pids ...int) {
	t.Helper()
	cli, err := sandbox.NewClient()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	l, err := sandbox.Leftovers(context.Background(), cli)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range l {
		for _, pid := range pids {
			if strings.HasSuffix(o.Owner, fmt.Sprintf("/%d", pid)) {
				t.Errorf("left behind by pid %d: %s %s", pid, o.Kind, o.Name)
			}
		}
	}
}

// TestBatchResumeAfterKill kills a batch with SIGKILL once its first
// result is stored, then runs the same batch again: every target ends with
// exactly one stored run (nothing lost, nothing done twice), the store is
// intact, and nothing of either process is left on the engine.
func TestBatchResumeAfterKill(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	list, names := batchFixtures(t, dir, 5)

	cmd, _, errb := startBatch(t, batchArgs(data, list, 2))
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	waitStored(t, data, 1, cmd, exited)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	before := runsPerTarget(t, data)
	t.Logf("stored before the kill: %d of %d", len(before), len(names))
	if len(before) == 0 || len(before) >= len(names) {
		t.Fatalf("killed batch stored %d of %d targets; the test needs work left over\n%s", len(before), len(names), errb.String())
	}

	res := verifymcp(t, []string{"VERIFYMCP_CONFIG="}, batchArgs(data, list, 3)...)
	if res.code != 0 {
		t.Fatalf("second batch: exit %d\n%s", res.code, res.stderr)
	}
	var sum batchSummaryJSON
	if err := json.Unmarshal([]byte(res.stdout), &sum); err != nil {
		t.Fatal(err)
	}
	tt := sum.Totals
	if tt.Targets != 5 || tt.Skipped != len(before) || tt.Scanned != 5-len(before) || tt.Completed+tt.Failed != tt.Scanned || sum.Interrupted {
		t.Errorf("second batch totals %+v; want %d skipped and %d scanned", tt, len(before), 5-len(before))
	}
	for _, it := range sum.Targets {
		_, stored := before[it.Name]
		if stored != (it.Status == "skipped" && it.SkipReason == "stored") {
			t.Errorf("%s: status %s (%s), stored before: %v", it.Name, it.Status, it.SkipReason, stored)
		}
		if it.RunID == "" {
			t.Errorf("%s: no run id", it.Name)
		}
	}
	after := runsPerTarget(t, data)
	for _, name := range names {
		if after[name] != 1 {
			t.Errorf("%s: %d stored runs, want exactly 1", name, after[name])
		}
	}
	if len(after) != len(names) {
		t.Errorf("stored targets %v, want %v", after, names)
	}
	crashed := sum.Targets[len(sum.Targets)-1]
	if crashed.Outcome != "start_crashed" || (crashed.Status != "failed" && crashed.Status != "skipped") {
		t.Errorf("crashing fixture: %+v", crashed)
	}
	noLeftovers(t, cmd.Process.Pid, res.pid)

	// A third run finds everything stored and does no work.
	again := verifymcp(t, []string{"VERIFYMCP_CONFIG=", "DOCKER_HOST=unix:///nonexistent/docker.sock"}, batchArgs(data, list, 2)...)
	var sum3 batchSummaryJSON
	if err := json.Unmarshal([]byte(again.stdout), &sum3); err != nil || again.code != 0 || sum3.Totals.Skipped != 5 {
		t.Errorf("third batch (no engine needed): exit %d totals %+v %v\n%s", again.code, sum3.Totals, err, again.stderr)
	}
}

// interruptBatch runs a batch of 5 fixtures at concurrency 2 in dir and,
// once its first result is stored, sends it sigs SIGINTs 100 ms apart. It
// checks that the batch exits 130 with a summary and leaves nothing on the
// engine, and returns the summary, stderr and the runs stored by target.
func interruptBatch(t *testing.T, dir string, sigs int) (batchSummaryJSON, string, map[string]int) {
	t.Helper()
	data := filepath.Join(dir, "data")
	list, _ := batchFixtures(t, dir, 5)
	cmd, out, errb := startBatch(t, batchArgs(data, list, 2))
	exited := make(chan struct{})
	var werr error
	go func() { werr = cmd.Wait(); close(exited) }()
	waitStored(t, data, 1, cmd, exited)
	for range sigs {
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	select {
	case <-exited:
	case <-time.After(45 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("the batch did not stop after %d SIGINTs", sigs)
	}
	var ee *exec.ExitError
	if !errors.As(werr, &ee) || ee.ExitCode() != 130 {
		t.Errorf("exit after %d SIGINTs: %v\n%s", sigs, werr, errb.String())
	}
	var sum batchSummaryJSON
	if err := json.Unmarshal(out.Bytes(), &sum); err != nil {
		t.Fatalf("summary after %d SIGINTs: %v\n%s\n%s", sigs, err, out.String(), errb.String())
	}
	noLeftovers(t, cmd.Process.Pid)
	return sum, errb.String(), runsPerTarget(t, data)
}

// TestBatchInterruptFinishesInFlight sends one SIGINT once the first
// result is stored: the scans in flight finish and are saved, nothing new
// starts, the exit code is 130 and nothing is left on the engine.
func TestBatchInterruptFinishesInFlight(t *testing.T) {
	sum, stderr, stored := interruptBatch(t, t.TempDir(), 1)
	if !strings.Contains(stderr, "no new target starts") {
		t.Errorf("no message about the interrupt:\n%s", stderr)
	}
	tt := sum.Totals
	if !sum.Interrupted || tt.Abandoned != 0 || tt.Scanned != len(stored) || tt.NotStarted != 5-len(stored) || tt.NotStarted == 0 {
		t.Errorf("totals %+v interrupted %v with %d stored; want every started scan saved and the rest not started", tt, sum.Interrupted, len(stored))
	}
}

// TestBatchSecondInterruptAbandons sends two SIGINTs once the first
// result is stored: the scans in flight are abandoned and removed, the
// summary still accounts for every target, the exit code is 130 and
// nothing is left on the engine.
func TestBatchSecondInterruptAbandons(t *testing.T) {
	sum, _, stored := interruptBatch(t, t.TempDir(), 2)
	tt := sum.Totals
	if !sum.Interrupted || tt.Abandoned == 0 || tt.Scanned != len(stored) ||
		tt.Completed+tt.Failed+tt.Skipped+tt.Abandoned+tt.NotStarted != 5 {
		t.Errorf("totals %+v interrupted %v; want the scans in flight abandoned and every target accounted for", tt, sum.Interrupted)
	}
}
