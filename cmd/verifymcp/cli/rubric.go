package cli

import (
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/verifymcp/verifymcp/report"
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
			f, err := checkFormat(report.OutputOther, format)
			if err != nil {
				return err
			}
			return report.WriteRubric(g.stdout, f, r)
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
			return report.WriteCode(g.stdout, r, c)
		},
	}
	cmd.Flags().StringVar(&version, "rubric", "", "rubric version (default: the version in force)")
	return cmd
}
