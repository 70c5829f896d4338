package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/docker/go-units"
	"github.com/spf13/cobra"

	"github.com/verifymcp/verifymcp/benchmark"
	"github.com/verifymcp/verifymcp/pipeline"
	"github.com/verifymcp/verifymcp/report"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/store"
)

func newCasesCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cases",
		Short: "Score the benchmark corpus of reviewed cases: emitted reason codes against a reviewer's",
	}
	f := &scanFlags{}
	var corpus string
	var fromStore bool
	var only []string
	var kind string
	var publish string
	run := &cobra.Command{
		Use:   "run",
		Short: "Scan every case's pinned target and diff the emitted codes against the expected ones",
		Long: `Scan every case of the corpus (benchmark/cases/{synthetic,reviewed}/*.yaml)
through the same pipeline as scan, then compare, within each case's scope
(reason-code prefixes): a true positive is an expected code that was emitted,
a false positive an emitted in-scope code nobody expected, a false negative an
expected code not emitted, whatever the state of any signal. Matching is by
code, so a measurement matches when it was made. Findings outside the scope
are shown and counted in nothing. Per kind of case (synthetic fixtures,
reviewed real packages; never pooled) the false discovery rate is FP over all
in-scope findings. Beside FN, the false negatives whose producing signal was
not observed during the run are counted (of which signal unavailable); they
stay in FN. A case reviewed under another rubric version than the one in
force, with no named reviewer, or with an open dispute is flagged and its
results are not publishable.

The corpus is read against the catalog of the rubric in force. A case that
cannot be scored as written (another track, an unpinned target, an expected
code not in the catalog, a scope entry that covers no code, a measurement in
scope but not expected) is refused with its file and line, reported as refused
and counted in nothing; the other cases are scored.

A reviewer is a person, written as a name and a way to reach them ("Ada
Lovelace <ada@example.org>" or "Ada Lovelace (github:ada)"); a role, team,
organisation or tool is refused when the corpus is read. A reviewed case
records the date it was selected; when the store holds a scan of its target
from before that date it is flagged "selected after scoring" on every run. A
case withdrawn by a dispute, or whose open dispute asks for its withdrawal, is
compared and listed but counted in no total.

--from-store diffs the newest stored run of each case's target (rescored under
the rubric in force) without scanning again. Every scan is saved like a
scan's. --kind synthetic or --kind reviewed runs the cases of one kind.

A synthetic case may be a static capture (target capture:ID@VERSION): the MCP
listing a server sent, recorded in the corpus. It is scored from those files
by the same contract checks and rubric as a scan, with no engine and no
network, with or without --from-store, and every signal it cannot give is not
assessed ("static capture"). The report lists static captures apart from live
cases, which depend on the world. --form capture runs the static captures only
(no engine is needed), --form live the others.

--publish DIR writes what may be published: DIR/package/synthetic.{json,txt}
and DIR/package/reviewed.{json,txt}, each kind apart and only when every case
of it is publishable (a withdrawn case is listed as such and counted in
nothing), and records each part in DIR/publications.json. A kind that is not
publishable is refused with every reason, and the command exits 2. Earlier
publications that counted a case since corrected or withdrawn are listed as
needing republication.

Examples:
  verifymcp cases run --kind synthetic --no-behavior --skip osv,socket,github,dnssec,judge,mcp_registry
  verifymcp cases run --case server-memory
  verifymcp cases run --form capture
  verifymcp cases run --from-store --format json -o cases.json
  verifymcp cases run --from-store --kind synthetic --publish site/benchmark`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.runCases(cmd.Context(), corpus, only, kind, fromStore, publish, f)
		},
	}
	fl := run.Flags()
	fl.StringVar(&corpus, "corpus", "benchmark", "directory of the corpus (holding cases/ and fixtures/)")
	fl.StringSliceVar(&only, "case", nil, "run only these case ids (repeatable or comma-separated)")
	fl.StringVar(&kind, "kind", "", "run only the cases of this kind: synthetic or reviewed")
	fl.BoolVar(&fromStore, "from-store", false, "diff the stored runs of the cases' targets instead of scanning")
	fl.StringVar(&f.casesForm, "form", "", "run only the cases of this form: capture (static captures, scored with no engine and no network) or live")
	fl.StringVar(&publish, "publish", "", "write what may be published into this directory (each kind apart), refusing what may not")
	fl.StringVar(&f.format, "format", "table", "output format: table or json")
	fl.StringVarP(&f.output, "output", "o", "", "write the output to this file instead of stdout")
	bindSandboxFlags(fl, f)
	cmd.AddCommand(run)
	return cmd
}

