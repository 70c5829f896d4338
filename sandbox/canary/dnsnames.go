package canary

import (
	"cmp"
	"slices"
	"strings"
)

// NameSpan is the part of one DNS name that a NamesHit covers.
type NameSpan struct {
	// Index is the name's place in the list given to ScanDNSNames.
	Index int
	// Offset and Length delimit the part in that name.
	Offset, Length int
}

// NamesHit is a canary found in the labels of several DNS queries read
// one after the other.
type NamesHit struct {
	// Hit describes the find; its Offset and Length are those of Names[0].
	Hit
	// Names lists the names the occurrence spans, in order, at least two.
	Names []NameSpan
}

// maxZoneLabels bounds the suffixes ScanDNSNames tries: a zone of six
// labels (a.b.exfil.example.co.uk) is as deep as exfiltration setups go,
// and each suffix length is one more pass over the names.
const maxZoneLabels = 6

// ScanDNSNames finds a canary split across several DNS queries, as an
// exfiltrating package sends one piece per lookup: <piece1>.x.evil.com,
// <piece2>.x.evil.com. Names (dotted, trailing dot optional, in the order
// they were queried) are grouped by their last k labels, for every k from
// 2 (the registered domain) to maxZoneLabels; within a group, the labels
// before that common suffix are joined in order, as ScanDNSName joins
// one name's labels, and searched for every encoding ScanDNSName knows.
// Each group is also searched with only the longest of each name's labels,
// since counters and session ids often sit in labels of their own
// (0.<piece1>.evil.com). A name repeated (an A and an AAAA query, a
// retry) counts once, at its first place.
//
// Only finds that span two names or more are returned: a canary within
// one name is ScanDNSName's. Queries sent out of order are not put back
// in order; each of their pieces is still found alone when it holds
// MinChunk characters.
func (s *Set) ScanDNSNames(names []string) []NamesHit {
	var out []NamesHit
	for _, c := range s.m.scanNames(names) {
		out = append(out, NamesHit{
			Hit: Hit{
				Value: s.m.values[c.raw.s], Encoding: c.raw.enc,
				Offset: c.spans[0].Offset, Length: c.spans[0].Length,
				Partial: c.raw.sb-c.raw.sa < len(s.m.texts[c.raw.s]),
			},
			Names: c.spans,
		})
	}
	return out
}

// MaskDNSNames returns names with every canary masked as MaskAll masks
// it, and with each name's part of a canary that ScanDNSNames finds
// across names masked too: such a part may be too short to be found in
// its name alone, but stored next to the others it gives the canary away.
func (s *Set) MaskDNSNames(names []string) []string {
	extra := make([][]rawHit, len(names))
	for _, c := range s.m.scanNames(names) {
		for _, sp := range c.spans {
			r := c.raw
			r.a, r.b = sp.Offset, sp.Offset+sp.Length
			extra[sp.Index] = append(extra[sp.Index], r)
		}
	}
	out := make([]string, len(names))
	for i, n := range names {
		b := []byte(n)
		if len(extra[i]) > 0 {
			b = s.m.mask(b, extra[i])
		}
		out[i] = string(s.MaskAll(b))
	}
	return out
}

// namesFind is one find of scanNames.
type namesFind struct {
	raw   rawHit
	spans []NameSpan
}

type dnsName struct {
	labels []string
	starts []int // offset of each label in the name
}

func splitName(name string) dnsName {
	var d dnsName
	name = strings.TrimSuffix(name, ".")
	at := 0
	for _, l := range strings.Split(name, ".") {
		if l != "" {
			d.labels = append(d.labels, l)
			d.starts = append(d.starts, at)
		}
		at += len(l) + 1
	}
	return d
}

