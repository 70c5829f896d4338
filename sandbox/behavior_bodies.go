package sandbox

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/verifymcp/verifymcp/evidence"
)

// A canary sent a piece per request, as DNS exfiltration sends a piece per
// lookup (acrossQueries), is no find in any one body when its pieces are
// shorter than canary.MinChunk. acrossBodies reads the HTTP and HTTPS
// request bodies of one destination within one stage in the order they
// were sent, keeps the longest run of token characters of each (the
// piece; what is around it is the request's framing: JSON keys, form
// names), and searches the pieces joined. A find that spans two pieces or
// more is a hit on the body's channel, "split across N requests"; the
// pieces of every request it spans are masked in the stored previews,
// since next to the others each one gives the canary away.

// bodyPiece is the piece of one request's body: the event's index and the
// piece's place in its body.
type bodyPiece struct {
	event      int
	start, end int
}

// tokenByte is a byte of the runs acrossBodies joins: the alphabets of the
// raw canaries and of their hex and base64 forms.
func tokenByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("+/=_-", c) >= 0
}

// longestRun is the place of the longest run of token bytes in b.
func longestRun(b []byte) (start, end int) {
	for i := 0; i < len(b); {
		if !tokenByte(b[i]) {
			i++
			continue
		}
		j := i
		for j < len(b) && tokenByte(b[j]) {
			j++
		}
		if j-i > end-start {
			start, end = i, j
		}
		i = j
	}
	return start, end
}

// acrossBodies finds canaries split across the request bodies sent to one
// destination within one stage, records each as a hit, and returns, by
// event index, the ranges of the bodies to mask.
func (w *watch) acrossBodies(events []sinkEvent) map[int][][2]int {
	groups := map[string][]int{}
	var keys []string
	for i, ev := range events {
		if len(ev.Body) == 0 || ev.HTTPMethod == "" {
			continue
		}
		phase, stage := ev.Phase, ""
		if phase == "" {
			phase = evidence.PhaseRun
		}
		if phase == evidence.PhaseRun {
			stage, _ = w.runStage(ev.Time)
		}
		k := phase + "\x00" + stage + "\x00" + bodyDestination(ev)
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], i)
	}
	masks := map[int][][2]int{}
	for _, k := range keys {
		idx := groups[k]
		if len(idx) < 2 {
			continue
		}
		sort.SliceStable(idx, func(a, b int) bool { return events[idx[a]].Time.Before(events[idx[b]].Time) })
		w.scanPieces(events, idx, masks)
	}
	return masks
}

// scanPieces joins the pieces of the requests idx (in order), searches
// them, and records the finds that span two pieces or more.
func (w *watch) scanPieces(events []sinkEvent, idx []int, masks map[int][][2]int) {
	var joined []byte
	var pieces []bodyPiece
	var at []int // where each piece starts in joined
	for _, i := range idx {
		s, e := longestRun(events[i].Body)
		if e == s {
			continue
		}
		at = append(at, len(joined))
		pieces = append(pieces, bodyPiece{event: i, start: s, end: e})
		joined = append(joined, events[i].Body[s:e]...)
	}
	for _, h := range w.canary.Scan(joined) {
		first := sort.Search(len(at), func(p int) bool { return at[p] > h.Offset }) - 1
		last := sort.Search(len(at), func(p int) bool { return at[p] >= h.Offset+h.Length }) - 1
		if first < 0 || last <= first {
			continue // within one piece: that request's own find
		}
		ev := events[pieces[first].event]
		phase := ev.Phase
		if phase == "" {
			phase = evidence.PhaseRun
		}
		pkg := ""
		if phase == evidence.PhaseScripts {
			pkg = w.packageAt(ev.Time)
		}
		channel := "http_body"
		if ev.TLS {
			channel = "https_body"
		}
		h.Encoding = fmt.Sprintf("%s, split across %d requests", h.Encoding, last-first+1)
		w.addHit(h, channel, phase, pkg, bodyDestination(ev), ev.Time)
		for p := first; p <= last; p++ {
			masks[pieces[p].event] = append(masks[pieces[p].event], [2]int{pieces[p].start, pieces[p].end})
		}
	}
}

// bodyDestination names where a request went, as every hit names it
// (destination).
func bodyDestination(ev sinkEvent) string {
	return destination(evidence.NetEvent{Kind: ev.Type, DstIP: ev.DstIP, DstPort: ev.DstPort, LookedUp: ev.LookedUp,
		DNSName: ev.DNSName, SNI: ev.SNI, HTTPHost: ev.HTTPHost})
}

// maskPieces replaces the ranges of body with a marker of the canary
// pieces they held.
func maskPieces(body []byte, ranges [][2]int) string {
	if len(ranges) == 0 {
		return string(body)
	}
	sort.Slice(ranges, func(a, b int) bool { return ranges[a][0] < ranges[b][0] })
	var out strings.Builder
	last := 0
	for _, r := range ranges {
		if r[0] < last {
			continue
		}
		out.Write(body[last:r[0]])
		out.WriteString("[canary piece]")
		last = r[1]
	}
	out.Write(body[last:])
	return out.String()
}

// secretMarker is what the masker writes for a secret it masked:
// [secret:env:NAME] for an --env value, [secret:shape:RULE] for a string
// shaped like a credential.
var secretMarker = regexp.MustCompile(`\[secret:([^\]\s]{1,100})\]`)

// maxSecretNames bounds the secrets named on one network event.
const maxSecretNames = 10

// secretsIn names the secrets masked in masked text, each once, in order.
func secretsIn(masked string) []string {
	var out []string
	for _, m := range secretMarker.FindAllStringSubmatch(masked, -1) {
		if !slices.Contains(out, m[1]) && len(out) < maxSecretNames {
			out = append(out, m[1])
		}
	}
	return out
}
