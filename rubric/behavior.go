package rubric

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
)

// Reason codes emitted by the behaviour probes of rubric v2. All of them
// come from the sandbox.behavior signal, so a benchmark case can scope
// itself to behaviour with the prefix pkg.behavior.
const (
	CodeDNSLookup             = "pkg.behavior.dns.lookup"
	CodeEgressAttempt         = "pkg.behavior.egress.attempt"
	CodeEgressLiteralIP       = "pkg.behavior.egress.literal_ip"
	CodeBeacon                = "pkg.behavior.beacon"
	CodeCanaryExfiltration    = "pkg.behavior.canary_exfiltration"
	CodeFileSensitiveWrite    = "pkg.behavior.file.sensitive_write"
	CodeFileWrite             = "pkg.behavior.file.write"
	CodeProcessSpawn          = "pkg.behavior.process.spawn"
	CodeProcessShell          = "pkg.behavior.process.shell"
	CodeProcessNetworkTool    = "pkg.behavior.process.network_tool"
	CodeProcessPackageManager = "pkg.behavior.process.package_manager"
	CodeObserverIncomplete    = "pkg.behavior.observer.incomplete"
	CodeDiskFilled            = "pkg.behavior.disk.filled"
)

// Behaviour dimensions.
const (
	DimensionEgress          = "egress_resilience"
	DimensionExfiltration    = "exfiltration_resilience"
	DimensionSecretHandling  = "secret_handling"
	DimensionExecutionSafety = "execution_safety"
)

// behaviorDimensions are the dimensions whose probes read
// parameters.behavior.
var behaviorDimensions = map[string]bool{
	DimensionEgress: true, DimensionExfiltration: true, DimensionSecretHandling: true, DimensionExecutionSafety: true,
}

// observer is one of the three behaviour observers a Watch reports on.
type observer int

const (
	observerSink   observer = iota // network: the sink
	observerTracer                 // processes: the exec tracer
	observerFiles                  // files: the home-directory comparison
)

func (o observer) name() string {
	switch o {
	case observerSink:
		return "sink"
	case observerTracer:
		return "tracer"
	default:
		return "file check"
	}
}

// what says which evidence an observer provides.
func (o observer) what() string {
	switch o {
	case observerSink:
		return "network"
	case observerTracer:
		return "process"
	default:
		return "file"
	}
}

func (o observer) status(w evidence.Watch) string {
	switch o {
	case observerSink:
		return w.Sink
	case observerTracer:
		return w.Tracer
	default:
		return w.Files
	}
}

// observerOK is the status of an observer that covered its whole phase.
const observerOK = "ok"

// behavior returns the bundle's behaviour evidence and, in gap, why it is
// incomplete for a dimension that needs the given observers: an observer
// that did not cover a watched phase, or a run phase never watched because
// the sandbox run failed. A probe still emits findings for what was seen
// and then gives the zero point with gap as the reason. When there is no
// behaviour evidence at all, v is the verdict to return at once.
func (p *probe) behavior(need ...observer) (beh *evidence.Behavior, gap string, v *verdict) {
	beh = p.b.Behavior
	if beh == nil {
		z := zeroPoint("behaviour signal is observed but the bundle holds no behaviour evidence")
		return nil, "", &z
	}
	if len(beh.Watches) == 0 {
		z := zeroPoint("behaviour signal is observed but no phase was watched")
		return nil, "", &z
	}
	var gaps []string
	runWatched := false
	for _, w := range beh.Watches {
		if w.Phase == evidence.PhaseRun {
			runWatched = true
		}
		for _, o := range need {
			if st := o.status(w); st != observerOK {
				gaps = append(gaps, fmt.Sprintf("the %s did not cover the %s phase (%s), so that phase's %s evidence is incomplete",
					o.name(), orUnknown(w.Phase), orUnknown(st), o.what()))
			}
		}
	}
	if out := p.b.Sandbox.Outcome; !runWatched && out != "" && out != evidence.OutcomeOK {
		gaps = append(gaps, fmt.Sprintf("the run phase was not watched because the sandbox run ended with %s; a failed phase earns no credit", out))
	}
	return beh, strings.Join(gaps, "; "), nil
}

