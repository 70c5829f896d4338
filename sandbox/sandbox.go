package sandbox

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"github.com/docker/docker/client"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/sandbox/image"
)

//go:embed drivers/fetch.js
var fetchDriver string

//go:embed drivers/scripts.js
var scriptsDriver string

// Options configure a Sandbox. Zero values take the documented defaults.
type Options struct {
	// Image is the sandbox image reference (see image.Ensure).
	Image string
	// Pythons are the interpreters offered PyPI targets, the default
	// first (see pyinterp.go); empty means Pythons() when Image is the
	// embedded recipe's default image, else Image's python3 alone.
	Pythons []Python
	// PythonImage, when set, returns the image of an offered Python that
	// is not Image's, building it if need be; nil means it must exist.
	PythonImage func(ctx context.Context, version string) (image.Image, error)
	// HelperImage is the egress helper image (see EnsureHelperImage).
	HelperImage string
	// Registry is the npm registry URL the fetch step may reach.
	Registry string
	// IndexURL is the Python package index (PEP 503 simple API under
	// /simple/, as uv reads it) the fetch step of a PyPI target may reach
	// (https://pypi.org); its files host is allowed too (see pyinstall.go).
	IndexURL string
	// CABundle, when set, is PEM data the fetch step trusts for TLS to the
	// registry (for TLS-intercepting proxies). Nothing else of the host
	// enters a container.
	CABundle []byte
	// InstallTimeout bounds the fetch and script steps together (180 s).
	InstallTimeout time.Duration
	// HandshakeTimeout bounds start-up and the MCP handshake (30 s).
	HandshakeTimeout time.Duration
	// DiscoverProbe is how long server/discover may go unanswered before
	// the handshake falls back to initialize (5 s).
	DiscoverProbe time.Duration
	// ListTimeout bounds listing tools, prompts, resources and templates (30 s).
	ListTimeout time.Duration
	// Memory (bytes), NanoCPUs and Pids limit the run phase (512 MiB, 1 CPU, 512).
	Memory   int64
	NanoCPUs int64
	Pids     int64
	// TreeSize, HomeSize and TmpSize bound what package code can keep in
	// the installed tree while its lifecycle scripts run (2 GiB, the tree
	// included), in its home directory (512 MiB) and in /tmp (256 MiB); see
	// bounds.go. Each phase's memory limit is raised by the bounds of the
	// places it writes, whose files count as memory.
	TreeSize int64
	HomeSize int64
	TmpSize  int64
	// MaxStdout bounds the bytes read from the server's stdout (256 MiB);
	// one message is bounded by maxLine (64 MiB).
	MaxStdout int64
	// ShutdownGrace is how long the server may take to exit after its
	// stdin is closed, and again after SIGTERM, before it is killed (2 s).
	ShutdownGrace time.Duration
	// Behavior turns on behaviour capture for the script step and the run
	// phase: the network sink, the exec tracer, canary credentials and the
	// home-directory comparison. Off, those phases run with no network.
	Behavior bool
	// Idle is how long the server is watched after the listing ended (0:
	// 2 s; negative: not at all).
	Idle time.Duration
	// NoExercise turns off the tool calls made after the idle watch (see
	// exercise_run.go); without Behavior none are made. CallTimeout bounds
	// one call (DefaultCallTimeout), CallBudget all of them
	// (DefaultCallBudget).
	NoExercise  bool
	CallTimeout time.Duration
	CallBudget  time.Duration
	// TreeCacheDir, when set, enables the install tree cache and holds its
	// index (see treecache.go); empty fetches afresh on every scan.
	TreeCacheDir string
	// ShippedCacheDir, when set, is where a release that runs as shipped
	// may keep what its ecosystem derived from content-addressed inputs
	// (an image's inventory, by the image's ID): Engine.CacheDir.
	ShippedCacheDir string
	// TreeCacheNamespace, when set, keeps this sandbox's cached trees
	// apart from every other namespace's: it is part of the tree-cache key
	// and a label of the volume. The tests give themselves one, so that
	// whether a scan fetches does not depend on what the engine's cache
	// already holds; the program leaves it empty (the key as it always
	// was).
	TreeCacheNamespace string
	// ToolVersion is the program's version, sent as the MCP client
	// version ("dev" when empty).
	ToolVersion string
	Logger      *slog.Logger
}

