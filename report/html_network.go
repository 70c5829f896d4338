package report

import (
	"net"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/verifymcp/verifymcp/evidence"
)

// The network section's bounds: destinations and lookups listed, and
// requests listed per destination; the rest are counted.
const (
	htmlNetDests    = 50
	htmlNetRequests = 10
	htmlNetLookups  = 50
)

// htmlNetwork is the network section: what the package did on the
// network, per destination, with the canaries found in what it sent.
type htmlNetwork struct {
	Unwatched   string // the one sentence when behaviour was not watched
	Summary     string
	Notes       []string // observers not ok, events past the evidence's bounds
	Dests       []htmlDest
	DestsLeft   string
	Lookups     []htmlLookup
	LookupsLeft string
	Names       int       // the names looked up, listed or not
	Stray       []htmlHit // canary hits whose destination is not listed
}

type htmlDest struct {
	Name, Phases, Stages, Via, Sent string
	LiteralIP, Refused              bool
	Hits                            []htmlHit
	Requests                        []htmlRequest
	Left                            string
	key                             string
}

type htmlRequest struct {
	Time, Stage, Process, Transport, Class, Request, Bytes, Preview, Secrets, Recipients string
}

type htmlHit struct {
	Kind, Where, Phase, Channel, Encoding, Destination, Masked string
}

type htmlLookup struct {
	Name, Types, Phases string
	Count               int
	Hits                []htmlHit
	key                 string
}

// netDestination is where a connection went, as the canary hits name it:
// the HTTP Host, else the TLS server name, else the name looked up, else
// the address, each but the Host with the port.
func netDestination(e NetEvent) string {
	port := strconv.Itoa(e.DstPort)
	switch {
	case e.HTTPHost != "":
		return e.HTTPHost
	case e.SNI != "":
		return net.JoinHostPort(e.SNI, port)
	case e.LookedUp != "":
		return net.JoinHostPort(e.LookedUp, port)
	}
	return net.JoinHostPort(e.DstIP, port)
}

// netTransport says how a request was read: inside TLS under the run's CA
// (https, with the protocol ALPN chose), refused by the client, TLS not
// read (evidence before TLS was read), or in plain.
func netTransport(e NetEvent) (label, class string) {
	switch {
	case e.TLSRefused:
		return "TLS REFUSED", "tls-refused"
	case e.TLS && e.ALPN != "":
		return "https (" + clean(e.ALPN) + ")", "https"
	case e.TLS:
		return "https", "https"
	case e.SNI != "":
		return "TLS, not read", "tls-unread"
	case e.HTTPMethod != "":
		return "plain http", "plain"
	}
	return "plain " + clean(orDash(e.Kind)), "plain"
}

// netStage is when in the phase an event happened.
func netStage(e NetEvent) string {
	switch {
	case e.Stage == evidence.StageCall && e.Call > 0:
		return "call " + strconv.Itoa(e.Call)
	case e.Stage != "":
		return clean(e.Stage)
	case e.AfterHandshake:
		return "after the listing"
	}
	return "-"
}

// phaseOf names an event's phase, with the package whose lifecycle
// script it was when there is one.
func phaseOf(phase, pkg string) string {
	p := clean(orDash(phase))
	if pkg != "" {
		p += " (" + clean(pkg) + ")"
	}
	return p
}

func newHTMLHit(h CanaryHit) htmlHit {
	return htmlHit{Kind: clean(h.Canary.Kind), Where: clean(h.Canary.Where), Phase: phaseOf(h.Phase, h.Package),
		Channel: clean(orDash(h.Channel)), Encoding: clean(orDash(h.Encoding)), Destination: clean(orDash(h.Destination)), Masked: clean(h.Masked)}
}

// list keeps the distinct values of a set in first-seen order.
type list struct {
	seen map[string]bool
	vals []string
}

func (l *list) add(s string) {
	if s == "" || l.seen[s] {
		return
	}
	if l.seen == nil {
		l.seen = map[string]bool{}
	}
	l.seen[s] = true
	l.vals = append(l.vals, s)
}

