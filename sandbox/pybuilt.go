package sandbox

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"

	"github.com/verifymcp/verifymcp/evidence"
)

// A PyPI tree that was built and watched once is reused, as an npm tree
// without install scripts is: the built venv is kept in the tree cache
// (treecache.go) under a key of its own (builtKey: the fetch's key, which
// names the release, its index files, the index and the image, plus the
// build driver), and a later scan of the same release mounts it read-only
// and does no fetch and no build. It is kept only when its build ran no
// package code: every distribution was a wheel (no sdist was built, no
// build backend was asked for metadata), so the build step was uv
// unpacking wheels, a function of the files the fetch verified. Its
// evidence (the lockfile, the console scripts, the start-up hooks found
// in the venv) is the stored record of the scan that built it, and the
// install evidence says so (TreeCache.Built, with the run and time that
// built it). A tree whose build ran package code is built, watched, every
// time.

// pyInstalled is what a PyPI install phase produced.
type pyInstalled struct {
	inst *evidence.Install
	tgt  *targetInfo
	lock []byte
	work string // the built tree; "" when the install did not get that far
	fr   *pyFetchResult
	br   *pyBuildResult
	// dynamic is set when a build backend was asked for an sdist's
	// metadata (pymeta.go).
	dynamic bool
}

// reusable reports whether the built tree may be kept for later scans:
// the install succeeded and ran no package code.
func (in *pyInstalled) reusable() bool {
	return in != nil && in.work != "" && in.inst.Outcome == evidence.InstallOK && in.fr != nil && in.br != nil && in.br.OK &&
		len(in.fr.Sdists) == 0 && !in.dynamic && len(in.inst.ArchiveEscapes) == 0
}

// pyBuilt is the stored record of a built tree (the tree cache's result).
type pyBuilt struct {
	Fetch *pyFetchResult `json:"fetch"`
	Build *pyBuildResult `json:"build"`
}

// install is the install phase of a PyPI target (installer): a built
// tree from the cache when there is one, else pyInstall, whose tree is
// kept when it may be reused.
func (pypiInstaller) install(ctx context.Context, s *Sandbox, r *run, tree string, t Target, watchReady func() (observer, error)) (*evidence.Install, *targetInfo, []byte, string, error) {
	if s.opts.TreeCacheDir == "" {
		in, err := s.pyInstall(ctx, r, tree, t, watchReady)
		return in.results(err)
	}
	var in *pyInstalled
	c, err := cachedTreeOf(ctx, s, r, tree, s.builtKey(t), fetchFunc[pyBuilt]{
		run: func(vol string) (*pyBuilt, bool, error) {
			var err error
			if in, err = s.pyInstall(ctx, r, tree, t, watchReady); err != nil || !in.reusable() || vol == tree {
				return nil, false, err
			}
			if err := s.keepBuilt(ctx, r, in.work, vol); err != nil {
				s.opts.Logger.Warn("the built tree could not be kept for later scans", "err", err)
				return nil, false, nil
			}
			return &pyBuilt{Fetch: in.fr, Build: in.br}, false, nil
		},
		cacheable: func(b *pyBuilt) bool { return b != nil },
	})
	switch {
	case err != nil:
		return nil, nil, nil, "", err
	case in != nil:
		// This scan installed the tree, and kept it when it could: then
		// the tree cache's record is the built tree's.
		if c.info != nil && in.inst != nil {
			in.inst.TreeCache = c.info
			in.inst.TreeCache.Built = true
		}
		return in.results(nil)
	case c.fr == nil:
		return nil, nil, nil, "", fmt.Errorf("tree cache: no built tree and no install")
	}
	inst, tgt, lock := s.pyRecorded(r, t, c.fr)
	inst.TreeCache = c.info
	inst.TreeCache.Built = true
	return inst, tgt, lock, c.volume, nil
}

// results are pyInstall's results as installer.install returns them.
func (in *pyInstalled) results(err error) (*evidence.Install, *targetInfo, []byte, string, error) {
	if in == nil {
		return nil, nil, nil, "", err
	}
	return in.inst, in.tgt, in.lock, in.work, err
}

// builtKey is the tree-cache key of t's built tree: the fetched tree's
// key and the build step's drivers.
func (s *Sandbox) builtKey(t Target) string {
	h := sha256.New()
	fmt.Fprintf(h, "verifymcp-built/pypi/1\n%s\n", s.treeKey(t))
	fmt.Fprintf(h, "%x\n", sha256.Sum256([]byte(pyStepsLib+"\n"+pyBuildDriver)))
	return s.treeSum(h)
}

// pyRecorded is the install evidence of a built tree reused from the
// cache, from the record of the scan that built it: what pyInstall
// records after a build that ran no package code.
func (s *Sandbox) pyRecorded(r *run, t Target, rec *pyBuilt) (*evidence.Install, *targetInfo, []byte) {
	fr, br := rec.Fetch, rec.Build
	inst := &evidence.Install{Outcome: evidence.InstallOK, Scripts: []evidence.Script{}, Integrity: evidence.Integrity{Expected: t.Integrity}}
	lock := recordLockfile(inst, fr.Lockfile)
	inst.Packages = fr.Packages
	if fr.Target != nil {
		setPyIntegrity(&inst.Integrity, fr.Target, t)
	}
	for _, h := range br.StartupHooks {
		h.Line = r.mask.text(h.Line, "install")
		inst.StartupHooks = append(inst.StartupHooks, h)
	}
	inst.DeclaredBins = br.ConsoleScripts
	tgt := &targetInfo{Name: t.Name, Version: t.Version, Bin: br.ConsoleScripts}
	if fr.Target != nil {
		tgt.Name, tgt.Version = fr.Target.Name, fr.Target.Version
	}
	return inst, tgt, lock
}

// keepBuilt copies the built tree work into the cache volume vol.
func (s *Sandbox) keepBuilt(ctx context.Context, r *run, work, vol string) error {
	hc := hardened()
	hc.NetworkMode = "none"
	hc.Mounts = []mount.Mount{mountVolume(work, "/work/src", true), {Type: mount.TypeVolume, Source: vol, Target: treeDir}}
	hc.Resources = container.Resources{Memory: 256 << 20, PidsLimit: int64Ptr(16)}
	started := time.Now()
	res, err := r.runStep(ctx, step{Part: "keep-tree", Host: hc, Timeout: 5 * time.Minute, MaxOut: 1 << 10, MaxErr: 4 << 10,
		Config: &container.Config{Image: s.opts.Image, User: sandboxUser, Cmd: []string{"cp", "-a", "/work/src/.", treeDir + "/"}}})
	switch {
	case err != nil:
		return err
	case res.ExitCode != 0 || res.TimedOut:
		return fmt.Errorf("copy the built tree: exit %d: %s", res.ExitCode, tailString(strings.TrimSpace(string(res.Stderr)), 300))
	}
	s.opts.Logger.Debug("built tree kept", "ms", time.Since(started).Milliseconds())
	return nil
}
