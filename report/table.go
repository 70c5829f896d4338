package report

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
)

// WriteTable writes a terminal summary of the report, every section and
// evidence, each line whole (WriteTableFor wraps it to a width). The
// output depends on the report alone, so it can be snapshot-tested. Text
// that came from the package (names, descriptions, logs) is printed with
// control and bidirectional-formatting characters escaped, so a server
// cannot move the cursor, recolour or retitle the terminal, or reorder
// what is shown.
func WriteTable(w io.Writer, rep Report) error { return writeTable(w, rep, TableOptions{}) }

// writeTable writes the full table, wrapped to o.Width unless it is 0.
func writeTable(w io.Writer, rep Report, o TableOptions) error {
	bw := bufio.NewWriter(w)
	t := &table{w: bw, width: o.Width}
	t.header(rep)
	t.gate(rep)
	t.score(rep)
	t.signals(rep)
	t.shipped(rep)
	t.supply(rep)
	t.tools(rep)
	t.judge(rep)
	t.behavior(rep)
	t.calls(rep)
	t.drift(rep)
	t.findings(rep)
	if lines := gateAdvice(rep, o.Now, tableWidth(o.Width)); len(lines) > 0 {
		t.raw("")
		for _, l := range lines {
			t.raw(l)
		}
	}
	t.line("")
	t.line("NOTICE")
	t.para("  ", rep.Notice)
	if t.err != nil {
		return fmt.Errorf("report: write table: %w", t.err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("report: write table: %w", err)
	}
	return nil
}

// table writes the full table. A width of 0 wraps nothing.
type table struct {
	w     io.Writer
	width int
	err   error
}

// raw writes one line as it is.
func (t *table) raw(s string) {
	if t.err == nil {
		_, t.err = io.WriteString(t.w, s+"\n")
	}
}

// line writes one line, wrapped to the table's width: the lines after the
// first indented two columns deeper than it.
func (t *table) line(s string) {
	if t.width <= 0 || width(s) <= t.width {
		t.raw(s)
		return
	}
	text := strings.TrimLeft(s, " ")
	lead := s[:len(s)-len(text)]
	for _, l := range hang(lead, text, len(lead)+2, t.width) {
		t.raw(l)
	}
}

// para writes text after lead, wrapped to the table's width, the lines
// after the first indented as deep as lead.
func (t *table) para(lead, text string) {
	for _, l := range hang(lead, text, width(lead), t.width) {
		t.raw(l)
	}
}

// hang writes text after lead, wrapped to the table's width, the lines
// after the first indented by indent columns.
func (t *table) hang(lead, text string, indent int) {
	for _, l := range hang(lead, text, indent, t.width) {
		t.raw(l)
	}
}

// alignRoom is the fewest columns a wrapped last column keeps under
// itself; with less, it wraps under the row, indented.
const alignRoom = 40

// hangIndent is the indent of a wrapped last column that has too little
// room under itself.
const hangIndent = 6

// grid writes rows aligned in columns, indented by two spaces. Every row
// keeps all its cells, even empty trailing ones, because tabwriter aligns
// a column only over consecutive lines that have it; the padding this
// leaves at line ends is trimmed. With a width, the last column wraps
// with a hanging indent at its start, when the columns before it leave
// it alignRoom columns; else under the row, indented by hangIndent; a row
// whose other columns fill the line is written whole.
func (t *table) grid(rows [][]string) {
	if t.err != nil {
		return
	}
	if t.width > 0 {
		t.wrappedGrid(rows)
		return
	}
	var buf strings.Builder
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		io.WriteString(tw, "  "+strings.Join(r, "\t")+"\n")
	}
	if err := tw.Flush(); err != nil {
		t.err = err
		return
	}
	for _, l := range strings.SplitAfter(buf.String(), "\n") {
		if l != "" {
			t.raw(strings.TrimRight(l, " \n"))
		}
	}
}

