package sandbox

import (
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/evidence"
)

func TestLearnedFrom(t *testing.T) {
	exit := func(n int) *int { return &n }
	sd := pySdist{Name: "pandoc", Version: "2.4", Filename: "pandoc-2.4.tar.gz"}
	ok := &pyMetadata{Name: "Pandoc", Version: "2.4", RequiresDist: []string{"plumbum", "ply"}}
	tests := []struct {
		name string
		sd   pySdist
		b    pyMetaBuild
		want string // "" for usable metadata, else a part of why not
	}{
		{"usable", sd, pyMetaBuild{pyRun: pyRun{Ran: true, ExitCode: exit(0)}, Metadata: ok}, ""},
		{"a local sdist takes the built version", pySdist{Name: "x", Filename: "x-1.tar.gz", Local: true},
			pyMetaBuild{pyRun: pyRun{Ran: true, ExitCode: exit(0)}, Metadata: &pyMetadata{Name: "x", Version: "1"}}, ""},
		{"failed", sd, pyMetaBuild{pyRun: pyRun{Ran: true, ExitCode: exit(1), OutputTail: "Traceback\nRuntimeError: no\nhint: x\n"}},
			"the metadata build of pandoc-2.4.tar.gz failed (exit 1: RuntimeError: no)"},
		{"timed out", sd, pyMetaBuild{pyRun: pyRun{Ran: true, TimedOut: true}}, "did not end within the install timeout"},
		{"no time left", sd, pyMetaBuild{pyRun: pyRun{TimedOut: true}}, "no time was left"},
		{"not run at all", sd, pyMetaBuild{}, "failed (exit -1"},
		{"unreadable", sd, pyMetaBuild{pyRun: pyRun{Ran: true, ExitCode: exit(0)}, Error: "the build gave 2 wheels"}, "could not be read: the build gave 2 wheels"},
		{"another name", sd, pyMetaBuild{pyRun: pyRun{Ran: true, ExitCode: exit(0)}, Metadata: &pyMetadata{Name: "pandocx", Version: "2.4"}}, `named "pandocx"`},
		{"a dependency by URL", sd, pyMetaBuild{pyRun: pyRun{Ran: true, ExitCode: exit(0)}, Metadata: &pyMetadata{Name: "pandoc", Version: "2.4",
			RequiresDist: []string{"ply", "evil @ https://example.com/evil-1.0.tar.gz ; python_version > '3'"}}}, "declares a dependency by URL (evil @ https://example.com/evil-1.0.tar.gz"},
		{"a marker with @ is not a URL", sd, pyMetaBuild{pyRun: pyRun{Ran: true, ExitCode: exit(0)}, Metadata: &pyMetadata{Name: "pandoc", Version: "2.4",
			RequiresDist: []string{"ply ; platform_release == 'x@y'"}}}, ""},
		{"another version", sd, pyMetaBuild{pyRun: pyRun{Ran: true, ExitCode: exit(0)}, Metadata: &pyMetadata{Name: "pandoc", Version: "0.0.0"}}, `version "0.0.0"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, why := learnedFrom(tc.sd, tc.b)
			if tc.want == "" {
				if m == nil || why != "" || m.RequiresDist == nil {
					t.Fatalf("learnedFrom = %+v, %q; want metadata", m, why)
				}
				return
			}
			if m != nil || !strings.Contains(why, tc.want) {
				t.Errorf("learnedFrom = %+v, %q; want %q", m, why, tc.want)
			}
		})
	}
}

func TestBuildWhy(t *testing.T) {
	uvOut := "Building wheel from source distribution...\nTraceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n" +
		"RuntimeError: vmdynmeta: this build is broken\nerror: Failed to build `/work/tree/.verifymcp/dist/b-0.0.1.tar.gz`\n" +
		"  cause: The build backend returned an error\n  cause: Call to `setuptools.build_meta:__legacy__.get_requires_for_build_wheel` failed (exit status: 1)\n\n" +
		"hint: Build failures usually indicate a problem with the package or the build environment\n"
	for _, tc := range []struct{ out, want string }{
		{uvOut, "RuntimeError: vmdynmeta: this build is broken"},
		{"error: No such file\n  cause: x\n", "cause: x"},
		{"ModuleNotFoundError: No module named 'numpy'\n", "ModuleNotFoundError: No module named 'numpy'"},
		{"", ""},
	} {
		if got := buildWhy(tc.out); got != tc.want {
			t.Errorf("buildWhy(%.40q) = %q, want %q", tc.out, got, tc.want)
		}
	}
}

func TestMetaKey(t *testing.T) {
	if got := metaKey(pySdist{Name: "Foo_Bar", Version: "1.0", Filename: "Foo_Bar-1.0.tar.gz"}); got != "foo-bar==1.0" {
		t.Errorf("metaKey = %q", got)
	}
	if got := metaKey(pySdist{Name: "x", Filename: "x-1.tar.gz", Local: true}); got != "file x-1.tar.gz" {
		t.Errorf("metaKey = %q", got)
	}
}

// TestPyDynamicRecord: the metadata builds come after the build step's
// scripts, and their windows point at them.
func TestPyDynamicRecord(t *testing.T) {
	w := &watch{windows: []scriptWindow{{Index: 0, Package: "pandoc"}, {Index: 0, Package: "pandoc"}}}
	dm := &pyDynamic{w: w, winPos: []int{0},
		scripts: []evidence.Script{{Package: "pandoc", Event: "metadata"}},
		learned: []evidence.LearnedMetadata{{Package: "pandoc", Version: "2.4", RequiresDist: []string{"plumbum", "ply"}, Round: 1}}}
	inst := &evidence.Install{Scripts: []evidence.Script{{Package: "pandoc", Event: "build"}}}
	dm.record(inst)
	if len(inst.Scripts) != 2 || inst.Scripts[1].Event != "metadata" || len(inst.LearnedMetadata) != 1 {
		t.Fatalf("scripts %+v, learned %+v", inst.Scripts, inst.LearnedMetadata)
	}
	if w.windows[0].Index != 1 || w.windows[1].Index != 0 {
		t.Errorf("windows %+v: want the metadata build's at 1, the build's at 0", w.windows)
	}
	var nilDM *pyDynamic
	nilDM.record(inst)
	dm.record(nil)
}

func TestMetaLimitIsScannerLimit(t *testing.T) {
	fr := metaLimit("the metadata build of b-1.tar.gz failed (exit 1: RuntimeError: no)", "")
	b := &evidence.Bundle{Install: &evidence.Install{Outcome: evidence.InstallFailed, FailedStep: evidence.StepFetch, Error: pyFetchFailure(fr)}}
	lim, ok := evidence.ScannerLimit(b)
	if !ok || lim.Kind != evidence.LimitFetch || !strings.Contains(lim.Reason, "b-1.tar.gz failed") {
		t.Errorf("limit %+v, %v", lim, ok)
	}
}

func TestMergeWatch(t *testing.T) {
	a := evidence.Watch{Phase: "scripts", WatchedMS: 10, Tracer: "ok", Files: "ok", Disk: []evidence.DiskUse{{Place: "tree", UsedBytes: 5}}}
	b := evidence.Watch{Phase: "scripts", WatchedMS: 20, Tracer: "attached to no process", Files: "ok",
		Disk: []evidence.DiskUse{{Place: "tree", UsedBytes: 3, Full: true}, {Place: "home", UsedBytes: 1}}, Dropped: map[string]int{"file": 2}}
	m := mergeWatch(a, b)
	if m.WatchedMS != 30 || m.Tracer != "attached to no process" || len(m.Disk) != 2 || m.Disk[0].UsedBytes != 5 || !m.Disk[0].Full || m.Dropped["file"] != 2 {
		t.Errorf("merged %+v", m)
	}
	if got := mergeWatch(evidence.Watch{}, b); got.WatchedMS != 20 {
		t.Errorf("first step: %+v", got)
	}
}
