package cli

import (
	"time"

	"github.com/verifymcp/verifymcp/ecosystem"
	"github.com/verifymcp/verifymcp/report"

	"github.com/verifymcp/verifymcp/report/batchreport"

	"github.com/spf13/cobra"

	"github.com/verifymcp/verifymcp/pipeline"
	"github.com/verifymcp/verifymcp/store"
)

func newRunsCmd(g *globals) *cobra.Command {
	var format, target, rubricVersion string
	var limit int
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List the stored runs, newest first, with their outcome and score",
		Long: `List the runs in the store (the data directory's SQLite file, or the fleet's Postgres
database), newest first: run id, target, date, outcome, and the score under each rubric
version a result is stored for. A run id goes to "verifymcp score RUN_ID", "pin accept"
and "diff".

` + exitCodesHelp,
		Example: `  verifymcp runs
  verifymcp runs --target npm:@modelcontextprotocol/server-memory --limit 5
  verifymcp runs --target npm:@modelcontextprotocol/server-memory@2026.8.31 --rubric 9 --format json
  verifymcp runs --target pypi:mcp-server-fetch==2025.4.7`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			rf, err := checkFormat(report.OutputOther, format)
			if err != nil {
				return err
			}
			if limit < 0 {
				return usagef("--limit must be 0 (no limit) or more, not %d", limit)
			}
			f := store.Filter{RubricVersion: rubricVersion, Limit: limit}
			if target != "" {
				t, err := pipeline.ParseTarget(target)
				if err != nil || t.Name == "" {
					return usagef("--target %q: want npm:NAME, npm:NAME@VERSION, pypi:NAME or pypi:NAME==VERSION", target)
				}
				f.Ecosystem, f.Name = t.Ecosystem, t.Name
				if v, ok := ecosystem.MustOf(t.Ecosystem).Exact(t.Spec); ok {
					f.Version = v
				}
			}
			st, _, err := g.openStore(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			runs, err := st.Runs(cmd.Context(), f)
			if err != nil {
				return err
			}
			rows := make([]batchreport.RunRow, 0, len(runs))
			for _, r := range runs {
				rows = append(rows, batchreport.RunRow{RunID: r.RunID, Target: r.Ecosystem + ":" + r.Name + "@" + r.Version, Date: r.Date.UTC().Format(time.RFC3339),
					ToolVersion: r.ToolVersion, Outcome: string(r.Outcome), RubricVersion: r.RubricVersion, Score: r.Score})
			}
			return batchreport.WriteRuns(g.stdout, rf, rows)
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "output format: table or json")
	cmd.Flags().StringVar(&target, "target", "", "only runs of this package (npm:NAME, pypi:NAME) or version (npm:NAME@VERSION, pypi:NAME==VERSION)")
	cmd.Flags().StringVar(&rubricVersion, "rubric", "", "only runs with a result under this rubric version")
	cmd.Flags().IntVar(&limit, "limit", 0, "at most this many rows (0: all)")
	return cmd
}
