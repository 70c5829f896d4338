package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docker/docker/client"

	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/sandbox/image"
	"github.com/verifymcp/verifymcp/supplychain"
)

// ErrImage wraps failures to find or build the sandbox and helper images.
var ErrImage = errors.New("sandbox image")

// ErrBadOption wraps sandbox options the sandbox refuses (bad input).
var ErrBadOption = errors.New("bad sandbox option")

// Engine is a connected Docker engine and what it told us about itself.
type Engine struct {
	Client     *client.Client
	Version    string
	APIVersion string
	Host       string
	// Arch is the architecture the engine runs containers of (a GOARCH
	// name): the helper binary must be a Linux build for it.
	Arch string
}

// ConnectEngine connects to the Docker engine and negotiates the API
// version; a failure is ErrSandbox, with a hint.
func ConnectEngine(ctx context.Context) (*Engine, error) {
	cli, err := sandbox.NewClient()
	if err != nil {
		return nil, mark(ErrSandbox, err)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	v, err := cli.ServerVersion(pctx)
	if err != nil {
		cli.Close()
		return nil, mark(ErrSandbox, fmt.Errorf("Docker engine not reachable at %s: %v (%s)", cli.DaemonHost(), err, engineHint(runtime.GOOS)))
	}
	arch := v.Arch
	if arch == "" {
		// An engine that leaves the version's Arch out still reports
		// the kernel's architecture in its info.
		if info, err := cli.Info(pctx); err == nil {
			arch = info.Architecture
		}
	}
	return &Engine{Client: cli, Version: v.Version, APIVersion: cli.ClientVersion(), Host: cli.DaemonHost(), Arch: sandbox.EngineArch(arch)}, nil
}

// engineHint says how to get an engine on a system.
func engineHint(goos string) string {
	if goos == "linux" {
		return "install Debian's docker.io and start dockerd, or run scripts/setup.sh; or point DOCKER_HOST at an engine"
	}
	return "start Docker Desktop, or point DOCKER_HOST at an engine"
}

// markedError is err, with its message unchanged, that is also mark: the
// exit code is read from mark, the rest of the chain stays.
type markedError struct {
	msg  string
	mark error
	err  error
}

func (e *markedError) Error() string        { return e.msg }
func (e *markedError) Is(target error) bool { return target == e.mark }
func (e *markedError) Unwrap() error        { return e.err }

// mark returns err, with its message unchanged, marked as mark.
func mark(m error, err error) error { return &markedError{msg: err.Error(), mark: m, err: err} }

// ImageOptions say where the sandbox image is built from when it is
// missing: the npm registry, an HTTP client that trusts the operator's CA
// bundle, and where the build's output lines go.
type ImageOptions struct {
	Registry   string
	HTTPClient *http.Client
	Progress   io.Writer
	Logger     *slog.Logger
}

// EnsureImage makes sure the sandbox image exists, building it when it
// does not, and says so.
func EnsureImage(ctx context.Context, e *Engine, o ImageOptions) (image.Image, error) {
	img, ok, err := image.Inspect(ctx, e.Client)
	if err != nil {
		return img, mark(ErrSandbox, fmt.Errorf("inspect sandbox image: %w", err))
	}
	if ok {
		return img, nil
	}
	if o.Logger != nil {
		o.Logger.Info("sandbox image not found; building it first (once per recipe; a few minutes where no container registry is reachable)", "image", image.Ref())
	}
	img, _, err = image.Ensure(ctx, e.Client, image.Options{NPMRegistry: o.Registry, Progress: o.Progress, HTTPClient: o.HTTPClient})
	if err != nil {
		if ctx.Err() != nil {
			return img, ctx.Err()
		}
		return img, mark(ErrImage, fmt.Errorf("build sandbox image %s: %w", image.Ref(), err))
	}
	return img, nil
}

// pythonImageMu keeps concurrent scans from building the same image twice.
var pythonImageMu sync.Mutex

// EnsurePythonImage is EnsureImage for the image of another Python the
// sandbox offers PyPI targets (sandbox.Pythons), built the first time a
// target asks for that Python.
func EnsurePythonImage(ctx context.Context, e *Engine, o ImageOptions, version string) (image.Image, error) {
	pythonImageMu.Lock()
	defer pythonImageMu.Unlock()
	img, ok, err := image.InspectPython(ctx, e.Client, version)
	if err != nil {
		return img, mark(ErrSandbox, fmt.Errorf("inspect sandbox image for Python %s: %w", version, err))
	}
	if ok {
		return img, nil
	}
	if o.Logger != nil {
		o.Logger.Info("sandbox image for Python "+version+" not found; building it first (once per recipe; a few minutes where no container registry is reachable)", "python", version)
	}
	img, _, err = image.EnsurePython(ctx, e.Client, image.Options{NPMRegistry: o.Registry, Progress: o.Progress, HTTPClient: o.HTTPClient}, version)
	if err != nil {
		if ctx.Err() != nil {
			return img, ctx.Err()
		}
		return img, mark(ErrImage, fmt.Errorf("build sandbox image for Python %s: %w", version, err))
	}
	return img, nil
}

// Prepare is how a sandbox is prepared for scans.
type Prepare struct {
	// Sandbox are the sandbox's options; Image, HelperImage, CABundle and
	// ToolVersion are filled in by Prepare.
	Sandbox sandbox.Options
	// CABundle and CABundleSHA256 are the operator's CA bundle, if any.
	CABundle       []byte
	CABundleSHA256 string
	// Image says how the sandbox image is built when it is missing.
	Image ImageOptions
	// RunID is prewarmed once the target resolved (the observer's start
	// then overlaps the fetch step); "" makes one. The first
	// Prepared.NextRunID hands it to a scan.
	RunID string
	// Resolved reports the resolution of the (first) target; nil when it
	// resolved already.
	Resolved func() error
}

// Session is a prepared sandbox as a command holds it: NextRunID hands
// each scan its run id, the first the one prewarmed; Close removes what
// was prepared for that run when no scan took it, and lets the engine go.
// Every scanning command (scan, batch, worker, cases, config
// --scan-servers) holds one, so none discards anything itself.
type Session interface {
	NextRunID() string
	Close() error
}

// Prepared is the Session PrepareSandbox returns.
type Prepared struct {
	closeEngine func() error
	discard     func()
	first       string
	taken       atomic.Bool
}

// NextRunID returns the prewarmed run id once, then new ones.
func (pr *Prepared) NextRunID() string {
	if pr.taken.CompareAndSwap(false, true) {
		return pr.first
	}
	return NewRunID(time.Now())
}

// Close removes the prewarmed run if no scan took it, and closes the
// connection to the engine.
func (pr *Prepared) Close() error {
	if !pr.taken.Load() {
		pr.discard()
	}
	return pr.closeEngine()
}

// PrepareSandbox connects to the engine, reaps leftovers, makes sure the
// images are there and starts the observer, then sets p's Scanner and
// what describes it (Config.Scanner and Config.Sandbox, from one set of
// options). It is shared by scan and by every command that
// scans many targets (one preparation, many scans). Until o.Resolved
// succeeded it only reads (the engine's version, its images, this
// binary), so that bad input fails before anything is created on the
// engine.
func (p *Pipeline) PrepareSandbox(ctx context.Context, o Prepare) (*Prepared, error) {
	resolved := o.Resolved
	if resolved == nil {
		resolved = func() error { return nil }
	}
	log := p.cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	e, err := ConnectEngine(ctx)
	if err != nil {
		if rerr := resolved(); rerr != nil {
			return nil, rerr
		}
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			e.Client.Close()
		}
	}()
	helper, err := selectHelper(e)
	if err != nil {
		return nil, err
	}
	opts := o.Sandbox
	opts.Image, opts.HelperImage, opts.ToolVersion, opts.CABundle = image.Ref(), helper.Ref, p.cfg.ToolVersion, o.CABundle
	opts.PythonImage = func(ctx context.Context, version string) (image.Image, error) {
		return EnsurePythonImage(ctx, e, o.Image, version)
	}
	sb, err := sandbox.New(e.Client, opts)
	if err != nil {
		return nil, mark(ErrBadOption, err)
	}
	if err := resolved(); err != nil {
		return nil, err
	}

	// The target resolved: from here on the engine is changed. The
	// observer (behaviour capture) is the slowest thing to start on a warm
	// scan, so it starts first and runs while leftovers are reaped, the
	// image is checked and the fetch step runs.
	if err := helper.Ensure(ctx, e.Client); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, mark(ErrImage, fmt.Errorf("helper image: %w", err))
	}
	runID := o.RunID
	if runID == "" {
		runID = NewRunID(time.Now())
	}
	sb.Prewarm(ctx, runID)
	discard := func() {
		if derr := sb.Discard(context.WithoutCancel(ctx), runID); derr != nil {
			log.Warn("could not remove the prepared sandbox", "err", derr)
		}
	}
	if n, err := sandbox.Reap(ctx, e.Client); err != nil {
		log.Warn("could not remove leftovers of earlier runs", "err", err)
	} else if n > 0 {
		log.Debug("removed leftovers of crashed runs", "objects", n)
	}
	img, err := EnsureImage(ctx, e, o.Image)
	if err != nil {
		discard()
		return nil, err
	}
	p.cfg.Sandbox = SandboxInfo{Image: img.Ref, ImageDigest: img.ID, EngineVersion: e.Version, APIVersion: e.APIVersion, Limits: opts.Limits(), CABundle: o.CABundleSHA256,
		Behavior: opts.Behavior}
	p.cfg.Scanner = sb
	ok = true
	return &Prepared{closeEngine: e.Client.Close, discard: discard, first: runID}, nil
}

