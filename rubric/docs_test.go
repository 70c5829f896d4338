package rubric

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateDocs = flag.Bool("update", false, "rewrite ../docs/reason-codes.md from the rubric files")

// reasonCodesDoc is the committed, generated catalog.
var reasonCodesDoc = filepath.Join("..", "docs", "reason-codes.md")

// TestReasonCodesDoc fails when the committed docs/reason-codes.md is not
// what the embedded rubric files render; `make docs` rewrites it.
func TestReasonCodesDoc(t *testing.T) {
	got, err := ReasonCodesMarkdown()
	if err != nil {
		t.Fatal(err)
	}
	if *updateDocs {
		if err := os.WriteFile(reasonCodesDoc, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(reasonCodesDoc)
	if err != nil {
		t.Fatalf("%v (run `make docs`)", err)
	}
	if !bytes.Equal(got, want) {
		wl, gl := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
		for i := 0; i < len(wl) || i < len(gl); i++ {
			var w, g string
			if i < len(wl) {
				w = wl[i]
			}
			if i < len(gl) {
				g = gl[i]
			}
			if w != g {
				t.Fatalf("%s is stale (run `make docs`); first difference at line %d:\n-%s\n+%s", reasonCodesDoc, i+1, w, g)
			}
		}
	}
}

// TestReasonCodesMarkdown checks that the rendering carries every code of
// the rubric in force with its fields, and each code's first version.
func TestReasonCodesMarkdown(t *testing.T) {
	got, err := ReasonCodesMarkdown()
	if err != nil {
		t.Fatal(err)
	}
	doc := string(got)
	cur := Current()
	for _, c := range cur.Codes {
		if !strings.Contains(doc, "\n### "+c.Code+"\n") {
			t.Errorf("no section for %s", c.Code)
		}
		if !strings.Contains(doc, oneLine(c.Description)) {
			t.Errorf("%s: description missing", c.Code)
		}
		if r := oneLine(c.Remediation); r != "" && !strings.Contains(doc, "Remediation: "+r) {
			t.Errorf("%s: remediation missing", c.Code)
		}
	}
	for _, d := range cur.Dimensions {
		if !strings.Contains(doc, "| `"+d.ID+"` | "+formatNumber(d.Weight)+" |") {
			t.Errorf("dimension %s: row with its weight missing", d.ID)
		}
	}
	// pkg.install.failed is in rubric v1; pkg.dnssec.bogus arrived with v4.
	for code, since := range map[string]string{"pkg.install.failed": "1", "pkg.dnssec.bogus": "4"} {
		if !strings.Contains(doc, "(#"+anchor(code)+") ") || !strings.Contains(doc, "since rubric v"+since) {
			t.Errorf("%s: want since v%s", code, since)
		}
		h := codeHistory(loadAll(t))[code]
		if h == nil || h.since != since {
			t.Errorf("codeHistory(%s).since = %v, want %s", code, h, since)
		}
	}
}

func loadAll(t *testing.T) []*Rubric {
	t.Helper()
	var rs []*Rubric
	for _, v := range Versions() {
		r, err := Load(v)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	return rs
}
