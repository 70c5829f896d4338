// Package testdiff is the tests' one way to show a difference: values as
// indented JSON, compared line by line with go-cmp, so that a golden that
// moved reads as the lines that moved.
package testdiff

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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

// JSONBytes is JSON for two JSON documents: "" when they hold the same
// values, whatever their layout.
func JSONBytes(want, got []byte) string {
	var w, g any
	if err := json.Unmarshal(want, &w); err != nil {
		return "golden: " + err.Error()
	}
	if err := json.Unmarshal(got, &g); err != nil {
		return "output: " + err.Error()
	}
	return JSON(w, g)
}

// Text is Lines for two texts: "" when they are the same bytes.
func Text(want, got []byte) string {
	if bytes.Equal(want, got) {
		return ""
	}
	return Lines(strings.Split(string(want), "\n"), strings.Split(string(got), "\n"))
}

// Golden compares got with the golden file testdata/name under equal
// (JSONBytes, Text, ...), or rewrites the file when update is set; pkg
// names the package in the message that says how to update it.
func Golden(t testing.TB, pkg, name string, got []byte, update bool, equal func(want, got []byte) string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test %s -update to create it)", err, pkg)
	}
	if d := equal(want, got); d != "" {
		t.Errorf("%s differs (-want +got); run go test %s -update if the change is intended:\n%s", name, pkg, d)
	}
}