// wrappedGrid is grid at a width: columns measured in terminal cells,
// two spaces apart.
func (t *table) wrappedGrid(rows [][]string) {
	var cols []int
	for _, r := range rows {
		for i, c := range r {
			if i == len(cols) {
				cols = append(cols, 0)
			}
			if i < len(r)-1 {
				cols[i] = max(cols[i], width(c))
			}
		}
	}
	for _, r := range rows {
		if len(r) == 0 {
			continue
		}
		var lead strings.Builder
		lead.WriteString("  ")
		for i, c := range r[:len(r)-1] {
			lead.WriteString(c + strings.Repeat(" ", cols[i]-width(c)+2))
		}
		indent := width(lead.String())
		switch {
		case indent >= t.width:
			// The columns before it fill the line: the row is written
			// whole, as wrapping its last cell would not make it fit.
			t.raw(strings.TrimRight(lead.String()+r[len(r)-1], " "))
			continue
		case t.width-indent < alignRoom:
			indent = hangIndent
		}
		for _, l := range hang(lead.String(), r[len(r)-1], indent, t.width) {
			t.raw(l)
		}
	}
}

func (t *table) header(rep Report) {
	t.line(fmt.Sprintf("verifymcp report (%s)", rep.SchemaVersion))
	rows := [][]string{
		{"run", clean(rep.Run.ID) + "  " + rep.Run.Date + "  " + clean(rep.Tool.Name) + " " + clean(rep.Tool.Version)},
		{"target", targetLine(rep)},
		{"purl", orDash(clean(rep.Target.Purl))},
		{"integrity", orDash(clean(rep.Target.Integrity))},
	}
	if rc := rep.Run.Recollected; rc != nil {
		rows = append(rows[:1], append([][]string{{"recollected", clean(strings.Join(rc.Signals, ", ")) + " at " + rc.At + " by verifymcp " +
			clean(rc.ToolVersion) + "; the rest carried over from run " + clean(rc.From)}}, rows[1:]...)...)
	}
	if b := rep.Target.Bin; b != nil {
		rows = append(rows, []string{"bin", clean(b.Name) + " -> " + clean(b.Path) + " (" + clean(b.Rule) + ")"})
	}
	if e := rep.Target.MCPRegistry; e != nil {
		rows = append(rows, []string{"mcp registry", mcpRegistryLine(e)})
	}
	rows = append(rows,
		[]string{"rubric", "v" + clean(rep.Rubric.Version) + "  " + clean(rep.Rubric.Hash)},
	)
	if c := rep.Rubric.ContractChecks; c != nil {
		rows = append(rows, []string{"checks", "contract checks " + clean(c.Version) + " (" + clean(c.Source) + ")  " + clean(c.Digest)})
	}
	rows = append(rows,
		[]string{"sandbox", sandboxLine(rep.Sandbox)},
		[]string{"install", installLine(rep.Install)},
		[]string{"session", sessionLine(rep.Session, rep.Contract)},
	)
	if c := rep.Contract; c != nil {
		server := clean(c.ServerInfo.Name) + " " + clean(c.ServerInfo.Version)
		if c.ServerInfo.Title != "" {
			server += " (" + clean(c.ServerInfo.Title) + ")"
		}
		rows = append(rows, []string{"server", server})
	} else {
		rows = append(rows, []string{"server", "no contract captured"})
	}
	if len(rep.Masking) > 0 {
		rows = append(rows, []string{"masked", maskingLine(rep.Masking)})
	}
	t.grid(rows)
}

// mcpRegistryLine says which registry entry a target was named by, and
// whether the package claims that name.
func mcpRegistryLine(e *evidence.MCPRegistryEntry) string {
	s := clean(e.Name) + " " + clean(e.Version) + " -> " + clean(e.Package) + " (" + clean(e.Registry) + ")"
	claim := "the package's mcpName"
	if strings.HasPrefix(e.Package, "pypi:") {
		claim = "the release's mcp-name marker"
	}
	unknown := false
	for _, n := range e.Notes {
		unknown = unknown || strings.HasPrefix(n, evidence.NoteMCPNameUnknown)
	}
	switch {
	case e.MCPNameMatches:
		s += "; " + claim + " matches"
	case e.MCPName == "" && unknown:
		s += "; whether the release claims the name is unknown (its description was not read)"
	case e.MCPName == "" && claim == "the package's mcpName":
		s += "; the package declares no mcpName"
	case e.MCPName == "":
		s += "; the release's description carries no mcp-name marker"
	default:
		s += "; " + claim + " is " + clean(e.MCPName) + ", not the entry's name"
	}
	if e.Status != "" && e.Status != "active" {
		s += "; entry " + clean(e.Status)
	}
	return s
}

