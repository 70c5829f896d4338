package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/evidence"
)

// ToolVersion is set by the CLI to the program's version; it is sent as the
// MCP client version.
var ToolVersion = "dev"

// fallbackProtocol is the protocol version of the initialize sent when a
// server does not answer server/discover at all.
const fallbackProtocol = "2025-11-25"

// maxListItems bounds each list so a server cannot page forever.
const maxListItems = 5000

// errExited is the cancellation cause when the server process exits.
var errExited = errors.New("server exited")

func (s *Sandbox) runPhase(ctx context.Context, r *run, tree string, bin *evidence.Bin, t Target, w *watch) (*evidence.Session, *contract.Contract, error) {
	sess := &evidence.Session{NonJSONSample: []string{}}
	cmd := append([]string{bin.Path}, t.Args...)
	if bin.Name == "main" {
		cmd = append([]string{"node", bin.Path}, t.Args...)
	}
	env := []string{"HOME=/tmp/home", "PATH=" + treeDir + "/node_modules/.bin:/usr/local/bin:/usr/bin:/bin"}
	envValues := make([]string, 0, len(t.Env))
	names := make([]string, 0, len(t.Env))
	for k := range t.Env {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		env = append(env, k+"="+t.Env[k])
		envValues = append(envValues, t.Env[k])
	}
	hc := hardened()
	hc.NetworkMode = "none"
	hc.Mounts = []mount.Mount{{Type: mount.TypeVolume, Source: tree, Target: treeDir, ReadOnly: true}}
	hc.Resources = container.Resources{
		Memory:     s.opts.Memory,
		MemorySwap: s.opts.Memory,
		NanoCPUs:   s.opts.NanoCPUs,
		PidsLimit:  int64Ptr(s.opts.Pids),
	}
	if w != nil {
		home, err := r.createVolume(ctx, "home-run")
		if err != nil {
			return nil, nil, err
		}
		w.hostConfig(hc, home)
		env[0] = "HOME=" + homeDir
		env = append(env, w.env(t.Env)...)
		cmd = append([]string{"sh", "-c", waitWrapper, "verifymcp-wait"}, cmd...)
	}
	created, err := r.cli.ContainerCreate(ctx, &container.Config{
		Image:        s.opts.Image,
		User:         sandboxUser,
		Env:          env,
		WorkingDir:   "/tmp",
		Cmd:          cmd,
		Labels:       r.labels(),
		OpenStdin:    true,
		StdinOnce:    true,
		AttachStdin:  true,
		AttachStdout: true,
		AttachStderr: true,
	}, hc, nil, nil, r.name("run"))
	if err != nil {
		return nil, nil, fmt.Errorf("create run container: %w", err)
	}
	id := created.ID
	defer func() {
		rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = r.cli.ContainerRemove(rmCtx, id, container.RemoveOptions{Force: true})
	}()
	if w != nil {
		if err := w.seed(ctx, id); err != nil {
			return nil, nil, err
		}
	}
	att, err := r.cli.ContainerAttach(ctx, id, container.AttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		return nil, nil, fmt.Errorf("attach run container: %w", err)
	}
	defer att.Close()

	stdoutR, stdoutW := io.Pipe()
	stderr := &tailBuffer{max: 16 << 10}
	go func() {
		_, err := stdcopy.StdCopy(stdoutW, stderr, att.Reader)
		stdoutW.CloseWithError(err)
	}()
	filter := newFrameFilter()
	go filter.run(stdoutR, s.opts.MaxStdout)

	// The run context is cancelled, with errExited as its cause, when the
	// server process exits, so that no wait outlives the server.
	runCtx, cancelRun := context.WithCancelCause(ctx)
	defer cancelRun(nil)
	waitCh, waitErrCh := r.cli.ContainerWait(ctx, id, container.WaitConditionNextExit)
	exited := make(chan int64, 1)
	go func() {
		select {
		case w := <-waitCh:
			exited <- w.StatusCode
			cancelRun(errExited)
		case <-waitErrCh:
		case <-runCtx.Done():
		}
	}()

	started := time.Now()
	if err := r.cli.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		return nil, nil, fmt.Errorf("start run container: %w", err)
	}
	stdin := att.Conn
	var released time.Time
	tracerStatus := "not_run"
	if w != nil {
		// The release is the first line on stdin, before any MCP frame.
		if released, tracerStatus, err = w.begin(ctx, evidence.PhaseRun, stdin); err != nil {
			return nil, nil, err
		}
		s.opts.Logger.Debug("tracer attached", "phase", evidence.PhaseRun)
	}
	sess.StartMS = time.Since(started).Milliseconds()

	cs, path, hsErr := s.handshake(runCtx, filter, stdin)
	sess.HandshakeMS = time.Since(started).Milliseconds()
	var c *contract.Contract
	if hsErr == nil {
		sess.HandshakePath = path
		listStart := time.Now()
		c, err = s.list(runCtx, cs, sess)
		sess.ListMS = time.Since(listStart).Milliseconds()
		_ = cs.Close()
		if err != nil {
			hsErr = err
			c = nil
		}
	}
	var idle time.Duration
	if w != nil {
		w.listEnd = time.Now()
		w.obs.control("mark handshake_done")
		// Watch the idle server: no request of ours is in flight, so any
		// network activity now is the server's own (a beacon).
		if hsErr == nil && s.opts.Idle > 0 {
			select {
			case <-runCtx.Done():
			case <-time.After(s.opts.Idle):
			}
			idle = time.Since(w.listEnd)
		}
	}

	// Decide whether the server died before we close its stdin (which makes
	// a well-behaved stdio server exit). A failure that is not our deadline
	// usually means the process is exiting: give its exit a moment to arrive.
	var exitCode *int
	exitedEarly := context.Cause(runCtx) == errExited
	if hsErr != nil && !exitedEarly && !errors.Is(hsErr, context.DeadlineExceeded) {
		select {
		case <-runCtx.Done():
		case <-time.After(2 * time.Second):
		}
		exitedEarly = context.Cause(runCtx) == errExited
	}
	_ = att.CloseWrite()
	// A stdio server should exit when its stdin closes; a short grace is
	// enough for one that did its work (it is stopped after that), a longer
	// one lets a failing server's exit status arrive.
	grace := 200 * time.Millisecond
	if hsErr != nil {
		grace = 2 * time.Second
	}
	select {
	case code := <-exited:
		v := int(code)
		exitCode = &v
	case <-time.After(grace):
	}
	inspCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if w != nil {
		watched := time.Since(released)
		if exitCode == nil {
			// Done with the server: stop it at once, so that its home can be
			// read (the evidence of the run is complete).
			_ = r.cli.ContainerKill(inspCtx, id, "KILL")
			select {
			case <-exited:
			case <-time.After(2 * time.Second):
			}
		}
		filesStatus := "ok"
		files, err := w.diffHome(inspCtx, id, evidence.PhaseRun)
		if err != nil {
			filesStatus = "error: " + err.Error()
		}
		w.addFiles(files)
		if st := w.obs.status(inspCtx, r.cli); st != "ok" && tracerStatus == "ok" {
			tracerStatus = st
		}
		w.runWin = [2]time.Time{released, time.Now()}
		s.opts.Logger.Debug("home compared", "phase", evidence.PhaseRun, "changes", len(files))
		w.runWatch = evidence.Watch{Phase: evidence.PhaseRun, WatchedMS: watched.Milliseconds(), IdleMS: idle.Milliseconds(), Tracer: tracerStatus, Files: filesStatus}
	}
	info, ierr := r.cli.ContainerInspect(inspCtx, id)
	if ierr == nil && info.State != nil {
		sess.OOMKilled = info.State.OOMKilled
		if exitCode == nil && !info.State.Running {
			v := info.State.ExitCode
			exitCode = &v
		}
	}
	nonJSON, samples, truncated := filter.noise()
	sess.NonJSONLines = nonJSON
	// Server-controlled text that becomes evidence is redacted like stderr.
	for i := range samples {
		samples[i] = Redact(samples[i], envValues)
	}
	sess.NonJSONSample = samples
	for m, e := range sess.ListErrors {
		sess.ListErrors[m] = Redact(e, envValues)
	}
	sess.Truncated = sess.Truncated || truncated
	sess.StdoutBytes = filter.bytes.Load()
	sess.StderrTail = Redact(tailString(stderr.String(), 4000), envValues)

	switch {
	case hsErr == nil:
		sess.Outcome = evidence.OutcomeOK
	case sess.OOMKilled:
		sess.Outcome = evidence.OutcomeOOM
		sess.Error = "the server was killed for exceeding its memory limit"
		sess.ExitCode = exitCode
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
		return nil, nil, ctx.Err()
	default:
		sess.Outcome = evidence.OutcomeProtocolError
		sess.Error = Redact(hsErr.Error(), envValues)
	}
	return sess, c, nil
}

