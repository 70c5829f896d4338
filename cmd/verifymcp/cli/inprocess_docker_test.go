//go:build docker

package cli_test

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"

	"github.com/verifymcp/verifymcp/cmd/verifymcp/cli"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/store"
)

// These tests run cli.Run in this process, so that the exit code, the
// store and the engine can be looked at around one command. The helper
// and observer containers then run this test binary (see TestMain), which
// must be static: run them with CGO_ENABLED=0, as make test does.

const (
	caBundle = "/etc/ssl/certs/ca-certificates.crt"
	// A small real MCP server from the npm registry.
	memoryServer = "npm:@modelcontextprotocol/server-memory@2026.8.31"
	// The sandbox's network checks are what these tests are about; the
	// third parties are out of reach here anyway.
	skipThirdParties = "osv,socket,github,dnssec,judge"
)

// inProcess isolates a cli.Run from the environment of the test process
// (make test exports VERIFYMCP_CA_BUNDLE; an operator may have a config
// file): no CA bundle unless a test passes --ca-bundle.
func inProcess(t *testing.T) {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"VERIFYMCP_CONFIG": cfg, "VERIFYMCP_CA_BUNDLE": "", "VERIFYMCP_NPM_REGISTRY": "", "VERIFYMCP_DATABASE_URL": "", "VERIFYMCP_DATA_DIR": ""} {
		t.Setenv(k, v)
	}
}

// needStatic fails a test that would start containers from a dynamically
// linked test binary, with the fix.
func needStatic(t *testing.T) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("this test runs the test binary in the helper containers and needs it static: run it with CGO_ENABLED=0 (make test does)")
		}
	}
}

// runCLI runs the command line in this process.
func runCLI(t *testing.T, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Run(context.Background(), args, &out, &errb)
	return result{code, out.String(), errb.String(), os.Getpid()}
}

