package store

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/verifymcp/verifymcp/rubric"
)

// encodeResult returns exactly the bytes json.Marshal(res) returns, in a
// fraction of its time: a rescoring pass encodes every new result, and
// encoding/json's reflection walk over findings was a tenth of the pass.
//
// The encoder is written for the shape rubric.Result, rubric.Finding and
// rubric.DimensionScore have; resultShapeKnown checks that shape once,
// field by field (name, JSON tag, type), and when any of them differs (a
// field added, renamed, retyped, or given a marshaler) every result is
// encoded by json.Marshal instead, so the output never depends on this
// encoder keeping up. A value json.Marshal refuses (a NaN or infinite
// score) is handed to it too, for its error.
func encodeResult(res rubric.Result) ([]byte, error) {
	// Copied out of the reused buffer at its exact size: guessing the size
	// instead either wastes the excess of each result for as long as it
	// waits to be written, or copies it when the guess falls short.
	var out []byte
	err := withResultJSON(&res, func(j []byte, reused bool) {
		if out = j; reused {
			out = make([]byte, len(j))
			copy(out, j)
		}
	})
	return out, err
}

// withResultJSON calls use with encodeResult's bytes for res. When reused
// is set they are in a reused buffer, valid only until use returns: a
// caller that transforms them at once (compressJSON) saves allocating
// and copying the JSON of every result.
func withResultJSON(res *rubric.Result, use func(j []byte, reused bool)) error {
	if resultShapeKnown {
		bp := encodeBuffers.Get().(*[]byte)
		buf, ok := appendResult((*bp)[:0], res)
		if ok {
			use(buf, true)
		}
		if cap(buf) <= 1<<20 {
			*bp = buf
			encodeBuffers.Put(bp)
		}
		if ok {
			return nil
		}
	}
	j, err := json.Marshal(*res)
	if err != nil {
		return err
	}
	use(j, false)
	return nil
}

// encodeBuffers are withResultJSON's buffers.
var encodeBuffers = sync.Pool{New: func() any { return new([]byte) }}

func appendResult(b []byte, res *rubric.Result) ([]byte, bool) {
	ok := true
	b = append(b, `{"rubric_version":`...)
	b = appendJSONString(b, res.RubricVersion)
	b = append(b, `,"rubric_hash":`...)
	b = appendJSONString(b, res.RubricHash)
	b = append(b, `,"findings":`...)
	b = appendArray(b, len(res.Findings), res.Findings == nil, func(b []byte, i int) []byte {
		f := &res.Findings[i]
		b = append(b, `{"code":`...)
		b = appendJSONString(b, f.Code)
		b = append(b, `,"kind":`...)
		b = appendJSONString(b, string(f.Kind))
		b = append(b, `,"severity":`...)
		b = appendJSONString(b, string(f.Severity))
		b = append(b, `,"dimension":`...)
		b = appendJSONString(b, f.Dimension)
		b = append(b, `,"subject":`...)
		b = appendJSONString(b, f.Subject)
		b = append(b, `,"message":`...)
		b = appendJSONString(b, f.Message)
		b = append(b, `,"evidence":`...)
		b = appendJSONString(b, f.Evidence)
		b = append(b, `,"value":`...)
		if f.Value == nil {
			b = append(b, "null"...)
		} else {
			b, ok = appendJSONFloat(b, *f.Value, ok)
		}
		return append(b, '}')
	})
	b = append(b, `,"dimensions":`...)
	b = appendArray(b, len(res.Dimensions), res.Dimensions == nil, func(b []byte, i int) []byte {
		d := &res.Dimensions[i]
		b, ok = appendDimensionScore(b, d, ok)
		b = append(b, `,"reason":`...)
		b = appendJSONString(b, d.Reason)
		return append(b, '}')
	})
	b, ok = appendComposite(b, res.Score, ok)
	if res.ContractChecks != nil {
		// Small, once per result: encoding/json writes it.
		j, err := json.Marshal(res.ContractChecks)
		if err != nil {
			return b, false
		}
		b = append(b, `,"contract_checks":`...)
		b = append(b, j...)
	}
	return append(b, '}'), ok
}

// appendArray appends a JSON array of n elements, each appended by elem,
// or null when null is set (encoding/json's form of a nil slice).
func appendArray(b []byte, n int, null bool, elem func(b []byte, i int) []byte) []byte {
	if null {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = elem(b, i)
	}
	return append(b, ']')
}

// appendDimensionScore appends d's id, weight, state and score, as the
// start of its JSON object: the fields a result and its summary share.
func appendDimensionScore(b []byte, d *rubric.DimensionScore, ok bool) ([]byte, bool) {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, d.ID)
	b = append(b, `,"weight":`...)
	b, ok = appendJSONFloat(b, d.Weight, ok)
	b = append(b, `,"state":`...)
	b = appendJSONString(b, string(d.State))
	b = append(b, `,"score":`...)
	return appendJSONFloat(b, d.Score, ok)
}