// handshake establishes the MCP session. It lets the go-sdk client try
// server/discover first; if the server neither answers nor rejects it within
// the probe deadline (some servers silently drop unknown methods), it starts
// a new session over the same stdio that sends initialize with protocol
// version 2025-11-25, within what is left of the handshake timeout.
func (s *Sandbox) handshake(ctx context.Context, filter *frameFilter, stdin io.Writer) (*mcp.ClientSession, string, error) {
	hsCtx, cancel := context.WithTimeout(ctx, s.opts.HandshakeTimeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "verifymcp", Version: ToolVersion}, nil)

	probeCtx, cancelProbe := context.WithTimeout(hsCtx, s.opts.DiscoverProbe)
	first := &mcp.IOTransport{Reader: newFrameReader(filter.frames), Writer: &stdinWriter{w: stdin}}
	cs, err := client.Connect(probeCtx, first, nil)
	probeExpired := probeCtx.Err() != nil
	cancelProbe()
	if err == nil {
		path := evidence.HandshakeInitialize
		if cs.InitializeResult() != nil && cs.InitializeResult().ProtocolVersion > fallbackProtocol {
			path = evidence.HandshakeDiscover
		}
		return cs, path, nil
	}
	if !probeExpired || hsCtx.Err() != nil {
		return nil, "", fmt.Errorf("mcp handshake: %w", errOrCause(hsCtx, err))
	}
	// The server may still reject server/discover, late: that answer
	// carries the id the fallback's initialize reuses, so it is dropped.
	fr := newFrameReader(filter.frames)
	fr.skip = lateProbeRejection
	second := &mcp.IOTransport{Reader: fr, Writer: &stdinWriter{w: stdin}}
	cs, err = client.Connect(hsCtx, second, &mcp.ClientSessionOptions{ProtocolVersion: fallbackProtocol})
	if err != nil {
		return nil, "", fmt.Errorf("mcp handshake (initialize %s after server/discover went unanswered for %s): %w", fallbackProtocol, s.opts.DiscoverProbe, errOrCause(hsCtx, err))
	}
	return cs, evidence.HandshakeInitializeFallback, nil
}

