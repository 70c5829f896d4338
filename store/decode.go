package store

import (
	"encoding"
	"encoding/binary"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/verifymcp/verifymcp/evidence"
)

// DecodeBundle decodes and validates stored bundle bytes. Its result is
// exactly that of evidence.Decode, and it is several times faster on the
// bundles json.Marshal writes, which is what makes rescoring a large store
// cheap: encoding/json's decoder was most of the cost.
//
// The fast path below handles the subset of JSON that encoding/json decodes
// without surprises; on anything else (an escape it does not handle, a
// duplicate key, a key that matches a field only case-insensitively,
// invalid UTF-8, a number that does not fit, a type it does not know) it
// gives up and evidence.Decode decodes the bytes instead, so correctness
// never depends on the fast path covering every case. The equivalence is
// tested, including by fuzzing, against evidence.Decode, for bundles with
// and without behaviour, supply-chain and judge evidence: the fast path
// derives its decoders from the evidence types by reflection, so a field
// added there (as behavior, supply, judge and the signals' endpoint,
// fetched_at, cached and authenticated were) is decoded natively, and any
// type it cannot reproduce falls back. The judge's result needs nothing
// new: its temperature (the smallest positive float32 when 0 was asked
// for) goes through strconv.ParseFloat as in encoding/json, its fetch time
// through time.Time's UnmarshalJSON.
func DecodeBundle(data []byte) (*evidence.Bundle, error) {
	var b evidence.Bundle
	if err := fastDecode(data, &b, nil); err != nil {
		return evidence.Decode(data)
	}
	if err := b.Validate(); err != nil {
		return nil, err
	}
	return &b, nil
}

// errFallback means the fast path declined the input.
var errFallback = errors.New("store: fast decode declined")

// unmarshal is json.Unmarshal into a zero value, by the fast path when it
// can.
func unmarshal[T any](data []byte, v *T) error {
	if err := fastUnmarshal(data, v); err == nil {
		return nil
	}
	var zero T
	*v = zero
	return json.Unmarshal(data, v)
}

// fastUnmarshal decodes data into the value v points to, as json.Unmarshal
// would into a zero value, or returns errFallback.
func fastUnmarshal(data []byte, v any) error { return fastDecode(data, v, nil) }

// fastDecode is fastUnmarshal; with memo, values of the types memo shares
// are shared with earlier decodes of the same bytes (see decodeMemo).
//
// Each string is allocated on its own. Cutting them from one copy of the
// input instead saves most of the decoder's allocations, but measured
// slower: the large copy costs more than the small allocations it saves.
func fastDecode(data []byte, v any, memo *decodeMemo) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return errFallback
	}
	c := codecFor(rv.Type().Elem())
	d := decoder{data: data, memo: memo}
	d.skipSpace()
	if err := d.value(rv.Elem(), c); err != nil {
		return err
	}
	d.skipSpace()
	if d.i != len(d.data) {
		return errFallback
	}
	return nil
}

type kind uint8

const (
	kindUnsupported kind = iota
	kindUnmarshaler      // implements json.Unmarshaler on its pointer
	kindPointer
	kindStruct
	kindMap
	kindSlice
	kindString
	kindBool
	kindInt
	kindUint
	kindFloat
)

// codec is what the decoder knows about one Go type.
type codec struct {
	kind   kind
	typ    reflect.Type
	elem   *codec // pointer, slice and map element
	fields []field
	byName map[string]int
	// lastLen is the number of entries of the last map of this type
	// decoded, a size hint for the next.
	lastLen atomic.Int32
	// empty is a non-nil slice of length and capacity 0, which every []
	// of a slice type shares: nothing can be written through it, and an
	// append to it allocates anew.
	empty reflect.Value
}

type field struct {
	name  string
	index int
	codec *codec
}

var codecs sync.Map // reflect.Type -> *codec

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func codecFor(t reflect.Type) *codec {
	if c, ok := codecs.Load(t); ok {
		return c.(*codec)
	}
	building := map[reflect.Type]*codec{}
	c := buildCodec(t, building)
	for bt, bc := range building {
		codecs.LoadOrStore(bt, bc)
	}
	return c
}

