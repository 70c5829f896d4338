package rubric

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/verifymcp/verifymcp/ecosystem"
)

// ReasonCodesMarkdown renders the reason-code catalog of the rubric in force
// as Markdown: its dimensions, then every code with its kind, severity,
// dimension, description and remediation, and the rubric version each code
// first appeared in. The committed docs/reason-codes.md is this output; a
// test fails when the two differ, and `make docs` rewrites the file.
//
// The text depends only on the embedded rubric files, so the same build
// always renders the same bytes.
func ReasonCodesMarkdown() ([]byte, error) {
	versions := Versions()
	rubrics := make([]*Rubric, 0, len(versions))
	for _, v := range versions {
		r, err := Load(v)
		if err != nil {
			return nil, fmt.Errorf("reason-codes doc: %w", err)
		}
		rubrics = append(rubrics, r)
	}
	cur, err := Load(CurrentVersion)
	if err != nil {
		return nil, fmt.Errorf("reason-codes doc: %w", err)
	}
	hist := codeHistory(rubrics)

	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

	p("# Reason codes\n\n")
	p("<!-- Generated from rubric/versions/*.yaml by `make docs` (go test ./rubric -run TestReasonCodesDoc -update). Do not edit. -->\n\n")
	p("The reason-code catalog of rubric v%s, the version in force (`rubric/versions/v%s.yaml`, %s).\n", cur.Version, cur.Version, "`"+cur.Hash+"`")
	p("A finding is a claim about the package that can be right or wrong; a measurement is a number\n")
	p("and fires whenever it was measured, whatever its value. A graded code takes each finding's\n")
	p("severity from the evidence (an advisory's CVSS score, an alert's severity); the severity shown\n")
	p("is the highest it can have. \"Since\" is the first rubric version whose catalog has the code.\n")
	p("`verifymcp rubric explain CODE` prints one entry; `verifymcp rubric show --rubric V` prints an\n")
	p("older version's catalog. How dimensions are scored: [rubric.md](rubric.md).\n\n")

	p("## Dimensions of rubric v%s\n\n", cur.Version)
	p("| dimension | weight | signals | zero point |\n|---|---|---|---|\n")
	total := 0.0
	for _, d := range cur.Dimensions {
		total += d.Weight
		zp := formatNumber(d.ZeroPoint)
		if r := strings.TrimSpace(d.ZeroPointReason); r != "" {
			zp += ": " + cell(r)
		}
		p("| `%s` | %s | %s | %s |\n", d.ID, formatNumber(d.Weight), codeList(d.Signals), zp)
	}
	p("\nWeights add up to %s.\n\n", formatNumber(total))
	if c := cur.Params.Composite; c != nil && c.CriticalCap != nil {
		p("Critical cap: when any finding of kind finding has severity critical, the composite is at most %s;\n", formatNumber(*c.CriticalCap))
		p("the dimensions are scored as without it, and the result records the cap and the composite before it.\n")
		p("%s\n\n", oneLine(c.CriticalCapReason))
	}
	for _, d := range cur.Dimensions {
		p("- `%s`: %s\n", d.ID, oneLine(d.Description))
		for _, eco := range slices.Sorted(maps.Keys(d.Ecosystems)) {
			p("  - %s: %s\n", ecosystemName(eco), oneLine(d.Ecosystems[eco]))
		}
	}
	p("\n")

	areas, byArea := groupByArea(cur.Codes)
	p("## Index\n\n")
	p("| code | kind | severity | dimension | since |\n|---|---|---|---|---|\n")
	for _, area := range areas {
		for _, c := range byArea[area] {
			p("| [`%s`](#%s) | %s | %s | `%s` | v%s |\n", c.Code, anchor(c.Code), c.Kind, severityText(c), c.Dimension, hist[c.Code].since)
		}
	}
	p("\n")

	for _, area := range areas {
		p("## %s\n\n", area)
		for _, c := range byArea[area] {
			h := hist[c.Code]
			p("### %s\n\n", c.Code)
			p("%s, %s, dimension `%s`, since rubric v%s", c.Kind, severityText(c), c.Dimension, h.since)
			if len(h.changes) > 0 {
				p(" (%s)", strings.Join(h.changes, "; "))
			}
			p(".\n\n%s\n\n", oneLine(c.Description))
			if r := oneLine(c.Remediation); r != "" {
				p("Remediation: %s\n\n", r)
			}
		}
	}

	if gone := retired(rubrics, cur); len(gone) > 0 {
		p("## Codes no longer in the catalog\n\n| code | last in |\n|---|---|\n")
		for _, g := range gone {
			p("| `%s` | v%s |\n", g[0], g[1])
		}
		p("\n")
	}
	return append(bytes.TrimRight(b.Bytes(), "\n"), '\n'), nil
}