func (g *globals) runCases(ctx context.Context, corpus string, only []string, kind string, fromStore bool, publish string, f *scanFlags) error {
	if _, err := checkFormat(report.OutputOther, f.format); err != nil {
		return err
	}
	if kind != "" && !slices.Contains(benchmark.Kinds(), benchmark.Kind(kind)) {
		return usagef("--kind must be synthetic or reviewed, not %q", kind)
	}
	rb := rubric.Current()
	cases, err := benchmark.ReadCorpus(corpus, rb)
	if err != nil {
		return usagef("corpus %s: %v", corpus, err)
	}
	cases, missing := benchmark.Select(cases, benchmark.Kind(kind), only)
	if missing != "" {
		return usagef("--case %q: no such case in %s", missing, corpus)
	}
	switch f.casesForm {
	case "":
	case benchmark.FormCapture, benchmark.FormLive:
		cases = slices.DeleteFunc(cases, func(c benchmark.Case) bool { return c.Form() != f.casesForm })
	default:
		return usagef("--form must be %s or %s, not %q", benchmark.FormCapture, benchmark.FormLive, f.casesForm)
	}
	if len(cases) == 0 {
		return usagef("corpus %s holds no case", corpus)
	}
	if err := checkOutput(f.output); err != nil {
		return err
	}
	for _, c := range cases {
		for _, why := range c.Refused {
			g.log.Warn("case refused", "case", c.ID, "why", why.Error())
		}
	}
	info := benchmark.RunInfo{Date: time.Now().UTC(), RubricVersion: rb.Version, RubricHash: rb.Hash, ToolVersion: Version, Source: benchmark.SourceScan}
	tmp, err := os.MkdirTemp("", "verifymcp-cases-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	st, dataDir, err := g.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()

	var scan, scanOne benchmark.ScanFunc
	// infra reports the first failure that was not a case's package's own
	// (the engine, the image, the environment); the report still lists
	// every case, and the command exits with that failure's code.
	infra := func() error { return nil }
	if fromStore {
		info.Source = benchmark.SourceStore
		scan = func(ctx context.Context, c benchmark.Case, t benchmark.ScanTarget) (benchmark.Observed, error) {
			b, err := pipeline.LatestRun(ctx, st, t.Ecosystem, t.Name, t.Version, t.Integrity)
			if err != nil {
				return benchmark.Observed{}, err
			}
			return benchmark.Observe(b, rubric.Evaluate(b, rb)), nil
		}
	} else if slices.ContainsFunc(cases, func(c benchmark.Case) bool { return c.Form() == benchmark.FormLive && len(c.Refused) == 0 }) {
		// The scanner (and the engine behind it) only when a case is live:
		// a run of static captures needs neither.
		var closeFn func()
		scanOne, closeFn, infra, err = g.caseScanner(ctx, f, st, dataDir, rb)
		if err != nil {
			return err
		}
		defer closeFn()
		n := 0
		scan = func(ctx context.Context, c benchmark.Case, t benchmark.ScanTarget) (benchmark.Observed, error) {
			n++
			g.log.Info("case", "n", fmt.Sprintf("%d/%d", n, len(cases)), "id", c.ID, "target", c.Target)
			return scanOne(ctx, c, t)
		}
	}
	// Static captures are scored from their recorded files, with no engine
	// and no network, whatever the source of the live cases.
	scan = benchmark.WithCaptures(scan, rb)
	// A reviewed case's earliest stored scan: selected after it, the case
	// was selected after scoring.
	scanCase := scan
	scan = func(ctx context.Context, c benchmark.Case, t benchmark.ScanTarget) (benchmark.Observed, error) {
		var first *benchmark.ScanRef
		if c.Kind == benchmark.KindReviewed {
			var err error
			if first, err = firstScan(ctx, st, t); err != nil {
				return benchmark.Observed{}, err
			}
		}
		o, err := scanCase(ctx, c, t)
		if first == nil && err == nil && c.Kind == benchmark.KindReviewed && o.RunID != "" {
			first = &benchmark.ScanRef{RunID: o.RunID, Date: o.Date}
		}
		o.FirstScan = first
		return o, err
	}
	rep, err := benchmark.RunCases(ctx, info, cases, corpus, tmp, scan, rb)
	if err != nil {
		return err
	}
	if err := g.writeOutput(f.output, func(w io.Writer) error {
		if f.format == "json" {
			return benchmark.WriteJSON(w, rep)
		}
		return benchmark.WriteTable(w, rep)
	}); err != nil {
		return err
	}
	if publish != "" {
		if err := g.publishCases(publish, rep); err != nil {
			return err
		}
	}
	return infra()
}

// firstScan returns the earliest stored run of a target's exact version,
// nil when there is none.
func firstScan(ctx context.Context, st *store.Store, t benchmark.ScanTarget) (*benchmark.ScanRef, error) {
	if t.Ecosystem == "" || t.Name == "" || t.Version == "" {
		return nil, nil
	}
	runs, err := st.Runs(ctx, store.Filter{Ecosystem: t.Ecosystem, Name: t.Name, Version: t.Version})
	if err != nil {
		return nil, fmt.Errorf("stored runs of %s@%s: %w", t.Name, t.Version, err)
	}
	var first *benchmark.ScanRef
	for _, r := range runs {
		if first == nil || r.Date.Before(first.Date) {
			first = &benchmark.ScanRef{RunID: r.RunID, Date: r.Date}
		}
	}
	return first, nil
}

// publishCases writes what of rep may be published into dir, and says
// what it wrote, refused and found needing republication.
func (g *globals) publishCases(dir string, rep benchmark.Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--publish %s: %w", dir, err)
	}
	res, err := benchmark.Publish(dir, rep, time.Now())
	for _, w := range res.Written {
		fmt.Fprintf(g.stderr, "published %s\n", filepath.Join(dir, w))
	}
	for _, r := range res.Republish {
		fmt.Fprintf(g.stderr, "needs republication: %s\n", r)
	}
	if errors.Is(err, benchmark.ErrRefused) {
		for _, r := range res.Refused {
			fmt.Fprintf(g.stderr, "not published: %s\n", r)
		}
		return usagef("--publish %s: %d kind(s) of case not publishable (the reasons are above); nothing of it was written", dir, len(res.Refused))
	}
	if err != nil {
		return fmt.Errorf("--publish %s: %w", dir, err)
	}
	return nil
}