// buildCodec describes t. Anything whose encoding/json semantics the fast
// path does not reproduce is kindUnsupported, which makes decoding any
// value of it fall back.
func buildCodec(t reflect.Type, building map[reflect.Type]*codec) *codec {
	if c, ok := building[t]; ok {
		return c
	}
	c := &codec{typ: t}
	building[t] = c
	if t.Kind() == reflect.Pointer {
		c.kind, c.elem = kindPointer, buildCodec(t.Elem(), building)
		return c
	}
	// encoding/json hands values of these types to their own methods.
	switch pt := reflect.PointerTo(t); {
	case pt.Implements(unmarshalerType):
		c.kind = kindUnmarshaler
		return c
	case pt.Implements(textUnmarshalerType):
		return c
	}
	switch t.Kind() {
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return c // base64 in encoding/json
		}
		c.kind, c.elem = kindSlice, buildCodec(t.Elem(), building)
		c.empty = reflect.MakeSlice(t, 0, 0)
	case reflect.Map:
		if t.Key().Kind() != reflect.String || reflect.PointerTo(t.Key()).Implements(textUnmarshalerType) {
			return c
		}
		c.kind, c.elem = kindMap, buildCodec(t.Elem(), building)
	case reflect.String:
		c.kind = kindString
	case reflect.Bool:
		c.kind = kindBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		c.kind = kindInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		c.kind = kindUint
	case reflect.Float32, reflect.Float64:
		c.kind = kindFloat
	case reflect.Struct:
		c.kind = kindStruct
		c.byName = map[string]int{}
		for i := range t.NumField() {
			sf := t.Field(i)
			if sf.Anonymous {
				c.kind = kindUnsupported // embedded fields promote names
				return c
			}
			if !sf.IsExported() {
				continue
			}
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			for _, o := range strings.Split(opts, ",") {
				if o == "string" {
					c.kind = kindUnsupported
					return c
				}
			}
			if name == "" {
				name = sf.Name
			}
			if _, dup := c.byName[name]; dup || !isASCII(name) {
				c.kind = kindUnsupported
				return c
			}
			c.byName[name] = len(c.fields)
			c.fields = append(c.fields, field{name: name, index: i, codec: buildCodec(sf.Type, building)})
		}
	}
	return c
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

type decoder struct {
	data  []byte
	i     int
	depth int
	memo  *decodeMemo
}

// maxDepth bounds nesting well below encoding/json's limit of 10000, so
// that the fast path never accepts what encoding/json rejects for depth.
const maxDepth = 1000

func (d *decoder) enter() error {
	d.depth++
	if d.depth > maxDepth {
		return errFallback
	}
	return nil
}

func (d *decoder) skipSpace() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *decoder) peek() byte {
	if d.i < len(d.data) {
		return d.data[d.i]
	}
	return 0
}

// literal consumes lit if the input continues with it.
func (d *decoder) literal(lit string) bool {
	if len(d.data)-d.i >= len(lit) && string(d.data[d.i:d.i+len(lit)]) == lit {
		d.i += len(lit)
		return true
	}
	return false
}

