package sandbox

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/evidence"
)

// fallbackProtocol is the protocol version of the initialize sent when a
// server does not answer server/discover at all.
const fallbackProtocol = "2025-11-25"

// errExited is the cancellation cause when the server process exits.
var errExited = errors.New("server exited")

func (s *Sandbox) runPhase(ctx context.Context, r *run, st start, t Target, w observer) (*evidence.Session, *contract.Contract, *evidence.Exercise, error) {
	sess := &evidence.Session{NonJSONSample: []string{}}
	id, err := s.createRunContainer(ctx, r, st, t, w)
	if err != nil {
		return nil, nil, nil, err
	}
	defer func() {
		rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = r.cli.ContainerRemove(rmCtx, id, container.RemoveOptions{Force: true, RemoveVolumes: true})
	}()
	if err := w.seed(ctx, evidence.PhaseRun); err != nil {
		return nil, nil, nil, err
	}
	att, err := r.cli.ContainerAttach(ctx, id, container.AttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("attach run container: %w", err)
	}
	defer att.Close()

	filter, wr, stderr := s.readStreams(r, att)

	// The run context is cancelled, with errExited as its cause, when the
	// container's main process exits: the server, or with behaviour
	// capture its wrapper, once the server and every process it started
	// are gone (runWrapper). No wait outlives them.
	runCtx, cancelRun := context.WithCancelCause(ctx)
	defer cancelRun(nil)
	exited := notifyExit(ctx, runCtx, r, id, cancelRun)

	started := time.Now()
	if err := r.cli.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		return nil, nil, nil, fmt.Errorf("start run container: %w", err)
	}
	stdin := att.Conn
	// The release is the first line on stdin, before any MCP frame.
	released, tracerStatus, err := w.begin(ctx, evidence.PhaseRun, stdin)
	if err != nil {
		return nil, nil, nil, err
	}
	sess.StartMS = time.Since(started).Milliseconds()

	hsStart := time.Now()
	ss, path, hsErr := s.handshake(runCtx, filter, wr, stdin)
	ss.mask = r.mask
	sess.HandshakeMS = time.Since(started).Milliseconds()
	var c *contract.Contract
	if hsErr == nil {
		sess.HandshakePath = path
		listStart := time.Now()
		c, err = s.list(runCtx, ss, sess)
		sess.ListMS = time.Since(listStart).Milliseconds()
		if err != nil {
			hsErr = err
			c = nil
		}
	}
	listEnd := time.Now()
	if h := t.Hooks; hsErr == nil && c != nil && h != nil && h.Listed != nil {
		if early, err := r.mask.contractCopy(c); err == nil {
			h.Listed(early)
		} else {
			s.opts.Logger.Warn("could not hand the contract on early", "err", err)
		}
	}
	idle := w.listed(runCtx, listEnd, hsErr == nil, s.opts.Idle)
	var ex *evidence.Exercise
	if hsErr == nil && c != nil && len(c.Tools) > 0 && w.exercises() {
		ex = s.exerciseTools(runCtx, r, ss, c, w)
	}
	if hsErr == nil {
		// List the surface again, always (a list_changed notification is
		// only a hint), so that one that changed after start-up is seen.
		// The relisting is a request of ours: the idle watch ends where it
		// begins. It never fails the session nor touches the first contract
		// but to mask it.
		w.relisting()
		sess.Relist = s.relist(runCtx, ss, c, sess.ListErrors, listEnd)
		if ex != nil && sess.Relist != nil {
			sess.Relist.AfterCalls = len(ex.Calls)
		}
	}
	if hsErr == nil && path == evidence.HandshakeInitializeFallback {
		// Before the server's stdin closes, give server/discover as long
		// to be answered as the handshake had: a slow starter answers it
		// late, and an answer cut off by the shutdown would read as none.
		waitLateDiscover(runCtx, wr, hsStart.Add(s.opts.HandshakeTimeout))
	}
	if ss.cs != nil {
		_ = ss.cs.Close()
	}
	filter.drain()

	// Decide whether the server died before we close its stdin (which makes
	// a well-behaved stdio server exit). A failure that is not our deadline
	// usually means the process is exiting: give its exit a moment to arrive.
	exitedEarly := exitedDuringSession(runCtx, hsErr)
	w.shuttingDown()
	// The shutdown and the checks after it each get their own time: a
	// shutdown that takes all of its grace periods (a server that ignores
	// stdin's end and SIGTERM) must leave the home comparison its own.
	sdCtx, cancelSD := context.WithTimeout(context.WithoutCancel(ctx), 2*s.opts.ShutdownGrace+15*time.Second)
	sess.Shutdown = s.shutdown(sdCtx, r, id, att, exited, exitedEarly)
	cancelSD()
	inspCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	exitCode := sess.Shutdown.ExitCode
	w.endRun(inspCtx, id, sess.Shutdown, released, idle, tracerStatus)
	info, ierr := r.cli.ContainerInspect(inspCtx, id)
	if ierr == nil && info.State != nil {
		sess.OOMKilled = info.State.OOMKilled
		if exitCode == nil && !info.State.Running {
			v := info.State.ExitCode
			exitCode = &v
		}
	}
	s.recordStreams(sess, r, filter, wr, stderr)

	if err := setOutcome(ctx, sess, hsErr, exitedEarly, exitCode); err != nil {
		return nil, nil, nil, err
	}
	return sess, c, ex, nil
}

