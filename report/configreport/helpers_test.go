package configreport

import (
	"flag"
	"slices"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/internal/testschema"

	"github.com/mattn/go-runewidth"

	"github.com/verifymcp/verifymcp/internal/testdiff"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// compileSchemaBytes and validate are the tests' one schema check
// (internal/testschema).
var (
	compileSchemaBytes = testschema.Compile
	validate           = testschema.Validate
)

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte, equal func(want, got []byte) string) {
	t.Helper()
	testdiff.Golden(t, "./report/configreport", name, got, *update, equal)
}

var (
	jsonEqual = testdiff.JSONBytes
	textEqual = testdiff.Text
)

// noSpace is s without its spaces and newlines: a table and the same
// table wrapped are equal under it.
func noSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '\n' {
			return -1
		}
		return r
	}, s)
}

// cells measures the columns a string takes on a terminal, as the report
// does.
var cells = &runewidth.Condition{EastAsianWidth: false, StrictEmojiNeutral: true}

// checkWrapped fails on a line of out wider than w columns.
func checkWrapped(t *testing.T, out string, w int) {
	t.Helper()
	for i, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if n := cells.StringWidth(l); n > w {
			t.Errorf("line %d is %d columns, more than %d: %q", i+1, n, w, l)
		}
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
