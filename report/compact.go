package report

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/verifymcp/verifymcp/rubric"
)

// TableOptions shape the table a person reads at a terminal.
type TableOptions struct {
	// Width wraps lines to this many columns (0: 100).
	Width int
	// Color marks severities and the gate with ANSI colours (a terminal,
	// and NO_COLOR unset: the caller decides).
	Color bool
	// Verbose writes the whole table (WriteTable): every section, every
	// evidence.
	Verbose bool
}

// WriteTableFor writes the table for a person: the summary and the
// findings first, each on one wrapped line with its subject and claim,
// then the dimensions, then what was not observed, the drift and the
// notice; the long evidence and the detail sections (tools, supply chain,
// judge, behaviour) with Verbose, which writes WriteTable's full table.
func WriteTableFor(w io.Writer, rep Report, o TableOptions) error {
	if o.Verbose {
		return WriteTable(w, rep)
	}
	if o.Width <= 0 {
		o.Width = 100
	}
	c := &compact{w: bufio.NewWriter(w), o: o}
	c.header(rep)
	c.findings(rep)
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
	indent := utf8.RuneCountInString(stripANSI(lead))
	pad := strings.Repeat(" ", indent)
	line, width := lead, indent
	for _, word := range strings.Fields(text) {
		n := utf8.RuneCountInString(word)
		if width+n+1 > c.o.Width && width > indent {
			c.raw(strings.TrimRight(line, " "))
			line, width = pad, indent
		}
		if width > indent {
			line += " "
			width++
		}
		line += word
		width += n
	}
	c.raw(strings.TrimRight(line, " "))
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
	c.para(c.paint(ansiBold, "verifymcp:")+" ", targetLine(rep.Target))
	c.para("  ", "run "+clean(rep.Run.ID)+" "+rep.Run.Date+", verifymcp "+clean(rep.Tool.Version)+", rubric v"+clean(rep.Rubric.Version)+
		", session "+sessionLine(rep.Session, rep.Contract)+serverText(rep))
	if e := rep.Target.MCPRegistry; e != nil {
		c.para("  mcp registry  ", mcpRegistryLine(e))
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
	for _, sev := range rubric.Severities() {
		for _, f := range rep.Findings {
			if f.Severity != string(sev) {
				continue
			}
			text := clean(f.Code)
			if f.Subject != "" {
				text += "  " + clean(f.Subject) + ":"
			}
			if f.Value != nil {
				text += " = " + num(*f.Value) + ";"
			}
			text += " " + clean(claim(f.Message))
			if ig := f.Ignored; ig != nil {
				text = "(ignored until " + clean(ig.Expires) + " by " + clean(ig.By) + ") " + text
			}
			c.line("  "+c.severity(f.Severity)+" ", text)
		}
	}
}

// line writes one line cut to the width, lead and text.
func (c *compact) line(lead, text string) {
	room := c.o.Width - utf8.RuneCountInString(stripANSI(lead))
	if r := []rune(text); room > 10 && len(r) > room {
		text = string(r[:room-1]) + "…"
	}
	c.raw(strings.TrimRight(lead+text, " "))
}

// claim is the claim of a message: its first sentence, without what the
// drift section shows (the baseline).
func claim(s string) string {
	if i := strings.Index(s, " since the pin ("); i > 0 {
		return s[:i] + " since the pin"
	}
	return firstSentence(s)
}

// firstSentence is the claim of a message: its first sentence.
func firstSentence(s string) string {
	for i := 0; i+1 < len(s); i++ {
		if (s[i] == '.' || s[i] == ';') && s[i+1] == ' ' && i > 20 {
			return s[:i+1]
		}
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
		reason := clean(d.Reason)
		if max := c.o.Width - utf8.RuneCountInString(lead); max > 10 && utf8.RuneCountInString(reason) > max {
			reason = string([]rune(reason)[:max-1]) + "…"
		}
		c.raw(strings.TrimRight(lead+reason, " "))
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
		c.line("  baseline  ", "run "+clean(b.RunID)+" of "+clean(b.RunDate)+", version "+clean(b.Version)+", pinned by "+clean(b.PinnedBy))
	}
	n := 0
	for _, ch := range d.Changes {
		if !ch.Surfaced {
			n++
		}
	}
	if n > 0 {
		c.line("  ", strconv.Itoa(n)+" change(s) recorded but not surfaced (tools added, descriptions reworded); the surfaced ones are findings above")
	}
}
