package report

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCompactTable: the table a person reads by default puts the
// findings first, one line each, and fits a scan of server-everything in
// 60 lines at 100 columns; colour only when asked; package text escaped.
func TestCompactTable(t *testing.T) {
	for _, name := range []string{"everything", "hostile", "crashed"} {
		t.Run(name, func(t *testing.T) {
			rep := build(t, loadBundle(t, name))
			var buf bytes.Buffer
			if err := WriteTableFor(&buf, rep, TableOptions{Width: 100}); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			golden(t, name+".compact.txt", buf.Bytes(), textEqual)
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			for i, l := range lines {
				if n := utf8.RuneCountInString(l); n > 100 {
					t.Errorf("line %d is %d columns: %q", i+1, n, l)
				}
			}
			if name == "everything" && len(lines) > 60 {
				t.Errorf("%d lines, want at most 60 at 100 columns", len(lines))
			}
			if strings.Contains(out, "\x1b") {
				t.Error("colour without Color")
			}
			if f := strings.Index(out, "FINDINGS"); f < 0 || f > strings.Index(out, "DIMENSIONS") {
				t.Error("the findings do not come before the dimensions")
			}
			if strings.ContainsRune(out, '\u202e') {
				t.Error("a bidirectional control from the package reached the terminal")
			}
		})
	}
	rep := build(t, loadBundle(t, "hostile"))
	var buf bytes.Buffer
	if err := WriteTableFor(&buf, rep, TableOptions{Width: 100, Color: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), ansiRed) {
		t.Error("Color set, no colour")
	}
	var full, verbose bytes.Buffer
	if err := WriteTable(&full, rep); err != nil {
		t.Fatal(err)
	}
	if err := WriteTableFor(&verbose, rep, TableOptions{Verbose: true}); err != nil {
		t.Fatal(err)
	}
	if full.String() != verbose.String() {
		t.Error("Verbose is not the full table")
	}
}
