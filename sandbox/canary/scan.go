package canary

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/binary"
	"slices"
	"sort"
	"unicode/utf8"
)

// Encodings a Hit can report. Nested encodings are joined with "+",
// outermost first: "url+base64" is base64 that was then percent-encoded.
const (
	EncodingRaw       = "raw"
	EncodingHex       = "hex"
	EncodingBase64    = "base64"
	EncodingURL       = "url"
	EncodingJSON      = "json"
	EncodingDNSLabels = "dns_labels"
)

// MinChunk is the shortest match Scan reports: 16 contiguous characters
// (bytes, after decoding) that all come from the random part of one
// canary. The fixed parts of the real formats (AKIA, ghp_, npm_, sk-proj-,
// T3BlbkFJ, sk-ant-api03-, the trailing AA, the OpenSSH header and
// framing) never count toward it, so a prefix alone never matches; for the
// AWS key ID the 16 characters are its whole random part. A match is then
// extended as far as the data keeps agreeing with the canary, fixed parts
// included. Sixteen random characters carry at least 80 bits (base32),
// even lower-cased, so a chance match in real traffic does not happen.
const MinChunk = chunk

const (
	chunk = 16
	// maxDepth bounds nesting: one encoding inside another (url+base64,
	// dns_labels+hex, base64+base64) is found, three levels are not.
	maxDepth = 2
)

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
// wrapped at line breaks or not), percent-encoding, JSON (and JavaScript
// \x) string escapes, DNS names in text (labels joined, case ignored), and
// one encoding inside another. Hits are ordered by offset; overlapping
// finds of one secret are reported once, under the encoding that explains
// the most of it. DNS messages in wire format are not parsed: pass their
// names to ScanDNSName.
func (s *Set) Scan(data []byte) []Hit {
	return s.m.hits(s.m.collect(data, false))
}

// ScanDNSName finds canaries in a DNS name (dotted, trailing dot optional):
// the labels are joined and compared without regard to case, since
// resolvers may change it, and then also decoded as hex or base64. A
// secret may be split across any number of labels. Offsets are in name.
func (s *Set) ScanDNSName(name string) []Hit {
	return s.m.hits(s.m.collect([]byte(name), true))
}

// matcher holds the index of every 16-character window of the canaries'
// random parts.
type matcher struct {
	texts  []string // secret texts
	random [][]bool // which bytes of each text are random
	lower  []string // lower-cased, for case-insensitive streams
	values []Value  // first place of each secret
	exact  index
	fold   index
	maxLen int
	scans  chan *scan // idle working states, for reuse
}

type index struct {
	// filter is a 2^16-bit set over a hash of a window's first 8 bytes: it
	// rejects almost every position with one load and a multiply.
	filter  []uint64
	windows map[[chunk]byte][]ref
}

type ref struct{ s, pos int32 }

func newIndex() index {
	return index{filter: make([]uint64, 1<<16/64), windows: map[[chunk]byte][]ref{}}
}

func filterHash(b []byte) uint64 {
	return (binary.LittleEndian.Uint64(b) * 0x9E3779B97F4A7C15) >> 48
}

func (x *index) add(w string, r ref) {
	k := [chunk]byte([]byte(w))
	h := filterHash(k[:])
	x.filter[h>>6] |= 1 << (h & 63)
	x.windows[k] = append(x.windows[k], r)
}

