//go:build docker && postgres

package cli_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/verifymcp/verifymcp/internal/testnpm"
	"github.com/verifymcp/verifymcp/internal/testpg"
	"github.com/verifymcp/verifymcp/sandbox/image"
)

// fleetDatabase makes a schema of its own for the test, dropped when it
// ends, and returns a DSN whose search_path is that schema, and a
// connection to it.
func fleetDatabase(t *testing.T) (string, *pgx.Conn) {
	t.Helper()
	ctx := context.Background()
	dsn := testpg.SchemaDSN(t, "fleet_test_")
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return dsn, conn
}

// workerArgs are the flags of a fast worker: quick fixtures need no
// behaviour capture and no third parties. A job is rescued 45 s after its
// worker died.
func workerArgs(data string) []string {
	return []string{"worker", "--data-dir", data, "--until-done", "--no-behavior", "--skip", "osv,socket,github,dnssec,judge",
		"--handshake-timeout", "20s", "--job-timeout", "40s", "--rescue-after", "45s"}
}

type enqueueJSON struct {
	Totals struct {
		Targets, Submitted, Enqueued, Skipped, Failed int
		AlreadyQueued                                 int `json:"already_queued"`
	} `json:"totals"`
}

// enqueueList runs `batch --enqueue` of list from dir/submitter and
// returns its summary.
func enqueueList(t *testing.T, env []string, dir, list string) enqueueJSON {
	t.Helper()
	res := verifymcp(t, env, "batch", "--enqueue", "--format", "json", "--data-dir", filepath.Join(dir, "submitter"), list)
	if res.code != 0 {
		t.Fatalf("batch --enqueue: exit %d\n%s", res.code, res.stderr)
	}
	var sum enqueueJSON
	if err := json.Unmarshal([]byte(res.stdout), &sum); err != nil {
		t.Fatalf("%v\n%s", err, res.stdout)
	}
	return sum
}

// worker is a `verifymcp worker` process whose stderr is watched.
type worker struct {
	cmd    *exec.Cmd
	exited chan struct{}
	mu     sync.Mutex
	log    strings.Builder
	// scanning receives the target of each job it starts scanning.
	scanning chan string
}

var scanningRE = regexp.MustCompile(`\] scanning target=(\S+) version=`)

func startWorker(t *testing.T, env []string, data string) *worker {
	t.Helper()
	cmd := exec.Command(binary, workerArgs(data)...)
	cmd.Env = append(append(os.Environ(), env...), "VERIFYMCP_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pruneOwnTrees(t, cmd.Process.Pid)
	w := &worker{cmd: cmd, exited: make(chan struct{}), scanning: make(chan string, 64)}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			w.mu.Lock()
			w.log.WriteString(line + "\n")
			w.mu.Unlock()
			if m := scanningRE.FindStringSubmatch(line); m != nil {
				w.scanning <- m[1]
			}
		}
		cmd.Wait()
		close(w.exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-w.exited
	})
	return w
}

func (w *worker) stderr() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.log.String()
}

