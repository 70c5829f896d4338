package rubric

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
)

// inStage places a run-phase event in a stage of the run, ms after the listing
// ended (t0), as the sandbox records it since stages exist.
func inStage(e evidence.NetEvent, stage string, ms int) evidence.NetEvent {
	e.Phase, e.Stage, e.Time = "run", stage, t0.Add(time.Duration(ms)*time.Millisecond)
	e.AfterHandshake = stage == evidence.StageIdle || stage == evidence.StageShutdown
	return e
}

// legacyAt is an event after the listing in a bundle recorded before
// stages: AfterHandshake set, no stage.
func legacyAt(e evidence.NetEvent, ms int) evidence.NetEvent {
	e.Phase, e.Time, e.AfterHandshake = "run", t0.Add(time.Duration(ms)*time.Millisecond), true
	return e
}

// lookupAndConnect is what a client does for one HTTPS request to host: a
// DNS query, then a connection to the address the sink gave out, whose
// TLS ClientHello names the host.
func lookupAndConnect(stage, host string, ms int) []evidence.NetEvent {
	c := tcp("run", "", host, "198.18.0.4", 443)
	c.DNSName, c.LookedUp, c.Bytes = "", host, 1609
	return []evidence.NetEvent{inStage(dns("run", "", host, "A"), stage, ms), inStage(c, stage, ms+1)}
}

// every returns the lookups and connections of a client that contacts host
// at each of the given times (ms after the listing ended).
func every(stage, host string, ms ...int) []evidence.NetEvent {
	var out []evidence.NetEvent
	for _, m := range ms {
		out = append(out, lookupAndConnect(stage, host, m)...)
	}
	return out
}

