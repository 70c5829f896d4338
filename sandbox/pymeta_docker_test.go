//go:build docker

package sandbox_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/pipeline"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/sandbox"
)

// dynMetaWheel builds vmdynmeta_fix-0.0.1-py3-none-any.whl: the harmless
// server, depending on pandoc==2.4, a real sdist on PyPI whose
// dependencies (plumbum, ply) only its setup.py declares.
func dynMetaWheel(t *testing.T) string {
	return depWheel(t, "vmdynmeta_fix", "pandoc==2.4")
}

// depWheel builds NAME-0.0.1-py3-none-any.whl: the harmless server,
// depending on deps.
func depWheel(t *testing.T, name string, deps ...string) string {
	t.Helper()
	meta := "Summary: A test server with dynamic-metadata dependencies\n"
	for _, d := range deps {
		meta += "Requires-Dist: " + d + "\n"
	}
	path, _ := pyWheel(t, name, "0.0.1", harmlessServer, meta, nil, "")
	return path
}

// brokenMetaSdist builds vmdynmeta_broken-0.0.1.tar.gz: an sdist with no
// static metadata (PKG-INFO 1.0, no pyproject.toml) whose setup.py fails,
// so that its metadata cannot be built.
func brokenMetaSdist(t *testing.T) string {
	t.Helper()
	const root = "vmdynmeta_broken-0.0.1/"
	return pySdist(t, "vmdynmeta_broken-0.0.1.tar.gz", []member{
		{root + "PKG-INFO", "Metadata-Version: 1.0\nName: vmdynmeta-broken\nVersion: 0.0.1\n"},
		{root + "setup.py", "raise RuntimeError('vmdynmeta: this build is broken')\n"},
		{root + "vmdynmeta_broken/__init__.py", harmlessServer},
	})
}

// roundLog logs the metadata rounds' timings to the test.
type roundLog struct{ t *testing.T }

func (h roundLog) Enabled(context.Context, slog.Level) bool { return true }
func (h roundLog) Handle(_ context.Context, r slog.Record) error {
	if !strings.HasPrefix(r.Message, "PyPI") {
		return nil
	}
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool { fmt.Fprintf(&b, " %s=%v", a.Key, a.Value); return true })
	h.t.Log(b.String())
	return nil
}
func (h roundLog) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h roundLog) WithGroup(string) slog.Handler      { return h }

