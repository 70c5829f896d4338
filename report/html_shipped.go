package report

// htmlShipped is the release section: nil rows for an installed release,
// which has none.
type htmlShipped struct {
	Head string
	Rows []htmlShippedRow
}

type htmlShippedRow struct {
	Label, Text string
	Alert       bool
}

// newHTMLShipped lays out a release that ran as shipped: every text the
// release declared (its command, labels, manifest, signer) is cleaned
// here and escaped by the template.
func newHTMLShipped(rep Report) htmlShipped {
	sh := rep.Shipped
	if sh == nil {
		return htmlShipped{}
	}
	out := htmlShipped{Head: clean(shippedSentence(sh))}
	for _, r := range shippedRows(sh) {
		out.Rows = append(out.Rows, htmlShippedRow{Label: r.Label, Text: clean(r.Text), Alert: r.Alert})
	}
	return out
}

// htmlShippedTemplate is the section, defined as the template "shipped"
// of the page.
const htmlShippedTemplate = `{{define "shipped"}}
{{- if .Rows}}
<section id="release" aria-labelledby="release-title">
<h2 id="release-title">Release</h2>
<p>{{.Head}}</p>
<dl class="summary">
{{- range .Rows}}
<dt>{{.Label}}</dt><dd>{{if .Alert}}<strong>{{.Text}}</strong>{{else}}{{.Text}}{{end}}</dd>
{{- end}}
</dl>
</section>
{{- end}}
{{- end}}`