// watchedFor describes how long the phases were watched: "46.2s (scripts
// 4.2s, run 42s)".
func watchedFor(ws []evidence.Watch) string {
	var total int64
	parts := make([]string, 0, len(ws))
	for _, w := range ws {
		total += w.WatchedMS
		parts = append(parts, orUnknown(w.Phase)+" "+seconds(w.WatchedMS))
	}
	return seconds(total) + " watched (" + strings.Join(parts, ", ") + ")"
}

// seconds prints milliseconds as seconds, without trailing zeros: "4.2s",
// "52.14s".
func seconds(ms int64) string {
	return strconv.FormatFloat(float64(ms)/1000, 'f', -1, 64) + "s"
}

// behaviorSubject is a behaviour finding's subject: the phase, and for the
// script step the package whose lifecycle script was running.
func behaviorSubject(phase, pkg string) string {
	if phase == evidence.PhaseScripts && pkg != "" {
		return phase + ":" + pkg
	}
	return orUnknown(phase)
}

// actor names who acted in a phase, for messages.
func (p *probe) actor(phase, pkg string) string {
	switch {
	case phase == evidence.PhaseScripts && pkg != "" && p.readsPyPI():
		return "the sdist build of " + pkg
	case phase == evidence.PhaseScripts && p.readsPyPI():
		return "an sdist build"
	case phase == evidence.PhaseScripts && pkg != "":
		return "the lifecycle script of " + pkg
	case phase == evidence.PhaseScripts:
		return "a lifecycle script"
	case phase == evidence.PhaseRun:
		return "the server"
	default:
		return "package code"
	}
}

// during names a phase, for messages.
func (p *probe) during(phase string) string {
	switch {
	case phase == evidence.PhaseScripts && p.readsPyPI():
		return "during the build step"
	case phase == evidence.PhaseScripts:
		return "during the script step"
	case phase == evidence.PhaseRun:
		return "in the run phase"
	default:
		return "in phase " + strconv.Quote(phase)
	}
}

// netKey groups network events by phase, package and one more value.
type netKey struct{ phase, pkg, what string }

// netGroup collects the events of one distinct name or destination, in
// the order first seen.
type netGroup struct {
	key netKey
	// display is the name or destination as first recorded; the key may
	// be folded (DNS names compare without case).
	display string
	kinds   []string
	types   []string
	ips     []string
	detail  []string // SNI and HTTP request lines
	count   int
	bytes   int64
	// stages counts the run-phase events by stage (rubric v11 names them).
	stages map[string]int
}

func (g *netGroup) add(e evidence.NetEvent) {
	g.count++
	g.bytes += e.Bytes
	if st := netStage(e); st != "" && e.Phase == evidence.PhaseRun {
		if g.stages == nil {
			g.stages = map[string]int{}
		}
		g.stages[st]++
	}
	addUnique(&g.kinds, e.Kind)
	addUnique(&g.types, e.DNSType)
	addUnique(&g.ips, e.DstIP)
	if e.SNI != "" {
		addUnique(&g.detail, "sni "+e.SNI)
	}
	if e.HTTPMethod != "" || e.HTTPTarget != "" {
		line := strings.TrimSpace(e.HTTPMethod + " " + e.HTTPTarget)
		if e.HTTPHost != "" {
			line += " (Host " + e.HTTPHost + ")"
		}
		addUnique(&g.detail, line)
	}
}

func addUnique(list *[]string, s string) {
	if s != "" && !slices.Contains(*list, s) {
		*list = append(*list, s)
	}
}

// sortedCopy returns s sorted, so that evidence does not depend on the
// order events were recorded in.
func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	sort.Strings(c)
	return c
}

// groups collects events into groups by key, keeping first-seen order;
// findings are sorted by Evaluate, so the order only needs to be stable.
type groups struct {
	byKey map[netKey]*netGroup
	list  []*netGroup
}

