package report

import (
	"strconv"
	"strings"

	"github.com/verifymcp/verifymcp/evidence"
)

// The TOOL CALLS section's bounds: the widest tool name the call lines
// align to (a longer one pushes its line out), and the runes of a
// process's command line and of a request's text shown under a call.
const (
	callToolCells = 28
	callArgvChars = 100
	callTextChars = 80
)

// callKindCells is the width of the kind column of a call's events.
const callKindCells = 9

// calls writes the TOOL CALLS section: a line per call (number, tool,
// outcome, duration) with what the call did indented under it, the
// tools not called and why, and what the calls cannot say. Evidence
// from before the exercise has no section, so that an old report reads
// as it did.
func (t *table) calls(rep Report) {
	ex := rep.Exercise
	sig, recorded := rep.Signals[evidence.SignalExercise]
	state := clean(sig.State)
	if sig.Reason != "" {
		state += " (" + clean(sig.Reason) + ")"
	}
	if ex == nil {
		if recorded {
			t.line("")
			t.line("TOOL CALLS  none made: signal " + evidence.SignalExercise + " is " + state)
		}
		return
	}
	t.line("")
	head := "TOOL CALLS  " + strconv.Itoa(len(ex.Calls)) + " called in " + secs(ex.ElapsedMS) + ", " +
		strconv.Itoa(len(ex.NotCalled)) + " not called; per-call timeout " + secs(ex.CallTimeoutMS) + ", budget " + secs(ex.BudgetMS)
	if recorded && sig.State != string(evidence.StateObserved) {
		head += "; signal " + evidence.SignalExercise + " is " + state
	}
	t.line(head)
	t.line("  " + scratchLine(ex))
	if len(ex.Placeholders) > 0 {
		var ps []string
		for _, k := range sortedKeys(ex.Placeholders) {
			ps = append(ps, clean(k)+" "+clean(ex.Placeholders[k]))
		}
		t.line("  placeholders: " + strings.Join(ps, ", "))
	}
	toolCells := 0
	for _, c := range ex.Calls {
		toolCells = max(toolCells, min(width(clean(c.Tool)), callToolCells))
	}
	numCells := len(strconv.Itoa(len(ex.Calls)))
	for _, c := range ex.Calls {
		t.line("  " + padCells(strconv.Itoa(c.Call), numCells) + "  " + padCells(clean(orDash(c.Tool)), toolCells) + "  " +
			padCells(outcomeWord(c.Outcome), 10) + "  " + secs(c.DurationMS))
		for _, d := range callDetails(rep, c) {
			t.hang("      "+padCells(d[0], callKindCells), d[1], 6+callKindCells)
		}
	}
	for _, r := range outsideRequests(ex) {
		t.hang("  client request outside calls: ", clientRequestLine(r), 6)
	}
	for _, n := range ex.NotCalled {
		t.hang("  not called  ", clean(orDash(n.Tool))+": "+clean(orDash(n.Reason)), 6)
	}
	t.para("  ", "Each tool was called once, with arguments generated from its input schema that point at places the sandbox "+
		"controls: what a tool does with other arguments, or when called again, was not observed.")
}

// scratchLine says where the path arguments pointed and whether the
// per-call file check worked.
func scratchLine(ex *Exercise) string {
	s := "scratch " + orDash(clean(ex.Scratch))
	if len(ex.Decoys) > 0 {
		ds := make([]string, 0, len(ex.Decoys))
		for _, d := range ex.Decoys {
			ds = append(ds, clean(d))
		}
		s += " with " + plural(len(ex.Decoys), "decoy") + " (" + strings.Join(ds, ", ") + ")"
	}
	if ex.FileCheck == "ok" {
		return s + "; file check ok"
	}
	return s + "; file check NOT OK (" + orDash(clean(ex.FileCheck)) + "): files changed by a call may be missing"
}