func newMatcher(secrets []secret, values []Value) *matcher {
	m := &matcher{values: values, exact: newIndex(), fold: newIndex(), scans: make(chan *scan, 2)}
	for i, s := range secrets {
		low := lowerASCII(s.text)
		m.texts = append(m.texts, s.text)
		m.random = append(m.random, s.random)
		m.lower = append(m.lower, low)
		m.maxLen = max(m.maxLen, len(s.text))
		for p := 0; p+chunk <= len(s.text); p++ {
			if slices.Contains(s.random[p:p+chunk], false) {
				continue
			}
			m.exact.add(s.text[p:p+chunk], ref{int32(i), int32(p)})
			m.fold.add(low[p:p+chunk], ref{int32(i), int32(p)})
		}
	}
	return m
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
	sc.m.match(s, hits)
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

// match looks up every 16-byte window of s in the index and extends each
// find as far as it goes.
func (m *matcher) match(s *stream, hits *[]rawHit) {
	idx, texts := &m.exact, m.texts
	if s.fold {
		idx, texts = &m.fold, m.lower
	}
	for _, sg := range s.segs {
		buf := s.buf[sg.a:sg.b]
		for i := 0; i+chunk <= len(buf); i++ {
			h := filterHash(buf[i:])
			if idx.filter[h>>6]&(1<<(h&63)) == 0 {
				continue
			}
			refs := idx.windows[[chunk]byte(buf[i:i+chunk])]
			if len(refs) == 0 {
				continue
			}
			end := i + chunk
			best := map[int32]rawHit{}
			for _, r := range refs {
				sec, pos := texts[r.s], int(r.pos)
				l := 0
				for i-l > 0 && pos-l > 0 && buf[i-l-1] == sec[pos-l-1] {
					l++
				}
				e := 0
				for i+chunk+e < len(buf) && pos+chunk+e < len(sec) && buf[i+chunk+e] == sec[pos+chunk+e] {
					e++
				}
				rh := rawHit{s: int(r.s), a: sg.a + i - l, b: sg.a + i + chunk + e, sa: pos - l, sb: pos + chunk + e, enc: s.enc, depth: s.depth}
				if old, ok := best[r.s]; !ok || rh.sb-rh.sa > old.sb-old.sa {
					best[r.s] = rh
				}
				end = max(end, i+chunk+e)
			}
			for _, rh := range best {
				rh.a, rh.b = s.span(rh.a, rh.b)
				*hits = append(*hits, rh)
			}
			// Resume with the first window that is not inside this match.
			i = end - chunk
		}
	}
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

// textLen is how many bytes of p nested decoders look at.
func textLen(p *stream) int {
	n := 0
	for _, sg := range p.text {
		n += sg.b - sg.a
	}
	return n
}

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
	case EncodingDNSLabels:
		return 5
	}
	return 6
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

// Decoders. Each returns a stream of the decoded pieces of its parent, or
// nil when there is nothing to decode.

var hexval = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for i, c := range "0123456789abcdef" {
		t[c] = int8(i)
	}
	for i, c := range "ABCDEF" {
		t[c] = int8(i + 10)
	}
	return t
}()

func unhex(c byte) int { return int(hexval[c]) }

// decodeHex decodes every run of at least 32 hex digits at both parities.
func decodeHex(sc *scan, p *stream) *stream {
	src := p.orig
	out := sc.bytes.get()
	segs := sc.segs.get()
	defer func() { sc.segs.put(segs) }()
	for _, sg := range p.text {
		for i := sg.a; i < sg.b; {
			var j int
			i, j = nextRun(src, i, sg.b, hexClass, 2*chunk)
			if i < 0 {
				break
			}
			for par := range 2 {
				start, in := len(out), i+par
				for k := in; k+1 < j; k += 2 {
					out = append(out, byte(unhex(src[k])<<4|unhex(src[k+1])))
				}
				segs = append(segs, segment{a: start, b: len(out), kind: segHex, in: in})
			}
			i = j
		}
	}
	out = sc.bytes.put(out)
	if len(segs) == 0 {
		return nil
	}
	return &stream{buf: out, orig: out, segs: segs}
}

var b64val = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for i := range 64 {
		t[base64Std[i]] = int8(i)
		t[base64URL[i]] = int8(i)
	}
	return t
}()

// minB64 is the shortest base64 run that can hold a 16-byte chunk.
const minB64 = (chunk*8 + 5) / 6

