package sandbox

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// LabelOwner names the process that created a labelled object
// ("hostname/pid"), so that the reaper removes only what a dead process
// left behind and never the work of a concurrent scan.
const LabelOwner = "verifymcp.owner"

// LabelCache marks volumes that outlive runs on purpose (the npm cache).
const LabelCache = "verifymcp.cache"

func ownerLabel() string {
	host, _ := os.Hostname()
	return host + "/" + strconv.Itoa(os.Getpid())
}

// run tracks the engine objects of one scan, all labelled with its id.
type run struct {
	cli client.APIClient
	id  string
	// mask removes secrets from what the scan captures, before any of it
	// is cut to a bound (a cut could otherwise leave part of a secret).
	mask *masker
}

// newRun tracks the engine objects of run id, made through cli.
func newRun(cli client.APIClient, id string, mask *masker) *run {
	return &run{cli: settledClient{cli}, id: id, mask: mask}
}

// settledClient lets an engine call that makes an object finish even when
// its context ends mid-call, and then returns the context's error. The
// engine does not abort a create whose client went away: a container,
// volume or network it made after the run's cleanup had listed the run's
// objects would be left behind (a second interrupt abandoning a scan while
// it creates one). Once the call is over the object is there, labelled
// with the run, for the cleanup that follows to remove.
type settledClient struct{ client.APIClient }

// settleTimeout bounds a create that outlives its context.
const settleTimeout = time.Minute

// settle runs create under a context that ctx's end does not cut short
// (bounded by settleTimeout), then reports ctx's end if it came meanwhile.
func settle[T any](ctx context.Context, create func(context.Context) (T, error)) (T, error) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	v, err := create(sctx)
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	return v, err
}

func (c settledClient) ContainerCreate(ctx context.Context, config *container.Config, hostConfig *container.HostConfig, networkingConfig *network.NetworkingConfig, platform *ocispec.Platform, containerName string) (container.CreateResponse, error) {
	return settle(ctx, func(ctx context.Context) (container.CreateResponse, error) {
		return c.APIClient.ContainerCreate(ctx, config, hostConfig, networkingConfig, platform, containerName)
	})
}

func (c settledClient) VolumeCreate(ctx context.Context, options volume.CreateOptions) (volume.Volume, error) {
	return settle(ctx, func(ctx context.Context) (volume.Volume, error) { return c.APIClient.VolumeCreate(ctx, options) })
}

func (c settledClient) NetworkCreate(ctx context.Context, name string, options network.CreateOptions) (network.CreateResponse, error) {
	return settle(ctx, func(ctx context.Context) (network.CreateResponse, error) {
		return c.APIClient.NetworkCreate(ctx, name, options)
	})
}

func (r *run) labels() map[string]string {
	return map[string]string{LabelRun: r.id, LabelOwner: ownerLabel()}
}

// name returns an engine object name for this run, unique and recognisable.
func (r *run) name(part string) string { return "verifymcp-" + r.id + "-" + part }

func (r *run) createVolume(ctx context.Context, part string) (string, error) {
	v, err := r.cli.VolumeCreate(ctx, volume.CreateOptions{Name: r.name(part), Labels: r.labels()})
	if err != nil {
		return "", fmt.Errorf("create volume %s: %w", part, err)
	}
	return v.Name, nil
}

func (r *run) createInternalNetwork(ctx context.Context, part string) (string, error) {
	resp, err := r.cli.NetworkCreate(ctx, r.name(part), network.CreateOptions{
		Driver:   "bridge",
		Internal: true,
		Labels:   r.labels(),
	})
	if err != nil {
		return "", fmt.Errorf("create network %s: %w", part, err)
	}
	return resp.ID, nil
}

// cleanup removes every container, network and volume labelled with this
// run's id. It uses its own context so that it still runs after the scan's
// context was cancelled by a signal or a timeout.
func (r *run) cleanup(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 60*time.Second)
	defer cancel()
	return removeLabelled(ctx, r.cli, LabelRun+"="+r.id, nil)
}