// appendComposite appends the "score" field of a result or a summary.
func appendComposite(b []byte, score *float64, ok bool) ([]byte, bool) {
	b = append(b, `,"score":`...)
	if score == nil {
		return append(b, "null"...), ok
	}
	return appendJSONFloat(b, *score, ok)
}

// appendJSONFloat appends f as encoding/json writes a float64; ok becomes
// false for a value it refuses.
func appendJSONFloat(b []byte, f float64, ok bool) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return append(b, '0'), false
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// As encoding/json: e-09 becomes e-9.
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, ok
}

// jsonSafe marks the ASCII bytes encoding/json copies into a string as
// they are, escaping HTML as json.Marshal does: everything printable but
// the quote, the backslash, <, > and &.
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// appendJSONString appends s quoted as json.Marshal quotes a string:
// HTML characters, U+2028 and U+2029 escaped, invalid UTF-8 replaced by
// U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		// Eight bytes at a time while none needs a closer look.
		for i+8 <= len(s) && safe8(s[i:i+8]) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// safe8 reports whether the eight bytes of s are all ASCII that
// appendJSONString copies as they are: none is a control character, at or
// above 0x80, or one of " \\ < > &.
func safe8(s string) bool {
	x := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	// A byte with its top bit set, or (exact when there is none) under
	// 0x20.
	bad := x | (x-0x20*lsb)&^x
	// A byte equal to one of the five: zero after the xor.
	bad |= zeroByte(x ^ '"'*lsb)
	bad |= zeroByte(x ^ '\\'*lsb)
	bad |= zeroByte(x ^ '<'*lsb)
	bad |= zeroByte(x ^ '>'*lsb)
	bad |= zeroByte(x ^ '&'*lsb)
	return bad&msb == 0
}

// zeroByte has the top bit set in some byte if a byte of v is zero (and
// perhaps in bytes above it): the classic test, exact on whether any is.
func zeroByte(v uint64) uint64 { return (v - lsb) &^ v }

// resultShapeKnown reports whether rubric.Result and the types it holds
// are exactly what appendResult encodes.
var resultShapeKnown = shapeIs(reflect.TypeFor[rubric.Result](), []fieldShape{
	{"RubricVersion", "rubric_version", reflect.String},
	{"RubricHash", "rubric_hash", reflect.String},
	{"Findings", "findings", reflect.Slice},
	{"Dimensions", "dimensions", reflect.Slice},
	{"Score", "score", reflect.Pointer},
	{"ContractChecks", "contract_checks,omitempty", reflect.Pointer},
}) && shapeIs(reflect.TypeFor[rubric.Finding](), []fieldShape{
	{"Code", "code", reflect.String},
	{"Kind", "kind", reflect.String},
	{"Severity", "severity", reflect.String},
	{"Dimension", "dimension", reflect.String},
	{"Subject", "subject", reflect.String},
	{"Message", "message", reflect.String},
	{"Evidence", "evidence", reflect.String},
	{"Value", "value", reflect.Pointer},
}) && shapeIs(reflect.TypeFor[rubric.DimensionScore](), []fieldShape{
	{"ID", "id", reflect.String},
	{"Weight", "weight", reflect.Float64},
	{"State", "state", reflect.String},
	{"Score", "score", reflect.Float64},
	{"Reason", "reason", reflect.String},
}) &&
	reflect.TypeFor[rubric.Result]().Field(2).Type.Elem() == reflect.TypeFor[rubric.Finding]() &&
	reflect.TypeFor[rubric.Result]().Field(3).Type.Elem() == reflect.TypeFor[rubric.DimensionScore]() &&
	reflect.TypeFor[rubric.Result]().Field(4).Type.Elem() == reflect.TypeFor[float64]() &&
	reflect.TypeFor[rubric.Finding]().Field(7).Type.Elem() == reflect.TypeFor[float64]()

type fieldShape struct {
	name, tag string
	kind      reflect.Kind
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[interface{ MarshalText() ([]byte, error) }]()
)

// shapeIs reports whether t is a struct of exactly the fields want, in
// order, none of whose types (nor t) encoding/json would hand to a
// marshaler.
func shapeIs(t reflect.Type, want []fieldShape) bool {
	hasMarshaler := func(t reflect.Type) bool {
		pt := reflect.PointerTo(t)
		return t.Implements(marshalerType) || pt.Implements(marshalerType) ||
			t.Implements(textMarshalerType) || pt.Implements(textMarshalerType)
	}
	if t.Kind() != reflect.Struct || t.NumField() != len(want) || hasMarshaler(t) {
		return false
	}
	for i, w := range want {
		f := t.Field(i)
		if f.Name != w.name || f.Tag.Get("json") != w.tag || f.Type.Kind() != w.kind || f.Anonymous || hasMarshaler(f.Type) {
			return false
		}
		if w.kind == reflect.Pointer || w.kind == reflect.Slice {
			if hasMarshaler(f.Type.Elem()) {
				return false
			}
		}
	}
	return true
}
