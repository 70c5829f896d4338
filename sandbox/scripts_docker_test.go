//go:build docker

package sandbox_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/sandbox"
)

// TestScriptOutcomes: a script that fails because the sandbox denied it
// the network says so and names the hosts; one killed for memory is the
// install's oom; the one running when the install timeout passes is
// recorded as timed out, with its output.
func TestScriptOutcomes(t *testing.T) {
	// Like prebuild-install: fetch a prebuilt binary, fail without it.
	// A prebuilt binary's download, checked as prebuild-install's unpacking
	// checks it: the sink answers HTTPS (with "{}"), not with the archive.
	const download = `require('https').get('https://github.com/example/native/releases/download/v1.0.0/native-linux-x64.tar.gz', (res) => {
  const parts = []; res.on('data', (d) => parts.push(d)); res.on('end', () => {
    const b = Buffer.concat(parts);
    if (res.statusCode !== 200 || b[0] !== 0x1f || b[1] !== 0x8b) { console.error('prebuild download failed: not a gzip archive'); process.exit(1); }
    process.exit(0);
  });
}).on('error', (e) => { console.error('prebuild download failed: ' + e.message); process.exit(1); });`
	t.Run("network_denied", func(t *testing.T) {
		s := behaviourSandbox(t)
		b, codes := scanFixture(t, s, fixture{Name: "netscript", Postinstall: "node fetch.js", Files: map[string]string{"fetch.js": download}})
		sc := b.Install.Scripts[0]
		if sc.ExitCode != 1 || sc.Network == nil || sc.Network.Attempts == 0 || !slices.Contains(sc.Network.Wanted, "github.com") {
			t.Fatalf("script %+v network %+v, want exit 1 after attempts to github.com", sc, sc.Network)
		}
		got := findingsOf(b, rubric.CodeScriptsNetworkDenied)
		if len(got) != 1 || !strings.Contains(got[0].Message, "github.com") || codes[rubric.CodeScriptsFailed] {
			t.Errorf("findings %+v (scripts.failed %v), want network_denied naming github.com and no scripts.failed", got, codes[rubric.CodeScriptsFailed])
		}
	})
	t.Run("oom", func(t *testing.T) {
		s := behaviourSandbox(t)
		b, codes := scanFixture(t, s, fixture{Name: "oomscript", Postinstall: `node -e "const a = []; for (;;) a.push(Buffer.alloc(64 << 20, 1))"`})
		sc := b.Install.Scripts[0]
		if !sc.OOM || sc.ExitCode == 0 || b.Install.Outcome != evidence.InstallOOM || b.Sandbox.Outcome != evidence.OutcomeOOM {
			t.Fatalf("script %+v, install %s, sandbox %s; want the script killed for memory and the install oom", sc, b.Install.Outcome, b.Sandbox.Outcome)
		}
		// From rubric v11 a kill at the sandbox's memory limit is the
		// sandbox's limit, not the package's failure: no finding, and the
		// install is not assessed; rubric v10 reported pkg.install.oom.
		if codes[rubric.CodeInstallOOM] || codes[rubric.CodeScriptsFailed] {
			t.Errorf("codes %v, want neither pkg.install.oom nor scripts.failed under rubric %s", keys(codes), rubric.CurrentVersion)
		}
		if lim, ok := evidence.ScannerLimit(b); !ok || lim.Kind != evidence.LimitMemory || lim.Signal != evidence.SignalInstall {
			t.Errorf("limit %+v (%v), want the install stopped at the memory limit", lim, ok)
		}
	})
	t.Run("setsid_daemon", func(t *testing.T) {
		// A postinstall that starts a detached child (a session of its
		// own, out of the script's process group) and exits: the child is
		// killed when the script ends, recorded, and a finding (v12).
		s := behaviourSandbox(t)
		b, codes := scanFixture(t, s, fixture{Name: "daemonscript",
			Postinstall: `node -e "require('child_process').spawn('sleep', ['120'], {detached: true, stdio: 'ignore'}).unref()"`})
		sc := b.Install.Scripts[0]
		if sc.ExitCode != 0 || !sc.LeftRunning {
			t.Fatalf("script %+v, want exit 0 and the daemon recorded as left running", sc)
		}
		if !codes[rubric.CodeScriptsLeftRunning] {
			t.Errorf("codes %v, want %s", keys(codes), rubric.CodeScriptsLeftRunning)
		}
		for _, pr := range b.Behavior.Processes {
			if pr.Phase == evidence.PhaseRun && len(pr.Argv) == 2 && pr.Argv[0] == "sleep" {
				t.Errorf("the script's daemon was seen in the run phase: %+v", pr)
			}
		}
	})
	t.Run("timeout", func(t *testing.T) {
		s := newSandbox(t, func(o *sandbox.Options) { o.Behavior = true; o.InstallTimeout = 25 * time.Second })
		b, _ := scanFixture(t, s, fixture{Name: "slowscript", Postinstall: `node -e "console.log('compiling the native part'); setTimeout(() => {}, 600000)"`})
		sc := b.Install.Scripts[0]
		if !sc.TimedOut || !strings.Contains(sc.OutputTail, "compiling the native part") || b.Install.Outcome != evidence.InstallTimeout {
			t.Fatalf("script %+v, install %s: want the running script timed out with its output", sc, b.Install.Outcome)
		}
		if !strings.Contains(b.Install.Error, "postinstall script of verifymcp-fixture-slowscript") {
			t.Errorf("install error %q does not name the script that was running", b.Install.Error)
		}
	})
}
