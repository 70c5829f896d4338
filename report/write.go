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

// The formats Write supports.
const (
	FormatTable Format = "table"
	FormatJSON  Format = "json"
	// FormatSARIF is SARIF 2.1.0, which the config report (see
	// configreport.ParseConfigFormat) and the package report (Write,
	// WriteSARIF) have;
	// it is not in Formats, since the other outputs have no SARIF form.
	FormatSARIF Format = "sarif"
	// FormatMarkdown (GitHub-flavoured, for pull requests and issues) and
	// FormatHTML (one self-contained page) are the package report's only
	// (Write); they are not in Formats.
	FormatMarkdown Format = "markdown"
	FormatHTML     Format = "html"
)

// ReportFormats lists the formats of the package report (Write, the scan
// command's --format), the default first.
func ReportFormats() []Format {
	return []Format{FormatTable, FormatJSON, FormatMarkdown, FormatHTML, FormatSARIF}
}

// Formats lists the formats Write supports, the default first.
func Formats() []Format { return []Format{FormatTable, FormatJSON} }

// ParseFormat checks a format's name. Every command's --format goes
// through it, so that the formats are named in one place.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats() {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("must be %s, not %q", formatNames(), s)
}

// formatNames names the formats of Formats: "table or json".
func formatNames() string {
	var names []string
	for _, f := range Formats() {
		names = append(names, string(f))
	}
	return strings.Join(names, " or ")
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
	return writeFormats(f, func() error { return WriteJSON(w, rep) }, func() error { return WriteTable(w, rep) }, func() error {
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
	return writeFormats(f, asJSON, asTable, nil)
}

// writeFormats is write for an output that may also have a SARIF form
// (asSARIF); asSARIF nil means it has none, and sarif is then an error.
func writeFormats(f Format, asJSON, asTable, asSARIF func() error) error {
	switch f {
	case FormatJSON:
		return asJSON()
	case FormatTable:
		return asTable()
	case FormatSARIF:
		if asSARIF == nil {
			return fmt.Errorf("report: format sarif is only for config findings (verifymcp config) and package reports; this output is %s", formatNames())
		}
		return asSARIF()
	default:
		_, err := ParseFormat(string(f))
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