func (o *Options) defaults() {
	if o.Registry == "" {
		o.Registry = "https://registry.npmjs.org/"
	}
	if o.IndexURL == "" {
		o.IndexURL = "https://pypi.org"
	}
	if o.InstallTimeout == 0 {
		o.InstallTimeout = 180 * time.Second
	}
	if o.HandshakeTimeout == 0 {
		o.HandshakeTimeout = 30 * time.Second
	}
	if o.DiscoverProbe == 0 {
		o.DiscoverProbe = 5 * time.Second
	}
	if o.ListTimeout == 0 {
		o.ListTimeout = 30 * time.Second
	}
	if o.Memory == 0 {
		o.Memory = 512 << 20
	}
	if o.NanoCPUs == 0 {
		o.NanoCPUs = 1_000_000_000
	}
	if o.Pids == 0 {
		o.Pids = 512
	}
	if o.TreeSize == 0 {
		o.TreeSize = DefaultTreeSize
	}
	if o.HomeSize == 0 {
		o.HomeSize = DefaultHomeSize
	}
	if o.TmpSize == 0 {
		o.TmpSize = DefaultTmpSize
	}
	if o.MaxStdout == 0 {
		o.MaxStdout = 256 << 20
	}
	if o.ShutdownGrace == 0 {
		o.ShutdownGrace = 2 * time.Second
	}
	if o.Idle == 0 {
		o.Idle = 2 * time.Second
	}
	if o.CallTimeout == 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.CallBudget == 0 {
		o.CallBudget = DefaultCallBudget
	}
	if o.ToolVersion == "" {
		o.ToolVersion = "dev"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Limits returns the run-phase limits as evidence.
func (o Options) Limits() evidence.Limits {
	o.defaults()
	return evidence.Limits{
		MemoryBytes:        o.Memory,
		NanoCPUs:           o.NanoCPUs,
		Pids:               o.Pids,
		InstallTimeoutMS:   o.InstallTimeout.Milliseconds(),
		HandshakeTimeoutMS: o.HandshakeTimeout.Milliseconds(),
		TreeBytes:          o.TreeSize,
		HomeBytes:          o.HomeSize,
		TmpBytes:           o.TmpSize,
	}
}

// Sandbox runs packages in containers on one Docker engine.
type Sandbox struct {
	cli  client.APIClient
	opts Options

	mu   sync.Mutex
	warm map[string]*warmRun
}

// warmRun is an observer started ahead of its scan (Prewarm).
type warmRun struct {
	// cut ends a delayed start's wait: true starts the observer at once
	// (its scan wants it), false drops it unstarted (Discard).
	cut  chan bool
	wait func() (*watch, error)
}

// use returns what waits for the observer, starting it at once if its
// start was still delayed.
func (w *warmRun) use() func() (*watch, error) {
	w.endDelay(true)
	return w.wait
}

// endDelay ends a delayed start's wait, if it is still waiting: start
// says whether the observer then starts or is dropped.
func (w *warmRun) endDelay(start bool) {
	select {
	case w.cut <- start:
	default:
	}
}

// Prewarm starts the behaviour observer of run runID now, in the
// background, so that its start-up overlaps work the caller still has to do
// (resolving the target); Scan with the same run id uses it. A prewarmed
// run that is not scanned must be given to Discard. It does nothing when
// behaviour capture is off.
func (s *Sandbox) Prewarm(ctx context.Context, runID string) {
	s.prewarmAfter(ctx, runID, 0)
}

// prewarmAfter is Prewarm with the observer's start delayed by d.
func (s *Sandbox) prewarmAfter(ctx context.Context, runID string, d time.Duration) {
	if !s.opts.Behavior {
		return
	}
	r := newRun(s.cli, runID, nil)
	type started struct {
		w   *watch
		err error
	}
	ch := make(chan started, 1)
	cut := make(chan bool, 1)
	s.opts.Logger.Debug("prewarm", "after", d)
	go func() {
		if d > 0 {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
			case start := <-cut:
				if !start {
					ch <- started{}
					return
				}
			}
		}
		w, err := s.newWatch(ctx, r, nil)
		ch <- started{w, err}
	}()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.warm == nil {
		s.warm = map[string]*warmRun{}
	}
	s.warm[runID] = &warmRun{cut: cut, wait: sync.OnceValues(func() (*watch, error) {
		st := <-ch
		return st.w, st.err
	})}
}

// takeWarm returns the prewarmed observer of runID, if any.
func (s *Sandbox) takeWarm(runID string) (*warmRun, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.warm[runID]
	delete(s.warm, runID)
	return f, ok
}

// Discard removes a prewarmed run that will not be scanned (its target did
// not resolve), leaving nothing on the engine.
func (s *Sandbox) Discard(ctx context.Context, runID string) error {
	wr, ok := s.takeWarm(runID)
	if !ok {
		return nil
	}
	// One whose start is still delayed is dropped unstarted.
	wr.endDelay(false)
	if w, err := wr.wait(); err == nil && w != nil {
		w.obs.stop(ctx, s.cli, s.opts.Logger)
	}
	return newRun(s.cli, runID, nil).cleanup(ctx)
}

// New returns a Sandbox on cli.
func New(cli client.APIClient, opts Options) (*Sandbox, error) {
	opts.defaults()
	if opts.Image == "" || opts.HelperImage == "" {
		return nil, errors.New("sandbox: image and helper image are required")
	}
	u, err := url.Parse(opts.Registry)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("sandbox: registry %q is not an http(s) URL", opts.Registry)
	}
	return &Sandbox{cli: cli, opts: opts}, nil
}

