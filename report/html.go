package report

import (
	"bufio"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"

	"github.com/verifymcp/verifymcp/rubric"
)

// WriteHTML writes the report as one self-contained HTML page: the
// headline and sections of WriteMarkdown (each finding with how to fix
// it), what the package did on the network per destination (with the
// canaries found in what it sent there), and a bar chart of the
// dimensions drawn as inline SVG. The page loads nothing (no stylesheet, script, font or
// image), has no script at all, and its Content-Security-Policy allows
// only its own stylesheet, by hash, so that nothing else could run or
// load even if it were there. Text that came from the package is escaped
// by html/template, with control and bidirectional-formatting characters
// shown as escapes, as in the table.
func WriteHTML(w io.Writer, rep Report) error {
	bw := bufio.NewWriter(w)
	if err := htmlPage.Execute(bw, newHTMLView(rep)); err != nil {
		return fmt.Errorf("report: write html: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("report: write html: %w", err)
	}
	return nil
}

// htmlCSS is the page's only stylesheet; the policy names its hash.
const htmlCSS = `
:root{color-scheme:light;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#fff;--soft:#f6f8fa;
--scored:#0969da;--zero:#cf222e;--dropped:#818b98;--critical:#82071e;--high:#cf222e;--medium:#bc4c00;--low:#9a6700;--info:#59636e}
*{box-sizing:border-box}
body{margin:0 auto;max-width:72rem;padding:1.5rem;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Liberation Sans",sans-serif;color:var(--fg);background:var(--bg)}
code,pre{font-family:ui-monospace,"SFMono-Regular","Liberation Mono",Menlo,monospace;font-size:.9em}
code{background:var(--soft);padding:.05em .3em;border-radius:4px;overflow-wrap:anywhere}
pre{background:var(--soft);padding:.6rem .8rem;border-radius:6px;white-space:pre-wrap;overflow-wrap:anywhere;margin:.3rem 0 0}
h1{font-size:1.6rem;margin:0 0 .3rem;overflow-wrap:anywhere}
h2{font-size:1.25rem;border-bottom:1px solid var(--line);padding-bottom:.2rem;margin-top:2rem}
h3{font-size:1.05rem;margin:1.2rem 0 .4rem}
.meta{color:var(--muted);margin:.2rem 0;overflow-wrap:anywhere}
dl.summary{display:grid;grid-template-columns:max-content 1fr;gap:.35rem 1rem;margin:0}
dl.summary dt{font-weight:600}
dl.summary dd{margin:0;overflow-wrap:anywhere}
ul.inline{list-style:none;padding:0;margin:.2rem 0 0;display:flex;flex-wrap:wrap;gap:.3rem .9rem}
.gate-failed{color:var(--zero);font-weight:600}
.headline{font-size:1.1rem;font-weight:600;margin:.5rem 0 0;overflow-wrap:anywhere}
.finding p.fix .label{font-weight:600}
.finding{border:1px solid var(--line);border-left-width:4px;border-radius:6px;padding:.5rem .8rem;margin:.5rem 0}
.finding p{margin:.2rem 0;overflow-wrap:anywhere}
.finding .head{font-weight:600}
.sev-critical{border-left-color:var(--critical)}.sev-high{border-left-color:var(--high)}.sev-medium{border-left-color:var(--medium)}
.sev-low{border-left-color:var(--low)}.sev-info,.sev-other{border-left-color:var(--info)}
.finding.ignored{opacity:.75;border-style:dashed}
.badge{display:inline-block;font-size:.8em;font-weight:600;padding:0 .4em;border-radius:4px;border:1px solid currentColor;margin-left:.4em}
details summary{cursor:pointer;color:var(--muted)}
table{border-collapse:collapse;width:100%;margin:.6rem 0}
th,td{border:1px solid var(--line);padding:.25rem .5rem;text-align:left;vertical-align:top;overflow-wrap:break-word}
th{background:var(--soft);white-space:nowrap}
td.num{text-align:right;white-space:nowrap}
.st-zero_point td.state{color:var(--zero);font-weight:600}
.st-dropped td{color:var(--muted)}
figure{margin:.8rem 0}
figcaption{color:var(--muted);font-size:.9em}
svg.chart{width:100%;height:auto;max-width:56rem;display:block}
svg.chart text{font:12px system-ui,-apple-system,"Segoe UI",Roboto,"Liberation Sans",sans-serif;fill:var(--fg)}
svg.chart text.muted{fill:var(--muted)}
svg.chart .grid{stroke:var(--line);stroke-width:1}
svg.chart .track{fill:var(--soft);stroke:var(--line)}
svg.chart .bar-scored{fill:var(--scored)}
svg.chart .bar-zero_point{fill:var(--zero)}
svg.chart .bar-other{fill:var(--muted)}
svg.chart .track-zero_point{fill:#ffebe9;stroke:var(--zero)}
svg.chart .track-dropped{fill:none;stroke:var(--dropped);stroke-dasharray:4 3}
svg.chart text.zero{fill:var(--zero);font-weight:600}
svg.chart text.dropped{fill:var(--dropped);font-style:italic}
.dest{border:1px solid var(--line);border-radius:6px;padding:.5rem .8rem;margin:.5rem 0}
.dest.canary{border-left:4px solid var(--critical)}
.dest p{margin:.2rem 0;overflow-wrap:anywhere}
.dest .head{font-weight:600}
.canary-hit{color:var(--critical);font-weight:600}
.secret-sent{color:var(--medium);font-weight:600}
td.tls-refused{color:var(--zero);font-weight:600}
td.tls-unread{color:var(--muted)}
ul.lookups{padding-left:1.2rem;margin:.3rem 0}
footer{margin-top:2rem;color:var(--muted)}
`

// htmlPolicy forbids everything but the page's own stylesheet: no script,
// no loads of any kind, no forms, no base URL.
var htmlPolicy = "default-src 'none'; script-src 'none'; style-src '" + cssHash() + "'; img-src 'none'; font-src 'none'; " +
	"connect-src 'none'; object-src 'none'; frame-src 'none'; base-uri 'none'; form-action 'none'"

func cssHash() string {
	sum := sha256.Sum256([]byte(htmlCSS))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

// The chart's geometry, in SVG user units.
const (
	chartWidth  = 820
	chartLabelX = 4
	chartBarX   = 190 // where a score of 0 is
	chartBarW   = 360 // the width of a score of 100
	chartValueX = chartBarX + chartBarW + 12
	chartTop    = 28
	chartRow    = 26
	chartBarH   = 14
)

type htmlView struct {
	CSS        template.CSS
	Headline   string
	Target     string
	Requested  string
	Run        string
	Recollect  string
	Outcome    string
	Gate       string
	GateResult string
	Tripped    []string
	Findings   string
	Counts     []htmlCount
	Expired    []string
	Score      string
	NoSignals  bool
	Unobserved []string
	Total      int
	Groups     []htmlGroup
	Chart      htmlChart
	Dimensions []htmlDimension
	Signals    []htmlSignal
	Net        htmlNetwork
	Calls      htmlCalls
	Shipped    htmlShipped
	Notice     string
}

type htmlCount struct {
	Severity, Class string
	N               int
}

type htmlGroup struct {
	Title, Class string
	Findings     []htmlFinding
}

type htmlFinding struct {
	Code, Subject, Value, Message, Remediation, Evidence, Ignored string
}

type htmlDimension struct {
	ID, Weight, State, Class, Score, Reason string
}

type htmlSignal struct {
	Name, State, Class, Source, Endpoint, Fetched, Reason string
}

type htmlChart struct {
	Width, Height, Bottom int
	Desc                  string
	Ticks                 []htmlTick
	Rows                  []htmlBar
	Legend                int // the legend's y
}

type htmlTick struct {
	X     float64
	Label string
}

type htmlBar struct {
	Title, Label, Class, Value, ValueClass string
	Y, TextY                               int
	W                                      float64
	Track                                  string // the track's class
	Note                                   string // written over a dropped dimension's track
	NoteX                                  int
}

func newHTMLView(rep Report) htmlView {
	s := rep.Summary
	v := htmlView{
		CSS:      template.CSS(htmlCSS),
		Headline: clean(headline(rep)),
		Target:   clean(releaseName(rep)),
		Outcome:  clean(orDash(s.Outcome)),
		Gate:     clean(gateSentence(s.Gate)),
		Findings: clean(findingsSentence(rep)),
		Score:    clean(scoreSentence(rep)),
		Total:    len(rep.Findings),
		Notice:   clean(rep.Notice),
	}
	if tg := rep.Target; tg.Requested != "" && tg.Requested != releaseName(rep) {
		v.Requested = clean(tg.Requested)
	}
	v.Run = "Run " + clean(orDash(rep.Run.ID)) + " on " + clean(rep.Run.Date) + " by " + clean(strings.TrimSpace(rep.Tool.Name+" "+rep.Tool.Version)) +
		", rubric v" + clean(rep.Rubric.Version) + " (" + clean(orDash(rep.Rubric.Hash)) + ")"
	if img := imageRef(rep.Sandbox); img != "" {
		v.Run += ", sandbox image " + clean(img)
	}
	v.Run += "."
	if rc := rep.Run.Recollected; rc != nil {
		v.Recollect = clean("Recollected " + strings.Join(rc.Signals, ", ") + " at " + rc.At + " by verifymcp " + rc.ToolVersion +
			"; the rest carried over from run " + rc.From + ".")
	}
	switch s.Gate.Result {
	case GateFailed, GatePassed:
		v.GateResult = s.Gate.Result
	}
	for _, t := range s.Gate.Tripped {
		v.Tripped = append(v.Tripped, clean(t))
	}
	for _, sev := range severityOrder(s.Findings) {
		v.Counts = append(v.Counts, htmlCount{Severity: clean(sev), Class: severityClass(sev), N: s.Findings[sev]})
	}
	for _, e := range s.Expired {
		v.Expired = append(v.Expired, clean(e))
	}
	v.NoSignals = len(s.NotObserved) == 0
	for _, n := range s.NotObserved {
		v.Unobserved = append(v.Unobserved, clean(n))
	}
	for _, g := range findingGroups(rep.Findings) {
		hg := htmlGroup{Title: clean(severityTitle(g.Severity)), Class: severityClass(g.Severity)}
		for _, f := range g.Findings {
			hf := htmlFinding{Code: clean(f.Code), Subject: clean(f.Subject), Message: clean(f.Message), Remediation: clean(f.Remediation)}
			if f.Value != nil {
				hf.Value = num(*f.Value)
			} else {
				hf.Evidence = clean(f.Evidence)
			}
			if f.Ignored != nil {
				hf.Ignored = clean(ignoredSentence(f.Ignored))
			}
			hg.Findings = append(hg.Findings, hf)
		}
		v.Groups = append(v.Groups, hg)
	}
	for _, d := range rep.Dimensions {
		v.Dimensions = append(v.Dimensions, htmlDimension{ID: clean(d.ID), Weight: num(d.Weight), State: clean(d.State),
			Class: stateClass(d.State), Score: clean(dimensionScore(d)), Reason: clean(d.Reason)})
	}
	v.Chart = newChart(rep.Dimensions)
	v.Net = newHTMLNetwork(rep)
	v.Calls = newHTMLCalls(rep)
	v.Shipped = newHTMLShipped(rep)
	for _, name := range sortedKeys(rep.Signals) {
		sg := rep.Signals[name]
		class := "observed"
		if sg.State != "observed" {
			class = "not-observed"
		}
		v.Signals = append(v.Signals, htmlSignal{Name: clean(name), State: clean(sg.State), Class: class, Source: signalSource(sg),
			Endpoint: clean(orDash(sg.Endpoint)), Fetched: clean(signalFetched(sg)), Reason: clean(sg.Reason)})
	}
	return v
}

// newChart lays out one bar per dimension: a scored dimension's bar is
// its score, a zero point's is an empty track outlined in red with its 0
// written out, and a dropped dimension has a dashed, empty track marked
// "not counted", since it is out of the composite's denominator.
func newChart(dims []Dimension) htmlChart {
	c := htmlChart{Width: chartWidth}
	for _, t := range []int{0, 25, 50, 75, 100} {
		c.Ticks = append(c.Ticks, htmlTick{X: chartBarX + float64(t)*chartBarW/100, Label: strconv.Itoa(t)})
	}
	var scored, zero, dropped int
	for i, d := range dims {
		y := chartTop + i*chartRow
		b := htmlBar{Label: clean(d.ID), Y: y, TextY: y + chartBarH - 3, Class: stateClass(d.State), Track: "track"}
		weight := "weight " + num(d.Weight)
		switch d.State {
		case string(rubric.StateScored):
			scored++
			b.W = barWidth(d.Score)
			b.Value = num(*d.Score) + " · " + weight
			b.Title = clean(d.ID) + ": scored " + num(*d.Score) + " of 100, " + weight
		case string(rubric.StateZeroPoint):
			zero++
			b.W = barWidth(d.Score)
			b.Track = "track track-zero_point"
			b.Value = dimensionScore(d) + " · zero point · " + weight
			b.ValueClass = "zero"
			b.Title = clean(d.ID) + ": zero point, " + dimensionScore(d) + " of 100 (evidence not observed), " + weight
		case string(rubric.StateDropped):
			dropped++
			b.Track = "track-dropped"
			b.Note, b.NoteX = "dropped: not counted", chartBarX+chartBarW/2
			b.Value = "not counted · " + weight
			b.ValueClass = "dropped"
			b.Title = clean(d.ID) + ": dropped (not assessed), not counted in the score, " + weight
		default:
			b.Class = "other"
			b.W = barWidth(d.Score)
			b.Value = dimensionScore(d) + " · " + clean(d.State) + " · " + weight
			b.Title = clean(d.ID) + ": " + clean(d.State) + ", " + dimensionScore(d) + ", " + weight
		}
		c.Rows = append(c.Rows, b)
	}
	c.Bottom = chartTop + len(dims)*chartRow
	c.Legend = c.Bottom + 18
	c.Height = c.Legend + 14
	c.Desc = fmt.Sprintf("One bar per rubric dimension (%d), its score from 0 to 100 and its weight: %d scored from evidence, %d at zero point "+
		"(evidence not observed, scored 0 unless the rubric says otherwise), %d dropped (not assessed, not counted in the score). "+
		"The table below lists the same figures.", len(dims), scored, zero, dropped)
	return c
}

func barWidth(score *float64) float64 {
	if score == nil {
		return 0
	}
	x := max(0, min(100, *score))
	return float64(int(x*chartBarW/100*10+0.5)) / 10
}

// stateClass names a dimension state's CSS class; a state no rubric
// defines gets "other".
func stateClass(s string) string {
	switch s {
	case string(rubric.StateScored), string(rubric.StateZeroPoint), string(rubric.StateDropped):
		return s
	}
	return "other"
}

func severityClass(s string) string {
	for _, sev := range rubric.Severities() {
		if string(sev) == s {
			return s
		}
	}
	return "other"
}

var htmlPage = template.Must(template.Must(template.Must(template.New("report").Parse(htmlCallsTemplate)).Parse(htmlShippedTemplate)).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="` + htmlPolicy + `">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>verifymcp report: {{.Target}}</title>
<style>{{.CSS}}</style>
</head>
<body>
<header>
<h1>verifymcp report: <code>{{.Target}}</code></h1>
{{- if .Requested}}
<p class="meta">Requested as <code>{{.Requested}}</code>.</p>
{{- end}}
<p class="meta">{{.Run}}</p>
{{- if .Recollect}}
<p class="meta">{{.Recollect}}</p>
{{- end}}
<p class="headline{{if .GateResult}} gate-{{.GateResult}}{{end}}">{{.Headline}}</p>
</header>
<main>
<section id="summary" aria-labelledby="summary-title">
<h2 id="summary-title">Summary</h2>
<dl class="summary">
<dt>Outcome</dt><dd>{{.Outcome}}</dd>
{{- if .Gate}}
<dt>Gate</dt><dd><span class="gate-{{.GateResult}}">{{.Gate}}</span>
{{- if .Tripped}}
<ul class="inline">
{{- range .Tripped}}
<li><code>{{.}}</code></li>
{{- end}}
</ul>
{{- end}}
</dd>
{{- end}}
<dt>Findings</dt><dd>{{.Findings}}
<ul class="inline">
{{- range .Counts}}
<li class="count-{{.Class}}">{{.Severity}}: {{.N}}</li>
{{- end}}
</ul>
</dd>
{{- range .Expired}}
<dt>Ignore entry expired</dt><dd>{{.}}</dd>
{{- end}}
<dt>Score</dt><dd>{{.Score}}</dd>
<dt>Signals not observed</dt><dd>
{{- if .NoSignals}}none; every signal was observed{{else}}
<ul class="inline">
{{- range .Unobserved}}
<li><code>{{.}}</code></li>
{{- end}}
</ul>
What these would have found is unknown, not clean.
{{- end}}</dd>
</dl>
</section>
<section id="findings" aria-labelledby="findings-title">
<h2 id="findings-title">Findings ({{.Total}})</h2>
{{- if not .Groups}}
<p>None in the checks that ran; see Signals for the checks that did not.</p>
{{- end}}
{{- range .Groups}}
<h3>{{.Title}} ({{len .Findings}})</h3>
{{- $class := .Class}}
{{- range .Findings}}
<article class="finding sev-{{$class}}{{if .Ignored}} ignored{{end}}">
<p class="head"><code>{{.Code}}</code>{{if .Subject}} on <code>{{.Subject}}</code>{{end}}{{if .Value}} = {{.Value}}{{end}}
{{- if .Ignored}}<span class="badge">ignored</span>{{end}}</p>
{{- if .Ignored}}
<p class="meta">Ignored {{.Ignored}}</p>
{{- end}}
<p>{{.Message}}</p>
{{- if .Remediation}}
<p class="fix"><span class="label">How to fix:</span> {{.Remediation}}</p>
{{- end}}
{{- if .Evidence}}
<details><summary>Evidence</summary><pre>{{.Evidence}}</pre></details>
{{- end}}
</article>
{{- end}}
{{- end}}
</section>
<section id="network" aria-labelledby="network-title">
<h2 id="network-title">Network</h2>
{{- with .Net}}
{{- if .Unwatched}}
<p>{{.Unwatched}}</p>
{{- else}}
{{- if or .Dests .Lookups}}
<p>{{.Summary}}</p>
{{- else}}
<p>No network attempt was seen while the phases were watched.</p>
{{- end}}
{{- range .Notes}}
<p class="meta">{{.}}</p>
{{- end}}
{{- range .Dests}}
<article class="dest{{if .Hits}} canary{{end}}">
<p class="head"><code>{{.Name}}</code>{{if .LiteralIP}}<span class="badge">literal IP</span>{{end}}{{if .Hits}}<span class="badge canary-hit">canary sent</span>{{end}}</p>
<p class="meta">Phase {{.Phases}}{{if .Stages}}; stage {{.Stages}}{{end}}; {{.Sent}}{{if .Via}}; {{.Via}}{{end}}.</p>
{{- if .Hits}}
<p>Canaries found in what was sent here (the evidence names the destination, not the request):</p>
<ul>
{{- range .Hits}}
<li><span class="canary-hit">CANARY</span> <code>{{.Kind}}</code> (planted at <code>{{.Where}}</code>) in <code>{{.Channel}}</code>, encoded <code>{{.Encoding}}</code>, in the {{.Phase}} phase: <code>{{.Masked}}</code></li>
{{- end}}
</ul>
{{- end}}
<table>
<thead><tr><th scope="col">Time</th><th scope="col">Stage</th><th scope="col">Process</th><th scope="col">Read as</th><th scope="col">Request</th><th scope="col">Bytes</th><th scope="col">Sent (start, secrets masked)</th></tr></thead>
<tbody>
{{- range .Requests}}
<tr><td>{{.Time}}</td><td>{{.Stage}}</td><td>{{.Process}}</td><td class="{{.Class}}">{{.Transport}}</td><td><code>{{.Request}}</code></td><td class="num">{{.Bytes}}</td><td>{{if .Secrets}}<span class="secret-sent">{{.Secrets}}</span> {{end}}{{if .Recipients}}<span class="secret-sent">{{.Recipients}}</span> {{end}}{{if .Preview}}<code>{{.Preview}}</code>{{end}}</td></tr>
{{- end}}
</tbody>
</table>
{{- if .Left}}
<p class="meta">{{.Left}}</p>
{{- end}}
{{- if .Refused}}
<p class="meta">TLS REFUSED: the client did not trust the run's CA, so only the server name is known, not what it sent; by itself this is not a finding.</p>
{{- end}}
</article>
{{- end}}
{{- if .DestsLeft}}
<p class="meta">{{.DestsLeft}}</p>
{{- end}}
{{- if .Lookups}}
<h3>Names looked up ({{.Names}})</h3>
<ul class="lookups">
{{- range .Lookups}}
<li><code>{{.Name}}</code>{{if .Types}} {{.Types}}{{end}}, phase {{.Phases}}{{if gt .Count 1}}, {{.Count}} lookups{{end}}
{{- range .Hits}}; <span class="canary-hit">CANARY</span> <code>{{.Kind}}</code> (planted at <code>{{.Where}}</code>) in <code>{{.Channel}}</code>, encoded <code>{{.Encoding}}</code>: <code>{{.Masked}}</code>{{end}}</li>
{{- end}}
</ul>
{{- if .LookupsLeft}}
<p class="meta">{{.LookupsLeft}}</p>
{{- end}}
{{- end}}
{{- if .Stray}}
<h3>Canaries sent to a destination not listed above ({{len .Stray}})</h3>
<ul>
{{- range .Stray}}
<li><span class="canary-hit">CANARY</span> <code>{{.Kind}}</code> (planted at <code>{{.Where}}</code>) in <code>{{.Channel}}</code>, encoded <code>{{.Encoding}}</code>, to <code>{{.Destination}}</code>, in the {{.Phase}} phase: <code>{{.Masked}}</code></li>
{{- end}}
</ul>
{{- end}}
<p>Only what was seen in the watched time is listed: what the package does later, or when it detects the sandbox, was not observed.</p>
{{- end}}
{{- end}}
</section>
{{- template "calls" .Calls}}
{{- template "shipped" .Shipped}}
<section id="dimensions" aria-labelledby="dimensions-title">
<h2 id="dimensions-title">Dimensions</h2>
{{- if .Chart.Rows}}{{with .Chart}}
<figure>
<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {{.Width}} {{.Height}}" role="img" aria-labelledby="chart-title chart-desc">
<title id="chart-title">Score of each rubric dimension, 0 to 100</title>
<desc id="chart-desc">{{.Desc}}</desc>
{{- $bottom := .Bottom}}
{{- range .Ticks}}
<line class="grid" x1="{{.X}}" y1="16" x2="{{.X}}" y2="{{$bottom}}"/>
<text class="muted" x="{{.X}}" y="12" text-anchor="middle">{{.Label}}</text>
{{- end}}
{{- range .Rows}}
<g class="dim st-{{.Class}}">
<title>{{.Title}}</title>
<text x="` + strconv.Itoa(chartLabelX) + `" y="{{.TextY}}">{{.Label}}</text>
<rect class="{{.Track}}" x="` + strconv.Itoa(chartBarX) + `" y="{{.Y}}" width="` + strconv.Itoa(chartBarW) + `" height="` + strconv.Itoa(chartBarH) + `" rx="2"/>
{{- if .W}}
<rect class="bar-{{.Class}}" x="` + strconv.Itoa(chartBarX) + `" y="{{.Y}}" width="{{.W}}" height="` + strconv.Itoa(chartBarH) + `" rx="2"/>
{{- end}}
{{- if .Note}}
<text class="dropped" x="{{.NoteX}}" y="{{.TextY}}" text-anchor="middle">{{.Note}}</text>
{{- end}}
<text{{if .ValueClass}} class="{{.ValueClass}}"{{end}} x="` + strconv.Itoa(chartValueX) + `" y="{{.TextY}}">{{.Value}}</text>
</g>
{{- end}}
<g class="legend">
<rect class="bar-scored" x="` + strconv.Itoa(chartBarX) + `" y="{{.Legend}}" width="12" height="10"/>
<text x="` + strconv.Itoa(chartBarX+16) + `" y="{{.Legend}}" dy="9">scored</text>
<rect class="track track-zero_point" x="` + strconv.Itoa(chartBarX+80) + `" y="{{.Legend}}" width="12" height="10"/>
<text x="` + strconv.Itoa(chartBarX+96) + `" y="{{.Legend}}" dy="9">zero point (not observed)</text>
<rect class="track-dropped" x="` + strconv.Itoa(chartBarX+260) + `" y="{{.Legend}}" width="12" height="10"/>
<text x="` + strconv.Itoa(chartBarX+276) + `" y="{{.Legend}}" dy="9">dropped (not counted)</text>
</g>
</svg>
<figcaption>{{.Desc}}</figcaption>
</figure>
{{- end}}{{end}}
{{- if .Dimensions}}
<table>
<thead><tr><th scope="col">Dimension</th><th scope="col">Weight</th><th scope="col">State</th><th scope="col">Score</th><th scope="col">Reason</th></tr></thead>
<tbody>
{{- range .Dimensions}}
<tr class="st-{{.Class}}"><th scope="row">{{.ID}}</th><td class="num">{{.Weight}}</td><td class="state">{{.State}}</td><td class="num">{{.Score}}</td><td>{{.Reason}}</td></tr>
{{- end}}
</tbody>
</table>
{{- else}}
<p>The rubric has no dimensions.</p>
{{- end}}
</section>
<section id="signals" aria-labelledby="signals-title">
<h2 id="signals-title">Signals</h2>
{{- if .Signals}}
<table>
<thead><tr><th scope="col">Signal</th><th scope="col">State</th><th scope="col">Source</th><th scope="col">Endpoint</th><th scope="col">Fetched</th><th scope="col">Reason</th></tr></thead>
<tbody>
{{- range .Signals}}
<tr class="{{.Class}}"><th scope="row">{{.Name}}</th><td>{{.State}}</td><td>{{.Source}}</td><td>{{.Endpoint}}</td><td>{{.Fetched}}</td><td>{{.Reason}}</td></tr>
{{- end}}
</tbody>
</table>
<p>A signal that is not observed was not checked: what it would have found is unknown, not clean.</p>
{{- else}}
<p>No signals were recorded.</p>
{{- end}}
</section>
</main>
<footer id="notice" aria-labelledby="notice-title">
<h2 id="notice-title">Notice</h2>
<p>{{.Notice}}</p>
</footer>
</body>
</html>
`))
