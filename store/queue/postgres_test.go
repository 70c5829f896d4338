//go:build postgres

package queue

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/verifymcp/verifymcp/internal/testpg"
)

// The worker process: the test binary re-executed with helperWorkerEnv set
// runs runWorker instead of the tests, so that workers are separate
// processes that can be killed.
const (
	helperWorkerEnv = "VERIFYMCP_QUEUE_TEST_WORKER" // worker name
	helperSchemaEnv = "VERIFYMCP_QUEUE_TEST_SCHEMA"
	helperBlockEnv  = "VERIFYMCP_QUEUE_TEST_BLOCK"  // a target whose handler never returns
	helperRescueEnv = "VERIFYMCP_QUEUE_TEST_RESCUE" // RescueStuckJobsAfter
)

func TestMain(m *testing.M) {
	if name := os.Getenv(helperWorkerEnv); name != "" {
		if err := runWorker(name); err != nil {
			fmt.Fprintf(os.Stderr, "worker %s: %v\n", name, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func newPool(ctx context.Context) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(testpg.DSN())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", testpg.DSNEnv, err)
	}
	cfg.MaxConns = 10
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("the Postgres test server at %s:%d is unreachable: %w\n"+
			"run scripts/setup.sh (or scripts/setup.sh postgres) to install and start it, or set %s",
			cfg.ConnConfig.Host, cfg.ConnConfig.Port, err, testpg.DSNEnv)
	}
	return pool, nil
}

// connect fails (not skips) when the server is not there: a missing
// server must not pass as a green run.
func connect(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool, err := newPool(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// newSchema makes a schema of its own for the test, with River's tables
// and the test's results table, and drops it when the test ends.
func newSchema(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	ctx := context.Background()
	schema := testpg.Schema(t, "queue_test_")
	if err := Migrate(ctx, pool, schema); err != nil {
		t.Fatal(err)
	}
	// Not unique on purpose: a duplicate result must show as a second row.
	_, err := pool.Exec(ctx, `
		CREATE TABLE `+schema+`.scan_results (target text NOT NULL, worker text NOT NULL, outcome text NOT NULL);
		CREATE TABLE `+schema+`.holding (target text NOT NULL, worker text NOT NULL)`)
	if err != nil {
		t.Fatalf("create test tables: %v", err)
	}
	return schema
}

// testOptions are the handler's instructions, carried in ScanArgs.Options.
type testOptions struct {
	SleepMS int    `json:"sleep_ms,omitempty"`
	Fail    string `json:"fail,omitempty"` // "package" or "infrastructure"
}

func scanJob(target string, o testOptions) ScanArgs {
	opts, _ := json.Marshal(o)
	return ScanArgs{Target: target, RubricVersion: "pkg-2026.1", ToolVersion: "0.9.0", Options: opts}
}

// testHandler writes a result row in the job's transaction, as the real
// handler writes a scan's result. For the target named block it then
// announces (outside the transaction) that it holds the job, and waits to
// be killed.
func testHandler(pool *pgxpool.Pool, schema, worker, block string) Handler {
	return func(ctx context.Context, tx pgx.Tx, args ScanArgs) error {
		var o testOptions
		if err := json.Unmarshal(args.Options, &o); err != nil {
			return Permanent(fmt.Errorf("options: %w", err))
		}
		outcome := "ok"
		if o.Fail == "package" {
			outcome = "install_failed"
		}
		if _, err := tx.Exec(ctx, "INSERT INTO "+schema+".scan_results (target, worker, outcome) VALUES ($1, $2, $3)",
			args.Target, worker, outcome); err != nil {
			return err
		}
		if args.Target == block {
			if _, err := pool.Exec(ctx, "INSERT INTO "+schema+".holding (target, worker) VALUES ($1, $2)", args.Target, worker); err != nil {
				return err
			}
			<-ctx.Done()
			return ctx.Err()
		}
		select {
		case <-time.After(time.Duration(o.SleepMS) * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
		switch o.Fail {
		case "package":
			return Permanent(errors.New("npm install exited 1"))
		case "infrastructure":
			return errors.New("docker engine unreachable")
		case "cancel":
			return Cancel(errors.New("the target no longer resolves"))
		}
		return nil
	}
}

// runWorker is a worker process: it works jobs until SIGTERM, then stops
// gracefully. It prints "ready" once started.
func runWorker(name string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	pool, err := newPool(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	schema := os.Getenv(helperSchemaEnv)
	cfg := Config{
		Schema:  schema,
		Handler: testHandler(pool, schema, name, os.Getenv(helperBlockEnv)),
		Workers: 2,
		Logger:  slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	if s := os.Getenv(helperRescueEnv); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		cfg.RescueStuckJobsAfter, cfg.JobTimeout = d, d/2
	}
	c, err := NewClient(pool, cfg)
	if err != nil {
		return err
	}
	if err := c.Start(context.Background()); err != nil {
		return err
	}
	fmt.Println("ready")
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return c.Stop(sctx)
}

// worker is a running worker process.
type worker struct {
	name   string
	cmd    *exec.Cmd
	stderr bytes.Buffer
}

// startWorker starts a worker process and waits until it has started
// working.
func startWorker(t *testing.T, schema, name string, env ...string) *worker {
	t.Helper()
	w := &worker{name: name, cmd: exec.Command(os.Args[0])}
	w.cmd.Env = append(os.Environ(), append(env, helperWorkerEnv+"="+name, helperSchemaEnv+"="+schema)...)
	w.cmd.Stderr = &w.stderr
	stdout, err := w.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if w.cmd.ProcessState == nil {
			w.cmd.Process.Kill()
			w.cmd.Wait()
		}
	})
	ready := make(chan bool, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		ready <- s.Scan() && s.Text() == "ready"
		io.Copy(io.Discard, stdout)
	}()
	select {
	case ok := <-ready:
		if !ok {
			w.cmd.Wait()
			t.Fatalf("worker %s did not start:\n%s", name, w.stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("worker %s did not start in 20 s:\n%s", name, w.stderr.String())
	}
	return w
}

// stop stops the worker gracefully and checks it exited cleanly.
func (w *worker) stop(t *testing.T) {
	t.Helper()
	w.cmd.Process.Signal(syscall.SIGTERM)
	if err := w.cmd.Wait(); err != nil {
		t.Errorf("worker %s: %v\n%s", w.name, err, w.stderr.String())
	}
}

// waitFor polls cond until it holds, failing the test after timeout.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen in %s", what, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// jobState is a job's row, as River keeps it.
type jobState struct {
	State   string
	Attempt int
	Errors  []string
}

func jobOf(ctx context.Context, pool *pgxpool.Pool, schema, target string) (jobState, error) {
	var j jobState
	var errs []rivertypeAttemptError
	err := pool.QueryRow(ctx, "SELECT state::text, attempt, coalesce(errors, '{}') FROM "+schema+".river_job WHERE args->>'target' = $1", target).
		Scan(&j.State, &j.Attempt, &errs)
	for _, e := range errs {
		j.Errors = append(j.Errors, e.Error)
	}
	return j, err
}

// rivertypeAttemptError is the part of River's errors column we read.
type rivertypeAttemptError struct {
	Error string `json:"error"`
}

// resultsByTarget counts result rows per target.
func resultsByTarget(ctx context.Context, pool *pgxpool.Pool, schema string) (map[string][]string, error) {
	rows, err := pool.Query(ctx, "SELECT target, worker FROM "+schema+".scan_results ORDER BY target, worker")
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	var target, worker string
	_, err = pgx.ForEachRow(rows, []any{&target, &worker}, func() error {
		out[target] = append(out[target], worker)
		return nil
	})
	return out, err
}

func countJobs(ctx context.Context, pool *pgxpool.Pool, schema, where string) (int, error) {
	var n int
	err := pool.QueryRow(ctx, "SELECT count(*) FROM "+schema+".river_job WHERE "+where).Scan(&n)
	return n, err
}

// TestMigrate: River's tables land in the configured schema, and
// migrating again, or from several workers at once, is harmless.
func TestMigrate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := connect(t)
	schema := newSchema(t, pool) // migrated once
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = Migrate(ctx, pool, schema) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Errorf("concurrent migrate: %v", err)
		}
	}
	var n int
	err := pool.QueryRow(ctx, "SELECT count(*) FROM information_schema.tables WHERE table_schema = $1 AND table_name IN ('river_job', 'river_leader', 'river_migration')", schema).Scan(&n)
	if err != nil || n != 3 {
		t.Errorf("River tables in %s: %d, %v; want 3", schema, n, err)
	}
}

// TestEnqueueIdempotent: the key is (target, rubric version, tool
// version); options are not part of it.
func TestEnqueueIdempotent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := connect(t)
	schema := newSchema(t, pool)
	c, err := NewClient(pool, Config{Schema: schema}) // insert-only
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); !errors.Is(err, ErrNoHandler) {
		t.Errorf("Start on an insert-only client = %v, want ErrNoHandler", err)
	}
	a := scanJob("npm:left-pad@1.3.0", testOptions{})
	otherRubric := a
	otherRubric.RubricVersion = "pkg-2026.2"
	otherOptions := scanJob(a.Target, testOptions{SleepMS: 5})

	type counts struct{ Inserted, Duplicates int }
	steps := []struct {
		name string
		jobs []ScanArgs
		want counts
	}{
		{"first", []ScanArgs{a}, counts{1, 0}},
		{"same_again", []ScanArgs{a}, counts{0, 1}},
		{"other_options_same_key", []ScanArgs{otherOptions}, counts{0, 1}},
		{"twice_in_one_batch_with_a_new_key", []ScanArgs{otherRubric, otherRubric, a}, counts{1, 2}},
	}
	for _, s := range steps {
		ins, dup, err := c.Enqueue(ctx, s.jobs)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if diff := cmp.Diff(s.want, counts{ins, dup}); diff != "" {
			t.Errorf("%s: enqueue counts (-want +got):\n%s", s.name, diff)
		}
	}
	if n, err := countJobs(ctx, pool, schema, "true"); err != nil || n != 2 {
		t.Errorf("jobs in the table: %d, %v; want 2", n, err)
	}
	if _, _, err := c.Enqueue(ctx, []ScanArgs{{Target: "npm:x@1.0.0"}}); !errors.Is(err, ErrInvalidArgs) {
		t.Errorf("enqueue without versions = %v, want ErrInvalidArgs", err)
	}
}

// TestTwoWorkerProcesses: two worker processes share 30 jobs; each job's
// result is written exactly once, both workers take part, no job is
// retried, and both stop gracefully.
func TestTwoWorkerProcesses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := connect(t)
	schema := newSchema(t, pool)
	workers := []*worker{startWorker(t, schema, "a"), startWorker(t, schema, "b")}

	c, err := NewClient(pool, Config{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	const n = 30
	var jobs []ScanArgs
	for i := range n {
		jobs = append(jobs, scanJob(fmt.Sprintf("npm:pkg-%02d@1.0.0", i), testOptions{SleepMS: 150}))
	}
	if ins, dup, err := c.Enqueue(ctx, jobs); err != nil || ins != n || dup != 0 {
		t.Fatalf("enqueue: inserted %d, duplicates %d, %v", ins, dup, err)
	}
	waitFor(t, 30*time.Second, "all jobs completed", func() (bool, error) {
		done, err := countJobs(ctx, pool, schema, "state = 'completed'")
		return done == n, err
	})
	for _, w := range workers {
		w.stop(t)
	}

	results, err := resultsByTarget(ctx, pool, schema)
	if err != nil {
		t.Fatal(err)
	}
	perWorker := map[string]int{}
	for _, j := range jobs {
		if got := len(results[j.Target]); got != 1 {
			t.Errorf("%s: %d results %v, want exactly 1", j.Target, got, results[j.Target])
		}
		for _, w := range results[j.Target] {
			perWorker[w]++
		}
	}
	if len(results) != n {
		t.Errorf("results for %d targets, want %d", len(results), n)
	}
	if perWorker["a"] == 0 || perWorker["b"] == 0 {
		t.Errorf("jobs per worker %v: both workers should have worked", perWorker)
	}
	if retried, err := countJobs(ctx, pool, schema, "attempt <> 1"); err != nil || retried != 0 {
		t.Errorf("jobs attempted more than once: %d, %v", retried, err)
	}
	t.Logf("jobs per worker: %v", perWorker)
}

// TestKilledWorkerJobFinishedByOther: worker a is killed (SIGKILL) while it
// holds a job whose result it has already written in the uncommitted
// transaction. Worker b, whose short RescueStuckJobsAfter makes its rescuer
// presume a dead, takes the job over once it leads, and the job ends with
// exactly one result, b's.
func TestKilledWorkerJobFinishedByOther(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := connect(t)
	schema := newSchema(t, pool)
	const target = "npm:slow-server@2.0.0"

	// a starts alone, so it is elected leader and fetches the job.
	a := startWorker(t, schema, "a", helperBlockEnv+"="+target)
	c, err := NewClient(pool, Config{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Enqueue(ctx, []ScanArgs{scanJob(target, testOptions{})}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 15*time.Second, "worker a holding the job", func() (bool, error) {
		var n int
		err := pool.QueryRow(ctx, "SELECT count(*) FROM "+schema+".holding WHERE worker = 'a'").Scan(&n)
		return n == 1, err
	})
	// Wait for a to lead, so that b's takeover runs the real path: a's
	// leadership lease expires, b is elected, and b's rescuer runs on
	// election. (Had b led from the start, its rescuer would next run up
	// to 30 s later, River's fixed interval.)
	waitFor(t, 15*time.Second, "worker a leading", func() (bool, error) {
		var n int
		err := pool.QueryRow(ctx, "SELECT count(*) FROM "+schema+".river_leader l JOIN "+schema+
			".river_job j ON l.leader_id = ANY(j.attempted_by) WHERE j.args->>'target' = $1", target).Scan(&n)
		return n == 1, err
	})
	b := startWorker(t, schema, "b", helperRescueEnv+"=2s")

	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	a.cmd.Wait()
	killed := time.Now()

	waitFor(t, 45*time.Second, "the job completed by worker b", func() (bool, error) {
		j, err := jobOf(ctx, pool, schema, target)
		return j.State == "completed", err
	})
	t.Logf("taken over %s after the kill", time.Since(killed).Round(100*time.Millisecond))
	b.stop(t)

	results, err := resultsByTarget(ctx, pool, schema)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string][]string{target: {"b"}}, results); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	j, err := jobOf(ctx, pool, schema, target)
	if err != nil {
		t.Fatal(err)
	}
	want := jobState{State: "completed", Attempt: 2, Errors: []string{"Stuck job rescued by JobRescuer"}}
	if diff := cmp.Diff(want, j); diff != "" {
		t.Errorf("job (-want +got):\n%s", diff)
	}
}

// TestFailures: a package's own failure is its result (completed on the
// first attempt, result row kept); an infrastructure error is retried,
// then discarded with its reason visible, and leaves no result. A
// discarded key can be enqueued again; a completed one cannot.
func TestFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := connect(t)
	schema := newSchema(t, pool)
	c, err := NewClient(pool, Config{
		Schema:      schema,
		Handler:     testHandler(pool, schema, "w", ""),
		Workers:     2,
		MaxAttempts: 2, // River's backoff waits 1 s after the first failure
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop(context.Background()) })

	broken := scanJob("npm:broken-install@0.1.0", testOptions{Fail: "package"})
	flaky := scanJob("npm:fine-package@1.0.0", testOptions{Fail: "infrastructure"})
	gone := scanJob("npm:unpublished@2.0.0", testOptions{Fail: "cancel"})
	if ins, _, err := c.Enqueue(ctx, []ScanArgs{broken, flaky, gone}); err != nil || ins != 3 {
		t.Fatalf("enqueue: %d, %v", ins, err)
	}
	waitFor(t, 30*time.Second, "the jobs finalized", func() (bool, error) {
		n, err := countJobs(ctx, pool, schema, "finalized_at IS NOT NULL")
		return n == 3, err
	})
	if n, err := c.Count(ctx); err != nil || n != (Counts{Completed: 1, Discarded: 1, Cancelled: 1}) {
		t.Errorf("Count() = %+v, %v; want 1 completed, 1 discarded, 1 cancelled", n, err)
	}

	got, err := jobOf(ctx, pool, schema, broken.Target)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(jobState{State: "completed", Attempt: 1}, got); diff != "" {
		t.Errorf("package failure job (-want +got):\n%s", diff)
	}
	results, err := resultsByTarget(ctx, pool, schema)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string][]string{broken.Target: {"w"}}, results); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}

	discarded, err := c.Discarded(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range discarded {
		discarded[i].ID, discarded[i].DiscardedAt = 0, time.Time{}
	}
	reason := "scan npm:fine-package@1.0.0: docker engine unreachable"
	// River prefixes the reason of a cancelled job with the error type.
	cancelled := "JobCancelError: scan npm:unpublished@2.0.0: the target no longer resolves"
	want := []DiscardedJob{{
		State:  "discarded",
		Target: flaky.Target, RubricVersion: flaky.RubricVersion, ToolVersion: flaky.ToolVersion,
		Attempts: 2, LastError: reason, Errors: []string{reason, reason},
	}, {
		State:  "cancelled",
		Target: gone.Target, RubricVersion: gone.RubricVersion, ToolVersion: gone.ToolVersion,
		Attempts: 1, LastError: cancelled, Errors: []string{cancelled},
	}}
	if diff := cmp.Diff(want, discarded); diff != "" {
		t.Errorf("Discarded() (-want +got):\n%s", diff)
	}

	ins, dup, err := c.Enqueue(ctx, []ScanArgs{broken, flaky, gone})
	if err != nil || ins != 2 || dup != 1 {
		t.Errorf("re-enqueue after completion, discard and cancel: inserted %d, duplicates %d, %v; want 2 (discarded, cancelled), 1 (completed)", ins, dup, err)
	}
}