// Target is one exact package version to scan.
type Target struct {
	// Name and Version are exact (a resolved version, never a range).
	Name    string
	Version string
	// Integrity is the registry's dist.integrity (SRI), checked in the sandbox.
	Integrity string
	// Tarball holds a local .tgz to install instead of the registry copy
	// (for PyPI, a local wheel or sdist named Filename).
	Tarball []byte
	// Ecosystem is "npm" (also when empty) or "pypi".
	Ecosystem string
	// Filename is the file name of a local PyPI wheel or sdist.
	Filename string
	// RequiresPython is the release's Requires-Python as the index lists
	// it ("" when it declares none), which chooses the interpreter (see
	// pyinterp.go); a local file's own metadata is read instead.
	RequiresPython string
	// PyPIFiles are the release's files as the index lists them, file name
	// to sha256 (hex): the fetch step's download of the target is checked
	// against them (Integrity is not used for PyPI).
	PyPIFiles map[string]string
	// PyProject, when set, makes the target a Python project (a uv
	// bundle's): PyRequirements (PEP 508 lines) installed into a venv as a
	// release's tree is, with no distribution of the project's own (as uv
	// runs a project without a build system), or, with Tarball, the
	// project built from its sdist and installed with its dependencies
	// and PyRequirements besides; Name and Version name the project.
	PyProject      bool
	PyRequirements []string
	// Bin overrides the entry point rule (a bin name from package.json).
	Bin string
	// Args are passed to the server; Env sets placeholder environment values.
	Args []string
	Env  map[string]string
	// Secrets are the operator's credentials for third parties (never
	// passed in), masked in everything the scan returns, like Env values.
	Secrets []Secret
	// Shipped, when set, is a release that runs as shipped (an image, a
	// bundle): it is prepared in place of the install phase (see
	// shipped.go), and Integrity, Tarball, the PyPI fields and Bin are not
	// read.
	Shipped Shipped `json:"-"`
	// Hooks, when set, hear of evidence as soon as it exists, so that a
	// caller can start work on it while the scan goes on.
	Hooks *Hooks `json:"-"`
}