// outcomeWord is a call's outcome in the table: the tool's own error and
// the failures in capitals, a result as it is.
func outcomeWord(o string) string {
	switch o {
	case evidence.CallResult:
		return "result"
	case evidence.CallToolError:
		return "tool error"
	case evidence.CallError, evidence.CallTimeout, evidence.CallExited:
		return strings.ToUpper(o)
	}
	return orDash(clean(o))
}

// callDetails are the lines under a call, each a kind and a text: why it
// failed, the files it changed, its network events, processes and
// canaries (the rows of behavior in its window) and the requests the
// server sent the client during it.
func callDetails(rep Report, c ToolCall) [][2]string {
	var out [][2]string
	add := func(kind, text string) { out = append(out, [2]string{kind, text}) }
	if c.Error != "" {
		add("error", clean(c.Error))
	}
	if c.Outcome == evidence.CallToolError && c.Result != "" {
		add("error", clean(strconv.Quote(truncate(c.Result, callTextChars))))
	}
	for _, f := range c.Files {
		d := clean(orDash(f.Op)) + " " + clean(f.Path)
		switch {
		case f.Decoy:
			d += "  DECOY"
		case f.Seeded:
			d += "  SEEDED (planted by the sandbox)"
		}
		add("file", d)
	}
	if bh := rep.Behavior; bh != nil {
		for _, e := range bh.Network {
			if e.Call != c.Call {
				continue
			}
			if e.Kind == "dns" {
				add("dns", strings.TrimSpace(clean(e.DNSType)+" "+clean(e.DNSName)))
				continue
			}
			add("connect", callConnection(e))
		}
		for _, p := range bh.Processes {
			if p.Call == c.Call {
				add("process", "pid "+strconv.Itoa(p.PID)+"  "+truncate(argvLine(p), callArgvChars))
			}
		}
		for _, h := range bh.Exfiltration {
			if h.Call == c.Call {
				add("CANARY", clean(h.Canary.Kind)+" ("+clean(h.Canary.Where)+") left by "+clean(h.Channel)+", encoded "+clean(h.Encoding)+": "+clean(h.Masked))
			}
		}
	}
	if rep.Exercise != nil {
		for _, r := range rep.Exercise.ClientRequests {
			if r.Call == c.Call {
				add("client", clientRequestLine(r))
			}
		}
	}
	return out
}

// callConnection is a connection in a call's window: the request (its
// method and URL when it was read), else where it went, and what it
// carried of note.
func callConnection(e NetEvent) string {
	var parts []string
	if e.HTTPMethod != "" || e.HTTPTarget != "" {
		scheme := "http://"
		if e.TLS {
			scheme = "https://"
		}
		host := e.HTTPHost
		if host == "" {
			host = netDestination(e)
		}
		parts = append(parts, strings.TrimSpace(clean(e.HTTPMethod)+" "+scheme+clean(host)+clean(e.HTTPTarget)))
	} else {
		d := clean(e.Kind) + " " + clean(netDestination(e))
		if e.TLSRefused {
			d += "  TLS REFUSED"
		}
		parts = append(parts, d)
	}
	if e.LiteralIP {
		parts = append(parts, "LITERAL IP")
	}
	if len(e.Recipients) > 0 {
		parts = append(parts, "mail to "+clean(strings.Join(e.Recipients, ", ")))
	}
	if len(e.Secrets) > 0 {
		parts = append(parts, "SECRET SENT "+clean(strings.Join(e.Secrets, ", ")))
	}
	parts = append(parts, plural64(e.Bytes, "byte"))
	return strings.Join(parts, "  ")
}

// clientRequestLine is a request the server sent the client: its method,
// what it asked, and the client's answer.
func clientRequestLine(r ClientRequest) string {
	s := clean(orDash(r.Method))
	if r.Text != "" {
		s += " " + clean(strconv.Quote(truncate(r.Text, callTextChars)))
	}
	return s + " -> " + orDash(clean(r.Answer))
}

// padCells pads s with spaces to n terminal cells.
func padCells(s string, n int) string {
	if w := width(s); w < n {
		return s + strings.Repeat(" ", n-w)
	}
	return s
}
