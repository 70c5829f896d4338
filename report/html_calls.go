package report

import (
	"strconv"
	"strings"
)

// The tool calls section's bounds: the runes of a call's arguments and of
// its result shown on the page; the JSON report carries them whole.
const (
	htmlArgsChars   = 400
	htmlResultChars = 2000
)

// htmlCalls is the tool calls section.
type htmlCalls struct {
	Show      bool   // false for evidence from before the exercise
	Unmade    string // the one sentence when no tool was called
	Summary   string
	Calls     []htmlCall
	Outside   []string // client requests outside calls
	NotCalled []htmlNotCalled
	Caveat    string
}

type htmlCall struct {
	Num, Tool, Outcome, Time, Arguments, Error, Result, ResultNote, Did string
	Details                                                             []htmlCallDetail
}

type htmlCallDetail struct {
	Kind, Text string
	Alert      bool
}

type htmlNotCalled struct {
	Tool, Reason string
}

// newHTMLCalls lays out the tool calls: every text the package sent
// (tool names, results, errors, client requests) is cleaned here and
// escaped by the template; results keep their lines.
func newHTMLCalls(rep Report) htmlCalls {
	unmade, show := callsUnmade(rep)
	if !show {
		return htmlCalls{}
	}
	ex := rep.Exercise
	if ex == nil {
		return htmlCalls{Show: true, Unmade: clean(unmade)}
	}
	out := htmlCalls{Show: true, Summary: clean(callsSummary(ex)), Caveat: callsCaveat}
	for _, c := range ex.Calls {
		hc := htmlCall{
			Num: strconv.Itoa(c.Call), Tool: clean(orDash(c.Tool)), Outcome: outcomeWord(c.Outcome),
			Time: secs(c.DurationMS), Arguments: clean(truncate(string(c.Arguments), htmlArgsChars)), Error: clean(c.Error),
			Did: clean(callDid(rep, c)),
		}
		if c.Result != "" {
			hc.Result = cleanLines(truncate(c.Result, htmlResultChars))
		}
		hc.ResultNote = resultNote(c)
		for _, d := range callDetails(rep, c) {
			if d[0] == "error" {
				continue // the error and the result have their own column
			}
			hc.Details = append(hc.Details, htmlCallDetail{Kind: d[0], Text: d[1], Alert: d[0] == "CANARY"})
		}
		out.Calls = append(out.Calls, hc)
	}
	for _, r := range outsideRequests(ex) {
		out.Outside = append(out.Outside, clientRequestLine(r))
	}
	for _, n := range ex.NotCalled {
		out.NotCalled = append(out.NotCalled, htmlNotCalled{Tool: clean(orDash(n.Tool)), Reason: clean(orDash(n.Reason))})
	}
	return out
}

// resultNote says how much of a result there was, and whether the page
// or the sandbox cut it.
func resultNote(c ToolCall) string {
	if c.Result == "" {
		if c.ResultBytes > 0 {
			return plural64(c.ResultBytes, "byte") + ", no text"
		}
		return "no result"
	}
	note := plural64(c.ResultBytes, "byte") + " sent"
	switch {
	case c.ResultTruncated:
		note += ", the start kept by the sandbox"
	case len([]rune(c.Result)) > htmlResultChars:
		note += ", the start shown"
	}
	return note
}

// cleanLines is clean line by line: the line breaks of a result are kept,
// every other control character is shown as an escape.
func cleanLines(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, l := range lines {
		lines[i] = clean(l)
	}
	return strings.Join(lines, "\n")
}

// htmlCallsTemplate is the section, defined as the template "calls" of
// the page.
const htmlCallsTemplate = `{{define "calls"}}
{{- if .Show}}
<section id="calls" aria-labelledby="calls-title">
<h2 id="calls-title">Tool calls</h2>
{{- if .Unmade}}
<p>{{.Unmade}}</p>
{{- else}}
<p>{{.Summary}}</p>
{{- if .Calls}}
<table>
<thead><tr><th scope="col">#</th><th scope="col">Tool</th><th scope="col">Outcome</th><th scope="col">Time</th><th scope="col">Arguments (as sent)</th><th scope="col">Answer</th><th scope="col">What it did</th></tr></thead>
<tbody>
{{- range .Calls}}
<tr><td class="num">{{.Num}}</td><td><code>{{.Tool}}</code></td><td>{{.Outcome}}</td><td class="num">{{.Time}}</td><td><code>{{.Arguments}}</code></td><td>
{{- if .Error}}<p>{{.Error}}</p>{{end}}
{{- if .Result}}<details><summary>{{.ResultNote}}</summary><pre>{{.Result}}</pre></details>{{else}}{{.ResultNote}}{{end}}</td><td>{{.Did}}
{{- if .Details}}
<ul class="lookups">
{{- range .Details}}
<li>{{if .Alert}}<span class="canary-hit">{{.Kind}}</span>{{else}}{{.Kind}}{{end}} <code>{{.Text}}</code></li>
{{- end}}
</ul>
{{- end}}</td></tr>
{{- end}}
</tbody>
</table>
{{- end}}
{{- range .Outside}}
<p>Client request outside calls: <code>{{.}}</code></p>
{{- end}}
{{- if .NotCalled}}
<h3>Not called ({{len .NotCalled}})</h3>
<ul>
{{- range .NotCalled}}
<li><code>{{.Tool}}</code>: {{.Reason}}</li>
{{- end}}
</ul>
{{- end}}
<p>{{.Caveat}}</p>
{{- end}}
</section>
{{- end}}
{{- end}}`
