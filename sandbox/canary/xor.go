package canary

import "slices"

// XOR with a short repeating key is found without knowing the key: if
// d[i] = secret[j] ^ key[i mod k], then d[i] ^ d[i+L] = secret[j] ^
// secret[j+L] for any L that is a multiple of k. The index holds these
// differences of the secrets at lags 3 and 4, which between them cover
// every key of 1 to 4 bytes (4 covers 1, 2 and 4; 3 covers 1 and 3). A
// find is then checked by recovering the key from the first bytes and
// decoding the whole match with it.
//
// A match must cover MinXOR bytes of a secret: the key is chosen by the
// data, so up to 4 of the matched bytes are explained by it rather than
// by the secret, and the other MinChunk bytes carry the same weight
// against a chance match as a plain match of MinChunk bytes.
var xorLags = [...]int{3, 4}

// MinXOR is the shortest XOR-encoded match Scan reports (see xorLags).
const MinXOR = MinChunk + 4

type xorRef struct{ s, pos, lag int32 }

type xorIndex struct {
	filter  []uint64
	windows map[uint64][]xorRef
}

const xorFilterBits = 16

func xorHash(w uint64) uint64 { return (w * 0x9E3779B97F4A7C15) >> (64 - xorFilterBits) }

func newXORIndex(texts []string, random [][]bool) xorIndex {
	x := xorIndex{filter: make([]uint64, 1<<xorFilterBits/64), windows: map[uint64][]xorRef{}}
	var d [formKey]byte
	for si, t := range texts {
		for _, lag := range xorLags {
			for p := 0; p+formKey+lag <= len(t); p++ {
				if slices.Contains(random[si][p:p+formKey+lag], false) {
					continue
				}
				for k := range d {
					d[k] = t[p+k] ^ t[p+k+lag]
				}
				w := load64(d[:])
				h := xorHash(w)
				x.filter[h>>6] |= 1 << (h & 63)
				x.windows[w] = append(x.windows[w], xorRef{int32(si), int32(p), int32(lag)})
			}
		}
	}
	return x
}

// matchXOR finds secrets XORed with a key of 1 to 4 bytes in s, which is
// what a hex decoder made: the key is applied to bytes, so only decoded
// streams can hold it.
func (m *matcher) matchXOR(s *stream, hits *[]rawHit) {
	x := &m.xor
	enc := s.enc + "+" + EncodingXOR
	for _, sg := range s.segs {
		buf := s.buf[sg.a:sg.b]
		for _, lag := range xorLags {
			for i := 0; i+formKey+lag <= len(buf); i += scanStride {
				w := load64(buf[i:]) ^ load64(buf[i+lag:])
				h := xorHash(w)
				if x.filter[h>>6]&(1<<(h&63)) == 0 {
					continue
				}
				end := i
				for _, r := range x.windows[w] {
					if rh, ok := m.extendXOR(buf, i, r); ok {
						end = max(end, rh.b)
						rh.a, rh.b = s.span(sg.a+rh.a, sg.a+rh.b)
						rh.enc, rh.depth = enc, s.depth+1
						*hits = append(*hits, rh)
					}
				}
				if end > i {
					i = max(i, alignDown(end-formKey-lag))
				}
			}
		}
	}
}

// extendXOR recovers the key that makes buf[i:] match the secret at r,
// and extends the match as far as the key keeps decoding it. A zero key
// is plain hex, which match reports already.
func (m *matcher) extendXOR(buf []byte, i int, r xorRef) (rawHit, bool) {
	sec, pos, lag := m.texts[r.s], int(r.pos), int(r.lag)
	var key [4]byte
	zero := true
	for k := range lag {
		key[k] = buf[i+k] ^ sec[pos+k]
		zero = zero && key[k] == 0
	}
	if zero {
		return rawHit{}, false
	}
	ok := func(d int) bool { // does buf[i+d] decode to sec[pos+d]?
		return buf[i+d]^key[((d%lag)+lag)%lag] == sec[pos+d]
	}
	b := 0
	for i-b > 0 && pos-b > 0 && ok(-b-1) {
		b++
	}
	e := 0
	for i+e < len(buf) && pos+e < len(sec) && ok(e) {
		e++
	}
	sa, sb := pos-b, pos+e
	if m.randomIn(int(r.s), sa, sb) < MinXOR {
		return rawHit{}, false
	}
	return rawHit{s: int(r.s), a: i - b, b: i + e, sa: sa, sb: sb}, true
}
