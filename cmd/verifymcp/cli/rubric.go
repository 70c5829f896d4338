package cli

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/verifymcp/verifymcp/judge/checks"
	"github.com/verifymcp/verifymcp/rubric"
)

func newRubricCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rubric",
		Short: "Show the scoring rubric and explain reason codes",
		Long: `The rubric is versioned and embedded in the binary: dimensions with weights and
zero points, and the catalog of reason codes. Every result records the rubric
version and the hash of its file.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newRubricShowCmd(g), newRubricExplainCmd(g))
	return cmd
}

func loadRubric(version string) (*rubric.Rubric, error) {
	if version == "" {
		return rubric.Current(), nil
	}
	r, err := rubric.Load(version)
	if err != nil {
		return nil, usagef("rubric version %q: %v (known: %s)", version, err, strings.Join(rubric.Versions(), ", "))
	}
	return r, nil
}

func newRubricShowCmd(g *globals) *cobra.Command {
	var version, format string
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Print a rubric: dimensions, weights, zero points and reason codes",
		Long: `Print the rubric in force (or --rubric VERSION): each dimension with its weight,
the signals it needs and its zero point (the score it gets when its evidence is
unavailable, errored or missing; a dimension whose evidence was deliberately not
assessed is dropped from the composite instead), then every reason code.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := loadRubric(version)
			if err != nil {
				return err
			}
			switch format {
			case "json":
				enc := json.NewEncoder(g.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(struct {
					Version     string             `json:"version"`
					Hash        string             `json:"hash"`
					Description string             `json:"description"`
					Versions    []string           `json:"versions"`
					Dimensions  []rubric.Dimension `json:"dimensions"`
					Codes       []rubric.CodeDef   `json:"codes"`
					Checks      *rubric.ChecksPin  `json:"contract_checks,omitempty"`
				}{r.Version, r.Hash, r.Description, rubric.Versions(), r.Dimensions, r.Codes, checksPin(r)})
			default:
				if _, err := checkFormat(format); err != nil {
					return err
				}
			}
			w := g.stdout
			fmt.Fprintf(w, "rubric %s  %s  (versions: %s)\n", r.Version, r.Hash, strings.Join(rubric.Versions(), ", "))
			if d := strings.TrimSpace(r.Description); d != "" {
				fmt.Fprintf(w, "%s\n", d)
			}
			if pin := checksPin(r); pin != nil {
				runs := "this build runs them"
				if !r.ChecksRunnable() {
					runs = "this build runs checks " + checks.Version + ": results under this rubric score only findings stored with them"
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
			tw.Flush()
			fmt.Fprintln(w, "\nREASON CODES")
			tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "  code\tkind\tseverity\tdimension")
			for _, c := range r.Codes {
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", c.Code, c.Kind, c.Severity, c.Dimension)
			}
			tw.Flush()
			fmt.Fprintln(w, "\nrun `verifymcp rubric explain CODE` for a code's description and remediation")
			return nil
		},
	}
	cmd.Flags().StringVar(&version, "rubric", "", "rubric version (default: the version in force)")
	cmd.Flags().StringVar(&format, "format", "table", "output format: table or json")
	return cmd
}

func newRubricExplainCmd(g *globals) *cobra.Command {
	var version string
	cmd := &cobra.Command{
		Use:   "explain CODE",
		Short: "Explain one reason code: what it claims, its dimension, and how to fix it",
		Args:  exactArgs(1, "one reason code, e.g. pkg.contract.annotation.contradiction"),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := loadRubric(version)
			if err != nil {
				return err
			}
			code := strings.ToLower(strings.TrimSpace(args[0]))
			c, ok := r.Code(code)
			if !ok {
				var near []string
				for _, d := range r.Codes {
					if strings.HasPrefix(d.Code, code) || strings.Contains(d.Code, code) {
						near = append(near, d.Code)
					}
				}
				sort.Strings(near)
				if len(near) > 0 {
					return usagef("no reason code %q in rubric %s; did you mean: %s", code, r.Version, strings.Join(near, ", "))
				}
				return usagef("no reason code %q in rubric %s (see `verifymcp rubric show`)", code, r.Version)
			}
			w := g.stdout
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
		},
	}
	cmd.Flags().StringVar(&version, "rubric", "", "rubric version (default: the version in force)")
	return cmd
}

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
