package sandbox

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/sandbox/canary"
)

// Behaviour capture. The script step and the run phase share the network
// namespace of a sink container (this program's own binary, the only other
// member of a per-run internal network) that redirects every outbound packet
// to itself, answers DNS with its own address and logs what it receives,
// forwarding nothing. A tracer container joins the PID namespace of each
// watched container and records every program executed. Each watched phase
// gets a home directory on its own volume, seeded with canary credentials
// (also planted in the environment), and compared after the phase.

const (
	homeDir     = "/home/sandbox"
	sinkTCPPort = "15001"
	sinkUDPPort = "15053"
	// waitWrapper holds the package's process until the tracer is attached:
	// it reads one line from stdin, then execs the real command.
	waitWrapper = `read -r _ && exec "$@"`
)

// sinkEvent is one line of the sink's output (see sandbox/sink).
type sinkEvent struct {
	Type        string          `json:"type"`
	Time        time.Time       `json:"time"`
	Phase       string          `json:"phase"`
	Label       string          `json:"label"`
	Advertise   string          `json:"advertise"`
	DstIP       string          `json:"dst_ip"`
	DstPort     int             `json:"dst_port"`
	LiteralIP   bool            `json:"literal_ip"`
	DNSName     string          `json:"dns_name"`
	DNSType     string          `json:"dns_type"`
	SNI         string          `json:"sni"`
	HTTPMethod  string          `json:"http_method"`
	HTTPTarget  string          `json:"http_target"`
	HTTPHost    string          `json:"http_host"`
	HTTPHeaders json.RawMessage `json:"http_headers"`
	Body        []byte          `json:"body"`
	Data        []byte          `json:"data"`
	Bytes       int64           `json:"bytes"`
	Error       string          `json:"error"`
}

// execEvent is one line of the tracer's output (see sandbox/tracer).
type execEvent struct {
	Type string    `json:"type"`
	Time time.Time `json:"time"`
	PID  int       `json:"pid"`
	PPID int       `json:"ppid"`
	UID  int       `json:"uid"`
	Exe  string    `json:"exe"`
	Argv []string  `json:"argv"`
}

// watch is the behaviour capture of one scan.
type watch struct {
	s       *Sandbox
	r       *run
	canary  *canary.Set
	sink    *sinkHandle
	envVals []string // operator --env values, for redaction
	b       *evidence.Behavior
	// per-phase records
	procs   map[string][]execEvent
	windows []scriptWindow
	listEnd time.Time
	// runWatch and scriptsWatch describe the watched phases; the sink's
	// status is filled in when it stops.
	runWatch, scriptsWatch evidence.Watch
}

// scriptWindow is when one lifecycle script ran, for attribution.
type scriptWindow struct {
	Package    string
	Start, End time.Time
}

func (s *Sandbox) newWatch(ctx context.Context, r *run, envVals []string) (*watch, error) {
	set, err := canary.Generate(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("canaries: %w", err)
	}
	w := &watch{s: s, r: r, canary: set, envVals: envVals, procs: map[string][]execEvent{},
		b: &evidence.Behavior{Watches: []evidence.Watch{}, Canaries: []evidence.Canary{}, Network: []evidence.NetEvent{},
			Files: []evidence.FileEvent{}, Processes: []evidence.ProcessEvent{}, Exfiltration: []evidence.CanaryHit{}}}
	for _, v := range set.Values() {
		w.b.Canaries = append(w.b.Canaries, evidence.Canary{Kind: v.Kind, Where: v.Where})
	}
	sh, err := s.startSink(ctx, r)
	if err != nil {
		return nil, err
	}
	w.sink = sh
	return w, nil
}

// env returns the canary environment, minus names the operator set.
func (w *watch) env(operator map[string]string) []string {
	var out []string
	for k, v := range w.canary.Env() {
		if _, ok := operator[k]; !ok {
			out = append(out, k+"="+v)
		}
	}
	sort.Strings(out)
	return out
}

// hostConfig makes a watched container join the sink's network namespace
// and mounts its phase's home volume.
func (w *watch) hostConfig(hc *container.HostConfig, home string) {
	hc.NetworkMode = container.NetworkMode("container:" + w.sink.id)
	hc.Mounts = append(hc.Mounts, mountVolume(home, homeDir, false))
}

