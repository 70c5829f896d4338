package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/pipeline/batch"
	"github.com/verifymcp/verifymcp/store/queue"
)

// TestWriteQueueStatus: no failed job is an empty list in JSON, not null;
// the table lists a failed job with the first line of its last error.
func TestWriteQueueStatus(t *testing.T) {
	var js bytes.Buffer
	if err := WriteQueueStatus(&js, FormatJSON, batch.QueueStatus{Pending: 2}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"failed": []`) {
		t.Errorf("json: %s", js.String())
	}
	var tbl bytes.Buffer
	s := batch.QueueStatus{Discarded: 1, Failed: []queue.DiscardedJob{{ID: 7, State: "discarded", Target: "npm:x@1.0.0", Attempts: 5, LastError: "engine down\nstack"}}}
	if err := WriteQueueStatus(&tbl, FormatTable, s); err != nil {
		t.Fatal(err)
	}
	if got := tbl.String(); !strings.HasPrefix(got, "pending 0 (running 0), completed 0, discarded 1, cancelled 0\n") || !strings.Contains(got, "npm:x@1.0.0") || !strings.Contains(got, "engine down …") || strings.Contains(got, "stack") {
		t.Errorf("table:\n%s", got)
	}
	if err := WriteQueueStatus(&tbl, Format("xml"), s); err == nil {
		t.Error("an unknown format is not an error")
	}
}
