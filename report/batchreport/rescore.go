package batchreport

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/verifymcp/verifymcp/pipeline"
	"github.com/verifymcp/verifymcp/report"
	"github.com/verifymcp/verifymcp/rescore"
)

// RescoreSchemaVersion identifies the JSON that `rescore --format json`
// writes.
const RescoreSchemaVersion = "verifymcp.rescore/v1"

// WriteRescore writes a rescoring pass's output in format.
func WriteRescore(w io.Writer, format report.Format, out Rescore) error {
	return report.WriteValue(w, format, out, func() error { return writeRescoreTable(w, out) })
}

// Rescore is the output of a rescoring pass (`verifymcp rescore`): its
// JSON form, and what the table shows.
type Rescore struct {
	SchemaVersion string `json:"schema_version"`
	DryRun        bool   `json:"dry_run"`
	rescore.Summary
	ElapsedSeconds   float64            `json:"elapsed_seconds"`
	ResultsPerSecond float64            `json:"results_per_second"`
	StageSeconds     map[string]float64 `json:"stage_seconds"`
	// Recollection is what --recollect did; absent without it.
	Recollection *pipeline.RecollectSummary `json:"recollection,omitempty"`
}

// NewRescore is the output of the pass sum summarises.
func NewRescore(sum rescore.Summary, dryRun bool) Rescore {
	out := Rescore{
		SchemaVersion:  RescoreSchemaVersion,
		DryRun:         dryRun,
		Summary:        sum,
		ElapsedSeconds: sum.Elapsed.Seconds(),
		StageSeconds: map[string]float64{
			"read": sum.Stages.Read.Seconds(), "decode": sum.Stages.Decode.Seconds(),
			"evaluate": sum.Stages.Evaluate.Seconds(), "encode": sum.Stages.Encode.Seconds(),
			"compare": sum.Stages.Compare.Seconds(), "write": sum.Stages.Write.Seconds(),
		},
	}
	if s := sum.Elapsed.Seconds(); s > 0 {
		out.ResultsPerSecond = float64(sum.Rescored) / s
	}
	return out
}

func writeRescoreTable(w io.Writer, out Rescore) error {
	var b strings.Builder
	sum := out.Summary
	saved := "saved"
	if out.DryRun {
		saved = "dry run: nothing saved"
	}
	fmt.Fprintf(&b, "Rescored %d of %d stored runs under rubric %s (%s), %s.\n", sum.Rescored, sum.Total, sum.RubricVersion, sum.RubricHash, saved)
	if len(sum.Baselines) > 0 || sum.NoBaseline > 0 {
		var parts []string
		for _, v := range rescoreKeys(sum.Baselines) {
			parts = append(parts, fmt.Sprintf("rubric %s (%d runs)", v, sum.Baselines[v]))
		}
		if sum.NoBaseline > 0 {
			parts = append(parts, fmt.Sprintf("no stored result (%d runs, not compared)", sum.NoBaseline))
		}
		fmt.Fprintf(&b, "Compared with: %s.\n", strings.Join(parts, ", "))
	}

	c := sum.Composite
	fmt.Fprintf(&b, "\nComposite score over %d compared runs: %d up, %d down, %d unchanged", c.Compared, c.Up, c.Down, c.Unchanged)
	if c.Gained > 0 || c.Lost > 0 {
		fmt.Fprintf(&b, ", %d gained a score, %d lost it (every dimension dropped)", c.Gained, c.Lost)
	}
	if c.Scored > 0 {
		fmt.Fprintf(&b, "; delta mean %s, min %s, max %s", rescoreDelta(c.MeanDelta), rescoreDelta(c.MinDelta), rescoreDelta(c.MaxDelta))
	}
	b.WriteString(".\n\n")

	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "DIMENSION\tWEIGHT\tCOMPARED\tMOVED\tMEAN Δ\tMIN Δ\tMAX Δ\tCHANGES")
	for _, d := range sum.Dimensions {
		var notes []string
		for _, k := range rescoreKeys(d.StateChanges) {
			notes = append(notes, fmt.Sprintf("%s %d", k, d.StateChanges[k]))
		}
		if d.Added > 0 {
			notes = append(notes, fmt.Sprintf("new: %d runs", d.Added))
		}
		if d.Removed > 0 {
			notes = append(notes, fmt.Sprintf("removed: %d runs", d.Removed))
		}
		mean, lo, hi := "-", "-", "-"
		if d.Compared > 0 {
			mean, lo, hi = rescoreDelta(d.MeanDelta), rescoreDelta(d.MinDelta), rescoreDelta(d.MaxDelta)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\n", d.ID, rescoreWeight(d), d.Compared, d.Moved, mean, lo, hi, rescoreOrDash(strings.Join(notes, ", ")))
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	b.WriteString("\n")
	var moved []rescore.CodeMove
	for _, m := range sum.Codes {
		if m.Appeared > 0 || m.Disappeared > 0 {
			moved = append(moved, m)
		}
	}
	if len(moved) == 0 {
		fmt.Fprintf(&b, "Reason codes: none appeared or disappeared in the %d compared runs (%d codes found).\n", c.Compared, len(sum.Codes))
	} else {
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "CODE\tRUNS BEFORE\tRUNS AFTER\tAPPEARED\tDISAPPEARED")
		for _, m := range moved {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\n", m.Code, m.Before, m.After, m.Appeared, m.Disappeared)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if n := len(sum.Codes) - len(moved); n > 0 {
			fmt.Fprintf(&b, "(%d other codes found, in the same runs as before)\n", n)
		}
	}

	b.WriteString("\n")
	if sum.RecollectRuns == 0 {
		fmt.Fprintf(&b, "Needs re-collection: nothing; the stored evidence holds every signal rubric %s reads.\n", sum.RubricVersion)
	} else {
		var parts []string
		for _, s := range rescoreKeys(sum.Recollect) {
			parts = append(parts, fmt.Sprintf("%s %d runs", s, sum.Recollect[s]))
		}
		fmt.Fprintf(&b, "Needs re-collection: %s (%d runs in all). Their evidence lacks a signal rubric %s reads, "+
			"which was scored at its zero point; only that signal needs collecting again.\n",
			strings.Join(parts, ", "), sum.RecollectRuns, sum.RubricVersion)
	}
	if r := out.Recollection; r != nil {
		writeRecollectTable(&b, r)
	}
	if len(sum.Failed) > 0 {
		fmt.Fprintf(&b, "Failed: %d runs could not be rescored:\n", len(sum.Failed))
		for _, f := range sum.Failed {
			fmt.Fprintf(&b, "  %s: %s\n", f.RunID, report.FirstLine(f.Error))
		}
	}
	st := sum.Stages
	fmt.Fprintf(&b, "Throughput: %d results in %s, %.0f results/s (read %s, decode %s, evaluate %s, encode %s, compare %s, write %s; decode to compare summed over workers).\n",
		sum.Rescored, sum.Elapsed.Round(time.Millisecond), out.ResultsPerSecond,
		rescoreSecs(st.Read), rescoreSecs(st.Decode), rescoreSecs(st.Evaluate), rescoreSecs(st.Encode), rescoreSecs(st.Compare), rescoreSecs(st.Write))
	_, err := io.WriteString(w, b.String())
	return err
}

