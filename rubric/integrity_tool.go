package rubric

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/contract/checks"
)

// callInjectionCodes are the codes of the contract checks that read a
// tool's result, or a request the server sent the client, as instructions
// to the model (rubric v13): the ones that tell the model to do harm,
// overriding its instructions, hiding something from the user, reaching
// for secrets, sending data away. Not shadowing or tool order: a result
// is often the server's own usage text ("use the query tool when the user
// asks for logs"), which names tools and says when to call them without
// steering anything (@azure/mcp 2.0.0-beta.13 answers a call it cannot
// serve with its help); not the hidden-character codes (an invisible
// character in returned data is no instruction by itself), not the markup
// tag alone (pkg.contract.injection.tag: a page or document a tool
// returns may hold <system> or <IMPORTANT> without telling the model
// anything), and not the credential, environment, path or configuration
// codes, which read a tool's declared surface, not text.
var callInjectionCodes = map[string]bool{
	checks.CodeInjectionOverride: true, checks.CodeInjectionConceal: true, checks.CodeInjectionSecret: true,
	checks.CodeInjectionExfil: true,
}

// injections runs the pinned contract checks over text as if the server
// had given it as its instructions, on a contract that lists only the
// server's name and its tools' names (so that its own names are known),
// and returns the findings of the injection family of medium severity or
// more on that field.
func (p *probe) injections(text string) []checks.Finding {
	if text == "" {
		return nil
	}
	c := &contract.Contract{Instructions: text}
	if b := p.b.Contract; b != nil {
		c.ServerInfo.Name = b.ServerInfo.Name
		for _, t := range b.Tools {
			c.Tools = append(c.Tools, contract.Tool{Name: t.Name})
		}
	}
	var out []checks.Finding
	for _, f := range checks.Check(c) {
		if f.Kind == checks.KindServer && f.Field == "instructions" && callInjectionCodes[f.Code] &&
			Severity(f.Severity).Rank() >= SeverityMedium.Rank() {
			out = append(out, f)
		}
	}
	return out
}

// missingCredential matches a result that says the call failed for want
// of a key or configuration ("Missing API key. Set OUTLINE_API_KEY in
// ~/.config/mcp-outline/.env"): such a text tells the user where a
// credential goes, which the secret-access check reads as steering the
// model towards credential files (mcp-outline 1.10.1, on every call).
var missingCredential = regexp.MustCompile(`(?i)\b(missing|no|not set|not configured|not provided|required|invalid|unauthori[sz]ed|set)\b[^.\n]{0,60}\b(api[ _-]?key|access[ _-]?key|token|credentials?|secret|[A-Z0-9]+_(API_)?(KEY|TOKEN|SECRET))\b|\b[A-Z][A-Z0-9_]*_(API_KEY|KEY|TOKEN|SECRET)\b[^.\n]{0,40}\b(is )?(missing|not set|required|not configured|not provided)\b`)

// injection returns the most severe finding of injections(text), the
// first of them on a tie. When configFailure, the text is a call's
// failure for want of a credential: the secret-access check, which reads
// where a key goes as steering towards credential files, is not read;
// the others (override, concealment, exfiltration) are.
func (p *probe) injection(text string, configFailure bool) (checks.Finding, bool) {
	fs := p.injections(text)
	if configFailure {
		fs = slices.DeleteFunc(fs, func(f checks.Finding) bool { return f.Code == checks.CodeInjectionSecret })
	}
	if len(fs) == 0 {
		return checks.Finding{}, false
	}
	best := fs[0]
	for _, f := range fs[1:] {
		if Severity(f.Severity).Rank() > Severity(best.Severity).Rank() {
			best = f
		}
	}
	return best, true
}

// emitCallInjections reports the tool results and the server's requests
// to the client that the pinned contract checks read as instructions to
// the model, once per tool (results) and per method and call (requests).
// It returns the deduction (severity_penalties of each finding's catalog
// severity, once per code and subject) and the reason's note. Under a
// rubric whose pinned checks this build does not run, it reads nothing.
func (p *probe) emitCallInjections() (deduct float64, note string) {
	ex, note := p.calls()
	if ex == nil {
		return 0, p.callsNote(ex, note, 0)
	}
	if !p.r.ChecksRunnable() {
		return 0, "; the tool calls' results and requests were not read: this rubric pins contract checks " +
			pinText(p.r) + ", and this build runs checks " + checks.Version + ", so no tool-call injection finding could be raised"
	}
	penalties := p.p.PromptIntegrity.SeverityPenalties
	n := 0
	seen := map[string]bool{}
	emit := func(code, subject, what string, f checks.Finding) {
		if seen[code+"\x00"+subject] {
			return
		}
		seen[code+"\x00"+subject] = true
		n++
		p.emit(code, subject, fmt.Sprintf("%s holds instructions to the model: it %s (%s)", what, meaning(f.Code), f.Code),
			p.clip(f.Code+": "+strconv.Quote(f.Evidence)))
		deduct += penalties[p.def(code).Severity]
	}
	for _, c := range ex.Calls {
		if f, ok := p.injection(c.Result, missingCredential.MatchString(c.Result)); ok {
			emit(CodeToolResultInjection, c.Tool, fmt.Sprintf("the result of tool %q (call %d)", c.Tool, c.Call), f)
		}
	}
	for _, r := range ex.ClientRequests {
		f, ok := p.injection(r.Text, false)
		if !ok {
			continue
		}
		subject, what := r.Method, fmt.Sprintf("the server's %s request, outside any call", r.Method)
		if c, _ := p.callTool(ex, r.Call); c != nil {
			subject = r.Method + " (call " + strconv.Itoa(r.Call) + ")"
			what = fmt.Sprintf("the server's %s request during a call of %q", r.Method, c.Tool)
		}
		emit(CodeToolRequestInjection, subject, what, f)
	}
	note = p.callsNote(ex, "", n)
	if deduct > 0 {
		note += " (-" + formatScore(deduct) + ")"
	}
	return deduct, note
}

func pinText(r *Rubric) string {
	pin, _ := r.ContractChecks()
	return pin.String()
}

// meaning is what a check's code says the text does.
func meaning(code string) string {
	for _, ci := range checks.CheckCodes() {
		if ci.Code == code {
			return ci.Meaning
		}
	}
	return "reads as injected instructions"
}
