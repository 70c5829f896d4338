package canary

import (
	"cmp"
	"encoding/binary"
	"slices"
	"sort"
)

// Encodings a Hit can report. Nested encodings are joined with "+",
// outermost first: "url+base64" is base64 that was then percent-encoded,
// "reversed+hex" is hex written backwards, "hex+xor" is the secret XORed
// with a short key, then hex-encoded.
const (
	EncodingRaw       = "raw"
	EncodingHex       = "hex"
	EncodingBase64    = "base64"
	EncodingBase32    = "base32"
	EncodingBase32Hex = "base32hex"
	EncodingReversed  = "reversed"
	EncodingXOR       = "xor"
	EncodingURL       = "url"
	EncodingJSON      = "json"
	EncodingDNSLabels = "dns_labels"
)

// MinChunk is the shortest match Scan reports: 12 characters (bytes,
// after decoding) of the random part of one canary, in any of the
// encodings Scan knows. The fixed parts of the real formats (AKIA, ghp_,
// npm_, sk-proj-, T3BlbkFJ, sk-ant-api03-, the trailing AA, the OpenSSH
// header and framing) never count toward it, so a prefix alone never
// matches. A match is extended as far as the data keeps agreeing with the
// canary, fixed parts included. XOR matches need MinXOR.
//
// Why 12 and not less: a chance match of benign traffic must not happen.
// The weakest 12 characters are a base62 or base64 secret's whose case a
// resolver folded (about 5.2 bits each, 62 bits) and the AWS key ID's
// (base32, 60 bits, but it has only 10 such substrings, forward and
// reversed). A set's secrets have about 460 random characters, so about
// 2^10 such substrings forward and reversed, and one scan looks at well
// under 2^30 positions (500 events of at most 64 KiB, a few decoded
// streams each): a chance match has a probability below 2^10 * 2^30 /
// 2^62 = 2^-22 per scan even if every position were compared folded, and
// below 2^-32 for secrets in their case (72 bits). An encoded match must
// carry 12 bytes of a secret too (minBits), which takes more characters
// (16 of base64, 19 of base32, 24 of hex) and so more bits, although
// there are more encoded forms (about 2^14 substrings): below 2^-39 per
// scan. Eight characters, folded, would carry about 42 bits and meet
// chance about once in three scans at the worst; the test corpus of
// benign names and API calls (testdata) holds what real traffic looks
// like.
const MinChunk = 12

// maxDepth bounds nesting: one encoding inside another (url+base64,
// dns_labels+hex, base64+base64) is found, three levels are not. Forms
// (reversal, base32) are matched directly and do not count.
const maxDepth = 2

// Hit is one occurrence of a canary in scanned data.
type Hit struct {
	// Value is the canary found. A secret planted in several places is
	// reported under its first place in Values (the environment).
	Value Value
	// Encoding is how it was written (see the Encoding constants).
	Encoding string
	// Offset and Length delimit the occurrence in the scanned data (in the
	// name, for ScanDNSName), encoded form included.
	Offset, Length int
	// Partial is set when only part of the secret was found (at least
	// MinChunk characters of it).
	Partial bool
}

// Scan finds every canary of the set in data, raw or encoded: hex (either
// case), base64 (standard or URL alphabet, padded or not, at any alignment,
// wrapped at line breaks or not), base32 and base32hex (either case,
// padded or not), percent-encoding, JSON (and JavaScript \x) string
// escapes, DNS names in text (labels joined, case ignored, so base64
// lower-cased by a resolver is found too), the reversal of the secret and
// of each of these encodings, the secret XORed with a key of 1 to 4 bytes
// and then hex-encoded, and one encoding inside another. Hits are ordered
// by offset; overlapping finds of one secret are reported once, under the
// encoding that explains the most of it. DNS messages in wire format are
// not parsed: pass their names to ScanDNSName.
func (s *Set) Scan(data []byte) []Hit {
	return s.m.hits(s.m.collect(data, false))
}

// ScanDNSName finds canaries in a DNS name (dotted, trailing dot optional):
// the labels are joined and compared without regard to case, since
// resolvers may change it, with the secret and every form Scan compares
// (base32, base64 folded, reversals), and then also decoded as hex or
// base64. A secret may be split across any number of labels. Offsets are
// in name. ScanDNSNames looks across queries.
func (s *Set) ScanDNSName(name string) []Hit {
	return s.m.hits(s.m.collect([]byte(name), true))
}

