package contract

import (
	"bytes"
	"encoding/json"
	"errors"
)

// The scanners below walk a JSON value as sent without copying it: each
// member or element is handed on as a slice of raw, valid for as long as
// raw is. A listing page of 100,000 tools or a tool with a 50 MB
// description is then read item by item, with no second copy of the page
// (json.RawMessage fields and maps of them copy what they hold).
//
// raw must be valid JSON (json.Valid); what they find in an invalid value
// is an error or a partial answer, never a panic.

var errScan = errors.New("malformed JSON")

// EachMember calls fn with each member of the JSON object raw, in order:
// its key, decoded, and its value as sent.
func EachMember(raw json.RawMessage, fn func(key string, value json.RawMessage)) error {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return errors.New("not a JSON object")
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return nil
	}
	for i < len(raw) {
		end, err := skipValue(raw, i)
		if err != nil || raw[i] != '"' {
			return errScan
		}
		key, err := decodeKey(raw[i:end])
		if err != nil {
			return err
		}
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return errScan
		}
		i = skipSpace(raw, i+1)
		end, err = skipValue(raw, i)
		if err != nil {
			return err
		}
		fn(key, raw[i:end:end])
		i = skipSpace(raw, end)
		if i >= len(raw) {
			return errScan
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case '}':
			return nil
		default:
			return errScan
		}
	}
	return errScan
}

// EachElement calls fn with each element of the JSON array raw, in order,
// as sent.
func EachElement(raw json.RawMessage, fn func(value json.RawMessage)) error {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return errors.New("not a JSON array")
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		return nil
	}
	for i < len(raw) {
		end, err := skipValue(raw, i)
		if err != nil {
			return err
		}
		fn(raw[i:end:end])
		i = skipSpace(raw, end)
		if i >= len(raw) {
			return errScan
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case ']':
			return nil
		default:
			return errScan
		}
	}
	return errScan
}

func decodeKey(quoted []byte) (string, error) {
	if bytes.IndexByte(quoted, '\\') < 0 {
		return string(quoted[1 : len(quoted)-1]), nil
	}
	var k string
	err := json.Unmarshal(quoted, &k)
	return k, err
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the index just past the JSON value starting at b[i].
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errScan
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				end, err := skipString(b, i)
				if err != nil {
					return 0, err
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
			i++
		}
		return 0, errScan
	default:
		start := i
		for i < len(b) && !bytes.ContainsRune([]byte(",}] \t\r\n"), rune(b[i])) {
			i++
		}
		if i == start {
			return 0, errScan
		}
		return i, nil
	}
}

func skipString(b []byte, i int) (int, error) {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1, nil
		}
	}
	return 0, errScan
}