func (gs *groups) add(k netKey, display string, e evidence.NetEvent) {
	if gs.byKey == nil {
		gs.byKey = map[netKey]*netGroup{}
	}
	g, ok := gs.byKey[k]
	if !ok {
		g = &netGroup{key: k, display: display}
		gs.byKey[k] = g
		gs.list = append(gs.list, g)
	}
	g.add(e)
}

// destination names where a connection went: the host the package asked
// for (HTTP Host, TLS SNI or the DNS name that led to the address) or,
// failing that, the address, with the port.
func destination(e evidence.NetEvent) string {
	host := hostOnly(e.HTTPHost)
	if host == "" {
		host = e.SNI
	}
	if host == "" {
		host = e.DNSName
	}
	if host == "" {
		host = e.LookedUp
	}
	if host == "" || e.LiteralIP {
		host = e.DstIP
	}
	return joinHostPort(strings.TrimSuffix(host, "."), e.DstPort)
}

// ipDestination is the address and port of a connection.
func ipDestination(e evidence.NetEvent) string { return joinHostPort(e.DstIP, e.DstPort) }

func joinHostPort(host string, port int) string {
	host = orUnknown(host)
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port == 0 {
		return host
	}
	return host + ":" + strconv.Itoa(port)
}

// hostOnly strips a port from an HTTP Host value.
func hostOnly(h string) string {
	if strings.HasPrefix(h, "[") {
		if i := strings.IndexByte(h, ']'); i > 0 {
			return h[1:i]
		}
		return h
	}
	if i := strings.LastIndexByte(h, ':'); i >= 0 && strings.IndexByte(h, ':') == i {
		return h[:i]
	}
	return h
}

func isDNS(e evidence.NetEvent) bool { return e.Kind == "dns" }

