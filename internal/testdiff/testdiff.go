// Package testdiff is the tests' one way to show a difference: values as
// indented JSON, compared line by line with go-cmp, so that a golden that
// moved reads as the lines that moved.
package testdiff

import (
	"encoding/json"
	"strings"

	"github.com/google/go-cmp/cmp"
)

// JSON returns the difference of want and got as indented JSON, "-" for
// lines only in want and "+" for lines only in got, or "" when they are
// equal.
func JSON(want, got any) string {
	w, err := json.MarshalIndent(want, "", "  ")
	if err != nil {
		return "marshal want: " + err.Error()
	}
	g, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		return "marshal got: " + err.Error()
	}
	if string(w) == string(g) {
		return ""
	}
	return Lines(strings.Split(string(w), "\n"), strings.Split(string(g), "\n"))
}

// Lines returns the difference of two lists of lines, or "" when they are
// equal.
func Lines(want, got []string) string {
	return cmp.Diff(want, got)
}