func (m *matcher) scanNames(names []string) []namesFind {
	if m == nil || len(names) < 2 {
		return nil
	}
	parsed := make([]dnsName, len(names))
	for i, n := range names {
		parsed[i] = splitName(n)
	}
	var finds []namesFind
	scanned := map[string]bool{}
	for k := 2; k <= maxZoneLabels; k++ {
		var order []string
		groups := map[string][]int{}
		for i, d := range parsed {
			if len(d.labels) <= k {
				continue
			}
			key := strings.ToLower(strings.Join(d.labels[len(d.labels)-k:], "."))
			if _, ok := groups[key]; !ok {
				order = append(order, key)
			}
			groups[key] = append(groups[key], i)
		}
		for _, key := range order {
			members := distinct(names, groups[key])
			if len(members) < 2 {
				continue
			}
			for _, longest := range []bool{false, true} {
				buf, where := joinPayloads(parsed, members, k, longest)
				if scanned[string(buf)] {
					continue
				}
				scanned[string(buf)] = true
				for _, r := range m.collect(buf, true) {
					if spans := spansOf(where, r.a, r.b); len(spans) >= 2 {
						finds = append(finds, namesFind{raw: r, spans: spans})
					}
				}
			}
		}
	}
	return bestFinds(finds)
}

// distinct drops repeated names (compared without regard to case),
// keeping each at its first place.
func distinct(names []string, idx []int) []int {
	var out []int
	seen := map[string]bool{}
	for _, i := range idx {
		n := strings.ToLower(strings.TrimSuffix(names[i], "."))
		if !seen[n] {
			seen[n] = true
			out = append(out, i)
		}
	}
	return out
}

// at is where a byte of a joined buffer came from: name index and offset
// in it, or -1 for the dots put between names.
type at struct{ name, off int32 }

// joinPayloads joins the labels before the last k of each member, with
// dots between labels and between names, and says where each byte came
// from.
func joinPayloads(parsed []dnsName, members []int, k int, longest bool) ([]byte, []at) {
	var buf []byte
	var where []at
	for n, i := range members {
		d := parsed[i]
		labels := d.labels[:len(d.labels)-k]
		starts := d.starts[:len(d.labels)-k]
		if longest {
			best := 0
			for j, l := range labels {
				if len(l) > len(labels[best]) {
					best = j
				}
			}
			labels, starts = labels[best:best+1], starts[best:best+1]
		}
		for j, l := range labels {
			if n > 0 || j > 0 {
				buf = append(buf, '.')
				where = append(where, at{-1, -1})
			}
			for c := range len(l) {
				buf = append(buf, l[c])
				where = append(where, at{int32(i), int32(starts[j] + c)})
			}
		}
	}
	return buf, where
}

// spansOf maps [a, b) of a joined buffer to the parts of names it covers.
func spansOf(where []at, a, b int) []NameSpan {
	var spans []NameSpan
	for _, w := range where[a:b] {
		if w.name < 0 {
			continue
		}
		n := len(spans)
		if n > 0 && spans[n-1].Index == int(w.name) {
			sp := &spans[n-1]
			sp.Length = int(w.off) + 1 - sp.Offset
			continue
		}
		spans = append(spans, NameSpan{Index: int(w.name), Offset: int(w.off), Length: 1})
	}
	return spans
}

// bestFinds keeps, of finds of one secret that share a part of a name,
// the one that explains the most of it: the same pieces are found under
// several suffix lengths.
func bestFinds(finds []namesFind) []namesFind {
	var out []namesFind
	for _, f := range finds {
		k := slices.IndexFunc(out, func(o namesFind) bool { return o.raw.s == f.raw.s && spansOverlap(o.spans, f.spans) })
		switch {
		case k < 0:
			out = append(out, f)
		case better(f.raw, out[k].raw):
			out[k] = f
		}
	}
	slices.SortFunc(out, func(x, y namesFind) int {
		return cmp.Or(cmp.Compare(x.spans[0].Index, y.spans[0].Index), cmp.Compare(x.spans[0].Offset, y.spans[0].Offset), cmp.Compare(x.raw.s, y.raw.s))
	})
	return out
}

func spansOverlap(x, y []NameSpan) bool {
	for _, a := range x {
		for _, b := range y {
			if a.Index == b.Index && a.Offset < b.Offset+b.Length && b.Offset < a.Offset+a.Length {
				return true
			}
		}
	}
	return false
}