// decodeBase64 decodes every run of base64 characters (either alphabet)
// at all four character offsets, so that the decoded bytes line up with the
// encoder's groups wherever the encoded string began. A run continues over
// a line break, as in MIME and PEM wrapping.
func decodeBase64(sc *scan, p *stream) *stream {
	src := p.orig
	out := sc.bytes.get()
	segs := sc.segs.get()
	defer func() { sc.segs.put(segs) }()
	for _, sg := range p.text {
		for i := sg.a; i < sg.b; {
			var j int
			i, j = nextRun(src, i, sg.b, b64Class, chunk)
			if i < 0 {
				break
			}
			var chars []byte
			var pos []int32
			if lineContinues(src, j, sg.b, j-i) > 0 {
				// Wrapped: gather the lines.
				chars, pos = sc.chars.get(), sc.pos.get()
				ls := i
				for {
					for k := ls; k < j; k++ {
						chars = append(chars, src[k])
						pos = append(pos, int32(k))
					}
					next := lineContinues(src, j, sg.b, j-ls)
					if next == 0 {
						break
					}
					ls, j = next, next
					for j < sg.b && b64val[src[j]] >= 0 {
						j++
					}
				}
				chars, pos = sc.chars.put(chars), sc.pos.put(pos)
			} else {
				if j-i < minB64 {
					i = j
					continue
				}
				chars = src[i:j]
			}
			// The standard library decodes whole groups fast; it wants one
			// alphabet, so URL-alphabet characters are mapped first.
			if bytes.ContainsAny(chars, "-_") {
				std := sc.chars.get()
				for _, c := range chars {
					switch c {
					case '-':
						c = '+'
					case '_':
						c = '/'
					}
					std = append(std, c)
				}
				chars = sc.chars.put(std)
			}
			for shift := range 4 {
				if len(chars)-shift < minB64 {
					break
				}
				start := len(out)
				whole := (len(chars) - shift) / 4 * 4
				out = slices.Grow(out, whole/4*3+2)
				n, err := base64.StdEncoding.Decode(out[start:start+whole/4*3], chars[shift:shift+whole])
				if err != nil {
					// Only a "=" inside the groups can fail; our runs hold none.
					n = 0
				}
				out = out[:start+n]
				var acc uint32
				nb := 0
				for _, c := range chars[shift+whole:] {
					acc = acc<<6 | uint32(b64val[c])
					nb += 6
					if nb >= 8 {
						nb -= 8
						out = append(out, byte(acc>>nb))
						acc &= 1<<nb - 1
					}
				}
				segs = append(segs, segment{a: start, b: len(out), kind: segBase64, in: i, shift: shift, pos: pos})
			}
			i = j
		}
	}
	out = sc.bytes.put(out)
	if len(segs) == 0 {
		return nil
	}
	return &stream{buf: out, orig: out, segs: segs}
}

// lineContinues reports where a wrapped base64 run continues after the
// line that ends at j and is line characters long: after "\n" or "\r\n",
// when the line is at least a chunk long (MIME wraps at 76, PEM at 64,
// OpenSSH at 70). It returns 0 when the run ends at j.
func lineContinues(src []byte, j, end, line int) int {
	if line < chunk || j >= end {
		return 0
	}
	k := j
	if src[k] == '\r' {
		k++
	}
	if k+1 < end && src[k] == '\n' && b64val[src[k+1]] >= 0 {
		return k + 1
	}
	return 0
}

// escape is one escape sequence decoded by decodeEscapes.
type escape struct {
	out, outLen int // in the decoded stream
	in, inLen   int // in the parent
}

// decodeEscapes decodes escape sequences in runs of run-characters that
// contain at least one. Only the part of a run within reach of an escape
// is decoded (a canary that has no escape in it was found in the parent
// already), which keeps a single escape in a large body cheap.
func decodeEscapes(sc *scan, p *stream, trigger byte, isRun func(byte) bool, esc func(src []byte, i, end int, dst []byte) ([]byte, int)) *stream {
	src := p.orig
	// A canary holding an escape lies within maxLen decoded characters of
	// it, and its base64 within 4/3 of that.
	reach := 2*sc.m.maxLen + 8
	out := sc.bytes.get()
	segs := sc.segs.get()
	defer func() { sc.segs.put(segs) }()
	var scratch []byte
	for _, sg := range p.text {
		for i := sg.a; i < sg.b; {
			t := bytes.IndexByte(src[i:sg.b], trigger)
			if t < 0 {
				break
			}
			// The run of run-characters around the first trigger.
			i += t
			for i > sg.a && isRun(src[i-1]) {
				i--
			}
			j := i
			for j < sg.b && isRun(src[j]) {
				j++
			}
			if j == i {
				i++
				continue
			}
			// Regions of the run around its escapes.
			ra, rb := -1, -1
			flush := func() {
				if ra < 0 {
					return
				}
				start := len(out)
				escs := sc.escs.get()
				for k := ra; k < rb; {
					var n int
					scratch, n = esc(src, k, rb, scratch[:0])
					if n > 0 {
						escs = append(escs, escape{out: len(out), outLen: len(scratch), in: k, inLen: n})
						out = append(out, scratch...)
						k += n
						continue
					}
					out = append(out, src[k])
					k++
				}
				segs = append(segs, segment{a: start, b: len(out), kind: segEscapes, in: ra, escs: sc.escs.put(escs)})
				ra, rb = -1, -1
			}
			for k := i; k < j; k++ {
				t := bytes.IndexByte(src[k:j], trigger)
				if t < 0 {
					break
				}
				k += t
				var n int
				scratch, n = esc(src, k, j, scratch[:0])
				if n == 0 {
					continue
				}
				a, b := max(i, k-reach), min(j, k+n+reach)
				if ra >= 0 && a > rb {
					flush()
				}
				if ra < 0 {
					ra = a
				}
				rb = max(rb, b)
				k += n - 1
			}
			flush()
			i = j
		}
	}
	out = sc.bytes.put(out)
	if len(segs) == 0 {
		return nil
	}
	return &stream{buf: out, orig: out, segs: segs}
}