// value decodes the value at the cursor into v, which is addressable.
func (d *decoder) value(v reflect.Value, c *codec) error {
	if d.peek() == 'n' {
		if !d.literal("null") {
			return errFallback
		}
		switch c.kind {
		case kindPointer, kindMap, kindSlice:
			v.SetZero()
			return nil
		case kindStruct, kindString, kindBool, kindInt, kindUint, kindFloat:
			return nil // encoding/json leaves the value unchanged
		case kindUnmarshaler:
			// encoding/json hands null to a non-pointer Unmarshaler:
			// json.RawMessage becomes "null", time.Time stays zero.
			if err := v.Addr().Interface().(json.Unmarshaler).UnmarshalJSON([]byte("null")); err != nil {
				return errFallback
			}
			return nil
		default:
			return errFallback
		}
	}
	switch c.kind {
	case kindUnmarshaler:
		start := d.i
		if err := d.skipValue(); err != nil {
			return err
		}
		u := v.Addr().Interface().(json.Unmarshaler)
		if err := u.UnmarshalJSON(d.data[start:d.i]); err != nil {
			return errFallback
		}
		return nil
	case kindPointer:
		if v.IsNil() {
			v.Set(reflect.New(c.typ.Elem()))
		}
		return d.value(v.Elem(), c.elem)
	case kindStruct:
		return d.object(v, c)
	case kindMap:
		return d.mapValue(v, c)
	case kindSlice:
		return d.slice(v, c)
	case kindString:
		s, err := d.str()
		if err != nil {
			return err
		}
		v.SetString(s)
		return nil
	case kindBool:
		switch {
		case d.literal("true"):
			v.SetBool(true)
		case d.literal("false"):
			v.SetBool(false)
		default:
			return errFallback
		}
		return nil
	case kindInt:
		tok, err := d.number()
		if err != nil {
			return err
		}
		n, err := parseInt(tok)
		if err != nil || v.OverflowInt(n) {
			return errFallback
		}
		v.SetInt(n)
		return nil
	case kindUint:
		tok, err := d.number()
		if err != nil {
			return err
		}
		n, err := strconv.ParseUint(string(tok), 10, 64)
		if err != nil || v.OverflowUint(n) {
			return errFallback
		}
		v.SetUint(n)
		return nil
	case kindFloat:
		tok, err := d.number()
		if err != nil {
			return err
		}
		f, err := strconv.ParseFloat(string(tok), c.typ.Bits())
		if err != nil || v.OverflowFloat(f) {
			return errFallback
		}
		v.SetFloat(f)
		return nil
	default:
		return errFallback
	}
}

func (d *decoder) object(v reflect.Value, c *codec) error {
	if d.peek() != '{' {
		return errFallback
	}
	if err := d.enter(); err != nil {
		return err
	}
	defer func() { d.depth-- }()
	d.i++
	var seenSmall uint64
	var seenBig map[int]bool
	next := 0 // the field after the last one decoded
	first := true
	for {
		d.skipSpace()
		if first && d.peek() == '}' {
			d.i++
			return nil
		}
		first = false
		key, ok := d.rawKey()
		if !ok {
			return errFallback
		}
		d.skipSpace()
		if d.peek() != ':' {
			return errFallback
		}
		d.i++
		d.skipSpace()
		// json.Marshal writes fields in their order, leaving out only
		// empty omitempty ones, so the key is most often the next field
		// or one shortly after it: look there before hashing it.
		idx, ok := -1, false
		for j := next; j < len(c.fields); j++ {
			if c.fields[j].name == string(key) {
				idx, ok = j, true
				break
			}
		}
		switch {
		case ok:
		case len(c.fields) <= 16:
			// The fields before next are all there is left to look at,
			// which is quicker than hashing the key.
			for j := range min(next, len(c.fields)) {
				if c.fields[j].name == string(key) {
					idx, ok = j, true
					break
				}
			}
		default:
			idx, ok = c.byName[string(key)]
		}
		if ok {
			next = idx + 1
			// A repeated key merges into the earlier value in
			// encoding/json; leave that to it.
			if idx < 64 {
				if seenSmall&(1<<idx) != 0 {
					return errFallback
				}
				seenSmall |= 1 << idx
			} else {
				if seenBig == nil {
					seenBig = map[int]bool{}
				}
				if seenBig[idx] {
					return errFallback
				}
				seenBig[idx] = true
			}
			f := c.fields[idx]
			if err := d.field(v.Field(f.index), f.codec); err != nil {
				return err
			}
		} else {
			// encoding/json matches keys case-insensitively when no field
			// matches exactly, and ignores the rest.
			// Keys and field names are ASCII (rawKey and buildCodec see to
			// it), which fold to equal only at equal length.
			for _, f := range c.fields {
				if len(f.name) == len(key) && strings.EqualFold(f.name, string(key)) {
					return errFallback
				}
			}
			if err := d.skipValue(); err != nil {
				return err
			}
		}
		d.skipSpace()
		switch d.peek() {
		case ',':
			d.i++
		case '}':
			d.i++
			return nil
		default:
			return errFallback
		}
	}
}

