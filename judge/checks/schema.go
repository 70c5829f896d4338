package checks

import (
	"encoding/json"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Reading JSON Schemas.
//
// Check reads every schema of every tool, so the schema walk reads the
// JSON itself instead of decoding it into maps with encoding/json, which
// cost more than all the checks together. It keeps the semantics of
//
//	json.NewDecoder(bytes.NewReader(raw)).UseNumber().Decode(&v)
//
// exactly: the first value is read and whatever follows it is ignored;
// a syntax error anywhere in that value, or nesting deeper than
// encoding/json's limit of 10000, makes the whole schema unreadable; a
// duplicated key keeps its last value; strings are unquoted as
// encoding/json unquotes them (invalid UTF-8 and lone surrogates become
// U+FFFD). TestSchemaWalkMatchesEncodingJSON and FuzzSchemaWalk hold it to
// that.

// jsonMaxDepth is encoding/json's nesting limit.
const jsonMaxDepth = 10000

// Kinds of JSON values.
const (
	jObject = iota + 1
	jArray
	jString
	jTrue
	jFalse
	jOther // number or null: the walk reads neither
)

// jnode is one JSON value. Objects and arrays list their children through
// child and next; an object's children alternate key and value.
type jnode struct {
	kind       uint8
	plain      bool  // a string that unquotes to its raw bytes
	start, end int32 // a string's bytes, between the quotes
	child      int32 // first child, or -1
	next       int32 // next sibling, or -1
}

// jdoc is a parsed schema.
type jdoc struct {
	src   string // the schema, which plain strings are substrings of
	nodes []jnode
}

// parseJSON parses the first JSON value of src. It reports false for a
// syntax error, for too deep a nesting, and for input that is empty or
// holds only white space (as encoding/json's Decoder reports io.EOF).
func parseJSON(src string, nodes []jnode) (jdoc, bool) {
	p := jparser{src: src, nodes: nodes[:0]}
	p.skip()
	if p.pos >= len(src) {
		return jdoc{}, false
	}
	if _, ok := p.value(0); !ok {
		return jdoc{}, false
	}
	return jdoc{src: src, nodes: p.nodes}, true
}

type jparser struct {
	src   string
	pos   int
	nodes []jnode
}

// skip skips white space; the common case, none, is inlined.
func (p *jparser) skip() {
	if p.pos < len(p.src) && p.src[p.pos] > ' ' {
		return
	}
	p.skipSpace()
}

func (p *jparser) skipSpace() {
	s, i := p.src, p.pos
	for i < len(s) {
		// Indentation comes in runs of spaces: read eight bytes at a time,
		// and skip the spaces they start with.
		if i+8 <= len(s) {
			x := load8(s, i) ^ (' ' * ones)
			if x == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(x) / 8
		}
		switch s[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			p.pos = i
			return
		}
	}
	p.pos = i
}

func (p *jparser) add(n jnode) int32 {
	n.child, n.next = -1, -1
	p.nodes = append(p.nodes, n)
	return int32(len(p.nodes) - 1)
}

// value parses the value at p.pos (white space already skipped); depth is
// the number of objects and arrays it is nested in.
func (p *jparser) value(depth int) (int32, bool) {
	if p.pos >= len(p.src) {
		return -1, false
	}
	switch c := p.src[p.pos]; {
	case c == '{' || c == '[':
		if depth+1 > jsonMaxDepth {
			return -1, false
		}
		kind, closer := uint8(jObject), byte('}')
		if c == '[' {
			kind, closer = jArray, ']'
		}
		id := p.add(jnode{kind: kind})
		p.pos++
		p.skip()
		if p.pos < len(p.src) && p.src[p.pos] == closer {
			p.pos++
			return id, true
		}
		last := int32(-1)
		link := func(n int32) {
			if last < 0 {
				p.nodes[id].child = n
			} else {
				p.nodes[last].next = n
			}
			last = n
		}
		for {
			if kind == jObject {
				if p.pos >= len(p.src) || p.src[p.pos] != '"' {
					return -1, false
				}
				k, ok := p.str()
				if !ok {
					return -1, false
				}
				link(k)
				p.skip()
				if p.pos >= len(p.src) || p.src[p.pos] != ':' {
					return -1, false
				}
				p.pos++
				p.skip()
			}
			v, ok := p.value(depth + 1)
			if !ok {
				return -1, false
			}
			link(v)
			p.skip()
			if p.pos >= len(p.src) {
				return -1, false
			}
			switch p.src[p.pos] {
			case ',':
				p.pos++
				p.skip()
			case closer:
				p.pos++
				return id, true
			default:
				return -1, false
			}
		}
	case c == '"':
		return p.str()
	case c == 't':
		return p.literal("true", jTrue)
	case c == 'f':
		return p.literal("false", jFalse)
	case c == 'n':
		return p.literal("null", jOther)
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	}
	return -1, false
}

func (p *jparser) literal(lit string, kind uint8) (int32, bool) {
	if !strings.HasPrefix(p.src[p.pos:], lit) {
		return -1, false
	}
	p.pos += len(lit)
	return p.add(jnode{kind: kind}), true
}

// number accepts the grammar of encoding/json's scanner:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *jparser) number() (int32, bool) {
	s, i := p.src, p.pos
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		digits()
	default:
		return -1, false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return -1, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return -1, false
		}
	}
	p.pos = i
	return p.add(jnode{kind: jOther}), true
}

