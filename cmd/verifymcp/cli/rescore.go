package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/verifymcp/verifymcp/report"
	"github.com/verifymcp/verifymcp/report/batchreport"

	"github.com/spf13/cobra"

	"github.com/verifymcp/verifymcp/contract/checks"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rescore"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/store"
)

// rescoreGCPercent is the garbage collector's target percentage during a
// pass (runtime/debug.SetGCPercent).
const rescoreGCPercent = 400

type rescoreFlags struct {
	rubric   string
	baseline string
	name     string
	version  string
	since    string
	until    string
	limit    int
	workers  int
	dryRun   bool
	format   string
	// recollect collects again, into new runs, the signals the rubric
	// reads and the stored evidence lacks.
	recollect bool
	scan      scanFlags
}

func newRescoreCmd(g *globals) *cobra.Command {
	f := &rescoreFlags{}
	cmd := &cobra.Command{
		Use:   "rescore",
		Short: "Score stored runs again under a rubric version, from stored evidence, and report what moved",
		Long: `Score every stored run matching the filters again under a rubric version, from
the stored evidence alone: no sandbox, no engine, no network. Each new result is
saved next to the run's earlier ones (replacing an earlier result under the same
rubric version), and the command reports what moved: per dimension, per reason
code and for the composite score, and the throughput.

Each run is compared with its stored result under --baseline, or by default
under the highest other rubric version it was scored under (the version before
the rubric moved); a run scored only under the same version is compared with
that result, and a run with no stored result is counted apart.

A rubric may read evidence a run did not collect (a signal added after the run,
or judge verdicts given under another judge specification than the rubric
pins). The result is saved with that dimension's zero point, as the stored
evidence supports, and the report counts per signal the runs that need it
collected again.

--recollect then collects those signals again, and only those, from what
each run stored: the judge from the stored contract (its cache makes an
unchanged tool surface free), DNSSEC and GitHub from the stored registry
metadata, OSV and Socket from the stored lockfile. Each becomes a new run
carrying over the earlier run's evidence (its date included) with the new
signals, saved and scored under the rubric; the earlier run stays as it was,
evidence being immutable. A run recollected once is not recollected again.
The sandbox signals and the registry resolution need a new scan (batch).
Endpoints, keys and --skip are those of scan.

Filters select every matching run, not only each target's newest: --name and
--version match exactly; --since and --until bound the run date (since <= date
< until), as YYYY-MM-DD (UTC) or RFC 3339; --limit keeps the oldest N.

The pass can be interrupted: results are written in transactions of 200, and
those committed stay; running it again finishes the job.

` + exitCodesHelp,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.runRescore(cmd.Context(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.rubric, "rubric", "", "rubric version to score under (default: the version in force)")
	fl.StringVar(&f.baseline, "baseline", "", "rubric version of the stored results to compare with (default: per run, the highest other version it was scored under)")
	fl.StringVar(&f.name, "name", "", "only runs of this package name")
	fl.StringVar(&f.version, "version", "", "only runs of this exact package version")
	fl.StringVar(&f.since, "since", "", "only runs on or after DATE (YYYY-MM-DD, UTC, or RFC 3339)")
	fl.StringVar(&f.until, "until", "", "only runs before DATE (YYYY-MM-DD, UTC, or RFC 3339)")
	fl.IntVar(&f.limit, "limit", 0, "rescore at most N runs, the oldest first (0: all)")
	fl.IntVar(&f.workers, "workers", 0, "goroutines decoding and scoring bundles (0: one per CPU)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "compute and report what would move, saving nothing")
	fl.StringVar(&f.format, "format", "table", "report format: table or json")
	fl.BoolVar(&f.recollect, "recollect", false, "collect again, into new runs, the signals the rubric reads and the stored evidence lacks (judge, dnssec, github, osv, socket)")
	fl.StringVar(&f.scan.registry, "registry", "", "npm registry URL (env VERIFYMCP_NPM_REGISTRY); with --recollect")
	bindIndexURLFlag(fl, &f.scan)
	fl.StringVar(&f.scan.caBundle, "ca-bundle", "", "PEM CA bundle to trust (env VERIFYMCP_CA_BUNDLE); with --recollect")
	bindSignalFlags(fl, &f.scan)
	return cmd
}

// parseRescoreDate reads a --since or --until value.
func parseRescoreDate(flag, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.Time{}, usagef("--%s wants YYYY-MM-DD or an RFC 3339 time, not %q", flag, s)
}

func (g *globals) runRescore(ctx context.Context, f *rescoreFlags) error {
	format, err := checkFormat(report.OutputOther, f.format)
	if err != nil {
		return err
	}
	if f.limit < 0 || f.workers < 0 {
		return usagef("--limit and --workers must not be negative")
	}
	if f.recollect && f.dryRun {
		return usagef("--recollect saves new runs; it cannot be combined with --dry-run")
	}
	rb := rubric.Current()
	if f.rubric != "" {
		var err error
		if rb, err = rubric.Load(f.rubric); err != nil {
			return usagef("--rubric: %v", err)
		}
	}
	since, err := parseRescoreDate("since", f.since)
	if err != nil {
		return err
	}
	until, err := parseRescoreDate("until", f.until)
	if err != nil {
		return err
	}
	if !since.IsZero() && !until.IsZero() && !since.Before(until) {
		return usagef("--since %s is not before --until %s", f.since, f.until)
	}
	filter := store.Filter{Name: f.name, Version: f.version, Since: since, Until: until, Limit: f.limit}

	st, dir, err := g.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()

	// A pass allocates tens of kilobytes per run (bundle, result, JSON)
	// and keeps little of it: collecting garbage less often saves a sixth
	// of the CPU for a heap of a few hundred megabytes at most. GOGC, if
	// set, is the operator's choice.
	if _, set := os.LookupEnv("GOGC"); !set {
		defer debug.SetGCPercent(debug.SetGCPercent(rescoreGCPercent))
	}

	mode := "saving results"
	if f.dryRun {
		mode = "dry run, saving nothing"
	}
	if pin, ok := rb.ContractChecks(); ok && !rb.ChecksRunnable() {
		// Flagged in every result too (the dimension's reason and
		// contract_checks.source "unavailable").
		g.log.Warn("this rubric scores other contract checks than this build runs: prompt_contract_integrity gets its zero point for every run that did not store their findings",
			"rubric", rb.Version, "pinned_checks", pin.String(), "build_checks", checks.Version, "use_rubric", rubric.CurrentVersion)
	}
	g.log.Info("rescoring stored runs", "rubric", rb.Version, "store", st.Path(), "mode", mode)
	start := time.Now()
	var last time.Time
	var need []recollectItem
	sum, err := rescore.Run(ctx, st, rescore.Options{
		Rubric:   rb,
		Filter:   filter,
		Baseline: f.baseline,
		Workers:  f.workers,
		Save:     !f.dryRun,
		Progress: func(done, total int) {
			// A line a second at most: a store of a million runs commits
			// five thousand batches.
			if now := time.Now(); now.Sub(last) >= time.Second || done == total {
				last = now
				rate := float64(done) / now.Sub(start).Seconds()
				g.log.Info("rescored", "runs", fmt.Sprintf("%d/%d", done, total), "rate", fmt.Sprintf("%.0f/s", rate))
			}
		},
		NeedsRecollection: func(runID string, signals []string) {
			g.log.Debug("evidence lacks what the rubric reads", "run", runID, "recollect", strings.Join(signals, ","))
			if f.recollect {
				need = append(need, recollectItem{runID: runID, signals: signals})
			}
		},
	})
	if err != nil {
		if errors.Is(err, context.Canceled) || ctx.Err() != nil {
			g.log.Warn("rescore interrupted; the results committed so far stay, run it again to finish",
				"committed", sum.Rescored, "of", sum.Total)
		}
		return fmt.Errorf("rescore: %w", err)
	}
	out := batchreport.NewRescore(sum, f.dryRun)
	if f.recollect {
		rec, err := g.recollectRuns(ctx, st, dir, rb, f, need)
		if err != nil {
			return err
		}
		out.Recollection = rec
	}
	if err := batchreport.WriteRescore(g.stdout, format, out); err != nil {
		return fmt.Errorf("write rescore report: %w", err)
	}
	if n := len(sum.Failed); n > 0 {
		return fmt.Errorf("rescore: %d stored runs could not be rescored (first: run %s: %s)", n, sum.Failed[0].RunID, sum.Failed[0].Error)
	}
	return nil
}

// scoredStore is the run store as the pipeline uses it: with results as
// rubric.Result values, where the store keeps their JSON and imports no
// rubric.
type scoredStore struct{ *store.Store }

// SaveRun saves a run and its result (store.Store.SaveRun).
func (s scoredStore) SaveRun(ctx context.Context, bundleJSON []byte, b *evidence.Bundle, res rubric.Result) error {
	return s.Store.SaveRun(ctx, bundleJSON, b, res)
}

// Result returns a run's stored result under a rubric version, decoded.
func (s scoredStore) Result(ctx context.Context, runID, rubricVersion string) (rubric.Result, error) {
	j, err := s.Store.Result(ctx, runID, rubricVersion)
	if err != nil {
		return rubric.Result{}, err
	}
	var res rubric.Result
	if err := json.Unmarshal(j, &res); err != nil {
		return rubric.Result{}, fmt.Errorf("store: result of run %s under rubric %s: decode: %w", runID, rubricVersion, err)
	}
	return res, nil
}