// errOrCause prefers the context's error (a deadline) over the transport's
// report of it, so that callers can tell a timeout with errors.Is.
func errOrCause(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return err
}

// list captures every page of tools, prompts, resources and templates the
// server declared a capability for. A list call that fails is recorded, not
// fatal; a server that dies while listing is.
func (s *Sandbox) list(ctx context.Context, cs *mcp.ClientSession, sess *evidence.Session) (*contract.Contract, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.ListTimeout)
	defer cancel()
	init := cs.InitializeResult()
	c := &contract.Contract{}
	caps := &mcp.ServerCapabilities{}
	if init != nil {
		c.ProtocolVersion = init.ProtocolVersion
		c.Instructions = init.Instructions
		if init.ServerInfo != nil {
			c.ServerInfo = contract.Implementation{Name: init.ServerInfo.Name, Title: init.ServerInfo.Title, Version: init.ServerInfo.Version}
		}
		if init.Capabilities != nil {
			caps = init.Capabilities
		}
	}
	if b, err := json.Marshal(caps); err == nil {
		c.Capabilities = b
	}
	fail := func(method string, err error) error {
		if context.Cause(ctx) == errExited || errors.Is(err, mcp.ErrConnectionClosed) {
			return fmt.Errorf("%s: %w", method, err)
		}
		if ctx.Err() != nil {
			sess.Truncated = true
		}
		if sess.ListErrors == nil {
			sess.ListErrors = map[string]string{}
		}
		sess.ListErrors[method] = err.Error()
		return nil
	}
	if caps.Tools != nil {
		for t, err := range cs.Tools(ctx, nil) {
			if err != nil {
				if ferr := fail("tools/list", err); ferr != nil {
					return nil, ferr
				}
				break
			}
			if len(c.Tools) >= maxListItems {
				sess.Truncated = true
				break
			}
			c.Tools = append(c.Tools, toolOf(t))
		}
	}
	if caps.Prompts != nil {
		for p, err := range cs.Prompts(ctx, nil) {
			if err != nil {
				if ferr := fail("prompts/list", err); ferr != nil {
					return nil, ferr
				}
				break
			}
			if len(c.Prompts) >= maxListItems {
				sess.Truncated = true
				break
			}
			c.Prompts = append(c.Prompts, promptOf(p))
		}
	}
	if caps.Resources != nil {
		for res, err := range cs.Resources(ctx, nil) {
			if err != nil {
				if ferr := fail("resources/list", err); ferr != nil {
					return nil, ferr
				}
				break
			}
			if len(c.Resources) >= maxListItems {
				sess.Truncated = true
				break
			}
			c.Resources = append(c.Resources, contract.Resource{URI: res.URI, Name: res.Name, Title: res.Title, Description: res.Description, MIMEType: res.MIMEType})
		}
		for tp, err := range cs.ResourceTemplates(ctx, nil) {
			if err != nil {
				if ferr := fail("resources/templates/list", err); ferr != nil {
					return nil, ferr
				}
				break
			}
			if len(c.Templates) >= maxListItems {
				sess.Truncated = true
				break
			}
			c.Templates = append(c.Templates, contract.Template{URITemplate: tp.URITemplate, Name: tp.Name, Title: tp.Title, Description: tp.Description, MIMEType: tp.MIMEType})
		}
	}
	if err := contract.Normalize(c); err != nil {
		return nil, err
	}
	return c, nil
}

