//go:build docker

package sandbox_test

import (
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/evidence"
)

// watchdog is a server's telemetry watchdog, as chrome-devtools-mcp@1.11.0
// starts one (build/src/telemetry/WatchdogClient.js and watchdog/main.js,
// paraphrased): a detached node process with a pipe from the server on its
// stdin, which sends one "server_shutdown" event when that pipe ends, that
// is when the server has exited, and sends nothing before. done is what it
// does once the request has completed or failed: chrome-devtools-mcp's
// exits.
func watchdog(done string) string {
	const main = `process.on('SIGTERM', () => process.exit(0));
const send = () => {
  const r = require('https').request({host: 'telemetry.example-watchdog.io', method: 'POST', path: '/log?format=json_proto'}, () => { DONE });
  r.on('error', () => { DONE });
  r.end(JSON.stringify({log_source: 2839, log_event: [{source_extension_json: '{"server_shutdown":{}}'}]}));
};
process.stdin.on('end', send);
process.stdin.resume();
setInterval(() => {}, 60000);`
	src := strings.ReplaceAll(main, "DONE", done)
	return `const child = require('child_process').spawn(process.execPath, ['-e', ` + "`" + src + "`" + `],
  {stdio: ['pipe', 'ignore', 'ignore'], detached: true});
child.unref();`
}

// TestShutdownOutlivedByWatchdog: what a process the server started does
// after the server exited is watched, within the stop sequence's grace
// periods, and attributed to the shutdown stage. The server was the run
// container's main process, and the engine kills every process of a
// container when its main process exits, so the watchdog's one request
// was never sent: the sink saw nothing after stdin was closed.
func TestShutdownOutlivedByWatchdog(t *testing.T) {
	s := behaviourSandbox(t)
	tests := []struct {
		f fixture
		// ended is how the run ended: on stdin close when the watchdog
		// exits once it has sent its event, on SIGTERM when it keeps
		// running after the server, and the sequence goes on.
		ended string
	}{
		{fixture{Name: "watchdogflush", OnStart: watchdog(`process.exit(0);`)}, evidence.EndedStdinClose},
		// A watchdog that stays after sending: the SIGTERM after the
		// stdin grace ends the run, and the server's own exit is still
		// recorded as the server's.
		{fixture{Name: "watchdogstays", OnStart: watchdog(``)}, evidence.EndedTerm},
	}
	for _, tc := range tests {
		t.Run(tc.f.Name, func(t *testing.T) {
			b, _ := scanFixture(t, s, tc.f)
			if b.Sandbox.Outcome != evidence.OutcomeOK || b.Behavior == nil {
				t.Fatalf("outcome %s (%s), behaviour %v", b.Sandbox.Outcome, b.Session.Error, b.Behavior != nil)
			}
			var flush []evidence.NetEvent
			for _, n := range b.Behavior.Network {
				if n.Phase != evidence.PhaseRun || (n.DNSName != "telemetry.example-watchdog.io" && n.SNI != "telemetry.example-watchdog.io") {
					continue
				}
				if n.Stage != evidence.StageShutdown || !n.AfterHandshake {
					t.Errorf("the watchdog's request in stage %q (after the listing %v), want shutdown: %+v", n.Stage, n.AfterHandshake, n)
				}
				flush = append(flush, n)
			}
			if len(flush) == 0 {
				t.Errorf("the watchdog's shutdown request was not seen: network %+v; shutdown %+v", b.Behavior.Network, b.Session.Shutdown)
			}
			sd := b.Session.Shutdown
			if sd == nil || sd.Ended != tc.ended {
				t.Fatalf("shutdown %+v, want ended %s", sd, tc.ended)
			}
			if sd.ServerExitMS == nil || *sd.ServerExitMS > sd.StdinWaitMS || sd.ExitCode == nil || *sd.ExitCode != 0 {
				t.Errorf("shutdown %+v: want the server's own exit (status 0) within the stdin grace", sd)
			}
			if tc.ended == evidence.EndedTerm && sd.TermWaitMS >= sd.GraceMS {
				t.Errorf("shutdown %+v: SIGTERM did not end the run the watchdog kept going", sd)
			}
			var wd []evidence.ProcessEvent
			for _, p := range b.Behavior.Processes {
				if p.Phase == evidence.PhaseRun && strings.Contains(strings.Join(p.Argv, " "), "telemetry.example-watchdog.io") {
					wd = append(wd, p)
				}
				if p.Phase == evidence.PhaseRun && p.Provenance == evidence.ProvenanceSandbox && !strings.HasSuffix(strings.Join(p.Argv, " "), "fixture-"+tc.f.Name) &&
					!strings.Contains(strings.Join(p.Argv, " "), "server.js") {
					t.Errorf("a sandbox process other than the server: %+v", p)
				}
			}
			if len(wd) != 1 || wd[0].Provenance != evidence.ProvenancePackage {
				t.Errorf("watchdog processes %+v, want one, the package's", wd)
			}
		})
	}
}