// maskingLine says which secrets were masked in the evidence, and where:
// "[secret:env:API_TOKEN] x4 (contract 3, session 1)".
func maskingLine(ms []Masking) string {
	parts := make([]string, 0, len(ms))
	for _, m := range ms {
		var where []string
		for _, w := range sortedKeys(m.Where) {
			where = append(where, w+" "+strconv.Itoa(m.Where[w]))
		}
		parts = append(parts, clean(m.Marker)+" x"+strconv.Itoa(m.Count)+" ("+strings.Join(where, ", ")+")")
	}
	return strings.Join(parts, "; ") + "; the evidence holds the markers, never the values"
}

// targetLine is the target as requested -> as resolved (releaseName:
// a shipped release's resolved form when it has one).
func targetLine(rep Report) string {
	tg := rep.Target
	resolved := clean(releaseName(rep))
	if tg.Requested == "" || tg.Requested == resolved {
		return resolved
	}
	return clean(tg.Requested) + " -> " + resolved
}

func sandboxLine(s Sandbox) string {
	parts := []string{"outcome " + orDash(clean(s.Outcome))}
	if s.Image != "" {
		img := clean(s.Image)
		if s.ImageDigest != "" {
			img += "@" + clean(s.ImageDigest)
		}
		parts = append(parts, "image "+img)
	}
	if s.EngineVersion != "" {
		parts = append(parts, "engine "+clean(s.EngineVersion)+" (API "+clean(s.APIVersion)+")")
	}
	return strings.Join(parts, "  ")
}

func installLine(in *Install) string {
	if in == nil {
		return "no install evidence"
	}
	parts := []string{clean(in.Outcome)}
	if in.FailedStep != "" {
		parts = append(parts, "at the "+clean(in.FailedStep)+" step")
	}
	if p := in.Python; p != nil && p.Version != "" {
		parts = append(parts, "CPython "+clean(p.Version))
	}
	parts = append(parts, plural(in.Packages, "package"), plural(len(in.Scripts), "lifecycle script"))
	switch {
	case in.Integrity.Match:
		parts = append(parts, "integrity matched")
	case in.Integrity.Expected == "":
		parts = append(parts, "integrity not verified")
	case in.Integrity.Computed == "" && in.Integrity.Lockfile == "":
		parts = append(parts, "integrity not checked")
	default:
		parts = append(parts, "INTEGRITY MISMATCH")
	}
	switch tc := in.TreeCheck; {
	case tc == nil || tc.Checked == "":
	case tc.Match:
		parts = append(parts, "venv unchanged at start")
	default:
		parts = append(parts, "VENV CHANGED BEFORE START")
	}
	return strings.Join(parts, "  ")
}

func sessionLine(s *Session, c *contract.Contract) string {
	if s == nil {
		return "no session evidence"
	}
	parts := []string{clean(s.Outcome)}
	if s.HandshakePath != "" {
		parts = append(parts, "handshake "+clean(s.HandshakePath))
	}
	if c != nil {
		parts = append(parts, "protocol "+orDash(clean(c.ProtocolVersion)))
	}
	if s.ExitCode != nil {
		parts = append(parts, "exit code "+strconv.Itoa(*s.ExitCode))
	}
	if s.NonJSONLines > 0 {
		parts = append(parts, plural(s.NonJSONLines, "non-JSON stdout line"))
	}
	if n := len(s.Truncations); n > 0 {
		parts = append(parts, plural(n, "cut")+" by the sandbox's bounds")
	}
	for _, l := range s.LateAnswers {
		parts = append(parts, clean(l.Method)+" answered late ("+secs(l.AfterMS)+")")
	}
	if sd := s.Shutdown; sd != nil {
		parts = append(parts, "shutdown: "+shutdownLine(sd))
	}
	return strings.Join(parts, "  ")
}