// matcher holds the index of the forms of a set's secrets.
type matcher struct {
	texts  []string  // secret texts
	random [][]bool  // which bytes of each text are random
	nrand  [][]int32 // nrand[s][i]: how many of the first i bytes of s are random
	values []Value   // first place of each secret
	forms  []form
	idx    formIndex
	xor    xorIndex
	maxLen int
	scans  chan *scan // idle working states, for reuse
}

func newMatcher(secrets []secret, values []Value) *matcher {
	m := &matcher{values: values, scans: make(chan *scan, 2)}
	for i, s := range secrets {
		m.texts = append(m.texts, s.text)
		m.random = append(m.random, s.random)
		n := make([]int32, len(s.text)+1)
		for k, r := range s.random {
			n[k+1] = n[k]
			if r {
				n[k+1]++
			}
		}
		m.nrand = append(m.nrand, n)
		m.maxLen = max(m.maxLen, len(s.text))
		m.forms = append(m.forms, formsOf(int32(i), s.text)...)
	}
	m.idx = newFormIndex(m.forms, m.random)
	m.xor = newXORIndex(m.texts, m.random)
	return m
}

// randomIn counts the random bytes of secret s in [a, b).
func (m *matcher) randomIn(s, a, b int) int {
	return int(m.nrand[s][b] - m.nrand[s][a])
}

// minBits is how many random bits of a secret a match must carry:
// MinChunk bytes, less 4 bits. A fragment of MinChunk bytes encoded on its
// own in base32 ends in a character that holds the fragment's last bit
// and 4 bits of the encoder's zero padding, which agrees with the
// secret's own encoding only where the secret ends; the 95 bits before it
// are what identifies the fragment. One byte fewer reaches at most 90
// bits (85 in whole characters, and a last character whose 2 padding bits
// happen to agree), in base32 or base64. Raw and decoded matches carry
// whole bytes, so for them this is MinChunk bytes.
const minBits = 8*MinChunk - 4

// randomBits counts the bits of random bytes of secret s in bits [lo, hi).
func (m *matcher) randomBits(s, lo, hi int) int {
	if hi <= lo {
		return 0
	}
	sa, sb := (lo+7)/8, hi/8
	if sb < sa { // within one byte
		if m.random[s][lo/8] {
			return hi - lo
		}
		return 0
	}
	n := 8 * m.randomIn(s, sa, sb)
	if sa > 0 && 8*sa > lo && m.random[s][sa-1] {
		n += 8*sa - lo
	}
	if sb < len(m.random[s]) && hi > 8*sb && m.random[s][sb] {
		n += hi - 8*sb
	}
	return n
}

func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

var lowerTab = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if 'A' <= i && i <= 'Z' {
			t[i] = byte(i) + 'a' - 'A'
		}
	}
	return t
}()

// stream is a byte sequence searched for canaries: the scanned data, or
// what a decoder made of parts of its parent stream.
type stream struct {
	buf  []byte // searched (lower-cased when fold)
	orig []byte // buf in its original case, input of nested decoders
	segs []segment
	// text lists the segments nested decoders look at: those that are
	// mostly printable. Decoding binary (an image, or base64 decoded at the
	// wrong offset) as text again finds nothing and costs most of the time.
	text []segment
	fold bool

	parent *stream
	enc    string // encoding chain from the data to here
	last   string // the decoder that made this stream
	depth  int
}

// segment is a run of a stream decoded from one contiguous piece of its
// parent; matches never cross segments. The other fields say how to map a
// byte of the segment back to the parent.
type segment struct {
	a, b  int
	kind  uint8
	in    int     // parent index of the first input character
	shift int     // base64: characters skipped before decoding
	pos   []int32 // parent index of each input character, when not contiguous
	escs  []escape
}

const (
	segTop uint8 = iota
	segHex
	segBase64
	segLabels
	segEscapes
)