func scoreEgress(p *probe) verdict {
	beh, gap, v := p.behavior(observerSink)
	if v != nil {
		return *v
	}
	v11 := p.atLeast(beaconFrom)
	var lookups, attempts, literals groups
	var beacon []evidence.NetEvent
	for _, e := range beh.Network {
		if e.Phase == evidence.PhaseRun && p.byCall(e.Stage, e.Call) {
			continue // a tool call's doing (v13): judged by pkg.behavior.tool.*
		}
		switch {
		case isDNS(e):
			name := strings.TrimSuffix(e.DNSName, ".")
			lookups.add(netKey{e.Phase, e.Package, strings.ToLower(name)}, name, e)
		default:
			dst := destination(e)
			attempts.add(netKey{e.Phase, e.Package, dst}, dst, e)
		}
		if e.LiteralIP && !(v11 && linkLocal(e)) {
			dst := ipDestination(e)
			literals.add(netKey{e.Phase, e.Package, dst}, dst, e)
		}
		if e.Phase == evidence.PhaseRun && e.AfterHandshake {
			beacon = append(beacon, e)
		}
	}
	for _, g := range lookups.list {
		k := g.key
		ev := "dns " + strings.Join(sortedCopy(g.types), ",") + " " + orUnknown(g.display)
		if g.count > 1 {
			ev += fmt.Sprintf("; %d queries", g.count)
		}
		msg := fmt.Sprintf("%s looked up %q %s", p.actor(k.phase, k.pkg), g.display, p.during(k.phase))
		if v11 {
			m, e := stagePhrase(g.stages)
			msg += m
			if e != "" {
				ev += "; " + e
			}
		}
		p.emitCapped(CodeDNSLookup, behaviorSubject(k.phase, k.pkg), g.display, "names looked up", msg, p.clip(ev))
	}
	for _, g := range attempts.list {
		k := g.key
		kinds := strings.Join(sortedCopy(g.kinds), "/")
		parts := []string{orUnknown(kinds) + " " + k.what}
		if ips := sortedCopy(g.ips); len(ips) > 0 {
			parts = append(parts, "address "+strings.Join(ips, ", "))
		}
		parts = append(parts, sortedCopy(g.detail)...)
		parts = append(parts, plural(g.count, "attempt"), fmt.Sprintf("%d bytes sent", g.bytes))
		msg := fmt.Sprintf("%s attempted a %s connection to %s %s", p.actor(k.phase, k.pkg), orUnknown(kinds), k.what, p.during(k.phase))
		if v11 {
			m, e := stagePhrase(g.stages)
			msg += m
			if e != "" {
				parts = append(parts, e)
			}
		}
		p.emitCapped(CodeEgressAttempt, behaviorSubject(k.phase, k.pkg), k.what, "destinations tried", msg, p.clip(strings.Join(parts, "; ")))
	}
	for _, g := range literals.list {
		k := g.key
		p.emit(CodeEgressLiteralIP, behaviorSubject(k.phase, k.pkg),
			fmt.Sprintf("%s connected to %s, an address no DNS answer gave out, %s", p.actor(k.phase, k.pkg), k.what, p.during(k.phase)),
			p.clip(fmt.Sprintf("%s %s; %s", strings.Join(sortedCopy(g.kinds), "/"), k.what, plural(g.count, "attempt"))))
	}
	// From rubric v11 a beacon is repeated contact with one destination
	// while idle (behavior_beacon.go); before, any event after the listing.
	beacons := len(beacon)
	switch {
	case v11:
		beacons = p.emitBeacons(beh)
	case beacons > 0:
		p.emitBeacon(beacon)
	}

	watched := watchedFor(beh.Watches)
	if gap != "" {
		return zeroPoint(gap)
	}
	eg := p.p.Behavior.Egress
	switch {
	case len(literals.list) > 0 || beacons > 0:
		var why []string
		if len(literals.list) > 0 {
			why = append(why, plural(len(literals.list), "literal-IP destination"))
		}
		switch {
		case v11 && beacons > 0:
			why = append(why, "repeated contact while idle with "+plural(beacons, "destination"))
		case beacons > 0:
			why = append(why, "network activity after the MCP listing ended")
		}
		return scored(0, strings.Join(why, "; ")+"; "+watched)
	case len(attempts.list) > 0:
		return scored(eg.AttemptScore, fmt.Sprintf("connection attempts to %s; %s", plural(len(attempts.list), "destination"), watched))
	case len(lookups.list) > 0:
		return scored(eg.DNSOnlyScore, fmt.Sprintf("DNS lookups only, of %s; %s", plural(len(lookups.list), "name"), watched))
	default:
		return scored(100, "no network activity seen in "+watched)
	}
}

// emitBeacon reports network activity in the run phase after the MCP
// listing ended, with the number of attempts and the interval between
// them. Events closer together than beacon_burst_gap_ms (a DNS lookup and
// the connection it leads to) make one attempt.
func (p *probe) emitBeacon(events []evidence.NetEvent) {
	times := make([]time.Time, 0, len(events))
	timed := true
	var dests []string
	for _, e := range events {
		if e.Time.IsZero() {
			timed = false
		}
		times = append(times, e.Time)
		if isDNS(e) {
			addUnique(&dests, "dns "+orUnknown(strings.TrimSuffix(e.DNSName, ".")))
		} else {
			addUnique(&dests, orUnknown(e.Kind)+" "+destination(e))
		}
	}
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	gap := time.Duration(p.p.Behavior.Egress.BeaconBurstGapMS) * time.Millisecond
	starts := []time.Time{times[0]}
	for i := 1; i < len(times); i++ {
		if times[i].Sub(times[i-1]) >= gap {
			starts = append(starts, times[i])
		}
	}
	msg := fmt.Sprintf("the server made %s in the run phase after the MCP listing ended", plural(len(starts), "network attempt"))
	switch {
	case !timed:
		msg += "; the times of the attempts were not recorded"
		starts = nil
	case len(starts) > 1:
		intervals := make([]time.Duration, 0, len(starts)-1)
		for i := 1; i < len(starts); i++ {
			intervals = append(intervals, starts[i].Sub(starts[i-1]))
		}
		slices.Sort(intervals)
		median := intervals[len(intervals)/2]
		if len(intervals)%2 == 0 {
			median = (intervals[len(intervals)/2-1] + median) / 2
		}
		lo, hi := intervals[0], intervals[len(intervals)-1]
		msg += ", one every " + dur(median)
		if dur(lo) != dur(hi) {
			msg += " (median; intervals " + dur(lo) + " to " + dur(hi) + ")"
		}
	}
	ev := fmt.Sprintf("%s to %s", plural(len(events), "event"), strings.Join(sortedCopy(dests), ", "))
	if len(starts) > 0 {
		ev += "; first " + starts[0].UTC().Format(time.RFC3339Nano) + ", last " + starts[len(starts)-1].UTC().Format(time.RFC3339Nano)
	}
	p.emit(CodeBeacon, evidence.PhaseRun, msg, p.clip(ev))
}