// readStreams starts reading the attached container's output: stdout
// through the frame filter into the wire, with oversized frames salvaged
// and non-JSON samples masked, and the tail of stderr kept.
func (s *Sandbox) readStreams(r *run, att types.HijackedResponse) (*frameFilter, *wire, *tailBuffer) {
	stdoutR, stdoutW := io.Pipe()
	stderr := &tailBuffer{max: 16 << 10}
	go func() {
		_, err := stdcopy.StdCopy(stdoutW, stderr, att.Reader)
		stdoutW.CloseWithError(err)
	}()
	wr := newWire()
	filter := newFrameFilter()
	filter.oversize = wr.salvage
	filter.answer = wr.early
	filter.sample = func(s string) string { return r.mask.text(s, "session") }
	go filter.run(stdoutR, s.opts.MaxStdout)
	return filter, wr, stderr
}

// notifyExit waits for the container's next exit in the background: its
// status is sent on the returned channel and the run context is cancelled
// with errExited as its cause. The wait ends early when runCtx does or the
// engine cannot wait.
func notifyExit(ctx, runCtx context.Context, r *run, id string, cancelRun context.CancelCauseFunc) <-chan int64 {
	waitCh, waitErrCh := r.cli.ContainerWait(ctx, id, container.WaitConditionNextExit)
	exited := make(chan int64, 1)
	go func() {
		select {
		case w := <-waitCh:
			exited <- w.StatusCode
			cancelRun(errExited)
		case <-waitErrCh: //nolint:errcheck // the engine could not wait: the session's own errors say what happened
		case <-runCtx.Done():
		}
	}()
	return exited
}

// exitedDuringSession reports whether the server exited during the
// session, before its stdin is closed. When the session failed other than
// by our deadline, the exit is given two seconds to arrive.
func exitedDuringSession(runCtx context.Context, hsErr error) bool {
	exitedEarly := errors.Is(context.Cause(runCtx), errExited)
	if hsErr != nil && !exitedEarly && !errors.Is(hsErr, context.DeadlineExceeded) {
		select {
		case <-runCtx.Done():
		case <-time.After(2 * time.Second):
		}
		exitedEarly = errors.Is(context.Cause(runCtx), errExited)
	}
	return exitedEarly
}

