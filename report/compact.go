package report

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/verifymcp/verifymcp/rubric"
)

// TableOptions shape the table a person reads at a terminal.
type TableOptions struct {
	// Width wraps lines to this many columns (0: DefaultWidth; less than
	// 60, which the fixed columns need, is read as 60). Text is never
	// cut: it wraps, with a hanging indent.
	Width int
	// Color marks severities and the gate with ANSI colours (a terminal,
	// and NO_COLOR unset: the caller decides).
	Color bool
	// Verbose writes the whole table (WriteTable's sections and
	// evidence), wrapped to Width.
	Verbose bool
	// Now dates the ignore entries a failed gate suggests (they expire 90
	// days after it); zero: the run's date, which keeps a table of a
	// stored report the same every time it is written.
	Now time.Time
}

// tableWidth is the width a table is wrapped to, given the one asked for.
func tableWidth(w int) int {
	if w <= 0 {
		return DefaultWidth
	}
	return max(w, minWidth)
}

// WriteTableFor writes the table for a person: the summary and the
// findings first (a high or critical one with its evidence, repeated low
// and info codes on one line each with their subjects), what to do after
// a failed gate, then the dimensions, the drift and the notice, wrapped
// to the width; the long evidence and the detail sections (tools, supply
// chain, judge, behaviour) with Verbose, which writes WriteTable's full
// table wrapped to the width.
func WriteTableFor(w io.Writer, rep Report, o TableOptions) error {
	o.Width = tableWidth(o.Width)
	if o.Verbose {
		return writeTable(w, rep, o)
	}
	c := &compact{w: bufio.NewWriter(w), o: o}
	c.header(rep)
	c.findings(rep)
	c.gate(rep)
	c.dimensions(rep)
	c.drift(rep)
	c.raw("")
	c.para("", "Zero findings means nothing was found in the checks that ran, for the time behaviour was watched; "+
		"this report never says a package is safe. Evidence, tools, supply chain, judge and behaviour: --verbose or --format json.")
	if c.err != nil {
		return fmt.Errorf("report: write table: %w", c.err)
	}
	if err := c.w.Flush(); err != nil {
		return fmt.Errorf("report: write table: %w", err)
	}
	return nil
}

type compact struct {
	w   *bufio.Writer
	o   TableOptions
	err error
}

func (c *compact) raw(s string) {
	if c.err == nil {
		_, c.err = c.w.WriteString(s + "\n")
	}
}

// para writes text wrapped to the width, the first line after lead and
// the others indented as deep.
func (c *compact) para(lead, text string) {
	c.hang(lead, text, width(stripANSI(lead)))
}

// hang writes text wrapped to the width, the first line after lead and
// the others indented by indent columns.
func (c *compact) hang(lead, text string, indent int) {
	for _, l := range hang(lead, text, indent, c.o.Width) {
		c.raw(l)
	}
}

const (
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
	ansiBlue   = "\x1b[34m"
	ansiBold   = "\x1b[1m"
	ansiReset  = "\x1b[0m"
)

func (c *compact) paint(color, s string) string {
	if !c.o.Color {
		return s
	}
	return color + s + ansiReset
}

