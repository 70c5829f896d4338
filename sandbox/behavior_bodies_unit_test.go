package sandbox

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/sandbox/canary"
)

// TestAcrossBodies: the AWS secret, base64-encoded and sent ten characters
// a request to one collector inside TLS, is no find in any one body; read
// across the requests it is one hit, "split across N requests", on the
// https_body channel, and every stored preview has its piece masked. The
// same pieces sent to two collectors, or interleaved with another
// destination's requests, are read per destination.
func TestAcrossBodies(t *testing.T) {
	w := testWatch(t, 0, nil)
	w.r.mask = newMasker(nil, w.canary)
	var secret string
	for _, v := range w.canary.Values() {
		if v.Kind == canary.KindAWSSecretAccessKey {
			secret = v.Secret
		}
	}
	enc := base64.StdEncoding.EncodeToString([]byte(secret))
	t0 := time.Unix(1000, 0)
	var events []sinkEvent
	for i := 0; i*10 < len(enc); i++ {
		piece := enc[i*10 : min(len(enc), i*10+10)]
		events = append(events,
			sinkEvent{Type: "tcp", Phase: evidence.PhaseRun, Time: t0.Add(time.Duration(2*i) * time.Millisecond), TLS: true, SNI: "c.example-collector.net",
				HTTPMethod: "POST", HTTPTarget: "/c", HTTPHost: "c.example-collector.net", Body: []byte(`{"seq":` + string(rune('0'+i%10)) + `,"chunk":"` + piece + `"}`), Bytes: 100},
			sinkEvent{Type: "tcp", Phase: evidence.PhaseRun, Time: t0.Add(time.Duration(2*i+1) * time.Millisecond), HTTPMethod: "POST", HTTPTarget: "/t",
				HTTPHost: "stats.example-analytics.com", Body: []byte(`{"event":"tick"}`), Bytes: 40})
	}
	w.addNetwork(events)
	var hits []evidence.CanaryHit
	for _, h := range w.b.Exfiltration {
		if h.Canary.Kind == canary.KindAWSSecretAccessKey {
			hits = append(hits, h)
		}
	}
	if len(hits) != 1 || hits[0].Channel != "https_body" || !strings.HasSuffix(hits[0].Encoding, ", split across 6 requests") ||
		hits[0].Destination != "c.example-collector.net" {
		t.Fatalf("hits %+v; want one on https_body, split across 6 requests, to c.example-collector.net", hits)
	}
	for _, n := range w.b.Network {
		if n.HTTPHost != "c.example-collector.net" {
			if n.Preview != `{"event":"tick"}` {
				t.Errorf("another destination's preview changed: %q", n.Preview)
			}
			continue
		}
		if !strings.Contains(n.Preview, `"chunk":"[canary piece]"`) {
			t.Errorf("preview %q: want its piece masked", n.Preview)
		}
	}
	for i := 0; i*10 < len(enc); i++ {
		piece := enc[i*10 : min(len(enc), i*10+10)]
		for _, n := range w.b.Network {
			if strings.Contains(n.Preview, strings.TrimRight(piece, "=")) {
				t.Errorf("preview %q holds the piece %q of the secret", n.Preview, piece)
			}
		}
	}
}

// TestAcrossBodiesOnePieceIsNoSplit: a canary whole in one body is that
// request's find, not a split one, and a lone request is never joined.
func TestAcrossBodiesOnePieceIsNoSplit(t *testing.T) {
	w := testWatch(t, 0, nil)
	w.r.mask = newMasker(nil, w.canary)
	secret := w.canary.Values()[0].Secret
	t0 := time.Unix(1000, 0)
	w.addNetwork([]sinkEvent{
		{Type: "tcp", Phase: evidence.PhaseRun, Time: t0, HTTPMethod: "POST", HTTPHost: "a.example.net", Body: []byte(`{"k":"` + secret + `"}`)},
		{Type: "tcp", Phase: evidence.PhaseRun, Time: t0.Add(time.Millisecond), HTTPMethod: "POST", HTTPHost: "a.example.net", Body: []byte(`{"k":"harmless"}`)},
	})
	for _, h := range w.b.Exfiltration {
		if strings.Contains(h.Encoding, "split") {
			t.Errorf("hit %+v: a canary in one body is not split", h)
		}
	}
	if len(w.b.Exfiltration) == 0 {
		t.Error("the canary in one body was not found")
	}
}

// TestProgramOf: a network event's program is what its process last
// exec'ed by then, or its nearest ancestor's when it forked without
// exec'ing; unknown is empty.
func TestProgramOf(t *testing.T) {
	t0 := time.Unix(1000, 0)
	w := testWatch(t, 0, map[int][]forkRec{11: {{Time: t0.Add(time.Second), PPID: 10}}, 13: {{Time: t0, PPID: 11}}})
	w.progs = indexExecs([]execEvent{
		{PID: 12, Time: t0.Add(2 * time.Second), Exe: "/usr/bin/curl"},
		{PID: 10, Time: t0, Exe: "/usr/bin/node"},
		{PID: 12, Time: t0, Exe: "/bin/sh"},
	})
	for _, c := range []struct {
		pid  int
		at   time.Duration
		want string
	}{
		{10, 3 * time.Second, "/usr/bin/node"},
		{11, 3 * time.Second, "/usr/bin/node"}, // forked, never exec'ed
		{13, 3 * time.Second, "/usr/bin/node"}, // two forks down
		{12, time.Second, "/bin/sh"},
		{12, 3 * time.Second, "/usr/bin/curl"},
		{99, time.Second, ""},
		{0, time.Second, ""},
	} {
		if got := w.programOf(c.pid, t0.Add(c.at)); got != c.want {
			t.Errorf("programOf(%d, +%v) = %q, want %q", c.pid, c.at, got, c.want)
		}
	}
}
