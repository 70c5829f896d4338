package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"

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
	// TLS marks a connection the sink answered with TLS (the HTTP fields
	// and Body are the request inside); ALPN is what it negotiated, and
	// TLSRefused a client that aborted the handshake on the run's CA.
	TLS        bool   `json:"tls"`
	ALPN       string `json:"alpn"`
	TLSRefused bool   `json:"tls_refused"`
	// PID is the process that owned the client's socket, in the
	// observer's PID namespace; 0 when the sink could not tell.
	PID int `json:"pid"`
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
	// calls are the start times of the tool calls, in order, and callsEnd
	// when the last one's window closed (exercise_watch.go).
	calls    []time.Time
	callsEnd time.Time
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
	// trust is the run's trust store volume (trust.go).
	trust string
	// progs are the tracer's exec events by PID, in time order, for
	// naming the program behind a network event (programOf).
	progs  map[int][]execEvent
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
	if w.trust, err = r.createTrust(ctx); err != nil {
		return nil, err
	}
	o, err := s.startObserver(ctx, r, w.vols, w.trust)
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
	for _, k := range trustEnv {
		if _, ok := operator[k]; !ok {
			out = append(out, k+"="+trustFile)
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
	hc.Mounts = append(hc.Mounts, mountVolume(w.vols["home-"+phase], homeDir, false), mountVolume(w.vols["tmp-"+phase], "/tmp", false),
		trustMount(w.trust))
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
	if phase == evidence.PhaseRun {
		w.s.opts.Logger.Debug("tracer attached", "phase", phase)
	}
	return time.Now(), status, nil
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

// end stops the observer and returns the behaviour evidence.
func (w *watch) end(ctx context.Context) *evidence.Behavior {
	alive := w.obs.status(ctx, w.r.cli)
	sinkEvents, execs := w.obs.stop(ctx, w.r.cli, w.s.opts.Logger)
	w.progs = indexExecs(execs)
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