// str parses a string: no control characters, and only the escapes
// \" \\ \/ \b \f \n \r \t \uXXXX.
func (p *jparser) str() (int32, bool) {
	s := p.src
	i := p.pos + 1
	// Most strings hold nothing but printable ASCII up to their quote:
	// read those eight bytes at a time, then byte by byte.
	for i+8 <= len(s) {
		m := specialBytes(load8(s, i))
		if m != 0 {
			i += bits.TrailingZeros64(m) / 8
			break
		}
		i += 8
	}
	for i < len(s) && s[i] >= 0x20 && s[i] < utf8.RuneSelf && s[i] != '\\' && s[i] != '"' {
		i++
	}
	if i < len(s) && s[i] == '"' {
		id := p.add(jnode{kind: jString, plain: true, start: int32(p.pos + 1), end: int32(i)})
		p.pos = i + 1
		return id, true
	}
	plain := true
	for i < len(s) {
		// Eight bytes at a time while none ends the string, escapes, is a
		// control character or is part of a character outside ASCII.
		for i+8 <= len(s) && !specialInString(load8(s, i)) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		switch {
		case c == '"':
			id := p.add(jnode{kind: jString, plain: plain, start: int32(p.pos + 1), end: int32(i)})
			p.pos = i + 1
			return id, true
		case c < 0x20:
			return -1, false
		case c == '\\':
			plain = false
			if i+1 >= len(s) {
				return -1, false
			}
			switch s[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(s) {
					return -1, false
				}
				for _, h := range []byte(s[i+2 : i+6]) {
					if !isHexByte(h) {
						return -1, false
					}
				}
				i += 6
			default:
				return -1, false
			}
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				plain = false
			}
			i += size
		}
	}
	return -1, false
}

