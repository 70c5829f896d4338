package rubric

import (
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/evidence"
)

// v5Hash is the SHA-256 of rubric v5 as released.
const v5Hash = "sha256:387763e9c5468db109d3b0ab1e5ace31c5f52c05233bed371b33da8c9291241d"

func TestV5Unchanged(t *testing.T) {
	if got := mustLoad(t, "5").Hash; got != v5Hash {
		t.Errorf("rubric v5 hash = %s, want %s: v5.yaml was edited; make a new version instead", got, v5Hash)
	}
}

// evalBoth evaluates a modified okBundle under v5 and v6 and returns the
// outcome of one dimension under each.
func evalBoth(t *testing.T, dimension string, modify func(b *evidence.Bundle)) (v5, v6 outcome) {
	t.Helper()
	b5, b6 := okBundle(), okBundle()
	modify(b5)
	modify(b6)
	return outcomeOf(Evaluate(b5, mustLoad(t, "5")), dimension), outcomeOf(Evaluate(b6, mustLoad(t, "6")), dimension)
}

// sqlite3Script is the install script of sqlite3@5.1.7 as the sandbox
// recorded it under mcp-server-sqlite-npx@0.8.0: prebuild-install tried
// github.com, node-gyp tried nodejs.org, both answered by the sink.
func sqlite3Script() evidence.Script {
	return evidence.Script{
		Package: "sqlite3", Version: "5.1.7", Path: "node_modules/sqlite3", Event: "install",
		Command: "prebuild-install -r napi || node-gyp rebuild", Ran: true, ExitCode: 1,
		OutputTail: "gyp http GET https://nodejs.org/download/release/v22.23.5/node-v22.23.5-headers.tar.gz\ngyp ERR! not ok",
		Network:    &evidence.ScriptNetwork{Attempts: 4, Wanted: []string{"github.com", "nodejs.org"}},
	}
}