// field decodes a struct field's value, sharing it through d.memo when
// the memo shares values of its type.
func (d *decoder) field(v reflect.Value, c *codec) error {
	var t *memoTable
	if d.memo != nil && c.kind == kindPointer && d.peek() == '{' {
		t = d.memo.table(c.typ)
	}
	if t == nil {
		return d.value(v, c)
	}
	// A value found in the memo is recognised by its bytes alone: they are
	// a valid object, which ends where they end. Otherwise its end is
	// found without validating what it holds, and the bytes up to there
	// are decoded on their own below, where they must make exactly one
	// valid value.
	start := d.i
	if n, p, ok := t.load(d.data[start:]); ok {
		d.i = start + n
		v.Set(p)
		return nil
	}
	end := objectEnd(d.data, start)
	if end < 0 {
		return errFallback
	}
	raw := d.data[start:end]
	sub := decoder{data: raw, depth: d.depth}
	p := reflect.New(c.typ.Elem())
	if err := sub.value(p.Elem(), c.elem); err != nil {
		return err
	}
	if sub.i != len(raw) {
		return errFallback
	}
	d.i = end
	t.store(raw, p)
	v.Set(p)
	return nil
}

// stringEnd returns the offset just past the string that starts at
// data[i], or -1 if the input ends first. It does not validate the
// string.
func stringEnd(data []byte, i int) int {
	for i++; i < len(data); {
		i = plainRun(data, i)
		switch {
		case i >= len(data):
			return -1
		case data[i] == '"':
			return i + 1
		case data[i] == '\\':
			i += 2
		default:
			i++
		}
	}
	return -1
}

