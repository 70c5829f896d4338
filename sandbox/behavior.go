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
	"maps"
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
	"github.com/verifymcp/verifymcp/sandbox/sink"
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
	// runWrapper is the run phase's: it holds the server in the same way,
	// then runs it as its child rather than in its place, so that the
	// container outlives the server for as long as a process the server
	// started does. The engine kills every process of a container when its
	// main process exits, so with the server as the main process a
	// watchdog it leaves behind to report its end (chrome-devtools-mcp's
	// telemetry watchdog) was killed before it could send anything. The
	// server's stdin is the container's, and SIGINT and SIGQUIT are left
	// as they were (bash ignores them in a background job). SIGTERM goes
	// to the server while it runs; once it has exited, SIGTERM ends the
	// wrapper and with it what the server left, as SIGKILL does: on a
	// workstation nobody would signal those, so the stop sequence's grace
	// periods are their bound. The wrapper exits with the server's status
	// once no other process of its container (its cgroup; a zombie does not
	// count) is left. It uses bash builtins only, so it starts no program
	// the tracer would record, and it never writes: stderr is the server's.
	runWrapper = `read -r _ || exit 1
( trap - INT QUIT; exec "$@" ) <&0 &
p=$!
left() {
	local d s st
	for d in /proc/[0-9]*; do
		[ "${d#/proc/}" = "$$" ] && continue
		s=
		read -r -d '' s < "$d/cgroup"
		[ -n "$s" ] && [ "$s" = "$cg" ] || continue
		read -r st < "$d/stat" || continue
		st=${st##*) }
		[ "${st%% *}" = Z ] || return 0
	done
	return 1
} 2>/dev/null
trap 'kill -TERM $p 2>/dev/null || exit 143' TERM
read -r -d '' cg < /proc/$$/cgroup
c=0
while :; do
	wait $p; c=$?
	kill -0 $p 2>/dev/null || break
done
trap - TERM
exec 9<> <(:)
while left; do read -r -t 0.05 -u 9 _; done
exit $c`
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
	LookedUp    string          `json:"looked_up"`
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
	obs     *observerHandle
	envVals []string // operator --env values, for redaction
	b       *evidence.Behavior
	// per-phase records
	procs   map[string][]execEvent
	windows []scriptWindow
	listEnd time.Time
	// treeCheck is the installed tree's digest at install, checked and
	// completed before the server is released (treedigest.go).
	treeCheck *evidence.TreeCheck
	// relistAt is when the second listing began: from then on a request
	// of ours is in flight again, so the idle watch is over.
	relistAt time.Time
	// shutdownAt is when the run phase's shutdown began (stdin closed).
	shutdownAt time.Time
	// shutdown is the run phase's shutdown evidence, completed from the
	// tracer's events once the observer stopped (serverExit).
	shutdown *evidence.Shutdown
	// runWatch and scriptsWatch describe the watched phases, and the
	// windows of time they cover, for attributing exec events.
	runWatch, scriptsWatch evidence.Watch
	runWin, scriptsWin     [2]time.Time
	declared               map[string]bool
	// driver is the PID of the script step's driver (in the observer's
	// PID namespace), as the driver itself reported it; 0 when not known.
	// Attribution starts from it, not from seeing its exec (see procTree).
	driver int
	// steps are the script phase's steps, in order (a PyPI install's
	// metadata steps, then its build step), each with its window and its
	// driver's PID, which watchedStep moves there from driver.
	steps []scriptStep
	// vols and bounds are the bounded places, by volume part (bounds.go).
	vols   map[string]string
	bounds map[string]bound
	diskAt map[string]placeUsage // at the start of package code, by part
	// dropped counts, by phase and kind, events past the evidence's bounds.
	dropped drops
}

// scriptStep is one step of the script phase: when it was watched, and
// its driver's PID (0 when not known).
type scriptStep struct {
	win    [2]time.Time
	driver int
}

// mergeWatch adds the watch of another step of the same phase to a: the
// time watched adds up, a status other than "ok" stays, and each place's
// disk use is the larger, full when it was full in either step.
func mergeWatch(a, b evidence.Watch) evidence.Watch {
	if a.Phase == "" {
		return b
	}
	a.WatchedMS += b.WatchedMS
	if a.Tracer == "ok" {
		a.Tracer = b.Tracer
	}
	if a.Files == "ok" {
		a.Files = b.Files
	}
	for _, d := range b.Disk {
		found := false
		for i := range a.Disk {
			if a.Disk[i].Place == d.Place {
				found = true
				a.Disk[i].UsedBytes = max(a.Disk[i].UsedBytes, d.UsedBytes)
				a.Disk[i].UsedFiles = max(a.Disk[i].UsedFiles, d.UsedFiles)
				a.Disk[i].Full = a.Disk[i].Full || d.Full
			}
		}
		if !found {
			a.Disk = append(a.Disk, d)
		}
	}
	for k, n := range b.Dropped {
		addDropped(&a, k, n)
	}
	return a
}