// start is what the run phase's container runs: an image, the server's
// command (without the target's arguments), the environment before the
// target's variables (HOME first), the working directory and the volumes
// the server reads.
type start struct {
	image   string
	cmd     []string
	env     []string
	workDir string
	mounts  []mount.Mount
	// user is the user it runs as ("" is the sandbox's, 65534).
	user string
}

// installedStart is the start of a package the install phase installed in
// tree: its entry point, run from the tree mounted read-only.
func (s *Sandbox) installedStart(tree string, bin *evidence.Bin, t Target) start {
	cmd := []string{bin.Path}
	if bin.Name == "main" {
		cmd = []string{"node", bin.Path}
	}
	return start{image: s.opts.Image, cmd: cmd, env: installerOf(t).baseEnv(), workDir: "/tmp",
		mounts: []mount.Mount{{Type: mount.TypeVolume, Source: tree, Target: treeDir, ReadOnly: true}}}
}

// createRunContainer creates the container of the run phase: the server's
// command (behind the wrapper of behaviour capture when w watches), its
// environment, the hardened host configuration with st's volumes and no
// network. It returns the container's ID.
func (s *Sandbox) createRunContainer(ctx context.Context, r *run, st start, t Target, w observer) (string, error) {
	cmd := append(slices.Clone(st.cmd), t.Args...)
	env := runEnv(st.env, t)
	hc := hardened()
	hc.NetworkMode = "none"
	hc.Mounts = slices.Clone(st.mounts)
	hc.Tmpfs["/tmp"] = s.opts.tmpfsOption()
	mem := s.opts.Memory + w.extraMemory(evidence.PhaseRun)
	hc.Resources = container.Resources{
		Memory:     mem,
		MemorySwap: mem,
		NanoCPUs:   s.opts.NanoCPUs,
		PidsLimit:  int64Ptr(s.opts.Pids),
	}
	env, cmd = w.prepare(hc, evidence.PhaseRun, env, cmd, t.Env)
	if err := s.boundImageVolumes(ctx, r, st, hc); err != nil {
		return "", err
	}
	created, err := r.cli.ContainerCreate(ctx, &container.Config{
		Image:      st.image,
		User:       cmp.Or(st.user, sandboxUser),
		Env:        env,
		WorkingDir: cmp.Or(st.workDir, "/tmp"),
		// The whole command is given, the image's own entrypoint replaced
		// (a shipped image's is in st.cmd).
		Entrypoint:   cmd[:1],
		Cmd:          cmd[1:],
		Labels:       r.labels(),
		OpenStdin:    true,
		StdinOnce:    true,
		AttachStdin:  true,
		AttachStdout: true,
		AttachStderr: true,
	}, hc, nil, nil, r.name("run"))
	if err != nil {
		return "", fmt.Errorf("create run container: %w", err)
	}
	return created.ID, nil
}

// boundImageVolumes gives each VOLUME a shipped image declares a volume of
// its own that is a tmpfs bounded like /tmp (--tmp-size, its files
// counting as the server's memory), unless a mount of the sandbox covers
// the path already. Left to the engine, each would be an anonymous volume
// on the host's disk: a place package code could fill without bound (the
// root filesystem is read-only so that there is none). The volume starts
// empty and writable by any user (mode 1777), whatever the image holds at
// that path; the run's clean-up removes it. Each start has its own (the
// second start, as the image's user, gets new ones). The sandbox's own
// images declare none.
func (s *Sandbox) boundImageVolumes(ctx context.Context, r *run, st start, hc *container.HostConfig) error {
	if s.ownImage(st.image) {
		return nil
	}
	info, err := r.cli.ImageInspect(ctx, st.image)
	if err != nil {
		return fmt.Errorf("inspect image %s: %w", st.image, err)
	}
	if info.Config == nil || len(info.Config.Volumes) == 0 {
		return nil
	}
	covered := map[string]bool{}
	for _, m := range hc.Mounts {
		covered[path.Clean(m.Target)] = true
	}
	for p := range hc.Tmpfs {
		covered[path.Clean(p)] = true
	}
	var paths []string
	for v := range info.Config.Volumes {
		if p := path.Clean(v); path.IsAbs(p) && !covered[p] {
			covered[p] = true
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	who := strings.Map(func(r rune) rune {
		if r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return r
		}
		return '-'
	}, cmp.Or(st.user, "sandbox"))
	for i, p := range paths {
		b := bound{Part: fmt.Sprintf("volume-%s-%d", who, i), Place: "volume", Size: s.opts.TmpSize, Files: tmpFiles, Mode: 0o1777}
		name, err := r.createBounded(ctx, b)
		if err != nil {
			return err
		}
		hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeVolume, Source: name, Target: p})
	}
	return nil
}