// TestFleetExactlyOnce runs the fleet the way an operator does: `batch
// --enqueue` submits a list (twice: the second adds nothing), two `worker`
// processes with their own data directories pull the jobs, and one is
// killed with SIGKILL in the middle of a scan. The other finishes every
// job, the killed one's after the rescue: every target ends with exactly
// one stored run, the crashing package's failure is its result, a target
// that vanished after enqueueing is cancelled with its reason, and the
// queue shows it all.
func TestFleetExactlyOnce(t *testing.T) {
	dsn, conn := fleetDatabase(t)
	env := []string{"VERIFYMCP_CONFIG=", "VERIFYMCP_DATABASE_URL=" + dsn}
	dir := t.TempDir()
	list, names := batchFixtures(t, dir, 6) // the last crashes at start

	// One more target, another package, that will be gone by the time a
	// worker takes it.
	other := t.TempDir()
	batchFixtures(t, other, 1)
	gone := filepath.Join(dir, "gone.tgz")
	if err := os.Rename(filepath.Join(other, "fx0.tgz"), gone); err != nil {
		t.Fatal(err)
	}
	listed, err := os.ReadFile(list)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(list, append(listed, "gone.tgz\n"...), 0o600); err != nil {
		t.Fatal(err)
	}

	enqueue := func() enqueueJSON { return enqueueList(t, env, dir, list) }
	first := enqueue()
	if tt := first.Totals; tt.Targets != 7 || tt.Submitted != 7 || tt.Enqueued != 7 || tt.AlreadyQueued != 0 || tt.Failed != 0 {
		t.Fatalf("first enqueue totals %+v; want 7 enqueued", tt)
	}
	if tt := enqueue().Totals; tt.Enqueued != 0 || tt.AlreadyQueued != 7 {
		t.Fatalf("second enqueue totals %+v; want nothing new, 7 already queued", tt)
	}
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}

	a := startWorker(t, env, filepath.Join(dir, "a"))
	b := startWorker(t, env, filepath.Join(dir, "b"))
	var killedTarget string
	select {
	case killedTarget = <-a.scanning:
	case <-a.exited:
		t.Fatalf("worker a exited before scanning anything\n%s", a.stderr())
	case <-time.After(90 * time.Second):
		t.Fatalf("worker a scanned nothing in 90 s\n%s", a.stderr())
	}
	// The scan has started (a fixture takes a second or more): nothing of
	// it is committed yet.
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-a.exited
	killed := time.Now()
	t.Logf("killed worker a while it scanned %s", killedTarget)

	select {
	case <-b.exited:
	case <-time.After(4 * time.Minute):
		t.Fatalf("worker b did not finish the queue in 4 minutes\n%s", b.stderr())
	}
	t.Logf("worker b finished the queue %s after the kill", time.Since(killed).Round(time.Second))
	if code := b.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("worker b: exit %d\n%s", code, b.stderr())
	}

	// Every package has exactly one run and one result.
	ctx := context.Background()
	rows, err := conn.Query(ctx, `SELECT r.target_name, r.outcome, count(*) FROM runs r JOIN results res USING (run_id) GROUP BY 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	runs, outcomes := map[string]int{}, map[string]string{}
	for rows.Next() {
		var name, outcome string
		var n int
		if err := rows.Scan(&name, &outcome, &n); err != nil {
			t.Fatal(err)
		}
		runs[name] += n
		outcomes[name] = outcome
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	// fx0 and gone.tgz are the same package: one run, from fx0's job.
	for i, name := range names {
		if runs[name] != 1 {
			t.Errorf("%s: %d stored runs, want exactly 1", name, runs[name])
		}
		want := "ok"
		if i == len(names)-1 {
			want = "start_crashed"
		}
		if outcomes[name] != want {
			t.Errorf("%s: outcome %q, want %q", name, outcomes[name], want)
		}
	}
	if len(runs) != len(names) {
		t.Errorf("stored runs %v, want one per fixture", runs)
	}

	// The queue: six completed (the crash included), the vanished target
	// cancelled with its reason, the killed job taken over on attempt 2.
	res := verifymcp(t, env, "queue", "status", "--format", "json")
	if res.code != 0 {
		t.Fatalf("queue status: exit %d\n%s", res.code, res.stderr)
	}
	var qs struct {
		Pending, Running, Completed, Discarded, Cancelled int
		Failed                                            []struct {
			State, Target, LastError string
		}
	}
	if err := json.Unmarshal([]byte(res.stdout), &qs); err != nil {
		t.Fatal(err)
	}
	if qs.Pending != 0 || qs.Completed != 6 || qs.Cancelled != 1 || qs.Discarded != 0 || len(qs.Failed) != 1 ||
		!strings.HasPrefix(qs.Failed[0].Target, gone+"#sha512-") || !strings.Contains(qs.Failed[0].LastError, "gone.tgz") {
		t.Errorf("queue status %+v; want 6 completed and gone.tgz cancelled with its reason", qs)
	}
	var attempt int
	var errs []byte
	err = conn.QueryRow(ctx, `SELECT attempt, errors::text FROM river_job WHERE args->>'target' = $1`, killedTarget).Scan(&attempt, &errs)
	if err != nil {
		t.Errorf("the killed job: %v", err)
	} else if attempt != 2 || !strings.Contains(string(errs), "Stuck job rescued") {
		t.Errorf("the killed job: attempt %d, errors %s; want attempt 2 after a rescue", attempt, errs)
	}
	if !strings.Contains(b.stderr(), "scanned") {
		t.Errorf("worker b logged no scan:\n%s", b.stderr())
	}

	// The killed worker's containers are removed by the next command that
	// prepares the sandbox, or by prune; the finished worker left nothing.
	if res := verifymcp(t, env, "sandbox", "prune"); res.code != 0 {
		t.Errorf("sandbox prune: exit %d\n%s", res.code, res.stderr)
	}
	noLeftovers(t, a.cmd.Process.Pid, b.cmd.Process.Pid)

	// A batch run on one machine against the same store finds everything
	// stored, with no engine needed.
	if err := os.WriteFile(list, listed, 0o600); err != nil {
		t.Fatal(err)
	}
	again := verifymcp(t, append(env, "DOCKER_HOST=unix:///nonexistent/docker.sock"),
		"batch", "--data-dir", filepath.Join(dir, "c"), "--format", "json", "--no-behavior", "--skip", "osv,socket,github,dnssec,judge", list)
	var sum batchSummaryJSON
	if err := json.Unmarshal([]byte(again.stdout), &sum); err != nil || again.code != 0 || sum.Totals.Skipped != 6 {
		t.Errorf("batch against the fleet store: exit %d, totals %+v, %v\n%s", again.code, sum.Totals, err, again.stderr)
	}
}

// TestFleetPyPI: a real PyPI release goes through the fleet's queue as
// PyPI (enqueued as pypi:NAME==VERSION with its files' digests, scanned
// by a worker as a PyPI package, stored once), and enqueuing it again
// finds it stored.
func TestFleetPyPI(t *testing.T) {
	dsn, conn := fleetDatabase(t)
	env := []string{"VERIFYMCP_CONFIG=", "VERIFYMCP_DATABASE_URL=" + dsn}
	dir := t.TempDir()
	list := filepath.Join(dir, "servers.txt")
	// A release no other test scans, so that its fetch is this test's.
	const line = "pypi:mcp-server-time==2026.8.18 --arg --local-timezone --arg UTC\n"
	if err := os.WriteFile(list, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	enqueue := func() enqueueJSON { return enqueueList(t, env, dir, list) }
	if tt := enqueue().Totals; tt.Targets != 1 || tt.Enqueued != 1 || tt.Failed != 0 {
		t.Fatalf("enqueue totals %+v; want 1 enqueued", tt)
	}
	ctx := context.Background()
	var target string
	var integrities []string
	if err := conn.QueryRow(ctx, `SELECT args->>'target', ARRAY(SELECT jsonb_array_elements_text(args->'options'->'integrities')) FROM river_job`).Scan(&target, &integrities); err != nil {
		t.Fatal(err)
	}
	if target != "pypi:mcp-server-time==2026.8.18" || len(integrities) == 0 || !strings.HasPrefix(integrities[0], "sha256-") {
		t.Errorf("the job: target %q, integrities %v; want the PyPI release with its files' digests", target, integrities)
	}

	w := startWorker(t, env, filepath.Join(dir, "w"))
	select {
	case <-w.exited:
	case <-time.After(4 * time.Minute):
		t.Fatalf("the worker did not finish the queue in 4 minutes\n%s", w.stderr())
	}
	if code := w.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("worker: exit %d\n%s", code, w.stderr())
	}
	var eco, name, version, outcome string
	var n int
	if err := conn.QueryRow(ctx, `SELECT ecosystem, target_name, target_version, outcome, count(*) OVER () FROM runs`).Scan(&eco, &name, &version, &outcome, &n); err != nil {
		t.Fatalf("stored runs: %v\n%s", err, w.stderr())
	}
	if eco != "pypi" || name != "mcp-server-time" || version != "2026.8.18" || outcome != "ok" || n != 1 {
		t.Errorf("stored %d runs, the first %s:%s@%s %s; want one ok run of pypi:mcp-server-time@2026.8.18\n%s", n, eco, name, version, outcome, w.stderr())
	}
	if tt := enqueue().Totals; tt.Skipped != 1 || tt.Enqueued != 0 || tt.Failed != 0 {
		t.Errorf("enqueue again: totals %+v; want the stored release skipped", tt)
	}
}

// TestFleetShipped: releases that run as shipped go through the fleet's
// queue: an MCPB bundle (resumed by its digest: enqueued again, it is
// found stored) and an image on the engine by its tag (whose digest is
// known only once it is read: enqueued again, it is scanned again).
func TestFleetShipped(t *testing.T) {
	dsn, conn := fleetDatabase(t)
	env := []string{"VERIFYMCP_CONFIG=", "VERIFYMCP_DATABASE_URL=" + dsn}
	dir := t.TempDir()

	tag := "verifymcp-test/fleet-image-" + strings.ReplaceAll(filepath.Base(dir), "_", "-") + ":1"
	js, err := os.ReadFile("../../../sandbox/testdata/fixture-server.js")
	if err != nil {
		t.Fatal(err)
	}
	ctx := filepath.Join(dir, "image")
	for name, body := range map[string]string{
		"app/server.js":    string(js),
		"app/fixture.json": `{"tools": [{"name": "echo", "description": "Echoes the text it is given.", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}]}`,
		"Dockerfile":       "FROM " + image.Ref() + "\nCOPY app /app\nUSER 1000:1000\nENTRYPOINT [\"node\", \"/app/server.js\"]\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(ctx, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ctx, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("docker", "build", "-q", "-t", tag, ctx).CombinedOutput(); err != nil {
		t.Fatalf("docker build: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("docker", "rmi", "-f", tag).Run() })

	bundle, err := filepath.Abs("../../../ecosystem/mcpb/mcpbrun/testdata/benign.mcpb")
	if err != nil {
		t.Fatal(err)
	}
	list := filepath.Join(dir, "servers.txt")
	if err := os.WriteFile(list, []byte(bundle+"\ndocker-daemon:"+tag+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	enqueue := func() enqueueJSON { return enqueueList(t, env, dir, list) }
	if tt := enqueue().Totals; tt.Targets != 2 || tt.Enqueued != 2 || tt.Failed != 0 {
		t.Fatalf("enqueue totals %+v; want 2 enqueued", tt)
	}
	w := startWorker(t, env, filepath.Join(dir, "w"))
	select {
	case <-w.exited:
	case <-time.After(3 * time.Minute):
		t.Fatalf("the worker did not finish the queue in 3 minutes\n%s", w.stderr())
	}
	if code := w.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("worker: exit %d\n%s", code, w.stderr())
	}
	rows, err := conn.Query(context.Background(), `SELECT ecosystem, target_name, target_version, outcome FROM runs ORDER BY ecosystem`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var eco, name, version, outcome string
		if err := rows.Scan(&eco, &name, &version, &outcome); err != nil {
			t.Fatal(err)
		}
		got = append(got, eco+" "+name+" "+version+" "+outcome)
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	if want := []string{"mcpb verifymcp-fixture-benign 1.0.0 ok", "oci docker.io/" + strings.TrimSuffix(tag, ":1") + " 1 ok"}; !slices.Equal(got, want) {
		t.Errorf("stored runs %q; want %q\n%s", got, want, w.stderr())
	}
	// The bundle is found stored by its digest. The image by tag is not
	// resumable (its digest is known once it is read), and the queue
	// already holds its job: a job is run once per target as written.
	if tt := enqueue().Totals; tt.Skipped != 1 || tt.AlreadyQueued != 1 || tt.Enqueued != 0 || tt.Failed != 0 {
		t.Errorf("enqueue again: totals %+v; want the bundle skipped (stored, by its digest) and the image's job already queued", tt)
	}
}

// TestEnqueueInChunks: a list longer than one chunk of jobs is submitted
// a chunk at a time as it resolves; every job reaches the queue once, and
// submitting the list again adds nothing.
func TestEnqueueInChunks(t *testing.T) {
	dsn, conn := fleetDatabase(t)
	env := []string{"VERIFYMCP_CONFIG=", "VERIFYMCP_DATABASE_URL=" + dsn}
	dir := t.TempDir()
	const n = 250
	var lines []string
	for i := range n {
		file := fmt.Sprintf("fx%03d.tgz", i)
		testnpm.Tarball(t, filepath.Join(dir, file), fmt.Sprintf("verifymcp-chunk-fx%03d", i))
		lines = append(lines, file)
	}
	list := filepath.Join(dir, "list.txt")
	if err := os.WriteFile(list, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if sum := enqueueList(t, env, dir, list); sum.Totals.Enqueued != n || sum.Totals.Submitted != n {
		t.Errorf("first submission: %+v, want %d enqueued", sum.Totals, n)
	}
	var rows int
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM river_job").Scan(&rows); err != nil || rows != n {
		t.Errorf("the queue holds %d jobs (%v), want %d", rows, err, n)
	}
	if sum := enqueueList(t, env, dir, list); sum.Totals.Enqueued != 0 || sum.Totals.AlreadyQueued != n {
		t.Errorf("second submission: %+v, want all %d already queued", sum.Totals, n)
	}
}
