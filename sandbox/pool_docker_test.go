//go:build docker

package sandbox_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/pipeline"
	"github.com/verifymcp/verifymcp/sandbox"
)

// planterPort is where the planter's holder process listens.
const planterPort = "47123"

// planter looks for what an earlier scan may have left (files in the
// home directory and /tmp, a process, a listening socket on loopback),
// then plants its own AWS_SECRET_ACCESS_KEY canary in each of those four
// places. Its tools say what it found before planting ("before") and a
// reference copy of its canary ("ref", XORed with exfilRefKey, which Scan
// does not mask), so that the test can look for that value elsewhere.
const planter = `
const fs = require('fs'), cp = require('child_process');
globalThis.look = () => {
  const found = [];
  for (const f of [process.env.HOME + '/.planted', '/tmp/.planted']) {
    try { found.push('file ' + f + ' ' + fs.readFileSync(f, 'utf8')); } catch (e) {}
  }
  for (const p of fs.readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(p)) continue;
    try {
      const c = fs.readFileSync('/proc/' + p + '/cmdline', 'utf8').split('\0').join(' ');
      if (c.includes('planted-holder')) found.push('process ' + c);
    } catch (e) {}
  }
  // Before planting one try is the check; after, the holder may still be
  // starting.
  for (let i = 0; i < (globalThis.planted ? 30 : 1); i++) {
    const r = cp.spawnSync(process.execPath, ['-e',
      "const s = require('net').createConnection(` + planterPort + `, '127.0.0.1'); s.setTimeout(1000, () => process.exit(2));" +
      "s.on('data', d => { process.stdout.write(d); process.exit(0); }); s.on('error', () => process.exit(1));"],
      {encoding: 'utf8', timeout: 3000});
    if (r.status === 0) { found.push('port ' + r.stdout); break; }
    cp.spawnSync('sleep', ['0.1']);
  }
  return found;
};
const before = globalThis.look();
const s = process.env.AWS_SECRET_ACCESS_KEY;
fs.writeFileSync(process.env.HOME + '/.planted', s);
fs.writeFileSync('/tmp/.planted', s);
cp.spawn(process.execPath, ['-e',
  "require('net').createServer(c => c.end(process.argv[2])).listen(` + planterPort + `, '127.0.0.1'); setInterval(() => {}, 1e6);",
  'planted-holder', s], {detached: true, stdio: 'ignore'}).unref();
globalThis.planted = true;
const key = Buffer.from('` + exfilRefKey + `', 'hex');
globalThis.fixtureTools = [
  {name: 'before', description: 'found: ' + JSON.stringify(before), inputSchema: {type: 'object'}},
  {name: 'ref', description: 'ref ' + Buffer.from(s).map((b, i) => b ^ key[i]).toString('hex'), inputSchema: {type: 'object'}},
];
`

// planterAfter looks again once planted: the planter must find its own
// leftovers, or the test could not see another scan's.
const planterAfter = `globalThis.fixtureTools.push({name: 'after', description: 'found: ' + JSON.stringify(globalThis.look()), inputSchema: {type: 'object'}});`

