package cli

import (
	"errors"
	"path/filepath"
	"strings"
	"time"

	"github.com/verifymcp/verifymcp/ecosystem/mcpb"
	"github.com/verifymcp/verifymcp/ecosystem/oci"

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

--target takes any target a scan takes and lists the runs of that release. A
package without a version lists every version's runs. An image named by tag
lists the runs scanned by that tag; named by digest, the runs of that digest,
whether they were scanned by digest or by a tag that resolved to it; named by
neither, every run of the image. A bundle with #sha256= lists the runs of a
bundle with that digest, from any file or URL; without, the runs of that file
or URL as it was written when it was scanned.

` + exitCodesHelp,
		Example: `  verifymcp runs
  verifymcp runs --target npm:@modelcontextprotocol/server-memory --limit 5
  verifymcp runs --target npm:@modelcontextprotocol/server-memory@2026.8.31 --rubric 9 --format json
  verifymcp runs --target pypi:mcp-server-fetch==2025.4.7
  verifymcp runs --target oci:ghcr.io/acme/time-mcp:1.4.2
  verifymcp runs --target mcpb:https://example.com/time-tools.mcpb#sha256=4b9e...`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			rf, err := checkFormat(report.OutputOther, format)
			if err != nil {
				return err
			}
			if limit < 0 {
				return usagef("--limit must be 0 (no limit) or more, not %d", limit)
			}
			var f store.Filter
			if target != "" {
				if f, err = runsFilter(target); err != nil {
					return usagef("--target %q: %v (want npm:NAME, npm:NAME@VERSION, pypi:NAME or pypi:NAME==VERSION, "+
						"an image oci:IMAGE[:TAG|@DIGEST] or a bundle mcpb:PATH|URL[#sha256=HEX])", target, err)
				}
			}
			f.RubricVersion, f.Limit = rubricVersion, limit
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
				rows = append(rows, batchreport.RunRow{RunID: r.RunID, Target: runTarget(r), Date: r.Date.UTC().Format(time.RFC3339),
					ToolVersion: r.ToolVersion, Outcome: string(r.Outcome), RubricVersion: r.RubricVersion, Score: r.Score})
			}
			return batchreport.WriteRuns(g.stdout, rf, rows)
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "output format: table or json")
	cmd.Flags().StringVar(&target, "target", "", "only runs of this package (npm:NAME, pypi:NAME) or version (npm:NAME@VERSION, pypi:NAME==VERSION), "+
		"image (oci:IMAGE, oci:IMAGE:TAG, oci:IMAGE@DIGEST, docker:, docker-daemon:, oci-layout:DIR) or bundle (./X.mcpb, mcpb:PATH|URL[#sha256=HEX])")
	cmd.Flags().StringVar(&rubricVersion, "rubric", "", "only runs with a result under this rubric version")
	cmd.Flags().IntVar(&limit, "limit", 0, "at most this many rows (0: all)")
	return cmd
}

// runTarget is a run's target as listed: ecosystem:name@version, and a
// release that ran as shipped pinned the way its ecosystem pins (an
// image's tag after ':', as the report writes a release it did not
// resolve to a digest).
func runTarget(r store.RunSummary) string {
	if pipeline.Shipped(r.Ecosystem) {
		return r.Ecosystem + ":" + ecosystem.MustOf(r.Ecosystem).Pin(r.Name, r.Version)
	}
	return r.Ecosystem + ":" + r.Name + "@" + r.Version
}

// runsFilter selects the stored runs of the release target names, read as
// a scan reads it (pipeline.ParseTarget; an image's reference by
// oci.ParseRef). A shipped release is stored under the name and version
// its ecosystem resolved, not the target as written: an image under its
// repository and the tag or digest it was asked for (and the digest it
// resolved to in its bundle), a layout under its directory's name, a
// bundle under its manifest's name and version (and, in its bundle, the
// file or URL it was read from and its digest).
func runsFilter(target string) (store.Filter, error) {
	t, err := pipeline.ParseTarget(target)
	if err != nil {
		return store.Filter{}, err
	}
	if t.Name == "" {
		return store.Filter{}, errors.New("runs are stored under the package or release, not under an MCP registry name")
	}
	f := store.Filter{Ecosystem: t.Ecosystem}
	switch t.Ecosystem {
	case oci.Ecosystem{}.Name():
		ref, err := oci.ParseRef(t.Name)
		if err != nil {
			return store.Filter{}, err
		}
		f.Name = ref.Name
		if ref.Transport == oci.TransportLayout {
			f.Name = filepath.Base(ref.Path) // as ocirun names a layout's image
		}
		switch {
		case ref.Digest != "":
			f.Digest = ref.Digest
		case ref.Transport != oci.TransportLayout && !ref.DefaultTag:
			// A layout's tag is not recorded: its runs are by digest.
			f.Version = ref.Tag
		}
	case mcpb.Ecosystem{}.Name():
		// ParseTarget has checked the form: LOCATION[#sha256=HEX].
		loc, sum, _ := strings.Cut(strings.TrimPrefix(t.Name, "mcpb:"), "#")
		if hex, ok := strings.CutPrefix(strings.ToLower(sum), "sha256="); ok {
			f.Digest = "sha256:" + hex
		} else {
			f.Reference = loc
		}
	default:
		f.Name = t.Name
		if v, ok := ecosystem.MustOf(t.Ecosystem).Exact(t.Spec); ok {
			f.Version = v
		}
	}
	return f, nil
}
