package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/verifymcp/verifymcp/sandbox/sink"
)

// observerHandle is the running observer of a scan: the sink and the
// tracer in one container, whose network and PID namespaces the watched
// containers join (see Observe).
type observerHandle struct {
	id    string
	att   types.HijackedResponse
	mu    sync.Mutex
	sink  []sinkEvent
	execs []execEvent
	// forks are the tracer's fork events, by child PID (at most
	// maxForks): who started each process, for the processes whose parent
	// never exec'ed in a watched window (see procTree).
	forks  map[int][]forkRec
	nforks int
	// exits are the tracer's exit events, by PID (at most maxRawEvents).
	exits map[int]exitEvent
	ready chan int // the tracer's ready lines (threads attached)
	use   chan map[string]placeUsage
	dig   chan treeDigest
	files chan fileLook
	// seeded and homes take the answers to "seed" and "home".
	seeded, homes chan homeAnswer
	// phase is the phase the observer was last told of; dropped counts,
	// by phase and kind, the events past maxRawEvents that were not kept.
	// keepSink and keepExec keep such an event anyway when it holds a
	// canary (at most maxKeptPast of them).
	phase    string
	dropped  drops
	kept     int
	keepSink func(sinkEvent) bool
	keepExec func(execEvent) bool
	done     chan struct{}
	stderr   *tailBuffer
	// waitReady starts the observer (once) and waits until it is ready.
	waitReady func() error
}

func (s *Sandbox) startObserver(ctx context.Context, r *run, held map[string]string, trust string) (*observerHandle, error) {
	mounts := heldMounts(held)
	for i := range mounts {
		// The observer writes each home's seed (homeplace.go).
		if strings.HasPrefix(path.Base(mounts[i].Target), "home-") {
			mounts[i].ReadOnly = false
		}
	}
	hc := &container.HostConfig{
		Mounts:      append(mounts, mountVolume(trust, trustVolumeDir, false)),
		NetworkMode: "none",
		CapDrop:     []string{"ALL"},
		// DAC_READ_SEARCH: the sink reads the package's /proc/PID/fd
		// links to name the process that owns a socket (sink/owner.go),
		// as ss -p does; without it, it copies descriptors with
		// pidfd_getfd, which SYS_PTRACE allows. CHOWN, DAC_OVERRIDE and
		// FOWNER: it writes the homes' seeds, owned by the sandbox user,
		// into their volumes (homeplace.go).
		CapAdd:         []string{"NET_ADMIN", "SYS_PTRACE", "DAC_READ_SEARCH", "CHOWN", "DAC_OVERRIDE", "FOWNER"},
		SecurityOpt:    []string{"no-new-privileges"},
		ReadonlyRootfs: true,
		Resources:      container.Resources{Memory: 128 << 20, PidsLimit: int64Ptr(128)},
		// No unprivileged ICMP in the shared namespace: the sink redirects
		// TCP and UDP only, and a ping would otherwise vanish unrecorded.
		Sysctls: map[string]string{"net.ipv4.ping_group_range": "1 0"},
		// The watched containers share this container's resolv.conf. Left
		// to the engine it names the host's nameserver, so an ordinary
		// lookup would reach the sink as a packet to an address no DNS
		// answer gave out, and read as literal-IP egress. Naming the sink
		// makes a lookup what it is, and keeps literal IP meaning the
		// package's own code chose an address.
		// No search domains either: the host's would turn a package's
		// lookup of "foo" into the operator's "foo.corp.example".
		DNS:       []string{sink.IsolatedAddr.String()},
		DNSSearch: []string{"."},
	}
	created, err := r.cli.ContainerCreate(ctx, &container.Config{
		Image:        s.opts.HelperImage,
		User:         "0:0",
		Cmd:          []string{"sandbox", "observe", "--ca-file", trustCAFile},
		Labels:       r.labels(),
		OpenStdin:    true,
		StdinOnce:    true,
		AttachStdin:  true,
		AttachStdout: true,
		AttachStderr: true,
	}, hc, nil, nil, r.name("observer"))
	if err != nil {
		return nil, fmt.Errorf("create observer: %w", err)
	}
	o := &observerHandle{id: created.ID, ready: make(chan int, 8), use: make(chan map[string]placeUsage, 1), dig: make(chan treeDigest, 1), files: make(chan fileLook, 1), seeded: make(chan homeAnswer, 1), homes: make(chan homeAnswer, 1), done: make(chan struct{}), stderr: &tailBuffer{max: 4096}}
	o.att, err = r.cli.ContainerAttach(ctx, o.id, container.AttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		return nil, fmt.Errorf("attach observer: %w", err)
	}
	s.opts.Logger.Debug("observer created")
	// Start it in the background: the watched containers can be created
	// meanwhile (they join namespaces of a container that exists); they
	// wait for waitReady before they start.
	o.waitReady = sync.OnceValue(func() error { return s.runObserver(ctx, r, o) })
	go func() { _ = o.waitReady() }()
	return o, nil
}

