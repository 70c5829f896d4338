package realcorpus

import (
	"fmt"
	"slices"
	"strings"
)

// Cell counts one code's findings in one part of the corpus.
type Cell struct {
	Findings, Justified, Unjustified, Unreviewed int
}

func (c *Cell) add(j Judged) {
	c.Findings++
	switch j.Verdict {
	case VerdictTrue:
		c.Justified++
	case VerdictFalse, VerdictOverstated:
		c.Unjustified++
	default:
		c.Unreviewed++
	}
}

// FDR is the false discovery rate over the reviewed findings, or -1 when
// none was reviewed.
func (c Cell) FDR() float64 {
	if n := c.Justified + c.Unjustified; n > 0 {
		return float64(c.Unjustified) / float64(n)
	}
	return -1
}

// Part names one part of the corpus: a side and an ecosystem.
type Part struct{ Side, Ecosystem string }

// Parts are the table's columns, in order.
var Parts = []Part{{SideTuning, "npm"}, {SideTuning, "pypi"}, {SideHeldOut, "npm"}, {SideHeldOut, "pypi"}}

// Row is one code's counts in every part.
type Row struct {
	Code, Severity string
	Cells          map[Part]*Cell
}

// Table counts judged findings per code and part; the last row, code
// "all", sums them.
func Table(js []Judged) []Row {
	byCode := map[string]*Row{}
	all := &Row{Code: "all", Cells: map[Part]*Cell{}}
	for _, p := range Parts {
		all.Cells[p] = &Cell{}
	}
	for _, j := range js {
		r := byCode[j.Code]
		if r == nil {
			r = &Row{Code: j.Code, Severity: j.Severity, Cells: map[Part]*Cell{}}
			for _, p := range Parts {
				r.Cells[p] = &Cell{}
			}
			byCode[j.Code] = r
		}
		p := Part{j.Side, j.Ecosystem}
		if c := r.Cells[p]; c != nil {
			c.add(j)
			all.Cells[p].add(j)
		}
	}
	var rows []Row
	for _, r := range byCode {
		rows = append(rows, *r)
	}
	slices.SortFunc(rows, func(a, b Row) int { return strings.Compare(a.Code, b.Code) })
	return append(rows, *all)
}

// Markdown renders the table: per part "findings / justified, FDR", with
// the unreviewed count where there is one.
func Markdown(rows []Row, servers map[Part]int) string {
	var b strings.Builder
	b.WriteString("| code | severity |")
	for _, p := range Parts {
		fmt.Fprintf(&b, " %s %s (%d servers) |", p.Side, p.Ecosystem, servers[p])
	}
	b.WriteString("\n|---|---|")
	for range Parts {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, r := range rows {
		code := "`" + strings.TrimPrefix(r.Code, "pkg.") + "`"
		if r.Code == "all" {
			code = "**all**"
		}
		fmt.Fprintf(&b, "| %s | %s |", code, r.Severity)
		for _, p := range Parts {
			b.WriteString(" " + cellText(*r.Cells[p]) + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

func cellText(c Cell) string {
	if c.Findings == 0 {
		return "-"
	}
	s := fmt.Sprintf("%d / %d", c.Findings, c.Justified)
	if f := c.FDR(); f >= 0 {
		s += fmt.Sprintf(", %.1f%%", 100*f)
	}
	if c.Unreviewed > 0 {
		s += fmt.Sprintf(" (%d unreviewed)", c.Unreviewed)
	}
	return s
}
