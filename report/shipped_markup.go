package report

import "strings"

// release writes the Release section of a release that ran as shipped:
// its facts as a list, each label capitalised in bold and each value
// escaped (an image's command and a bundle's manifest are the package's
// text); what a reader must not miss is in capitals in the text itself.
// An installed release has none.
func (m *mdWriter) release(rep Report) {
	sh := rep.Shipped
	if sh == nil {
		return
	}
	m.line("## Release")
	m.line("")
	m.line(mdText(shippedSentence(sh)))
	m.line("")
	for _, r := range shippedRows(sh) {
		m.line("- **" + mdText(strings.ToUpper(r.Label[:1])+r.Label[1:]) + ":** " + mdText(r.Text))
	}
	m.line("")
}