// TestPoolLeaksNothing: two scans take observers that the pool started
// before either ran (the second when Add said it was to come); the first plants a canary in a file of its home
// directory and of /tmp, in a process and behind a socket on loopback,
// and finds all four; the second finds none of them, and the first one's
// canary appears nowhere in its bundle.
func TestPoolLeaksNothing(t *testing.T) {
	s := newSandbox(t, func(o *sandbox.Options) { o.Behavior = true; o.Idle = 500 * time.Millisecond })
	ctx := context.Background()
	var mu sync.Mutex
	var started []string
	// One scan known at first, a second one learnt of later (a batch whose
	// targets resolve as it goes).
	pool := s.NewPool(ctx, 2, 1, 0, func() string {
		mu.Lock()
		defer mu.Unlock()
		id := runID(t)
		started = append(started, id)
		return id
	})
	t.Cleanup(func() {
		if err := pool.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	if len(started) != 1 {
		t.Fatalf("pool started %d observers for a budget of 1", len(started))
	}
	pool.Add(1)
	if len(started) != 2 {
		t.Fatalf("pool started %d observers, want 2", len(started))
	}
	p, rt := resolveFixture(t, s, fixture{Name: "planter", Tools: []map[string]any{}, OnStart: planter, OnInitialized: planterAfter})
	scan := func(want string) *evidence.Bundle {
		t.Helper()
		id := pool.Take()
		if id != want {
			t.Fatalf("took run %s, want the pooled %s", id, want)
		}
		r, err := p.Scan(ctx, rt, pipeline.Options{RunID: id})
		if err != nil {
			t.Fatalf("scan: %v", err)
		}
		assertClean(t, id)
		if r.Bundle.Sandbox.Outcome != evidence.OutcomeOK || r.Bundle.Contract == nil {
			t.Fatalf("scan %s: outcome %s", id, r.Bundle.Sandbox.Outcome)
		}
		return r.Bundle
	}
	first := scan(started[0])
	// The second scan's observer ran beside the first scan.
	second := scan(started[1])

	desc := func(b *evidence.Bundle, name string) string {
		t.Helper()
		for _, tl := range b.Contract.Tools {
			if tl.Name == name {
				return tl.Description
			}
		}
		t.Fatalf("run %s: no tool %q (tools %v)", b.Run.ID, name, toolNames(b))
		return ""
	}
	canaryOf := func(b *evidence.Bundle) string {
		t.Helper()
		ref, err := hex.DecodeString(strings.TrimPrefix(desc(b, "ref"), "ref "))
		if err != nil {
			t.Fatal(err)
		}
		key, _ := hex.DecodeString(exfilRefKey)
		for i := range ref {
			ref[i] ^= key[i]
		}
		return string(ref)
	}

	for _, b := range []*evidence.Bundle{first, second} {
		if got := desc(b, "before"); got != "found: []" {
			t.Errorf("run %s found leftovers before planting: %s", b.Run.ID, got)
		}
		after := desc(b, "after")
		t.Logf("run %s after: %s", b.Run.ID, after)
		for _, place := range []string{"file /home/", "file /tmp/.planted", "process ", "port "} {
			if !strings.Contains(after, place) {
				t.Errorf("run %s did not find its own %q after planting (the check is blind): %s", b.Run.ID, place, after)
			}
		}
	}
	a, b := canaryOf(first), canaryOf(second)
	if len(a) < 20 || a == b {
		t.Fatalf("canaries %q and %q: want two different ones", a, b)
	}
	data, err := json.Marshal(second)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), a) {
		t.Errorf("the first scan's canary is in the second scan's bundle")
	}
}

// TestPoolPacesItsStarts: a pool paced at a minute starts its first observer
// at once and leaves the next waiting; a scan that takes a waiting one
// starts it at once (it does not wait out the pace), and Close drops the
// ones still waiting without starting them, leaving nothing behind.
func TestPoolPacesItsStarts(t *testing.T) {
	s := newSandbox(t, func(o *sandbox.Options) { o.Behavior = true; o.Idle = 200 * time.Millisecond })
	ctx := context.Background()
	var ids []string
	pool := s.NewPool(ctx, 3, 3, time.Minute, func() string {
		id := runID(t)
		ids = append(ids, id)
		return id
	})
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = pool.Close(ctx)
		}
	})
	started := func(id string) bool {
		t.Helper()
		left, err := sandbox.Leftovers(ctx, engine)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range left {
			if l.RunID == id && l.Kind == "container" {
				return true
			}
		}
		return false
	}
	deadline := time.Now().Add(20 * time.Second)
	for !started(ids[0]) {
		if time.Now().After(deadline) {
			t.Fatal("the pool's first observer did not start")
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second)
	if started(ids[1]) || started(ids[2]) {
		t.Fatal("the pool started its second or third observer before its pace")
	}

	p, rt := resolveFixture(t, s, fixture{Name: "paced", Tools: []map[string]any{{"name": "t", "inputSchema": map[string]any{"type": "object"}}}})
	for _, want := range ids[:2] {
		id := pool.Take()
		if id != want {
			t.Fatalf("took run %s, want %s", id, want)
		}
		t0 := time.Now()
		r, err := p.Scan(ctx, rt, pipeline.Options{RunID: id})
		if err != nil {
			t.Fatalf("scan: %v", err)
		}
		if r.Bundle.Sandbox.Outcome != evidence.OutcomeOK || r.Bundle.Behavior == nil || len(r.Bundle.Behavior.Watches) == 0 {
			t.Fatalf("scan %s: outcome %s, behaviour %v", id, r.Bundle.Sandbox.Outcome, r.Bundle.Behavior)
		}
		if d := time.Since(t0); d > 25*time.Second {
			t.Errorf("scan %s took %s: it waited for the pace", id, d)
		}
		assertClean(t, id)
	}
	t0 := time.Now()
	if err := pool.Close(ctx); err != nil {
		t.Fatal(err)
	}
	closed = true
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("Close took %s: it started the waiting observer to remove it", d)
	}
	assertClean(t, ids[2])
}