// dur prints a duration as seconds with at most one decimal: "5s", "4.9s".
func dur(d time.Duration) string {
	return formatScore(round1(d.Seconds())) + "s"
}

func scoreExfiltration(p *probe) verdict {
	beh, gap, v := p.behavior(observerSink)
	if v != nil {
		return *v
	}
	for _, h := range beh.Exfiltration {
		msg := fmt.Sprintf("the %s canary (planted at %s) left %s by %s, encoded as %s", orUnknown(h.Canary.Kind), orUnknown(h.Canary.Where),
			p.during(h.Phase), orUnknown(h.Channel), orUnknown(h.Encoding))
		if h.Destination != "" {
			msg += ", to " + h.Destination
		}
		if h.Phase == evidence.PhaseScripts && h.Package != "" {
			msg += ", while " + p.actor(h.Phase, h.Package) + " ran"
		}
		msg += p.callPhrase(h.Call)
		masked := h.Masked
		if masked == "" {
			masked = "(masked value not recorded)"
		}
		p.emit(CodeCanaryExfiltration, behaviorSubject(h.Phase, h.Package), msg, p.clip(masked))
	}
	added, note := p.emitAddedRecipients()
	if gap != "" {
		return zeroPoint(gap + note)
	}
	switch n := len(beh.Exfiltration); {
	case n > 0:
		return scored(0, fmt.Sprintf("canary credentials seen leaving %s", plural(n, "time"))+note)
	case added > 0:
		return scored(0, plural(added, "recipient")+" added to a request during a tool call"+note)
	}
	return scored(100, "no canary credential seen leaving in "+watchedFor(beh.Watches)+note)
}

func scoreSecretHandling(p *probe) verdict {
	beh, gap, v := p.behavior(observerFiles)
	if v != nil {
		return *v
	}
	n := 0
	for _, f := range beh.Files {
		if !p.sensitive(f) {
			continue
		}
		n++
		p.emitInDir(CodeFileSensitiveWrite, behaviorSubject(f.Phase, f.Package), f.Path, "sensitive files",
			fmt.Sprintf("%s %s %s, a sensitive file (%s), %s", p.actor(f.Phase, f.Package), orUnknown(f.Op), f.Path, orUnknown(f.Why), p.during(f.Phase)),
			p.clip(orUnknown(f.Op)+" "+f.Path+" ("+orUnknown(f.Why)+")"),
			func(dir string, n int, ex []string) string {
				return fmt.Sprintf("%s created, modified or deleted %d sensitive files in %s %s: %s", p.actor(f.Phase, f.Package), n, dir, p.during(f.Phase), examplesText(ex, n))
			})
	}
	sent, note := p.emitSecretToArgumentHost()
	if gap != "" {
		return zeroPoint(gap + note)
	}
	switch {
	case n > 0:
		return scored(0, plural(n, "sensitive file")+" created, modified or deleted"+note)
	case sent > 0:
		return scored(0, "a configured secret sent to a host the call's arguments named, by "+plural(sent, "tool")+note)
	}
	return scored(100, "no sensitive file changed in "+watchedFor(beh.Watches)+note)
}