func (l *list) String() string { return strings.Join(l.vals, ", ") }

// netGroup gathers one destination's connections while the events are read.
type netGroup struct {
	dest                *htmlDest
	phases, stages, via list
	conns               int
	bytes               int64
	events              []NetEvent
}

func newHTMLNetwork(rep Report) htmlNetwork {
	bh := rep.Behavior
	if bh == nil {
		state := "not recorded"
		if sig, ok := rep.Signals[evidence.SignalBehavior]; ok {
			state = clean(sig.State)
			if sig.Reason != "" {
				state += ": " + clean(sig.Reason)
			}
		}
		return htmlNetwork{Unwatched: "Behaviour was not watched (signal " + evidence.SignalBehavior + " is " + state +
			"), so what the package does on the network is not known."}
	}
	var n htmlNetwork
	var watched []string
	for _, w := range bh.Watches {
		watched = append(watched, clean(orDash(w.Phase))+" "+secs(w.WatchedMS))
		if w.Sink != "ok" {
			n.Notes = append(n.Notes, "The network sink was not ok in the "+clean(orDash(w.Phase))+" phase ("+clean(orDash(w.Sink))+
				"): what it did not record is not known.")
		}
		if d := w.Dropped["network"]; d > 0 {
			n.Notes = append(n.Notes, plural(d, "more network event")+" of the "+clean(orDash(w.Phase))+
				" phase went past the evidence's bounds: counted and searched for canaries, not listed.")
		}
	}

	groups, lookups := netGroups(bh.Network)
	hits := map[string][]htmlHit{}
	for _, h := range bh.Exfiltration {
		hits[h.Destination] = append(hits[h.Destination], newHTMLHit(h))
	}
	conns := 0
	for _, g := range groups {
		conns += g.conns
		d := g.dest
		d.Phases, d.Stages, d.Via = g.phases.String(), g.stages.String(), g.via.String()
		d.Sent = plural(g.conns, "connection") + ", " + plural64(g.bytes, "byte") + " sent"
		d.Hits = hits[d.key]
		delete(hits, d.key)
		for i, e := range g.events {
			if i == htmlNetRequests {
				d.Left = plural(len(g.events)-htmlNetRequests, "more connection") + " to this destination not listed."
				break
			}
			d.Requests = append(d.Requests, newHTMLRequest(e))
		}
	}
	for _, l := range lookups {
		for _, k := range []string{l.key, strings.TrimSuffix(l.key, ".")} {
			if k == "" {
				continue
			}
			l.Hits = append(l.Hits, hits[k]...)
			delete(hits, k)
		}
	}
	// Destinations a canary was sent to come first, so the bounds never
	// hide one; otherwise the order is the order first seen.
	sort.SliceStable(groups, func(i, j int) bool { return len(groups[i].dest.Hits) > 0 && len(groups[j].dest.Hits) == 0 })
	sort.SliceStable(lookups, func(i, j int) bool { return len(lookups[i].Hits) > 0 && len(lookups[j].Hits) == 0 })
	for i, g := range groups {
		switch {
		case i < htmlNetDests:
			n.Dests = append(n.Dests, *g.dest)
		case i == htmlNetDests:
			n.DestsLeft = plural(len(groups)-htmlNetDests, "more destination") + " not listed."
			fallthrough
		default:
			// A canary sent to a destination past the bound is still shown.
			n.Stray = append(n.Stray, g.dest.Hits...)
		}
	}
	for i, l := range lookups {
		switch {
		case i < htmlNetLookups:
			n.Lookups = append(n.Lookups, *l)
		case i == htmlNetLookups:
			n.LookupsLeft = plural(len(lookups)-htmlNetLookups, "more name") + " looked up, not listed."
			fallthrough
		default:
			n.Stray = append(n.Stray, l.Hits...)
		}
	}
	for _, h := range bh.Exfiltration {
		if hs, ok := hits[h.Destination]; ok {
			n.Stray = append(n.Stray, hs...)
			delete(hits, h.Destination)
		}
	}

	where := "in the phases watched"
	if len(watched) > 0 {
		where += " (" + strings.Join(watched, ", ") + ")"
	}
	n.Names = len(lookups)
	n.Summary = plural(len(groups), "destination") + " contacted in " + plural(conns, "connection") + " and " +
		plural(len(lookups), "name") + " looked up " + where + ", each listed with the canaries found in what was sent to it."
	return n
}