// load8 reads eight bytes of s from i, little-endian.
func load8(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// specialInString reports whether one of the eight bytes of x is '"',
// '\\', less than 0x20 or at least 0x80. (A byte b of x is zero in x^y
// when y repeats b; (v-ones)&^v&highs is not zero when a byte of v is
// zero, and (x-n*ones)&^x&highs when a byte of x is less than n <= 0x80.)
func specialInString(x uint64) bool { return specialBytes(x) != 0 }

// specialBytes marks the bytes of x specialInString looks for, by their
// high bit. The lowest mark is the first such byte: a borrow can only mark
// a byte above one that is marked rightly.
func specialBytes(x uint64) uint64 {
	q := x ^ ('"' * ones)
	b := x ^ ('\\' * ones)
	return ((q-ones)&^q | (b-ones)&^b | (x-0x20*ones)&^x | x) & highs
}

func isHexByte(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// text returns the unquoted value of string node n.
func (d *jdoc) text(n int32) string {
	nd := &d.nodes[n]
	raw := d.src[nd.start:nd.end]
	if nd.plain {
		return raw
	}
	return unquoteJSON(raw)
}

// unquoteJSON unquotes the body of a valid JSON string as encoding/json
// does.
func unquoteJSON(s string) string {
	b := make([]byte, 0, len(s)+2*utf8.UTFMax)
	for r := 0; r < len(s); {
		switch c := s[r]; {
		case c == '\\':
			switch s[r+1] {
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				rr := getu4(s[r:])
				r += 6
				if utf16.IsSurrogate(rr) {
					if dec := utf16.DecodeRune(rr, getu4(s[r:])); dec != unicode.ReplacementChar {
						r += 6
						b = utf8.AppendRune(b, dec)
						continue
					}
					rr = unicode.ReplacementChar
				}
				b = utf8.AppendRune(b, rr)
				continue
			default: // '"', '\\', '/'
				b = append(b, s[r+1])
			}
			r += 2
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRuneInString(s[r:])
			r += size
			b = utf8.AppendRune(b, rr)
		}
	}
	return string(b)
}

// getu4 decodes \uXXXX at the start of s, or returns -1.
func getu4(s string) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range []byte(s[2:6]) {
		switch {
		case '0' <= c && c <= '9':
			c = c - '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

func (d *jdoc) kind(n int32) uint8 {
	if n < 0 {
		return 0
	}
	return d.nodes[n].kind
}

// key returns the unquoted key of object member key node kn.
func (d *jdoc) key(kn int32) string {
	nd := &d.nodes[kn]
	if nd.plain {
		return d.src[nd.start:nd.end]
	}
	return d.text(kn)
}

// The schema keywords the walk reads, as indexes into a keywords array.
const (
	kwTitle = iota
	kwDescription
	kwEnum
	kwConst
	kwDefault
	kwExamples
	kwFormat
	kwWriteOnly
	kwType
	kwProperties // the schemaMaps, in order
	kwPatternProperties
	kwDefs
	kwDefinitions
	kwDependentSchemas
	kwItems // the schemaOne, in order
	kwAdditionalProperties
	kwAdditionalItems
	kwUnevaluatedProperties
	kwUnevaluatedItems
	kwContains
	kwPropertyNames
	kwNot
	kwIf
	kwThen
	kwElse
	kwAllOf // the schemaLists but items, in order
	kwAnyOf
	kwOneOf
	kwPrefixItems
	numKeywords
)

var keywordIndex = map[string]int{
	"title": kwTitle, "description": kwDescription, "enum": kwEnum, "const": kwConst, "default": kwDefault,
	"examples": kwExamples, "format": kwFormat, "writeOnly": kwWriteOnly, "type": kwType,
	"properties": kwProperties, "patternProperties": kwPatternProperties, "$defs": kwDefs,
	"definitions": kwDefinitions, "dependentSchemas": kwDependentSchemas, "items": kwItems,
	"additionalProperties": kwAdditionalProperties, "additionalItems": kwAdditionalItems,
	"unevaluatedProperties": kwUnevaluatedProperties, "unevaluatedItems": kwUnevaluatedItems,
	"contains": kwContains, "propertyNames": kwPropertyNames, "not": kwNot, "if": kwIf, "then": kwThen,
	"else": kwElse, "allOf": kwAllOf, "anyOf": kwAnyOf, "oneOf": kwOneOf, "prefixItems": kwPrefixItems,
}

// keywords are the values of the keywords of a schema object, as a map
// holds them (the last value of a repeated key), or -1.
type keywords [numKeywords]int32

// keywords reads object o in one pass.
func (d *jdoc) keywords(o int32) keywords {
	var kw keywords
	for i := range kw {
		kw[i] = -1
	}
	for kn := d.nodes[o].child; kn >= 0; kn = d.nodes[d.nodes[kn].next].next {
		if i := keywordOf(d.key(kn)); i >= 0 {
			kw[i] = d.nodes[kn].next
		}
	}
	return kw
}

// keywordOf is keywordIndex[k], or -1.
func keywordOf(k string) int {
	switch k {
	case "title":
		return kwTitle
	case "description":
		return kwDescription
	case "enum":
		return kwEnum
	case "const":
		return kwConst
	case "default":
		return kwDefault
	case "examples":
		return kwExamples
	case "format":
		return kwFormat
	case "writeOnly":
		return kwWriteOnly
	case "type":
		return kwType
	case "properties":
		return kwProperties
	case "patternProperties":
		return kwPatternProperties
	case "$defs":
		return kwDefs
	case "definitions":
		return kwDefinitions
	case "dependentSchemas":
		return kwDependentSchemas
	case "items":
		return kwItems
	case "additionalProperties":
		return kwAdditionalProperties
	case "additionalItems":
		return kwAdditionalItems
	case "unevaluatedProperties":
		return kwUnevaluatedProperties
	case "unevaluatedItems":
		return kwUnevaluatedItems
	case "contains":
		return kwContains
	case "propertyNames":
		return kwPropertyNames
	case "not":
		return kwNot
	case "if":
		return kwIf
	case "then":
		return kwThen
	case "else":
		return kwElse
	case "allOf":
		return kwAllOf
	case "anyOf":
		return kwAnyOf
	case "oneOf":
		return kwOneOf
	case "prefixItems":
		return kwPrefixItems
	}
	return -1
}

// commonTypes are shared one-element results of stringsIn for the types
// most parameters have; nothing writes to them (append to a full slice
// copies).
var commonTypes = map[string][]string{}

func init() {
	for _, t := range []string{"string", "number", "integer", "boolean", "object", "array", "null"} {
		commonTypes[t] = []string{t}
	}
}

// stringsIn is the string, or the strings of the array, at node n.
func (d *jdoc) stringsIn(n int32) []string {
	switch d.kind(n) {
	case jString:
		s := d.text(n)
		if c, ok := commonTypes[s]; ok {
			return c[:1:1]
		}
		return []string{s}
	case jArray:
		var out []string
		for c := d.nodes[n].child; c >= 0; c = d.nodes[c].next {
			if d.nodes[c].kind == jString {
				out = append(out, d.text(c))
			}
		}
		return out
	}
	return nil
}

// str is the string at node n, or "".
func (d *jdoc) str(n int32) string {
	if d.kind(n) != jString {
		return ""
	}
	return d.text(n)
}

// jmember is one entry of an object read as a map.
type jmember struct {
	key string
	val int32
}

// sortedMembers appends to buf the entries of object o as encoding/json's
// map holds them (the last value of a repeated key), sorted by key.
func (d *jdoc) sortedMembers(o int32, buf []jmember) []jmember {
	from := len(buf)
	for kn := d.nodes[o].child; kn >= 0; kn = d.nodes[d.nodes[kn].next].next {
		buf = append(buf, jmember{d.key(kn), d.nodes[kn].next})
	}
	ms := buf[from:]
	slices.SortStableFunc(ms, func(a, b jmember) int { return strings.Compare(a.key, b.key) })
	out := ms[:0]
	for i, m := range ms {
		if i+1 < len(ms) && ms[i+1].key == m.key {
			continue
		}
		out = append(out, m)
	}
	return buf[:from+len(out)]
}

type schemaText struct {
	field, text string
	prose       bool
}

// Schema keywords whose value is a map of subschemas, a subschema, or a
// list of subschemas.
var (
	schemaMaps  = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
	schemaOne   = []string{"items", "additionalProperties", "additionalItems", "unevaluatedProperties", "unevaluatedItems", "contains", "propertyNames", "not", "if", "then", "else"}
	schemaLists = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
)

// maxSchemaDepth bounds the walk of a hostile schema.
const maxSchemaDepth = 64

// SchemaTexts returns every text of a JSON Schema (descriptions, titles,
// enum values, defaults, examples...), walked recursively.
func SchemaTexts(raw json.RawMessage) []string {
	var out []string
	walkSchema(raw, "", nil, false, func(_, text string, _ bool) { out = append(out, text) })
	return out
}

// walkSchema calls emit with every text of a JSON Schema an agent is
// shown, with its field: descriptions and titles (prose), property names,
// and string values of enum, const, default and examples. With
// wantParams, it appends every property (at any depth) to params as a
// parameter, and returns params. Invalid JSON yields nothing: the schema
// checks of the rubric report it.
func walkSchema(raw json.RawMessage, root string, params []param, wantParams bool, emit func(field, text string, prose bool)) []param {
	// Only an object has texts; anything else, valid or not, has none.
	i := 0
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	if i == len(raw) || raw[i] != '{' {
		return params
	}
	w := walkerPool.Get().(*schemaWalker)
	defer w.release()
	var ok bool
	w.doc, ok = parseJSON(string(raw), w.nodes)
	if w.doc.nodes != nil {
		w.nodes = w.doc.nodes
	}
	if !ok {
		return params
	}
	w.d = &w.doc
	w.path = append(w.path[:0], root...)
	w.params, w.wantParams = params, wantParams
	firstParam := len(params)
	w.walk(0, w.d.keywords(0), 0)
	params = w.params
	// The fields were written one after the other into one buffer, which
	// becomes one string they are cut from.
	fields := string(w.fields)
	for i, sp := range w.paramSpans {
		params[firstParam+i].field = fields[sp[0]:sp[1]]
	}
	for _, e := range w.entries {
		emit(fields[e.span[0]:e.span[1]], e.text, e.prose)
	}
	return params
}

// walkerPool holds walkers for walkSchema to reuse, with their buffers.
var walkerPool = sync.Pool{New: func() any { return new(schemaWalker) }}

type schemaWalker struct {
	d          *jdoc
	doc        jdoc
	nodes      []jnode
	params     []param
	wantParams bool
	// entries are the texts found, whose fields are spans of fields; the
	// fields of parameters are at paramSpans. path is the path of the
	// schema being walked.
	entries      []schemaEntry
	path, fields []byte
	paramSpans   [][2]int32
	members      []jmember // a stack of sortedMembers results
}

type schemaEntry struct {
	text  string
	prose bool
	span  [2]int32
}

// release empties w, keeping its buffers, and returns it to the pool.
func (w *schemaWalker) release() {
	clear(w.entries)
	clear(w.members)
	*w = schemaWalker{nodes: w.nodes[:0], entries: w.entries[:0], path: w.path[:0], fields: w.fields[:0],
		paramSpans: w.paramSpans[:0], members: w.members[:0]}
	walkerPool.Put(w)
}

// field records the current path followed by a keyword and an index
// (if not negative) as a field.
func (w *schemaWalker) field(keyword string, index int) [2]int32 {
	a := len(w.fields)
	w.fields = append(w.fields, w.path...)
	if keyword != "" {
		w.fields = append(append(w.fields, '/'), keyword...)
	}
	if index >= 0 {
		w.fields = strconv.AppendInt(append(w.fields, '/'), int64(index), 10)
	}
	return [2]int32{int32(a), int32(len(w.fields))}
}

// emit records a text at field path/keyword/index.
func (w *schemaWalker) emit(text string, prose bool, keyword string, index int) {
	w.entries = append(w.entries, schemaEntry{text, prose, w.field(keyword, index)})
}

// walk walks object n, whose keywords are kw.
func (w *schemaWalker) walk(n int32, kw keywords, depth int) {
	d := w.d
	if depth > maxSchemaDepth {
		return
	}
	for _, k := range [...]int{kwTitle, kwDescription} {
		if s := d.str(kw[k]); s != "" {
			w.emit(s, true, keywordNames[k], -1)
		}
	}
	for _, k := range [...]int{kwEnum, kwConst, kwDefault, kwExamples} {
		switch v := kw[k]; d.kind(v) {
		case jString:
			w.emit(d.text(v), false, keywordNames[k], -1)
		case jArray:
			i := 0
			for c := d.nodes[v].child; c >= 0; c = d.nodes[c].next {
				if d.nodes[c].kind == jString {
					w.emit(d.text(c), false, keywordNames[k], i)
					i++
				}
			}
		}
	}
	base := len(w.path)
	for k := kwProperties; k <= kwDependentSchemas; k++ {
		sub := kw[k]
		if d.kind(sub) != jObject {
			continue
		}
		from := len(w.members)
		w.members = d.sortedMembers(sub, w.members)
		to := len(w.members)
		for i := from; i < to; i++ {
			m := w.members[i]
			w.path = append(append(append(append(w.path[:base], '/'), keywordNames[k]...), '/'), m.key...)
			w.emit(m.key, false, "", -1)
			var mkw keywords
			if d.kind(m.val) == jObject {
				mkw = d.keywords(m.val)
			}
			if k == kwProperties && w.wantParams {
				w.params = append(w.params, w.paramOf(m.key, m.val, &mkw))
				w.paramSpans = append(w.paramSpans, w.field("", -1))
			}
			if d.kind(m.val) == jObject {
				w.walk(m.val, mkw, depth+1)
			}
		}
		clear(w.members[from:])
		w.members = w.members[:from]
	}
	for k := kwItems; k <= kwElse; k++ {
		if v := kw[k]; d.kind(v) == jObject {
			w.path = append(append(w.path[:base], '/'), keywordNames[k]...)
			w.walk(v, d.keywords(v), depth+1)
		}
	}
	for _, k := range [...]int{kwAllOf, kwAnyOf, kwOneOf, kwPrefixItems, kwItems} {
		if v := kw[k]; d.kind(v) == jArray {
			i := 0
			for c := d.nodes[v].child; c >= 0; c = d.nodes[c].next {
				if d.nodes[c].kind == jObject {
					w.path = strconv.AppendInt(append(append(append(w.path[:base], '/'), keywordNames[k]...), '/'), int64(i), 10)
					w.walk(c, d.keywords(c), depth+1)
				}
				i++
			}
		}
	}
	w.path = w.path[:base]
}

// keywordNames are the keywords by index.
var keywordNames = func() [numKeywords]string {
	var names [numKeywords]string
	for k, i := range keywordIndex {
		names[i] = k
	}
	return names
}()

// paramOf is the parameter of property name, whose schema is node n with
// keywords kw (when n is an object).
func (w *schemaWalker) paramOf(name string, n int32, kw *keywords) param {
	d := w.d
	p := param{name: name}
	if d.kind(n) != jObject {
		return p
	}
	p.desc = d.str(kw[kwDescription])
	p.title = d.str(kw[kwTitle])
	p.format = d.str(kw[kwFormat])
	p.writeOnly = d.kind(kw[kwWriteOnly]) == jTrue
	p.types = d.stringsIn(kw[kwType])
	if len(p.types) == 0 {
		for _, k := range [...]int{kwAnyOf, kwOneOf} {
			if l := kw[k]; d.kind(l) == jArray {
				for c := d.nodes[l].child; c >= 0; c = d.nodes[c].next {
					if d.nodes[c].kind == jObject {
						p.types = append(p.types, d.stringsIn(d.keywords(c)[kwType])...)
					}
				}
			}
		}
	}
	if items := kw[kwItems]; d.kind(items) == jObject && slices.Contains(p.types, "array") {
		for _, t := range d.stringsIn(d.keywords(items)[kwType]) {
			p.types = append(p.types, "array:"+t)
		}
	}
	return p
}
