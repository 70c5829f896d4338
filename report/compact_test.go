package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestCompactTable: the table a person reads by default puts the
// findings first, wraps every line to the width and cuts nothing;
// colour only when asked; package text escaped. The goldens are at 80
// columns, a terminal nobody resized and a CI log.
func TestCompactTable(t *testing.T) {
	for _, name := range []string{"everything", "hostile", "crashed", "behavior", "shipped_image", "shipped_root", "shipped_bundle"} {
		t.Run(name, func(t *testing.T) {
			rep := build(t, loadBundle(t, name))
			out := compactText(t, rep, TableOptions{Width: 80})
			if name != "behavior" {
				golden(t, name+".compact.txt", []byte(out), textEqual)
			}
			checkWrapped(t, out, 80)
			checkUncut(t, out, rep)
			if strings.Contains(out, "\x1b") {
				t.Error("colour without Color")
			}
			if f := strings.Index(out, "FINDINGS"); f < 0 || f > strings.Index(out, "DIMENSIONS") {
				t.Error("the findings do not come before the dimensions")
			}
			if strings.ContainsRune(out, '\u202e') {
				t.Error("a bidirectional control from the package reached the terminal")
			}
			// Every finding's whole message is there, at 80 columns as at
			// 120, and a high or critical one's evidence.
			wide := compactText(t, rep, TableOptions{Width: 120})
			checkWrapped(t, wide, 120)
			for _, text := range []string{out, wide} {
				flat := strings.Join(strings.Fields(text), " ")
				for _, f := range rep.Findings {
					msg := strings.Join(strings.Fields(clean(withoutBaseline(f.Message))), " ")
					if !collapsible(f) || f.Severity != "low" && f.Severity != "info" {
						if !strings.Contains(flat, msg) {
							t.Errorf("the message of %s %s is not all there: %q", f.Code, f.Subject, msg)
						}
					}
					if (f.Severity == "high" || f.Severity == "critical") && f.Value == nil && f.Evidence != "" &&
						!strings.Contains(flat, "evidence: "+strings.Join(strings.Fields(clean(f.Evidence)), " ")) {
						t.Errorf("the evidence of %s %s is not under it", f.Code, f.Subject)
					}
				}
			}
		})
	}
	rep := build(t, loadBundle(t, "hostile"))
	if out := compactText(t, rep, TableOptions{Width: 80, Color: true}); !strings.Contains(out, ansiRed) {
		t.Error("Color set, no colour")
	}
	// Repeated low and info codes are one line each, with their subjects.
	out := compactText(t, rep, TableOptions{Width: 80})
	if !strings.Contains(out, "  LOW      pkg.contract.description.missing  2 subjects: deleteFile, stats\n") {
		t.Errorf("a repeated low code is not one line with its subjects:\n%s", out)
	}
	// A failed gate: what to do about each code that failed it.
	Policy{FailOn: "high"}.Apply(&rep)
	gated := compactText(t, rep, TableOptions{Width: 80})
	golden(t, "hostile_gate.compact.txt", []byte(gated), textEqual)
	checkWrapped(t, gated, 80)
	if f, g := strings.Index(gated, "\nFINDINGS"), strings.Index(gated, "\nGATE FAILED"); g < f {
		t.Error("the gate's advice does not come after the findings")
	}
}

// TestVerboseTable: --verbose is the full table wrapped to the width:
// the same text as WriteTable's, only broken into other lines.
func TestVerboseTable(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			rep := build(t, loadBundle(t, name))
			Policy{FailOn: "high"}.Apply(&rep)
			var full bytes.Buffer
			if err := WriteTable(&full, rep); err != nil {
				t.Fatal(err)
			}
			verbose := compactText(t, rep, TableOptions{Width: 80, Verbose: true})
			if name == "hostile" {
				golden(t, "hostile_verbose.table.txt", []byte(verbose), textEqual)
			}
			if noSpace(full.String()) != noSpace(verbose) {
				t.Error("the verbose table at 80 columns is not the full table wrapped")
			}
			// Finding text wraps; a grid with too many columns for the
			// width is the only thing wider.
			findings := verbose[strings.Index(verbose, "\nFINDINGS"):]
			checkWrapped(t, findings, 80)
		})
	}
}

func compactText(t *testing.T, rep Report, o TableOptions) string {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteTableFor(&buf, rep, o); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// checkWrapped fails when a line of out is wider than w.
func checkWrapped(t *testing.T, out string, w int) {
	t.Helper()
	for i, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if n := width(stripANSI(l)); n > w && !strings.HasPrefix(l, "    target: ") {
			t.Errorf("line %d is %d columns, more than %d: %q", i+1, n, w, l)
		}
	}
}

// checkUncut fails when out has more ellipses than the report's own text:
// the table cut some.
func checkUncut(t *testing.T, out string, rep Report) {
	t.Helper()
	js, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if got, own := strings.Count(out, "…"), strings.Count(string(js), "…"); got > own {
		t.Errorf("%d ellipses, the report's text has %d: text was cut", got, own)
	}
}

func noSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '\n' {
			return -1
		}
		return r
	}, s)
}
