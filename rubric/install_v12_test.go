package rubric

import (
	"fmt"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/evidence"
)

func fileWrite(path string) evidence.FileEvent {
	return evidence.FileEvent{Phase: "run", Path: path, Op: "created"}
}

func codesOf(res Result) map[string][]Finding {
	out := map[string][]Finding{}
	for _, f := range res.Findings {
		out[f.Code] = append(out[f.Code], f)
	}
	return out
}

// TestInstallNamedV12: the hostile suite's install evidence is named from
// rubric v12 (a member outside the tree, a changed tree, a process left
// running, a start-up hook), and rescoring under v11 is unchanged.
func TestInstallNamedV12(t *testing.T) {
	b := pypiBundle(t)
	b.Install.ArchiveEscapes = []evidence.ArchiveEscape{{Package: "evil", Version: "1.0.0", File: "evil-1.0.0-py3-none-any.whl", Member: "../../evil.txt", Where: "archive", Why: "parent"}}
	b.Install.TreeCheck = &evidence.TreeCheck{Files: 10, Digest: "aa", Checked: "bb", Changed: []string{"lib/python3.11/site-packages/x/__init__.py"}}
	b.Install.StartupHooks = []evidence.StartupHook{{Path: "evil.pth", Kind: "pth", Package: "evil", Line: "import os; os.system('id')"}}
	b.Install.Scripts[0].LeftRunning = true

	v11 := Evaluate(b, mustLoad(t, "11"))
	for _, code := range []string{CodeArchivePathEscape, CodeTreeModified, CodeStartupHook, CodeScriptsLeftRunning} {
		if _, ok := findingOf(v11, code); ok {
			t.Errorf("v11 emits %s", code)
		}
	}
	if d := dim(v11, "installability"); d.Score != 100 {
		t.Errorf("v11 installability %v, want 100 as before", d.Score)
	}

	v12 := Evaluate(b, mustLoad(t, "12"))
	got := codesOf(v12)
	for code, want := range map[string]string{
		CodeArchivePathEscape:  `"../../evil.txt", a parent-directory component`,
		CodeTreeModified:       "site-packages/x/__init__.py",
		CodeStartupHook:        "evil.pth, a .pth file with an import line",
		CodeScriptsLeftRunning: "left a process running",
	} {
		if len(got[code]) != 1 || !strings.Contains(got[code][0].Message, want) {
			t.Errorf("%s: %+v, want one finding saying %q", code, got[code], want)
		}
	}
	if f := got[CodeArchivePathEscape]; len(f) == 1 && (f[0].Severity != SeverityHigh || f[0].Subject != "evil") {
		t.Errorf("path escape %+v, want high about evil", f[0])
	}
	if d := dim(v12, "installability"); d.Score != 0 {
		t.Errorf("v12 installability %v (%s), want 0", d.Score, d.Reason)
	}

	// A check that matched, or was not made, is no finding.
	b.Install.TreeCheck = &evidence.TreeCheck{Files: 10, Digest: "aa", Checked: "aa", Match: true}
	b.Install.ArchiveEscapes = nil
	if res := Evaluate(b, mustLoad(t, "12")); dim(res, "installability").Score != 100 {
		t.Errorf("matched tree check: installability %v (%s), want 100", dim(res, "installability").Score, dim(res, "installability").Reason)
	} else if _, ok := findingOf(res, CodeTreeModified); ok {
		t.Error("a matched tree check raised tree.modified")
	}
}

// TestFloodsFold: 500 files written in one directory are one finding from
// rubric v12 (500 under v11), with the count and examples; 30 distinct
// names looked up are 20 findings and one that folds the other 10; the
// score counts every item under both.
func TestFloodsFold(t *testing.T) {
	b := okBundle()
	watched(func(beh *evidence.Behavior) {
		for i := range 500 {
			beh.Files = append(beh.Files, fileWrite(fmt.Sprintf("~/.cache/flood/f%03d", i)))
		}
		beh.Files = append(beh.Files, fileWrite("~/.config/one"))
		for i := range 30 {
			beh.Network = append(beh.Network, evidence.NetEvent{Phase: "run", Kind: "dns", DNSName: fmt.Sprintf("n%02d.example.com.", i), DNSType: "A", Time: t0})
		}
	})(b)
	v11, v12 := Evaluate(b, mustLoad(t, "11")), Evaluate(b, mustLoad(t, "12"))
	if n := len(codesOf(v11)[CodeFileWrite]); n != 501 {
		t.Errorf("v11: %d file.write findings, want 501", n)
	}
	writes := codesOf(v12)[CodeFileWrite]
	if len(writes) != 2 {
		t.Fatalf("v12: %d file.write findings, want 2 (one per directory)", len(writes))
	}
	var flood Finding
	for _, f := range writes {
		if strings.Contains(f.Message, "flood") {
			flood = f
		}
	}
	if !strings.Contains(flood.Message, "500 files in ~/.cache/flood") || !strings.Contains(flood.Message, "f000, f001, f002, f003, f004 and 495 more") {
		t.Errorf("folded message %q", flood.Message)
	}
	if a, b := dim(v11, DimensionExecutionSafety), dim(v12, DimensionExecutionSafety); a.Score != b.Score || a.Reason != b.Reason {
		t.Errorf("execution_safety v11 %v %q, v12 %v %q: want the same score", a.Score, a.Reason, b.Score, b.Reason)
	}
	if n := len(codesOf(v11)[CodeDNSLookup]); n != 30 {
		t.Errorf("v11: %d dns.lookup findings, want 30", n)
	}
	dns := codesOf(v12)[CodeDNSLookup]
	if len(dns) != 21 {
		t.Fatalf("v12: %d dns.lookup findings, want 21", len(dns))
	}
	folded := 0
	for _, f := range dns {
		if strings.Contains(f.Message, "10 more names looked up") {
			folded++
		}
	}
	if folded != 1 {
		t.Errorf("v12 dns findings %+v, want one folding the 10 past the cap", dns)
	}
}

// TestMetadataBuildPresentOnce: an sdist the metadata step built and the
// build step built again is one scripts.present finding from v12 (two
// under v11).
func TestMetadataBuildPresentOnce(t *testing.T) {
	b := pypiBundle(t)
	sc := b.Install.Scripts[0]
	meta := sc
	meta.Event = "metadata"
	b.Install.Scripts = append(b.Install.Scripts, meta)
	if n := len(codesOf(Evaluate(b, mustLoad(t, "11")))[CodeScriptsPresent]); n != 2 {
		t.Errorf("v11: %d scripts.present, want 2", n)
	}
	if n := len(codesOf(Evaluate(b, mustLoad(t, "12")))[CodeScriptsPresent]); n != 1 {
		t.Errorf("v12: %d scripts.present, want 1", n)
	}
}