// Hooks are called from inside Scan, at most once each, and must return at
// once (start a goroutine for the work). What they are given is what Scan
// will return, masked as Scan masks it.
type Hooks struct {
	// Installed is called with the lockfile once the install phase has
	// produced one, before the server starts.
	Installed func(lockfile []byte)
	// Listed is called with the contract of the first listing, before the
	// idle watch, the second listing and the teardown. It is a copy,
	// masked and normalised as the returned contract will be.
	Listed func(c *contract.Contract)
}

// Result is everything the sandbox observed for one target. Package
// failures (an install that fails, a server that crashes) are in Outcome and
// the evidence; only engine failures are returned as errors by Scan.
type Result struct {
	Outcome  evidence.Outcome
	Install  *evidence.Install
	Session  *evidence.Session
	Contract *contract.Contract
	Bin      *evidence.Bin
	Lockfile []byte
	// Behavior is nil when behaviour capture was off.
	Behavior *evidence.Behavior
	// Exercise is the tool calls made after the idle watch; nil when none
	// were made (ExerciseNote says why).
	Exercise     *evidence.Exercise
	ExerciseNote string
	// Masking records the secrets masked in all of the above.
	Masking []evidence.Masking
	// Shipped is what preparing a shipped release found (Target.Shipped).
	Shipped *evidence.Shipped
	// Image is the sandbox image the scan ran in, when it is not
	// Options.Image (a PyPI target on another Python, see pyinterp.go).
	Image *image.Image
}

// ErrBadBin is returned when --bin names no entry of the package, or the
// package has nothing to start.
var ErrBadBin = errors.New("no such entry point")

// Scan installs and runs one target under a fresh run id, then removes
// every container, network and volume it created, whatever happened.
func (s *Sandbox) Scan(ctx context.Context, runID string, t Target) (*Result, error) {
	if t.Shipped != nil {
		return s.scanShipped(ctx, runID, t)
	}
	return installerOf(t).scan(ctx, s, runID, t)
}

// scan is Scan on this sandbox's image.
func (s *Sandbox) scan(ctx context.Context, runID string, t Target) (res *Result, err error) {
	r := newRun(s.cli, runID, newMasker(t.secrets(), nil))
	defer r.end(ctx, &res, &err)
	log := s.opts.Logger.With("run", runID)
	tree, err := r.createVolume(ctx, "tree")
	if err != nil {
		return nil, err
	}
	observerReady := s.observerFor(ctx, r, runID, t)
	defer func() {
		if w, err := observerReady(); err == nil && res != nil {
			res.Behavior = w.close(ctx, res.Install)
		}
	}()
	log.Info("install phase", "package", t.Name+"@"+t.Version)
	eco := installerOf(t)
	inst, tgt, lock, runTree, err := eco.install(ctx, s, r, tree, t, observerReady)
	if err != nil {
		return nil, err
	}
	res = &Result{Install: inst, Lockfile: lock, Outcome: evidence.OutcomeOK}
	if h := t.Hooks; h != nil && h.Installed != nil && len(lock) > 0 {
		h.Installed(bytes.Clone(lock))
	}
	if o, ended := installEnded(inst); ended {
		res.Outcome = o
		return res, nil
	}
	bin, err := eco.chooseBin(t, tgt)
	if err != nil {
		return res, err
	}
	res.Bin = bin
	log.Info("run phase", "bin", bin.Name, "rule", bin.Rule)
	w, err := observerReady()
	if err != nil {
		return res, err
	}
	log.Debug("run phase starts")
	sess, c, ex, err := s.runPhase(ctx, r, s.installedStart(runTree, bin, t), t, w)
	if err != nil {
		return res, err
	}
	res.Session = sess
	res.Contract = c
	res.Exercise, res.ExerciseNote = ex, exerciseNote(s.opts, sess, c, ex)
	res.Outcome = sess.Outcome
	return res, nil
}