// ownImage reports whether ref is one of the sandbox's own images (the
// default, or one of the Pythons offered), which declare no VOLUME.
func (s *Sandbox) ownImage(ref string) bool {
	if ref == s.opts.Image {
		return true
	}
	for _, py := range s.pythons() {
		if py.Image == ref {
			return true
		}
	}
	return false
}

// recordStreams records in sess what the server's streams carried besides
// the session's answers: the non-JSON lines of stdout and a sample of
// them, the truncation of stdout, the tail of stderr (masked), the late
// and unmatched answers and the notifications.
func (s *Sandbox) recordStreams(sess *evidence.Session, r *run, filter *frameFilter, wr *wire, stderr *tailBuffer) {
	nonJSON, samples, truncated := filter.noise()
	sess.NonJSONLines = nonJSON
	sess.NonJSONSample = samples
	if truncated {
		sess.Truncations = append(sess.Truncations, evidence.Truncation{List: "stdout", Bytes: filter.bytes.Load(),
			Reason: fmt.Sprintf("the server wrote more than %d bytes to stdout; the rest was not read", s.opts.MaxStdout)})
	}
	sess.Truncated = sess.Truncated || truncated
	sess.StdoutBytes = filter.bytes.Load()
	sess.UnreadMessages = int(filter.unread.Load())
	// Masked whole, then cut, so that the cut leaves no part of a secret.
	sess.StderrTail = tailString(r.mask.text(stderr.String(), "session"), 4000)
	late, unmatched := wr.lateAnswers()
	addLateAnswers(sess, r.mask, late)
	sess.UnmatchedAnswers = unmatched
	if n := wr.notifications(); len(n) > 0 {
		sess.Notifications = n
	}
}

// setOutcome sets the outcome of the run phase's session, with its error
// and exit code, from the handshake's (or listing's) error hsErr, whether
// the server exited early and its exit code. It returns ctx's error when
// the scan itself was cancelled.
func setOutcome(ctx context.Context, sess *evidence.Session, hsErr error, exitedEarly bool, exitCode *int) error {
	// A kill for memory at any point of the run phase (during the
	// handshake or listing, after it, in the idle watch, at shutdown) is
	// the oom outcome: a session that listed and was then killed does not
	// end ok. The listing it answered first is kept.
	switch {
	case sess.OOMKilled:
		sess.Outcome = evidence.OutcomeOOM
		sess.Error = "the server was killed for exceeding its memory limit"
		if hsErr == nil {
			sess.Error += " after it answered its listing"
		}
		sess.ExitCode = exitCode
	case hsErr == nil:
		sess.Outcome = evidence.OutcomeOK
	case exitedEarly:
		sess.Outcome = evidence.OutcomeStartCrashed
		sess.ExitCode = exitCode
		sess.Error = "the server exited before the contract was captured"
		if exitCode != nil {
			sess.Error = fmt.Sprintf("the server exited with status %d before the contract was captured", *exitCode)
		}
	case errors.Is(hsErr, context.DeadlineExceeded):
		sess.Outcome = evidence.OutcomeHandshakeTimeout
		sess.Error = hsErr.Error()
	case ctx.Err() != nil:
		return ctx.Err()
	default:
		sess.Outcome = evidence.OutcomeProtocolError
		sess.Error = hsErr.Error()
	}
	return nil
}

