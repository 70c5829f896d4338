//go:build docker

package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/pipeline"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/sandbox/image"
)

// interpProbeServer is harmlessServer, but it says which Python runs it:
// its serverInfo version is platform.python_version().
var interpProbeServer = strings.Replace(strings.Replace(harmlessServer, "import json\n", "import json\nimport platform\n", 1),
	`"serverInfo": {"name": "harmless-mcp", "version": "1.0.0"}`, `"serverInfo": {"name": "interp-probe-mcp", "version": platform.python_version()}`, 1)

// interpProbeWheel builds interp_probe_mcp-1.0.0-py3-none-any.whl, a
// stdlib-only MCP server whose METADATA declares requiresPython (and the
// given Requires-Dist lines), in dir.
func interpProbeWheel(t *testing.T, requiresPython string, requiresDist ...string) (string, []byte) {
	t.Helper()
	meta := "Summary: Says which Python runs it\nRequires-Python: " + requiresPython + "\n"
	for _, d := range requiresDist {
		meta += "Requires-Dist: " + d + "\n"
	}
	return pyWheel(t, "interp_probe_mcp", "1.0.0", interpProbeServer, meta, nil, "")
}

// interpSandbox offers every Python of the recipe, building the image of
// one a target asks for when the engine lacks it, as a scan does.
func interpSandbox(t *testing.T) *sandbox.Sandbox {
	return newSandbox(t, func(o *sandbox.Options) {
		o.Behavior = true
		o.HandshakeTimeout = 30 * time.Second
		o.PythonImage = func(ctx context.Context, version string) (image.Image, error) {
			img, _, err := image.EnsurePython(ctx, engine, image.Options{Progress: os.Stderr}, version)
			return img, err
		}
	})
}

