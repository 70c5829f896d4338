package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/pipeline/batch"
)

func TestBatchETAAndBar(t *testing.T) {
	if _, ok := etaOf(0, 10, time.Minute); ok {
		t.Error("an ETA before any scan finished")
	}
	// 2 scans in 1 minute, 8 left: 4 minutes.
	if eta, ok := etaOf(2, 10, time.Minute); !ok || eta != 4*time.Minute {
		t.Errorf("ETA = %v, %v; want 4m", eta, ok)
	}
	tests := []struct {
		done, total, failed, skipped, running int
		eta                                   time.Duration
		ok                                    bool
		want                                  string
	}{
		{7, 15, 1, 2, 0, 80 * time.Second, true, "[#########...........] 7/15 done (1 failed, 2 skipped) ETA 1m20s"},
		{3, 15, 0, 3, 2, 0, false, "[####................] 3/15 done (0 failed, 3 skipped) 2 running ETA --"},
		{15, 15, 0, 0, 0, 0, true, "[####################] 15/15 done (0 failed, 0 skipped)"},
	}
	for _, tt := range tests {
		if got := renderBar(tt.done, tt.total, tt.failed, tt.skipped, tt.running, tt.eta, tt.ok); got != tt.want {
			t.Errorf("renderBar = %q\n         want %q", got, tt.want)
		}
	}
}

func TestBatchProgress(t *testing.T) {
	t.Run("plain_lines_per_target", func(t *testing.T) {
		var buf bytes.Buffer
		p := newProgressBar(&buf, false, false)
		p.Begin(2)
		p.Finish(&batch.Item{Target: "npm:a@1.0.0", Name: "a", Version: "1.0.0", Status: batch.StatusSkipped, SkipReason: "stored", Outcome: "ok", RunID: "r1", Score: new(71.5)}, false)
		p.Write([]byte("a log line\n"))
		p.Finish(&batch.Item{Target: "npm:b@latest", Name: "b", Version: "2.0.0", Status: batch.StatusFailed, Outcome: "start_crashed", RunID: "r2", PhasesMS: map[string]int64{"scan": 1500}}, true)
		p.Close()
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		if len(lines) != 3 || strings.Contains(buf.String(), "\r") {
			t.Fatalf("want 3 plain lines, got %q", buf.String())
		}
		if !strings.HasSuffix(lines[0], "1/2 skipped npm:a@1.0.0 outcome=ok score=71.5 reason=stored run=r1") {
			t.Errorf("line 1: %q", lines[0])
		}
		if lines[1] != "a log line" {
			t.Errorf("line 2: %q", lines[1])
		}
		if !strings.HasSuffix(lines[2], "2/2 failed npm:b@latest (b@2.0.0) outcome=start_crashed run=r2 took=1.5s") {
			t.Errorf("line 3: %q", lines[2])
		}
	})
	t.Run("bar_redrawn_under_log_lines", func(t *testing.T) {
		var buf bytes.Buffer
		p := newProgressBar(&buf, true, false)
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		p.now = func() time.Time { return now }
		p.Begin(2)
		p.Scanning()
		p.scanStart = now.Add(-30 * time.Second)
		p.Started()
		p.Write([]byte("warning: something\n"))
		p.Finish(&batch.Item{Status: batch.StatusCompleted, PhasesMS: map[string]int64{}}, true)
		p.Close()
		out := buf.String()
		// Each redraw first erases the bar; a log line is printed on a
		// clean line and the bar comes back under it.
		if !strings.Contains(out, "\r\x1b[Kwarning: something\n[....................] 0/2 done (0 failed, 0 skipped) 1 running ETA --") {
			t.Errorf("log line not printed over an erased bar: %q", out)
		}
		// One scan in 30 s, one left.
		if !strings.HasSuffix(out, "\r\x1b[K[##########..........] 1/2 done (0 failed, 0 skipped) ETA 30s\n") {
			t.Errorf("final bar: %q", out)
		}
		if strings.Contains(out, "completed ") {
			t.Errorf("plain lines on a terminal: %q", out)
		}
	})
	t.Run("eta_shortens_as_targets_resolve_stored", func(t *testing.T) {
		// Targets resolve as the batch goes: each one not dealt with counts
		// as a scan to come until it is found stored.
		var buf bytes.Buffer
		p := newProgressBar(&buf, true, false)
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		p.now = func() time.Time { return now }
		p.Begin(4)
		p.Scanning()
		p.scanStart = now.Add(-30 * time.Second)
		p.Started()
		p.Finish(&batch.Item{Status: batch.StatusCompleted}, true)
		if got := p.etaAt.Sub(now); got != 90*time.Second {
			t.Errorf("ETA after one scan in 30 s, three targets left: %s, want 1m30s", got)
		}
		p.Finish(&batch.Item{Status: batch.StatusSkipped, SkipReason: "stored"}, false)
		if got := p.etaAt.Sub(now); got != time.Minute {
			t.Errorf("ETA once one of them was found stored: %s, want 1m0s", got)
		}
		p.Close()
	})
	t.Run("quiet_shows_nothing", func(t *testing.T) {
		var buf bytes.Buffer
		p := newProgressBar(&buf, true, true)
		p.Begin(1)
		p.Finish(&batch.Item{Status: batch.StatusCompleted}, false)
		p.Close()
		if buf.Len() != 0 {
			t.Errorf("quiet progress wrote %q", buf.String())
		}
	})
}
