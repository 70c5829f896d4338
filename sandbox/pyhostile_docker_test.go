//go:build docker

package sandbox_test

import (
	"strings"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/sandbox"
)

// The hostile Python fixtures of issue 35 (items 1, 4 and 5): one flaw each,
// built here, scanned from local files with behaviour watched.

// hostileWheel writes NAME-1.0.0-py3-none-any.whl: the harmless server as
// module NAME, the given extra members, and a RECORD listing every member
// plus recordExtra lines.
func hostileWheel(t *testing.T, name string, extra []member, recordExtra string) string {
	t.Helper()
	path, _ := pyWheel(t, name, "1.0.0", harmlessServer, "", extra, recordExtra)
	return path
}

// hostileSdist writes NAME-1.0.0.tar.gz with static metadata and the
// given extra members (names as written, unchecked).
func hostileSdist(t *testing.T, name string, extra []member) string {
	t.Helper()
	root := name + "-1.0.0/"
	dist := strings.ReplaceAll(name, "_", "-")
	return pySdist(t, name+"-1.0.0.tar.gz", append([]member{
		{root + "PKG-INFO", "Metadata-Version: 2.2\nName: " + dist + "\nVersion: 1.0.0\n"},
		{root + "pyproject.toml", "[build-system]\nrequires = [\"setuptools>=61\"]\nbuild-backend = \"setuptools.build_meta\"\n\n" +
			"[project]\nname = \"" + dist + "\"\nversion = \"1.0.0\"\n"},
	}, extra...))
}

// scanLocal scans a local file with behaviour watched and returns the
// bundle and its findings under the current rubric, by code.
func scanLocal(t *testing.T, file string) (*evidence.Bundle, map[string][]rubric.Finding) {
	t.Helper()
	s := newSandbox(t, func(o *sandbox.Options) {
		o.Behavior = true
		o.HandshakeTimeout = 30 * time.Second
	})
	b, _ := scanLocalLock(t, s, file)
	byCode := map[string][]rubric.Finding{}
	for _, f := range rubric.Evaluate(b, rubric.Current()).Findings {
		byCode[f.Code] = append(byCode[f.Code], f)
	}
	return b, byCode
}

// TestPyPIArchivePathEscape (item 4): a wheel with a ../ member, an
// absolute member and a RECORD line outside the tree installs (uv skips
// such members), and each is named by a finding; an sdist uv refuses for
// an unsafe member fails with uv's reason, not "metadata not static", and
// is the package's failure, not the scanner's limit.
func TestPyPIArchivePathEscape(t *testing.T) {
	t.Run("wheel", func(t *testing.T) {
		b, codes := scanLocal(t, hostileWheel(t, "escape_wheel_mcp", []member{
			{"../../escaped.txt", "pwned\n"},
			{"/tmp/absolute-escape.txt", "pwned\n"},
		}, "../../../record-escape.txt,sha256=AAAA,3\n"))
		if b.Install.Outcome != evidence.InstallOK {
			t.Fatalf("install %s: %s", b.Install.Outcome, b.Install.Error)
		}
		got := map[string]string{}
		for _, e := range b.Install.ArchiveEscapes {
			got[e.Where+" "+e.Member] = e.Why
		}
		want := map[string]string{"archive ../../escaped.txt": "parent", "archive /tmp/absolute-escape.txt": "absolute", "record ../../../record-escape.txt": "parent"}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("escape %q: %q, want %q (all: %+v)", k, got[k], v, b.Install.ArchiveEscapes)
			}
		}
		if n := len(codes[rubric.CodeArchivePathEscape]); n != 3 {
			t.Errorf("%d path_escape findings, want 3: %+v", n, codes[rubric.CodeArchivePathEscape])
		}
	})
	t.Run("sdist", func(t *testing.T) {
		b, codes := scanLocal(t, hostileSdist(t, "escape_sdist_mcp", []member{{"../../sdist-escaped.txt", "pwned\n"}}))
		if b.Install.Outcome != evidence.InstallFailed || b.Install.FailedStep != evidence.StepFetch {
			t.Fatalf("install %s at %s: %s; want failed at the fetch step", b.Install.Outcome, b.Install.FailedStep, b.Install.Error)
		}
		if !strings.Contains(b.Install.Error, `unsafe member path "../../sdist-escaped.txt"`) || strings.Contains(b.Install.Error, "build backend") {
			t.Errorf("install error %q, want uv's refusal naming the member", b.Install.Error)
		}
		if lim, ok := evidence.ScannerLimit(b); ok {
			t.Errorf("an archive uv refuses is read as the scanner's limit: %+v", lim)
		}
		if len(codes[rubric.CodeArchivePathEscape]) != 1 || len(codes[rubric.CodeInstallFailed]) != 1 {
			t.Errorf("findings %v, want one path_escape and one install.failed", keysOf(codes))
		}
	})
}

