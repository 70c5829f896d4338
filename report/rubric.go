package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/verifymcp/verifymcp/rubric"
)

// WriteRubric writes a rubric (rubric show): its dimensions with weights,
// signals and zero points, the contract checks it pins, and its reason
// codes; in JSON, the rubric's own model.
func WriteRubric(w io.Writer, f Format, r *rubric.Rubric) error {
	model := struct {
		Version     string             `json:"version"`
		Hash        string             `json:"hash"`
		Description string             `json:"description"`
		Versions    []string           `json:"versions"`
		Dimensions  []rubric.Dimension `json:"dimensions"`
		Codes       []rubric.CodeDef   `json:"codes"`
		Checks      *rubric.ChecksPin  `json:"contract_checks,omitempty"`
	}{r.Version, r.Hash, r.Description, rubric.Versions(), r.Dimensions, r.Codes, checksPin(r)}
	return write(w, f, indentedJSON(w, model), func() error { return writeRubricTable(w, r) })
}

func writeRubricTable(w io.Writer, r *rubric.Rubric) error {
	fmt.Fprintf(w, "rubric %s  %s  (versions: %s)\n", r.Version, r.Hash, strings.Join(rubric.Versions(), ", "))
	if d := strings.TrimSpace(r.Description); d != "" {
		fmt.Fprintf(w, "%s\n", d)
	}
	if pin := checksPin(r); pin != nil {
		runs := "this build runs them"
		if !r.ChecksRunnable() {
			runs = "this build runs checks " + rubric.BuildChecksVersion + ": results under this rubric score only findings stored with them"
		}
		fmt.Fprintf(w, "contract checks %s (%s)\n", pin, runs)
	}
	fmt.Fprintln(w, "\nDIMENSIONS")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  id\tweight\tsignals\tzero point")
	for _, d := range r.Dimensions {
		zp := fmt.Sprintf("%g", d.ZeroPoint)
		if d.ZeroPointReason != "" {
			zp += " (" + d.ZeroPointReason + ")"
		}
		fmt.Fprintf(tw, "  %s\t%g\t%s\t%s\n", d.ID, d.Weight, strings.Join(d.Signals, ","), zp)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nREASON CODES")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  code\tkind\tseverity\tdimension")
	for _, c := range r.Codes {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", c.Code, c.Kind, c.Severity, c.Dimension)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nrun `verifymcp rubric explain CODE` for a code's description and remediation")
	return nil
}

// WriteCode writes what one reason code of r claims, its dimension and its
// remediation (rubric explain).
func WriteCode(w io.Writer, r *rubric.Rubric, c rubric.CodeDef) error {
	fmt.Fprintf(w, "%s\n\n", c.Code)
	fmt.Fprintf(w, "kind:        %s\n", c.Kind)
	fmt.Fprintf(w, "severity:    %s\n", c.Severity)
	if d, ok := r.Dimension(c.Dimension); ok {
		fmt.Fprintf(w, "dimension:   %s (weight %g)\n", d.ID, d.Weight)
	} else {
		fmt.Fprintf(w, "dimension:   %s\n", c.Dimension)
	}
	fmt.Fprintf(w, "rubric:      %s (%s)\n\n", r.Version, r.Hash)
	fmt.Fprintf(w, "What it means:\n  %s\n\n", wrapIndent(c.Description))
	fmt.Fprintf(w, "Remediation:\n  %s\n", wrapIndent(c.Remediation))
	if c.Kind == rubric.KindMeasurement {
		fmt.Fprintln(w, "\nThis is a measurement: it fires whenever the quantity was measured, whatever its value; benchmark cases match it by code, not by value.")
	}
	return nil
}

// wrapIndent wraps s at 76 columns, indenting the lines after the first.
func wrapIndent(s string) string {
	words := strings.Fields(s)
	var b strings.Builder
	n := 0
	for _, w := range words {
		if n > 0 && n+len(w) > 76 {
			b.WriteString("\n  ")
			n = 0
		} else if n > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}

// checksPin is the contract checks r pins, or nil for a rubric without
// prompt_contract_integrity.
func checksPin(r *rubric.Rubric) *rubric.ChecksPin {
	if pin, ok := r.ContractChecks(); ok {
		return &pin
	}
	return nil
}
