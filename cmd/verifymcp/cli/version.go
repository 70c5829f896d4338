package cli

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/report"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/sandbox"
)

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the tool, rubric, evidence and report schema versions and the sandbox recipe",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			r := rubric.Current()
			fmt.Fprintf(g.stdout, "verifymcp %s (%s, %s/%s)\n", Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			fmt.Fprintf(g.stdout, "rubric:   %s (%s); known: %s\n", r.Version, r.Hash, strings.Join(rubric.Versions(), ", "))
			fmt.Fprintf(g.stdout, "evidence: %s\n", evidence.SchemaVersion)
			fmt.Fprintf(g.stdout, "report:   %s\n", report.SchemaVersion)
			fmt.Fprintf(g.stdout, "sandbox:  %s\n", sandbox.ImageRef())
			return nil
		},
	}
}