// TestPythonRequires312RunsOn313: a release that needs Python 3.12 or
// newer installs and runs on the offered 3.13 (trixie's), and the evidence
// says so.
func TestPythonRequires312RunsOn313(t *testing.T) {
	py313 := sandbox.Pythons()[len(sandbox.Pythons())-1]
	if !strings.HasPrefix(py313.Version, "3.13.") {
		t.Fatalf("offered Pythons %+v: want 3.13 last", sandbox.Pythons())
	}
	path, data := interpProbeWheel(t, ">=3.12")
	s := interpSandbox(t)
	id := runID(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	started := time.Now()
	res, err := s.Scan(ctx, id, sandbox.Target{Ecosystem: "pypi", Name: "interp-probe-mcp", Version: "1.0.0", Tarball: data, Filename: filepath.Base(path)})
	if err != nil {
		t.Fatal(err)
	}
	assertClean(t, id)
	t.Logf("scan on %s in %s", py313.Version, time.Since(started).Round(100*time.Millisecond))
	if res.Outcome != evidence.OutcomeOK {
		t.Fatalf("outcome %s; install %+v; session %+v", res.Outcome, res.Install, res.Session)
	}
	if p := res.Install.Python; p == nil || p.Version != py313.Version || p.RequiresPython != ">=3.12" || !strings.Contains(p.Rule, "newest") {
		t.Errorf("install.python = %+v, want %s for >=3.12 by the newest rule", p, py313.Version)
	}
	if res.Image == nil || res.Image.Ref != py313.Image || res.Image.ID == "" {
		t.Errorf("result image = %+v, want %s with its ID", res.Image, py313.Image)
	}
	if res.Contract == nil || res.Contract.ServerInfo.Version != py313.Version {
		t.Errorf("the server did not run on %s: server info %+v", py313.Version, res.Contract)
	}
}

// TestPythonRequiresBelow39NotAssessed: a release no offered Python
// satisfies is not installed; the evidence shows a scanner limit that
// names the requirement and the Pythons offered, and no finding is raised
// on the install.
func TestPythonRequiresBelow39NotAssessed(t *testing.T) {
	path, _ := interpProbeWheel(t, "<3.9")
	s := interpSandbox(t)
	target, err := pipeline.ParseTarget(path)
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
	scanned, err := p.Scan(context.Background(), rt, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := scanned.Bundle
	assertClean(t, b.Run.ID)
	if b.Sandbox.Outcome != evidence.OutcomeInstallFailed || b.Install == nil || b.Install.Python == nil || b.Install.Python.Version != "" {
		t.Fatalf("outcome %s, install %+v", b.Sandbox.Outcome, b.Install)
	}
	lim, ok := evidence.ScannerLimit(b)
	if !ok || lim.Kind != evidence.LimitInterpreter || lim.Signal != evidence.SignalInstall {
		t.Fatalf("ScannerLimit = %+v, %v; want an interpreter limit on the install", lim, ok)
	}
	for _, want := range []string{"requires Python <3.9", "CPython " + sandbox.Pythons()[0].Version} {
		if !strings.Contains(lim.Reason, want) {
			t.Errorf("limit reason %q lacks %q", lim.Reason, want)
		}
	}
	if sig := b.Signals[evidence.SignalInstall]; sig.State != evidence.StateNotAssessed || !strings.Contains(sig.Reason, "<3.9") {
		t.Errorf("install signal = %+v, want not_assessed with the reason", sig)
	}
	for _, f := range rubric.Evaluate(b, rubric.Current()).Findings {
		if strings.HasPrefix(f.Code, "pkg.install.") || strings.HasPrefix(f.Code, "pkg.session.") {
			t.Errorf("finding on an install the scanner could not do: %s: %s", f.Code, f.Message)
		}
	}
	t.Logf("limit: %s", lim.Reason)
}

// TestPythonRequiresBelow312RunsOn311: a release that 3.13 does not
// satisfy but 3.11 does runs on the default image's 3.11.
func TestPythonRequiresBelow312RunsOn311(t *testing.T) {
	py311 := sandbox.Pythons()[0]
	path, data := interpProbeWheel(t, ">=3.10,<3.12")
	s := interpSandbox(t)
	id := runID(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	started := time.Now()
	res, err := s.Scan(ctx, id, sandbox.Target{Ecosystem: "pypi", Name: "interp-probe-mcp", Version: "1.0.0", Tarball: data, Filename: filepath.Base(path)})
	if err != nil {
		t.Fatal(err)
	}
	assertClean(t, id)
	t.Logf("scan on %s in %s", py311.Version, time.Since(started).Round(100*time.Millisecond))
	if res.Outcome != evidence.OutcomeOK || res.Image != nil {
		t.Fatalf("outcome %s, image %+v; install %+v; session %+v", res.Outcome, res.Image, res.Install, res.Session)
	}
	if p := res.Install.Python; p == nil || p.Version != py311.Version {
		t.Errorf("install.python = %+v, want %s", p, py311.Version)
	}
	if res.Contract == nil || res.Contract.ServerInfo.Version != py311.Version {
		t.Errorf("the server did not run on %s: %+v", py311.Version, res.Contract)
	}
}

// TestPythonDependencyNeedsNewer: a release that admits 3.11 runs on the
// default, but when a dependency needs a newer Python (Django 6 needs
// 3.12) the default cannot resolve the tree, and the release is installed
// again on 3.13, with the reason in the evidence.
func TestPythonDependencyNeedsNewer(t *testing.T) {
	py313 := sandbox.Pythons()[len(sandbox.Pythons())-1]
	path, data := interpProbeWheel(t, ">=3.10", "django>=6")
	s := interpSandbox(t)
	id := runID(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	res, err := s.Scan(ctx, id, sandbox.Target{Ecosystem: "pypi", Name: "interp-probe-mcp", Version: "1.0.0", Tarball: data, Filename: filepath.Base(path)})
	if err != nil {
		t.Fatal(err)
	}
	assertClean(t, id)
	if res.Outcome != evidence.OutcomeOK {
		t.Fatalf("outcome %s; install %+v", res.Outcome, res.Install)
	}
	if p := res.Install.Python; p == nil || p.Version != py313.Version || !strings.Contains(p.Rule, "could not resolve the tree") {
		t.Errorf("install.python = %+v, want %s after the default could not resolve the tree", p, py313.Version)
	}
	if res.Contract == nil || res.Contract.ServerInfo.Version != py313.Version {
		t.Errorf("the server did not run on %s: %+v", py313.Version, res.Contract)
	}
}