// TestPyPIStartupHooks (item 5): a .pth file with an import line and a
// sitecustomize module in a wheel are listed as install evidence, each with
// the distribution that installed it, and each is a finding; the sandbox's
// own venv holds none.
func TestPyPIStartupHooks(t *testing.T) {
	b, codes := scanLocal(t, hostileWheel(t, "hook_wheel_mcp", []member{
		{"hook_wheel_mcp.pth", "# a comment\nimport os; os.environ.setdefault('HOOKED', '1')\n"},
		{"plain_path.pth", "some/dir\n"},
		{"sitecustomize.py", "import sys\n"},
	}, ""))
	if b.Install.Outcome != evidence.InstallOK {
		t.Fatalf("install %s: %s", b.Install.Outcome, b.Install.Error)
	}
	got := map[string]evidence.StartupHook{}
	for _, h := range b.Install.StartupHooks {
		got[h.Path] = h
	}
	if h := got["hook_wheel_mcp.pth"]; h.Kind != "pth" || h.Package != "hook_wheel_mcp" || !strings.HasPrefix(h.Line, "import os;") {
		t.Errorf(".pth hook %+v", h)
	}
	if h := got["sitecustomize.py"]; h.Kind != "sitecustomize" || h.Package != "hook_wheel_mcp" {
		t.Errorf("sitecustomize hook %+v", h)
	}
	if _, ok := got["plain_path.pth"]; ok || len(got) != 2 {
		t.Errorf("hooks %+v, want exactly the import .pth and sitecustomize", b.Install.StartupHooks)
	}
	if n := len(codes[rubric.CodeStartupHook]); n != 2 {
		t.Errorf("%d startup_hook findings, want 2", n)
	}
	if tc := b.Install.TreeCheck; tc == nil || !tc.Match || tc.Files == 0 || tc.Checked != tc.Digest {
		t.Errorf("tree check %+v, want the installed tree digested and unchanged when the server started", tc)
	}
	if len(codes[rubric.CodeTreeModified]) != 0 {
		t.Errorf("tree.modified on an unchanged tree: %+v", codes[rubric.CodeTreeModified])
	}
}

func keysOf(m map[string][]rubric.Finding) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestPyPIBuildFloodFolds (item 6): a build that writes 500 files into its
// home and fails gives one file.write finding for the directory, with the
// count, and its failure does not say behaviour was unwatched.
func TestPyPIBuildFloodFolds(t *testing.T) {
	b, codes := scanLocal(t, hostileSdist(t, "flood_sdist_mcp", []member{{"flood_sdist_mcp-1.0.0/setup.py", `import os, sys
d = os.path.join(os.path.expanduser("~"), ".cache", "flood")
os.makedirs(d, exist_ok=True)
for i in range(500):
    with open(os.path.join(d, "f%03d" % i), "w") as f:
        f.write("x")
sys.exit(1)
`}}))
	if len(b.Install.Scripts) != 1 || !b.Install.Scripts[0].Ran || b.Install.Scripts[0].ExitCode == 0 {
		t.Fatalf("build %+v, want it run and failed", b.Install.Scripts)
	}
	writes := codes[rubric.CodeFileWrite]
	if len(writes) != 1 || !strings.Contains(writes[0].Message, "500 files in ~/.cache/flood") {
		t.Errorf("file.write findings %+v, want one for the 500 files of ~/.cache/flood", writes)
	}
	for _, f := range codes[rubric.CodeScriptsFailed] {
		if strings.Contains(f.Message, "not watched") {
			t.Errorf("the watched build's failure says it was not watched: %s", f.Message)
		}
	}
	if n := len(codes[rubric.CodeScriptsFailed]); n != 1 {
		t.Errorf("%d scripts.failed findings, want 1", n)
	}
}
