//go:build docker

package sandbox_test

import (
	"testing"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
)

// leakySdist builds leaky_mcp-1.0.0.tar.gz: an sdist whose setup.py, run
// by the build, starts a daemon in a session of its own (out of the
// build's process group) that would outlive the build.
func leakySdist(t *testing.T) string {
	t.Helper()
	const root = "leaky_mcp-1.0.0/"
	return pySdist(t, "leaky_mcp-1.0.0.tar.gz", []member{
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
	})
}

// TestPyPIBuildLeavesNothingRunning: a daemon an sdist's build starts in a
// session of its own (setsid) is killed when the build ends, before the
// install of the tree, and the build is recorded as having left it
// running; the server still starts from the tree the installer wrote.
func TestPyPIBuildLeavesNothingRunning(t *testing.T) {
	b, codes := scanLocal(t, leakySdist(t))
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
	if f := codes[rubric.CodeScriptsLeftRunning]; len(f) != 1 || f[0].Subject != "leaky-mcp" {
		t.Errorf("scripts.left_running findings %+v, want one about leaky-mcp", f)
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
