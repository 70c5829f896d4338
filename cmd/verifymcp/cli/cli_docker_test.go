//go:build docker

package cli_test

import (
	"bytes"
	"context"
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

	"github.com/Masterminds/semver/v3"
	imagetypes "github.com/docker/docker/api/types/image"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/verifymcp/verifymcp/cmd/verifymcp/cli"
	"github.com/verifymcp/verifymcp/report"
	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/sandbox/image"
)

// These tests run the real binary the way a user does, against the real
// engine and the real npm registry.

var binary string

func TestMain(m *testing.M) {
	// The in-process tests (inprocess_docker_test.go) build the helper
	// image from this test binary; in the egress proxy and observer
	// containers it is started as "verifymcp sandbox ...", and then runs
	// that command instead of the tests.
	if len(os.Args) > 1 && os.Args[1] == "sandbox" {
		os.Exit(cli.Run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(func() int {
		defer removeOwnHelperImage()
		// What the in-process scans of this test binary cached (the
		// verifymcp processes it starts prune theirs: pruneOwnTrees).
		host, _ := os.Hostname()
		defer func() {
			if ec, err := sandbox.NewClient(); err == nil {
				_, _ = sandbox.PruneTreeOwner(context.Background(), ec, "", fmt.Sprintf("%s/%d", host, os.Getpid()))
				ec.Close()
			}
		}()
		dir, err := os.MkdirTemp("", "verifymcp-cli-test")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		binary = filepath.Join(dir, "verifymcp")
		build := exec.Command("go", "build", "-o", binary, "..")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
			return 1
		}
		return m.Run()
	}())
}

// removeOwnHelperImage removes the helper image built from this test
// binary, if an in-process test built one: every build of the tests would
// otherwise leave one more on the engine.
func removeOwnHelperImage() {
	exe, err := os.Executable()
	if err != nil {
		return
	}
	h, err := sandbox.LoadHelper(exe)
	if err != nil {
		return
	}
	ec, err := sandbox.NewClient()
	if err != nil {
		return
	}
	defer ec.Close()
	_, _ = ec.ImageRemove(context.Background(), h.Ref, imagetypes.RemoveOptions{PruneChildren: true})
}

type result struct {
	code           int
	stdout, stderr string
	pid            int
}

func verifymcp(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	if _, ok := os.LookupEnv("VERIFYMCP_CA_BUNDLE"); !ok {
		cmd.Env = append(cmd.Env, "VERIFYMCP_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt")
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	pruneOwnTrees(t, cmd.Process.Pid)
	return result{code, out.String(), errb.String(), cmd.Process.Pid}
}

// pruneOwnTrees removes, when the test ends, the cached trees the
// verifymcp process pid filled. A process of these tests keeps its tree
// cache in the test's own data directory, in the engine's default
// namespace, and a tree fetched from a loopback registry has a key of its
// own (the registry's port is in it): left there, each run of the suite
// would add volumes that nothing ever reads again.
func pruneOwnTrees(t *testing.T, pid int) {
	t.Helper()
	host, _ := os.Hostname()
	owner := fmt.Sprintf("%s/%d", host, pid)
	t.Cleanup(func() {
		ec, err := sandbox.NewClient()
		if err != nil {
			t.Error(err)
			return
		}
		defer ec.Close()
		if _, err := sandbox.PruneTreeOwner(context.Background(), ec, "", owner); err != nil {
			t.Logf("remove the trees process %s cached: %v", owner, err)
		}
	})
}

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(report.Schema()))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddResource("report.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("report.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type reportJSON struct {
	Run struct {
		ID string `json:"id"`
	} `json:"run"`
	Target struct {
		Name, Version, Requested, Integrity string
	} `json:"target"`
	Sandbox struct {
		Outcome     string `json:"outcome"`
		ImageDigest string `json:"image_digest"`
	} `json:"sandbox"`
	Rubric struct {
		Version, Hash string
	} `json:"rubric"`
	Signals  map[string]struct{ State string } `json:"signals"`
	Findings []struct {
		Code    string `json:"code"`
		Subject string `json:"subject"`
	} `json:"findings"`
	Score *float64 `json:"score"`
}

func codes(r reportJSON) map[string]bool {
	m := map[string]bool{}
	for _, f := range r.Findings {
		m[f.Code] = true
	}
	return m
}

// TestScanThenScore is the README's first command: a real scored report for
// a real published server; then `score` of the stored bundle gives exactly
// what the scan gave.
func TestScanThenScore(t *testing.T) {
	data := t.TempDir()
	res := verifymcp(t, nil, "scan", "--format", "json", "--data-dir", data, "npm:@modelcontextprotocol/server-everything@2026.8.31")
	if res.code != 0 {
		t.Fatalf("scan exit %d\n%s", res.code, res.stderr)
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(res.stdout))
	if err != nil {
		t.Fatal(err)
	}
	if err := compileSchema(t).Validate(v); err != nil {
		t.Errorf("report does not validate against the schema: %v", err)
	}
	var r reportJSON
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil {
		t.Fatal(err)
	}
	if r.Target.Name != "@modelcontextprotocol/server-everything" || r.Target.Version != "2026.8.31" || r.Sandbox.Outcome != "ok" || r.Score == nil {
		t.Errorf("report header %+v outcome %s score %v", r.Target, r.Sandbox.Outcome, r.Score)
	}
	if !strings.HasPrefix(r.Sandbox.ImageDigest, "sha256:") || r.Rubric.Version == "" || !strings.HasPrefix(r.Rubric.Hash, "sha256:") {
		t.Errorf("provenance: image digest %q rubric %+v", r.Sandbox.ImageDigest, r.Rubric)
	}
	for _, s := range []string{"sandbox.install", "sandbox.session", "contract", "registry", "sandbox.behavior"} {
		if r.Signals[s].State != "observed" {
			t.Errorf("signal %s is %q", s, r.Signals[s].State)
		}
	}
	// The development and CI machines reach none of the public OSV,
	// Socket and GitHub APIs (and have no Socket key): there they are
	// unavailable, which the report must say; a machine that reaches them
	// observes them. Either way they ran.
	for _, s := range []string{"osv", "socket", "github"} {
		if st := r.Signals[s].State; st != "unavailable" && st != "observed" {
			t.Errorf("signal %s is %q; a third party asked must be observed or unavailable", s, st)
		}
	}
	// No judge is configured here: it is unavailable, and says so.
	if st := r.Signals["judge"].State; st != "unavailable" {
		t.Errorf("signal judge is %q with no judge configured; want unavailable", st)
	}
	if c := codes(r); !c["pkg.contract.schema.completeness"] || !c["pkg.contract.description.coverage"] {
		t.Errorf("measurement codes missing: %v", c)
	}
	for code := range codes(r) {
		if strings.HasPrefix(code, "pkg.behavior.") {
			t.Errorf("benign server-everything: %s", code)
		}
	}
	if strings.Contains(strings.ToLower(res.stdout), `"safe"`) {
		t.Error("the report calls something safe")
	}

	bundle := filepath.Join(data, "bundles", r.Run.ID+".json")
	again := verifymcp(t, nil, "score", "--format", "json", bundle)
	if again.code != 0 || again.stdout != res.stdout {
		t.Errorf("score of the bundle file differs from the scan (exit %d)", again.code)
	}
	byID := verifymcp(t, nil, "score", "--format", "json", "--data-dir", data, r.Run.ID)
	if byID.code != 0 || byID.stdout != res.stdout {
		t.Errorf("score of the stored run differs from the scan (exit %d) %s", byID.code, byID.stderr)
	}
	table := verifymcp(t, nil, "score", bundle)
	if table.code != 0 || !strings.Contains(table.stdout, "mcp-servers/everything") {
		t.Errorf("table: exit %d", table.code)
	}
}

// TestScanResolvesRange: a range resolves to one exact version, and the
// report keeps both.
func TestScanResolvesRange(t *testing.T) {
	data := t.TempDir()
	res := verifymcp(t, nil, "scan", "--format", "json", "--data-dir", data, "pkg:npm/%40modelcontextprotocol/server-filesystem@^2026.8.0", "--arg", "/tmp")
	if res.code != 0 {
		t.Fatalf("scan exit %d\n%s", res.code, res.stderr)
	}
	var r reportJSON
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil {
		t.Fatal(err)
	}
	v, err := semver.StrictNewVersion(r.Target.Version)
	c, _ := semver.NewConstraint("^2026.8.0")
	if err != nil || !c.Check(v) {
		t.Errorf("resolved version %q does not satisfy the range", r.Target.Version)
	}
	if r.Target.Requested != "pkg:npm/%40modelcontextprotocol/server-filesystem@^2026.8.0" {
		t.Errorf("requested %q", r.Target.Requested)
	}
	if r.Sandbox.Outcome != "ok" {
		var full struct {
			Session any `json:"session"`
		}
		json.Unmarshal([]byte(res.stdout), &full)
		t.Errorf("outcome %s, session %+v", r.Sandbox.Outcome, full.Session)
	}
}

// TestBadTargetsLeaveNothing: typos and missing versions fail fast with
// their own exit codes and create nothing on the engine.
func TestBadTargetsLeaveNothing(t *testing.T) {
	var pids []int
	for _, tc := range []struct {
		target string
		code   int
	}{
		{"npm:@modelcontextprotocol/server-everythingg@2026.8.31", 3},
		{"npm:@modelcontextprotocol/server-everything@1999.1.1", 3},
		{"npm:@modelcontextprotocol/Server-Everything@1", 2},
	} {
		start := time.Now()
		res := verifymcp(t, nil, "scan", "--data-dir", t.TempDir(), tc.target)
		pids = append(pids, res.pid)
		if res.code != tc.code {
			t.Errorf("%s: exit %d, want %d (%s)", tc.target, res.code, tc.code, res.stderr)
		}
		lines := strings.Split(strings.TrimSpace(res.stderr), "\n")
		if n := strings.Count(res.stderr, "verifymcp: "); n != 1 || !strings.HasPrefix(lines[len(lines)-1], "verifymcp: ") {
			t.Errorf("%s: want one error line, last on stderr; got %q", tc.target, res.stderr)
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("%s: took %s to fail", tc.target, d)
		}
	}
	res := verifymcp(t, []string{"VERIFYMCP_NPM_REGISTRY=http://127.0.0.1:9/"}, "scan", "--data-dir", t.TempDir(), "npm:left-pad@1.3.0")
	pids = append(pids, res.pid)
	if res.code != 4 {
		t.Errorf("unreachable registry: exit %d (%s)", res.code, res.stderr)
	}
	// Other test packages use the engine concurrently: look only for
	// objects owned by the scans this test ran.
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
				t.Errorf("a failed scan (pid %d) left %s %s", pid, o.Kind, o.Name)
			}
		}
	}
}