func toolOf(t *mcp.Tool) contract.Tool {
	out := contract.Tool{Name: t.Name, Title: t.Title, Description: t.Description}
	if t.InputSchema != nil {
		if b, err := json.Marshal(t.InputSchema); err == nil && string(b) != "null" {
			out.InputSchema = b
		}
	}
	if t.OutputSchema != nil {
		if b, err := json.Marshal(t.OutputSchema); err == nil && string(b) != "null" {
			out.OutputSchema = b
		}
	}
	if a := t.Annotations; a != nil {
		out.Annotations = &contract.Annotations{
			Title:           a.Title,
			ReadOnlyHint:    a.ReadOnlyHint,
			DestructiveHint: a.DestructiveHint,
			IdempotentHint:  a.IdempotentHint,
			OpenWorldHint:   a.OpenWorldHint,
		}
	}
	return out
}

func promptOf(p *mcp.Prompt) contract.Prompt {
	out := contract.Prompt{Name: p.Name, Title: p.Title, Description: p.Description, Arguments: []contract.PromptArgument{}}
	for _, a := range p.Arguments {
		if a == nil {
			continue
		}
		out.Arguments = append(out.Arguments, contract.PromptArgument{Name: a.Name, Title: a.Title, Description: a.Description, Required: a.Required})
	}
	return out
}

var _ = strings.TrimSpace