// runEnv is the environment of the server in the run phase: base (HOME,
// a PATH with the tree's executables first), then the target's variables
// in the order of their names.
func runEnv(base []string, t Target) []string {
	env := slices.Clone(base)
	names := make([]string, 0, len(t.Env))
	for k := range t.Env {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		env = append(env, k+"="+t.Env[k])
	}
	return env
}

// addLateAnswers records in sess the answers that arrived after their
// request had been given up, each error masked and clipped.
func addLateAnswers(sess *evidence.Session, mask *masker, late []lateAnswer) {
	for _, l := range late {
		la := evidence.LateAnswer{Method: l.Method, AfterMS: l.After.Milliseconds()}
		if l.Err != nil {
			la.Error = clip(mask.text(l.Err.Error(), "session"), 300)
		}
		sess.LateAnswers = append(sess.LateAnswers, la)
	}
}

// shutdown stops the server as the MCP stdio transport describes, watching
// all the while (the observer records until the whole scan ends): close its
// stdin and wait for it to exit, then SIGTERM and wait, then SIGKILL. It
// records how the server ended and how long each step waited, so that what
// a server does on its way out (a telemetry flush) is seen. With behaviour
// capture the container ends when the server and every process it started
// have exited (runWrapper): a watchdog the server leaves to report its end
// gets the same grace periods, and is killed with the wrapper by the
// SIGTERM that follows them once the server is gone.
func (s *Sandbox) shutdown(ctx context.Context, r *run, id string, att types.HijackedResponse, exited <-chan int64, exitedBefore bool) *evidence.Shutdown {
	sd := &evidence.Shutdown{GraceMS: s.opts.ShutdownGrace.Milliseconds()}
	waitExit := func(d time.Duration) (*int, time.Duration, bool) {
		t0 := time.Now()
		select {
		case code := <-exited:
			v := int(code)
			return &v, time.Since(t0), true
		case <-time.After(d):
			return nil, time.Since(t0), false
		}
	}
	if exitedBefore {
		sd.Ended = evidence.EndedBefore
		if code, _, ok := waitExit(2 * time.Second); ok {
			sd.ExitCode = code
		}
		_ = att.CloseWrite()
		return sd
	}
	_ = att.CloseWrite()
	code, waited, ok := waitExit(s.opts.ShutdownGrace)
	sd.StdinWaitMS = waited.Milliseconds()
	if ok {
		sd.Ended, sd.ExitCode = evidence.EndedStdinClose, code
		return sd
	}
	_ = r.cli.ContainerKill(ctx, id, "TERM")
	code, waited, ok = waitExit(s.opts.ShutdownGrace)
	sd.TermWaitMS = waited.Milliseconds()
	if ok {
		sd.Ended, sd.ExitCode = evidence.EndedTerm, code
		return sd
	}
	_ = r.cli.ContainerKill(ctx, id, "KILL")
	code, waited, _ = waitExit(5 * time.Second)
	sd.KillWaitMS = waited.Milliseconds()
	sd.Ended, sd.ExitCode = evidence.EndedKill, code
	return sd
}

