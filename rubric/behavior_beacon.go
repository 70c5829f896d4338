package rubric

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
)

// Rubric v11's beacon: repeated, unrequested contact with one destination.
// Before v11 any network event in the run phase after the listing ended
// was a beacon, so that a single update check, or a telemetry flush sent
// while the server shut down, scored egress_resilience 0 like a literal-IP
// dropper. From v11 a beacon needs, during the idle watch (no request of
// ours in flight), at least beaconMinAttempts attempts to the same
// destination once bursts are collapsed (beacon_burst_gap_ms), at regular
// intervals (the longest at most beaconMaxIntervalRatio times the
// shortest). What the server sends after its stdin was closed is its
// reaction to the end of the session, never repeated contact by itself,
// and counts toward no beacon. One or two contacts are egress, reported by
// pkg.behavior.egress.attempt and pkg.behavior.dns.lookup with their stage.
// The reason for both numbers is written in v11.yaml under
// parameters.behavior.egress; TestBeaconRuleWrittenInRubric keeps the two
// in step.
const (
	beaconFrom             = "11"
	beaconMinAttempts      = 3
	beaconMaxIntervalRatio = 1.5
)

// stageAfterListing is the stage of a run-phase event after the listing in
// a bundle recorded before stages were (evidence.NetEvent.Stage empty):
// idle or shutdown, which the evidence cannot tell apart. When the bundle
// records no shutdown sequence either (session.shutdown), its run waited
// 200 ms after closing stdin before it killed the server, so no repeated
// contact fits in its shutdown, and such events count toward a beacon as
// idle ones do; when it does (the few runs recorded between the two), its
// shutdown lasted up to twice the grace, and they count toward none.
const stageAfterListing = "after_listing"

// netStage is the stage of a run-phase network event, "" when the
// evidence does not say (a bundle recorded before stages, at start-up).
func netStage(e evidence.NetEvent) string {
	switch {
	case e.Stage != "":
		return e.Stage
	case e.AfterHandshake:
		return stageAfterListing
	}
	return ""
}

// stageOrder is the order stages are listed in.
var stageOrder = []string{evidence.StageStartup, evidence.StageIdle, evidence.StageShutdown, stageAfterListing}

// stageWords describes a stage in a finding's message.
func stageWords(stage string) string {
	switch stage {
	case evidence.StageStartup:
		return "at start-up or while a request of ours was in flight"
	case evidence.StageIdle:
		return "during the idle watch, with no request of ours in flight"
	case evidence.StageShutdown:
		return "on its way out, after its stdin was closed"
	case stageAfterListing:
		return "after the MCP listing ended"
	}
	return "in stage " + stage
}

// stagePhrase names, from rubric v11, when a run-phase group of network
// events came, for its message (" on its way out, after its stdin was
// closed", or ": 2 at start-up ..., 1 on its way out ...") and its
// evidence ("stage shutdown", "stages startup 2, shutdown 1"). Both are
// empty when the evidence records no stage.
func stagePhrase(stages map[string]int) (msg, ev string) {
	var named []string
	for _, s := range stageOrder {
		if stages[s] > 0 {
			named = append(named, s)
		}
	}
	var other []string // a stage this build does not know, after the others
	for s := range stages {
		if s != "" && !slices.Contains(stageOrder, s) {
			other = append(other, s)
		}
	}
	slices.Sort(other)
	named = append(named, other...)
	switch len(named) {
	case 0:
		return "", ""
	case 1:
		return ", " + stageWords(named[0]), "stage " + named[0]
	}
	var words, counts []string
	for _, s := range named {
		words = append(words, fmt.Sprintf("%d %s", stages[s], stageWords(s)))
		counts = append(counts, fmt.Sprintf("%s %d", s, stages[s]))
	}
	return ": " + strings.Join(words, "; "), "stages " + strings.Join(counts, ", ")
}

// destHost is the host a network event went to, without its port: the
// name looked up, or the host the package asked for, else the address.
func destHost(e evidence.NetEvent) string {
	if isDNS(e) {
		return strings.ToLower(strings.TrimSuffix(e.DNSName, "."))
	}
	host := hostOnly(e.HTTPHost)
	for _, h := range []string{e.SNI, e.DNSName, e.LookedUp} {
		if host == "" {
			host = h
		}
	}
	if host == "" || e.LiteralIP {
		host = e.DstIP
	}
	return strings.ToLower(strings.TrimSuffix(host, "."))
}

// beaconCandidate is the run-phase contact with one host after the
// listing.
type beaconCandidate struct {
	host     string
	idle     []evidence.NetEvent // idle watch (or after the listing, stage unknown)
	shutdown []evidence.NetEvent // after stdin was closed
}

// beacon is a candidate that met the rule: starts are its attempts.
type beacon struct {
	beaconCandidate
	starts []time.Time
}

