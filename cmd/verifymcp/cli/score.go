package cli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/report"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/store"
)

func newScoreCmd(g *globals) *cobra.Command {
	var format, output, version string
	var gf gateFlags
	cmd := &cobra.Command{
		Use:   "score BUNDLE.json|RUN_ID",
		Short: "Re-score a stored evidence bundle under a rubric, with no engine and no network",
		Long: `Score an evidence bundle again. Scoring is a pure function of the evidence and
the rubric, so with the same rubric this prints exactly what the scan printed;
with --rubric it shows the same evidence under another rubric version.

The argument is a bundle file (scan saves one as <data-dir>/bundles/<run-id>.json)
or a run id from the store.

` + exitCodesHelp,
		Args: exactArgs(1, "a bundle file or a run id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			rf, err := checkFormat(report.OutputPackageReport, format)
			if err != nil {
				return err
			}
			pol, err := g.policy(&gf)
			if err != nil {
				return err
			}
			rb := rubric.Current()
			if version != "" {
				if rb, err = rubric.Load(version); err != nil {
					return usagef("--rubric: %v (known: %v)", err, rubric.Versions())
				}
			}
			data, err := g.loadBundle(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			b, err := evidence.Decode(data)
			if err != nil {
				return usagef("%s: %v", args[0], err)
			}
			rep := report.Build(b, rb, rubric.Evaluate(b, rb))
			gateErr := gate(pol, &rep)
			if err := g.writeReport(rep, rf, output, report.DefaultSARIFOptions()); err != nil {
				return err
			}
			return gateErr
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "report format: table, json, markdown, html or sarif")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write the report to this file instead of stdout")
	cmd.Flags().StringVar(&version, "rubric", "", "rubric version to score under (default: the version in force)")
	bindGateFlags(cmd.Flags(), &gf)
	return cmd
}

func (g *globals) loadBundle(ctx context.Context, arg string) ([]byte, error) {
	if st, err := os.Stat(arg); err == nil && !st.IsDir() {
		data, err := os.ReadFile(arg)
		if err != nil {
			return nil, usagef("read bundle: %v", err)
		}
		return data, nil
	}
	s, _, err := g.openStore(ctx)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	data, err := s.Bundle(ctx, arg)
	if errors.Is(err, store.ErrNotFound) {
		return nil, usagef("%s is neither a bundle file nor a run id in the store", arg)
	}
	if err != nil {
		return nil, fmt.Errorf("load bundle %s: %w", arg, err)
	}
	return data, nil
}
