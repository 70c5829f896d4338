//go:build docker

package sandbox_test

import (
	"strings"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/sandbox"
)

// oomAfterList makes the fixture server answer its listing, then allocate
// memory until the kernel kills it: once its first tools/list answer is
// written, it waits a moment (the rest of the listing) and then appends
// Buffers in a setInterval.
const oomAfterList = `const write = process.stdout.write.bind(process.stdout);
let armed = false;
process.stdout.write = (s, ...rest) => {
  if (!armed && String(s).includes('"tools"')) {
    armed = true;
    setTimeout(() => { const hold = []; setInterval(() => { for (let i = 0; i < 4; i++) hold.push(Buffer.alloc(16 << 20, 1)); }, 5); }, 300);
  }
  return write(s, ...rest);
};`

// TestOOMAfterListing: a server killed by the kernel for memory after it
// answered its listing ends oom (the scan's memory limit), with the kill
// recorded and the listing kept, never ok with no finding: without
// behaviour capture the kill lands in the shutdown (the server ignores
// the end of stdin), with it in the idle watch.
func TestOOMAfterListing(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*sandbox.Options)
	}{
		{"plain", func(o *sandbox.Options) { o.Memory = 128 << 20 }},
		{"watched", func(o *sandbox.Options) { o.Memory = 128 << 20; o.Behavior = true; o.Idle = 3 * time.Second }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSandbox(t, tc.mod)
			b, codes := scanFixture(t, s, fixture{Name: "oomlate-" + tc.name, OnStart: oomAfterList, OnStdinEnd: "/* keeps running */"})
			if b.Session == nil {
				t.Fatalf("no session (outcome %s)", b.Sandbox.Outcome)
			}
			if !b.Session.OOMKilled {
				t.Fatalf("session %+v: oom_killed not recorded", b.Session)
			}
			if b.Sandbox.Outcome != evidence.OutcomeOOM || b.Session.Outcome != evidence.OutcomeOOM {
				t.Fatalf("sandbox outcome %s, session outcome %s (codes %v), want oom", b.Sandbox.Outcome, b.Session.Outcome, keys(codes))
			}
			if got := strings.Join(toolNames(b), ","); got != "get_weather,add,write_note" {
				t.Errorf("tools %q: the listing answered before the kill is kept", got)
			}
			if lim, ok := evidence.ScannerLimit(b); !ok || lim.Kind != evidence.LimitMemory || lim.Signal != evidence.SignalSession {
				t.Errorf("limit %+v (%v), want the session stopped at the memory limit", lim, ok)
			}
			if codes[rubric.CodeSessionStartCrashed] {
				t.Errorf("codes %v: a kill for memory is not a crash", keys(codes))
			}
		})
	}
}

// TestScriptOOMNotTimeout: a postinstall that allocates memory fast is oom
// every time, decided by the cgroup's kill count, never by the time it
// took: neither when the bomb itself is the script, nor when it is a child
// the script then waits past the install timeout for (the kernel killed
// the child; the script lingers).
func TestScriptOOMNotTimeout(t *testing.T) {
	const bomb = `const a = []; for (;;) a.push(Buffer.alloc(64 << 20, 1));`
	// The bombs get a long install timeout: the kernel may take its time
	// to kill at the limit on a loaded machine, and a bomb that was not
	// killed by then is a timeout, not what this test is about. The
	// lingering script needs a short one, which it always reaches.
	long := newSandbox(t, func(o *sandbox.Options) { o.InstallTimeout = 90 * time.Second })
	short := newSandbox(t, func(o *sandbox.Options) { o.InstallTimeout = 45 * time.Second })
	for i, c := range []struct {
		s *sandbox.Sandbox
		f fixture
	}{
		{long, fixture{Name: "oombomb-a", Postinstall: "node bomb.js", Files: map[string]string{"bomb.js": bomb}}},
		{long, fixture{Name: "oombomb-b", Postinstall: "node bomb.js", Files: map[string]string{"bomb.js": bomb}}},
		{short, fixture{Name: "oomlinger", Postinstall: "node linger.js", Files: map[string]string{"bomb.js": bomb,
			"linger.js": `require('child_process').spawn(process.execPath, [__dirname + '/bomb.js'], { stdio: 'inherit' }).on('exit', (c, sig) => console.log('bomb ended', c, sig)); setInterval(() => {}, 1000);`}}},
	} {
		s, f := c.s, c.f
		t.Run(f.Name, func(t *testing.T) {
			b, codes := scanFixture(t, s, f)
			if len(b.Install.Scripts) != 1 {
				t.Fatalf("scripts %+v", b.Install.Scripts)
			}
			sc := b.Install.Scripts[0]
			if !sc.OOM || b.Install.Outcome != evidence.InstallOOM || b.Sandbox.Outcome != evidence.OutcomeOOM {
				t.Fatalf("run %d: script %+v, install %s (%s), sandbox %s; want the script killed for memory and the install oom", i, sc, b.Install.Outcome, b.Install.Error, b.Sandbox.Outcome)
			}
			if codes[rubric.CodeInstallTimeout] || codes[rubric.CodeScriptsFailed] {
				t.Errorf("codes %v: a kill for memory is neither a timeout nor a failed script", keys(codes))
			}
			if lim, ok := evidence.ScannerLimit(b); !ok || lim.Kind != evidence.LimitMemory || lim.Signal != evidence.SignalInstall {
				t.Errorf("limit %+v (%v), want the install stopped at the memory limit", lim, ok)
			}
		})
	}
}