// beacons returns the destinations the server contacted repeatedly while
// idle, as rubric v11 defines a beacon, in the order first contacted.
func (p *probe) beacons(beh *evidence.Behavior) []beacon {
	// Events of unknown stage are idle ones only where the shutdown could
	// not hold repeated contact (see stageAfterListing).
	unknownIdle := p.b.Session == nil || p.b.Session.Shutdown == nil
	byHost := map[string]*beaconCandidate{}
	var order []*beaconCandidate
	for _, e := range beh.Network {
		if e.Phase != evidence.PhaseRun {
			continue
		}
		st := netStage(e)
		if st != evidence.StageIdle && st != evidence.StageShutdown && (st != stageAfterListing || !unknownIdle) {
			continue
		}
		h := destHost(e)
		c, ok := byHost[h]
		if !ok {
			c = &beaconCandidate{host: h}
			byHost[h] = c
			order = append(order, c)
		}
		if st == evidence.StageShutdown {
			c.shutdown = append(c.shutdown, e)
		} else {
			c.idle = append(c.idle, e)
		}
	}
	gap := time.Duration(p.p.Behavior.Egress.BeaconBurstGapMS) * time.Millisecond
	var out []beacon
	for _, c := range order {
		starts, ok := attempts(c.idle, gap)
		if !ok || len(starts) < beaconMinAttempts || !regular(starts) {
			continue
		}
		out = append(out, beacon{beaconCandidate: *c, starts: starts})
	}
	return out
}

// attempts collapses events into attempts: an event less than gap after
// the first event of the current attempt belongs to it (a lookup and the
// connection it leads to, a client's immediate retries), so that a loop
// faster than gap still counts one attempt per gap. ok is false when an
// event's time was not recorded.
func attempts(events []evidence.NetEvent, gap time.Duration) (starts []time.Time, ok bool) {
	times := make([]time.Time, 0, len(events))
	for _, e := range events {
		if e.Time.IsZero() {
			return nil, false
		}
		times = append(times, e.Time)
	}
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	for _, t := range times {
		if len(starts) == 0 || t.Sub(starts[len(starts)-1]) >= gap {
			starts = append(starts, t)
		}
	}
	return starts, true
}

// intervals are the times between consecutive attempts, shortest first.
func intervals(starts []time.Time) []time.Duration {
	d := make([]time.Duration, 0, len(starts))
	for i := 1; i < len(starts); i++ {
		d = append(d, starts[i].Sub(starts[i-1]))
	}
	slices.Sort(d)
	return d
}

// regular reports whether attempts came at regular intervals: the longest
// at most beaconMaxIntervalRatio times the shortest. A check-in loop waits
// about the same time each round; a client retrying a failed request with
// backoff doubles its wait.
func regular(starts []time.Time) bool {
	d := intervals(starts)
	if len(d) == 0 || d[0] <= 0 {
		return false
	}
	return float64(d[len(d)-1]) <= beaconMaxIntervalRatio*float64(d[0])
}

// emitBeacons emits rubric v11's beacon findings and returns how many.
func (p *probe) emitBeacons(beh *evidence.Behavior) int {
	idle := "the idle watch"
	for _, w := range beh.Watches {
		if w.Phase == evidence.PhaseRun && w.IdleMS > 0 {
			idle = "the " + seconds(w.IdleMS) + " idle watch"
		}
	}
	bs := p.beacons(beh)
	for _, b := range bs {
		d := intervals(b.starts)
		median := d[len(d)/2]
		if len(d)%2 == 0 {
			median = (d[len(d)/2-1] + median) / 2
		}
		first, last := b.starts[0], b.starts[len(b.starts)-1]
		msg := fmt.Sprintf("the server contacted %s %d times during %s, with no request of ours in flight: one every %s",
			b.host, len(b.starts), idle, dur(median))
		if lo, hi := dur(d[0]), dur(d[len(d)-1]); lo != hi {
			msg += " (median; intervals " + lo + " to " + hi + ")"
		}
		msg += " over " + dur(last.Sub(first))
		// What came after stdin was closed is told, not counted.
		gap := time.Duration(p.p.Behavior.Egress.BeaconBurstGapMS) * time.Millisecond
		after, _ := attempts(b.shutdown, gap)
		if len(after) > 0 {
			msg += fmt.Sprintf("; %s more after its stdin was closed, not counted", plural(len(after), "attempt"))
		}
		var dests []string
		stage := evidence.StageIdle
		for _, e := range b.idle {
			if isDNS(e) {
				addUnique(&dests, "dns "+orUnknown(strings.TrimSuffix(e.DNSName, ".")))
			} else {
				addUnique(&dests, orUnknown(e.Kind)+" "+destination(e))
			}
			if netStage(e) == stageAfterListing {
				stage = stageAfterListing
			}
		}
		ev := fmt.Sprintf("%d attempts (%s) to %s; first %s, last %s; stage %s", len(b.starts), plural(len(b.idle), "event"),
			strings.Join(sortedCopy(dests), ", "), first.UTC().Format(time.RFC3339Nano), last.UTC().Format(time.RFC3339Nano), stage)
		if len(b.shutdown) > 0 {
			ev += fmt.Sprintf("; %s at shutdown, not counted", plural(len(b.shutdown), "event"))
		}
		p.emit(CodeBeacon, evidence.PhaseRun, msg, p.clip(ev))
	}
	return len(bs)
}
