// Package batchreport writes the outputs of the commands over many runs:
// a batch's summary, an enqueue, the queue's state, the stored runs and a
// rescoring pass, as JSON or a table. The package report (package report)
// knows none of them.
package batchreport

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/pipeline/batch"
	"github.com/verifymcp/verifymcp/report"
	"github.com/verifymcp/verifymcp/store/queue"
)

// WriteBatch writes a batch's summary in format f: JSON (its schema is
// batch.SchemaVersion) or a table of the targets with the totals below
// it, and, with o.Verbose, the time per phase (JSON always has it).
func WriteBatch(w io.Writer, f report.Format, s batch.Summary, o report.TableOptions) error {
	return report.WriteValue(w, f, s, func() error { return writeBatchTable(w, s, o.Verbose) })
}

// phaseOrder is the order a batch summary's phases are shown in, roughly the order they run.
var phaseOrder = []string{"resolve", "install.fetch", "install.scripts", "session.start", "session.handshake", "session.list", "session.idle", "session.calls", "session.shutdown",
	evidence.SignalOSV, evidence.SignalSocket, evidence.SignalGitHub, evidence.SignalDNSSEC, evidence.SignalJudge, "other", "save", "scan"}

func writeBatchTable(w io.Writer, s batch.Summary, verbose bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LINE\tTARGET\tVERSION\tSTATUS\tOUTCOME\tSCORE\tRUN")
	for _, it := range s.Targets {
		score := "-"
		if it.Score != nil {
			score = fmt.Sprintf("%.1f", *it.Score)
		}
		name := it.Name
		if name == "" {
			name = it.Target
		}
		status := it.Status
		if it.SkipReason != "" {
			status += " (" + it.SkipReason + ")"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", it.Line, name, report.OrDash(it.Version), status, report.OrDash(it.Outcome), score, report.OrDash(it.RunID))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// Errors are long: below the table, not in it.
	for _, it := range s.Targets {
		if it.Error != "" {
			fmt.Fprintf(w, "line %d: %s: %s\n", it.Line, it.Target, it.Error)
		}
	}
	t := s.Totals
	fmt.Fprintf(w, "\nbatch %s: %d targets, concurrency %d, %s, tool %s, rubric v%s\n", s.File, t.Targets, s.Concurrency,
		(time.Duration(s.DurationMS) * time.Millisecond).Round(time.Second), s.ToolVersion, s.RubricVersion)
	fmt.Fprintf(w, "  completed    %d\n  failed       %d", t.Completed, t.Failed)
	if len(s.FailedByOutcome) > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(s.FailedByOutcome)) {
			parts = append(parts, fmt.Sprintf("%s %d", k, s.FailedByOutcome[k]))
		}
		fmt.Fprintf(w, " (%s)", strings.Join(parts, ", "))
	}
	fmt.Fprintf(w, "\n  skipped      %d\n", t.Skipped)
	switch {
	case s.Interrupted || t.Abandoned > 0:
		fmt.Fprintf(w, "  interrupted  %d abandoned in flight, %d not started\n", t.Abandoned, t.NotStarted)
	case t.NotStarted > 0:
		fmt.Fprintf(w, "  stopped      %d not started: the environment failed (run the batch again once it is fixed)\n", t.NotStarted)
	}
	writeBatchDrift(w, s.Drift)
	if t.Scanned > 0 {
		fmt.Fprintf(w, "  throughput   %d scans saved, %.1f packages/hour\n", t.Scanned, s.PackagesPerHour)
		if !verbose {
			return nil
		}
		fmt.Fprintln(w, "\ntime per scan by phase (median, total over the scans made now):")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		for _, k := range phaseOrder {
			ps, ok := s.Phases[k]
			if !ok {
				continue
			}
			fmt.Fprintf(tw, "  %s\t%.1fs\t%.1fs\t\n", k, float64(ps.MedianMS)/1000, float64(ps.TotalMS)/1000)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// writeBatchDrift writes the batch's drift: the scans compared with a
// pin, the changes by kind, and the surfaced ones, safety bit first.
func writeBatchDrift(w io.Writer, d batch.DriftSummary) {
	if d.Compared+d.FirstScans+d.NotCompared == 0 {
		return
	}
	fmt.Fprintf(w, "  drift        %d compared with their pin, %d first scans (pinned now, trust on first use), %d not compared\n", d.Compared, d.FirstScans, d.NotCompared)
	if len(d.ByKind) > 0 {
		var parts []string
		for _, k := range contract.Kinds {
			if n := d.ByKind[string(k)]; n > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", k, n))
			}
		}
		fmt.Fprintf(w, "               by kind: %s\n", strings.Join(parts, ", "))
	}
	for _, e := range d.Surfaced {
		safety := "      "
		if e.Safety {
			safety = "safety"
		}
		scope := "since pin"
		if e.Scope == "session" {
			scope = "in session"
		}
		fmt.Fprintf(w, "    %s  line %d %s@%s  %s  %s  %s  %s\n", safety, e.Line, report.Clean(e.Target), report.Clean(e.Version), scope, e.Kind, report.Clean(e.Subject),
			report.Clean(report.ChangeText(report.Change{Detail: e.Detail, Before: e.Before, After: e.After})))
	}
}

// WriteEnqueue writes what `batch --enqueue` did in format f: JSON (its
// schema is batch.EnqueueSchemaVersion) or the totals and the targets that
// failed.
func WriteEnqueue(w io.Writer, f report.Format, s batch.EnqueueSummary) error {
	return report.WriteValue(w, f, s, func() error { return writeEnqueueTable(w, s) })
}

func writeEnqueueTable(w io.Writer, s batch.EnqueueSummary) error {
	t := s.Totals
	fmt.Fprintf(w, "enqueued %d new scan jobs, %d already queued, running or done (tool %s, rubric %s)\n",
		t.Enqueued, t.AlreadyQueued, s.ToolVersion, s.RubricVersion)
	fmt.Fprintf(w, "targets %d: submitted %d, skipped %d (already stored or repeated), failed %d\n",
		t.Targets, t.Submitted, t.Skipped, t.Failed)
	if t.Failed > 0 {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "LINE\tTARGET\tOUTCOME\tERROR")
		for _, it := range s.Targets {
			if it.Status == batch.StatusFailed {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", it.Line, it.Target, it.Outcome, it.Error)
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w, "run `verifymcp worker` on each machine of the fleet; `verifymcp queue status` shows progress")
	return err
}

// WriteQueueStatus writes the fleet queue's counts and its discarded and
// cancelled jobs in format f.
func WriteQueueStatus(w io.Writer, f report.Format, s batch.QueueStatus) error {
	if s.Failed == nil {
		s.Failed = []queue.DiscardedJob{}
	}
	return report.WriteValue(w, f, s, func() error { return writeQueueStatusTable(w, s) })
}

func writeQueueStatusTable(w io.Writer, s batch.QueueStatus) error {
	fmt.Fprintf(w, "pending %d (running %d), completed %d, discarded %d, cancelled %d\n",
		s.Pending, s.Running, s.Completed, s.Discarded, s.Cancelled)
	if len(s.Failed) > 0 {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "JOB\tSTATE\tTARGET\tATTEMPTS\tLAST ERROR")
		for _, j := range s.Failed {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\n", j.ID, j.State, j.Target, j.Attempts, report.FirstLine(j.LastError))
		}
		return tw.Flush()
	}
	return nil
}

// RunRow is one stored run, as `verifymcp runs` lists it.
type RunRow struct {
	RunID         string   `json:"run_id"`
	Target        string   `json:"target"`
	Date          string   `json:"date"`
	ToolVersion   string   `json:"tool_version"`
	Outcome       string   `json:"outcome"`
	RubricVersion string   `json:"rubric_version"`
	Score         *float64 `json:"score"`
}

// WriteRuns writes stored runs, newest first: JSON (a list) or a table.
func WriteRuns(w io.Writer, f report.Format, rows []RunRow) error {
	return report.WriteValue(w, f, rows, func() error {
		if len(rows) == 0 {
			_, err := fmt.Fprintln(w, "no stored run matches")
			return err
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "RUN\tTARGET\tDATE\tOUTCOME\tRUBRIC\tSCORE\tTOOL")
		for _, r := range rows {
			score := "-"
			if r.Score != nil {
				score = fmt.Sprintf("%.1f", *r.Score)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", report.Clean(r.RunID), report.Clean(r.Target), r.Date, report.Clean(r.Outcome), report.OrDash(report.Clean(r.RubricVersion)), score, report.Clean(r.ToolVersion))
		}
		return tw.Flush()
	})
}
