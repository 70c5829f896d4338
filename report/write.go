package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/verifymcp/verifymcp/rubric"
)

// Format is an output format of a report.
type Format string

// The formats the product knows; formats says which outputs have each.
const (
	FormatTable Format = "table"
	FormatJSON  Format = "json"
	// FormatMarkdown (GitHub-flavoured, for pull requests and issues) and
	// FormatHTML (one self-contained page) are the package report's only.
	FormatMarkdown Format = "markdown"
	FormatHTML     Format = "html"
	// FormatSARIF is SARIF 2.1.0, which the package report (Write,
	// WriteSARIF) and the config report (package report/configreport)
	// have; the other outputs have no SARIF form.
	FormatSARIF Format = "sarif"
)

// An Output is a kind of output, and so the formats it comes in (see
// formats). The values are bits, so that formats can give each format's
// set of outputs; an Output passed to a function is one of them.
type Output uint8

const (
	// OutputOther is every output but the two reports (summaries,
	// listings, pins, the rubric): table or json.
	OutputOther Output = 1 << iota
	// OutputPackageReport is the package report (Write, the --format of
	// scan and score): table, json, markdown, html or sarif.
	OutputPackageReport
	// OutputConfigReport is the config report (configreport.WriteConfig,
	// the --format of config scan): table, json or sarif.
	OutputConfigReport
)

// formats is every format the product knows, in the order an output
// lists its own, the default first, each with the outputs that have it.
var formats = []struct {
	format  Format
	outputs Output
}{
	{FormatTable, OutputOther | OutputPackageReport | OutputConfigReport},
	{FormatJSON, OutputOther | OutputPackageReport | OutputConfigReport},
	{FormatMarkdown, OutputPackageReport},
	{FormatHTML, OutputPackageReport},
	{FormatSARIF, OutputPackageReport | OutputConfigReport},
}

// formatsOf lists the formats of output o, the default first.
func formatsOf(o Output) []Format {
	var fs []Format
	for _, f := range formats {
		if f.outputs&o != 0 {
			fs = append(fs, f.format)
		}
	}
	return fs
}

// ParseFormat checks a format's name against the formats of output o.
// Every command's --format goes through it, so that the formats are named
// in one place. Its error names o's formats (formatNames): "must be table
// or json, not \"xml\"".
func ParseFormat(o Output, s string) (Format, error) {
	for _, f := range formatsOf(o) {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("must be %s, not %q", formatNames(o), s)
}

// formatNames names the formats of output o as its errors always have:
// "table or json", "table, json or sarif"; the package report's by commas
// alone, "table, json, markdown, html, sarif".
func formatNames(o Output) string {
	var names []string
	for _, f := range formatsOf(o) {
		names = append(names, string(f))
	}
	if o == OutputPackageReport || len(names) < 2 {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Write writes the report in format f. SARIF's rules are the catalog of
// the rubric the report was scored under, which must be embedded, and its
// results stand at the package's stand-in path (WriteSARIF with
// DefaultSARIFOptions).
func Write(w io.Writer, f Format, rep Report) error {
	switch f {
	case FormatMarkdown:
		return WriteMarkdown(w, rep)
	case FormatHTML:
		return WriteHTML(w, rep)
	}
	return WriteFormat(f, func() error { return WriteJSON(w, rep) }, func() error { return WriteTable(w, rep) }, func() error {
		r, err := rubric.Load(rep.Rubric.Version)
		if err != nil {
			return fmt.Errorf("report: sarif: %w", err)
		}
		return WriteSARIF(w, rep, r, DefaultSARIFOptions())
	})
}

// write writes in format f: JSON by asJSON, a table by asTable, and any
// other format is an error. Every output of the package goes through it.
func write(w io.Writer, f Format, asJSON, asTable func() error) error {
	return WriteFormat(f, asJSON, asTable, nil)
}

// WriteFormat is write for an output that may also have a SARIF form
// (asSARIF); asSARIF nil means it has none, and sarif is then an error.
// The package report (Write) and the config report
// (configreport.WriteConfig) go through it.
func WriteFormat(f Format, asJSON, asTable, asSARIF func() error) error {
	switch f {
	case FormatJSON:
		return asJSON()
	case FormatTable:
		return asTable()
	case FormatSARIF:
		if asSARIF == nil {
			return fmt.Errorf("report: format sarif is only for config findings (verifymcp config) and package reports; this output is %s", formatNames(OutputOther))
		}
		return asSARIF()
	default:
		_, err := ParseFormat(OutputOther, string(f))
		return fmt.Errorf("report: format %w", err)
	}
}

// indentedJSON writes v as indented JSON, the form of every output but
// the report's own (WriteJSON).
func indentedJSON(w io.Writer, v any) func() error {
	return func() error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
}

// WriteValue writes v in format f: indented JSON, or the table asTable
// draws. The outputs of the commands over many runs (package
// report/batchreport) go through it.
func WriteValue(w io.Writer, f Format, v any, asTable func() error) error {
	return write(w, f, indentedJSON(w, v), asTable)
}