// lastLine is the last line of stderr: the error line of a failed command.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// storedRuns counts the runs in a data directory's store, and the bundle
// files beside it.
func storedRuns(t *testing.T, data string) (runs, bundles int) {
	t.Helper()
	st, err := store.Open(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rs, err := st.Runs(context.Background(), store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join(data, "bundles"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return len(rs), len(entries)
}

// engineEvents returns the container, network, volume and image events the
// engine saw between since and until.
func engineEvents(t *testing.T, ec *client.Client, since, until time.Time) []events.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f := filters.NewArgs()
	for _, typ := range []events.Type{events.ContainerEventType, events.NetworkEventType, events.VolumeEventType, events.ImageEventType} {
		f.Add("type", string(typ))
	}
	ts := func(tm time.Time) string { return fmt.Sprintf("%d.%09d", tm.Unix(), tm.Nanosecond()) }
	msgs, errs := ec.Events(ctx, events.ListOptions{Since: ts(since), Until: ts(until), Filters: f})
	var got []events.Message
	for {
		select {
		case m := <-msgs:
			got = append(got, m)
		case err := <-errs:
			if err != nil && !errors.Is(err, io.EOF) {
				t.Fatalf("engine events: %v", err)
			}
			return got
		}
	}
}

// ours tells whether an engine event concerns an object this process made
// (or its helper image): other test packages and other sessions use the
// same engine at the same time, and their events are not this test's.
// Networks and volumes carry their labels only on the object, so they are
// inspected; one already removed cannot be told apart and is left out,
// but no sandbox run creates a network or a volume without first starting
// a container carrying its owner label.
func ours(ctx context.Context, ec *client.Client, m events.Message, owner, helperRef string) bool {
	switch m.Type {
	case events.ContainerEventType:
		return m.Actor.Attributes[sandbox.LabelOwner] == owner
	case events.ImageEventType:
		name := m.Actor.Attributes["name"]
		return name == helperRef || m.Actor.ID == helperRef || strings.HasPrefix(name, "verifymcp-sandbox:") || strings.HasPrefix(name, "verifymcp-base:")
	case events.NetworkEventType:
		n, err := ec.NetworkInspect(ctx, m.Actor.ID, network.InspectOptions{})
		return err == nil && n.Labels[sandbox.LabelOwner] == owner
	case events.VolumeEventType:
		v, err := ec.VolumeInspect(ctx, m.Actor.ID)
		return err == nil && v.Labels[sandbox.LabelOwner] == owner
	}
	return false
}

// TestBadInputTouchesNoEngine holds the README's promise: bad input fails
// before anything touches the engine, with its own exit code. It watches
// the engine's event stream while cli.Run scans a typo'd package, a
// version that does not exist, a file that is no tarball and a report path
// that cannot be written, and runs batch with a malformed list, a bad -o
// and a list of targets that do not resolve, and cases run with a bad -o:
// no container, network, volume or image of this process may appear.
func TestBadInputTouchesNoEngine(t *testing.T) {
	inProcess(t)
	ec, err := sandbox.NewClient()
	if err != nil {
		t.Fatal(err)
	}
	defer ec.Close()
	host, _ := os.Hostname()
	owner := fmt.Sprintf("%s/%d", host, os.Getpid())
	exe, _ := os.Executable()
	helperRef := ""
	if h, err := sandbox.LoadHelper(exe); err == nil {
		helperRef = h.Ref
	}

	dir := t.TempDir()
	broken := filepath.Join(dir, "broken-1.0.0.tgz")
	if err := os.WriteFile(broken, []byte("this is not a gzip tarball\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	unwritable := filepath.Join(dir, "ro")
	if err := os.Mkdir(unwritable, 0o500); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		unwritable = "/proc" // root writes through mode bits
	}
	malformed := filepath.Join(dir, "malformed.txt")
	good := filepath.Join(dir, "good.txt")
	typos := filepath.Join(dir, "typos.txt")
	for path, body := range map[string]string{
		malformed: memoryServer + "\nnpm:@modelcontextprotocol/server-memory@2026.8.31 --frobnicate\n",
		good:      memoryServer + "\n",
		typos:     "npm:@modelcontextprotocol/server-memroy@2026.8.31\nnpm:@modelcontextprotocol/server-memory@1999.1.1\n",
	} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A corpus of one case whose target was never published.
	corpus := filepath.Join(dir, "corpus")
	if err := os.MkdirAll(filepath.Join(corpus, "cases", "reviewed"), 0o700); err != nil {
		t.Fatal(err)
	}
	caseYAML := fmt.Sprintf(`id: memory-unpublished
kind: reviewed
track: package
target: npm:@modelcontextprotocol/server-memory@1999.1.1
reviewer: pending
provenance: a version that was never published
rubric_version: %q
scope:
  - pkg.session.
expected: []
statement: none
disputes: []
`, rubric.CurrentVersion)
	if err := os.WriteFile(filepath.Join(corpus, "cases", "reviewed", "memory-unpublished.yaml"), []byte(caseYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	scan := func(args ...string) []string {
		return append([]string{"scan", "--ca-bundle", caBundle, "--skip", skipThirdParties}, args...)
	}
	batch := func(args ...string) []string {
		return append([]string{"batch", "--ca-bundle", caBundle, "--skip", skipThirdParties}, args...)
	}
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"a typo'd package name", scan("npm:@modelcontextprotocol/server-memroy@2026.8.31"), 3, "not found"},
		{"a version that does not exist", scan("npm:@modelcontextprotocol/server-memory@1999.1.1"), 3, "1999.1.1"},
		{"a file that is no tarball", scan(broken), 2, "not a gzip tarball"},
		{"-o in a directory that does not exist", scan("-o", filepath.Join(dir, "nodir", "report.json"), memoryServer), 2, "--output"},
		{"-o in a directory that cannot be written", scan("-o", filepath.Join(unwritable, "report.json"), memoryServer), 2, "cannot write in"},
		{"-o naming a directory", scan("-o", dir, memoryServer), 2, "is a directory"},
		{"batch of a malformed list", batch(malformed), 2, "malformed.txt:2"},
		{"batch with -o in a directory that does not exist", batch("-o", filepath.Join(dir, "nodir", "summary.json"), good), 2, "--output"},
		{"batch of targets that do not resolve", batch(typos), 3, "could not be scanned"},
		{"cases run with -o in a directory that does not exist", []string{"cases", "run", "--corpus", "../../../benchmark",
			"--ca-bundle", caBundle, "--skip", skipThirdParties, "-o", filepath.Join(dir, "nodir", "cases.json")}, 2, "--output"},
		// The case is reported as not compared, with why; the run completes.
		{"cases run of a case whose target does not resolve", []string{"cases", "run", "--corpus", corpus, "--ca-bundle", caBundle, "--skip", skipThirdParties}, 0, ""},
	}
	// The watcher itself: an object this process makes is seen as ours.
	t.Run("control: a volume of this process is seen", func(t *testing.T) {
		since := time.Now()
		name := fmt.Sprintf("verifymcp-eventcheck-%d", time.Now().UnixNano())
		if _, err := ec.VolumeCreate(context.Background(), volumeOpts(name, map[string]string{sandbox.LabelRun: "eventcheck", sandbox.LabelOwner: owner})); err != nil {
			t.Fatal(err)
		}
		defer ec.VolumeRemove(context.Background(), name, true)
		until := time.Now().Add(200 * time.Millisecond)
		time.Sleep(time.Until(until))
		seen := false
		for _, m := range engineEvents(t, ec, since, until) {
			seen = seen || (ours(context.Background(), ec, m, owner, helperRef) && m.Actor.ID == name)
		}
		if !seen {
			t.Fatalf("the event watcher did not see volume %s being created", name)
		}
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A data directory of its own: nothing stored by another case
			// (as a scan whose report could not be written once was) makes
			// this one skip its work.
			args := append([]string{"--data-dir", t.TempDir()}, tt.args...)
			since := time.Now()
			res := runCLI(t, args...)
			until := time.Now().Add(200 * time.Millisecond)
			if res.code != tt.code {
				t.Errorf("exit %d, want %d\n%s", res.code, tt.code, res.stderr)
			}
			if last := lastLine(res.stderr); tt.msg != "" && (!strings.HasPrefix(last, "verifymcp: ") || !strings.Contains(last, tt.msg)) {
				t.Errorf("error line %q, want one mentioning %q", last, tt.msg)
			}
			time.Sleep(time.Until(until))
			var seen []string
			for _, m := range engineEvents(t, ec, since, until) {
				if ours(context.Background(), ec, m, owner, helperRef) {
					seen = append(seen, fmt.Sprintf("%s %s %s", m.Type, m.Action, m.Actor.Attributes["name"]))
				}
			}
			if len(seen) > 0 {
				t.Errorf("the engine saw %d events of this process during a command that had to fail first, among them: %s", len(seen), strings.Join(seen[:min(len(seen), 4)], "; "))
			}
			if entries, err := os.ReadDir(filepath.Join(dir, "nodir")); err == nil {
				t.Errorf("a failed command created the -o directory: %v", entries)
			}
		})
	}
}

// TestEnvironmentFaultIsNotAVerdict: without the CA bundle behind this
// machine's TLS-intercepting proxy the sandbox cannot verify the
// registry. The scan exits 4 with the cause and the fix on one line,
// stores no run and no bundle, and leaves nothing on the engine; a batch
// over a list holding the target fails it the same way (stopping there)
// and stores nothing, so the batch run with the CA bundle scans it, and
// then stores it.
func TestEnvironmentFaultIsNotAVerdict(t *testing.T) {
	inProcess(t)
	needStatic(t)
	data := t.TempDir()
	const fix = "pass --ca-bundle (or VERIFYMCP_CA_BUNDLE) with the proxy's CA"

	// The test's own tree-cache namespace: a tree of the release in the
	// engine's cache (a machine that has scanned it) would be mounted
	// without any fetch, rightly, and there would be no fault to see.
	ownTreeCache(t)
	const target = "npm:@modelcontextprotocol/server-memory@2026.7.4"
	res := runCLI(t, "scan", "--data-dir", data, "--skip", skipThirdParties, "--format", "json", target)
	if res.code != cli.ExitRegistry {
		t.Fatalf("scan without the CA bundle: exit %d, want %d\n%s", res.code, cli.ExitRegistry, res.stderr)
	}
	last := lastLine(res.stderr)
	if strings.Count(res.stderr, "verifymcp: ") != 1 || !strings.HasPrefix(last, "verifymcp: ") || !strings.Contains(last, "TLS certificate") || !strings.HasSuffix(last, fix) {
		t.Errorf("want one error line naming TLS and ending with the fix; stderr:\n%s", res.stderr)
	}
	if res.stdout != "" {
		t.Errorf("a report was printed for an environment fault:\n%.300s", res.stdout)
	}
	if runs, bundles := storedRuns(t, data); runs != 0 || bundles != 0 {
		t.Errorf("the fault was stored: %d runs, %d bundle files", runs, bundles)
	}
	noLeftovers(t, os.Getpid())

	list := filepath.Join(t.TempDir(), "servers.txt")
	if err := os.WriteFile(list, []byte("# servers to vet\n"+target+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	batch := func(extra ...string) (result, batchSummaryJSON) {
		t.Helper()
		// No behaviour capture: the fetch step is what this is about.
		args := append([]string{"batch", "--data-dir", data, "--skip", skipThirdParties, "--format", "json", "--no-behavior"}, extra...)
		res := runCLI(t, append(args, list)...)
		var sum batchSummaryJSON
		if err := json.Unmarshal([]byte(res.stdout), &sum); err != nil || len(sum.Targets) != 1 {
			t.Fatalf("batch summary: %v\n%s\n%s", err, res.stdout, res.stderr)
		}
		return res, sum
	}
	res, sum := batch()
	if res.code != cli.ExitRegistry || sum.Targets[0].Status != "failed" || sum.Targets[0].Outcome != string(sandbox.FaultTLS) || sum.Totals.Scanned != 0 {
		t.Errorf("batch without the CA bundle: exit %d, target %+v, scanned %d; want exit 4, failed with outcome %s, nothing scanned\n%s",
			res.code, sum.Targets[0], sum.Totals.Scanned, sandbox.FaultTLS, res.stderr)
	}
	if !strings.HasSuffix(lastLine(res.stderr), fix) {
		t.Errorf("batch error line lacks the fix: %q", lastLine(res.stderr))
	}
	if runs, bundles := storedRuns(t, data); runs != 0 || bundles != 0 {
		t.Errorf("the batch stored the fault: %d runs, %d bundle files", runs, bundles)
	}

	res, sum = batch("--ca-bundle", caBundle)
	if res.code != cli.ExitOK || sum.Targets[0].Status != "completed" || sum.Targets[0].RunID == "" {
		t.Fatalf("batch with the CA bundle: exit %d, target %+v; want it scanned again and completed\n%s", res.code, sum.Targets[0], res.stderr)
	}
	if runs, bundles := storedRuns(t, data); runs != 1 || bundles != 1 {
		t.Errorf("after the batch with the CA bundle: %d runs, %d bundle files; want 1 and 1", runs, bundles)
	}
	noLeftovers(t, os.Getpid())
}

// TestBatchRescan: a batch run again skips what is stored; with --rescan
// it scans every target again and saves the new runs beside the old.
func TestBatchRescan(t *testing.T) {
	inProcess(t)
	needStatic(t)
	dir := t.TempDir()
	list, names := batchFixtures(t, dir, 2)
	data := filepath.Join(dir, "data")
	batch := func(extra ...string) batchSummaryJSON {
		t.Helper()
		args := []string{"batch", "--data-dir", data, "--concurrency", "2", "--format", "json", "--no-behavior", "--skip", skipThirdParties,
			"--handshake-timeout", "20s", "--ca-bundle", caBundle}
		res := runCLI(t, append(append(args, extra...), list)...)
		var sum batchSummaryJSON
		if err := json.Unmarshal([]byte(res.stdout), &sum); err != nil || res.code != cli.ExitOK {
			t.Fatalf("batch %v: exit %d, %v\n%s", extra, res.code, err, res.stderr)
		}
		return sum
	}
	first := batch()
	if first.Totals.Scanned != 2 {
		t.Fatalf("first batch scanned %d, want 2: %+v", first.Totals.Scanned, first.Totals)
	}
	if again := batch(); again.Totals.Skipped != 2 || again.Totals.Scanned != 0 {
		t.Errorf("the same batch again: %+v, want both skipped", again.Totals)
	}
	re := batch("--rescan")
	if re.Totals.Scanned != 2 || re.Totals.Skipped != 0 {
		t.Errorf("--rescan: %+v, want both scanned again", re.Totals)
	}
	for i, tg := range re.Targets {
		if tg.RunID == "" || tg.RunID == first.Targets[i].RunID || tg.SkipReason != "" {
			t.Errorf("--rescan target %s: run %q (first run %q), skip %q; want a new run", tg.Name, tg.RunID, first.Targets[i].RunID, tg.SkipReason)
		}
	}
	got := runsPerTarget(t, data)
	for _, n := range names {
		if got[n] != 2 {
			t.Errorf("%s: %d stored runs, want 2 (the first and the rescan)", n, got[n])
		}
	}
	noLeftovers(t, os.Getpid())
}

// TestBatchStartsObserversAhead: the targets of a batch resolve as it
// goes, and each scan after the first still finds its observer started
// ahead of it by the pool (one "prewarm" each: the prepared session's for
// the first scan, the pool's for the others), and none is left over.
func TestBatchStartsObserversAhead(t *testing.T) {
	inProcess(t)
	needStatic(t)
	dir := t.TempDir()
	list, _ := batchFixtures(t, dir, 3)
	res := runCLI(t, "-v", "batch", "--data-dir", filepath.Join(dir, "data"), "--concurrency", "2", "--format", "json", "--idle", "200ms",
		"--skip", skipThirdParties, "--handshake-timeout", "20s", "--ca-bundle", caBundle, list)
	var sum batchSummaryJSON
	if err := json.Unmarshal([]byte(res.stdout), &sum); err != nil || res.code != cli.ExitOK || sum.Totals.Scanned != 3 {
		t.Fatalf("batch: exit %d, %v, %+v\n%s", res.code, err, sum.Totals, res.stderr)
	}
	if n := strings.Count(res.stderr, " prewarm after="); n != 3 {
		t.Errorf("%d observers started ahead for 3 scans, want 3:\n%s", n, res.stderr)
	}
	noLeftovers(t, os.Getpid())
}

// TestDoctorFetchCheck: the doctor fetches a small real package through
// the sandbox's fetch path; with the CA bundle it says so and exits 0,
// without it it names the TLS fault and the fix and exits 4.
func TestDoctorFetchCheck(t *testing.T) {
	inProcess(t)
	needStatic(t)
	res := runCLI(t, "sandbox", "doctor", "--ca-bundle", caBundle)
	if res.code != cli.ExitOK || !strings.Contains(res.stdout, "fetch check:  ok: is-number@7.0.0") || !strings.Contains(res.stdout, "integrity matched") {
		t.Errorf("doctor with the CA bundle: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res = runCLI(t, "sandbox", "doctor")
	line := ""
	for _, l := range strings.Split(res.stdout, "\n") {
		if strings.HasPrefix(l, "fetch check:") {
			line = l
		}
	}
	if res.code != cli.ExitRegistry || !strings.Contains(line, "FAILED is-number@7.0.0") || !strings.Contains(line, "TLS certificate") ||
		!strings.HasSuffix(line, "pass --ca-bundle (or VERIFYMCP_CA_BUNDLE) with the proxy's CA") {
		t.Errorf("doctor without the CA bundle: exit %d, fetch check line %q\n%s%s", res.code, line, res.stdout, res.stderr)
	}
	noLeftovers(t, os.Getpid())
}

// TestBatchSARIFAndGate: a batch writes the findings of every target's run
// as one SARIF file, and --fail-on gates the whole batch: the file is
// written either way, and the exit code says whether a target tripped it.
func TestBatchSARIFAndGate(t *testing.T) {
	inProcess(t)
	needStatic(t)
	dir := t.TempDir()
	list, names := batchFixtures(t, dir, 2)
	data := filepath.Join(dir, "data")
	out := filepath.Join(dir, "batch.sarif")
	args := []string{"batch", "--data-dir", data, "--format", "sarif", "-o", out, "--no-behavior", "--skip", skipThirdParties,
		"--handshake-timeout", "20s", "--ca-bundle", caBundle}
	res := runCLI(t, append(args, list)...)
	if res.code != cli.ExitOK {
		t.Fatalf("batch --format sarif: exit %d\n%s", res.code, res.stderr)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Version string `json:"version"`
		Runs    []struct {
			Results []struct {
				RuleID string `json:"ruleId"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || doc.Version != "2.1.0" || len(doc.Runs) != 1 || len(doc.Runs[0].Results) == 0 {
		t.Fatalf("SARIF: %v, version %q, %d runs", err, doc.Version, len(doc.Runs))
	}
	for _, n := range names {
		if !strings.Contains(string(raw), n) {
			t.Errorf("the SARIF file does not name %s", n)
		}
	}
	// The targets are stored: the gate reads their runs without scanning.
	res = runCLI(t, append(append(args, "--fail-on", "info"), list)...)
	if res.code != cli.ExitUsage {
		t.Errorf("--fail-on info: exit %d, want 2", res.code)
	}
	res = runCLI(t, append(append(args, "--fail-on", "low"), list)...)
	if res.code != cli.ExitGate || !strings.Contains(res.stderr, "--fail-on: ") {
		t.Errorf("--fail-on low: exit %d, want 1 with the findings listed\n%s", res.code, res.stderr)
	}
	noLeftovers(t, os.Getpid())
}

// ownTreeCache gives t's in-process scans a tree-cache namespace of
// their own, so that what they fetch does not depend on what the engine's
// cache holds; the volumes cached in it are removed when t ends, and no
// other.
func ownTreeCache(t *testing.T) {
	t.Helper()
	host, _ := os.Hostname()
	ns := fmt.Sprintf("test %s %s/%d %d", t.Name(), host, os.Getpid(), time.Now().UnixNano())
	t.Cleanup(func() {
		ec, err := sandbox.NewClient()
		if err != nil {
			t.Error(err)
			return
		}
		defer ec.Close()
		if _, err := sandbox.PruneTreeNamespace(context.Background(), ec, "", ns); err != nil {
			t.Errorf("remove the trees cached in the test's namespace: %v", err)
		}
	})
	cli.SetTreeCacheNamespace(t, ns)
}

// TestBatchPyPIResume: a batch takes a PyPI target beside an npm one (it
// stopped with "resume lookup: ... integrity ... required" when the resume
// key assumed npm), and the same batch again finds both stored: a PyPI
// release is matched by the digest of whichever of its files the scan took.
func TestBatchPyPIResume(t *testing.T) {
	inProcess(t)
	needStatic(t)
	dir := t.TempDir()
	list := filepath.Join(dir, "servers.txt")
	if err := os.WriteFile(list, []byte("pypi:mcp-server-calculator==0.2.1\nnpm:@modelcontextprotocol/server-everything@2025.9.25\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	batch := func() batchSummaryJSON {
		t.Helper()
		res := runCLI(t, "batch", "--data-dir", data, "--format", "json", "--no-behavior", "--skip", skipThirdParties,
			"--handshake-timeout", "20s", "--ca-bundle", caBundle, list)
		var sum batchSummaryJSON
		if err := json.Unmarshal([]byte(res.stdout), &sum); err != nil || res.code != cli.ExitOK {
			t.Fatalf("batch: exit %d, %v\n%s%s", res.code, err, res.stdout, res.stderr)
		}
		return sum
	}
	first := batch()
	if first.Totals.Scanned != 2 || len(first.Targets) != 2 || first.Targets[0].RunID == "" {
		t.Fatalf("first batch: %+v %+v, want both scanned", first.Totals, first.Targets)
	}
	again := batch()
	if again.Totals.Skipped != 2 || again.Totals.Scanned != 0 || again.Targets[0].RunID != first.Targets[0].RunID {
		t.Errorf("the same batch again: %+v %+v, want both skipped with the first runs", again.Totals, again.Targets)
	}
	noLeftovers(t, os.Getpid())
}