func scanLocalLock(t *testing.T, s *sandbox.Sandbox, file string) (*evidence.Bundle, string) {
	t.Helper()
	target, err := pipeline.ParseTarget(file)
	if err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.New(pipeline.Config{Scanner: s, ToolVersion: "test", Rubric: rubric.Current()})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := p.Resolve(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	scanned, err := p.Scan(ctx, rt, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	assertClean(t, scanned.Bundle.Run.ID)
	return scanned.Bundle, string(scanned.Lockfile)
}

// TestPyPIDynamicMetadata: a wheel that depends on pandoc==2.4, whose
// dependencies only its setup.py declares, installs: the fetch step asks
// for its metadata, the metadata step builds it with no network, watched,
// and the next fetch resolves the tree with what it declared. The
// metadata build is in the scripts evidence, its processes are the
// build's (not the sandbox's, not unknown), the tree is not cached, and no
// finding blames the sandbox.
func TestPyPIDynamicMetadata(t *testing.T) {
	s := newSandbox(t, func(o *sandbox.Options) {
		o.Behavior = true
		o.InstallTimeout = 240 * time.Second
		o.HandshakeTimeout = 30 * time.Second
		o.TreeCacheDir = t.TempDir()
		o.Logger = slog.New(roundLog{t})
	})
	started := time.Now()
	b, resLock := scanLocalLock(t, s, dynMetaWheel(t))
	t.Logf("scan %s: fetch (with the metadata rounds) %d ms, build step %d ms", time.Since(started).Round(100*time.Millisecond), b.Install.FetchMS, b.Install.ScriptsMS)
	if b.Sandbox.Outcome != evidence.OutcomeOK {
		t.Fatalf("outcome %s; install %+v", b.Sandbox.Outcome, b.Install)
	}
	if b.Install.TreeCache != nil {
		t.Errorf("a tree resolved with learned metadata was cached: %+v", b.Install.TreeCache)
	}
	if len(b.Install.LearnedMetadata) != 1 {
		t.Fatalf("learned metadata %+v, want pandoc's", b.Install.LearnedMetadata)
	}
	lm := b.Install.LearnedMetadata[0]
	if lm.Package != "pandoc" || lm.Version != "2.4" || lm.Round != 1 || !slices.Contains(lm.RequiresDist, "plumbum") || !slices.Contains(lm.RequiresDist, "ply") {
		t.Errorf("learned %+v, want pandoc 2.4 requiring plumbum and ply", lm)
	}
	var meta, build *evidence.Script
	for i, sc := range b.Install.Scripts {
		switch {
		case sc.Package == "pandoc" && sc.Event == "metadata":
			meta = &b.Install.Scripts[i]
		case sc.Package == "pandoc" && sc.Event == "build":
			build = &b.Install.Scripts[i]
		}
	}
	if meta == nil || !meta.Ran || meta.ExitCode != 0 || build == nil || !build.Ran || build.ExitCode != 0 {
		t.Fatalf("scripts %+v: want pandoc's metadata build and its build, both run", b.Install.Scripts)
	}
	t.Logf("metadata build %d ms, build %d ms", meta.DurationMS, build.DurationMS)
	// Lockfile: pandoc and what it declared.
	for _, n := range []string{"vmdynmeta-fix", "pandoc", "plumbum", "ply"} {
		if !strings.Contains(resLock, `name = "`+n+`"`) {
			t.Errorf("the lockfile holds no %s:\n%.3000s", n, resLock)
		}
	}
	// The metadata step's processes: the driver (sandbox), uv (package
	// manager), the build backend (declared), all within pandoc's window.
	var declaredPandoc, uvBuilds int
	for _, pr := range b.Behavior.Processes {
		if pr.Phase != evidence.PhaseScripts {
			continue
		}
		switch {
		case pr.Provenance == evidence.ProvenancePackage || pr.Provenance == "unknown":
			t.Errorf("a build-step process taken for the package's or unknown (%s): %v", pr.Provenance, pr.Argv)
		case pr.Provenance == evidence.ProvenanceDeclared && pr.Package == "pandoc":
			declaredPandoc++
		case pr.Provenance == evidence.ProvenancePackageManager && len(pr.Argv) > 2 && pr.Argv[1] == "build":
			uvBuilds++
		}
	}
	if declaredPandoc < 2 || uvBuilds < 2 {
		t.Errorf("%d declared processes of pandoc and %d uv builds, want the metadata build's and the build's (2 each at least)", declaredPandoc, uvBuilds)
		for _, pr := range b.Behavior.Processes {
			t.Logf("  %s %s %s %s %.100s", pr.Time.Format("15:04:05.000"), pr.Phase, pr.Package, pr.Provenance, strings.Join(pr.Argv, " "))
		}
	}
	var watches int
	for _, w := range b.Behavior.Watches {
		if w.Phase == evidence.PhaseScripts {
			watches++
			if w.Tracer != "ok" || w.Files != "ok" {
				t.Errorf("scripts watch %+v", w)
			}
		}
	}
	if watches != 1 {
		t.Errorf("%d watches of the scripts phase, want one covering both steps", watches)
	}
	for _, f := range rubric.Evaluate(b, rubric.Current()).Findings {
		if strings.HasPrefix(f.Code, "pkg.behavior.") || strings.HasPrefix(f.Code, "pkg.install.failed") || f.Code == "pkg.install.scripts.failed" {
			t.Errorf("finding %s: %s", f.Code, f.Message)
		}
	}
	if b.Contract == nil || len(b.Contract.Tools) != 1 {
		t.Errorf("contract %+v", b.Contract)
	}
}

// TestPyPIDynamicMetadataBroken: a local sdist with no static metadata
// whose setup.py fails: its metadata cannot be built, and the install is
// the scanner's limit (not assessed, with the reason), not a failure of
// the package.
func TestPyPIDynamicMetadataBroken(t *testing.T) {
	s := newSandbox(t, func(o *sandbox.Options) {
		o.Behavior = true
		o.HandshakeTimeout = 30 * time.Second
	})
	b, _ := scanLocalLock(t, s, brokenMetaSdist(t))
	if b.Install == nil || b.Install.Outcome != evidence.InstallFailed || b.Install.FailedStep != evidence.StepFetch {
		t.Fatalf("install %+v: want failed at the fetch step", b.Install)
	}
	lim, ok := evidence.ScannerLimit(b)
	if !ok || lim.Kind != evidence.LimitFetch || !strings.Contains(lim.Reason, "the metadata build of vmdynmeta_broken-0.0.1.tar.gz failed") {
		t.Fatalf("limit %+v, %v; install error %q", lim, ok, b.Install.Error)
	}
	t.Logf("limit: %s", lim.Reason)
	if sig := b.Signals[evidence.SignalInstall]; sig.State != evidence.StateNotAssessed {
		t.Errorf("install signal %+v, want not_assessed", sig)
	}
	var meta *evidence.Script
	for i, sc := range b.Install.Scripts {
		if sc.Event == "metadata" {
			meta = &b.Install.Scripts[i]
		}
	}
	if meta == nil || !meta.Ran || meta.ExitCode == 0 || !strings.Contains(meta.OutputTail, "this build is broken") {
		t.Errorf("scripts %+v: want the failed metadata build with its output", b.Install.Scripts)
	} else {
		t.Logf("metadata build output:\n%s", meta.OutputTail)
	}
	for _, f := range rubric.Evaluate(b, rubric.Current()).Findings {
		if strings.HasPrefix(f.Code, "pkg.install.") && f.Code != "pkg.install.scripts.present" {
			t.Errorf("finding %s (%s): %s", f.Code, f.Severity, f.Message)
		}
		if f.Kind == rubric.KindFinding && (f.Severity == rubric.SeverityHigh || f.Severity == rubric.SeverityCritical) {
			t.Errorf("high finding %s: %s", f.Code, f.Message)
		}
	}
}

// TestPyPIDynamicMetadataUnwatched: the same tree with no behaviour watch
// and no tree cache: the first fetch runs in the run's own tree, and the
// metadata step and the build step share the run's bounded work tree (one
// holder keeps it).
func TestPyPIDynamicMetadataUnwatched(t *testing.T) {
	s := newSandbox(t, func(o *sandbox.Options) {
		o.InstallTimeout = 240 * time.Second
		o.HandshakeTimeout = 30 * time.Second
	})
	b, lock := scanLocalLock(t, s, dynMetaWheel(t))
	if b.Sandbox.Outcome != evidence.OutcomeOK {
		t.Fatalf("outcome %s; install %+v", b.Sandbox.Outcome, b.Install)
	}
	if len(b.Install.LearnedMetadata) != 1 || !strings.Contains(lock, `name = "plumbum"`) {
		t.Errorf("learned %+v; lockfile:\n%.2000s", b.Install.LearnedMetadata, lock)
	}
	t.Logf("fetch (with the metadata rounds) %d ms, build step %d ms", b.Install.FetchMS, b.Install.ScriptsMS)
}

// TestPyPIDynamicMetadataRounds: two dependencies whose metadata only
// their setup.py gives (pandoc==2.4, docopt==0.6.2): uv names one at a
// time, so the tree resolves in two metadata steps; with a bound of one
// step, the tree is the scanner's limit, with the reason.
func TestPyPIDynamicMetadataRounds(t *testing.T) {
	s := newSandbox(t, func(o *sandbox.Options) {
		o.Behavior = true
		o.InstallTimeout = 240 * time.Second
		o.HandshakeTimeout = 30 * time.Second
		o.Logger = slog.New(roundLog{t})
	})
	wheel := depWheel(t, "vmdynmeta_two", "pandoc==2.4", "docopt==0.6.2")
	b, lock := scanLocalLock(t, s, wheel)
	if b.Sandbox.Outcome != evidence.OutcomeOK {
		t.Fatalf("outcome %s; install %+v", b.Sandbox.Outcome, b.Install)
	}
	var rounds []string
	for _, lm := range b.Install.LearnedMetadata {
		rounds = append(rounds, fmt.Sprintf("%d:%s", lm.Round, lm.Package))
	}
	slices.Sort(rounds)
	if len(rounds) != 2 || rounds[0][:2] != "1:" || rounds[1][:2] != "2:" || !strings.Contains(lock, `name = "docopt"`) || !strings.Contains(lock, `name = "ply"`) {
		t.Errorf("learned %v, want docopt and pandoc in rounds 1 and 2; lockfile:\n%.2000s", rounds, lock)
	}
	var metas int
	for _, sc := range b.Install.Scripts {
		if sc.Event == "metadata" {
			metas++
		}
	}
	if metas != 2 {
		t.Errorf("%d metadata builds in the scripts, want 2: %+v", metas, b.Install.Scripts)
	}
	for _, pr := range b.Behavior.Processes {
		if pr.Phase == evidence.PhaseScripts && (pr.Provenance == evidence.ProvenancePackage || pr.Provenance == "unknown") {
			t.Errorf("a build-step process taken for the package's or unknown (%s): %v", pr.Provenance, pr.Argv)
		}
	}
	t.Logf("fetch (with the metadata rounds) %d ms, build step %d ms", b.Install.FetchMS, b.Install.ScriptsMS)

	defer sandbox.SetMaxMetaRounds(1)()
	b, _ = scanLocalLock(t, s, wheel)
	lim, ok := evidence.ScannerLimit(b)
	if b.Install.Outcome != evidence.InstallFailed || !ok || lim.Kind != evidence.LimitFetch || !strings.Contains(lim.Reason, "after 1 metadata steps, the sandbox's bound") {
		t.Errorf("install %+v; limit %+v, %v", b.Install, lim, ok)
	}
	if len(b.Install.LearnedMetadata) != 1 {
		t.Errorf("learned %+v, want the first round's", b.Install.LearnedMetadata)
	}
}
