package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/client"

	"github.com/verifymcp/verifymcp/evidence"
)

// Shipped is a release that runs as shipped (a container image, an MCPB
// bundle) rather than one the sandbox installs. Its ecosystem makes it
// ready on the engine (pulls or loads an image, reads a bundle) in place of
// the install phase, and says how to start it; the run phase, the session,
// the tool calls and the watch are those of every target.
type Shipped interface {
	// Prepare makes the release ready to run on e and says how to start
	// it. An error that names the release (it does not exist, it is
	// malformed) wraps ErrShipped; any other is the engine's.
	Prepare(ctx context.Context, e Engine) (*Launch, error)
}

// Release is one release that runs as shipped, resolved (as far as can
// be before the engine is used) by its ecosystem.
type Release struct {
	// Name and Version identify the release (for an image named by tag,
	// Version is the tag until the engine resolves its digest).
	Name, Version string
	// Integrity is its digest when known before it is prepared.
	Integrity string
	// Source is "registry", "file", "daemon" or "layout"; Registry the
	// registry it comes from, when it comes from one.
	Source, Registry string
	// Kind names it in messages: "image", "bundle".
	Kind string
	// Shipped prepares it on the engine.
	Shipped Shipped
	// Secrets are values the release is given that must be masked like
	// --env values (a bundle's sensitive settings' placeholders).
	Secrets []Secret
}

// ErrShipped is wrapped by a Shipped's errors that are about the release,
// not the engine: it does not exist, it cannot be read, it is malformed.
var ErrShipped = errors.New("release cannot be run")

// Engine is what a Shipped release is prepared with.
type Engine struct {
	Client client.APIClient
	// Image is the sandbox image (a bundle's server runs on it).
	Image string
	// Labels label the run's engine objects: what Prepare creates on the
	// engine for the run carries them, so that the run's clean-up (and the
	// reaper, after a crash) removes it.
	Labels map[string]string
	Logger *slog.Logger
	// CacheDir, when set, is a directory where the ecosystem may keep
	// what it derived from content-addressed inputs, for later scans (an
	// image's inventory by its ID); "" keeps nothing.
	CacheDir string
}

// Launch is how to start a shipped release, and what preparing it found.
type Launch struct {
	// Image is the image the server runs in.
	Image string
	// Cmd is the server's whole command; the target's arguments follow it.
	Cmd []string
	// Env is the environment before the target's variables. HOME is the
	// sandbox's whatever Env says.
	Env []string
	// WorkDir is the working directory ("" is /tmp).
	WorkDir string
	// Files, when set, writes a tar archive that is unpacked into a
	// volume mounted read-only at FilesAt before the server starts (a
	// bundle's files).
	Files   func(w io.Writer) error
	FilesAt string
	// Lockfile is what the supply-chain scans read, in the ecosystem's
	// form (see ecosystem.Ecosystem.TreePurls); nil when there is none.
	Lockfile []byte
	// Packages counts the packages Lockfile names.
	Packages int
	// Integrity is the release's digest as expected (asked for, or listed
	// by the registry entry) and as computed over what was prepared.
	Integrity evidence.Integrity
	// Shipped is what preparing found; its Unwatched, when set, runs the
	// server without behaviour capture and says why.
	Shipped *evidence.Shipped
	// Python, when set, is a Python project whose dependencies are
	// installed before the server starts as a PyPI release's tree is (the
	// install phase: the fetch step, then the build step, watched); the
	// venv is mounted read-only, its scripts first on PATH, on the image
	// of the interpreter its Requires-Python chooses. A uv bundle's.
	Python *PyProject
	// User is the user the release's configuration runs it as (an image's
	// User, "0" for an image that names none); "" when it names none of
	// its own (a bundle). The server is started as the sandbox's
	// unprivileged user; when it exits before it answers, it is started
	// again as User, and the failed start is recorded in
	// Shipped.FirstStart (an image that does not run as any user but its
	// own: with root, one that insists on root).
	User string
}