// shutdownLine says how the server ended: "exited on stdin close after
// 0.1s", "exited on SIGTERM after 2s + 0.3s", "killed after 2s + 2s".
func shutdownLine(sd *Shutdown) string {
	switch sd.Ended {
	case "exited_before_shutdown":
		return "had exited before"
	case "exited_on_stdin_close":
		return "exited on stdin close after " + secs(sd.StdinWaitMS)
	case "exited_on_sigterm":
		return "exited on SIGTERM after " + secs(sd.StdinWaitMS) + " + " + secs(sd.TermWaitMS)
	case "killed":
		return "killed after " + secs(sd.StdinWaitMS) + " + " + secs(sd.TermWaitMS)
	}
	return orDash(clean(sd.Ended))
}

func pct(x float64) string { return strconv.Itoa(int(x*100+0.5)) + "%" }

// gate prints the gate's result and the ignore file's effect, when a
// policy was applied.
func (t *table) gate(rep Report) {
	s := rep.Summary
	t.gateLines(s.Gate, s.Expired, "only the checks that ran; see SIGNALS",
		fmt.Sprintf("%d finding(s) ignored by the ignore file, listed below as ignored", s.Ignored), s.Ignored)
}

// gateLines prints a gate's result (passed says what it covered) and the
// ignore file's effect (ignoredLine when it accepted any finding, and its
// expired entries), when a policy was applied.
func (t *table) gateLines(g Gate, expired []string, passed, ignoredLine string, ignored int) {
	if g.Result == GateNotSet && ignored == 0 && len(expired) == 0 {
		return
	}
	t.line("")
	switch g.Result {
	case GateFailed:
		t.line("GATE  failed: " + clean(g.Failed()))
		for _, f := range g.Tripped {
			t.line("  " + clean(f))
		}
	case GatePassed:
		t.line("GATE  passed: no finding at or above " + clean(g.FailOn) + " (" + passed + ")")
	}
	if ignored > 0 {
		t.line("  " + ignoredLine)
	}
	for _, e := range expired {
		t.line("  " + clean(e))
	}
}

func (t *table) score(rep Report) {
	t.line("")
	if rep.Score == nil {
		t.line("SCORE  none: every dimension was dropped")
	} else {
		c := rep.Summary.Coverage
		line := "SCORE  " + num(*rep.Score) + " / 100, over the dimensions not dropped: " + pct(c.Scored) + " of the rubric's weight scored from evidence"
		if c.ZeroPoint > 0 {
			line += ", " + pct(c.ZeroPoint) + " at zero point (evidence not observed)"
		}
		if c.Dropped > 0 {
			line += ", " + pct(c.Dropped) + " not assessed"
		}
		t.line(line)
		if cp := rep.Summary.Cap; cp != nil {
			t.line("  capped at " + num(cp.Value) + " from " + num(cp.Uncapped) + " by critical finding(s) " + clean(strings.Join(cp.Codes, ", ")) + ": " + clean(cp.Reason))
		}
	}
	rows := [][]string{{"DIMENSION", "WEIGHT", "STATE", "SCORE", "REASON"}}
	for _, d := range rep.Dimensions {
		score := "-"
		if d.Score != nil {
			score = num(*d.Score)
		}
		rows = append(rows, []string{clean(d.ID), num(d.Weight), clean(d.State), score, clean(d.Reason)})
	}
	t.grid(rows)
}

func (t *table) signals(rep Report) {
	t.line("")
	t.line("SIGNALS")
	rows := [][]string{{"SIGNAL", "STATE", "SOURCE", "ENDPOINT", "AUTH", "FETCHED", "REASON"}}
	var unchecked []string
	for _, name := range sortedKeys(rep.Signals) {
		s := rep.Signals[name]
		source := "verifymcp"
		if s.ThirdParty {
			source = "third party"
		}
		auth := "-"
		switch {
		case s.Authenticated:
			auth = "yes"
		case s.Endpoint != "":
			auth = "no"
		}
		fetched := "-"
		switch {
		case s.FetchedAt != nil && s.Cached:
			fetched = *s.FetchedAt + " (cache)"
		case s.FetchedAt != nil:
			fetched = *s.FetchedAt
		case s.Cached:
			fetched = "cache"
		}
		rows = append(rows, []string{clean(name), clean(s.State), source, orDash(clean(s.Endpoint)), auth, clean(fetched), clean(s.Reason)})
		if s.State != "observed" {
			unchecked = append(unchecked, clean(name)+" ("+clean(s.State)+")")
		}
	}
	t.grid(rows)
	if len(unchecked) > 0 {
		t.line("  Not checked: " + strings.Join(unchecked, ", ") + ".")
		t.line("  What these would have found is unknown, not clean.")
	}
}