// TestLostJobResultRefused: a worker that comes back after its job was
// given to another worker and finished there (a pause longer than
// RescueStuckJobsAfter, say) must not commit a second result. JobCompleteTx
// alone would let it; the attempt check refuses it.
func TestLostJobResultRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := connect(t)
	schema := newSchema(t, pool)
	const target = "npm:paused@1.0.0"
	inHandler, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	handler := func(ctx context.Context, tx pgx.Tx, args ScanArgs) error {
		if _, err := tx.Exec(ctx, "INSERT INTO "+schema+".scan_results (target, worker, outcome) VALUES ($1, 'paused', 'ok')", args.Target); err != nil {
			return err
		}
		if calls.Add(1) == 1 {
			close(inHandler)
			<-release
		}
		return nil
	}
	c, err := NewClient(pool, Config{Schema: schema, Handler: handler})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Enqueue(ctx, []ScanArgs{scanJob(target, testOptions{})}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-inHandler:
	case <-time.After(15 * time.Second):
		t.Fatal("the job was not fetched")
	}

	// Meanwhile, as far as the database knows: the rescuer gave the job to
	// another worker (attempt 2), which wrote its result and completed it.
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "INSERT INTO "+schema+".scan_results (target, worker, outcome) VALUES ($1, 'other', 'ok')", target); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "UPDATE "+schema+".river_job SET attempt = attempt + 1, state = 'completed', finalized_at = now() WHERE args->>'target' = $1", target); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}

	close(release)
	sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := c.Stop(sctx); err != nil { // waits for the paused job to return
		t.Fatal(err)
	}
	results, err := resultsByTarget(ctx, pool, schema)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string][]string{target: {"other"}}, results); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	j, err := jobOf(ctx, pool, schema, target)
	if err != nil {
		t.Fatal(err)
	}
	if j.State != "completed" || j.Attempt != 2 {
		t.Errorf("job = %+v, want completed at attempt 2 (left as the other worker finished it)", j)
	}
}
