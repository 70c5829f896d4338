package report

import (
	"io"

	"github.com/owenrumney/go-sarif/v2/sarif"

	"github.com/verifymcp/verifymcp/rubric"
)

// This file is what the outputs built on this package (the config
// report, package report/configreport) write with, so that their tables
// and SARIF read as this package's own.

// Table writes a text table as this package's tables are written: each
// line wrapped to its width with a hanging indent, never cut, the first
// write error kept (Err).
type Table struct{ t table }

// NewTable is a table written to w, wrapped to width columns; a width of
// 0 wraps nothing (TableWidth gives a person's).
func NewTable(w io.Writer, width int) *Table { return &Table{table{w: w, width: width}} }

// TableWidth is the width a table for a person is wrapped to: o.Width,
// DefaultWidth when it is 0, never less than the fixed columns need.
func TableWidth(o TableOptions) int { return tableWidth(o.Width) }

// Line writes one line, the lines it wraps to indented two columns
// deeper than it.
func (t *Table) Line(s string) { t.t.line(s) }

// Para writes text after lead, the lines it wraps to indented as deep as
// lead.
func (t *Table) Para(lead, text string) { t.t.para(lead, text) }

// Hang writes text after lead, the lines it wraps to indented by indent
// columns.
func (t *Table) Hang(lead, text string, indent int) { t.t.hang(lead, text, indent) }

// Grid writes rows aligned in columns, indented by two spaces, the last
// column wrapped.
func (t *Table) Grid(rows [][]string) { t.t.grid(rows) }

// Gate writes a gate's result (passed says what it covered) and the
// ignore file's effect (ignoredLine when it accepted any finding, and its
// expired entries), when a policy was applied.
func (t *Table) Gate(g Gate, expired []string, passed, ignoredLine string, ignored int) {
	t.t.gateLines(g, expired, passed, ignoredLine, ignored)
}

// Err is the first error writing the table met.
func (t *Table) Err() error { return t.t.err }

// Plural writes a count and a noun, adding an s unless the count is 1.
func Plural(n int, noun string) string { return plural(n, noun) }

// Num writes a number without trailing zeros: 100, 92.3.
func Num(x float64) string { return num(x) }

// YesNo writes a boolean as yes or no.
func YesNo(b bool) string { return yesNo(b) }

// SARIFDriver is the tool component of a SARIF output: the program's name
// (verifymcp when none is given) and version.
func SARIFDriver(name, version string) *sarif.ToolComponent { return sarifDriver(name, version) }

// SARIFConfigRule is the reporting descriptor of one code of the config
// catalog.
func SARIFConfigRule(c rubric.ConfigCode) *sarif.ReportingDescriptor {
	return sarifRule(sarifRuleDef{Code: c.Code, Description: c.Description, Remediation: c.Remediation, Severity: c.Severity})
}

// SARIFLevel is the SARIF level of a severity: critical and high are
// errors, medium a warning, low and info notes.
func SARIFLevel(severity string) string { return sarifLevel(severity) }

// SARIFConfigLocation is where a result in a client configuration file
// stands: the file by its path relative to o.Root when it is in the
// repository, else at its stand-in path under .verifymcp/config/, at
// line (1 at least).
func SARIFConfigLocation(o SARIFOptions, file string, line int) *sarif.Location {
	at, in := inRepo(o.Root, file)
	if !in {
		at = configStandIn(o.Home, file)
	}
	loc := sarif.NewPhysicalLocation().WithArtifactLocation(sarif.NewSimpleArtifactLocation(relativeURI(at))).
		WithRegion(sarif.NewRegion().WithStartLine(max(line, 1)))
	return sarif.NewLocationWithPhysicalLocation(loc)
}

// SARIFSuppression is the suppression of a result an ignore file
// accepted (ig), its result's fingerprint given.
func SARIFSuppression(ig *Ignored, fingerprint, root string) *sarif.Suppression {
	return suppression(ig, fingerprint, root)
}

// EncodeSARIF writes log as indented JSON, characters special in HTML as
// they are.
func EncodeSARIF(w io.Writer, log *sarif.Report) error { return encodeSARIF(w, log) }