// history is when a code first appeared and how its kind, severity or
// dimension changed since.
type history struct {
	since   string
	changes []string
}

func codeHistory(rubrics []*Rubric) map[string]*history {
	hist := map[string]*history{}
	last := map[string]CodeDef{}
	for _, r := range rubrics {
		for _, c := range r.Codes {
			h, ok := hist[c.Code]
			if !ok {
				hist[c.Code] = &history{since: r.Version}
				last[c.Code] = c
				continue
			}
			prev := last[c.Code]
			if prev.Kind != c.Kind {
				h.changes = append(h.changes, fmt.Sprintf("v%s: %s, was %s", r.Version, c.Kind, prev.Kind))
			}
			if prev.Severity != c.Severity || prev.Graded != c.Graded {
				h.changes = append(h.changes, fmt.Sprintf("v%s: %s, was %s", r.Version, severityText(c), severityText(prev)))
			}
			if prev.Dimension != c.Dimension {
				h.changes = append(h.changes, fmt.Sprintf("v%s: dimension `%s`, was `%s`", r.Version, c.Dimension, prev.Dimension))
			}
			last[c.Code] = c
		}
	}
	return hist
}

// retired lists the codes of earlier versions that the current one lacks,
// each with the last version that has it.
func retired(rubrics []*Rubric, cur *Rubric) [][2]string {
	lastIn := map[string]string{}
	var order []string
	for _, r := range rubrics {
		for _, c := range r.Codes {
			if _, seen := lastIn[c.Code]; !seen {
				order = append(order, c.Code)
			}
			lastIn[c.Code] = r.Version
		}
	}
	var out [][2]string
	for _, code := range order {
		if _, ok := cur.Code(code); !ok {
			out = append(out, [2]string{code, lastIn[code]})
		}
	}
	return out
}

// groupByArea groups codes by their first two labels (pkg.install), in the
// order the areas first occur in the sorted catalog.
func groupByArea(codes []CodeDef) ([]string, map[string][]CodeDef) {
	var areas []string
	by := map[string][]CodeDef{}
	for _, c := range codes {
		parts := strings.SplitN(c.Code, ".", 3)
		area := c.Code
		if len(parts) >= 2 {
			area = parts[0] + "." + parts[1]
		}
		if _, ok := by[area]; !ok {
			areas = append(areas, area)
		}
		by[area] = append(by[area], c)
	}
	return areas, by
}

func severityText(c CodeDef) string {
	if c.Graded {
		return "up to " + string(c.Severity) + " (graded)"
	}
	return string(c.Severity)
}

// anchor is the heading anchor GitHub and most Markdown renderers derive
// from a code used as a heading: lower case, dots dropped.
func anchor(code string) string {
	return strings.ReplaceAll(strings.ToLower(code), ".", "")
}

func codeList(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = "`" + v + "`"
	}
	return strings.Join(q, ", ")
}

func formatNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// oneLine joins a folded YAML text into one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// cell makes text safe inside a Markdown table cell.
func cell(s string) string { return strings.ReplaceAll(oneLine(s), "|", `\|`) }

// ecosystemName is how the docs name an ecosystem of a dimension's
// ecosystems.
func ecosystemName(eco string) string {
	if e, ok := ecosystem.Known(eco); ok {
		return e.Title()
	}
	return eco
}