// installEnded is the scan's outcome when the install ended it (it
// failed, ran out of time or of memory): ended is false when the server
// is to start.
func installEnded(inst *evidence.Install) (o evidence.Outcome, ended bool) {
	switch inst.Outcome {
	case evidence.InstallOK:
		return "", false
	case evidence.InstallTimeout:
		return evidence.OutcomeInstallTimeout, true
	case evidence.InstallOOM:
		return evidence.OutcomeOOM, true
	}
	return evidence.OutcomeInstallFailed, true
}

// observerFor starts, or takes the prewarmed, behaviour observer of run r
// (runID) for t, and returns what waits for it: the phases that run package
// code call it. The sink starts while the fetch step runs. Without
// behaviour capture it gives the unwatched observer.
func (s *Sandbox) observerFor(ctx context.Context, r *run, runID string, t Target) func() (observer, error) {
	log := s.opts.Logger.With("run", runID)
	// The sink starts while the fetch step runs; the phases that run package
	// code wait for it.
	watchReady := func() (*watch, error) { return nil, nil }
	if wr, ok := s.takeWarm(runID); ok {
		f := wr.use()
		watchReady = func() (*watch, error) {
			w, err := f()
			if w != nil {
				w.envVals = envValues(t.Env)
			}
			return w, err
		}
	} else if s.opts.Behavior {
		type started struct {
			w   *watch
			err error
		}
		ch := make(chan started, 1)
		go func() {
			w, err := s.newWatch(ctx, r, envValues(t.Env))
			log.Debug("sink ready", "err", err)
			ch <- started{w, err}
		}()
		watchReady = sync.OnceValues(func() (*watch, error) {
			st := <-ch
			return st.w, st.err
		})
	}
	// The canaries are masked from when they exist, before package code
	// runs (every phase that runs it waits for the watch).
	ready := watchReady
	observerReady := sync.OnceValues(func() (observer, error) {
		w, err := ready()
		switch {
		case err != nil:
			return nil, err
		case w == nil:
			return unwatched{&s.opts}, nil
		}
		w.attach(r)
		return w, nil
	})
	return observerReady
}

// end ends run r of a scan that returns *res and *err (deferred first, so
// that it runs last): it masks the result, after the behaviour evidence is
// in and before the engine's objects go, then removes every object of the
// run. A failure of either is the scan's error unless it has one.
func (r *run) end(ctx context.Context, res **Result, err *error) {
	if *res != nil {
		if merr := r.mask.result(*res); merr != nil && *err == nil {
			*err = merr
		}
	}
	if cerr := r.cleanup(ctx); cerr != nil && *err == nil {
		*err = fmt.Errorf("clean up run %s: %w", r.id, cerr)
	}
}

// exerciseNote says why no tool was called, when none was.
func exerciseNote(o Options, sess *evidence.Session, c *contract.Contract, ex *evidence.Exercise) string {
	switch {
	case ex != nil:
		return ""
	case !o.Behavior:
		return "behaviour capture is off (--no-behavior): no tool is called unwatched"
	case o.NoExercise:
		return "tool calls are off (--no-exercise)"
	case sess == nil || sess.Outcome != evidence.OutcomeOK || c == nil:
		return "the MCP session did not list the tools"
	case len(c.Tools) == 0:
		return "the server lists no tool"
	default:
		return "no tool was called"
	}
}

// secrets are the known secrets of a target: its --env values, by name,
// and the operator's keys.
func (t Target) secrets() []Secret {
	out := append([]Secret(nil), t.Secrets...)
	for k, v := range t.Env {
		out = append(out, Secret{Name: "env:" + k, Value: v})
	}
	return out
}

func envValues(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for _, v := range env {
		out = append(out, v)
	}
	return out
}