// toParent gives the span in the parent stream that produced byte x.
func (sg *segment) toParent(x int) (int, int) {
	k := x - sg.a
	at := func(c int) int {
		if sg.pos != nil {
			return int(sg.pos[c])
		}
		return sg.in + c
	}
	switch sg.kind {
	case segHex:
		return sg.in + 2*k, sg.in + 2*k + 2
	case segBase64:
		return at(sg.shift + 8*k/6), at(sg.shift+(8*k+7)/6) + 1
	case segLabels:
		return at(k), at(k) + 1
	case segEscapes:
		e := sort.Search(len(sg.escs), func(e int) bool { return sg.escs[e].out > x }) - 1
		if e < 0 {
			return sg.in + k, sg.in + k + 1
		}
		r := sg.escs[e]
		if x < r.out+r.outLen {
			return r.in, r.in + r.inLen
		}
		y := r.in + r.inLen + x - r.out - r.outLen
		return y, y + 1
	}
	return x, x + 1
}

// rawHit is one match before deduplication; a, b delimit it in the data.
type rawHit struct {
	s      int
	a, b   int
	sa, sb int // matched part of the secret
	enc    string
	depth  int
}

// scan is the working state of one Scan: the matcher and buffers that
// are reused across calls.
type scan struct {
	m     *matcher
	bytes arena[byte]    // decoded streams
	chars arena[byte]    // base64 runs gathered across line breaks
	segs  arena[segment] // segments of decoded streams
	pos   arena[int32]   // input positions of gathered characters
	escs  arena[escape]  // escapes of decoded streams
	// folded is the segment being matched, lower-cased, when its stream
	// is not folded already.
	folded []byte
}

// arena hands out slices to append to, all backed by one buffer that is
// kept from scan to scan. Decoders run one after another, so at most one
// slice of an arena is being appended to at a time: get returns the
// buffer's free tail, and put claims what was appended. A slice that
// outgrew the tail got its own array from append; the next scan's buffer
// is made large enough for everything.
type arena[T any] struct {
	buf  []T
	need int // elements handed out in this scan
}

func (a *arena[T]) get() []T { return a.buf[len(a.buf):len(a.buf)] }

func (a *arena[T]) put(s []T) []T {
	a.need += len(s)
	if n := len(a.buf); len(s) > 0 && cap(a.buf)-n >= len(s) && &a.buf[:n+1][n] == &s[0] {
		a.buf = a.buf[:n+len(s)]
	}
	return s[:len(s):len(s)]
}

// reset makes the buffer reusable; it keeps at most limit elements.
// Buffers of pointerful types are cleared so that they keep no garbage
// alive.
func (a *arena[T]) reset(limit int, zero bool) {
	if zero {
		clear(a.buf)
	}
	switch {
	case a.need > cap(a.buf) && a.need <= limit:
		a.buf = make([]T, 0, a.need+a.need/4)
	case cap(a.buf) > limit:
		a.buf = nil
	default:
		a.buf = a.buf[:0]
	}
	a.need = 0
}

func (m *matcher) collect(data []byte, dnsName bool) []rawHit {
	if len(data) == 0 || m == nil {
		return nil
	}
	// Working buffers are kept in a small free list of the matcher rather
	// than a sync.Pool, which the garbage collector empties at every cycle.
	var sc *scan
	select {
	case sc = <-m.scans:
	default:
		sc = new(scan)
	}
	sc.m = m
	defer func() {
		sc.bytes.reset(8<<20, false)
		sc.chars.reset(1<<20, false)
		sc.segs.reset(64<<10, true)
		sc.pos.reset(1<<20, false)
		sc.escs.reset(64<<10, false)
		if cap(sc.folded) > 1<<20 {
			sc.folded = nil
		}
		sc.m = nil
		select {
		case m.scans <- sc:
		default:
		}
	}()
	whole := []segment{{a: 0, b: len(data), kind: segTop}}
	top := &stream{buf: data, orig: data, segs: whole, text: whole, enc: EncodingRaw}
	var hits []rawHit
	if dnsName {
		if d := decodeDNS(sc, top, false); d != nil {
			d.text = d.segs
			d.parent, d.depth, d.last, d.enc = top, 1, EncodingDNSLabels, EncodingDNSLabels
			sc.walk(d, &hits)
		}
		return hits
	}
	sc.walk(top, &hits)
	return hits
}

type decoder struct {
	name string
	fn   func(sc *scan, p *stream) *stream
}

var decoders = []decoder{
	{EncodingURL, decodeURL},
	{EncodingJSON, decodeJSON},
	{EncodingHex, decodeHex},
	{EncodingBase64, decodeBase64},
	{EncodingDNSLabels, func(sc *scan, p *stream) *stream { return decodeDNS(sc, p, true) }},
}

