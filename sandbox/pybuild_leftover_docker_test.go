//go:build docker

package sandbox_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/pipeline"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/sandbox"
)

// leakySdist builds leaky_mcp-1.0.0.tar.gz: an sdist whose setup.py, run
// by the build, starts a daemon in a session of its own (out of the
// build's process group) that would outlive the build.
func leakySdist(t *testing.T) string {
	t.Helper()
	const root = "leaky_mcp-1.0.0/"
	files := []struct{ name, data string }{
		{root + "PKG-INFO", "Metadata-Version: 2.2\nName: leaky-mcp\nVersion: 1.0.0\nSummary: An sdist whose build leaves a daemon\n"},
		{root + "pyproject.toml", "[build-system]\nrequires = [\"setuptools>=61\"]\nbuild-backend = \"setuptools.build_meta\"\n\n" +
			"[project]\nname = \"leaky-mcp\"\nversion = \"1.0.0\"\n\n[project.scripts]\nleaky-mcp = \"leaky_mcp:main\"\n\n" +
			"[tool.setuptools]\npackages = [\"leaky_mcp\"]\n"},
		{root + "setup.py", `import subprocess, sys
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True,
                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
from setuptools import setup
setup()
`},
		{root + "leaky_mcp/__init__.py", harmlessServer},
	}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.data)), ModTime: time.Unix(1700000000, 0)}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(f.data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "leaky_mcp-1.0.0.tar.gz")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPyPIBuildLeavesNothingRunning: a daemon an sdist's build starts in a
// session of its own (setsid) is killed when the build ends, before the
// install of the tree, and the build is recorded as having left it
// running; the server still starts from the tree the installer wrote.
func TestPyPIBuildLeavesNothingRunning(t *testing.T) {
	s := newSandbox(t, func(o *sandbox.Options) {
		o.Behavior = true
		o.HandshakeTimeout = 30 * time.Second
	})
	target, err := pipeline.ParseTarget(leakySdist(t))
	if err != nil {
		t.Fatal(err)
	}
	p := &pipeline.Pipeline{Scanner: s, ToolVersion: "test"}
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
	if b.Sandbox.Outcome != evidence.OutcomeOK {
		t.Fatalf("outcome %s; install %+v", b.Sandbox.Outcome, b.Install)
	}
	var build *evidence.Script
	for i, sc := range b.Install.Scripts {
		if sc.Package == "leaky-mcp" {
			build = &b.Install.Scripts[i]
		}
	}
	if build == nil || !build.Ran || build.ExitCode != 0 {
		t.Fatalf("the sdist's build was not recorded as run: %+v", b.Install.Scripts)
	}
	if !build.LeftRunning {
		t.Errorf("the build's setsid daemon was not recorded as left running: %+v", *build)
	}
	// From rubric v12 the process left running is a finding of its own.
	var left int
	for _, f := range rubric.Evaluate(b, rubric.Current()).Findings {
		if f.Code == rubric.CodeScriptsLeftRunning && f.Subject == "leaky-mcp" {
			left++
		}
	}
	if left != 1 {
		t.Errorf("%d scripts.left_running findings about leaky-mcp, want 1", left)
	}
	if tc := b.Install.TreeCheck; tc == nil || !tc.Match {
		t.Errorf("tree check %+v, want the installed tree unchanged when the server started", tc)
	}
	// Nothing of the daemon ran after the build step.
	for _, pr := range b.Behavior.Processes {
		if pr.Phase == evidence.PhaseRun && len(pr.Argv) > 2 && pr.Argv[2] == "import time; time.sleep(120)" {
			t.Errorf("the build's daemon was seen in the run phase: %+v", pr)
		}
	}
}