// runObserver starts the created observer and waits until its sink and its
// tracer are ready.
func (s *Sandbox) runObserver(ctx context.Context, r *run, o *observerHandle) error {
	if err := r.cli.ContainerStart(ctx, o.id, container.StartOptions{}); err != nil {
		o.att.Close()
		return fmt.Errorf("start observer: %w", err)
	}
	s.opts.Logger.Debug("observer started")
	sinkReady := make(chan struct{})
	go func() {
		defer close(o.done)
		pr, pw := io.Pipe()
		go func() {
			_, err := stdcopy.StdCopy(pw, o.stderr, o.att.Reader)
			pw.CloseWithError(err)
		}()
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		sinkUp := false
		for sc.Scan() {
			src, line, _ := bytes.Cut(sc.Bytes(), []byte(" "))
			switch string(src) {
			case "sink":
				var ev sinkEvent
				if json.Unmarshal(line, &ev) != nil {
					continue
				}
				if ev.Type == "ready" && !sinkUp {
					sinkUp = true
					close(sinkReady)
					continue
				}
				o.addSink(ev)
			case "usage", "digest", "files", "seed", "home":
				o.answer(string(src), line)
			case "trace":
				var ev struct {
					execEvent
					Attached int `json:"attached"`
					Code     int `json:"code"`
				}
				if json.Unmarshal(line, &ev) != nil {
					continue
				}
				switch ev.Type {
				case "ready":
					select {
					case o.ready <- ev.Attached:
					default:
					}
				case "exec":
					o.addExec(ev.execEvent)
				case "fork":
					o.addFork(ev.PID, forkRec{Time: ev.Time, PPID: ev.PPID})
				case "exit":
					o.addExit(exitEvent{PID: ev.PID, Time: ev.Time, Code: ev.Code})
				}
			}
		}
	}()
	timeout := time.After(20 * time.Second)
	for _, wait := range []func() <-chan struct{}{
		func() <-chan struct{} { return sinkReady },
		func() <-chan struct{} {
			c := make(chan struct{})
			go func() {
				select {
				case <-o.ready:
					close(c)
				case <-o.done:
				}
			}()
			return c
		},
	} {
		select {
		case <-wait():
		case <-o.done:
			return fmt.Errorf("observer exited before it was ready: %s", strings.TrimSpace(o.stderr.String()))
		case <-timeout:
			return errors.New("observer did not become ready within 20s")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	s.opts.Logger.Debug("observer ready")
	return nil
}

// answer hands the observer's answer to a request of ours (usage,
// digest, files) to whoever waits for it; an answer nobody waits for any
// more is dropped.
func (o *observerHandle) answer(src string, line []byte) {
	switch src {
	case "usage":
		deliver(line, o.use)
	case "digest":
		deliver(line, o.dig)
	case "files":
		deliver(line, o.files)
	case "seed":
		deliver(line, o.seeded)
	case "home":
		deliver(line, o.homes)
	}
}

// deliver decodes one answer of the observer and hands it to whoever
// waits on ch; a malformed answer, or one nobody waits for, is dropped.
func deliver[T any](line []byte, ch chan T) {
	var v T
	if json.Unmarshal(line, &v) != nil {
		return
	}
	select {
	case ch <- v:
	default:
	}
}

// maxRawEvents bounds the sink and the tracer events held for one scan;
// past it an event is counted, and kept only when it holds a canary (at
// most maxKeptPast such), so that a flood costs bounded memory and work
// and hides no exfiltration behind it.
const (
	maxRawEvents = 50_000
	maxKeptPast  = 1_000
)

func (o *observerHandle) addSink(ev sinkEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.sink) < maxRawEvents || o.keepPast(o.keepSink != nil && o.keepSink(ev)) {
		o.sink = append(o.sink, ev)
		return
	}
	o.drop(ev.Phase, "network")
}

func (o *observerHandle) addExec(ev execEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.execs) < maxRawEvents || o.keepPast(o.keepExec != nil && o.keepExec(ev)) {
		o.execs = append(o.execs, ev)
		return
	}
	o.drop(o.phase, "process")
}