func (sc *scan) walk(s *stream, hits *[]rawHit) {
	sc.match(s, hits)
	if s.last == EncodingHex {
		sc.m.matchXOR(s, hits)
	}
	if s.depth >= maxDepth {
		return
	}
	for _, d := range decoders {
		// Decoding escapes or joining labels twice in a row finds nothing
		// new; decoding hex or base64 twice does (double encoding).
		if d.name == s.last && d.name != EncodingHex && d.name != EncodingBase64 {
			continue
		}
		c := d.fn(sc, s)
		if c == nil || len(c.segs) == 0 {
			continue
		}
		c.text = sc.segs.put(textual(sc.segs.get(), c.buf, c.segs))
		c.parent, c.depth, c.last = s, s.depth+1, d.name
		c.enc = d.name
		if s.depth > 0 {
			c.enc = s.enc + "+" + d.name
		}
		sc.walk(c, hits)
	}
}

// span maps [a, b) of s to the scanned data.
func (s *stream) span(a, b int) (int, int) {
	for ; s.parent != nil; s = s.parent {
		a, _ = s.segAt(a).toParent(a)
		_, b = s.segAt(b - 1).toParent(b - 1)
	}
	return a, b
}

func (s *stream) segAt(i int) *segment {
	k := sort.Search(len(s.segs), func(k int) bool { return s.segs[k].b > i })
	return &s.segs[k]
}

// match looks up every window of s in the index of forms and extends
// each find as far as it goes. Keys are lower-cased, so that one index
// serves streams in their case (where forms other than hex and base32
// must then agree in case too) and folded ones.
func (sc *scan) match(s *stream, hits *[]rawHit) {
	m := sc.m
	idx := &m.idx
	for _, sg := range s.segs {
		buf := s.buf[sg.a:sg.b]
		keys := buf
		if !s.fold {
			// Lower-casing the segment once, a word at a time, is cheaper
			// than folding each overlapping window.
			keys = foldInto(sc.folded[:0], buf)
			sc.folded = keys
		}
		for i := 0; i+formKey <= len(keys); i += scanStride {
			w := load64(keys[i:])
			if !idx.has(w) {
				continue
			}
			end := i + formKey
			var best []rawHit // one per secret
			for k := idx.lookup(w); k >= 0; k = idx.refs[k].next {
				rh, ok := m.extend(s, buf, i, idx.refs[k])
				if !ok {
					continue
				}
				end = max(end, rh.b)
				rh.a, rh.b = s.span(sg.a+rh.a, sg.a+rh.b)
				k := slices.IndexFunc(best, func(h rawHit) bool { return h.s == rh.s })
				switch {
				case k < 0:
					best = append(best, rh)
				case better(rh, best[k]):
					best[k] = rh
				}
			}
			*hits = append(*hits, best...)
			// Resume with the first window that is not inside this match.
			i = max(i, alignDown(end-formKey))
		}
	}
}

// alignDown rounds i down to a multiple of scanStride.
func alignDown(i int) int { return i - i%scanStride }

// foldInto appends src, lower-cased, to dst.
func foldInto(dst, src []byte) []byte {
	dst = slices.Grow(dst, len(src))[:len(src)]
	i := 0
	for ; i+8 <= len(src); i += 8 {
		binary.LittleEndian.PutUint64(dst[i:], fold64(load64(src[i:])))
	}
	for ; i < len(src); i++ {
		dst[i] = lowerTab[src[i]]
	}
	return dst
}

// extend checks the window of form r.f at buf[i:] and extends it both
// ways; it reports a match of at least MinChunk random bytes of the
// secret, with a and b in buf.
func (m *matcher) extend(s *stream, buf []byte, i int, r formRef) (rawHit, bool) {
	f := &m.forms[r.f]
	pos := int(r.pos)
	text := f.text
	fold := s.fold || f.caseless
	if fold {
		text = f.lower
	}
	eq := func(c, t byte) bool { return c == t }
	if fold {
		eq = func(c, t byte) bool { return lowerTab[c] == t }
	}
	for k := range formKey {
		if !eq(buf[i+k], text[pos+k]) {
			return rawHit{}, false
		}
	}
	l := 0
	for i-l > 0 && pos-l > 0 && eq(buf[i-l-1], text[pos-l-1]) {
		l++
	}
	e := formKey
	for i+e < len(buf) && pos+e < len(text) && eq(buf[i+e], text[pos+e]) {
		e++
	}
	lo, hi := f.secretBits(pos-l, pos+e, len(m.texts[f.s]))
	sa, sb := (lo+7)/8, max(hi/8, (lo+7)/8) // the bytes carried whole
	if m.randomBits(int(f.s), lo, hi) < minBits {
		return rawHit{}, false
	}
	enc := s.enc
	switch {
	case f.enc == "":
	case s.depth == 0:
		enc = f.enc
	default:
		enc = s.enc + "+" + f.enc
	}
	return rawHit{s: int(f.s), a: i - l, b: i + e, sa: sa, sb: sb, enc: enc, depth: s.depth + f.depth}, true
}

