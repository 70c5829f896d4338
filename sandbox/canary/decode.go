package canary

import (
	"bytes"
	"encoding/base64"
	"slices"
	"unicode/utf8"
)

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
			i, j = nextRun(src, i, sg.b, hexClass, 2*MinChunk)
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

// minB64 is the shortest base64 run that can hold MinChunk bytes.
const minB64 = (MinChunk*8 + 5) / 6

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
			i, j = nextRun(src, i, sg.b, b64Class, MinChunk)
			if i < 0 {
				break
			}
			var chars []byte
			var pos []int32
			if lineContinues(src, j, sg.b, j-i) > 0 {
				// Wrapped: gather the lines.
				chars, pos, j = gatherWrapped(sc, src, i, j, sg.b)
			} else {
				if j-i < minB64 {
					i = j
					continue
				}
				chars = src[i:j]
			}
			// The standard library decodes whole groups fast; it wants one
			// alphabet, so URL-alphabet characters are mapped first.
			chars = toStdAlphabet(sc, chars)
			out, segs = decodeShifts(out, segs, chars, i, pos)
			i = j
		}
	}
	out = sc.bytes.put(out)
	if len(segs) == 0 {
		return nil
	}
	return &stream{buf: out, orig: out, segs: segs}
}

// gatherWrapped collects a base64 run that starts at i and continues over
// line breaks: the characters of each of its lines up to end, with the
// input position of each character. The first line ends at j; runEnd is
// where the last one ends.
func gatherWrapped(sc *scan, src []byte, i, j, end int) (chars []byte, pos []int32, runEnd int) {
	chars, pos = sc.chars.get(), sc.pos.get()
	ls := i
	for {
		for k := ls; k < j; k++ {
			chars = append(chars, src[k])
			pos = append(pos, int32(k))
		}
		next := lineContinues(src, j, end, j-ls)
		if next == 0 {
			break
		}
		ls, j = next, next
		for j < end && b64val[src[j]] >= 0 {
			j++
		}
	}
	chars, pos = sc.chars.put(chars), sc.pos.put(pos)
	return chars, pos, j
}

// toStdAlphabet maps the URL-alphabet characters of a base64 run ("-" and
// "_") to the standard alphabet's ("+" and "/"). A run without any is
// returned as it is.
func toStdAlphabet(sc *scan, chars []byte) []byte {
	if !bytes.ContainsAny(chars, "-_") {
		return chars
	}
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
	return sc.chars.put(std)
}

// decodeShifts decodes a base64 run (standard alphabet) at each of the
// four character offsets it is long enough for: whole groups with the
// standard library, the bits of the trailing partial group by hand. It
// appends the bytes to out and one segment per offset to segs. in is
// where the run starts in the input; pos holds the input position of each
// character when the run was gathered across lines, else nil.
func decodeShifts(out []byte, segs []segment, chars []byte, in int, pos []int32) ([]byte, []segment) {
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
		segs = append(segs, segment{a: start, b: len(out), kind: segBase64, in: in, shift: shift, pos: pos})
	}
	return out, segs
}

// lineContinues reports where a wrapped base64 run continues after the
// line that ends at j and is line characters long: after "\n" or "\r\n",
// when the line is at least MinChunk long (MIME wraps at 76, PEM at 64,
// OpenSSH at 70). It returns 0 when the run ends at j.
func lineContinues(src []byte, j, end, line int) int {
	if line < MinChunk || j >= end {
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
			i, j = nextRun(src, i, sg.b, class, MinChunk)
			if i < 0 {
				break
			}
			dots := bytes.Count(src[i:j], []byte{'.'})
			if j-i-dots >= MinChunk && (dots > 0 || !needDot) {
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