func (t *table) tools(rep Report) {
	t.line("")
	if rep.Contract == nil {
		t.line("TOOLS  not captured")
		return
	}
	tools := append([]contract.Tool(nil), rep.Contract.Tools...)
	sort.SliceStable(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
	t.line(fmt.Sprintf("TOOLS (%d)  effective annotations; unannotated tools take the specification's defaults", len(tools)))
	if len(tools) == 0 {
		t.line("  the server lists no tools")
		return
	}
	rows := [][]string{{"NAME", "READ-ONLY", "DESTRUCTIVE", "OPEN-WORLD", "ANNOTATIONS"}}
	for _, tl := range tools {
		annotated := "declared"
		if tl.Annotations == nil {
			annotated = "none"
		}
		rows = append(rows, []string{clean(tl.Name), yesNo(tl.ReadOnly()), yesNo(tl.Destructive()), yesNo(tl.OpenWorld()), annotated})
	}
	t.grid(rows)
}

func (t *table) findings(rep Report) {
	t.line("")
	bySeverity := map[string][]Finding{}
	for _, f := range rep.Findings {
		bySeverity[f.Severity] = append(bySeverity[f.Severity], f)
	}
	var severities []string
	known := map[string]bool{}
	for _, s := range rubric.Severities() {
		severities = append(severities, string(s))
		known[string(s)] = true
	}
	// A severity no rubric defines is still printed, never dropped.
	for _, s := range sortedKeys(bySeverity) {
		if !known[s] {
			severities = append(severities, s)
		}
	}
	counts := make([]string, 0, len(severities))
	for _, s := range severities {
		counts = append(counts, fmt.Sprintf("%s %d", s, len(bySeverity[s])))
	}
	t.line(fmt.Sprintf("FINDINGS (%d)  %s", len(rep.Findings), strings.Join(counts, ", ")))
	if len(rep.Findings) == 0 {
		t.line("  none in the checks that ran; see SIGNALS for the checks that did not")
		return
	}
	for _, s := range severities {
		fs := bySeverity[s]
		if len(fs) == 0 {
			continue
		}
		t.line("  " + strings.ToUpper(clean(s)))
		for _, f := range fs {
			head := "    " + clean(f.Code)
			if f.Subject != "" {
				head += "  " + clean(f.Subject)
			}
			if f.Value != nil {
				head += "  = " + num(*f.Value)
			}
			if ig := f.Ignored; ig != nil {
				head += "  (ignored until " + clean(ig.Expires) + " by " + clean(ig.By) + ": " + clean(ig.Reason) + "; " + clean(ig.File) + ":" + strconv.Itoa(ig.Line) + ")"
			}
			t.para("    ", strings.TrimPrefix(head, "    "))
			t.para("      ", clean(f.Message))
			if f.Evidence != "" && f.Value == nil {
				t.para("      evidence: ", clean(f.Evidence))
			}
		}
	}
}

// plural writes a count and a noun, adding an s unless the count is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// num prints a number without trailing zeros: 100, 92.3.
func num(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// Clean makes untrusted text safe to print on a terminal, as every table
// does (see clean): for a line written outside a report, such as an
// error that quotes a package's tool name.
func Clean(s string) string { return clean(s) }

// clean makes untrusted text safe to print on a terminal: control
// characters (C0, DEL, C1), bidirectional formatting characters and other
// invisible format characters, and invalid UTF-8 are shown as escapes, so
// one line of input stays one visible line of output.
func clean(s string) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && w == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029':
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += w
	}
	return b.String()
}

// isPlain reports whether s is printable ASCII, the common case.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// FirstLine is the first line of s, trimmed, marked " …" when more
// followed: a long error in a table cell or a one-line message.
func FirstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	return s
}

// OrDash is orDash, for the outputs written outside this package.
func OrDash(s string) string { return orDash(s) }