// TestEngineMissing: no engine is an infrastructure failure with its own
// exit code, for scan and doctor alike.
func TestEngineMissing(t *testing.T) {
	env := []string{"DOCKER_HOST=unix:///nonexistent/docker.sock"}
	for _, args := range [][]string{
		{"scan", "--data-dir", t.TempDir(), "npm:@modelcontextprotocol/server-everything@2026.8.31"},
		{"sandbox", "doctor"},
		{"sandbox", "prune"},
	} {
		res := verifymcp(t, env, args...)
		if res.code != 5 || !strings.Contains(res.stderr, "Docker engine not reachable") {
			t.Errorf("%v: exit %d %q", args, res.code, res.stderr)
		}
	}
}

func TestDoctorAndPrune(t *testing.T) {
	res := verifymcp(t, nil, "sandbox", "doctor")
	if res.code != 0 {
		t.Fatalf("doctor exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	for _, w := range []string{"engine:", "api version:", "image:", image.Ref(), "ca bundle:", "ca-certificates.crt", "leftovers:"} {
		if !strings.Contains(res.stdout, w) {
			t.Errorf("doctor output lacks %q:\n%s", w, res.stdout)
		}
	}
	// A leftover of a crashed run (its owner process is gone) and an object
	// of a live run (this test process).
	cli, err := sandbox.NewClient()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	host, _ := os.Hostname()
	dead := fmt.Sprintf("test-dead-%d", time.Now().UnixNano())
	live := fmt.Sprintf("test-live-%d", time.Now().UnixNano())
	mk := func(run, owner string) {
		_, err := cli.VolumeCreate(context.Background(), volumeOpts("verifymcp-"+run, map[string]string{sandbox.LabelRun: run, sandbox.LabelOwner: owner}))
		if err != nil {
			t.Fatal(err)
		}
	}
	mk(dead, host+"/999999999")
	mk(live, fmt.Sprintf("%s/%d", host, os.Getpid()))
	defer cli.VolumeRemove(context.Background(), "verifymcp-"+live, true)
	res = verifymcp(t, nil, "sandbox", "doctor")
	if !strings.Contains(res.stdout, "verifymcp-"+dead) || !strings.Contains(res.stdout, "leftover (owner gone)") {
		t.Errorf("doctor does not list the leftover:\n%s", res.stdout)
	}
	res = verifymcp(t, nil, "sandbox", "prune")
	if res.code != 0 {
		t.Fatalf("prune exit %d %s", res.code, res.stderr)
	}
	if _, err := cli.VolumeInspect(context.Background(), "verifymcp-"+dead); err == nil {
		t.Error("prune left the dead run's volume")
	}
	if _, err := cli.VolumeInspect(context.Background(), "verifymcp-"+live); err != nil {
		t.Error("prune removed a live run's volume")
	}
}

// TestInterruptCleansUp sends SIGINT while a server hangs in its handshake:
// the scan stops with exit 130 and leaves nothing on the engine.
func TestInterruptCleansUp(t *testing.T) {
	tgz := filepath.Join(t.TempDir(), "hang.tgz")
	writeHangFixture(t, tgz)
	cmd := exec.Command(binary, "scan", "--data-dir", t.TempDir(), "--handshake-timeout", "120s", "--discover-probe", "60s", tgz)
	cmd.Env = append(os.Environ(), "VERIFYMCP_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pruneOwnTrees(t, cmd.Process.Pid)
	cli, err := sandbox.NewClient()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	runID := ""
	deadline := time.Now().Add(90 * time.Second)
	for runID == "" && time.Now().Before(deadline) {
		l, _ := sandbox.Leftovers(context.Background(), cli)
		for _, o := range l {
			if o.Kind == "container" && strings.HasSuffix(o.Name, "-run") && strings.HasSuffix(o.Owner, fmt.Sprintf("/%d", cmd.Process.Pid)) {
				runID = o.RunID
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	if runID == "" {
		cmd.Process.Kill()
		t.Fatalf("the run container never appeared; stderr: %s", errb.String())
	}
	time.Sleep(500 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("exit after SIGINT: %v (stderr %s)", err, errb.String())
	}
	l, _ := sandbox.Leftovers(context.Background(), cli)
	for _, o := range l {
		if o.RunID == runID {
			t.Errorf("left behind: %s %s", o.Kind, o.Name)
		}
	}
}
