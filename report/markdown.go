package report

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/verifymcp/verifymcp/rubric"
)

// WriteMarkdown writes the report as GitHub-flavoured Markdown, for a pull
// request or an issue: a title naming the target and its version, a
// headline (the score, the gate's result when a gate was set, the
// findings by severity), the summary (outcome, the gate, the findings by
// severity, the score and the share of the rubric's weight it covers, the
// signals not observed), the findings by severity with how to fix each
// (the remediation of its code in the rubric) and their evidence folded
// in <details>, the tool calls the sandbox made (when it made any), the
// dimensions, the signals and the notice.
//
// Text that came from the package, a third party or an ignore file is
// escaped so that it cannot add links, images, HTML, mentions or table
// cells, nor break the document's structure: control characters are shown
// as escapes (as in the table), characters Markdown gives a meaning are
// backslash-escaped, < > & are written as entities, and a word that GitHub
// would turn into a link (a URL, www., an address or @mention, #reference)
// is written as code. Evidence is a fenced code block longer than any run
// of backticks in it.
func WriteMarkdown(w io.Writer, rep Report) error {
	bw := bufio.NewWriter(w)
	m := &mdWriter{w: bw}
	m.header(rep)
	m.summary(rep)
	m.findings(rep)
	m.calls(rep)
	m.release(rep)
	m.dimensions(rep)
	m.signals(rep)
	m.line("## Notice")
	m.line("")
	m.line(mdText(rep.Notice))
	if m.err != nil {
		return fmt.Errorf("report: write markdown: %w", m.err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("report: write markdown: %w", err)
	}
	return nil
}

type mdWriter struct {
	w   io.Writer
	err error
}

func (m *mdWriter) line(s string) {
	if m.err == nil {
		_, m.err = io.WriteString(m.w, s+"\n")
	}
}

func (m *mdWriter) header(rep Report) {
	m.line("# verifymcp report: " + mdCode(releaseName(rep), false))
	m.line("")
	var parts []string
	if tg := rep.Target; tg.Requested != "" && tg.Requested != releaseName(rep) {
		parts = append(parts, "Requested as "+mdCode(tg.Requested, false)+".")
	}
	run := "Run " + mdCode(orDash(rep.Run.ID), false) + " on " + mdText(rep.Run.Date) + " by " + mdText(strings.TrimSpace(rep.Tool.Name+" "+rep.Tool.Version)) +
		", rubric v" + mdText(rep.Rubric.Version) + " (" + mdCode(orDash(rep.Rubric.Hash), false) + ")"
	if img := imageRef(rep.Sandbox); img != "" {
		run += ", sandbox image " + mdCode(img, false)
	}
	parts = append(parts, run+".")
	if rc := rep.Run.Recollected; rc != nil {
		parts = append(parts, "Recollected "+mdText(strings.Join(rc.Signals, ", "))+" at "+mdText(rc.At)+" by verifymcp "+mdText(rc.ToolVersion)+
			"; the rest carried over from run "+mdCode(orDash(rc.From), false)+".")
	}
	m.line(strings.Join(parts, " "))
	m.line("")
	m.line("**" + mdText(headline(rep)) + "**")
	m.line("")
}

func (m *mdWriter) summary(rep Report) {
	s := rep.Summary
	m.line("## Summary")
	m.line("")
	m.line("- **Outcome:** " + mdText(orDash(s.Outcome)))
	if g := gateSentence(s.Gate); g != "" {
		line := "- **Gate:** " + mdText(g)
		if len(s.Gate.Tripped) > 0 {
			tripped := make([]string, 0, len(s.Gate.Tripped))
			for _, f := range s.Gate.Tripped {
				tripped = append(tripped, mdCode(f, false))
			}
			line += ": " + strings.Join(tripped, ", ")
		}
		m.line(line)
	}
	m.line("- **Findings:** " + mdText(findingsSentence(rep)))
	for _, e := range s.Expired {
		m.line("- **Ignore entry expired:** " + mdText(e))
	}
	m.line("- **Score:** " + mdText(scoreSentence(rep)))
	if len(s.NotObserved) == 0 {
		m.line("- **Signals not observed:** none; every signal was observed")
	} else {
		names := make([]string, 0, len(s.NotObserved))
		for _, n := range s.NotObserved {
			names = append(names, mdText(n))
		}
		m.line("- **Signals not observed:** " + strings.Join(names, ", ") + ". What these would have found is unknown, not clean.")
	}
	m.line("")
}

func (m *mdWriter) findings(rep Report) {
	m.line(fmt.Sprintf("## Findings (%d)", len(rep.Findings)))
	m.line("")
	if len(rep.Findings) == 0 {
		m.line("None in the checks that ran; see Signals for the checks that did not.")
		m.line("")
		return
	}
	for _, g := range findingGroups(rep.Findings) {
		m.line(fmt.Sprintf("### %s (%d)", mdText(severityTitle(g.Severity)), len(g.Findings)))
		m.line("")
		for _, f := range g.Findings {
			head := "- " + mdCode(f.Code, false)
			if f.Subject != "" {
				head += " on " + mdCode(f.Subject, false)
			}
			if f.Value != nil {
				head += " = " + num(*f.Value)
			}
			if ig := f.Ignored; ig != nil {
				head += " — **ignored** " + mdText(ignoredSentence(ig))
			}
			m.line(head + ": " + mdText(f.Message))
			if f.Remediation != "" {
				m.line("")
				m.line("  How to fix: " + mdText(f.Remediation))
				m.line("")
			}
			if f.Evidence != "" && f.Value == nil {
				fence := mdFence(clean(f.Evidence))
				m.line("")
				m.line("  <details><summary>Evidence</summary>")
				m.line("")
				m.line("  " + fence + "text")
				m.line("  " + clean(f.Evidence))
				m.line("  " + fence)
				m.line("")
				m.line("  </details>")
				m.line("")
			}
		}
		m.line("")
	}
}

func (m *mdWriter) dimensions(rep Report) {
	m.line("## Dimensions")
	m.line("")
	if len(rep.Dimensions) == 0 {
		m.line("The rubric has no dimensions.")
		m.line("")
		return
	}
	m.line("| Dimension | Weight | State | Score | Reason |")
	m.line("|---|---:|---|---:|---|")
	for _, d := range rep.Dimensions {
		m.line("| " + mdCell(d.ID) + " | " + num(d.Weight) + " | " + mdCell(d.State) + " | " + mdCell(dimensionScore(d)) + " | " + mdCell(d.Reason) + " |")
	}
	m.line("")
}

func (m *mdWriter) signals(rep Report) {
	m.line("## Signals")
	m.line("")
	if len(rep.Signals) == 0 {
		m.line("No signals were recorded.")
		m.line("")
		return
	}
	m.line("| Signal | State | Source | Endpoint | Fetched | Reason |")
	m.line("|---|---|---|---|---|---|")
	for _, name := range sortedKeys(rep.Signals) {
		s := rep.Signals[name]
		endpoint := "-"
		if s.Endpoint != "" {
			endpoint = mdCode(s.Endpoint, true)
		}
		m.line("| " + mdCell(name) + " | " + mdCell(s.State) + " | " + signalSource(s) + " | " + endpoint + " | " + mdCell(signalFetched(s)) + " | " + mdCell(s.Reason) + " |")
	}
	m.line("")
	m.line("A signal that is not observed was not checked: what it would have found is unknown, not clean.")
	m.line("")
}

// The parts of the report the Markdown and HTML forms say alike. They
// return plain text; each writer escapes it for its format.

// targetName is the resolved target: "npm:name@version".
func targetName(tg Target) string {
	s := tg.Name + "@" + tg.Version
	if tg.Ecosystem != "" {
		s = tg.Ecosystem + ":" + s
	}
	return s
}

// imageRef is the sandbox image with its digest, "" when none is known.
func imageRef(s Sandbox) string {
	switch {
	case s.Image != "" && s.ImageDigest != "":
		return s.Image + "@" + s.ImageDigest
	case s.Image != "":
		return s.Image
	}
	return s.ImageDigest
}

// headline is the report in one line: the score, the gate's result when
// a gate was set, and the findings by severity.
func headline(rep Report) string {
	score := "No score: every dimension was dropped"
	if rep.Score != nil {
		score = "Score " + num(*rep.Score) + " / 100"
	}
	parts := []string{score}
	switch g := rep.Summary.Gate; g.Result {
	case GateFailed:
		parts = append(parts, "gate failed: "+g.Failed())
	case GatePassed:
		parts = append(parts, "gate passed: nothing at or above "+g.FailOn)
	}
	s := rep.Summary
	counts := make([]string, 0, len(s.Findings))
	for _, sev := range severityOrder(s.Findings) {
		counts = append(counts, sev+" "+strconv.Itoa(s.Findings[sev]))
	}
	findings := "findings: " + strings.Join(counts, ", ")
	if s.Ignored > 0 {
		findings += " (" + strconv.Itoa(s.Ignored) + " ignored)"
	}
	return strings.Join(append(parts, findings), " · ")
}

// gateSentence is the gate's result, "" when no gate was set.
func gateSentence(g Gate) string {
	switch g.Result {
	case GateFailed:
		return "failed: " + g.Failed()
	case GatePassed:
		s := "passed: no finding at or above " + g.FailOn
		if g.Unverified {
			s += " and every third-party signal observed"
		}
		return s + ", in the checks that ran (see Signals)"
	}
	return ""
}

// findingsSentence counts the findings by severity, the ignored ones apart.
func findingsSentence(rep Report) string {
	s := rep.Summary
	counts := make([]string, 0, len(s.Findings))
	for _, sev := range severityOrder(s.Findings) {
		counts = append(counts, sev+" "+strconv.Itoa(s.Findings[sev]))
	}
	out := strconv.Itoa(len(rep.Findings)) + " (" + strings.Join(counts, ", ") + ")"
	if s.Ignored > 0 {
		out += "; " + strconv.Itoa(s.Ignored) + " ignored by the ignore file, not counted by severity and listed below as ignored"
	}
	if len(rep.Findings) == 0 {
		out += ": none in the checks that ran"
	}
	return out
}

// scoreSentence is the score and the share of the rubric's weight it
// covers.
func scoreSentence(rep Report) string {
	if rep.Score == nil {
		return "none: every dimension was dropped (not assessed)"
	}
	c := rep.Summary.Coverage
	s := num(*rep.Score) + " / 100 over the dimensions not dropped; " + pct(c.Scored) + " of the rubric's weight scored from evidence"
	if c.ZeroPoint > 0 {
		s += ", " + pct(c.ZeroPoint) + " at zero point (evidence not observed)"
	}
	if c.Dropped > 0 {
		s += ", " + pct(c.Dropped) + " dropped (not assessed, not counted)"
	}
	return s
}

// ignoredSentence says who accepted a finding, why and until when.
func ignoredSentence(ig *Ignored) string {
	return "until " + ig.Expires + " by " + ig.By + ": " + ig.Reason + " (" + ig.File + ":" + strconv.Itoa(ig.Line) + ")"
}

// dimensionScore is a dimension's score, or what stands for it.
func dimensionScore(d Dimension) string {
	if d.Score == nil {
		return "not counted"
	}
	return num(*d.Score)
}

func signalSource(s Signal) string {
	if s.ThirdParty {
		return "third party"
	}
	return "verifymcp"
}

// signalFetched says when a signal's answer was fetched, "-" when none was.
func signalFetched(s Signal) string {
	switch {
	case s.FetchedAt != nil && s.Cached:
		return *s.FetchedAt + " (cache)"
	case s.FetchedAt != nil:
		return *s.FetchedAt
	case s.Cached:
		return "cache"
	}
	return "-"
}

// severityTitle capitalises a severity: "High".
func severityTitle(s string) string {
	if s == "" {
		return "(no severity)"
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// severityOrder is the rubric's severities, most severe first, then any
// other key of counts in order: a severity no rubric defines is still
// shown, never dropped.
func severityOrder[V any](counts map[string]V) []string {
	var out []string
	known := map[string]bool{}
	for _, s := range rubric.Severities() {
		out = append(out, string(s))
		known[string(s)] = true
	}
	for _, s := range sortedKeys(counts) {
		if !known[s] {
			out = append(out, s)
		}
	}
	return out
}

// findingGroup is the findings of one severity, in the report's order.
type findingGroup struct {
	Severity string
	Findings []Finding
}

// findingGroups groups findings by severity, most severe first, leaving
// out the severities without findings.
func findingGroups(fs []Finding) []findingGroup {
	by := map[string][]Finding{}
	for _, f := range fs {
		by[f.Severity] = append(by[f.Severity], f)
	}
	var out []findingGroup
	for _, s := range severityOrder(by) {
		if len(by[s]) > 0 {
			out = append(out, findingGroup{Severity: s, Findings: by[s]})
		}
	}
	return out
}

// Escaping for Markdown.

// mdText escapes untrusted text for Markdown prose (see WriteMarkdown).
func mdText(s string) string { return mdInline(s, false) }

// mdCell escapes untrusted text for a table cell.
func mdCell(s string) string { return mdInline(s, true) }

// mdInline escapes s word by word: a word GitHub would link is written as
// code, any other has its Markdown-significant characters escaped.
func mdInline(s string, cell bool) string {
	s = clean(s)
	words := strings.Split(s, " ")
	for i, w := range words {
		if mdLinkable(w) {
			words[i] = mdCode(w, cell)
		} else {
			words[i] = mdEscape(w)
		}
	}
	return strings.Join(words, " ")
}

// mdLinkable reports whether GitHub could turn a word into a link, an
// image, a mention or a reference even with its punctuation escaped:
// its autolinks (URLs, www., e-mail addresses) and its @mentions and
// #references are found in the text after escapes are undone, but never
// inside code.
func mdLinkable(w string) bool {
	lw := strings.ToLower(w)
	return strings.ContainsAny(w, "@#") || strings.Contains(w, "://") || strings.Contains(lw, "www.") ||
		strings.Contains(lw, "mailto:") || strings.Contains(lw, "xmpp:")
}

// mdEscape escapes the characters of a word that Markdown (with GitHub's
// extensions: tables, strikethrough, math) gives a meaning inline.
func mdEscape(w string) string {
	var b strings.Builder
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch c {
		case '\\', '`', '*', '[', ']', '|', '~', '$', '!':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '_':
			// Intraword underscores (snake_case) make no emphasis.
			if i > 0 && i < len(w)-1 && isAlnum(w[i-1]) && isAlnum(w[i+1]) {
				b.WriteByte(c)
			} else {
				b.WriteString(`\_`)
			}
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// mdCode writes untrusted text as a code span, whose content Markdown
// never interprets: delimited by one backtick more than its longest run,
// padded when it starts or ends with a backtick or a space. In a table
// cell a pipe is escaped, which GitHub undoes inside the span.
func mdCode(s string, cell bool) string {
	s = clean(s)
	if s == "" {
		return ""
	}
	if cell {
		s = strings.ReplaceAll(s, "|", `\|`)
	}
	delim := strings.Repeat("`", longestRun(s, '`')+1)
	if s[0] == '`' || s[len(s)-1] == '`' || s[0] == ' ' || s[len(s)-1] == ' ' {
		s = " " + s + " "
	}
	return delim + s + delim
}

// mdFence is a code fence longer than any run of backticks in s.
func mdFence(s string) string {
	return strings.Repeat("`", max(3, longestRun(s, '`')+1))
}

func longestRun(s string, c byte) int {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}
