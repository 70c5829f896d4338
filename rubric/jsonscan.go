package rubric

import (
	"bytes"
	"encoding/json"
	"strings"
)

// A small validating JSON scanner over raw bytes. Input schemas are read
// for a handful of keywords, and scanning them in place is several times
// cheaper than decoding them into maps. Every function is bounds-checked
// and reports malformed input instead of panicking, since a hand-built
// bundle may carry any bytes.

func skipSpace(d []byte, i int) int {
	for i < len(d) && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r') {
		i++
	}
	return i
}

// maxDepth is encoding/json's nesting limit, so that the scanner and
// json.Valid agree on deeply nested input.
const maxDepth = 10000

// members iterates over the members of a JSON object:
//
//	it := members{d: data, i: start}
//	for key, val, ok := it.next(); ok; key, val, ok = it.next() { ... }
//	if it.bad { ... }
//
// key is the raw key without its quotes, val the raw value. After the loop,
// it.i is the index after the object and it.bad reports malformed input.
type members struct {
	d       []byte
	i       int
	depth   int
	bad     bool
	started bool
	done    bool
}

func (it *members) fail() ([]byte, []byte, bool) {
	it.bad, it.done = true, true
	return nil, nil, false
}

func (it *members) next() (key, val []byte, ok bool) {
	if it.done {
		return nil, nil, false
	}
	d := it.d
	i := skipSpace(d, it.i)
	if !it.started {
		it.started = true
		if it.depth >= maxDepth || i >= len(d) || d[i] != '{' {
			return it.fail()
		}
		i = skipSpace(d, i+1)
		if i < len(d) && d[i] == '}' {
			it.i, it.done = i+1, true
			return nil, nil, false
		}
	} else {
		if i >= len(d) {
			return it.fail()
		}
		switch d[i] {
		case ',':
			i = skipSpace(d, i+1)
		case '}':
			it.i, it.done = i+1, true
			return nil, nil, false
		default:
			return it.fail()
		}
	}
	if i >= len(d) || d[i] != '"' {
		return it.fail()
	}
	kEnd, ok := stringEnd(d, i)
	if !ok {
		return it.fail()
	}
	key = d[i+1 : kEnd-1]
	i = skipSpace(d, kEnd)
	if i >= len(d) || d[i] != ':' {
		return it.fail()
	}
	i = skipSpace(d, i+1)
	vEnd, ok := valueAt(d, i, it.depth+1)
	if !ok {
		return it.fail()
	}
	it.i = vEnd
	return key, d[i:vEnd], true
}

// valueEnd returns the index just past the JSON value starting at d[i].
func valueEnd(d []byte, i int) (int, bool) { return valueAt(d, i, 0) }

func valueAt(d []byte, i, depth int) (int, bool) {
	if i >= len(d) {
		return i, false
	}
	switch c := d[i]; {
	case c == '"':
		return stringEnd(d, i)
	case c == '{':
		it := members{d: d, i: i, depth: depth}
		for _, _, ok := it.next(); ok; _, _, ok = it.next() {
		}
		return it.i, !it.bad
	case c == '[':
		if depth >= maxDepth {
			return i, false
		}
		i = skipSpace(d, i+1)
		if i < len(d) && d[i] == ']' {
			return i + 1, true
		}
		for {
			end, ok := valueAt(d, i, depth+1)
			if !ok {
				return end, false
			}
			i = skipSpace(d, end)
			if i >= len(d) {
				return i, false
			}
			switch d[i] {
			case ',':
				i = skipSpace(d, i+1)
			case ']':
				return i + 1, true
			default:
				return i, false
			}
		}
	case c == 't':
		return literalEnd(d, i, "true")
	case c == 'f':
		return literalEnd(d, i, "false")
	case c == 'n':
		return literalEnd(d, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return numberEnd(d, i)
	default:
		return i, false
	}
}

func literalEnd(d []byte, i int, lit string) (int, bool) {
	if len(d)-i < len(lit) || string(d[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

// numberEnd accepts the JSON number grammar.
func numberEnd(d []byte, i int) (int, bool) {
	digits := func(i int) int {
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		return i
	}
	if d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		i = digits(i)
	default:
		return i, false
	}
	if i < len(d) && d[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return i, false
		}
		i = j
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return i, false
		}
		i = j
	}
	return i, true
}

// stringStop marks the bytes that end a run of plain string content: the
// closing quote, a backslash and the control characters JSON forbids.
var stringStop = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// stringEnd returns the index just past the string starting at d[i] == '"'.
func stringEnd(d []byte, i int) (int, bool) {
	for i++; i < len(d); i++ {
		for i < len(d) && !stringStop[d[i]] {
			i++
		}
		if i >= len(d) {
			break
		}
		switch c := d[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return i, false
		case c == '\\':
			i++
			if i >= len(d) {
				return i, false
			}
			switch d[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(d)-i < 5 || !isHex(d[i+1]) || !isHex(d[i+2]) || !isHex(d[i+3]) || !isHex(d[i+4]) {
					return i, false
				}
				i += 4
			default:
				return i, false
			}
		}
	}
	return i, false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// keyBytes returns a raw key unescaped, without allocating when it has no
// escapes.
func keyBytes(key []byte) []byte {
	if bytes.IndexByte(key, '\\') < 0 {
		return key
	}
	return []byte(keyString(key))
}

// keyIs reports whether a raw key equals name once unescaped.
func keyIs(key []byte, name string) bool {
	if bytes.IndexByte(key, '\\') < 0 {
		return string(key) == name
	}
	return keyString(key) == name
}

func keyString(key []byte) string {
	if bytes.IndexByte(key, '\\') < 0 {
		return string(key)
	}
	var s string
	if err := json.Unmarshal(append(append([]byte{'"'}, key...), '"'), &s); err != nil {
		return string(key)
	}
	return s
}

// isString reports whether the raw JSON value v is the string want.
func isString(v []byte, want string) bool {
	if len(v) < 2 || v[0] != '"' {
		return false
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v[1:len(v)-1]) == want
	}
	s, ok := jsonString(v)
	return ok && s == want
}

// jsonString decodes a raw JSON string value.
func jsonString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1]), true
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", false
	}
	return s, true
}

// nonBlankString reports whether v is a JSON string with a non-space rune.
func nonBlankString(v []byte) bool {
	if len(v) < 2 || v[0] != '"' {
		return false
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return len(bytes.TrimSpace(v[1:len(v)-1])) > 0
	}
	s, ok := jsonString(v)
	return ok && strings.TrimSpace(s) != ""
}
