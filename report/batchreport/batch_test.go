package batchreport

import (
	"bytes"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/pipeline/batch"
	"github.com/verifymcp/verifymcp/report"
	"github.com/verifymcp/verifymcp/store/queue"
)

// TestWriteQueueStatus: no failed job is an empty list in JSON, not null;
// the table lists a failed job with the first line of its last error.
func TestWriteQueueStatus(t *testing.T) {
	var js bytes.Buffer
	if err := WriteQueueStatus(&js, report.FormatJSON, batch.QueueStatus{Pending: 2}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"failed": []`) {
		t.Errorf("json: %s", js.String())
	}
	var tbl bytes.Buffer
	s := batch.QueueStatus{Discarded: 1, Failed: []queue.DiscardedJob{{ID: 7, State: "discarded", Target: "npm:x@1.0.0", Attempts: 5, LastError: "engine down\nstack"}}}
	if err := WriteQueueStatus(&tbl, report.FormatTable, s); err != nil {
		t.Fatal(err)
	}
	if got := tbl.String(); !strings.HasPrefix(got, "pending 0 (running 0), completed 0, discarded 1, cancelled 0\n") || !strings.Contains(got, "npm:x@1.0.0") || !strings.Contains(got, "engine down …") || strings.Contains(got, "stack") {
		t.Errorf("table:\n%s", got)
	}
	if err := WriteQueueStatus(&tbl, report.Format("xml"), s); err == nil {
		t.Error("an unknown format is not an error")
	}
}

// TestWriteBatchPhasesVerbose: the table shows the time per phase only
// with -v (an operator reads the totals; the phases are for tuning), JSON
// always carries them.
func TestWriteBatchPhasesVerbose(t *testing.T) {
	s := batch.Summary{Totals: batch.Totals{Targets: 1, Completed: 1, Scanned: 1}, PackagesPerHour: 600,
		Phases: map[string]batch.PhaseStat{"resolve": {MedianMS: 100, TotalMS: 100}, "scan": {MedianMS: 6000, TotalMS: 6000}}}
	for _, verbose := range []bool{false, true} {
		var buf bytes.Buffer
		if err := WriteBatch(&buf, report.FormatTable, s, report.TableOptions{Verbose: verbose}); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(buf.String(), "time per scan by phase"); got != verbose {
			t.Errorf("verbose %v: phases shown %v:\n%s", verbose, got, buf.String())
		}
	}
	var buf bytes.Buffer
	if err := WriteBatch(&buf, report.FormatJSON, s, report.TableOptions{}); err != nil || !strings.Contains(buf.String(), `"resolve"`) {
		t.Errorf("JSON without the phases: %v\n%s", err, buf.String())
	}
}
