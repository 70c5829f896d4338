package sandbox

import (
	"context"
	"io"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/verifymcp/verifymcp/evidence"
)

// The watch as an observer: what the phases tell it and ask of it (see
// observer).

var _ observer = (*watch)(nil)

func (w *watch) attach(r *run) {
	r.mask.setCanary(w.canary)
	w.r = r
}

func (w *watch) extraMemory(phase string) int64 { return w.s.opts.extraMemory(phase, true) }

// workTree is the bounded volume the observer holds mounted.
func (w *watch) workTree(context.Context, *Sandbox, *run) (string, error) {
	return w.vols["work-tree"], nil
}

// prepare puts the container in the observer's namespaces with the canary
// home, adds the observer's variables to the environment, and starts the
// command behind the wrapper that waits for the release (begin).
func (w *watch) prepare(hc *container.HostConfig, phase string, env, cmd []string, operator map[string]string) ([]string, []string) {
	w.hostConfig(hc, phase)
	env = append([]string{"HOME=" + homeDir}, env[1:]...)
	env = append(env, w.env(operator)...)
	if phase == evidence.PhaseRun {
		return env, append([]string{"bash", "-c", runWrapper, "verifymcp-wait"}, cmd...)
	}
	return env, append([]string{"sh", "-c", waitWrapper, "verifymcp-wait"}, cmd...)
}

// scriptStep watches one step of the script phase: the home seeded when
// the container is created, the tracer attached when it starts, the disk
// and home compared when it exits. A PyPI install may run more than one
// such step (its metadata steps, then the build step): each is attributed
// from its own driver, within its own window, and the phase's watch
// covers them all.
func (w *watch) scriptStep(r *run, st *step) func([]scriptWindow, map[string]bool) {
	var (
		released  time.Time
		tstatus   = "not_run"
		fstatus   = "not_run"
		watched   time.Duration
		disk      []evidence.DiskUse
		fileDrops int
	)
	st.OnCreated = func(ctx context.Context, _ string) error { return w.seed(ctx, evidence.PhaseScripts) }
	st.OnStarted = func(ctx context.Context, id string, stdin io.Writer) error {
		var err error
		released, tstatus, err = w.begin(ctx, evidence.PhaseScripts, stdin)
		return err
	}
	st.OnExited = func(ctx context.Context, id string) {
		watched = time.Since(released)
		if st := w.obs.status(ctx, r.cli); st != "ok" {
			tstatus = st
		}
		disk = w.diskEnd(ctx, evidence.PhaseScripts)
		files, dropped, err := w.diffHome(ctx, evidence.PhaseScripts)
		fileDrops = dropped
		fstatus = "ok"
		if err != nil {
			fstatus = "error: " + err.Error()
		}
		w.addFiles(files)
	}
	return func(windows []scriptWindow, declared map[string]bool) {
		w.windows = append(w.windows, windows...)
		if w.declared == nil {
			w.declared = map[string]bool{}
		}
		for k, v := range declared {
			w.declared[k] = w.declared[k] || v
		}
		w.steps = append(w.steps, scriptStep{win: [2]time.Time{released, released.Add(watched)}, driver: w.driver})
		w.driver = 0
		if w.scriptsWin[0].IsZero() {
			w.scriptsWin[0] = released
		}
		w.scriptsWin[1] = released.Add(watched)
		for i := range w.b.Files {
			if w.b.Files[i].Phase == evidence.PhaseScripts && len(w.windows) == 1 {
				w.b.Files[i].Package = w.windows[0].Package
			}
		}
		w.scriptsWatch = mergeWatch(w.scriptsWatch, evidence.Watch{Phase: evidence.PhaseScripts, WatchedMS: watched.Milliseconds(), Tracer: tstatus, Files: fstatus, Disk: disk})
		addDropped(&w.scriptsWatch, "file", fileDrops)
	}
}

func (w *watch) setDriver(pid int) { w.driver = pid }

func (w *watch) windowCount() int { return len(w.windows) }

func (w *watch) shiftWindows(pos []int, base int) {
	for _, p := range pos {
		w.windows[p].Index += base
	}
}

// listed marks the handshake done and watches the idle server: no request
// of ours is in flight, so any network activity now is the server's own
// (a beacon).
func (w *watch) listed(ctx context.Context, listEnd time.Time, live bool, d time.Duration) time.Duration {
	w.listEnd = listEnd
	w.obs.control("mark handshake_done")
	if !live || d <= 0 {
		return 0
	}
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
	return time.Since(w.listEnd)
}

// relisting marks the second listing's start: a request of ours is in
// flight again, so the idle watch is over.
func (w *watch) relisting() {
	w.relistAt = time.Now()
	w.obs.control("mark relist")
}

func (w *watch) shuttingDown() {
	w.shutdownAt = time.Now()
	w.obs.control("mark shutdown")
}

// endRun closes the behaviour watch of the run phase once the server is
// shut down (sh): the disk use, the changes to the home directory, the
// tracer's status, and the watch record with the times released (the
// server was let go) and idle (the idle watch lasted).
func (w *watch) endRun(ctx context.Context, id string, sh *evidence.Shutdown, released time.Time, idle time.Duration, tracerStatus string) {
	w.shutdown = sh
	watched := time.Since(released)
	filesStatus := "ok"
	disk := w.diskEnd(ctx, evidence.PhaseRun)
	files, dropped, err := w.diffHome(ctx, evidence.PhaseRun)
	if err != nil {
		filesStatus = "error: " + err.Error()
	}
	w.addFiles(files)
	if st := w.obs.status(ctx, w.r.cli); st != "ok" && tracerStatus == "ok" {
		tracerStatus = st
	}
	w.runWin = [2]time.Time{released, time.Now()}
	w.s.opts.Logger.Debug("home compared", "phase", evidence.PhaseRun, "changes", len(files))
	w.runWatch = evidence.Watch{Phase: evidence.PhaseRun, WatchedMS: watched.Milliseconds(), IdleMS: idle.Milliseconds(), Tracer: tracerStatus, Files: filesStatus, Disk: disk}
	addDropped(&w.runWatch, "file", dropped)
}

// close ends the watch (end) and, with the install evidence, records
// the script phase's network in it.
func (w *watch) close(ctx context.Context, inst *evidence.Install) *evidence.Behavior {
	b := w.end(ctx)
	if inst != nil {
		w.scriptNetwork(inst)
	}
	return b
}