// maxForks bounds the fork events held for one scan.
const maxForks = 200_000

// addFork records that ppid started pid.
func (o *observerHandle) addFork(pid int, f forkRec) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.forks == nil {
		o.forks = map[int][]forkRec{}
	}
	if o.nforks < maxForks {
		o.forks[pid] = append(o.forks[pid], f)
	}
	o.nforks++
}

// tree returns what the tracer's fork events say of the process tree.
func (o *observerHandle) tree(driver int) procTree {
	o.mu.Lock()
	defer o.mu.Unlock()
	return procTree{driver: driver, forks: o.forks, partial: o.nforks >= maxForks}
}

// exitEvent is the end of a traced process: its exit status, or 128 plus
// the signal that killed it.
type exitEvent struct {
	PID  int
	Time time.Time
	Code int
}

func (o *observerHandle) addExit(ev exitEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.exits == nil {
		o.exits = map[int]exitEvent{}
	}
	if _, seen := o.exits[ev.PID]; !seen && len(o.exits) < maxRawEvents {
		o.exits[ev.PID] = ev
	}
}

// exitOf returns the exit event of a traced process.
func (o *observerHandle) exitOf(pid int) (exitEvent, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	ev, ok := o.exits[pid]
	return ev, ok
}

func (o *observerHandle) keepPast(hit bool) bool {
	if hit && o.kept < maxKeptPast {
		o.kept++
		return true
	}
	return false
}

func (o *observerHandle) drop(phase, kind string) {
	if phase == "" {
		phase = o.phase
	}
	o.dropped.add(phase, kind, 1)
}

// droppedIn returns the counts of events of a phase the observer dropped.
func (o *observerHandle) droppedIn(phase string) map[string]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return maps.Clone(o.dropped[phase])
}

// control sends one control line to the observer.
func (o *observerHandle) control(line string) {
	if p, ok := strings.CutPrefix(line, "phase "); ok {
		o.mu.Lock()
		o.phase = p
		o.mu.Unlock()
	}
	_, _ = o.att.Conn.Write([]byte(line + "\n"))
}