// scriptWindow is when one lifecycle script ran, for attribution.
type scriptWindow struct {
	Index      int // in the install evidence's scripts
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
	// The bounded places of both phases exist before the observer, which
	// holds them mounted for the whole scan.
	w.vols, w.bounds = map[string]string{}, map[string]bound{}
	for _, b := range s.opts.bounds() {
		name, err := r.createBounded(ctx, b)
		if err != nil {
			return nil, err
		}
		w.vols[b.Part], w.bounds[b.Part] = name, b
	}
	o, err := s.startObserver(ctx, r, w.vols)
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	o.keepSink = func(ev sinkEvent) bool { return len(w.sinkHits(ev)) > 0 }
	o.keepExec = func(ev execEvent) bool { return len(set.Scan([]byte(strings.Join(ev.Argv, " ")))) > 0 }
	o.mu.Unlock()
	w.obs = o
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

// hostConfig makes a watched container join the observer's network and PID
// namespaces and mounts its phase's home and /tmp, bounded places the
// observer holds. The observer is PID 1 of that namespace and reaps
// orphans, so the container needs no init.
func (w *watch) hostConfig(hc *container.HostConfig, phase string) {
	hc.NetworkMode = container.NetworkMode("container:" + w.obs.id)
	hc.PidMode = container.PidMode("container:" + w.obs.id)
	hc.Init = boolPtr(false)
	delete(hc.Tmpfs, "/tmp")
	hc.Mounts = append(hc.Mounts, mountVolume(w.vols["home-"+phase], homeDir, false), mountVolume(w.vols["tmp-"+phase], "/tmp", false))
}

// phaseParts are the bounded places a phase writes, by volume part.
func phaseParts(phase string) []string {
	if phase == evidence.PhaseScripts {
		return []string{"work-tree", "home-scripts", "tmp-scripts"}
	}
	return []string{"home-run", "tmp-run"}
}

// extraMemory is how much a phase's memory limit is raised: the bounds of
// the places it writes, whose files count against it.
func (o Options) extraMemory(phase string, watched bool) int64 {
	n := o.TmpSize
	if watched {
		n += o.HomeSize
	}
	if phase == evidence.PhaseScripts {
		n += o.TreeSize
	}
	return n
}

// begin starts watching a phase in a container that just started: it tags
// the sink's events, has the tracer attach, then releases the wrapper. It
// returns the tracer's status for the phase so far.
func (w *watch) begin(ctx context.Context, phase string, stdin io.Writer) (time.Time, string, error) {
	w.obs.control("phase " + phase)
	status := "ok"
	n, err := w.obs.attach(ctx)
	switch {
	case err != nil:
		return time.Time{}, "", err
	case n == 0:
		status = "attached to no process"
	}
	w.diskStart(ctx, phase)
	if phase == evidence.PhaseRun {
		w.treeBeforeRun(ctx)
	}
	if _, err := stdin.Write([]byte("go\n")); err != nil {
		return time.Time{}, "", fmt.Errorf("release the %s container: %w", phase, err)
	}
	return time.Now(), status, nil
}

// seed copies the home directory (canary files and a lived-in profile) into
// the created container's home volume, then waits for the observer, which
// the container joins when it starts.
func (w *watch) seed(ctx context.Context, id string) error {
	if err := w.seedHome(ctx, id); err != nil {
		return err
	}
	return w.obs.waitReady()
}

func (w *watch) seedHome(ctx context.Context, id string) error {
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

// maxFileEvents bounds the home changes listed per phase; sensitive files
// come first, and the rest are counted (Watch.Dropped["file"]).
const maxFileEvents = 500

// diffHome compares the stopped container's home with the seed. The home
// is bounded (bounds.go), so reading it is too.
func (w *watch) diffHome(ctx context.Context, id, phase string) ([]evidence.FileEvent, int, error) {
	rc, _, err := w.r.cli.CopyFromContainer(ctx, id, homeDir+"/.")
	if err != nil {
		return nil, 0, fmt.Errorf("read home: %w", err)
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
			kept, dropped := keepFileEvents(out)
			return kept, dropped, fmt.Errorf("read home: %w", err)
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
		orig, wasSeeded := seed[name]
		var data []byte
		if wasSeeded {
			data, _ = io.ReadAll(io.LimitReader(tr, int64(len(orig))+1))
		}
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
	kept, dropped := keepFileEvents(out)
	return kept, dropped, nil
}

// keepFileEvents keeps at most maxFileEvents, sensitive files first, in
// path order, and says how many it left out.
func keepFileEvents(evs []evidence.FileEvent) ([]evidence.FileEvent, int) {
	sort.Slice(evs, func(i, j int) bool {
		if evs[i].Sensitive != evs[j].Sensitive {
			return evs[i].Sensitive
		}
		return evs[i].Path < evs[j].Path
	})
	dropped := 0
	if len(evs) > maxFileEvents {
		dropped = len(evs) - maxFileEvents
		evs = evs[:maxFileEvents]
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i].Path < evs[j].Path })
	return evs, dropped
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

func (s *Sandbox) startObserver(ctx context.Context, r *run, held map[string]string) (*observerHandle, error) {
	hc := &container.HostConfig{
		Mounts:         heldMounts(held),
		NetworkMode:    "none",
		CapDrop:        []string{"ALL"},
		CapAdd:         []string{"NET_ADMIN", "SYS_PTRACE"},
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
		Cmd:          []string{"sandbox", "observe"},
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
	o := &observerHandle{id: created.ID, ready: make(chan int, 8), use: make(chan map[string]placeUsage, 1), dig: make(chan treeDigest, 1), done: make(chan struct{}), stderr: &tailBuffer{max: 4096}}
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
			case "usage":
				var u map[string]placeUsage
				if json.Unmarshal(line, &u) == nil {
					select {
					case o.use <- u:
					default:
					}
				}
			case "digest":
				var d treeDigest
				if json.Unmarshal(line, &d) == nil {
					select {
					case o.dig <- d:
					default:
					}
				}
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

// usage asks the observer for the use of the bounded places it holds.
func (o *observerHandle) usage(ctx context.Context) (map[string]placeUsage, error) {
	select { // a stale answer, after an earlier timeout
	case <-o.use:
	default:
	}
	o.control("usage")
	select {
	case u := <-o.use:
		return u, nil
	case <-o.done:
		return nil, fmt.Errorf("observer exited: %s", strings.TrimSpace(o.stderr.String()))
	case <-time.After(5 * time.Second):
		return nil, errors.New("observer did not report the use of the bounded places within 5s")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// digest asks the observer for the digest of the held tree's venv.
func (o *observerHandle) digest(ctx context.Context) (treeDigest, error) {
	select { // a stale answer, after an earlier timeout
	case <-o.dig:
	default:
	}
	o.control("digest")
	select {
	case d := <-o.dig:
		if d.Error != "" {
			return d, errors.New(d.Error)
		}
		return d, nil
	case <-o.done:
		return treeDigest{}, fmt.Errorf("observer exited: %s", strings.TrimSpace(o.stderr.String()))
	case <-time.After(2 * time.Minute):
		return treeDigest{}, errors.New("observer did not digest the installed tree within 2m")
	case <-ctx.Done():
		return treeDigest{}, ctx.Err()
	}
}

// treeInstalled records the digest of the installed tree when the install
// has ended, into the install evidence; the run phase checks it before it
// releases the server (treeBeforeRun).
func (w *watch) treeInstalled(ctx context.Context, inst *evidence.Install) {
	started := time.Now()
	d, err := w.obs.digest(ctx)
	if err != nil {
		w.s.opts.Logger.Warn("installed tree digest", "err", err)
		return
	}
	w.s.opts.Logger.Debug("installed tree digested", "files", d.Files, "ms", time.Since(started).Milliseconds())
	inst.TreeCheck = &evidence.TreeCheck{Files: d.Files, Digest: d.Digest}
	w.treeCheck = inst.TreeCheck
}

// treeBeforeRun compares the installed tree with its digest at install,
// just before the server is released.
func (w *watch) treeBeforeRun(ctx context.Context) {
	tc := w.treeCheck
	if tc == nil {
		return
	}
	w.treeCheck = nil
	d, err := w.obs.digest(ctx)
	if err != nil {
		w.s.opts.Logger.Warn("installed tree check", "err", err)
		return
	}
	tc.Checked, tc.Match = d.Digest, d.Digest == tc.Digest
	if !tc.Match {
		tc.Changed = d.Changed
	}
}

// diskStart records what a phase's bounded places hold when package code
// starts; diskEnd returns their evidence at the end of the phase.
func (w *watch) diskStart(ctx context.Context, phase string) {
	u, err := w.obs.usage(ctx)
	if err != nil {
		w.s.opts.Logger.Warn("bounded places", "phase", phase, "err", err)
		return
	}
	if w.diskAt == nil {
		w.diskAt = map[string]placeUsage{}
	}
	for _, p := range phaseParts(phase) {
		w.diskAt[p] = u[p]
	}
}

func (w *watch) diskEnd(ctx context.Context, phase string) []evidence.DiskUse {
	u, err := w.obs.usage(ctx)
	if err != nil {
		w.s.opts.Logger.Warn("bounded places", "phase", phase, "err", err)
		return nil
	}
	var out []evidence.DiskUse
	for _, p := range phaseParts(phase) {
		end, ok := u[p]
		if !ok {
			continue
		}
		out = append(out, diskUse(w.bounds[p], w.diskAt[p], end))
	}
	return out
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
	// The observer's own footprint, for the operator and the benchmark.
	if st, err := cli.ContainerStatsOneShot(ctx, o.id); err == nil {
		var v container.StatsResponse
		if json.NewDecoder(st.Body).Decode(&v) == nil {
			// rss excludes the page cache of the binary itself, which the
			// cgroup is charged for when it first reads it.
			log.Debug("observer memory", "rss_bytes", v.MemoryStats.Stats["total_rss"], "usage_bytes", v.MemoryStats.Usage, "peak_bytes", v.MemoryStats.MaxUsage)
		}
		st.Body.Close()
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

// serverExit records when the server's own process exited, and its
// status, from the tracer: the first program the run phase executed is the
// server (runWrapper starts nothing else). The wrapper outlives the server
// while processes it started run, so the end of the container is the end
// of the last of them, and its status could be SIGKILL's when only those
// were killed.
func (w *watch) serverExit(run []execEvent) {
	sd := w.shutdown
	if sd == nil || len(run) == 0 || w.shutdownAt.IsZero() || sd.Ended == evidence.EndedBefore {
		return
	}
	// The wrapper's own exec (its parent outside the PID namespace) is
	// recorded when the tracer attached before it; the server is the
	// first other program.
	server := run[0].PID
	for _, ev := range run {
		if ev.PPID != 0 {
			server = ev.PID
			break
		}
	}
	ex, ok := w.obs.exitOf(server)
	if !ok || ex.Time.Before(w.shutdownAt) {
		return
	}
	ms := ex.Time.Sub(w.shutdownAt).Milliseconds()
	code := ex.Code
	sd.ServerExitMS, sd.ExitCode = &ms, &code
}

func mountVolume(name, target string, ro bool) mount.Mount {
	return mount.Mount{Type: mount.TypeVolume, Source: name, Target: target, ReadOnly: ro}
}

// close stops the observer and returns the behaviour evidence.
func (w *watch) close(ctx context.Context) *evidence.Behavior {
	alive := w.obs.status(ctx, w.r.cli)
	sinkEvents, execs := w.obs.stop(ctx, w.r.cli, w.s.opts.Logger)
	w.addNetwork(sinkEvents)
	in := func(win [2]time.Time) []execEvent {
		var out []execEvent
		for _, ev := range execs {
			if !ev.Time.Before(win[0]) && !ev.Time.After(win[1]) {
				out = append(out, ev)
			}
		}
		return out
	}
	if w.scriptsWatch.Phase != "" {
		for i, st := range w.steps {
			win := st.win
			switch {
			case i == 0 && st.driver != 0:
				// The script step is the first thing the observer watches,
				// and nothing runs in it before the release but the held
				// wrapper: an exec timed before the release was recorded
				// (the driver's own, on a busy machine) is the step's,
				// attributed from the driver's PID like the rest.
				win[0] = time.Time{}
			case i > 0 && st.driver != 0:
				// Likewise for a later step, from the end of the one
				// before: nothing of the observer's runs in between.
				win[0] = w.steps[i-1].win[1].Add(time.Nanosecond)
			}
			w.driver = st.driver
			w.addProcesses(evidence.PhaseScripts, in(win), w.declared)
		}
	}
	if w.runWatch.Phase != "" {
		run := in(w.runWin)
		w.addProcesses(evidence.PhaseRun, run, nil)
		w.serverExit(run)
	}
	for _, pw := range []*evidence.Watch{&w.scriptsWatch, &w.runWatch} {
		if pw.Phase == "" {
			continue
		}
		pw.Sink = alive
		if alive != "ok" && pw.Tracer == "ok" {
			pw.Tracer = alive
		}
		for kind, n := range w.obs.droppedIn(pw.Phase) {
			addDropped(pw, kind, n)
		}
		for kind, n := range w.dropped[pw.Phase] {
			addDropped(pw, kind, n)
		}
		w.b.Watches = append(w.b.Watches, *pw)
	}
	return w.finish()
}
