package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Format is an output format of a report.
type Format string

// The formats Write supports.
const (
	FormatTable Format = "table"
	FormatJSON  Format = "json"
)

// Formats lists the formats Write supports, the default first.
func Formats() []Format { return []Format{FormatTable, FormatJSON} }

// ParseFormat checks a format's name. Every command's --format goes
// through it, so that the formats are named in one place.
func ParseFormat(s string) (Format, error) {
	var names []string
	for _, f := range Formats() {
		if string(f) == s {
			return f, nil
		}
		names = append(names, string(f))
	}
	return "", fmt.Errorf("must be %s, not %q", strings.Join(names, " or "), s)
}

// Write writes the report in format f.
func Write(w io.Writer, f Format, rep Report) error {
	return write(w, f, func() error { return WriteJSON(w, rep) }, func() error { return WriteTable(w, rep) })
}

// write writes in format f: JSON by asJSON, a table by asTable, and any
// other format is an error. Every output of the package goes through it.
func write(w io.Writer, f Format, asJSON, asTable func() error) error {
	switch f {
	case FormatJSON:
		return asJSON()
	case FormatTable:
		return asTable()
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