// PyProject is a Python project (pyproject.toml) whose dependencies a
// client installs before it runs the project's code.
type PyProject struct {
	// Name and Version are the project's.
	Name, Version string
	// RequiresPython chooses the interpreter ("" admits any).
	RequiresPython string
	// Requirements are its dependencies, PEP 508 lines (with Sdist, what
	// is installed beside the project, its own dependencies coming with it).
	Requirements []string
	// Sdist, when set, is the project as a source distribution named
	// SdistName: a project that is itself a package, which is built (its
	// build backend runs in the watched build step) and installed with its
	// dependencies, as uv installs it.
	Sdist     []byte
	SdistName string
}

// scanShipped is Scan for a release that runs as shipped: its ecosystem
// prepares it, then the run phase starts it as it would an installed
// package.
func (s *Sandbox) scanShipped(ctx context.Context, runID string, t Target) (res *Result, err error) {
	r := newRun(s.cli, runID, newMasker(t.secrets(), nil))
	defer r.end(ctx, &res, &err)
	log := s.opts.Logger.With("run", runID)
	observerReady := s.observerFor(ctx, r, runID, t)
	watched := true
	defer func() {
		w, werr := observerReady()
		if werr != nil || res == nil {
			return
		}
		if !watched {
			if ww, ok := w.(*watch); ok {
				ww.obs.stop(ctx, s.cli, s.opts.Logger)
			}
			return
		}
		res.Behavior = w.close(ctx, res.Install)
	}()
	log.Info("prepare phase", "release", t.Name+"@"+t.Version)
	prepared := time.Now()
	l, err := t.Shipped.Prepare(ctx, Engine{Client: s.cli, Image: s.opts.Image, Labels: r.labels(), Logger: log, CacheDir: s.opts.ShippedCacheDir})
	if err != nil {
		return nil, err
	}
	if len(l.Cmd) == 0 {
		return nil, fmt.Errorf("%w: %s@%s declares no command to start", ErrShipped, t.Name, t.Version)
	}
	inst := &evidence.Install{Outcome: evidence.InstallOK, FetchMS: time.Since(prepared).Milliseconds(), Packages: l.Packages, Scripts: []evidence.Script{}, Integrity: l.Integrity}
	if len(l.Lockfile) > 0 {
		sum := sha256.Sum256(l.Lockfile)
		inst.LockfileSHA256 = hex.EncodeToString(sum[:])
	}
	res = &Result{Install: inst, Lockfile: l.Lockfile, Outcome: evidence.OutcomeOK, Shipped: l.Shipped}
	if h := t.Hooks; h != nil && h.Installed != nil && len(l.Lockfile) > 0 {
		h.Installed(append([]byte(nil), l.Lockfile...))
	}
	st := start{image: l.Image, cmd: l.Cmd, env: append([]string{"HOME=/tmp/home"}, withoutHome(l.Env)...), workDir: l.WorkDir}
	if l.Files != nil {
		vol, err := s.shippedFiles(ctx, r, l)
		if err != nil {
			return res, err
		}
		st.mounts = []mount.Mount{{Type: mount.TypeVolume, Source: vol, Target: l.FilesAt, ReadOnly: true}}
	}
	if l.Python != nil {
		ok, err := s.installProject(ctx, r, runID, t, l, res, &st, observerReady)
		if err != nil || !ok {
			return res, err
		}
	}
	res.Bin = &evidence.Bin{Name: path.Base(l.Cmd[0]), Path: l.Cmd[0], Rule: "shipped"}
	var w observer
	if l.Shipped != nil && l.Shipped.Unwatched != "" && s.opts.Behavior {
		watched = false
		w = unwatched{&s.opts}
	} else if w, err = observerReady(); err != nil {
		return res, err
	}
	log.Info("run phase", "cmd", l.Cmd[0])
	sess, c, ex, err := s.runPhase(ctx, r, st, t, w)
	if err != nil {
		return res, err
	}
	if sess.Outcome == evidence.OutcomeStartCrashed && l.User != "" && l.User != sandboxUser && l.Shipped != nil {
		first := &evidence.FirstStart{As: sandboxUser, Outcome: sess.Outcome, ExitCode: sess.ExitCode, Error: sess.Error, StderrTail: sess.StderrTail}
		log.Info("run phase again, as the release's own user", "user", l.User)
		st.user = l.User
		if sess, c, ex, err = s.runPhase(ctx, r, st, t, w); err != nil {
			return res, err
		}
		l.Shipped.FirstStart, l.Shipped.RanAs = first, l.User
	}
	res.Session = sess
	res.Contract = c
	res.Exercise, res.ExerciseNote = ex, exerciseNote(s.opts, sess, c, ex)
	if !watched {
		res.ExerciseNote = "behaviour capture could not watch this release: " + l.Shipped.Unwatched + "; no tool is called unwatched"
	}
	res.Outcome = sess.Outcome
	return res, nil
}