// removeLabelled removes containers, then networks, then volumes carrying
// the label filter. keep, when non-nil, spares objects whose labels it
// accepts.
func removeLabelled(ctx context.Context, cli client.APIClient, label string, keep func(map[string]string) bool) error {
	var errs []error
	f := filters.NewArgs(filters.Arg("label", label))
	cs, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err != nil {
		return fmt.Errorf("list containers: %w", err)
	}
	for _, c := range cs {
		if keep != nil && keep(c.Labels) {
			continue
		}
		if err := cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !client.IsErrNotFound(err) {
			errs = append(errs, fmt.Errorf("remove container %s: %w", c.ID[:12], err))
		}
	}
	ns, err := cli.NetworkList(ctx, network.ListOptions{Filters: f})
	if err != nil {
		errs = append(errs, fmt.Errorf("list networks: %w", err))
	}
	for _, n := range ns {
		if keep != nil && keep(n.Labels) {
			continue
		}
		if err := cli.NetworkRemove(ctx, n.ID); err != nil && !client.IsErrNotFound(err) {
			errs = append(errs, fmt.Errorf("remove network %s: %w", n.Name, err))
		}
	}
	vs, err := cli.VolumeList(ctx, volume.ListOptions{Filters: f})
	if err != nil {
		errs = append(errs, fmt.Errorf("list volumes: %w", err))
	} else {
		for _, v := range vs.Volumes {
			if keep != nil && keep(v.Labels) {
				continue
			}
			if err := cli.VolumeRemove(ctx, v.Name, true); err != nil && !client.IsErrNotFound(err) {
				errs = append(errs, fmt.Errorf("remove volume %s: %w", v.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// fileIn is a file copied into a container before it starts. Copying (not
// bind-mounting) is the only way host content enters a container.
type fileIn struct {
	Dir  string // absolute directory in the container
	Name string
	Data []byte
	Mode int64
	UID  int
}

// step describes one run-to-completion container.
type step struct {
	Part     string
	Config   *container.Config
	Host     *container.HostConfig
	Net      *network.NetworkingConfig
	Files    []fileIn
	Timeout  time.Duration
	MaxOut   int      // bytes of stdout kept (head)
	MaxErr   int      // bytes of stderr kept (tail)
	Networks []string // extra networks to connect before start
	// Hooks of a watched step. OnCreated runs before start (seed the home
	// volume); OnStarted runs once the container runs, with its stdin (start
	// the tracer, then release the wrapper); OnExited runs after it stopped,
	// before it is removed (compare the home volume).
	OnCreated func(ctx context.Context, id string) error
	OnStarted func(ctx context.Context, id string, stdin io.Writer) error
	OnExited  func(ctx context.Context, id string)
}

type stepResult struct {
	Stdout   []byte
	Stderr   []byte
	ExitCode int
	OOM      bool
	TimedOut bool
	Duration time.Duration
}

// runStep creates, starts and waits for one container, collecting bounded
// stdout and stderr over the attach stream, and removes it afterwards.
// An error means the engine failed us; the container's own failure is in
// the result.
func (r *run) runStep(ctx context.Context, s step) (stepResult, error) {
	var res stepResult
	s.Config.Labels = r.labels()
	s.Config.AttachStdout = true
	s.Config.AttachStderr = true
	if s.OnStarted != nil {
		s.Config.OpenStdin, s.Config.StdinOnce, s.Config.AttachStdin = true, true, true
	}
	created, err := r.cli.ContainerCreate(ctx, s.Config, s.Host, s.Net, nil, r.name(s.Part))
	if err != nil {
		return res, fmt.Errorf("create %s container: %w", s.Part, err)
	}
	id := created.ID
	defer func() {
		rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = r.cli.ContainerRemove(rmCtx, id, container.RemoveOptions{Force: true, RemoveVolumes: true})
	}()
	for _, f := range s.Files {
		if err := copyFile(ctx, r.cli, id, f); err != nil {
			return res, fmt.Errorf("copy %s into %s container: %w", f.Name, s.Part, err)
		}
	}
	for _, n := range s.Networks {
		if err := r.cli.NetworkConnect(ctx, n, id, nil); err != nil {
			return res, fmt.Errorf("connect %s container: %w", s.Part, err)
		}
	}
	if s.OnCreated != nil {
		if err := s.OnCreated(ctx, id); err != nil {
			return res, err
		}
	}
	watched := s.OnStarted != nil
	att, err := r.cli.ContainerAttach(ctx, id, container.AttachOptions{Stream: true, Stdin: watched, Stdout: true, Stderr: true})
	if err != nil {
		return res, fmt.Errorf("attach %s container: %w", s.Part, err)
	}
	defer att.Close()
	out := &headBuffer{max: s.MaxOut}
	errb := &tailBuffer{max: s.MaxErr}
	copied := make(chan struct{})
	go func() {
		_, _ = stdcopy.StdCopy(out, errb, att.Reader)
		close(copied)
	}()
	waitCh, waitErr := r.cli.ContainerWait(ctx, id, container.WaitConditionNextExit)
	start := time.Now()
	if err := r.cli.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		return res, fmt.Errorf("start %s container: %w", s.Part, err)
	}
	if watched {
		if err := s.OnStarted(ctx, id, att.Conn); err != nil {
			return res, err
		}
	}
	timer := time.NewTimer(s.Timeout)
	defer timer.Stop()
	select {
	case w := <-waitCh:
		res.ExitCode = int(w.StatusCode)
	case err := <-waitErr:
		return res, fmt.Errorf("wait for %s container: %w", s.Part, err)
	case <-timer.C:
		res.TimedOut = true
		killCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		_ = r.cli.ContainerKill(killCtx, id, "KILL")
		cancel()
	case <-ctx.Done():
		return res, ctx.Err()
	}
	res.Duration = time.Since(start)
	select {
	case <-copied:
	case <-time.After(5 * time.Second):
	}
	inspCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if info, err := r.cli.ContainerInspect(inspCtx, id); err == nil && info.State != nil {
		res.OOM = info.State.OOMKilled
		if !res.TimedOut {
			res.ExitCode = info.State.ExitCode
		}
	}
	res.Stdout = out.Bytes()
	res.Stderr = errb.Bytes()
	if s.OnExited != nil {
		s.OnExited(ctx, id)
	}
	return res, nil
}

func copyFile(ctx context.Context, cli client.APIClient, id string, f fileIn) error {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	// Every directory on the way, owned like the file: one the archive
	// leaves out is created owned by root.
	if dir, _ := splitDir(f.Name); dir != "" {
		parts := strings.Split(dir, "/")
		for i := range parts {
			if err := tw.WriteHeader(&tar.Header{Name: strings.Join(parts[:i+1], "/") + "/", Mode: 0o755, Uid: f.UID, Gid: f.UID, ModTime: time.Unix(0, 0), Typeflag: tar.TypeDir}); err != nil {
				return err
			}
		}
	}
	mode := f.Mode
	if mode == 0 {
		mode = 0o444
	}
	if err := tw.WriteHeader(&tar.Header{Name: f.Name, Mode: mode, Size: int64(len(f.Data)), Uid: f.UID, Gid: f.UID, ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	if _, err := tw.Write(f.Data); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return cli.CopyToContainer(ctx, id, f.Dir, &buf, container.CopyToContainerOptions{})
}

// headBuffer keeps the first max bytes written and counts the rest.
type headBuffer struct {
	mu      sync.Mutex
	max     int
	buf     []byte
	dropped int64
}

func (h *headBuffer) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	room := h.max - len(h.buf)
	if room > len(p) {
		room = len(p)
	}
	if room > 0 {
		h.buf = append(h.buf, p[:room]...)
	}
	h.dropped += int64(len(p) - max(room, 0))
	return len(p), nil
}

func (h *headBuffer) Bytes() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]byte(nil), h.buf...)
}

// tailBuffer keeps the last max bytes written.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]byte(nil), t.buf...)
}

func (t *tailBuffer) String() string { return string(t.Bytes()) }

var _ io.Writer = (*tailBuffer)(nil)

func ioPipe() (*io.PipeReader, *io.PipeWriter) { return io.Pipe() }

func splitDir(name string) (string, string) {
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] == '/' {
			return name[:i], name[i+1:]
		}
	}
	return "", name
}