func stripANSI(s string) string {
	if !strings.Contains(s, "\x1b[") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			for i < len(s) && s[i] != 'm' {
				i++
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func (c *compact) severity(s string) string {
	label := fmt.Sprintf("%-8s", strings.ToUpper(s))
	switch s {
	case "critical", "high":
		return c.paint(ansiRed+ansiBold, label)
	case "medium":
		return c.paint(ansiYellow, label)
	case "low":
		return c.paint(ansiBlue, label)
	}
	return label
}

func (c *compact) header(rep Report) {
	s := rep.Summary
	c.para(c.paint(ansiBold, "verifymcp:")+" ", targetLine(rep))
	c.para("  ", "run "+clean(rep.Run.ID)+" "+rep.Run.Date+", verifymcp "+clean(rep.Tool.Version)+", rubric v"+clean(rep.Rubric.Version)+
		", session "+sessionLine(rep.Session, rep.Contract)+serverText(rep))
	if e := rep.Target.MCPRegistry; e != nil {
		c.para("  mcp registry  ", mcpRegistryLine(e))
	}
	if sh := rep.Shipped; sh != nil {
		c.para("  release  ", clean(shippedSummary(sh)))
	}
	score := "none: every dimension was dropped"
	if rep.Score != nil {
		cv := s.Coverage
		score = num(*rep.Score) + " / 100 over " + pct(cv.Scored) + " of the rubric's weight scored from evidence"
		if cv.ZeroPoint > 0 {
			score += "; " + pct(cv.ZeroPoint) + " at zero point"
		}
		if cv.Dropped > 0 {
			score += "; " + pct(cv.Dropped) + " not assessed"
		}
	}
	if cp := s.Cap; cp != nil {
		score += "; capped at " + num(cp.Value) + " from " + num(cp.Uncapped) + " by critical finding(s) " + strings.Join(cp.Codes, ", ")
	}
	c.para("  score  ", score)
	if len(s.NotObserved) > 0 {
		c.para("  not observed  ", strings.Join(s.NotObserved, ", ")+": what these would have found is unknown, not clean")
	}
	switch s.Gate.Result {
	case GateFailed:
		c.para("  "+c.paint(ansiRed+ansiBold, "gate failed")+"  ", s.Gate.Failed())
	case GatePassed:
		c.para("  gate passed  ", "no finding at or above "+s.Gate.FailOn+" in the checks that ran")
	}
	if s.Ignored > 0 {
		c.para("  ignored  ", strconv.Itoa(s.Ignored)+" finding(s), by the ignore file (marked below)")
	}
	for _, e := range s.Expired {
		c.para("  expired  ", clean(e))
	}
}

func serverText(rep Report) string {
	if c := rep.Contract; c != nil {
		return ", server " + clean(strings.TrimSpace(c.ServerInfo.Name+" "+c.ServerInfo.Version))
	}
	return ", no contract captured"
}

// severityIndent is where a finding's text starts, after "  HIGH     ".
const severityIndent = 11

func (c *compact) findings(rep Report) {
	c.raw("")
	var counts []string
	for _, sev := range rubric.Severities() {
		counts = append(counts, fmt.Sprintf("%s %d", sev, rep.Summary.Findings[string(sev)]))
	}
	c.raw(fmt.Sprintf("FINDINGS (%d)  %s", len(rep.Findings), strings.Join(counts, ", ")))
	if len(rep.Findings) == 0 {
		c.raw("  none in the checks that ran; the signals not observed are listed above")
		return
	}
	pad := strings.Repeat(" ", severityIndent)
	for _, sev := range rubric.Severities() {
		var fs []Finding
		for _, f := range rep.Findings {
			if f.Severity == string(sev) {
				fs = append(fs, f)
			}
		}
		lead := "  " + c.severity(string(sev)) + " "
		// Low and info codes that repeat are one line each, with their
		// subjects: what they claim is the same of each.
		repeated := map[string][]string{}
		if sev == "low" || sev == "info" {
			for _, f := range fs {
				if collapsible(f) {
					repeated[f.Code] = append(repeated[f.Code], clean(orDash(f.Subject)))
				}
			}
		}
		done := map[string]bool{}
		for _, f := range fs {
			if subjects := repeated[f.Code]; len(subjects) > 1 && collapsible(f) {
				if !done[f.Code] {
					done[f.Code] = true
					c.hang(lead, clean(f.Code)+"  "+strconv.Itoa(len(subjects))+" subjects: "+strings.Join(subjects, ", "), severityIndent)
				}
				continue
			}
			c.hang(lead, findingText(f), severityIndent)
			if (sev == "critical" || sev == "high") && f.Evidence != "" && f.Value == nil {
				c.para(pad+"evidence: ", clean(f.Evidence))
			}
		}
	}
}

// collapsible reports whether a finding may share its code's line with
// others: not a measurement (each has its value) and not ignored (each
// says by whom).
func collapsible(f Finding) bool { return f.Value == nil && f.Ignored == nil }

// findingText is a finding's line: its code, subject and claim, and who
// ignored it.
func findingText(f Finding) string {
	text := clean(f.Code)
	if f.Subject != "" {
		text += "  " + clean(f.Subject)
	}
	if f.Value != nil {
		text += " = " + num(*f.Value) + ";"
	} else {
		text += ":"
	}
	text += " " + clean(withoutBaseline(f.Message))
	if ig := f.Ignored; ig != nil {
		text = "(ignored until " + clean(ig.Expires) + " by " + clean(ig.By) + ") " + text
	}
	return text
}

// gate writes, after a failed gate, what to do about each code that
// failed it.
func (c *compact) gate(rep Report) {
	lines := gateAdvice(rep, c.o.Now, c.o.Width)
	if len(lines) == 0 {
		return
	}
	c.raw("")
	c.raw(c.paint(ansiRed+ansiBold, lines[0]))
	for _, l := range lines[1:] {
		c.raw(l)
	}
}

// withoutBaseline is a finding's message without what the drift section
// shows: the baseline a drift finding is measured from.
func withoutBaseline(s string) string {
	if i := strings.Index(s, " since the pin ("); i > 0 {
		return s[:i] + " since the pin"
	}
	return s
}

func (c *compact) dimensions(rep Report) {
	c.raw("")
	c.raw("DIMENSIONS (weight, state, score)")
	for _, d := range rep.Dimensions {
		score := "-"
		if d.Score != nil {
			score = num(*d.Score)
		}
		lead := fmt.Sprintf("  %-26s %6s  %-10s %5s  ", clean(d.ID), num(d.Weight), clean(d.State), score)
		// A reason wraps under itself when that leaves it room, else
		// under the dimension, indented.
		indent := width(lead)
		if c.o.Width-indent < alignRoom {
			indent = hangIndent
		}
		c.hang(lead, clean(d.Reason), indent)
	}
}

func (c *compact) drift(rep Report) {
	d := rep.Drift
	if d == nil {
		return
	}
	c.raw("")
	c.para("DRIFT  ", clean(d.Statement))
	if b := d.Baseline; b != nil {
		c.para("  baseline  ", "run "+clean(b.RunID)+" of "+clean(b.RunDate)+", version "+clean(b.Version)+", pinned by "+clean(b.PinnedBy))
	}
	n := 0
	for _, ch := range d.Changes {
		if !ch.Surfaced {
			n++
		}
	}
	if n > 0 {
		c.para("  ", strconv.Itoa(n)+" change(s) recorded but not surfaced (tools added, descriptions reworded); the surfaced ones are findings above")
	}
}
