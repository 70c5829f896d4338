package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// progressHandler prints slog records as short progress lines on stderr:
// "verifymcp: message key=value ...". Stdout stays reserved for the report.
type progressHandler struct {
	mu    *sync.Mutex
	w     io.Writer
	level slog.Level
	attrs []slog.Attr
	start time.Time
}

func newProgressHandler(w io.Writer, level slog.Level) *progressHandler {
	return &progressHandler{mu: &sync.Mutex{}, w: w, level: level, start: time.Now()}
}

func (h *progressHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

// internalAttrs are attributes that name verifymcp's own objects (the run
// id, the bundle file): below a warning they show with --verbose only.
var internalAttrs = map[string]bool{"run": true, "bundle": true}

func (h *progressHandler) Handle(_ context.Context, r slog.Record) error {
	verbose := h.level <= slog.LevelDebug
	var b strings.Builder
	fmt.Fprintf(&b, "[%5.1fs] ", time.Since(h.start).Seconds())
	if r.Level >= slog.LevelWarn {
		b.WriteString(strings.ToLower(r.Level.String()) + ": ")
	}
	b.WriteString(r.Message)
	write := func(a slog.Attr) bool {
		if internalAttrs[a.Key] && r.Level < slog.LevelWarn && !verbose {
			return true
		}
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	}
	for _, a := range h.attrs {
		write(a)
	}
	r.Attrs(write)
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

func (h *progressHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), attrs...)
	return &c
}

func (h *progressHandler) WithGroup(string) slog.Handler { return h }

// lineWriter turns writes into log lines at level (for image build
// output: Info for `sandbox build`, where it is the progress; Debug for
// the build a scan starts, whose progress is the line saying so).
type lineWriter struct {
	log   *slog.Logger
	level slog.Level
	buf   []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i := strings.IndexByte(string(l.buf), '\n')
		if i < 0 {
			break
		}
		if line := strings.TrimSpace(string(l.buf[:i])); line != "" {
			l.log.Log(context.Background(), l.level, line)
		}
		l.buf = l.buf[i+1:]
	}
	return len(p), nil
}
