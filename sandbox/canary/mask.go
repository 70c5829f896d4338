package canary

import (
	"slices"
	"strconv"
)

// Mask shows at most the first four characters of secret (fewer for short
// secrets, none past a non-printable byte), then "…" and the length in
// bytes: "AKIA…(20)".
func Mask(secret string) string {
	n := min(4, len(secret)/4)
	for i := range n {
		if c := secret[i]; c < 0x21 || c > 0x7e {
			n = i
			break
		}
	}
	return secret[:n] + "…(" + strconv.Itoa(len(secret)) + ")"
}

// MaskAll returns a copy of data in which every canary occurrence found by
// Scan, in any encoding, is replaced by "[canary:<kind>]" (no character of
// the value: a reader learns which canary it was, and nothing of it),
// so that captured traffic can be stored without the canaries in it. The
// whole encoded form is replaced, so nothing of at least MinChunk
// characters of a canary (MinXOR for XOR) is left in any encoding Scan
// knows. Data that could be a DNS name (at most 255 bytes, no space or
// control character) is also masked of what ScanDNSName finds in it,
// which reads a name's labels whatever characters they hold. A canary
// split across several names is masked by MaskDNSNames.
func (s *Set) MaskAll(data []byte) []byte {
	out := data
	// Masking can only remove canary material, but a second pass catches an
	// occurrence that overlapped another one's replaced span.
	for pass := 0; pass < 4; pass++ {
		raw := s.m.collect(out, false)
		if nameLike(out) {
			raw = append(raw, s.m.collect(out, true)...)
		}
		if len(raw) == 0 {
			break
		}
		out = s.m.mask(out, raw)
	}
	if len(out) > 0 && &out[0] == &data[0] {
		out = append([]byte(nil), data...)
	}
	return out
}

// nameLike reports whether b could be a DNS name.
func nameLike(b []byte) bool {
	if len(b) > 255 {
		return false
	}
	for _, c := range b {
		if c <= ' ' || c == 0x7f {
			return false
		}
	}
	return true
}

func (m *matcher) mask(data []byte, raw []rawHit) []byte {
	type iv struct {
		a, b int
		h    rawHit
	}
	ivs := make([]iv, 0, len(raw))
	for _, h := range raw {
		ivs = append(ivs, iv{h.a, h.b, h})
	}
	sortIntervals := func(x, y iv) int {
		if x.a != y.a {
			return x.a - y.a
		}
		return y.b - x.b
	}
	slices.SortFunc(ivs, sortIntervals)
	var merged []iv
	for _, v := range ivs {
		if n := len(merged); n > 0 && v.a < merged[n-1].b {
			last := &merged[n-1]
			last.b = max(last.b, v.b)
			if better(v.h, last.h) {
				last.h = v.h
			}
			continue
		}
		merged = append(merged, v)
	}
	out := make([]byte, 0, len(data))
	prev := 0
	for _, v := range merged {
		out = append(out, data[prev:v.a]...)
		out = append(out, "[canary:"+m.values[v.h.s].Kind+"]"...)
		prev = v.b
	}
	return append(out, data[prev:]...)
}
