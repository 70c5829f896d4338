package sandbox

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/verifymcp/verifymcp/evidence"
)

// observer is the behaviour capture as a scan's phases see it: they tell
// it where they are and ask it to ready their containers, and never ask
// whether capture is on. *watch (behavior.go) observes; unwatched, for
// --no-behavior, observes nothing and changes nothing. Each one's state
// changes only through these methods.
type observer interface {
	// attach gives the observer the run it watches; the run masks its
	// canaries from now on.
	attach(r *run)
	// extraMemory is what the observer adds to a phase's memory limit.
	extraMemory(phase string) int64
	// workTree is the bounded volume a step of package code writes in.
	workTree(ctx context.Context, s *Sandbox, r *run) (string, error)
	// prepare readies a container of a phase that runs package code: its
	// host configuration, environment (operator: the operator's
	// variables) and command.
	prepare(hc *container.HostConfig, phase string, env, cmd []string, operator map[string]string) ([]string, []string)
	// scriptStep watches one step of the script phase: it sets the step's
	// hooks, and its result records the windows in which each package's
	// code ran and the command lines the packages declare.
	scriptStep(r *run, st *step) (done func(windows []scriptWindow, declared map[string]bool))
	// setDriver records the PID of a script step's driver, as it reported
	// it.
	setDriver(pid int)
	// windowCount is how many script windows there are; shiftWindows moves
	// the script indexes of the windows at pos by base.
	windowCount() int
	shiftWindows(pos []int, base int)
	// treeInstalled records the installed tree's digest in inst.
	treeInstalled(ctx context.Context, inst *evidence.Install)

	// seed readies phase's home, before its container starts.
	seed(ctx context.Context, phase string) error
	// begin starts watching a phase in a container that just started and
	// releases it; it returns when and the tracer's status.
	begin(ctx context.Context, phase string, stdin io.Writer) (time.Time, string, error)
	// listed marks the end of the first listing at listEnd and, when the
	// session is up (live), watches the idle server for d or until ctx
	// ends; it returns how long the idle watch lasted.
	listed(ctx context.Context, listEnd time.Time, live bool, d time.Duration) time.Duration
	// exercises reports whether the tools are called (exercise_run.go).
	exercises() bool
	// lookFiles asks for the files of the run phase's home and /tmp that
	// changed since the last look; seededFiles are the files the sandbox
	// planted there, by path inside the sandbox.
	lookFiles(ctx context.Context) (fileLook, error)
	seededFiles() map[string]bool
	// calling marks the start of tool call n; callsDone the end of the
	// calls.
	calling(n int)
	callsDone()
	// relisting and shuttingDown mark the second listing's start and the
	// shutdown's.
	relisting()
	shuttingDown()
	// endRun closes the run phase's watch once the server is shut down.
	endRun(ctx context.Context, id string, sh *evidence.Shutdown, released time.Time, idle time.Duration, tracerStatus string)
	// close ends the watch: the behaviour evidence (nil when nothing was
	// observed) and the script phase's network in inst, when there is one.
	close(ctx context.Context, inst *evidence.Install) *evidence.Behavior
}

// unwatched is the observer of a scan without behaviour capture.
type unwatched struct{ opts *Options }

func (unwatched) attach(*run) {}

func (u unwatched) extraMemory(phase string) int64 { return u.opts.extraMemory(phase, false) }

// workTree makes a bounded volume and starts a holder for it: no observer
// holds it mounted.
func (unwatched) workTree(ctx context.Context, s *Sandbox, r *run) (string, error) {
	work, err := r.createBounded(ctx, s.opts.treeBound())
	if err != nil {
		return "", err
	}
	if err := s.startHolder(ctx, r, map[string]string{"work-tree": work}); err != nil {
		return "", err
	}
	return work, nil
}

func (unwatched) prepare(_ *container.HostConfig, _ string, env, cmd []string, _ map[string]string) ([]string, []string) {
	return env, cmd
}

func (unwatched) scriptStep(*run, *step) func([]scriptWindow, map[string]bool) {
	return func([]scriptWindow, map[string]bool) {}
}

func (unwatched) setDriver(int)                                               {}
func (unwatched) windowCount() int                                            { return 0 }
func (unwatched) shiftWindows([]int, int)                                     {}
func (unwatched) treeInstalled(context.Context, *evidence.Install)            {}
func (unwatched) seed(context.Context, string) error                          { return nil }
func (unwatched) relisting()                                                  {}
func (unwatched) exercises() bool                                             { return false }
func (unwatched) seededFiles() map[string]bool                                { return nil }
func (unwatched) calling(int)                                                 {}
func (unwatched) callsDone()                                                  {}
func (unwatched) shuttingDown()                                               {}
func (unwatched) close(context.Context, *evidence.Install) *evidence.Behavior { return nil }

func (unwatched) begin(context.Context, string, io.Writer) (time.Time, string, error) {
	return time.Time{}, "not_run", nil
}

func (unwatched) listed(context.Context, time.Time, bool, time.Duration) time.Duration { return 0 }

func (unwatched) endRun(context.Context, string, *evidence.Shutdown, time.Time, time.Duration, string) {
}

func (unwatched) lookFiles(context.Context) (fileLook, error) {
	return fileLook{}, errors.New("behaviour capture is off")
}
