package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/verifymcp/verifymcp/pipeline/batch"
)

// isTerminal reports whether w is a terminal (a character device that is
// not /dev/null), where a redrawn progress bar makes sense.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(fi, null)
}

// progressBar draws a batch's progress (the batch.Events of its run) on
// stderr (the writer it is given): a bar redrawn in place on a terminal,
// one line per finished target otherwise. Log records are written through
// it, so that they appear above the bar.
type progressBar struct {
	mu    sync.Mutex
	w     io.Writer
	bar   bool
	quiet bool
	now   func() time.Time
	start time.Time

	total, done, failed, skipped int
	scanned, running             int
	scanStart, etaAt             time.Time
	shown, closed                bool
	stopTick                     chan struct{}
}

// newProgressBar shows progress on w: a bar when bar is set, nothing when
// quiet is.
func newProgressBar(w io.Writer, bar, quiet bool) *progressBar {
	p := &progressBar{w: w, bar: bar && !quiet, quiet: quiet, now: time.Now}
	p.start = p.now()
	return p
}

// Write passes a log record through, above the bar.
func (p *progressBar) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	n, err := p.w.Write(b)
	p.draw()
	return n, err
}

// Begin shows the bar (or nothing yet) for total targets.
func (p *progressBar) Begin(total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total = total
	if p.bar && p.stopTick == nil {
		// Redraw every second so the ETA counts down between targets.
		p.stopTick = make(chan struct{})
		go func() {
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				select {
				case <-t.C:
					p.mu.Lock()
					p.clear()
					p.draw()
					p.mu.Unlock()
				case <-p.stopTick:
					return
				}
			}
		}()
	}
	p.draw()
}

// Scanning records that the scans are about to start: the ETA counts
// from now.
func (p *progressBar) Scanning() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.scanStart = p.now()
}

// Started records a scan that started.
func (p *progressBar) Started() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running++
	p.clear()
	p.draw()
}

// Note shows a message (an interrupt) whatever the mode, except quiet.
func (p *progressBar) Note(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	fmt.Fprintf(p.w, "verifymcp: %s\n", msg)
	p.draw()
}

// Finish records a target that reached its final status; scanned says
// it was one of the scans started (see Started).
func (p *progressBar) Finish(it *batch.Item, scanned bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	switch it.Status {
	case batch.StatusFailed:
		p.failed++
	case batch.StatusSkipped:
		p.skipped++
	}
	if scanned {
		p.scanned++
		p.running--
	}
	// The estimate is made when a target is dealt with (once a scan has
	// finished) and counts down until the next one is.
	if eta, ok := etaOf(p.scanned, p.total-p.done+p.scanned, p.now().Sub(p.scanStart)); ok {
		p.etaAt = p.now().Add(eta)
	}
	p.clear()
	if !p.bar && !p.quiet {
		fmt.Fprintf(p.w, "[%5.1fs] %d/%d %s\n", p.now().Sub(p.start).Seconds(), p.done, p.total, describeItem(it))
	}
	p.draw()
}

// describeItem is the progress line of a finished target.
func describeItem(it *batch.Item) string {
	var b strings.Builder
	b.WriteString(it.Status)
	b.WriteString(" ")
	b.WriteString(it.Target)
	if it.Version != "" && !strings.HasSuffix(it.Target, "@"+it.Version) {
		fmt.Fprintf(&b, " (%s@%s)", it.Name, it.Version)
	}
	if it.Outcome != "" {
		b.WriteString(" outcome=" + it.Outcome)
	}
	if it.Score != nil {
		fmt.Fprintf(&b, " score=%.1f", *it.Score)
	}
	if it.SkipReason != "" {
		b.WriteString(" reason=" + strings.ReplaceAll(it.SkipReason, " ", "_"))
	}
	if it.RunID != "" {
		b.WriteString(" run=" + it.RunID)
	}
	if ms, ok := it.PhasesMS["scan"]; ok {
		fmt.Fprintf(&b, " took=%.1fs", float64(ms)/1000)
	}
	if it.Error != "" {
		b.WriteString(": " + it.Error)
	}
	return b.String()
}

// Close removes the bar for good, leaving its last state on screen.
func (p *progressBar) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	if p.stopTick != nil {
		close(p.stopTick)
	}
	if p.shown {
		fmt.Fprintln(p.w)
		p.shown = false
	}
}

// clear erases the bar; the caller holds mu.
func (p *progressBar) clear() {
	if p.shown {
		io.WriteString(p.w, "\r\x1b[K")
		p.shown = false
	}
}

// draw shows the bar; the caller holds mu.
func (p *progressBar) draw() {
	if !p.bar || p.closed || p.total == 0 {
		return
	}
	eta := max(0, p.etaAt.Sub(p.now())).Round(time.Second)
	io.WriteString(p.w, renderBar(p.done, p.total, p.failed, p.skipped, p.running, eta, !p.etaAt.IsZero()))
	p.shown = true
}

// etaOf estimates the time left from the scans finished so far: the
// rate measured since scanning began, which already reflects concurrency.
// toScan counts every target not dealt with yet as a scan to come: the
// targets resolve as the batch goes, and one found stored or failing later
// shortens the estimate then.
func etaOf(scanned, toScan int, elapsed time.Duration) (time.Duration, bool) {
	if scanned <= 0 || elapsed <= 0 {
		return 0, false
	}
	left := max(0, toScan-scanned)
	return (elapsed * time.Duration(left) / time.Duration(scanned)).Round(time.Second), true
}

// barWidth is the number of cells of the progress bar.
const barWidth = 20

func renderBar(done, total, failed, skipped, running int, eta time.Duration, etaOK bool) string {
	filled := 0
	if total > 0 {
		filled = min(barWidth, done*barWidth/total)
	}
	s := fmt.Sprintf("[%s%s] %d/%d done (%d failed, %d skipped)", strings.Repeat("#", filled), strings.Repeat(".", barWidth-filled), done, total, failed, skipped)
	if running > 0 {
		s += fmt.Sprintf(" %d running", running)
	}
	switch {
	case done == total:
	case etaOK:
		s += " ETA " + eta.String()
	default:
		s += " ETA --"
	}
	return s
}