// selectHelper finds the helper binary for the engine (see
// sandbox.SelectHelper): the one sandbox.HelperBinaryEnv names, this
// program, or the build this program carries for the engine's
// architecture. It reads no more than files.
func selectHelper(e *Engine) (*sandbox.Helper, error) {
	h, err := sandbox.SelectHelper(e.Arch, os.Getenv(sandbox.HelperBinaryEnv))
	if err != nil {
		return nil, mark(ErrImage, fmt.Errorf("helper image: %w", err))
	}
	return h, nil
}

// CheckFetch fetches one exact registry version (v, resolved from this
// machine) with the sandbox's real fetch step: its internal network, the
// egress proxy, the CA bundle and an empty npm cache (see
// sandbox.CheckFetch). A check that ran and failed is a *FetchError.
func CheckFetch(ctx context.Context, e *Engine, o sandbox.Options, v *supplychain.Version) (*sandbox.FetchCheck, error) {
	helper, err := selectHelper(e)
	if err != nil {
		return nil, err
	}
	if err := helper.Ensure(ctx, e.Client); err != nil {
		return nil, mark(ErrImage, fmt.Errorf("helper image: %w", err))
	}
	o.Image, o.HelperImage = image.Ref(), helper.Ref
	sb, err := sandbox.New(e.Client, o)
	if err != nil {
		return nil, mark(ErrBadOption, err)
	}
	fc, err := sb.CheckFetch(ctx, NewRunID(time.Now()), sandbox.Target{Name: v.Name, Version: v.Version, Integrity: v.Integrity})
	if err != nil {
		return nil, &FetchError{Err: err}
	}
	return fc, nil
}

// FetchError is a fetch check that ran and failed: an environment fault,
// a failed check (sandbox.ErrFetchCheck), or else the engine's failure
// (then it is ErrSandbox).
type FetchError struct{ Err error }

func (e *FetchError) Error() string { return "fetch check: " + e.Err.Error() }
func (e *FetchError) Unwrap() error { return e.Err }

// Is makes a failure that is neither an environment fault nor a failed
// check an engine failure.
func (e *FetchError) Is(target error) bool {
	var env *sandbox.EnvironmentError
	return target == ErrSandbox && !errors.As(e.Err, &env) && !errors.Is(e.Err, sandbox.ErrFetchCheck)
}
