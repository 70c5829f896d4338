package cli

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestProgressHandler: by default stderr shows progress, warnings and
// errors, not verifymcp's internals (the observer's memory, cache
// volumes, run ids and bundle paths); --verbose shows them all, and
// --quiet only warnings and errors. The internals are logged at Debug
// where they happen (sandbox, pipeline), as here.
func TestProgressHandler(t *testing.T) {
	logAll := func(level slog.Level) string {
		var buf bytes.Buffer
		log := slog.New(newProgressHandler(&buf, level))
		log.Info("resolving", "target", "npm:x@1", "registry", "https://registry.npmjs.org")
		log.Info("install phase", "package", "x@1.0.0")
		log.Debug("observer memory", "rss_bytes", 1234, "usage_bytes", 5678, "peak_bytes", 9012)
		log.Debug("tree cache not used for this scan; fetching into the run's own volume", "volume", "vm-tree-1", "why", "busy")
		log.Debug("removed leftovers of crashed runs", "objects", 2)
		log.Info("scan complete", "outcome", "ok", "run", "20260504t093012z-1", "bundle", "/data/bundles/20260504t093012z-1.json")
		log.Debug("container started", "id", "abc")
		log.Warn("could not write the bundle file", "path", "/data/bundles/x.json", "err", "disk full")
		(&lineWriter{log: log, level: slog.LevelDebug}).Write([]byte("Step 1/9 : FROM scratch\n"))
		(&lineWriter{log: log}).Write([]byte("built image verifymcp-sandbox\n"))
		return buf.String()
	}
	for _, tc := range []struct {
		name      string
		level     slog.Level
		want, not []string
	}{
		{"default", slog.LevelInfo,
			[]string{"resolving target=npm:x@1", "install phase package=x@1.0.0", "scan complete outcome=ok\n", "warn: could not write the bundle file path=/data/bundles/x.json err=disk full", "built image verifymcp-sandbox"},
			[]string{"observer memory", "rss_bytes", "tree cache", "leftovers", "bundle=", "run=", "container started", "Step 1/9"}},
		{"verbose", slog.LevelDebug,
			[]string{"observer memory rss_bytes=1234", "tree cache not used", "removed leftovers of crashed runs objects=2", "bundle=/data/bundles/", "run=20260504t093012z-1", "container started", "Step 1/9"},
			nil},
		{"quiet", slog.LevelWarn,
			[]string{"warn: could not write the bundle file"},
			[]string{"resolving", "install phase", "scan complete", "observer memory"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := logAll(tc.level)
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("stderr lacks %q:\n%s", w, out)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(out, n) {
					t.Errorf("stderr shows %q:\n%s", n, out)
				}
			}
		})
	}
}