// attach asks the tracer to attach to the processes of a container that
// just joined, and returns how many threads it attached.
func (o *observerHandle) attach(ctx context.Context) (int, error) {
	o.control("attach")
	select {
	case n := <-o.ready:
		return n, nil
	case <-o.done:
		return 0, fmt.Errorf("observer exited: %s", strings.TrimSpace(o.stderr.String()))
	case <-time.After(10 * time.Second):
		return 0, errors.New("tracer did not attach within 10s")
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// ask sends the observer a control line that it answers with one line,
// and waits for the answer on ch, at most limit; what names the work in a
// timeout's message.
func ask[T any](ctx context.Context, o *observerHandle, line string, ch chan T, limit time.Duration, what string) (T, error) {
	var zero T
	select { // a stale answer, after an earlier timeout
	case <-ch:
	default:
	}
	o.control(line)
	select {
	case v := <-ch:
		return v, nil
	case <-o.done:
		return zero, fmt.Errorf("observer exited: %s", strings.TrimSpace(o.stderr.String()))
	case <-time.After(limit):
		return zero, fmt.Errorf("observer did not %s within %s", what, limit)
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// usage asks the observer for the use of the bounded places it holds.
func (o *observerHandle) usage(ctx context.Context) (map[string]placeUsage, error) {
	return ask(ctx, o, "usage", o.use, 5*time.Second, "report the use of the bounded places")
}

// look asks the observer for the files of the run phase's home and /tmp
// changed since it last looked (see filewatch.go).
func (o *observerHandle) look(ctx context.Context) (fileLook, error) {
	return ask(ctx, o, "files", o.files, 5*time.Second, "compare the files")
}

// digest asks the observer for the digest of the held tree's venv.
func (o *observerHandle) digest(ctx context.Context) (treeDigest, error) {
	d, err := ask(ctx, o, "digest", o.dig, 2*time.Minute, "digest the installed tree")
	if err == nil && d.Error != "" {
		err = errors.New(d.Error)
	}
	return d, err
}

// seedHome has the observer write s into the held home part.
func (o *observerHandle) seedHome(ctx context.Context, part string, s homeSeed) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	a, err := ask(ctx, o, "seed "+part+" "+string(b), o.seeded, 10*time.Second, "seed the home")
	if err == nil && a.Error != "" {
		err = errors.New(a.Error)
	}
	return err
}

// compareHome has the observer compare the held home part with its seed.
func (o *observerHandle) compareHome(ctx context.Context, part string, seed map[string]seedSum) (homeAnswer, error) {
	b, err := json.Marshal(homeRequest{Seed: seed})
	if err != nil {
		return homeAnswer{}, err
	}
	a, err := ask(ctx, o, "home "+part+" "+string(b), o.homes, time.Minute, "compare the home")
	if err == nil && a.Error != "" {
		err = errors.New(a.Error)
	}
	return a, err
}

// status reports whether the observer still runs: "ok", or what happened.
func (o *observerHandle) status(ctx context.Context, cli client.APIClient) string {
	info, err := cli.ContainerInspect(ctx, o.id)
	switch {
	case err != nil:
		return "error: " + err.Error()
	case info.State == nil || !info.State.Running:
		code := 0
		if info.State != nil {
			code = info.State.ExitCode
		}
		return fmt.Sprintf("died during the phase (exit %d): %s", code, strings.TrimSpace(o.stderr.String()))
	}
	return "ok"
}

// stop ends the observer (EOF on its control stream), waits for its last
// events and returns them.
func (o *observerHandle) stop(ctx context.Context, cli client.APIClient, log *slog.Logger) ([]sinkEvent, []execEvent) {
	if err := o.waitReady(); err != nil {
		return nil, nil
	}
	// The observer's own footprint, for the operator and the benchmark,
	// only when debug lines are shown: a busy engine answers a stats
	// request slowly (a median 0.37 s with 8 scans at once).
	if log.Enabled(ctx, slog.LevelDebug) {
		o.logMemory(ctx, cli, log)
	}
	_ = o.att.CloseWrite()
	select {
	case <-o.done:
	case <-time.After(5 * time.Second):
		log.Warn("observer did not flush its events within 5s")
	}
	o.att.Close()
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]sinkEvent(nil), o.sink...), append([]execEvent(nil), o.execs...)
}

// logMemory logs the observer's memory use, from the engine's stats.
func (o *observerHandle) logMemory(ctx context.Context, cli client.APIClient, log *slog.Logger) {
	st, err := cli.ContainerStatsOneShot(ctx, o.id)
	if err != nil {
		return
	}
	defer st.Body.Close()
	var v container.StatsResponse
	if json.NewDecoder(st.Body).Decode(&v) == nil {
		// rss excludes the page cache of the binary itself, which the
		// cgroup is charged for when it first reads it.
		log.Debug("observer memory", "rss_bytes", v.MemoryStats.Stats["total_rss"], "usage_bytes", v.MemoryStats.Usage, "peak_bytes", v.MemoryStats.MaxUsage)
	}
}
