package report

import (
	"fmt"
	"io"
)

// WriteConfigFor writes a config report as WriteConfig does, its table
// wrapped to o.Width (0: DefaultWidth) with a hanging indent, never cut;
// the other formats as WriteConfig writes them.
func WriteConfigFor(w io.Writer, f Format, r ConfigReport, o TableOptions) error {
	if f != FormatTable {
		return WriteConfig(w, f, r)
	}
	t := &table{w: w, width: tableWidth(o.Width)}
	if err := t.configReport(configNonNil(r)); err != nil {
		return fmt.Errorf("report: write config table: %w", err)
	}
	return nil
}
