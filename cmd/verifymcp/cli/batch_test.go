package cli

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/pipeline"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/store"
	"github.com/verifymcp/verifymcp/supplychain"
)

// writeTarball writes a minimal npm tarball named name@1.0.0 and returns
// its SRI integrity.
func writeTarball(t *testing.T, path, name string) string {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	body := fmt.Sprintf(`{"name":%q,"version":"1.0.0","bin":{"s":"server.js"}}`, name)
	tw.WriteHeader(&tar.Header{Name: "package/package.json", Mode: 0o644, Size: int64(len(body)), ModTime: time.Unix(1e9, 0)})
	tw.Write([]byte(body))
	tw.Close()
	gz.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha512.Sum512(buf.Bytes())
	return "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
}

func TestParseBatch(t *testing.T) {
	dir := t.TempDir()
	writeTarball(t, filepath.Join(dir, "local.tgz"), "local-fx")
	file := filepath.Join(dir, "list.txt")
	tests := []struct {
		name string
		text string
		want []batchLine
		err  string // substring of the error; "" for none
	}{
		{
			name: "targets_comments_blanks_and_options",
			text: "# servers to scan\n\nnpm:left-pad@1.3.0\r\n  pkg:npm/%40scope/srv@2.0.0   # trailing comment\n" +
				"npm:@modelcontextprotocol/server-filesystem@2026.8.31 --arg /tmp --arg='two words' --env API_KEY=placeholder --bin mcp-fs\n" +
				"local.tgz\n",
			want: []batchLine{
				{Line: 3, Target: pipeline.Target{Raw: "npm:left-pad@1.3.0", Ecosystem: "npm", Name: "left-pad", Spec: "1.3.0"}},
				{Line: 4, Target: pipeline.Target{Raw: "pkg:npm/%40scope/srv@2.0.0", Ecosystem: "npm", Name: "@scope/srv", Spec: "2.0.0"}},
				{Line: 5, Target: pipeline.Target{Raw: "npm:@modelcontextprotocol/server-filesystem@2026.8.31", Ecosystem: "npm", Name: "@modelcontextprotocol/server-filesystem", Spec: "2026.8.31"},
					Bin: "mcp-fs", Args: []string{"/tmp", "two words"}, Env: map[string]string{"API_KEY": "placeholder"}},
				{Line: 6, Target: pipeline.Target{Raw: filepath.Join(dir, "local.tgz"), Ecosystem: "npm", File: filepath.Join(dir, "local.tgz")}},
			},
		},
		{name: "malformed_target_names_file_and_line", text: "npm:left-pad@1.3.0\nnpm:Left-Pad@1\n", err: file + ":2: invalid target"},
		{name: "every_malformed_line_is_counted", text: "npm:x@1 --nope\n\nhttps://example.com/mcp\nnpm:y@1 --arg\n", err: file + ":1: unknown option \"--nope\" (a line takes --bin NAME, --arg VALUE, --env NAME=VALUE) (and 2 more malformed lines: 3, 4)"},
		{name: "remote_endpoint_is_refused", text: "https://example.com/mcp\n", err: file + ":1: unsupported target"},
		{name: "option_before_target", text: "--arg x npm:y@1\n", err: file + ":1: \"--arg\": the target comes first"},
		{name: "option_without_value", text: "npm:y@1 --bin\n", err: ":1: --bin needs a value"},
		{name: "bin_twice", text: "npm:y@1 --bin a --bin b\n", err: ":1: --bin given twice"},
		{name: "env_without_equals", text: "npm:y@1 --env TOKEN\n", err: ":1: --env wants NAME=VALUE"},
		{name: "misspelt_option_does_not_echo_its_value", text: "npm:y@1 --evn=TOKEN=s3cret\n", err: ":1: unknown option \"--evn\""},
		{name: "unterminated_quote", text: "npm:y@1 --arg 'x\n", err: ":1: unterminated ' quote"},
		{name: "missing_tarball", text: "gone.tgz\n", err: ":1: invalid target: local tarball " + filepath.Join(dir, "gone.tgz")},
		{name: "no_target_at_all", text: "# nothing\n\n", err: file + ": no target"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseBatch([]byte(tt.text), file, dir)
			if tt.err != "" {
				var ue usageError
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.As(err, &ue) {
					t.Fatalf("parseBatch error = %v, want a usage error containing %q", err, tt.err)
				}
				if strings.Contains(err.Error(), "s3cret") {
					t.Errorf("the error echoes a value: %v", err)
				}
				if exitCode(err) != ExitUsage {
					t.Errorf("exit code %d, want %d", exitCode(err), ExitUsage)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(batchLine{})); diff != "" {
				t.Errorf("parseBatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSplitWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"   \t ", nil},
		{"# all comment", nil},
		{"a b\tc", []string{"a", "b", "c"}},
		{`a "b c" 'd "e"' f`, []string{"a", "b c", `d "e"`, "f"}},
		{`--arg=""`, []string{"--arg="}},
		{`""`, []string{""}},
		{"pkg:npm/x@1#sub # comment", []string{"pkg:npm/x@1#sub"}},
	}
	for _, tt := range tests {
		got, err := splitWords(tt.in)
		if err != nil {
			t.Errorf("splitWords(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("splitWords(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func ptrFloat(v float64) *float64 { return &v }

func TestSummarize(t *testing.T) {
	items := []*batchItem{
		{Status: batchCompleted, Outcome: "ok", PhasesMS: map[string]int64{"scan": 10_000, "install.fetch": 4_000}},
		{Status: batchCompleted, Outcome: "ok", PhasesMS: map[string]int64{"scan": 30_000, "install.fetch": 6_000}},
		{Status: batchFailed, Outcome: "start_crashed", PhasesMS: map[string]int64{"scan": 20_000}},
		{Status: batchFailed, Outcome: "not_found"},
		{Status: batchFailed, Outcome: "not_found"},
		{Status: batchSkipped, SkipReason: "stored", Outcome: "ok"},
		{Status: batchSkipped, SkipReason: "duplicate of line 1"},
		{Status: batchAbandoned, Outcome: "interrupted"},
		{Status: batchNotStarted},
	}
	totals, failed, phases, perHour := summarize(items, 30*time.Minute)
	if diff := cmp.Diff(batchTotals{Targets: 9, Completed: 2, Failed: 3, Skipped: 2, Abandoned: 1, NotStarted: 1, Scanned: 3}, totals); diff != "" {
		t.Errorf("totals (-want +got):\n%s", diff)
	}
	if totals.Targets != totals.Completed+totals.Failed+totals.Skipped+totals.Abandoned+totals.NotStarted {
		t.Errorf("totals do not add up: %+v", totals)
	}
	if diff := cmp.Diff(map[string]int{"start_crashed": 1, "not_found": 2}, failed); diff != "" {
		t.Errorf("failed by outcome (-want +got):\n%s", diff)
	}
	wantPhases := map[string]phaseStat{
		"scan":          {N: 3, MedianMS: 20_000, TotalMS: 60_000},
		"install.fetch": {N: 2, MedianMS: 4_000, TotalMS: 10_000},
	}
	if diff := cmp.Diff(wantPhases, phases); diff != "" {
		t.Errorf("phases (-want +got):\n%s", diff)
	}
	if perHour != 6 {
		t.Errorf("packages per hour = %v, want 6 (3 scans in 30 minutes)", perHour)
	}
	if _, _, _, ph := summarize(nil, 0); ph != 0 {
		t.Errorf("empty batch: %v packages per hour", ph)
	}
}

func TestBatchPhases(t *testing.T) {
	exit := 0
	b := &evidence.Bundle{
		Signals: map[string]evidence.Signal{
			evidence.SignalRegistry: {State: evidence.StateObserved, DurationMS: 300},
			evidence.SignalOSV:      {State: evidence.StateUnavailable, DurationMS: 1_000},
			evidence.SignalJudge:    {State: evidence.StateNotAssessed},
		},
		Install:  &evidence.Install{FetchMS: 4_000, ScriptsMS: 500},
		Session:  &evidence.Session{StartMS: 1_000, HandshakeMS: 1_800, ListMS: 200, ExitCode: &exit},
		Behavior: &evidence.Behavior{Watches: []evidence.Watch{{Phase: evidence.PhaseRun, IdleMS: 2_000}}},
	}
	got := batchPhases(b, 10*time.Second, 50*time.Millisecond)
	want := map[string]int64{
		"scan": 10_000, "save": 50, "resolve": 300,
		"install.fetch": 4_000, "install.scripts": 500,
		"session.start": 1_000, "session.handshake": 800, "session.list": 200, "session.idle": 2_000,
		// socket, github and dnssec are missing from the bundle: an error
		// state, which still ran for 0 ms; the judge was not assessed.
		"osv": 1_000, "socket": 0, "github": 0, "dnssec": 0,
		"other": 10_000 - 4_000 - 500 - 1_800 - 200 - 2_000,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("batchPhases (-want +got):\n%s", diff)
	}
	// A package that failed to install has no session.
	got = batchPhases(&evidence.Bundle{Install: &evidence.Install{FetchMS: 3_000}}, 5*time.Second, 0)
	if got["other"] != 2_000 || got["session.start"] != 0 {
		t.Errorf("install failure phases: %v", got)
	}
}

func TestErrorOutcome(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{fmt.Errorf("x: %w", supplychain.ErrPackageNotFound), "not_found"},
		{fmt.Errorf("x: %w", supplychain.ErrVersionNotFound), "not_found"},
		{fmt.Errorf("x: %w", supplychain.ErrRegistryUnreachable), "registry_unreachable"},
		{fmt.Errorf("x: %w", sandbox.ErrBadBin), "bad_bin"},
		{fmt.Errorf("%w: create volume", pipeline.ErrSandbox), "engine_error"},
		{engineError{errors.New("down")}, "engine_error"},
		{fmt.Errorf("scan: %w", context.Canceled), "interrupted"},
		{errors.New("something else"), "error"},
	}
	for _, tt := range tests {
		if got := errorOutcome(tt.err); got != tt.want {
			t.Errorf("errorOutcome(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

func TestBatchETAAndBar(t *testing.T) {
	if _, ok := batchETA(0, 10, time.Minute); ok {
		t.Error("an ETA before any scan finished")
	}
	// 2 scans in 1 minute, 8 left: 4 minutes.
	if eta, ok := batchETA(2, 10, time.Minute); !ok || eta != 4*time.Minute {
		t.Errorf("ETA = %v, %v; want 4m", eta, ok)
	}
	tests := []struct {
		done, total, failed, skipped, running int
		eta                                   time.Duration
		ok                                    bool
		want                                  string
	}{
		{7, 15, 1, 2, 0, 80 * time.Second, true, "[#########...........] 7/15 done (1 failed, 2 skipped) ETA 1m20s"},
		{3, 15, 0, 3, 2, 0, false, "[####................] 3/15 done (0 failed, 3 skipped) 2 running ETA --"},
		{15, 15, 0, 0, 0, 0, true, "[####################] 15/15 done (0 failed, 0 skipped)"},
	}
	for _, tt := range tests {
		if got := renderBar(tt.done, tt.total, tt.failed, tt.skipped, tt.running, tt.eta, tt.ok); got != tt.want {
			t.Errorf("renderBar = %q\n         want %q", got, tt.want)
		}
	}
}

func TestBatchProgress(t *testing.T) {
	t.Run("plain_lines_per_target", func(t *testing.T) {
		var buf bytes.Buffer
		p := newBatchProgress(&buf, false, false)
		p.begin(2)
		p.finish(&batchItem{Target: "npm:a@1.0.0", Name: "a", Version: "1.0.0", Status: batchSkipped, SkipReason: "stored", Outcome: "ok", RunID: "r1", Score: ptrFloat(71.5)}, false)
		p.Write([]byte("a log line\n"))
		p.finish(&batchItem{Target: "npm:b@latest", Name: "b", Version: "2.0.0", Status: batchFailed, Outcome: "start_crashed", RunID: "r2", PhasesMS: map[string]int64{"scan": 1500}}, true)
		p.close()
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		if len(lines) != 3 || strings.Contains(buf.String(), "\r") {
			t.Fatalf("want 3 plain lines, got %q", buf.String())
		}
		if !strings.HasSuffix(lines[0], "1/2 skipped npm:a@1.0.0 outcome=ok score=71.5 reason=stored run=r1") {
			t.Errorf("line 1: %q", lines[0])
		}
		if lines[1] != "a log line" {
			t.Errorf("line 2: %q", lines[1])
		}
		if !strings.HasSuffix(lines[2], "2/2 failed npm:b@latest (b@2.0.0) outcome=start_crashed run=r2 took=1.5s") {
			t.Errorf("line 3: %q", lines[2])
		}
	})
	t.Run("bar_redrawn_under_log_lines", func(t *testing.T) {
		var buf bytes.Buffer
		p := newBatchProgress(&buf, true, false)
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		p.now = func() time.Time { return now }
		p.begin(2)
		p.scanning(2)
		p.scanStart = now.Add(-30 * time.Second)
		p.started()
		p.Write([]byte("warning: something\n"))
		p.finish(&batchItem{Status: batchCompleted, PhasesMS: map[string]int64{}}, true)
		p.close()
		out := buf.String()
		// Each redraw first erases the bar; a log line is printed on a
		// clean line and the bar comes back under it.
		if !strings.Contains(out, "\r\x1b[Kwarning: something\n[....................] 0/2 done (0 failed, 0 skipped) 1 running ETA --") {
			t.Errorf("log line not printed over an erased bar: %q", out)
		}
		// One scan in 30 s, one left.
		if !strings.HasSuffix(out, "\r\x1b[K[##########..........] 1/2 done (0 failed, 0 skipped) ETA 30s\n") {
			t.Errorf("final bar: %q", out)
		}
		if strings.Contains(out, "completed ") {
			t.Errorf("plain lines on a terminal: %q", out)
		}
	})
	t.Run("quiet_shows_nothing", func(t *testing.T) {
		var buf bytes.Buffer
		p := newBatchProgress(&buf, true, true)
		p.begin(1)
		p.finish(&batchItem{Status: batchCompleted}, false)
		p.close()
		if buf.Len() != 0 {
			t.Errorf("quiet progress wrote %q", buf.String())
		}
	})
}

func TestRunWorkersStopsOnDrain(t *testing.T) {
	items := make([]*batchItem, 10)
	for i := range items {
		items[i] = &batchItem{Line: i + 1}
	}
	drain := make(chan struct{})
	var started, finished atomic.Int32
	var once sync.Once
	release := make(chan struct{})
	runWorkers(context.Background(), drain, 3, items, func(ctx context.Context, it *batchItem) {
		started.Add(1)
		if it.Line == 1 {
			// The first interrupt comes while three scans are in flight.
			once.Do(func() {
				for started.Load() < 3 {
					time.Sleep(time.Millisecond)
				}
				close(drain)
				close(release)
			})
		}
		<-release
		it.Status = batchCompleted
		finished.Add(1)
	})
	if s, f := started.Load(), finished.Load(); s != 3 || f != 3 {
		t.Errorf("started %d, finished %d; want the 3 in flight finished and nothing new started", s, f)
	}
	for _, it := range items[3:] {
		if it.Status != "" {
			t.Errorf("line %d ran after the drain", it.Line)
		}
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
	var sum batchSummary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(batchTotals{Targets: 3, Failed: 1, Skipped: 2}, sum.Totals); diff != "" {
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
	if sum.Targets[0].Score == nil || *sum.Targets[0].Score != *res.Score || sum.RubricVersion != rubric.CurrentVersion || sum.SchemaVersion != BatchSchemaVersion {
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
