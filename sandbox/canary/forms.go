package canary

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"slices"
	"strings"
)

// form is one way of writing a secret that Scan recognises by comparing
// text rather than by decoding it: the secret itself, reversed, and the
// encodings that cannot be decoded from what is captured (base64 whose
// case a resolver folded) or that are cheaper to match than to decode
// (base32, reversed encodings). Each encoding is listed at every
// alignment the secret can have inside a longer encoded message, so that
// base32 of a whole environment dump is found as well as base32 of the
// key alone.
type form struct {
	s     int32  // the secret
	enc   string // encodings, outermost first ("reversed+base64"); "" for the secret itself
	depth int    // how many encodings enc names
	text  string // the form in its own case
	lower string // lower-cased, for folded streams and caseless forms
	// caseless forms match without regard to case: hex and base32
	// decoders accept either case, so an encoder may write either.
	caseless bool
	// Character c of the form, counted from its start in writing order
	// (from its end when reversed), carries bits [c*bits+off,
	// (c+1)*bits+off) of the secret.
	bits, off int
	reversed  bool
}

// secretBits returns which bits of an n-byte secret the form's characters
// [x, y) carry.
func (f *form) secretBits(x, y, n int) (int, int) {
	if f.reversed {
		x, y = len(f.text)-y, len(f.text)-x
	}
	return max(x*f.bits+f.off, 0), min(y*f.bits+f.off, 8*n)
}

// random reports whether character c carries a bit of a random byte of
// the secret.
func (f *form) random(c int, random []bool) bool {
	if f.reversed {
		c = len(f.text) - 1 - c
	}
	lo, hi := c*f.bits+f.off, (c+1)*f.bits+f.off
	for b := lo / 8; b <= (hi-1)/8 && b < len(random); b++ {
		if random[b] {
			return true
		}
	}
	return false
}

const (
	base32HexUp = "0123456789ABCDEFGHIJKLMNOPQRSTUV" // RFC 4648 base32hex
	formKey     = 8                                  // bytes of a window key
	// scanStride is how far apart the windows of scanned data that are
	// looked up are: every window of every form is indexed, so a match of
	// formKey+scanStride-1 characters always holds a looked-up window, and
	// every threshold of Scan is at least that long (MinChunk characters
	// raw, more encoded). Looking up one position in four makes matching
	// about four times cheaper than looking up every one.
	scanStride = 4
)

var (
	b32Std = base32.NewEncoding(upperDigits32).WithPadding(base32.NoPadding)
	b32Hex = base32.NewEncoding(base32HexUp).WithPadding(base32.NoPadding)
)