func decodeURL(sc *scan, p *stream) *stream {
	return decodeEscapes(sc, p, '%', func(c byte) bool { return c > ' ' && c < 0x7f },
		func(src []byte, i, end int, dst []byte) ([]byte, int) {
			if src[i] != '%' || i+2 >= end {
				return dst, 0
			}
			h, l := unhex(src[i+1]), unhex(src[i+2])
			if h < 0 || l < 0 {
				return dst, 0
			}
			return append(dst, byte(h<<4|l)), 3
		})
}

func decodeJSON(sc *scan, p *stream) *stream {
	return decodeEscapes(sc, p, '\\', func(c byte) bool { return c >= ' ' && c != 0x7f }, jsonEscape)
}

// jsonEscape decodes the JSON string escape at src[i], and JavaScript's
// \xHH, which some encoders emit.
func jsonEscape(src []byte, i, end int, dst []byte) ([]byte, int) {
	if src[i] != '\\' || i+1 >= end {
		return dst, 0
	}
	switch c := src[i+1]; c {
	case '"', '\\', '/':
		return append(dst, c), 2
	case 'b':
		return append(dst, '\b'), 2
	case 'f':
		return append(dst, '\f'), 2
	case 'n':
		return append(dst, '\n'), 2
	case 'r':
		return append(dst, '\r'), 2
	case 't':
		return append(dst, '\t'), 2
	case 'x':
		if i+3 < end && unhex(src[i+2]) >= 0 && unhex(src[i+3]) >= 0 {
			return append(dst, byte(unhex(src[i+2])<<4|unhex(src[i+3]))), 4
		}
	case 'u':
		r, ok := hex4(src, i+2, end)
		if !ok {
			return dst, 0
		}
		n := 6
		if 0xD800 <= r && r < 0xDC00 && i+11 < end && src[i+6] == '\\' && src[i+7] == 'u' {
			if lo, ok := hex4(src, i+8, end); ok && 0xDC00 <= lo && lo < 0xE000 {
				r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				n = 12
			}
		}
		if r < 0x100 {
			// \u00XX is how JSON encoders write control bytes and how
			// obfuscators write any byte: keep it one byte, as the
			// original string's code unit, so binary content matches.
			return append(dst, byte(r)), n
		}
		return utf8.AppendRune(dst, r), n
	}
	return dst, 0
}

func hex4(src []byte, i, end int) (rune, bool) {
	if i+4 > end {
		return 0, false
	}
	var r rune
	for _, c := range src[i : i+4] {
		v := unhex(c)
		if v < 0 {
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, true
}

func isLabelChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

// decodeDNS joins the labels of dotted names into one case-insensitive
// stream. In scanned data (needDot) it takes runs of label characters and
// dots that contain a dot; for a query name, the whole name.
func decodeDNS(sc *scan, p *stream, needDot bool) *stream {
	src := p.orig
	out := sc.bytes.get()
	segs := sc.segs.get()
	defer func() { sc.segs.put(segs) }()
	pos := sc.pos.get()
	defer func() { sc.pos.put(pos) }()
	class := labelClass
	if !needDot {
		class = anyClass
	}
	for _, sg := range p.text {
		for i := sg.a; i < sg.b; {
			var j int
			i, j = nextRun(src, i, sg.b, class, chunk)
			if i < 0 {
				break
			}
			dots := bytes.Count(src[i:j], []byte{'.'})
			if j-i-dots >= chunk && (dots > 0 || !needDot) {
				start, ps := len(out), len(pos)
				for q := i; q < j; q++ {
					if src[q] != '.' {
						out = append(out, src[q])
						pos = append(pos, int32(q))
					}
				}
				// pos may move as it grows; each segment keeps its own view.
				segs = append(segs, segment{a: start, b: len(out), kind: segLabels, pos: pos[ps:len(pos):len(pos)]})
			}
			i = j
		}
	}
	out = sc.bytes.put(out)
	if len(segs) == 0 {
		return nil
	}
	low := sc.bytes.put(append(sc.bytes.get(), out...))
	for i, c := range low {
		if 'A' <= c && c <= 'Z' {
			low[i] = c + 'a' - 'A'
		}
	}
	return &stream{buf: low, orig: out, segs: segs, fold: true}
}