// seed copies the home directory (canary files and a lived-in profile) into
// the created container's home volume.
func (w *watch) seed(ctx context.Context, id string) error {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	mod := time.Now().Add(-72 * time.Hour)
	for _, f := range w.canary.Files() {
		for d := path.Dir(f.Path); d != "." && d != "/" && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	var dl []string
	for d := range dirs {
		dl = append(dl, d)
	}
	sort.Strings(dl)
	for _, d := range dl {
		if err := tw.WriteHeader(&tar.Header{Name: d + "/", Mode: 0o700, Uid: 65534, Gid: 65534, ModTime: mod, Typeflag: tar.TypeDir}); err != nil {
			return err
		}
	}
	for _, f := range w.canary.Files() {
		mode := int64(f.Mode.Perm())
		if mode == 0 {
			mode = 0o600
		}
		if err := tw.WriteHeader(&tar.Header{Name: f.Path, Mode: mode, Size: int64(len(f.Data)), Uid: 65534, Gid: 65534, ModTime: mod, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := w.r.cli.CopyToContainer(ctx, id, homeDir, &buf, container.CopyToContainerOptions{}); err != nil {
		return fmt.Errorf("seed home: %w", err)
	}
	return nil
}

// diffHome compares the stopped container's home with the seed.
func (w *watch) diffHome(ctx context.Context, id, phase string) ([]evidence.FileEvent, error) {
	rc, _, err := w.r.cli.CopyFromContainer(ctx, id, homeDir+"/.")
	if err != nil {
		return nil, fmt.Errorf("read home: %w", err)
	}
	defer rc.Close()
	seed := map[string][]byte{}
	for _, f := range w.canary.Files() {
		seed[path.Clean(f.Path)] = f.Data
	}
	seen := map[string]bool{}
	var out []evidence.FileEvent
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return out, fmt.Errorf("read home: %w", err)
		}
		name := strings.TrimPrefix(path.Clean("/"+h.Name), "/")
		// The archive is rooted at the home directory itself (".").
		if i := strings.IndexByte(name, '/'); i >= 0 && (name[:i] == "." || name[:i] == "sandbox") {
			name = name[i+1:]
		}
		if name == "" || name == "." || name == "sandbox" || h.Typeflag == tar.TypeDir {
			continue
		}
		seen[name] = true
		data, _ := io.ReadAll(io.LimitReader(tr, 1<<20))
		orig, wasSeeded := seed[name]
		switch {
		case !wasSeeded:
			out = append(out, fileEvent(phase, name, "created", h.ModTime))
		case !bytes.Equal(orig, data) || h.Typeflag != tar.TypeReg:
			out = append(out, fileEvent(phase, name, "modified", h.ModTime))
		}
	}
	for name := range seed {
		if !seen[name] {
			out = append(out, fileEvent(phase, name, "deleted", time.Time{}))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

func fileEvent(phase, rel, op string, _ time.Time) evidence.FileEvent {
	ev := evidence.FileEvent{Phase: phase, Path: "~/" + rel, Op: op}
	ev.Why = sensitiveClass(rel)
	ev.Sensitive = ev.Why != ""
	return ev
}

// sensitiveClass names why a path under the home directory is sensitive.
func sensitiveClass(rel string) string {
	base := path.Base(rel)
	switch {
	case strings.HasPrefix(rel, ".ssh/"):
		return "ssh"
	case strings.HasPrefix(rel, ".aws/"):
		return "aws"
	case rel == ".npmrc" || rel == ".yarnrc" || rel == ".yarnrc.yml":
		return "npmrc"
	case rel == ".pypirc" || rel == ".netrc" || rel == ".git-credentials" || strings.HasPrefix(rel, ".docker/") || strings.HasPrefix(rel, ".kube/") || strings.HasPrefix(rel, ".config/gh/") || strings.HasPrefix(rel, ".gnupg/"):
		return "credentials"
	case base == ".bashrc" || base == ".bash_profile" || base == ".bash_login" || base == ".bash_logout" || base == ".profile" || base == ".zshrc" || base == ".zprofile" || base == ".zshenv" || strings.HasPrefix(rel, ".config/fish/"):
		return "shell_profile"
	case rel == ".gitconfig" || strings.HasPrefix(rel, ".config/git/"):
		return "gitconfig"
	case strings.HasPrefix(rel, ".config/autostart/") || strings.HasPrefix(rel, ".config/systemd/"):
		return "autostart"
	}
	return ""
}

// sinkHandle is the running sink of a scan.
type sinkHandle struct {
	id        string
	att       types.HijackedResponse
	mu        sync.Mutex
	events    []sinkEvent
	done      chan struct{}
	stderr    *tailBuffer
	advertise string
}

func (s *Sandbox) startSink(ctx context.Context, r *run) (*sinkHandle, error) {
	if _, err := r.createInternalNetwork(ctx, "sink"); err != nil {
		return nil, err
	}
	hc := &container.HostConfig{
		NetworkMode:    container.NetworkMode(r.name("sink")),
		CapDrop:        []string{"ALL"},
		CapAdd:         []string{"NET_ADMIN"},
		SecurityOpt:    []string{"no-new-privileges"},
		ReadonlyRootfs: true,
		Resources:      container.Resources{Memory: 128 << 20, PidsLimit: int64Ptr(128)},
		// No unprivileged ICMP in the shared namespace: the sink redirects
		// TCP and UDP only, and a ping would otherwise vanish unrecorded.
		Sysctls: map[string]string{"net.ipv4.ping_group_range": "1 0"},
	}
	created, err := r.cli.ContainerCreate(ctx, &container.Config{
		Image:        s.opts.HelperImage,
		User:         "0:0",
		Cmd:          []string{"sandbox", "sink", "--tcp-port", sinkTCPPort, "--udp-port", sinkUDPPort},
		Labels:       r.labels(),
		OpenStdin:    true,
		StdinOnce:    true,
		AttachStdin:  true,
		AttachStdout: true,
		AttachStderr: true,
	}, hc, nil, nil, r.name("sink"))
	if err != nil {
		return nil, fmt.Errorf("create sink: %w", err)
	}
	h := &sinkHandle{id: created.ID, done: make(chan struct{}), stderr: &tailBuffer{max: 4096}}
	h.att, err = r.cli.ContainerAttach(ctx, h.id, container.AttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		return nil, fmt.Errorf("attach sink: %w", err)
	}
	if err := r.cli.ContainerStart(ctx, h.id, container.StartOptions{}); err != nil {
		h.att.Close()
		return nil, fmt.Errorf("start sink: %w", err)
	}
	ready := make(chan error, 1)
	go func() {
		defer close(h.done)
		pr, pw := io.Pipe()
		go func() {
			_, err := stdcopy.StdCopy(pw, h.stderr, h.att.Reader)
			pw.CloseWithError(err)
		}()
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		first := true
		for sc.Scan() {
			var ev sinkEvent
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				continue
			}
			if first && ev.Type == "ready" {
				first = false
				h.advertise = ev.Advertise
				ready <- nil
				continue
			}
			h.mu.Lock()
			h.events = append(h.events, ev)
			h.mu.Unlock()
		}
		if first {
			ready <- fmt.Errorf("sink exited before it was ready: %s", strings.TrimSpace(h.stderr.String()))
		}
	}()
	select {
	case err := <-ready:
		if err != nil {
			h.att.Close()
			return nil, err
		}
	case <-time.After(20 * time.Second):
		h.att.Close()
		return nil, errors.New("sink did not become ready within 20s")
	case <-ctx.Done():
		h.att.Close()
		return nil, ctx.Err()
	}
	return h, nil
}

// control sends one control line to the sink.
func (h *sinkHandle) control(line string) {
	_, _ = h.att.Conn.Write([]byte(line + "\n"))
}

// stop ends the sink (EOF on its control stream), waits for its last
// events and reports whether it ran until now.
func (h *sinkHandle) stop(ctx context.Context, cli client.APIClient, log *slog.Logger) ([]sinkEvent, string) {
	status := "ok"
	if info, err := cli.ContainerInspect(ctx, h.id); err != nil || info.State == nil || !info.State.Running {
		status = "died before the end of the scan"
	}
	// The sink's own footprint, for the operator and the benchmark.
	if st, err := cli.ContainerStatsOneShot(ctx, h.id); err == nil {
		var v container.StatsResponse
		if json.NewDecoder(st.Body).Decode(&v) == nil {
			// rss excludes the page cache of the binary itself, which the
			// cgroup is charged for when it first reads it.
			log.Info("sink memory", "rss_bytes", v.MemoryStats.Stats["total_rss"], "usage_bytes", v.MemoryStats.Usage, "peak_bytes", v.MemoryStats.MaxUsage)
		}
		st.Body.Close()
	}
	_ = h.att.CloseWrite()
	select {
	case <-h.done:
	case <-time.After(5 * time.Second):
		status = "did not flush its events"
	}
	h.att.Close()
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]sinkEvent(nil), h.events...), status
}

// tracerHandle is a tracer attached to one watched container.
type tracerHandle struct {
	id     string
	att    types.HijackedResponse
	mu     sync.Mutex
	events []execEvent
	done   chan struct{}
	stderr *tailBuffer
}

// startTracer starts a tracer in the PID namespace of target and waits
// until it has attached to every process there.
func (s *Sandbox) startTracer(ctx context.Context, r *run, target, part string) (*tracerHandle, error) {
	hc := &container.HostConfig{
		PidMode:        container.PidMode("container:" + target),
		NetworkMode:    "none",
		CapDrop:        []string{"ALL"},
		CapAdd:         []string{"SYS_PTRACE"},
		SecurityOpt:    []string{"no-new-privileges"},
		ReadonlyRootfs: true,
		Resources:      container.Resources{Memory: 64 << 20, PidsLimit: int64Ptr(16)},
	}
	created, err := r.cli.ContainerCreate(ctx, &container.Config{
		Image:        s.opts.HelperImage,
		User:         "0:0",
		Cmd:          []string{"sandbox", "trace"},
		Labels:       r.labels(),
		AttachStdout: true,
		AttachStderr: true,
	}, hc, nil, nil, r.name("trace-"+part))
	if err != nil {
		return nil, fmt.Errorf("create tracer: %w", err)
	}
	t := &tracerHandle{id: created.ID, done: make(chan struct{}), stderr: &tailBuffer{max: 4096}}
	t.att, err = r.cli.ContainerAttach(ctx, t.id, container.AttachOptions{Stream: true, Stdout: true, Stderr: true})
	if err != nil {
		return nil, fmt.Errorf("attach tracer: %w", err)
	}
	if err := r.cli.ContainerStart(ctx, t.id, container.StartOptions{}); err != nil {
		t.att.Close()
		return nil, fmt.Errorf("start tracer: %w", err)
	}
	ready := make(chan error, 1)
	go func() {
		defer close(t.done)
		pr, pw := io.Pipe()
		go func() {
			_, err := stdcopy.StdCopy(pw, t.stderr, t.att.Reader)
			pw.CloseWithError(err)
		}()
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		first := true
		for sc.Scan() {
			var ev execEvent
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				continue
			}
			if first && ev.Type == "ready" {
				first = false
				ready <- nil
				continue
			}
			if ev.Type == "exec" {
				t.mu.Lock()
				t.events = append(t.events, ev)
				t.mu.Unlock()
			}
		}
		if first {
			ready <- fmt.Errorf("tracer exited before it was ready: %s", strings.TrimSpace(t.stderr.String()))
		}
	}()
	select {
	case err := <-ready:
		if err != nil {
			t.att.Close()
			return nil, err
		}
	case <-time.After(20 * time.Second):
		t.att.Close()
		return nil, errors.New("tracer did not attach within 20s")
	case <-ctx.Done():
		t.att.Close()
		return nil, ctx.Err()
	}
	return t, nil
}

// stop ends the tracer (if the target's exit has not already ended it) and
// returns what it recorded, with its status: "ok" when it ran until the
// end of the phase.
func (t *tracerHandle) stop(ctx context.Context, r *run, targetExited bool) ([]execEvent, string) {
	status := "ok"
	info, err := r.cli.ContainerInspect(ctx, t.id)
	if err == nil && info.State != nil && !info.State.Running && !targetExited {
		status = fmt.Sprintf("died during the phase (exit %d): %s", info.State.ExitCode, strings.TrimSpace(t.stderr.String()))
	}
	if err == nil && info.State != nil && info.State.Running {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		timeout := 3
		_ = r.cli.ContainerStop(stopCtx, t.id, container.StopOptions{Timeout: &timeout})
		cancel()
	}
	select {
	case <-t.done:
	case <-time.After(5 * time.Second):
	}
	t.att.Close()
	rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
	_ = r.cli.ContainerRemove(rmCtx, t.id, container.RemoveOptions{Force: true})
	cancel()
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]execEvent(nil), t.events...), status
}

func mountVolume(name, target string, ro bool) mount.Mount {
	return mount.Mount{Type: mount.TypeVolume, Source: name, Target: target, ReadOnly: ro}
}

// close stops the sink and returns the behaviour evidence.
func (w *watch) close(ctx context.Context) *evidence.Behavior {
	events, status := w.sink.stop(ctx, w.r.cli, w.s.opts.Logger)
	w.addNetwork(events)
	for _, pw := range []*evidence.Watch{&w.scriptsWatch, &w.runWatch} {
		if pw.Phase == "" {
			continue
		}
		pw.Sink = status
		w.b.Watches = append(w.b.Watches, *pw)
	}
	return w.finish()
}