// caseScanner returns the scan of one case, exactly as scan does it and
// saved likewise (see pipeline.OnDemand). infra returns the first failure
// of the engine, the image or the environment, once cases ran.
func (g *globals) caseScanner(ctx context.Context, f *scanFlags, st *store.Store, dataDir string, rb *rubric.Rubric) (scan benchmark.ScanFunc, closeAll func(), infra func() error, err error) {
	od, closeAll, err := g.onDemand(ctx, f, st, dataDir, rb, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	scan = func(ctx context.Context, c benchmark.Case, t benchmark.ScanTarget) (benchmark.Observed, error) {
		ran, err := od.Run(ctx, t.Arg, pipeline.Options{Bin: c.Bin, Args: c.Args, Env: c.Env})
		if err != nil {
			return benchmark.Observed{}, err
		}
		return benchmark.Observe(ran.Bundle, ran.Result), nil
	}
	return scan, closeAll, od.Infra, nil
}

// onDemand returns the scanner cases and diff scan targets with, one at a
// time, exactly as scan does and saved likewise (see pipeline.OnDemand);
// the sandbox is prepared when the first target resolved. pins (nil:
// none) keeps the pins of server identities.
func (g *globals) onDemand(ctx context.Context, f *scanFlags, st *store.Store, dataDir string, rb *rubric.Rubric, pins pipeline.Pins) (*pipeline.OnDemand, func(), error) {
	if f.idle == 0 {
		f.idle = -1
	}
	mem, err := parseMemory(f.memory)
	if err != nil {
		return nil, nil, err
	}
	p, ca, closeScanner, err := g.newScanPipeline(ctx, f, dataDir, rb, pins)
	if err != nil {
		return nil, nil, err
	}
	od := &pipeline.OnDemand{Pipeline: p, Save: g.storeSaver(st, dataDir),
		Prepare: func(ctx context.Context) (pipeline.Session, error) {
			return g.prepareSandbox(ctx, p, f, dataDir, p.Resolver().Registry(), ca, mem, nil)
		}}
	return od, func() { od.Close(); closeScanner() }, nil
}

// parseMemory reads --memory.
func parseMemory(s string) (int64, error) {
	mem, err := units.RAMInBytes(s)
	if err != nil || mem < 32<<20 {
		return 0, usagef("--memory %q: want a size of at least 32MiB, like 512MiB", s)
	}
	return mem, nil
}