// TestV6Scripts: a script that failed after the sandbox denied it the
// network, and a failing optional dependency, are not broken scripts
// under v6; under v5 they are.
func TestV6Scripts(t *testing.T) {
	tests := []struct {
		name   string
		script func() evidence.Script
		v5, v6 outcome
	}{
		{"network_denied", sqlite3Script,
			outcome{State: StateScored, Score: 0, Findings: []string{"pkg.install.scripts.failed sqlite3", "pkg.install.scripts.present sqlite3"}},
			outcome{State: StateZeroPoint, Score: 0, Findings: []string{"pkg.install.scripts.network_denied sqlite3", "pkg.install.scripts.present sqlite3"}}},
		{"optional", func() evidence.Script {
			// cpu-features@0.0.10, optional for ssh2: no compiler here.
			return evidence.Script{Package: "cpu-features", Version: "0.0.10", Path: "node_modules/cpu-features", Event: "install",
				Command: "node buildcheck.js > buildcheck.gypi && node-gyp rebuild", Ran: true, ExitCode: 1, Optional: true,
				OutputTail: "Error: Unable to detect compiler type", Network: &evidence.ScriptNetwork{Wanted: []string{}}}
		},
			outcome{State: StateScored, Score: 0, Findings: []string{"pkg.install.scripts.failed cpu-features", "pkg.install.scripts.present cpu-features"}},
			outcome{State: StateScored, Score: 50, Findings: []string{"pkg.install.scripts.optional_failed cpu-features", "pkg.install.scripts.present cpu-features"}}},
		{"own_failure", func() evidence.Script {
			return evidence.Script{Package: "x", Version: "1.0.0", Path: "node_modules/x", Event: "postinstall", Command: "node broken.js", Ran: true, ExitCode: 1,
				Network: &evidence.ScriptNetwork{Wanted: []string{}}}
		},
			outcome{State: StateScored, Score: 0, Findings: []string{"pkg.install.scripts.failed x", "pkg.install.scripts.present x"}},
			outcome{State: StateScored, Score: 0, Findings: []string{"pkg.install.scripts.failed x", "pkg.install.scripts.present x"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v5, v6 := evalBoth(t, "install_scripts", func(b *evidence.Bundle) { b.Install.Scripts = []evidence.Script{tc.script()} })
			if d := diff(tc.v5, v5); d != "" {
				t.Errorf("v5 (-want +got):\n%s", d)
			}
			if d := diff(tc.v6, v6); d != "" {
				t.Errorf("v6 (-want +got):\n%s", d)
			}
		})
	}
	b := okBundle()
	b.Install.Scripts = []evidence.Script{sqlite3Script()}
	for _, f := range Evaluate(b, Current()).Findings {
		if f.Code == CodeScriptsNetworkDenied && !strings.Contains(f.Message, "github.com, nodejs.org") {
			t.Errorf("network_denied message %q does not name the hosts", f.Message)
		}
	}
}

// TestV6InstallOOM: a required script killed for memory is the install's
// outcome, not a failed script of an install that went well.
func TestV6InstallOOM(t *testing.T) {
	modify := func(b *evidence.Bundle) {
		b.Sandbox.Outcome = evidence.OutcomeOOM
		b.Install.Outcome, b.Install.FailedStep = evidence.InstallOOM, evidence.StepScripts
		b.Install.Error = "the postinstall script of x was killed for exceeding the script step's memory limit of 2 GiB"
		b.Install.Scripts = []evidence.Script{{Package: "x", Version: "1.0.0", Path: "node_modules/x", Event: "postinstall", Command: "node hog.js", Ran: true, ExitCode: 137, Signal: "SIGKILL", OOM: true}}
	}
	_, v6 := evalBoth(t, "installability", modify)
	if d := diff(outcome{State: StateScored, Score: 0, Findings: []string{"pkg.install.oom mcp-notes"}}, v6); d != "" {
		t.Errorf("installability v6 (-want +got):\n%s", d)
	}
	_, v6 = evalBoth(t, "install_scripts", modify)
	if d := diff(outcome{State: StateScored, Score: 0, Findings: []string{"pkg.install.scripts.present x"}}, v6); d != "" {
		t.Errorf("install_scripts v6 (-want +got):\n%s", d)
	}
}

// TestV6SessionAfterDeniedInstall: mcp-server-sqlite-npx@0.8.0 crashes at
// start because its sqlite3 binding was never downloaded; under v6 that is
// not held against it.
func TestV6SessionAfterDeniedInstall(t *testing.T) {
	crash := func(b *evidence.Bundle) {
		b.Sandbox.Outcome = evidence.OutcomeStartCrashed
		code := 1
		b.Session = &evidence.Session{Outcome: evidence.OutcomeStartCrashed, ExitCode: &code, Error: "the server exited with status 1 before the contract was captured",
			StderrTail: "Error: Could not locate the bindings file. Tried: → /work/tree/node_modules/sqlite3/build/node_sqlite3.node"}
		b.Install.Scripts = []evidence.Script{sqlite3Script()}
	}
	v5, v6 := evalBoth(t, "session", crash)
	if d := diff(outcome{State: StateScored, Score: 0, Findings: []string{"pkg.session.start_crashed"}}, v5); d != "" {
		t.Errorf("v5 (-want +got):\n%s", d)
	}
	if d := diff(outcome{State: StateZeroPoint, Score: 0, Findings: []string{"pkg.session.failed_after_denied_install"}}, v6); d != "" {
		t.Errorf("v6 (-want +got):\n%s", d)
	}
	// An optional package's denied script says nothing about the crash.
	_, v6 = evalBoth(t, "session", func(b *evidence.Bundle) {
		crash(b)
		b.Install.Scripts[0].Optional = true
	})
	if d := diff(outcome{State: StateScored, Score: 0, Findings: []string{"pkg.session.start_crashed"}}, v6); d != "" {
		t.Errorf("v6 with an optional package (-want +got):\n%s", d)
	}
}

// TestV6SlowDiscover: a server that answered server/discover after the
// probe's deadline is slow, not silent.
func TestV6SlowDiscover(t *testing.T) {
	modify := func(b *evidence.Bundle) {
		b.Session.HandshakePath = evidence.HandshakeInitializeFallback
		b.Session.LateAnswers = []evidence.LateAnswer{{Method: "server/discover", AfterMS: 5400, Error: "Method not found"}}
	}
	v5, v6 := evalBoth(t, "session", modify)
	if d := diff(outcome{State: StateScored, Score: 80, Findings: []string{"pkg.session.discover.unanswered"}}, v5); d != "" {
		t.Errorf("v5 (-want +got):\n%s", d)
	}
	if d := diff(outcome{State: StateScored, Score: 100, Findings: []string{}}, v6); d != "" {
		t.Errorf("v6 (-want +got):\n%s", d)
	}
}

// TestV6DeclaredCommands: the command a declared lifecycle script runs is
// no spawn under v6, but a declared curl is still a network tool.
func TestV6DeclaredCommands(t *testing.T) {
	procs := func(p ...evidence.ProcessEvent) func(b *evidence.Bundle) {
		return watched(func(bh *evidence.Behavior) { bh.Processes = p })
	}
	declared := func(argv ...string) evidence.ProcessEvent {
		return evidence.ProcessEvent{Phase: evidence.PhaseScripts, Package: "x", PID: 40, PPID: 39, Exe: "/usr/local/bin/" + argv[0], Argv: argv, Provenance: evidence.ProvenanceDeclared}
	}
	tests := []struct {
		name   string
		modify func(b *evidence.Bundle)
		v5, v6 outcome
	}{
		{"node_x.js", procs(declared("node", "x.js")),
			outcome{State: StateScored, Score: 70, Findings: []string{"pkg.behavior.process.spawn scripts:x"}},
			outcome{State: StateScored, Score: 100, Findings: []string{}}},
		{"declared_curl", procs(declared("curl", "-fsSL", "https://example.invalid/x.sh")),
			outcome{State: StateScored, Score: 0, Findings: []string{"pkg.behavior.process.network_tool scripts:x", "pkg.behavior.process.spawn scripts:x"}},
			outcome{State: StateScored, Score: 0, Findings: []string{"pkg.behavior.process.network_tool scripts:x"}}},
		{"exec_in_place_is_one_spawn", procs(
			evidence.ProcessEvent{Phase: evidence.PhaseRun, PID: 51, PPID: 50, Exe: "/usr/bin/env", Argv: []string{"/usr/bin/env", "node", "/work/tree/node_modules/.bin/check"}, Provenance: evidence.ProvenancePackage},
			evidence.ProcessEvent{Phase: evidence.PhaseRun, PID: 51, PPID: 50, Exe: "/usr/local/bin/node", Argv: []string{"node", "/work/tree/node_modules/.bin/check"}, Provenance: evidence.ProvenancePackage}),
			outcome{State: StateScored, Score: 40, Findings: []string{"pkg.behavior.process.spawn run", "pkg.behavior.process.spawn run"}},
			outcome{State: StateScored, Score: 70, Findings: []string{"pkg.behavior.process.spawn run"}}},
		{"package_shell", procs(evidence.ProcessEvent{Phase: evidence.PhaseScripts, Package: "x", PID: 41, PPID: 40, Exe: "/bin/dash", Argv: []string{"/bin/sh", "-c", "id"}, Provenance: evidence.ProvenancePackage}),
			outcome{State: StateScored, Score: 0, Findings: []string{"pkg.behavior.process.shell scripts:x", "pkg.behavior.process.spawn scripts:x"}},
			outcome{State: StateScored, Score: 0, Findings: []string{"pkg.behavior.process.shell scripts:x", "pkg.behavior.process.spawn scripts:x"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v5, v6 := evalBoth(t, DimensionExecutionSafety, tc.modify)
			if d := diff(tc.v5, v5); d != "" {
				t.Errorf("v5 (-want +got):\n%s", d)
			}
			if d := diff(tc.v6, v6); d != "" {
				t.Errorf("v6 (-want +got):\n%s", d)
			}
		})
	}
}

// TestV6DiskFilled: a bounded place written full is pkg.behavior.disk.filled
// in v6 and scores 0; v5 does not know the code; a place used but not full
// is no finding.
func TestV6DiskFilled(t *testing.T) {
	disk := func(full bool) func(b *evidence.Bundle) {
		return watched(func(bh *evidence.Behavior) {
			bh.Watches[1].Disk = []evidence.DiskUse{
				{Place: evidence.PlaceHome, BoundBytes: 512 << 20, BoundFiles: 65536, StartBytes: 8192, UsedBytes: 512<<20 - 4096, UsedFiles: 3, Full: full},
				{Place: evidence.PlaceTmp, BoundBytes: 256 << 20, BoundFiles: 65536, UsedBytes: 1 << 20, UsedFiles: 2},
			}
		})
	}
	v5, v6 := evalBoth(t, DimensionExecutionSafety, disk(true))
	if d := diff(outcome{State: StateScored, Score: 100, Findings: []string{}}, v5); d != "" {
		t.Errorf("v5 (-want +got):\n%s", d)
	}
	if d := diff(outcome{State: StateScored, Score: 0, Findings: []string{"pkg.behavior.disk.filled run:home"}}, v6); d != "" {
		t.Errorf("v6 (-want +got):\n%s", d)
	}
	_, v6 = evalBoth(t, DimensionExecutionSafety, disk(false))
	if d := diff(outcome{State: StateScored, Score: 100, Findings: []string{}}, v6); d != "" {
		t.Errorf("v6, not full (-want +got):\n%s", d)
	}
}

// TestOfflineFetchV11: backlog-mcp-server's preinstall runs npx only-allow
// pnpm; in the sandbox npm's offline cache refuses the fetch before any
// connection is tried, so no network attempt is recorded. Under v10 that
// was a failed script of the package (medium); from v11 it is a script
// the sandbox denied the network, as when the attempt is seen.
func TestOfflineFetchV11(t *testing.T) {
	script := evidence.Script{Package: "backlog-mcp-server", Version: "0.20.4", Path: ".", Event: "preinstall",
		Command: "npx only-allow pnpm", Ran: true, ExitCode: 1, Network: &evidence.ScriptNetwork{Wanted: []string{}},
		OutputTail: "npm error code ENOTCACHED\nnpm error request to https://registry.npmjs.org/only-allow failed: cache mode is 'only-if-cached' but no cached response is available."}
	for _, tc := range []struct {
		version string
		want    []string
	}{
		{"10", []string{"pkg.install.scripts.failed backlog-mcp-server", "pkg.install.scripts.present backlog-mcp-server"}},
		{"11", []string{"pkg.install.scripts.network_denied backlog-mcp-server", "pkg.install.scripts.present backlog-mcp-server"}},
	} {
		b := okBundle()
		b.Install.Scripts = []evidence.Script{script}
		res := Evaluate(b, mustLoad(t, tc.version))
		if got := outcomeOf(res, "install_scripts"); strings.Join(got.Findings, ",") != strings.Join(tc.want, ",") {
			t.Errorf("v%s: %v, want %v", tc.version, got.Findings, tc.want)
		}
		for _, f := range res.Findings {
			if f.Code == CodeScriptsNetworkDenied && !strings.Contains(f.Message, "https://registry.npmjs.org") {
				t.Errorf("v%s: message %q does not name what it wanted", tc.version, f.Message)
			}
		}
	}
}