// nextRun finds the first run of at least min bytes of class in
// src[from:to] and returns its bounds (the whole run), or -1, -1. The scan
// counts without branching on the class, which keeps it fast on binary
// data, where a branch per byte would be mispredicted half of the time.
func nextRun(src []byte, from, to int, class *[256]uint8, min int) (int, int) {
	run := 0
	for k := from; k < to; k++ {
		run = (run + 1) * int(class[src[k]])
		if run >= min {
			end := k + 1
			for end < to && class[src[end]] != 0 {
				end++
			}
			return k + 1 - run, end
		}
	}
	return -1, -1
}

func classOf(in func(c byte) bool) *[256]uint8 {
	var t [256]uint8
	for c := range 256 {
		if in(byte(c)) {
			t[c] = 1
		}
	}
	return &t
}

var (
	hexClass   = classOf(func(c byte) bool { return hexval[c] >= 0 })
	b64Class   = classOf(func(c byte) bool { return b64val[c] >= 0 })
	labelClass = classOf(func(c byte) bool { return isLabelChar(c) || c == '.' })
	anyClass   = classOf(func(byte) bool { return true })
)

// textual returns the segments of buf of which at least 90% are printable
// ASCII or whitespace.
func textual(out []segment, buf []byte, segs []segment) []segment {
	for _, sg := range segs {
		bad := 0
		limit := (sg.b - sg.a) / 10
		for _, c := range buf[sg.a:sg.b] {
			if (c < 0x20 && c != '\n' && c != '\r' && c != '\t') || c > 0x7e {
				if bad++; bad > limit {
					break
				}
			}
		}
		if bad <= limit {
			out = append(out, sg)
		}
	}
	return out
}

// encRank orders encodings for deduplication: the simplest explanation of
// an occurrence wins.
func encRank(enc string) int {
	switch enc {
	case EncodingRaw:
		return 0
	case EncodingJSON:
		return 1
	case EncodingURL:
		return 2
	case EncodingHex:
		return 3
	case EncodingBase64:
		return 4
	case EncodingBase32:
		return 5
	case EncodingBase32Hex:
		return 6
	case EncodingDNSLabels:
		return 7
	case EncodingReversed:
		return 8
	}
	return 9
}

func better(x, y rawHit) bool {
	if x.sb-x.sa != y.sb-y.sa {
		return x.sb-x.sa > y.sb-y.sa
	}
	if x.depth != y.depth {
		return x.depth < y.depth
	}
	return encRank(x.enc) < encRank(y.enc)
}

// hits merges overlapping finds of the same secret into one Hit each.
func (m *matcher) hits(raw []rawHit) []Hit {
	if len(raw) == 0 {
		return nil
	}
	slices.SortFunc(raw, func(x, y rawHit) int {
		return cmp.Or(cmp.Compare(x.s, y.s), cmp.Compare(x.a, y.a), cmp.Compare(y.b, x.b))
	})
	var out []Hit
	emit := func(h rawHit) {
		out = append(out, Hit{Value: m.values[h.s], Encoding: h.enc, Offset: h.a, Length: h.b - h.a, Partial: h.sb-h.sa < len(m.texts[h.s])})
	}
	cur, end := raw[0], raw[0].b
	for _, h := range raw[1:] {
		if h.s == cur.s && h.a < end {
			if better(h, cur) {
				cur = h
			}
			end = max(end, h.b)
			continue
		}
		emit(cur)
		cur, end = h, h.b
	}
	emit(cur)
	slices.SortStableFunc(out, func(x, y Hit) int { return cmp.Compare(x.Offset, y.Offset) })
	return out
}