// shippedFiles unpacks l's files into a new volume of run r, through a
// container that is created and never started, and returns the volume.
func (s *Sandbox) shippedFiles(ctx context.Context, r *run, l *Launch) (string, error) {
	vol, err := r.createVolume(ctx, "tree")
	if err != nil {
		return "", err
	}
	hc := hardened()
	hc.NetworkMode = "none"
	hc.Mounts = []mount.Mount{{Type: mount.TypeVolume, Source: vol, Target: l.FilesAt}}
	created, err := r.cli.ContainerCreate(ctx, &container.Config{Image: s.opts.Image, User: sandboxUser, Cmd: []string{"true"}, Labels: r.labels()},
		hc, nil, nil, r.name("unpack"))
	if err != nil {
		return "", fmt.Errorf("create unpack container: %w", err)
	}
	defer func() {
		_ = r.cli.ContainerRemove(context.WithoutCancel(ctx), created.ID, container.RemoveOptions{Force: true})
	}()
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(l.Files(pw)) }()
	if err := r.cli.CopyToContainer(ctx, created.ID, l.FilesAt, pr, container.CopyToContainerOptions{}); err != nil {
		pr.CloseWithError(err)
		return "", fmt.Errorf("unpack the release's files: %w", err)
	}
	return vol, nil
}

// withoutHome is env without its HOME.
func withoutHome(env []string) []string { return withoutVars(env, "HOME") }

// withoutVars is env without the variables named.
func withoutVars(env []string, names ...string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(names, name)
	})
}

// installProject installs the dependencies of l's Python project as a
// PyPI release's tree is installed, into res's install evidence, and makes
// st run on its interpreter's image with the venv mounted. It returns
// false, with the install's outcome in res, when the install did not
// succeed.
func (s *Sandbox) installProject(ctx context.Context, r *run, runID string, t Target, l *Launch, res *Result, st *start, observerReady func() (observer, error)) (bool, error) {
	p := l.Python
	pt := Target{Ecosystem: "pypi", Name: p.Name, Version: p.Version, RequiresPython: p.RequiresPython,
		PyProject: true, PyRequirements: p.Requirements, Tarball: p.Sdist, Filename: p.SdistName, Env: t.Env, Secrets: t.Secrets}
	picked, err := s.pickPython(ctx, pt)
	if err != nil {
		return false, err
	}
	merge := func(in *evidence.Install) {
		in.Integrity = l.Integrity
		in.FetchMS += res.Install.FetchMS
		in.Python = picked.ev
		res.Install = in
	}
	if picked.none != nil {
		merge(picked.none)
		res.Outcome = evidence.OutcomeInstallFailed
		return false, nil
	}
	tree, err := r.createVolume(ctx, "venv")
	if err != nil {
		return false, err
	}
	s.opts.Logger.Info("install phase", "project", p.Name+" "+p.Version, "python", picked.py.Version)
	inst, _, lock, runTree, err := pypiInstaller{}.install(ctx, s.forPython(runID, picked.py), r, tree, pt, observerReady)
	if err != nil {
		return false, err
	}
	merge(inst)
	res.Lockfile, res.Image = lock, picked.image
	if h := t.Hooks; h != nil && h.Installed != nil && len(lock) > 0 {
		h.Installed(bytes.Clone(lock))
	}
	if o, ended := installEnded(inst); ended {
		res.Outcome = o
		return false, nil
	}
	st.image = picked.py.Image
	st.env = append(pypiInstaller{}.baseEnv(), withoutVars(l.Env, "HOME", "PATH", "VIRTUAL_ENV")...)
	st.mounts = append(st.mounts, mount.Mount{Type: mount.TypeVolume, Source: runTree, Target: treeDir, ReadOnly: true})
	return true, nil
}
