package rubric

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzScanner checks that the scanner accepts exactly what encoding/json
// accepts and never panics, and that checkSchema never panics either.
func FuzzScanner(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"type":"object"}`, `[1, 2.5e-3, -0, true, false, null]`, `"\u00e9\n"`,
		`{"a":{"b":[{"c":"}"}]}}`, `{"a":1,}`, `{"a" 1}`, `[01]`, `1.`, `"\x"`, "\"\x01\"",
		`{"type":"object","properties":{"q":{"type":"string","description":"Q"}}}`, ` {"a":1} `, `{"a":1}x`,
		"\"\xff\"", `-`, `tru`, `[`, `{"a":`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		i := skipSpace(data, 0)
		end, ok := valueEnd(data, i)
		got := ok && skipSpace(data, end) == len(data)
		if want := json.Valid(data); got != want {
			t.Errorf("scanner valid = %v, json.Valid = %v for %q", got, want, data)
		}
		checkSchema(data)
		tokens(string(data))
	})
}

func TestScannerDepthMatchesEncodingJSON(t *testing.T) {
	for _, n := range []int{9999, 10000, 10001, 20000} {
		for _, open := range []string{"[", `{"a":`} {
			close := map[string]string{"[": "]", `{"a":`: "}"}[open]
			data := []byte(strings.Repeat(open, n) + "1" + strings.Repeat(close, n))
			end, ok := valueEnd(data, 0)
			got := ok && end == len(data)
			if want := json.Valid(data); got != want {
				t.Errorf("depth %d of %q: scanner valid = %v, json.Valid = %v", n, open, got, want)
			}
		}
	}
}