// TestBeaconIsRepeatedContact: from rubric v11 a beacon is repeated,
// unrequested contact with one destination during the idle watch, not any
// network event after the listing. The cases are what real servers did in
// the sandbox (paraphrased from their scans) and what a check-in loop
// does; v2 to v10 score each exactly as before.
func TestBeaconIsRepeatedContact(t *testing.T) {
	const (
		beacon  = "pkg.behavior.beacon run"
		lookup  = "pkg.behavior.dns.lookup run"
		attempt = "pkg.behavior.egress.attempt run"
	)
	tests := []struct {
		name     string
		net      []evidence.NetEvent
		shutdown *evidence.Shutdown // session.shutdown, when the bundle records it
		legacy   outcome            // rubrics v2 to v10
		v11      outcome
	}{
		{
			// mongodb-mcp-server@3.0.4: its Atlas telemetry batch is
			// POSTed to cloud.mongodb.com when the session closes.
			name:   "telemetry_flush_on_exit",
			net:    lookupAndConnect(evidence.StageShutdown, "cloud.mongodb.com", 2190),
			legacy: outcome{State: StateScored, Score: 0, Findings: []string{beacon, lookup, attempt}},
			v11:    outcome{State: StateScored, Score: 40, Findings: []string{lookup, attempt}},
		},
		{
			// chrome-devtools-mcp@1.11.0: its update check asks the npm
			// registry for the latest version, once.
			name:   "update_check_while_idle",
			net:    lookupAndConnect(evidence.StageIdle, "registry.npmjs.org", 400),
			legacy: outcome{State: StateScored, Score: 0, Findings: []string{beacon, lookup, attempt}},
			v11:    outcome{State: StateScored, Score: 40, Findings: []string{lookup, attempt}},
		},
		{
			// @wonderwhy-er/desktop-commander@0.2.52: GA4 events through
			// the vendor's proxy, three sends and their fallback host in
			// 90 ms, a burst: one attempt each.
			name: "telemetry_burst_with_fallback",
			net: append(every(evidence.StageIdle, "telemetry.desktopcommander.app", 45, 70, 93),
				every(evidence.StageIdle, "dc-telemetry-proxy-83847352264.europe-west1.run.app", 51, 74, 133)...),
			legacy: outcome{State: StateScored, Score: 0, Findings: []string{beacon, lookup, lookup, attempt, attempt}},
			v11:    outcome{State: StateScored, Score: 40, Findings: []string{lookup, lookup, attempt, attempt}},
		},
		{
			// A request and its retry a second later: two attempts.
			name:   "request_and_retry",
			net:    every(evidence.StageIdle, "api.example-vendor.com", 300, 1400),
			legacy: outcome{State: StateScored, Score: 0, Findings: []string{beacon, lookup, attempt}},
			v11:    outcome{State: StateScored, Score: 40, Findings: []string{lookup, attempt}},
		},
		{
			// Twice while idle and once more on the way out: the flush on
			// exit is not part of a loop.
			name: "two_idle_and_a_flush",
			net: append(every(evidence.StageIdle, "stats.example-vendor.com", 200, 1300),
				lookupAndConnect(evidence.StageShutdown, "stats.example-vendor.com", 2150)...),
			legacy: outcome{State: StateScored, Score: 0, Findings: []string{beacon, lookup, attempt}},
			v11:    outcome{State: StateScored, Score: 40, Findings: []string{lookup, attempt}},
		},
		{
			// A check-in loop: once a second through a 5 s idle watch.
			name:   "check_in_loop",
			net:    every(evidence.StageIdle, "c2.example.net", 150, 1150, 2160, 3150, 4140),
			legacy: outcome{State: StateScored, Score: 0, Findings: []string{beacon, lookup, attempt}},
			v11:    outcome{State: StateScored, Score: 0, Findings: []string{beacon, lookup, attempt}},
		},
		{
			// A loop faster than the burst gap (every 400 ms): v10 chained
			// its events into one attempt; v11 counts one attempt a gap.
			name:   "fast_loop",
			net:    every(evidence.StageIdle, "c2.example.net", 0, 400, 800, 1200, 1600, 2000, 2400, 2800),
			legacy: outcome{State: StateScored, Score: 0, Findings: []string{beacon, lookup, attempt}},
			v11:    outcome{State: StateScored, Score: 0, Findings: []string{beacon, lookup, attempt}},
		},
		{
			// Retries of a failed request with exponential backoff (1 s,
			// 2 s, 4 s): repeated, but not a loop.
			name:   "retry_with_backoff",
			net:    every(evidence.StageIdle, "api.example-vendor.com", 100, 1100, 3100, 7100),
			legacy: outcome{State: StateScored, Score: 0, Findings: []string{beacon, lookup, attempt}},
			v11:    outcome{State: StateScored, Score: 40, Findings: []string{lookup, attempt}},
		},
		{
			// Three hosts once each: repeated contact, but not with one
			// destination.
			name: "three_hosts_once_each",
			net: append(append(lookupAndConnect(evidence.StageIdle, "a.example-vendor.com", 100),
				lookupAndConnect(evidence.StageIdle, "b.example-vendor.com", 1100)...),
				lookupAndConnect(evidence.StageIdle, "c.example-vendor.com", 2100)...),
			legacy: outcome{State: StateScored, Score: 0, Findings: []string{beacon, lookup, lookup, lookup, attempt, attempt, attempt}},
			v11:    outcome{State: StateScored, Score: 40, Findings: []string{lookup, lookup, lookup, attempt, attempt, attempt}},
		},
		{
			// A loop that goes on after stdin was closed (a server that
			// ignores it until SIGTERM): the idle attempts decide.
			name: "loop_through_shutdown",
			net: append(every(evidence.StageIdle, "c2.example.net", 100, 1100, 2100),
				every(evidence.StageShutdown, "c2.example.net", 3100, 4100)...),
			legacy: outcome{State: StateScored, Score: 0, Findings: []string{beacon, lookup, attempt}},
			v11:    outcome{State: StateScored, Score: 0, Findings: []string{beacon, lookup, attempt}},
		},
		{
			// Many sends, all after stdin was closed: never a beacon.
			name:   "only_at_shutdown",
			net:    every(evidence.StageShutdown, "stats.example-vendor.com", 100, 1100, 2100, 3100),
			legacy: outcome{State: StateScored, Score: 0, Findings: []string{beacon, lookup, attempt}},
			v11:    outcome{State: StateScored, Score: 40, Findings: []string{lookup, attempt}},
		},
		{
			// Traffic of the second listing, a request of ours, is not
			// after the listing for either version.
			name:   "during_the_relisting",
			net:    every(evidence.StageStartup, "api.example-vendor.com", 2100, 3100, 4100),
			legacy: outcome{State: StateScored, Score: 40, Findings: []string{lookup, attempt}},
			v11:    outcome{State: StateScored, Score: 40, Findings: []string{lookup, attempt}},
		},
		{
			// A bundle recorded before stages: one lookup after the
			// listing (what v10's own case held).
			name:   "legacy_bundle_one_lookup",
			net:    []evidence.NetEvent{legacyAt(dns("run", "", "c2.example.net", "A"), 5000)},
			legacy: outcome{State: StateScored, Score: 0, Findings: []string{beacon, lookup}},
			v11:    outcome{State: StateScored, Score: 80, Findings: []string{lookup}},
		},
		{
			// A bundle recorded before stages with a loop after the
			// listing: rescored as a beacon from the stored evidence.
			name: "legacy_bundle_loop",
			net: []evidence.NetEvent{legacyAt(dns("run", "", "c2.example.net", "A"), 1000), legacyAt(dns("run", "", "c2.example.net", "A"), 2000),
				legacyAt(dns("run", "", "c2.example.net", "A"), 3000)},
			legacy: outcome{State: StateScored, Score: 0, Findings: []string{beacon, lookup}},
			v11:    outcome{State: StateScored, Score: 0, Findings: []string{beacon, lookup}},
		},
		{
			// The same, recorded after the stdio shutdown sequence and
			// before stages: the events may be the shutdown's.
			name: "legacy_bundle_loop_with_shutdown_sequence",
			net: []evidence.NetEvent{legacyAt(dns("run", "", "c2.example.net", "A"), 1000), legacyAt(dns("run", "", "c2.example.net", "A"), 2000),
				legacyAt(dns("run", "", "c2.example.net", "A"), 3000)},
			shutdown: &evidence.Shutdown{Ended: evidence.EndedTerm, StdinWaitMS: 2000, TermWaitMS: 1500, GraceMS: 2000},
			legacy:   outcome{State: StateScored, Score: 0, Findings: []string{beacon, lookup}},
			v11:      outcome{State: StateScored, Score: 80, Findings: []string{lookup}},
		},
		{
			// Times not recorded: the repetition cannot be shown.
			name: "untimed",
			net: func() []evidence.NetEvent {
				out := every(evidence.StageIdle, "c2.example.net", 100, 1100, 2100)
				for i := range out {
					out[i].Time = time.Time{}
				}
				return out
			}(),
			legacy: outcome{State: StateScored, Score: 0, Findings: []string{beacon, lookup, attempt}},
			v11:    outcome{State: StateScored, Score: 40, Findings: []string{lookup, attempt}},
		},
		{
			// A literal IP scores 0 under both, beacon or not.
			name: "literal_ip_once_after_listing",
			net: func() []evidence.NetEvent {
				e := inStage(tcp("run", "", "", "169.254.169.254", 80), evidence.StageIdle, 300)
				e.LiteralIP, e.SNI, e.HTTPMethod, e.HTTPTarget = true, "", "GET", "/metadata/instance/compute?api-version=2017-08-01&format=json"
				return []evidence.NetEvent{e}
			}(),
			legacy: outcome{State: StateScored, Score: 0, Findings: []string{beacon, attempt, "pkg.behavior.egress.literal_ip run"}},
			// The Azure metadata service's fixed link-local address is
			// egress from v11, not a literal-IP dropper
			// (behavior_exec.go).
			v11: outcome{State: StateScored, Score: 40, Findings: []string{attempt}},
		},
		{
			name: "literal_ip_once_elsewhere",
			net: func() []evidence.NetEvent {
				e := inStage(tcp("run", "", "", "203.0.113.7", 8080), evidence.StageIdle, 300)
				e.LiteralIP, e.SNI, e.HTTPMethod, e.HTTPTarget = true, "", "POST", "/hb"
				return []evidence.NetEvent{e}
			}(),
			legacy: outcome{State: StateScored, Score: 0, Findings: []string{beacon, attempt, "pkg.behavior.egress.literal_ip run"}},
			v11:    outcome{State: StateScored, Score: 0, Findings: []string{attempt, "pkg.behavior.egress.literal_ip run"}},
		},
	}
	for _, tc := range tests {
		for _, v := range Versions() {
			r := mustLoad(t, v)
			if _, ok := r.Dimension(DimensionEgress); !ok {
				continue
			}
			t.Run(tc.name+"/v"+v, func(t *testing.T) {
				b := okBundle()
				watched(func(bh *evidence.Behavior) {
					bh.Watches[1].IdleMS = 5000
					bh.Network = append(bh.Network, tc.net...)
				})(b)
				b.Session.Shutdown = tc.shutdown
				want := tc.legacy
				if compareVersions(v, beaconFrom) >= 0 {
					want = tc.v11
				}
				if d := diff(want.under(v), outcomeOf(Evaluate(b, r), DimensionEgress)); d != "" {
					t.Errorf("egress_resilience (-want +got):\n%s", d)
				}
			})
		}
	}
}