// formsOf lists the forms of one secret.
//
// Writing the secret after p bytes of some message shifts its bits by 8p
// relative to the encoder's groups; only 8p modulo the group size matters,
// so base64 has 3 alignments and base32 5. The characters that mix bits
// of the message before the secret with the secret's own are left out
// (their value depends on what came before); the last character is
// written as if the secret ended the message (zero bits, as an encoder
// pads), which is what it is when the secret alone was encoded.
func formsOf(si int32, text string) []form {
	var out []form
	add := func(enc string, depth int, t string, caseless bool, bits, off int) {
		f := form{s: si, enc: enc, depth: depth, text: t, lower: lowerASCII(t), caseless: caseless, bits: bits, off: off}
		out = append(out, f)
		r := f
		r.reversed, r.text, r.lower = true, reverse(t), reverse(f.lower)
		if enc == "" {
			r.enc, r.depth = EncodingReversed, 1
		} else {
			r.enc, r.depth = EncodingReversed+"+"+enc, depth+1
		}
		out = append(out, r)
	}
	add("", 0, text, false, 8, 0)
	// Hex is decoded, in either case and at either parity, so only its
	// reversal needs a form.
	out = append(out, func() form {
		h := hex.EncodeToString([]byte(text))
		return form{s: si, enc: EncodingReversed + "+" + EncodingHex, depth: 2, text: reverse(h), lower: reverse(h), caseless: true, bits: 4, reversed: true}
	}())
	aligned := func(enc string, encode func([]byte) string, bits, group int, caseless bool) {
		for p := range group {
			msg := append(make([]byte, p), text...)
			e := encode(msg)
			c0 := (8*p + bits - 1) / bits // first character with no bit of the prefix
			add(enc, 1, e[c0:], caseless, bits, c0*bits-8*p)
		}
	}
	// Base64 is decoded too, but not once a resolver has lower-cased it:
	// these forms, folded, find it there.
	aligned(EncodingBase64, base64.RawStdEncoding.EncodeToString, 6, 3, false)
	aligned(EncodingBase64, base64.RawURLEncoding.EncodeToString, 6, 3, false)
	aligned(EncodingBase32, b32Std.EncodeToString, 5, 5, true)
	aligned(EncodingBase32Hex, b32Hex.EncodeToString, 5, 5, true)
	// The same forms can come out twice (base64 with no + or / in it is
	// the same in both alphabets).
	slices.SortStableFunc(out, func(a, b form) int { return strings.Compare(a.text, b.text) })
	return slices.CompactFunc(out, func(a, b form) bool {
		return a.text == b.text && a.enc == b.enc && a.off == b.off && a.reversed == b.reversed
	})
}

func reverse(s string) string {
	b := []byte(s)
	slices.Reverse(b)
	return string(b)
}

// fold64 lower-cases the ASCII letters among the 8 bytes of w, as
// lowerASCII does, without a branch: bytes of 0x80 and above are left
// alone.
func fold64(w uint64) uint64 {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	x := w &^ high
	ge := x + (0x80-'A')*ones   // high bit set where x >= 'A'
	gt := x + (0x80-'Z'-1)*ones // high bit set where x > 'Z'
	return w | (ge&^gt&^w&high)>>2
}

func load64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

// formRef is one indexed window: form f, at character pos; next is the
// next window with the same key, or -1.
type formRef struct{ f, pos, next int32 }

// formIndex finds the forms' windows: every formKey characters,
// lower-cased, of a form whose characters all carry random bits.
type formIndex struct {
	filter []uint64 // 2^filterBits bits over a hash of the key
	first  map[uint64]int32
	refs   []formRef
}

const filterBits = 20

func filterHash(w uint64) uint64 { return (w * 0x9E3779B97F4A7C15) >> (64 - filterBits) }

func (x *formIndex) has(w uint64) bool {
	h := filterHash(w)
	return x.filter[h>>6]&(1<<(h&63)) != 0
}

// lookup returns the first window with key w, or -1.
func (x *formIndex) lookup(w uint64) int32 {
	if k, ok := x.first[w]; ok {
		return k
	}
	return -1
}

func (x *formIndex) add(w uint64, f, pos int32) {
	h := filterHash(w)
	x.filter[h>>6] |= 1 << (h & 63)
	next := x.lookup(w)
	x.first[w] = int32(len(x.refs))
	x.refs = append(x.refs, formRef{f, pos, next})
}

func newFormIndex(forms []form, random [][]bool) formIndex {
	n := 0
	for _, f := range forms {
		n += len(f.text)
	}
	x := formIndex{filter: make([]uint64, 1<<filterBits/64), first: make(map[uint64]int32, n), refs: make([]formRef, 0, n)}
	for fi := range forms {
		f := &forms[fi]
		rnd := make([]bool, len(f.text))
		for c := range rnd {
			rnd[c] = f.random(c, random[f.s])
		}
		for c := 0; c+formKey <= len(f.text); c++ {
			if slices.Contains(rnd[c:c+formKey], false) {
				continue
			}
			x.add(load64([]byte(f.lower[c:c+formKey])), int32(fi), int32(c))
		}
	}
	return x
}
