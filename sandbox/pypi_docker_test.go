//go:build docker

package sandbox_test

import (
	"context"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/sandbox"
)

// pypiScan scans a pinned release of a real PyPI server, with the sha256
// of its files as the index lists them (recorded from pypi.org).
func pypiScan(t *testing.T, name, version string, files map[string]string, behavior bool, args ...string) *sandbox.Result {
	t.Helper()
	s := newSandbox(t, func(o *sandbox.Options) {
		o.Behavior = behavior
		o.InstallTimeout = 240 * time.Second
		o.HandshakeTimeout = 30 * time.Second
		o.Memory = 512 << 20
	})
	id := runID(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	res, err := s.Scan(ctx, id, sandbox.Target{Ecosystem: "pypi", Name: name, Version: version, PyPIFiles: files, Args: args})
	if err != nil {
		t.Fatalf("scan %s==%s: %v", name, version, err)
	}
	assertClean(t, id)
	return res
}

func pyToolNames(res *sandbox.Result) []string {
	var out []string
	if res.Contract != nil {
		for _, tl := range res.Contract.Tools {
			out = append(out, tl.Name)
		}
	}
	slices.Sort(out)
	return out
}

func TestPyPIMCPServerTime(t *testing.T) {
	res := pypiScan(t, "mcp-server-time", "2026.10.19", map[string]string{
		"mcp_server_time-2026.10.19-py3-none-any.whl": "5c099a001c6ca78260bda419f2e9b2aabee1adc4fe6ca56d8959871ad8da58a1",
	}, true, "--local-timezone", "UTC")
	if res.Outcome != evidence.OutcomeOK {
		t.Fatalf("outcome %s; install %+v; session %+v", res.Outcome, res.Install, res.Session)
	}
	t.Logf("%d packages, fetch %d ms, build step %d ms", res.Install.Packages, res.Install.FetchMS, res.Install.ScriptsMS)
	if got := strings.Join(pyToolNames(res), ","); got != "convert_time,get_current_time" {
		t.Errorf("tools = %s", got)
	}
	if !res.Install.Integrity.Match || res.Bin.Rule != "console script named like the project" || len(res.Install.Scripts) != 0 {
		t.Errorf("integrity %+v, bin %+v, builds %d: want matched, the script named like the project, none", res.Install.Integrity, res.Bin, len(res.Install.Scripts))
	}
	for _, p := range res.Behavior.Processes {
		if p.Provenance == evidence.ProvenancePackage || p.Provenance == evidence.ProvenanceDeclared {
			t.Errorf("a wheel-only install ran package code: %s %s %v", p.Phase, p.Provenance, p.Argv)
		}
	}
	if len(res.Behavior.Network) != 0 {
		t.Errorf("network events: %+v", res.Behavior.Network)
	}
}

// annotated is one tool with its annotation hints, as the server declares
// them.
type annotated struct {
	name                                   string
	readOnly, destructive, idem, openWorld bool
}

func assertTools(t *testing.T, res *sandbox.Result, want []annotated) {
	t.Helper()
	if res.Contract == nil {
		t.Fatalf("no contract: outcome %s", res.Outcome)
	}
	if len(res.Contract.Tools) != len(want) {
		t.Errorf("tools = %v, want %d", pyToolNames(res), len(want))
	}
	for i, w := range want {
		if i >= len(res.Contract.Tools) {
			break
		}
		tl := res.Contract.Tools[i]
		a := tl.Annotations
		if tl.Name != w.name || a == nil || a.ReadOnlyHint == nil || a.DestructiveHint == nil || a.IdempotentHint == nil || a.OpenWorldHint == nil {
			t.Errorf("tool %d = %s %+v, want %s with every hint", i, tl.Name, a, w.name)
			continue
		}
		if *a.ReadOnlyHint != w.readOnly || *a.DestructiveHint != w.destructive || *a.IdempotentHint != w.idem || *a.OpenWorldHint != w.openWorld {
			t.Errorf("tool %s hints = %v %v %v %v, want %+v", tl.Name, *a.ReadOnlyHint, *a.DestructiveHint, *a.IdempotentHint, *a.OpenWorldHint, w)
		}
	}
}

// TestPyPIMCPServerFetch: a wheel-only tree with native extensions
// (pydantic-core's cp311 manylinux wheel), installed with no build and
// started: the extension loads under the run phase's hardening.
func TestPyPIMCPServerFetch(t *testing.T) {
	res := pypiScan(t, "mcp-server-fetch", "2026.10.24", map[string]string{
		"mcp_server_fetch-2026.10.24-py3-none-any.whl": "3dbcb37801a037b29d486f791328a38354f6b2a8ab54ada8064ecf7268a826bf"}, false)
	if res.Outcome != evidence.OutcomeOK || !res.Install.Integrity.Match || len(res.Install.Scripts) != 0 {
		t.Fatalf("outcome %s, integrity %+v, builds %d", res.Outcome, res.Install.Integrity, len(res.Install.Scripts))
	}
	assertTools(t, res, []annotated{{"fetch", true, false, true, true}})
	lock := string(res.Lockfile)
	if !strings.Contains(lock, `name = "pydantic-core"`) || !regexp.MustCompile(`pydantic_core-[^"]+-cp311-cp311-manylinux[^"]+\.whl`).MatchString(lock) {
		t.Errorf("the lockfile holds no cp311 manylinux wheel of pydantic-core:\n%.2000s", lock)
	}
}

// TestPyPIMCPServerGit: twelve annotated tools; the server needs the git
// program, which the image has.
func TestPyPIMCPServerGit(t *testing.T) {
	res := pypiScan(t, "mcp-server-git", "2026.10.19", map[string]string{
		"mcp_server_git-2026.10.19-py3-none-any.whl": "d4bfe88847089ed93d8e2dfc7ec97a23e5d067cfd165ee811e42675b614ab409"}, false)
	if res.Outcome != evidence.OutcomeOK {
		t.Fatalf("outcome %s; stderr %s", res.Outcome, res.Session.StderrTail)
	}
	ro := func(n string) annotated { return annotated{n, true, false, true, false} }
	assertTools(t, res, []annotated{
		ro("git_status"), ro("git_diff_unstaged"), ro("git_diff_staged"), ro("git_diff"),
		{"git_commit", false, false, false, false}, {"git_add", false, false, true, false}, {"git_reset", false, true, true, false},
		ro("git_log"), {"git_create_branch", false, false, false, false}, {"git_checkout", false, false, false, false},
		ro("git_show"), ro("git_branch"),
	})
}

// TestPyPISdistOnly: a release that ships only an sdist (setuptools): its
// build runs in the watched build step, attributed to its declared build
// backend, and the built server starts.
func TestPyPISdistOnly(t *testing.T) {
	res := pypiScan(t, "hkopenai.hk-food-mcp-server", "0.1.8", map[string]string{
		"hkopenai_hk_food_mcp_server-0.1.8.tar.gz": "bac82991e740608abf492f74e4e1294c20878bce3d5341521bc00bf0ba116465"}, true)
	if res.Outcome != evidence.OutcomeOK || !res.Install.Integrity.Match {
		t.Fatalf("outcome %s; install %+v", res.Outcome, res.Install)
	}
	var target *evidence.Script
	for i, sc := range res.Install.Scripts {
		if sc.Package == "hkopenai-hk-food-mcp-server" {
			target = &res.Install.Scripts[i]
		}
	}
	if target == nil || target.Event != "build" || !target.Ran || target.ExitCode != 0 || !strings.Contains(target.Command, "setuptools.build_meta") {
		t.Fatalf("the sdist's build was not recorded as run: %+v", res.Install.Scripts)
	}
	var declared, uv int
	for _, p := range res.Behavior.Processes {
		switch {
		case p.Phase == evidence.PhaseScripts && p.Provenance == evidence.ProvenanceDeclared:
			declared++
		case p.Phase == evidence.PhaseScripts && p.Provenance == evidence.ProvenancePackageManager && len(p.Argv) > 0 && p.Argv[0] == "uv":
			uv++
		case p.Phase == evidence.PhaseScripts && p.Provenance == evidence.ProvenancePackage:
			t.Errorf("a build-step process taken for the package's own: %v", p.Argv)
		}
	}
	if declared == 0 || uv < 3 {
		t.Errorf("build step: %d declared (the build backend) and %d uv processes, want both", declared, uv)
	}
	if got := strings.Join(pyToolNames(res), ","); got != "get_wholesale_prices" {
		t.Errorf("tools = %s", got)
	}
	// The hostile-build checks (issue 35) ran on a real release from the
	// index and found nothing: no archive member outside the tree, no
	// process the build left running, the venv unchanged when the server
	// started. Start-up hooks are whatever the tree holds: only
	// setuptools' own, if any, never one of the sandbox's.
	if len(res.Install.ArchiveEscapes) != 0 {
		t.Errorf("archive escapes in a real release: %+v", res.Install.ArchiveEscapes)
	}
	if target.LeftRunning {
		t.Errorf("the build of a real release recorded as leaving a process running: %+v", *target)
	}
	if tc := res.Install.TreeCheck; tc == nil || !tc.Match || tc.Files < 100 {
		t.Errorf("tree check %+v, want the installed venv digested and unchanged", tc)
	}
	for _, h := range res.Install.StartupHooks {
		if h.Package == "" {
			t.Errorf("a start-up hook no distribution installed: %+v", h)
		}
	}
}

// TestPyPITreeCache: a second scan of the same release, whose tree is all
// wheels, reuses the venv the first built (no index traffic, no build) and
// gets the same lockfile, console scripts and contract, the evidence
// saying whose build it is.
func TestPyPITreeCache(t *testing.T) {
	s := newSandbox(t, func(o *sandbox.Options) {
		o.InstallTimeout = 240 * time.Second
		o.HandshakeTimeout = 30 * time.Second
		o.Memory = 512 << 20
		o.TreeCacheDir = t.TempDir()
	})
	target := sandbox.Target{Ecosystem: "pypi", Name: "mcp-server-time", Version: "2026.10.19", Args: []string{"--local-timezone", "UTC"},
		PyPIFiles: map[string]string{"mcp_server_time-2026.10.19-py3-none-any.whl": "5c099a001c6ca78260bda419f2e9b2aabee1adc4fe6ca56d8959871ad8da58a1"}}
	// The test's own tree-cache namespace starts empty, whoever else on
	// this engine cached the release.
	var results []*sandbox.Result
	for i := range 2 {
		id := runID(t)
		var early struct {
			lock     []byte
			surface  string
			listedAt time.Time
		}
		target.Hooks = &sandbox.Hooks{
			Installed: func(lock []byte) { early.lock = lock },
			Listed:    func(c *contract.Contract) { early.surface, early.listedAt = c.SchemaHash, time.Now() },
		}
		ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
		res, err := s.Scan(ctx, id, target)
		returned := time.Now()
		cancel()
		if err != nil {
			t.Fatalf("scan %d: %v", i, err)
		}
		assertClean(t, id)
		if res.Outcome != evidence.OutcomeOK || res.Install.TreeCache == nil {
			t.Fatalf("scan %d: outcome %s, tree cache %+v, install %+v", i, res.Outcome, res.Install.TreeCache, res.Install)
		}
		t.Logf("scan %d: hit %v, fetch %d ms, build step %d ms, contract handed on %s before the scan returned", i, res.Install.TreeCache.Hit, res.Install.FetchMS, res.Install.ScriptsMS, returned.Sub(early.listedAt).Round(time.Millisecond))
		// The hooks heard of the lockfile and the surface the scan returned.
		if string(early.lock) != string(res.Lockfile) || res.Contract == nil || early.surface != res.Contract.SchemaHash {
			t.Errorf("scan %d: hooks got lockfile %d bytes and surface %s; the scan returned %d bytes and %+v", i, len(early.lock), early.surface, len(res.Lockfile), res.Contract)
		}
		results = append(results, res)
	}
	first, second := results[0], results[1]
	if first.Install.TreeCache.Hit || !second.Install.TreeCache.Hit || first.Install.TreeCache.Key != second.Install.TreeCache.Key ||
		!first.Install.TreeCache.Built || !second.Install.TreeCache.Built || second.Install.TreeCache.FetchedBy != first.Install.TreeCache.FetchedBy {
		t.Errorf("tree cache: first %+v, second %+v; want the built tree kept, then reused, on one key", first.Install.TreeCache, second.Install.TreeCache)
	}
	if second.Install.ScriptsMS != 0 || len(second.Install.DeclaredBins) == 0 || !maps.Equal(first.Install.DeclaredBins, second.Install.DeclaredBins) {
		t.Errorf("the reused venv: build step %d ms, console scripts %v (first %v); want no build and the first's scripts",
			second.Install.ScriptsMS, second.Install.DeclaredBins, first.Install.DeclaredBins)
	}
	if first.Install.LockfileSHA256 != second.Install.LockfileSHA256 || !second.Install.Integrity.Match || second.Install.Packages != first.Install.Packages {
		t.Errorf("the cached tree differs: lockfile %s / %s, integrity %+v, packages %d / %d",
			first.Install.LockfileSHA256, second.Install.LockfileSHA256, second.Install.Integrity, first.Install.Packages, second.Install.Packages)
	}
	if got := strings.Join(pyToolNames(second), ","); got != "convert_time,get_current_time" {
		t.Errorf("tools from the cached tree = %s", got)
	}
}
