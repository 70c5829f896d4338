package report

import (
	"strconv"
	"strings"

	"github.com/verifymcp/verifymcp/evidence"
)

// The parts of the tool calls the Markdown and HTML forms say alike, as
// plain text; each writer escapes it for its format.

// callsUnmade says why no tool was called: "" when some were, or when the
// evidence is from before the exercise (which has no section).
func callsUnmade(rep Report) (string, bool) {
	if rep.Exercise != nil {
		return "", true
	}
	sig, recorded := rep.Signals[evidence.SignalExercise]
	if !recorded {
		return "", false
	}
	state := sig.State
	if sig.Reason != "" {
		state += " (" + sig.Reason + ")"
	}
	return "No tool was called: signal " + evidence.SignalExercise + " is " + state + ", so what the tools do when called was not observed.", true
}

// callsSummary is the exercise in one sentence.
func callsSummary(ex *Exercise) string {
	s := plural(len(ex.Calls), "tool") + " called in " + secs(ex.ElapsedMS) + ", " + strconv.Itoa(len(ex.NotCalled)) +
		" not called; per-call timeout " + secs(ex.CallTimeoutMS) + ", budget " + secs(ex.BudgetMS) + ". " +
		"The path arguments pointed into " + orDash(ex.Scratch)
	if len(ex.Decoys) > 0 {
		s += ", with " + plural(len(ex.Decoys), "decoy") + " planted (" + strings.Join(ex.Decoys, ", ") + ")"
	}
	if ex.FileCheck == "ok" {
		return s + "; the file check worked."
	}
	return s + "; the file check did not work (" + orDash(ex.FileCheck) + "): files changed by a call may be missing."
}

// callsCaveat is what the calls cannot say.
const callsCaveat = "Each tool was called once, with arguments generated from its input schema that point at places the sandbox " +
	"controls: what a tool does with other arguments, or when called again, was not observed."

// outsideRequests are the client requests that came in no call's window
// (or name a call the exercise does not list): shown apart, never lost.
func outsideRequests(ex *Exercise) []ClientRequest {
	calls := map[int]bool{}
	for _, c := range ex.Calls {
		calls[c.Call] = true
	}
	var out []ClientRequest
	for _, r := range ex.ClientRequests {
		if r.Call == 0 || !calls[r.Call] {
			out = append(out, r)
		}
	}
	return out
}

// callDid counts what a call did: "2 files, 1 connection", or "nothing
// seen".
func callDid(rep Report, c ToolCall) string {
	var parts []string
	if n := len(c.Files); n > 0 {
		parts = append(parts, plural(n, "file"))
	}
	if c.Network > 0 {
		parts = append(parts, plural(c.Network, "network event"))
	}
	if c.Processes > 0 {
		parts = append(parts, strconv.Itoa(c.Processes)+" process"+map[bool]string{true: "", false: "es"}[c.Processes == 1])
	}
	if c.Canaries > 0 {
		parts = append(parts, plural(c.Canaries, "canary hit"))
	}
	requests := 0
	for _, r := range rep.Exercise.ClientRequests {
		if r.Call == c.Call {
			requests++
		}
	}
	if requests > 0 {
		parts = append(parts, plural(requests, "client request"))
	}
	if len(parts) == 0 {
		return "nothing seen"
	}
	return strings.Join(parts, ", ")
}

// calls writes the Tool calls section: a table of the calls, what each
// call did as a list under it, and the tools not called.
func (m *mdWriter) calls(rep Report) {
	unmade, show := callsUnmade(rep)
	if !show {
		return
	}
	m.line("## Tool calls")
	m.line("")
	ex := rep.Exercise
	if ex == nil {
		m.line(mdText(unmade))
		m.line("")
		return
	}
	m.line(mdText(callsSummary(ex)))
	m.line("")
	if len(ex.Calls) > 0 {
		m.line("| # | Tool | Outcome | Time | What it did |")
		m.line("|---:|---|---|---:|---|")
		for _, c := range ex.Calls {
			m.line("| " + strconv.Itoa(c.Call) + " | " + mdCode(orDash(c.Tool), true) + " | " + mdCell(outcomeWord(c.Outcome)) + " | " +
				secs(c.DurationMS) + " | " + mdCell(callDid(rep, c)) + " |")
		}
		m.line("")
	}
	for _, c := range ex.Calls {
		details := callDetails(rep, c)
		if len(details) == 0 {
			continue
		}
		m.line("- Call " + strconv.Itoa(c.Call) + ", " + mdCode(orDash(c.Tool), false) + ":")
		for _, d := range details {
			m.line("  - " + mdText(d[0]) + ": " + mdCode(d[1], false))
		}
	}
	for _, r := range outsideRequests(ex) {
		m.line("- Client request outside calls: " + mdCode(clientRequestLine(r), false))
	}
	for _, n := range ex.NotCalled {
		m.line("- Not called: " + mdCode(orDash(n.Tool), false) + ": " + mdText(n.Reason))
	}
	m.line("")
	m.line(mdText(callsCaveat))
	m.line("")
}
