package rubric

import (
	"fmt"
	"strings"

	"github.com/verifymcp/verifymcp/evidence"
)

// The install findings of rubric v12: what the hostile Python package suite
// showed was caught only by its effects is named, each on the evidence the
// sandbox records for it (evidence.Install).

// installNamedSince is the first rubric version that emits them.
const installNamedSince = "12"

// archiveEscapes emits pkg.install.archive.path_escape for each member of a
// distribution file whose path leaves its directory, and returns how many.
func (p *probe) archiveEscapes(in *evidence.Install) int {
	if !p.atLeast(installNamedSince) {
		return 0
	}
	for _, e := range in.ArchiveEscapes {
		why := map[string]string{
			"parent":   "a parent-directory component",
			"absolute": "an absolute path",
			"link":     "a link whose target leaves the tree",
		}[e.Why]
		if why == "" {
			why = orUnknown(e.Why)
		}
		file := orUnknown(e.File)
		var msg string
		if e.Where == "record" {
			msg = fmt.Sprintf("the RECORD of %s lists %q, %s: a path outside the directory the wheel installs into, which an installer that uninstalls by RECORD would delete",
				file, e.Member, why)
		} else {
			msg = fmt.Sprintf("%s holds the member %q, %s: extracted as written, it lands outside the directory the archive is extracted into", file, e.Member, why)
		}
		p.emit(CodeArchivePathEscape, orText(e.Package, file), msg, p.clip(e.Where+" "+file+": "+e.Member))
	}
	return len(in.ArchiveEscapes)
}

// treeModified emits pkg.install.tree.modified when the installed tree's
// digest changed between the end of the install and the server's start,
// and returns 1 then.
func (p *probe) treeModified(in *evidence.Install) int {
	tc := in.TreeCheck
	if !p.atLeast(installNamedSince) || tc == nil || tc.Checked == "" || tc.Match {
		return 0
	}
	changed := "which files is not recorded"
	if len(tc.Changed) > 0 {
		changed = "among them " + strings.Join(tc.Changed, ", ")
	}
	p.emit(CodeTreeModified, p.b.Target.Name,
		fmt.Sprintf("the installed tree the server was about to run from is not the one the installer wrote: its digest changed between the end of the install and the server's start (%s)", changed),
		p.clip(fmt.Sprintf("digest at install %s over %d files; before the server started %s", tc.Digest, tc.Files, tc.Checked)))
	return 1
}

// leftRunning emits pkg.install.scripts.left_running for each script or
// build that left a process running when it ended.
func (p *probe) leftRunning(in *evidence.Install) {
	if !p.atLeast(installNamedSince) {
		return
	}
	for _, s := range in.Scripts {
		if !s.LeftRunning {
			continue
		}
		p.emit(CodeScriptsLeftRunning, s.Package,
			fmt.Sprintf("%s left a process running when it ended (one it started and did not wait for, in its process group or a session of its own); the sandbox killed it, and on a workstation it would have kept running after the install",
				p.scriptOf(s)),
			p.scriptEvidence(s, "left a process running"))
	}
}

// startupHooks emits pkg.install.startup_hook for each file of the
// installed tree that Python runs whenever it starts.
func (p *probe) startupHooks(in *evidence.Install) {
	if !p.atLeast(installNamedSince) {
		return
	}
	for _, h := range in.StartupHooks {
		who := "a file no installed distribution's RECORD lists (written during the install, not installed from a distribution)"
		if h.Package != "" {
			who = h.Package
		}
		var msg, ev string
		if h.Kind == "pth" {
			msg = fmt.Sprintf("the installed tree holds %s, a .pth file with an import line, which Python runs whenever it starts, before any program, in every interpreter of the environment (from %s)", h.Path, who)
			ev = h.Path + ": " + h.Line
		} else {
			msg = fmt.Sprintf("the installed tree holds %s, a %s module, which Python's site imports whenever it starts, before any program (from %s)", h.Path, h.Kind, who)
			ev = h.Path
		}
		p.emit(CodeStartupHook, orText(h.Package, h.Path), msg, p.clip(ev))
	}
}

// orText returns s, or else when s is empty.
func orText(s, or string) string {
	if s == "" {
		return or
	}
	return s
}