// handshake establishes the MCP session over the server's stdio, every
// session's requests numbered on the wire so that answers are matched by
// id. It lets the go-sdk client try server/discover first; if the server
// neither answers nor rejects it within the probe deadline (some servers
// silently drop unknown methods, slow ones answer late), it starts a new
// session that sends initialize with protocol version 2025-11-25, within
// what is left of the handshake timeout. A late answer to the probe is
// recorded and dropped, never read as the answer to initialize; when it
// was a success and initialize then failed, the server speaks
// server/discover, only slowly: a third session asks it again with the
// time left.
func (s *Sandbox) handshake(ctx context.Context, filter *frameFilter, wr *wire, stdin io.Writer) (session, string, error) {
	hsCtx, cancel := context.WithTimeout(ctx, s.opts.HandshakeTimeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "verifymcp", Version: s.opts.ToolVersion}, &mcp.ClientOptions{Capabilities: clientCapabilities()})
	if s.opts.exercising() {
		// A cautious client's one root: the scratch directory of decoys
		// the tool calls point at (exercise_run.go).
		client.AddRoots(&mcp.Root{URI: "file://" + exercisePlaces.Scratch, Name: "work"})
	}
	connect := func(ctx context.Context, opts *mcp.ClientSessionOptions) (session, error) {
		t := wr.transport(&mcp.IOTransport{Reader: newFrameReader(filter.frames), Writer: &stdinWriter{w: stdin}, MaxLineLength: maxLine + 1})
		cs, err := client.Connect(ctx, t, opts)
		if err != nil {
			return session{}, err
		}
		ss := session{cs: cs, w: wr, id: t.(*wireTransport).session, method: "initialize"}
		if _, _, ok := wr.result(ss.id, "initialize"); !ok {
			ss.method = "server/discover"
		}
		return ss, nil
	}

	probeCtx, cancelProbe := context.WithTimeout(hsCtx, s.opts.DiscoverProbe)
	ss, err := connect(probeCtx, nil)
	probeExpired := probeCtx.Err() != nil
	cancelProbe()
	if err == nil {
		path := evidence.HandshakeInitialize
		if ss.method == "server/discover" {
			path = evidence.HandshakeDiscover
		}
		return ss, path, nil
	}
	if !probeExpired || hsCtx.Err() != nil {
		return session{}, "", fmt.Errorf("mcp handshake: %w", errOrCause(hsCtx, err))
	}
	ss, err = connect(hsCtx, &mcp.ClientSessionOptions{ProtocolVersion: fallbackProtocol})
	if err == nil {
		return ss, evidence.HandshakeInitializeFallback, nil
	}
	if hsCtx.Err() == nil && lateDiscoverSuccess(wr) {
		if ss, err2 := connect(hsCtx, nil); err2 == nil {
			return ss, evidence.HandshakeDiscoverRetry, nil
		}
	}
	return session{}, "", fmt.Errorf("mcp handshake (initialize %s after server/discover went unanswered for %s): %w", fallbackProtocol, s.opts.DiscoverProbe, errOrCause(hsCtx, err))
}

// clientCapabilities are what the client advertises: exactly what the
// reference listings' client, the MCP Inspector 2.12.0 CLI, advertises
// (roots with listChanged, the tasks and skills extensions), so that a
// server that varies its surface with the client's capabilities shows
// both the same one. The client's roots are empty.
func clientCapabilities() *mcp.ClientCapabilities {
	return &mcp.ClientCapabilities{
		RootsV2: &mcp.RootCapabilities{ListChanged: true},
		Extensions: map[string]any{
			"io.modelcontextprotocol/tasks":  map[string]any{},
			"io.modelcontextprotocol/skills": map[string]any{},
		},
	}
}

// lateDiscoverSuccess reports whether server/discover was answered with a
// result after its session was given up.
func lateDiscoverSuccess(wr *wire) bool {
	late, _ := wr.lateAnswers()
	for _, l := range late {
		if l.Method == "server/discover" && l.Err == nil {
			return true
		}
	}
	return false
}

// waitLateDiscover waits until server/discover has been answered, late
// (with a result or an error), or until deadline, or until ctx ends (the
// server exited).
func waitLateDiscover(ctx context.Context, wr *wire, deadline time.Time) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		late, _ := wr.lateAnswers()
		for _, l := range late {
			if l.Method == "server/discover" {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// errOrCause prefers the context's error (a deadline) over the transport's
// report of it, so that callers can tell a timeout with errors.Is.
func errOrCause(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return err
}