// TestBeaconFindingTextV11: the beacon states what was observed (how many
// attempts, to what, how often, over how long, in which stage), and the
// egress findings of contact that is not a beacon name its stage.
func TestBeaconFindingTextV11(t *testing.T) {
	r := mustLoad(t, "11")
	b := okBundle()
	watched(func(bh *evidence.Behavior) {
		bh.Watches[1].IdleMS = 5000
		bh.Network = append(bh.Network, every(evidence.StageIdle, "c2.example.net", 150, 1150, 2160, 3150, 4140)...)
		bh.Network = append(bh.Network, lookupAndConnect(evidence.StageShutdown, "c2.example.net", 5200)...)
		bh.Network = append(bh.Network, lookupAndConnect(evidence.StageShutdown, "cloud.mongodb.com", 5230)...)
		bh.Network = append(bh.Network, lookupAndConnect(evidence.StageStartup, "registry.npmjs.org", -900)...)
		bh.Network = append(bh.Network, lookupAndConnect(evidence.StageIdle, "registry.npmjs.org", 600)...)
	})(b)
	res := Evaluate(b, r)
	got := map[string]Finding{}
	for _, f := range res.Findings {
		if f.Dimension == DimensionEgress {
			got[f.Code+" "+f.Message] = f
		}
	}
	want := []Finding{
		{
			Code: CodeBeacon, Kind: KindFinding, Severity: SeverityHigh, Dimension: DimensionEgress, Subject: "run",
			Message: "the server contacted c2.example.net 5 times during the 5s idle watch, with no request of ours in flight: one every 1s " +
				"over 4s; 1 attempt more after its stdin was closed, not counted",
			Evidence: "5 attempts (10 events) to dns c2.example.net, tcp c2.example.net:443; first 2026-05-01T12:00:30.15Z, " +
				"last 2026-05-01T12:00:34.14Z; stage idle; 2 events at shutdown, not counted",
		},
		{
			Code: CodeEgressAttempt, Kind: KindFinding, Severity: SeverityMedium, Dimension: DimensionEgress, Subject: "run",
			Message:  "the server attempted a tcp connection to cloud.mongodb.com:443 in the run phase, on its way out, after its stdin was closed",
			Evidence: "tcp cloud.mongodb.com:443; address 198.18.0.4; sni cloud.mongodb.com; 1 attempt; 1609 bytes sent; stage shutdown",
		},
		{
			Code: CodeDNSLookup, Kind: KindFinding, Severity: SeverityLow, Dimension: DimensionEgress, Subject: "run",
			Message:  `the server looked up "cloud.mongodb.com" in the run phase, on its way out, after its stdin was closed`,
			Evidence: "dns A cloud.mongodb.com; stage shutdown",
		},
		{
			Code: CodeEgressAttempt, Kind: KindFinding, Severity: SeverityMedium, Dimension: DimensionEgress, Subject: "run",
			Message: "the server attempted a tcp connection to registry.npmjs.org:443 in the run phase: 1 at start-up or while a request of ours " +
				"was in flight; 1 during the idle watch, with no request of ours in flight",
			Evidence: "tcp registry.npmjs.org:443; address 198.18.0.4; sni registry.npmjs.org; 2 attempts; 3218 bytes sent; stages startup 1, idle 1",
		},
	}
	for _, w := range want {
		g, ok := got[w.Code+" "+w.Message]
		if !ok {
			var have []string
			for k := range got {
				if strings.HasPrefix(k, w.Code) {
					have = append(have, k)
				}
			}
			t.Errorf("no finding %s %q; have %q", w.Code, w.Message, have)
			continue
		}
		if d := diff(w, g); d != "" {
			t.Errorf("%s (-want +got):\n%s", w.Code, d)
		}
		if def, ok := r.Code(g.Code); ok {
			checkAgainstCatalog(t, g, def)
		}
	}
	if d := dim(res, DimensionEgress); d.Score != 0 || !strings.Contains(d.Reason, "repeated contact while idle with 1 destination") {
		t.Errorf("egress_resilience %v %q, want 0 for the beacon", d.Score, d.Reason)
	}
}

// TestBeaconRuleWrittenInRubric: the numbers of v11's beacon rule, fixed
// in code for the version, are the ones its file gives the reason for.
func TestBeaconRuleWrittenInRubric(t *testing.T) {
	data, err := os.ReadFile("versions/v" + beaconFrom + ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(strings.ReplaceAll(string(data), "#", " ")), " ")
	for _, want := range []string{
		"at least " + strconv.Itoa(beaconMinAttempts) + " attempts to the same host",
		"the longest interval at most " + strconv.FormatFloat(beaconMaxIntervalRatio, 'f', -1, 64) + " times the shortest",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("v%s.yaml does not state the beacon rule %q", beaconFrom, want)
		}
	}
}