// objectEnd returns the offset just past the object or array that starts
// at data[i], by counting brackets outside strings, or -1 if the input
// ends first. It does not validate what it passes over.
func objectEnd(data []byte, i int) int {
	depth := 0
	for i < len(data) {
		switch structural[data[i]] {
		case 0:
			i++
		case '"':
			if i = stringEnd(data, i); i < 0 {
				return -1
			}
		case '{':
			depth++
			i++
		case '}':
			depth--
			i++
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// structural classes the bytes objectEnd looks at: the quote, and the
// brackets as '{' (opening) or '}' (closing).
var structural = func() (t [256]byte) {
	t['"'] = '"'
	t['{'], t['['] = '{', '{'
	t['}'], t[']'] = '}', '}'
	return t
}()

func (d *decoder) mapValue(v reflect.Value, c *codec) error {
	if d.peek() != '{' {
		return errFallback
	}
	if err := d.enter(); err != nil {
		return err
	}
	defer func() { d.depth-- }()
	d.i++
	if v.IsNil() {
		// Sized as the last map of its type was, which for a bundle's
		// signals saves growing the map twice.
		v.Set(reflect.MakeMapWithSize(c.typ, int(c.lastLen.Load())))
	}
	n := 0
	defer func() { c.lastLen.Store(int32(min(n, 64))) }()
	// One key and one element value serve every entry: SetMapIndex copies
	// them, and encoding/json also zeroes its element before each entry,
	// so a repeated key replaces the earlier value.
	key := reflect.New(c.typ.Key()).Elem()
	elem := reflect.New(c.typ.Elem()).Elem()
	first := true
	for {
		d.skipSpace()
		if first && d.peek() == '}' {
			d.i++
			return nil
		}
		first = false
		k, err := d.str()
		if err != nil {
			return err
		}
		d.skipSpace()
		if d.peek() != ':' {
			return errFallback
		}
		d.i++
		d.skipSpace()
		elem.SetZero()
		if err := d.value(elem, c.elem); err != nil {
			return err
		}
		key.SetString(k)
		v.SetMapIndex(key, elem)
		n++
		d.skipSpace()
		switch d.peek() {
		case ',':
			d.i++
		case '}':
			d.i++
			return nil
		default:
			return errFallback
		}
	}
}

func (d *decoder) slice(v reflect.Value, c *codec) error {
	if d.peek() != '[' {
		return errFallback
	}
	if err := d.enter(); err != nil {
		return err
	}
	defer func() { d.depth-- }()
	d.i++
	d.skipSpace()
	if d.peek() == ']' {
		d.i++
		v.Set(c.empty)
		return nil
	}
	// Elements are decoded in place into v, grown by doubling. Grow and
	// SetLen work on v's own header, so that the backing array is the only
	// allocation: reflect.MakeSlice and Value.Slice each allocate a header
	// besides, which was most of the decoder's allocations on evidence
	// made of many short lists (DNSSEC chains, key tags, sources). Grow
	// zeroes the space it adds, so each element is decoded into a zero
	// value, as encoding/json decodes it.
	v.SetZero()
	v.Grow(4)
	for n := 0; ; n++ {
		d.skipSpace()
		if n == v.Cap() {
			v.Grow(n)
		}
		v.SetLen(n + 1)
		if err := d.value(v.Index(n), c.elem); err != nil {
			return err
		}
		d.skipSpace()
		switch d.peek() {
		case ',':
			d.i++
		case ']':
			d.i++
			return nil
		default:
			return errFallback
		}
	}
}

// rawKey returns an object key's bytes, declining keys with escapes.
func (d *decoder) rawKey() ([]byte, bool) {
	if d.peek() != '"' {
		return nil, false
	}
	start := d.i + 1
	// A key ends at the first byte that is not plain, which must be the
	// quote: an escape, a control character or non-ASCII declines.
	if j := plainRun(d.data, start); j < len(d.data) && d.data[j] == '"' {
		d.i = j + 1
		return d.data[start:j], true
	}
	return nil, false
}

// plainByte marks the bytes a string can hold without a closer look:
// printable ASCII other than the quote and the backslash.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// plainRun returns the offset of the first byte from j on that is not
// plain (see plainByte), or len(data). It looks at eight bytes at a time
// while they are all plain, which most of a bundle's text is.
func plainRun(data []byte, j int) int {
	for j+8 <= len(data) {
		x := binary.LittleEndian.Uint64(data[j:])
		// A byte with its top bit set, or (exact when there is none) under
		// 0x20, or equal to the quote or the backslash.
		bad := x | (x-0x20*lsb)&^x | zeroByte(x^'"'*lsb) | zeroByte(x^'\\'*lsb)
		if bad&msb != 0 {
			break
		}
		j += 8
	}
	for j < len(data) && plainByte[data[j]] {
		j++
	}
	return j
}

// str decodes the string at the cursor.
func (d *decoder) str() (string, error) {
	if d.peek() != '"' {
		return "", errFallback
	}
	start := d.i + 1
	ascii := true
	for j := start; j < len(d.data); j++ {
		j = plainRun(d.data, j)
		if j >= len(d.data) {
			break
		}
		c := d.data[j]
		switch {
		case c == '"':
			d.i = j + 1
			raw := d.data[start:j]
			if !ascii && !utf8.Valid(raw) {
				return "", errFallback // encoding/json substitutes U+FFFD
			}
			return string(raw), nil
		case c == '\\':
			end, err := d.skipString()
			if err != nil {
				return "", err
			}
			return unescape(d.data[start:end])
		case c < 0x20:
			return "", errFallback
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", errFallback
}

// unescape decodes the contents of a string with escapes, which
// skipString has checked.
func unescape(raw []byte) (string, error) {
	var b strings.Builder
	b.Grow(len(raw))
	for j := 0; j < len(raw); {
		c := raw[j]
		if c != '\\' {
			b.WriteByte(c)
			j++
			continue
		}
		switch e := raw[j+1]; e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, _ := hex4(raw, j+2)
			j += 6
			if utf16.IsSurrogate(r) {
				// Only a well-formed pair; encoding/json substitutes
				// U+FFFD for the rest, which the reference decoder does.
				if j+6 > len(raw) || raw[j] != '\\' || raw[j+1] != 'u' {
					return "", errFallback
				}
				r2, _ := hex4(raw, j+2)
				if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
					return "", errFallback
				}
				j += 6
			}
			b.WriteRune(r)
			continue
		}
		j += 2
	}
	s := b.String()
	if !utf8.ValidString(s) {
		return "", errFallback
	}
	return s, nil
}

func hex4(d []byte, i int) (rune, bool) {
	if i+4 > len(d) {
		return 0, false
	}
	var r rune
	for _, c := range d[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// parseInt is strconv.ParseInt(tok, 10, 64) without converting the token
// to a string for the common short integer.
func parseInt(tok []byte) (int64, error) {
	digits := tok
	neg := len(digits) > 0 && digits[0] == '-'
	if neg {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 {
		return strconv.ParseInt(string(tok), 10, 64)
	}
	var n int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return strconv.ParseInt(string(tok), 10, 64)
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, nil
}

// number returns the number token at the cursor, checked against the JSON
// grammar.
func (d *decoder) number() ([]byte, error) {
	start := d.i
	digits := func() int {
		n := 0
		for d.i < len(d.data) && d.data[d.i] >= '0' && d.data[d.i] <= '9' {
			d.i++
			n++
		}
		return n
	}
	if d.peek() == '-' {
		d.i++
	}
	switch c := d.peek(); {
	case c == '0':
		d.i++
	case c >= '1' && c <= '9':
		digits()
	default:
		return nil, errFallback
	}
	if d.peek() == '.' {
		d.i++
		if digits() == 0 {
			return nil, errFallback
		}
	}
	if c := d.peek(); c == 'e' || c == 'E' {
		d.i++
		if c := d.peek(); c == '+' || c == '-' {
			d.i++
		}
		if digits() == 0 {
			return nil, errFallback
		}
	}
	return d.data[start:d.i], nil
}

// skipValue moves past the value at the cursor, validating it.
func (d *decoder) skipValue() error {
	switch c := d.peek(); {
	case c == '"':
		_, err := d.skipString()
		return err
	case c == '{':
		if err := d.enter(); err != nil {
			return err
		}
		defer func() { d.depth-- }()
		d.i++
		d.skipSpace()
		if d.peek() == '}' {
			d.i++
			return nil
		}
		for {
			d.skipSpace()
			if _, err := d.skipString(); err != nil {
				return err
			}
			d.skipSpace()
			if d.peek() != ':' {
				return errFallback
			}
			d.i++
			d.skipSpace()
			if err := d.skipValue(); err != nil {
				return err
			}
			d.skipSpace()
			switch d.peek() {
			case ',':
				d.i++
			case '}':
				d.i++
				return nil
			default:
				return errFallback
			}
		}
	case c == '[':
		if err := d.enter(); err != nil {
			return err
		}
		defer func() { d.depth-- }()
		d.i++
		d.skipSpace()
		if d.peek() == ']' {
			d.i++
			return nil
		}
		for {
			d.skipSpace()
			if err := d.skipValue(); err != nil {
				return err
			}
			d.skipSpace()
			switch d.peek() {
			case ',':
				d.i++
			case ']':
				d.i++
				return nil
			default:
				return errFallback
			}
		}
	case c == 't':
		return d.need("true")
	case c == 'f':
		return d.need("false")
	case c == 'n':
		return d.need("null")
	case c == '-' || (c >= '0' && c <= '9'):
		_, err := d.number()
		return err
	default:
		return errFallback
	}
}

func (d *decoder) need(lit string) error {
	if !d.literal(lit) {
		return errFallback
	}
	return nil
}

// skipString moves past a string, checking its escapes.
func (d *decoder) skipString() (int, error) {
	if d.peek() != '"' {
		return 0, errFallback
	}
	for j := d.i + 1; j < len(d.data); j++ {
		j = plainRun(d.data, j)
		if j >= len(d.data) {
			break
		}
		switch c := d.data[j]; {
		case c == '"':
			d.i = j + 1
			return j, nil
		case c < 0x20:
			return 0, errFallback
		case c == '\\':
			if j+1 >= len(d.data) {
				return 0, errFallback
			}
			switch d.data[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j++
			case 'u':
				if _, ok := hex4(d.data, j+2); !ok {
					return 0, errFallback
				}
				j += 5
			default:
				return 0, errFallback
			}
		}
	}
	return 0, errFallback
}
