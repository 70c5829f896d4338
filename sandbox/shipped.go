package sandbox

import (
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
}

// scanShipped is Scan for a release that runs as shipped: its ecosystem
// prepares it, then the run phase starts it as it would an installed
// package.
func (s *Sandbox) scanShipped(ctx context.Context, runID string, t Target) (res *Result, err error) {
	r := &run{cli: s.cli, id: runID, mask: newMasker(t.secrets(), nil)}
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
	l, err := t.Shipped.Prepare(ctx, Engine{Client: s.cli, Image: s.opts.Image, Labels: r.labels(), Logger: log})
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
func withoutHome(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, "HOME=") })
}