// rescoreWeight shows a dimension's weight, and what it was when the
// baselines weighed it otherwise.
func rescoreWeight(d rescore.DimensionMove) string {
	w := strconv.FormatFloat(d.Weight, 'f', -1, 64)
	var old []string
	for _, o := range d.OldWeights {
		old = append(old, strconv.FormatFloat(o, 'f', -1, 64))
	}
	switch {
	case d.Compared == 0 && d.Removed > 0:
		return strings.Join(old, "|") + "→-"
	case len(old) == 0:
		return w
	case len(old) == 1 && d.OldWeights[0] == d.Weight:
		return w
	default:
		return strings.Join(old, "|") + "→" + w
	}
}

func rescoreDelta(x float64) string {
	switch {
	case x == 0:
		return "0"
	case x > 0:
		return "+" + strconv.FormatFloat(x, 'f', 1, 64)
	}
	return strconv.FormatFloat(x, 'f', 1, 64)
}

func rescoreSecs(d time.Duration) string { return d.Round(time.Millisecond).String() }

func rescoreOrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func rescoreKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func writeRecollectTable(b *strings.Builder, r *pipeline.RecollectSummary) {
	fmt.Fprintf(b, "Recollected: %d new runs from %d runs lacking a signal", r.Derived, r.Runs)
	if r.AlreadyDerived > 0 {
		fmt.Fprintf(b, " (%d skipped: recollected before)", r.AlreadyDerived)
	}
	fmt.Fprintf(b, ", in %.1fs.\n", r.ElapsedSeconds)
	for _, s := range slices.Sorted(maps.Keys(r.Signals)) {
		var parts []string
		for _, state := range rescoreKeys(r.Signals[s]) {
			parts = append(parts, fmt.Sprintf("%s %d", state, r.Signals[s][state]))
		}
		fmt.Fprintf(b, "  %s: %s\n", s, strings.Join(parts, ", "))
	}
	if r.Derived > 0 {
		fmt.Fprintf(b, "  composite against the earlier run: %d up, %d down, %d unchanged, mean delta %s\n", r.Up, r.Down, r.Unchanged, rescoreDelta(r.MeanDelta))
	}
	if len(r.NeedScan) > 0 {
		var parts []string
		for _, s := range rescoreKeys(r.NeedScan) {
			parts = append(parts, fmt.Sprintf("%s %d runs", s, r.NeedScan[s]))
		}
		fmt.Fprintf(b, "  needs a new scan (batch): %s\n", strings.Join(parts, ", "))
	}
	for _, f := range r.Failed {
		fmt.Fprintf(b, "  failed %s: %s\n", f.RunID, report.FirstLine(f.Error))
	}
}