// netGroups groups connections by destination and lookups by name, in the
// order first seen.
func netGroups(events []NetEvent) ([]*netGroup, []*htmlLookup) {
	var groups []*netGroup
	var lookups []*htmlLookup
	byDest := map[string]*netGroup{}
	byName := map[string]*htmlLookup{}
	lookupPhases := map[*htmlLookup]*list{}
	lookupTypes := map[*htmlLookup]*list{}
	for _, e := range events {
		if e.Kind == "dns" {
			l, ok := byName[e.DNSName]
			if !ok {
				l = &htmlLookup{Name: clean(orDash(e.DNSName)), key: e.DNSName}
				byName[e.DNSName] = l
				lookupPhases[l], lookupTypes[l] = &list{}, &list{}
				lookups = append(lookups, l)
			}
			l.Count++
			lookupPhases[l].add(phaseOf(e.Phase, e.Package))
			lookupTypes[l].add(clean(e.DNSType))
			l.Phases, l.Types = lookupPhases[l].String(), lookupTypes[l].String()
			continue
		}
		key := netDestination(e)
		g, ok := byDest[key]
		if !ok {
			g = &netGroup{dest: &htmlDest{Name: clean(key), key: key}}
			byDest[key] = g
			groups = append(groups, g)
		}
		g.conns++
		g.bytes += e.Bytes
		g.events = append(g.events, e)
		g.phases.add(phaseOf(e.Phase, e.Package))
		if s := netStage(e); s != "-" {
			g.stages.add(s)
		}
		g.dest.LiteralIP = g.dest.LiteralIP || e.LiteralIP
		g.dest.Refused = g.dest.Refused || e.TLSRefused
		if addr := hostPort(e.DstIP, e.DstPort); addr != clean(key) {
			g.via.add("address " + addr)
		}
		if e.SNI != "" && net.JoinHostPort(e.SNI, strconv.Itoa(e.DstPort)) != key && e.SNI != hostOnly(key) {
			g.via.add("server name " + clean(e.SNI))
		}
		if e.LookedUp != "" && e.LookedUp != e.SNI && e.LookedUp != hostOnly(key) {
			g.via.add("looked up as " + clean(e.LookedUp))
		}
	}
	return groups, lookups
}

// hostOnly is a destination without its port.
func hostOnly(hp string) string {
	if h, _, err := net.SplitHostPort(hp); err == nil {
		return h
	}
	return hp
}

func newHTMLRequest(e NetEvent) htmlRequest {
	r := htmlRequest{Time: clock(e.Time), Stage: netStage(e), Bytes: strconv.FormatInt(e.Bytes, 10), Process: "-"}
	if e.PID > 0 {
		r.Process = orDash(clean(path.Base(e.Exe))) + " (pid " + strconv.Itoa(e.PID) + ")"
	}
	r.Transport, r.Class = netTransport(e)
	r.Request = orDash(strings.TrimSpace(clean(e.HTTPMethod) + " " + clean(e.HTTPTarget)))
	if e.Preview != "" {
		r.Preview = clean(truncate(e.Preview, previewChars))
	}
	if len(e.Secrets) > 0 {
		r.Secrets = "secret sent: " + clean(strings.Join(e.Secrets, ", "))
	}
	if len(e.Recipients) > 0 {
		r.Recipients = "mail to " + clean(strings.Join(e.Recipients, ", "))
	}
	return r
}

func plural64(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.FormatInt(n, 10) + " " + noun + "s"
}
