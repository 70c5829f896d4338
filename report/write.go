package report

import (
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
	switch f {
	case FormatJSON:
		return WriteJSON(w, rep)
	case FormatTable:
		return WriteTable(w, rep)
	default:
		_, err := ParseFormat(string(f))
		return fmt.Errorf("report: format %w", err)
	}
}
