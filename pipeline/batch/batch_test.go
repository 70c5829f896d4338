package batch

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/internal/testnpm"
	"github.com/verifymcp/verifymcp/pipeline"
	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/supplychain"
)

// writeTarball is testnpm.Tarball.
func writeTarball(t *testing.T, path, name string) string { return testnpm.Tarball(t, path, name) }

func TestParseBatch(t *testing.T) {
	dir := t.TempDir()
	writeTarball(t, filepath.Join(dir, "local.tgz"), "local-fx")
	file := filepath.Join(dir, "list.txt")
	tests := []struct {
		name string
		text string
		want []Line
		err  string // substring of the error; "" for none
	}{
		{
			name: "targets_comments_blanks_and_options",
			text: "# servers to scan\n\nnpm:left-pad@1.3.0\r\n  pkg:npm/%40scope/srv@2.0.0   # trailing comment\n" +
				"npm:@modelcontextprotocol/server-filesystem@2026.8.31 --arg /tmp --arg='two words' --env API_KEY=placeholder --bin mcp-fs\n" +
				"local.tgz\n",
			want: []Line{
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
			got, err := Parse([]byte(tt.text), file, dir)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Parse error = %v, want an error containing %q", err, tt.err)
				}
				if strings.Contains(err.Error(), "s3cret") {
					t.Errorf("the error echoes a value: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(Line{})); diff != "" {
				t.Errorf("Parse (-want +got):\n%s", diff)
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
		got, err := SplitWords(tt.in)
		if err != nil {
			t.Errorf("SplitWords(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("SplitWords(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestSummarize(t *testing.T) {
	items := []*Item{
		{Status: StatusCompleted, Outcome: "ok", PhasesMS: map[string]int64{"scan": 10_000, "install.fetch": 4_000}},
		{Status: StatusCompleted, Outcome: "ok", PhasesMS: map[string]int64{"scan": 30_000, "install.fetch": 6_000}},
		{Status: StatusFailed, Outcome: "start_crashed", PhasesMS: map[string]int64{"scan": 20_000}},
		{Status: StatusFailed, Outcome: "not_found"},
		{Status: StatusFailed, Outcome: "not_found"},
		{Status: StatusSkipped, SkipReason: "stored", Outcome: "ok"},
		{Status: StatusSkipped, SkipReason: "duplicate of line 1"},
		{Status: StatusAbandoned, Outcome: "interrupted"},
		{Status: StatusNotStarted},
	}
	totals, failed, phases, perHour := Summarize(items, 30*time.Minute)
	if diff := cmp.Diff(Totals{Targets: 9, Completed: 2, Failed: 3, Skipped: 2, Abandoned: 1, NotStarted: 1, Scanned: 3}, totals); diff != "" {
		t.Errorf("totals (-want +got):\n%s", diff)
	}
	if totals.Targets != totals.Completed+totals.Failed+totals.Skipped+totals.Abandoned+totals.NotStarted {
		t.Errorf("totals do not add up: %+v", totals)
	}
	if diff := cmp.Diff(map[string]int{"start_crashed": 1, "not_found": 2}, failed); diff != "" {
		t.Errorf("failed by outcome (-want +got):\n%s", diff)
	}
	wantPhases := map[string]PhaseStat{
		"scan":          {N: 3, MedianMS: 20_000, TotalMS: 60_000},
		"install.fetch": {N: 2, MedianMS: 4_000, TotalMS: 10_000},
	}
	if diff := cmp.Diff(wantPhases, phases); diff != "" {
		t.Errorf("phases (-want +got):\n%s", diff)
	}
	if perHour != 6 {
		t.Errorf("packages per hour = %v, want 6 (3 scans in 30 minutes)", perHour)
	}
	if _, _, _, ph := Summarize(nil, 0); ph != 0 {
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
		Install: &evidence.Install{FetchMS: 4_000, ScriptsMS: 500},
		Session: &evidence.Session{StartMS: 1_000, HandshakeMS: 1_800, ListMS: 200, ExitCode: &exit,
			Shutdown: &evidence.Shutdown{StdinWaitMS: 40, TermWaitMS: 2_000}},
		Behavior: &evidence.Behavior{Watches: []evidence.Watch{{Phase: evidence.PhaseRun, IdleMS: 2_000}}},
		Exercise: &evidence.Exercise{ElapsedMS: 250},
	}
	got := Phases(b, 15*time.Second, 50*time.Millisecond)
	want := map[string]int64{
		"scan": 15_000, "save": 50, "resolve": 300,
		"install.fetch": 4_000, "install.scripts": 500,
		"session.start": 1_000, "session.handshake": 800, "session.list": 200, "session.idle": 2_000,
		"session.calls": 250, "session.shutdown": 2_040,
		// socket, github and dnssec are missing from the bundle: an error
		// state, which still ran for 0 ms; the judge was not assessed.
		"osv": 1_000, "socket": 0, "github": 0, "dnssec": 0,
		"other": 15_000 - 4_000 - 500 - 1_800 - 200 - 2_000 - 250 - 2_040,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Phases (-want +got):\n%s", diff)
	}
	// A package that failed to install has no session.
	got = Phases(&evidence.Bundle{Install: &evidence.Install{FetchMS: 3_000}}, 5*time.Second, 0)
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
		{fmt.Errorf("scan: %w", context.Canceled), "interrupted"},
		{errors.New("something else"), "error"},
	}
	for _, tt := range tests {
		if got := ErrorOutcome(tt.err); got != tt.want {
			t.Errorf("ErrorOutcome(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

// feed sends items on the channel it returns, then closes it; a receiver
// that stops reading leaves the rest unsent.
func feed(items []*Item) <-chan *Item {
	c := make(chan *Item)
	go func() {
		defer close(c)
		for _, it := range items {
			select {
			case c <- it:
			case <-time.After(2 * time.Second):
				return
			}
		}
	}()
	return c
}

func TestRunWorkersStopsOnDrain(t *testing.T) {
	items := make([]*Item, 10)
	for i := range items {
		items[i] = &Item{Line: i + 1}
	}
	drain := make(chan struct{})
	var started, finished atomic.Int32
	var once sync.Once
	release := make(chan struct{})
	RunWorkers(context.Background(), drain, 3, 0, feed(items), func(ctx context.Context, it *Item) {
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
		it.Status = StatusCompleted
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

// TestRunWorkersSpread: the workers' first scans start spread over the
// given time, one every spread/n, not at once.
func TestRunWorkersSpread(t *testing.T) {
	items := make([]*Item, 4)
	for i := range items {
		items[i] = &Item{Line: i + 1}
	}
	var mu sync.Mutex
	var starts []time.Duration
	begin := time.Now()
	RunWorkers(context.Background(), make(chan struct{}), 4, 400*time.Millisecond, feed(items), func(ctx context.Context, it *Item) {
		mu.Lock()
		starts = append(starts, time.Since(begin))
		mu.Unlock()
		time.Sleep(time.Second) // each worker takes one item
	})
	slices.Sort(starts)
	for i, st := range starts {
		want := time.Duration(i) * 100 * time.Millisecond
		if st < want || st > want+80*time.Millisecond {
			t.Errorf("start %d at %s, want about %s (every 100 ms)", i, st, want)
		}
	}
}
