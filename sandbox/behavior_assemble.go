package sandbox

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/sandbox/canary"
	"github.com/verifymcp/verifymcp/sandbox/exercise"
)

const (
	maxArgLen     = 200
	maxArgs       = 32
	maxPreview    = 200
	maxNetEvents  = 500
	maxProcEvents = 500
)

// packageAt names the package whose lifecycle script ran at t.
func (w *watch) packageAt(t time.Time) string {
	for _, sw := range w.windows {
		if !t.Before(sw.Start) && !t.After(sw.End) {
			return sw.Package
		}
	}
	return ""
}

// addNetwork turns the sink's events into network evidence and canary hits.
func (w *watch) addNetwork(events []sinkEvent) {
	masked := w.acrossQueries(events)
	pieces := w.acrossBodies(events)
	for i, ev := range events {
		switch ev.Type {
		case "dns", "tcp", "udp":
		default:
			continue
		}
		phase := ev.Phase
		if phase == "" {
			phase = evidence.PhaseRun
		}
		ne := evidence.NetEvent{
			Phase: phase, Time: ev.Time.UTC(), Kind: ev.Type,
			DstIP: ev.DstIP, DstPort: ev.DstPort, LiteralIP: ev.LiteralIP, LookedUp: ev.LookedUp,
			DNSName: strings.TrimSuffix(ev.DNSName, "."), DNSType: ev.DNSType, SNI: ev.SNI,
			HTTPMethod: ev.HTTPMethod, HTTPHost: ev.HTTPHost, Bytes: ev.Bytes,
			TLS: ev.TLS, ALPN: w.clean(ev.ALPN, 32), TLSRefused: ev.TLSRefused,
			PID: ev.PID, Exe: w.clean(w.programOf(ev.PID, ev.Time), maxArgLen),
		}
		if phase == evidence.PhaseScripts {
			ne.Package = w.packageAt(ev.Time)
		}
		if phase == evidence.PhaseRun {
			ne.Stage, ne.AfterHandshake = w.runStage(ev.Time)
			ne.Call = w.callAt(phase, ev.Time)
		}
		dest := destination(ne)
		// Canary search over everything captured, before anything is masked.
		for _, ch := range w.sinkHits(ev) {
			for _, h := range ch.hits {
				w.addHit(h, ch.channel, phase, ne.Package, dest, ev.Time)
			}
		}
		raw := rawData(ev)
		ne.HTTPTarget = w.clean(ev.HTTPTarget, 400)
		if m, ok := masked[phase][strings.ToLower(ne.DNSName)]; ok {
			ne.DNSName = m
		}
		if m, ok := masked[phase][strings.ToLower(strings.TrimSuffix(ne.LookedUp, "."))]; ok {
			ne.LookedUp = m
		}
		ne.DNSName = w.clean(ne.DNSName, 300)
		ne.LookedUp = w.clean(ne.LookedUp, 300)
		ne.SNI = w.clean(ne.SNI, 300)
		ne.HTTPHost = w.clean(ne.HTTPHost, 300)
		switch {
		case len(ev.Body) > 0:
			// Masked whole (once: the masker counts what it masks), then
			// clipped: a secret past the preview is still named.
			full := w.masked(maskPieces(ev.Body, pieces[i]))
			ne.Secrets = secretsIn(full)
			ne.Preview = clip(full, maxPreview)
			for _, a := range exercise.Recipients(ev.Body, headerValue(ev.HTTPHeaders, "Content-Type")) {
				ne.Recipients = append(ne.Recipients, w.clean(a, 300))
			}
		case raw:
			ne.Preview = w.clean(string(ev.Data), maxPreview)
		}
		if len(w.b.Network) < maxNetEvents {
			w.b.Network = append(w.b.Network, ne)
		} else {
			w.dropped.add(phase, "network", 1)
		}
	}
}

// runStage places a run-phase event at t: startup until the first listing
// ended, idle during the idle watch (no request of ours in flight: the
// server's own doing), call in a tool call's window (callAt), the listing
// stage again (startup, not after the
// handshake) from when the second listing began, since that traffic may
// answer our request, and shutdown once the server's stdin was closed.
// afterHandshake is set only for the idle watch and the shutdown.
func (w *watch) runStage(t time.Time) (stage string, afterHandshake bool) {
	stage = evidence.StageStartup
	if !w.listEnd.IsZero() && t.After(w.listEnd) {
		stage, afterHandshake = evidence.StageIdle, true
	}
	if w.callAt(evidence.PhaseRun, t) > 0 {
		stage = evidence.StageCall
	}
	if !w.relistAt.IsZero() && t.After(w.relistAt) {
		stage, afterHandshake = evidence.StageStartup, false
	}
	if !w.shutdownAt.IsZero() && t.After(w.shutdownAt) {
		stage = evidence.StageShutdown
		afterHandshake = !w.listEnd.IsZero()
	}
	return stage, afterHandshake
}

// acrossQueries finds canaries split across the DNS queries of each phase
// (one piece per lookup), in the order they were sent, and returns, by
// phase and lower-cased name, each name with its piece masked (a piece
// may be too short to be found alone, but next to the others it gives the
// canary away). A find is a hit on the dns channel, to the first name.
func (w *watch) acrossQueries(events []sinkEvent) map[string]map[string]string {
	names := map[string][]string{}
	first := map[string]map[string]sinkEvent{}
	for _, ev := range events {
		if ev.Type != "dns" || ev.DNSName == "" {
			continue
		}
		phase := ev.Phase
		if phase == "" {
			phase = evidence.PhaseRun
		}
		n := strings.ToLower(strings.TrimSuffix(ev.DNSName, "."))
		if first[phase] == nil {
			first[phase] = map[string]sinkEvent{}
		}
		if _, seen := first[phase][n]; seen {
			continue // a retry, or the AAAA query of the same name
		}
		first[phase][n] = ev
		names[phase] = append(names[phase], n)
	}
	out := map[string]map[string]string{}
	for phase, ns := range names {
		hits := w.canary.ScanDNSNames(ns)
		if len(hits) == 0 {
			continue
		}
		masked := w.canary.MaskDNSNames(ns)
		out[phase] = map[string]string{}
		for i, n := range ns {
			out[phase][n] = masked[i]
		}
		for _, h := range hits {
			ev := first[phase][ns[h.Names[0].Index]]
			pkg := ""
			if phase == evidence.PhaseScripts {
				pkg = w.packageAt(ev.Time)
			}
			hit := h.Hit
			hit.Encoding = fmt.Sprintf("%s, split across %d queries", hit.Encoding, len(h.Names))
			w.addHit(hit, "dns", phase, pkg, masked[h.Names[0].Index], ev.Time)
		}
	}
	return out
}

// channelHits are the canaries found in one part of a sink event.
type channelHits struct {
	channel string
	hits    []canary.Hit
}

// sinkHits searches every part of a sink event for the canaries, each
// part under its own channel.
func (w *watch) sinkHits(ev sinkEvent) []channelHits {
	var out []channelHits
	add := func(ch string, hs []canary.Hit) {
		if len(hs) > 0 {
			out = append(out, channelHits{ch, hs})
		}
	}
	c := w.canary
	if name := strings.TrimSuffix(ev.DNSName, "."); name != "" {
		add("dns", c.ScanDNSName(name))
	}
	if ev.SNI != "" {
		add("tls_sni", c.Scan([]byte(ev.SNI)))
	}
	http := "http_"
	if ev.TLS {
		http = "https_"
	}
	if ev.HTTPTarget != "" {
		add(http+"target", c.Scan([]byte(ev.HTTPTarget)))
	}
	if len(ev.HTTPHeaders) > 0 {
		add(http+"header", c.Scan(ev.HTTPHeaders))
	}
	if len(ev.Body) > 0 {
		add(http+"body", c.Scan(ev.Body))
	}
	if rawData(ev) {
		add(ev.Type, c.Scan(ev.Data))
	}
	return out
}

// rawData reports whether a sink event's raw bytes are searched and
// previewed: when they were not parsed as HTTP or TLS (whose parts are
// searched each under its own channel).
func rawData(ev sinkEvent) bool {
	return len(ev.Data) > 0 && ev.HTTPMethod == "" && ev.SNI == "" && !ev.TLS && ev.Type != "dns"
}

func destination(ne evidence.NetEvent) string {
	switch {
	case ne.Kind == "dns":
		return ne.DNSName
	case ne.HTTPHost != "":
		return ne.HTTPHost
	case ne.SNI != "":
		return net.JoinHostPort(ne.SNI, strconv.Itoa(ne.DstPort))
	case ne.LookedUp != "":
		return net.JoinHostPort(ne.LookedUp, strconv.Itoa(ne.DstPort))
	case ne.DstIP != "":
		return net.JoinHostPort(ne.DstIP, strconv.Itoa(ne.DstPort))
	}
	return ""
}

func (w *watch) addHit(h canary.Hit, channel, phase, pkg, dest string, t time.Time) {
	c := evidence.CanaryHit{
		Call:    w.callAt(phase, t),
		Canary:  evidence.Canary{Kind: h.Value.Kind, Where: h.Value.Where},
		Phase:   phase,
		Package: pkg,
		Channel: channel, Encoding: h.Encoding,
		Destination: w.clean(dest, 300),
		Masked:      canary.Mask(h.Value.Secret),
	}
	for _, e := range w.b.Exfiltration {
		if e == c {
			return
		}
	}
	w.b.Exfiltration = append(w.b.Exfiltration, c)
}

// clean makes server-controlled text safe to store: canary values masked,
// secrets redacted, invalid UTF-8 replaced, length bounded.
func (w *watch) clean(s string, n int) string {
	if s == "" {
		return ""
	}
	return clip(w.masked(s), n)
}

// masked is s with canary values masked, secrets redacted and invalid
// UTF-8 replaced: clean without the bound.
func (w *watch) masked(s string) string {
	return strings.ToValidUTF8(w.r.mask.text(s, "behavior"), "\uFFFD")
}

// addProcesses turns the tracer's exec events of one phase into process
// evidence, each with its provenance (see provenance).
func (w *watch) addProcesses(phase string, events []execEvent, declared map[string]bool) {
	var tree procTree
	switch {
	case w.obs == nil:
	case phase == evidence.PhaseScripts && w.driver != 0:
		tree = w.obs.tree(w.driver)
	case phase == evidence.PhaseRun:
		tree = w.obs.tree(0)
	}
	prov := provenanceIn(phase, events, declared, tree)
	for i, ev := range events {
		for _, h := range w.canary.Scan([]byte(strings.Join(ev.Argv, " "))) {
			w.addHit(h, "process_argv", phase, w.pkgFor(phase, ev.Time), path.Base(ev.Exe), ev.Time)
		}
		argv := ev.Argv
		if len(argv) > maxArgs {
			argv = argv[:maxArgs]
		}
		clean := make([]string, 0, len(argv))
		for _, a := range argv {
			clean = append(clean, w.clean(a, maxArgLen))
		}
		if len(w.b.Processes) >= maxProcEvents {
			// Still searched for canaries (above), but not listed.
			w.dropped.add(phase, "process", 1)
			continue
		}
		w.b.Processes = append(w.b.Processes, evidence.ProcessEvent{
			Phase: phase, Package: w.pkgFor(phase, ev.Time), Time: ev.Time.UTC(),
			PID: ev.PID, PPID: ev.PPID, Exe: w.clean(ev.Exe, maxArgLen), Argv: clean,
			Provenance: prov[i], Expected: expected(prov[i]), Call: w.callAt(phase, ev.Time),
		})
	}
}

// provenance says, for each exec event of one phase (in time order), who
// started the process, by walking the process tree the events describe:
//
//   - sandbox: the first process of the phase (the entry point of the run
//     phase, the script driver of the script step) and what it execs in
//     place (env handing over to node);
//   - package_manager: npm, started by the script driver to run one
//     lifecycle event, and every process npm starts itself, which is the
//     shell that runs the declared script's command line;
//   - declared: a process that shell starts (or execs into): the commands
//     the package's package.json declares, as written there;
//   - build_tool: node-gyp, wherever it was started, and everything it
//     runs (its Python probes, gyp, the compiler);
//   - for a PyPI target's build step: uv, started by the build driver, and
//     the interpreter queries uv makes are the package manager; the Python
//     uv starts for a build is the build backend the sdist declares
//     (declared); what that starts is the package's;
//   - package: everything else, started by package code (a declared
//     command's own children, anything the server starts).
//
// A process keeps the provenance it had when it execs again in place.
//
// When the step's driver reported its own PID (procTree.driver: the PyPI
// build driver does), attribution starts from it and does not depend on
// seeing any exec in time: the driver is the sandbox, uv running one of
// the driver's own commands as its child is the package manager, and a
// process whose parent never exec'ed in the window takes its place from
// its nearest ancestor that did (through the tracer's fork events, or the
// driver itself). A process whose ancestry cannot be established that way
// is unknown: not taken for the package's doing, and not for the
// sandbox's either.
//
// Without the driver's PID, events of a parent that was never seen (it
// started before the tracer attached) count as package code, except the
// first process of the phase and, in the script step, npm run-script and
// uv: the script driver starts one per lifecycle event, and its own exec
// can come before the tracer.
func provenance(phase string, events []execEvent, declared map[string]bool) []evidence.Provenance {
	return provenanceIn(phase, events, declared, procTree{})
}

// provenanceIn is provenance with what is known of the process tree
// besides the exec events.
func provenanceIn(phase string, events []execEvent, declared map[string]bool, tree procTree) []evidence.Provenance {
	out := make([]evidence.Provenance, len(events))
	role := map[int]evidence.Provenance{}
	wrapper := map[int]bool{} // npm's shell for a declared command line
	gyp := map[int]bool{}     // node-gyp: what it starts is the build tool's
	uv := map[int]bool{}      // uv in a PyPI build step
	scripts := phase == evidence.PhaseScripts
	rooted := scripts && tree.driver > 0
	if rooted {
		role[tree.driver] = evidence.ProvenanceSandbox
	}
	// In the run phase, the entry point is found from the fork events:
	// the wrapper's only child (see procTree.entry).
	entry := 0
	if phase == evidence.PhaseRun && tree.forks != nil && !tree.partial {
		entry = tree.entry(events)
	}
	if entry > 0 {
		rooted = true
		role[entry] = evidence.ProvenanceSandbox
	}
	for i, ev := range events {
		r, again := role[ev.PID]
		ppid := ev.PPID
		parent, seen := role[ppid] // "" when the parent was never seen
		if rooted && !seen && !again {
			ppid, parent, seen = tree.ancestor(ev, role)
		}
		switch {
		case rooted && (ev.PID == tree.driver || ev.PID == entry || ev.PPID == 0):
			// The driver's exec (the wait wrapper handing over to it), the
			// run phase's entry point, or a container's first process
			// (its parent is outside the PID namespace: the engine's).
			r = evidence.ProvenanceSandbox
		case again && wrapper[ev.PID]:
			// npm's shell execs the declared command in place when the
			// command line is one simple command.
			r = evidence.ProvenanceDeclared
			delete(wrapper, ev.PID)
		case again:
			// An exec in place keeps the process's provenance.
		case rooted && (!seen || parent == provenanceUnknown) && tree.partial:
			// Fork events were dropped (a flood past maxForks, the
			// package's doing): an unknown ancestry is no excuse then.
			r = evidence.ProvenancePackage
		case rooted && (!seen || parent == provenanceUnknown):
			// Neither the parent nor any ancestor is known, or the parent
			// is itself unknown.
			r = provenanceUnknown
		case rooted && scripts && ppid == tree.driver && isDriverUV(ev.Argv):
			// One of the driver's own uv commands, as its child.
			r = evidence.ProvenancePackageManager
			uv[ev.PID] = true
		case rooted && scripts && ppid == tree.driver && isDriverCompile(ev.Argv):
			// The driver's byte-compilation of the installed tree.
			r = evidence.ProvenanceSandbox
		case rooted && scripts && ppid == tree.driver:
			// The driver starts nothing else; what this is, is not known.
			r = provenanceUnknown
		case scripts && (parent == evidence.ProvenanceSandbox || parent == "") && isNPM(ev.Argv):
			// npm run-script, started by the script driver for one
			// lifecycle event: the driver's own exec may precede the
			// tracer (its parent never seen), and package code that runs
			// npm is a descendant of a process that was seen.
			r = evidence.ProvenancePackageManager
		case i == 0 && !rooted:
			r = evidence.ProvenanceSandbox
		case scripts && !rooted && (parent == evidence.ProvenanceSandbox || parent == "") && isUV(ev.Argv):
			// uv, started by the PyPI build driver (venv, build, install);
			// the driver's own exec may precede the tracer (its parent
			// never seen), as npm run-script's does, and package code that
			// runs uv is a descendant of a process that was seen.
			r = evidence.ProvenancePackageManager
			uv[ev.PID] = true
		case scripts && uv[ppid] && isInterpreterQuery(ev.Argv):
			r = evidence.ProvenancePackageManager
		case scripts && uv[ppid]:
			// The build backend an sdist declares, run by uv (PEP 517).
			r = evidence.ProvenanceDeclared
		case scripts && wrapper[ppid]:
			r = evidence.ProvenanceDeclared
		case scripts && parent == evidence.ProvenancePackageManager:
			// What npm starts itself: the shell for the declared command.
			r = evidence.ProvenancePackageManager
			if len(ev.Argv) >= 3 && path.Base(ev.Argv[0]) == "sh" && ev.Argv[1] == "-c" && declared[ev.Argv[2]] {
				wrapper[ev.PID] = true
			}
		case gyp[ppid] || parent == evidence.ProvenanceBuildTool || isNodeGyp(ev.Argv):
			r = evidence.ProvenanceBuildTool
		default:
			r = evidence.ProvenancePackage
		}
		if isNodeGyp(ev.Argv) {
			gyp[ev.PID] = true
		}
		role[ev.PID], out[i] = r, r
	}
	return out
}

// isNodeGyp reports whether a command line runs node-gyp, directly or
// through its shim, env or node: node-gyp, node-gyp.js or npm's
// node-gyp-bin shim as the program or as one of the first two arguments.
func isNodeGyp(argv []string) bool {
	for i, a := range argv {
		if i > 2 {
			break
		}
		if b := path.Base(a); b == "node-gyp" || b == "node-gyp.js" {
			return true
		}
		if strings.HasPrefix(a, "-") {
			break
		}
	}
	return false
}

func (w *watch) pkgFor(phase string, t time.Time) string {
	if phase == evidence.PhaseScripts {
		return w.packageAt(t)
	}
	return ""
}

// isDriverUV reports whether a command line is one of the PyPI build
// driver's own uv commands (drivers/pybuild.py): uv venv, uv build
// --wheel, uv pip install.
func isDriverUV(argv []string) bool {
	if !isUV(argv) || len(argv) < 2 {
		return false
	}
	switch argv[1] {
	case "venv":
		return true
	case "build":
		return len(argv) > 2 && argv[2] == "--wheel"
	case "pip":
		return len(argv) > 2 && argv[2] == "install"
	}
	return false
}

// isDriverCompile reports whether a command line is the PyPI build
// driver's byte-compilation (drivers/pybuild.py): the image's python3,
// isolated and without site (so no .pth file runs), compiling the tree.
func isDriverCompile(argv []string) bool {
	return len(argv) >= 5 && argv[0] == sandboxPython && slices.Equal(argv[1:5], []string{"-I", "-S", "-m", "compileall"})
}

// expected says whether a process of provenance p is not the package's
// doing, as the evidence's Expected flag: an unknown provenance blames no
// one (it is not counted against the package).
func expected(p evidence.Provenance) bool {
	return p.Expected() || p == provenanceUnknown
}

// isUV reports whether a command line runs uv (the image's
// /usr/local/bin/uv).
func isUV(argv []string) bool {
	return len(argv) > 0 && (argv[0] == "uv" || argv[0] == "/usr/local/bin/uv")
}

// isInterpreterQuery reports whether a command line is uv's query of a
// Python interpreter: python -I -B -c "...get_interpreter_info import main; main()".
func isInterpreterQuery(argv []string) bool {
	return len(argv) == 5 && argv[1] == "-I" && argv[2] == "-B" && argv[3] == "-c" &&
		strings.HasSuffix(argv[4], "from python.get_interpreter_info import main; main()")
}

func isNPM(argv []string) bool {
	for _, a := range argv {
		if strings.HasSuffix(a, "npm-cli.js") || path.Base(a) == "npm" {
			for _, b := range argv {
				if b == "run-script" || b == "rebuild" {
					return true
				}
			}
		}
	}
	return false
}

// maxWanted bounds the names recorded per script.
const maxWanted = 20

// scriptNetwork records, on each lifecycle script that ran, the network it
// tried to use: the sink's events while it ran.
func (w *watch) scriptNetwork(inst *evidence.Install) {
	for _, ne := range w.b.Network {
		if ne.Phase != evidence.PhaseScripts {
			continue
		}
		for _, sw := range w.windows {
			if ne.Time.Before(sw.Start) || ne.Time.After(sw.End) || sw.Index >= len(inst.Scripts) {
				continue
			}
			sc := &inst.Scripts[sw.Index]
			if sc.Network == nil {
				sc.Network = &evidence.ScriptNetwork{Wanted: []string{}}
			}
			sc.Network.Attempts++
			if want := wanted(ne); want != "" && len(sc.Network.Wanted) < maxWanted && !slices.Contains(sc.Network.Wanted, want) {
				sc.Network.Wanted = append(sc.Network.Wanted, want)
			}
			break
		}
	}
}

// wanted names what a network event was after: the name looked up or
// asked for, else the address.
func wanted(ne evidence.NetEvent) string {
	for _, h := range []string{ne.DNSName, ne.SNI, ne.HTTPHost, ne.LookedUp} {
		if h != "" {
			return h
		}
	}
	if ne.DstIP != "" {
		return net.JoinHostPort(ne.DstIP, strconv.Itoa(ne.DstPort))
	}
	return ""
}

// addFiles records file changes, attributing script-step changes to the
// package whose script ran when the change happened, where known.
func (w *watch) addFiles(events []evidence.FileEvent) {
	w.b.Files = append(w.b.Files, events...)
}

// finish sorts the evidence so that bundles are deterministic.
func (w *watch) finish() *evidence.Behavior {
	sort.SliceStable(w.b.Network, func(i, j int) bool { return w.b.Network[i].Time.Before(w.b.Network[j].Time) })
	sort.SliceStable(w.b.Processes, func(i, j int) bool { return w.b.Processes[i].Time.Before(w.b.Processes[j].Time) })
	sort.SliceStable(w.b.Exfiltration, func(i, j int) bool {
		a, b := w.b.Exfiltration[i], w.b.Exfiltration[j]
		return fmt.Sprint(a.Phase, a.Canary.Kind, a.Channel, a.Destination) < fmt.Sprint(b.Phase, b.Canary.Kind, b.Channel, b.Destination)
	})
	return w.b
}

// forkRec is one fork event of the tracer: ppid started the process at
// Time.
type forkRec struct {
	Time time.Time
	PPID int
}

// procTree is what is known of a phase's process tree besides its exec
// events: the PID of the step's driver, as the driver reported it itself
// (0 when not known), and the tracer's fork events by child PID.
type procTree struct {
	driver int
	forks  map[int][]forkRec
	// partial is set when fork events past the bound were not kept.
	partial bool
}

// entry finds the run phase's entry point: the process the run wrapper
// (the container's first process, started before the tracer attached, so
// with no fork event of its own) started, whether or not the tracer saw
// the entry point's exec in time. It is the first exec whose process was
// forked by such a root; failing that (the entry point's exec was missed),
// the ancestor just below a root of the first exec that has one. 0 when
// none is found. Package code has no such place: every process it starts
// is forked by a traced process, so has a fork event, and its fork parent
// is never a root.
func (t procTree) entry(events []execEvent) int {
	root := func(p int) bool {
		_, forked := t.forks[p]
		return p > 0 && !forked
	}
	for _, ev := range events {
		if ev.PPID == 0 {
			continue // the wrapper's own exec, seen
		}
		if q, ok := t.parentAt(ev.PID, ev.Time); ok && root(q) {
			return ev.PID
		}
	}
	for _, ev := range events {
		if ev.PPID == 0 {
			continue
		}
		p := ev.PID
		for range maxAncestry {
			q, ok := t.parentAt(p, ev.Time)
			if !ok {
				break
			}
			if root(q) {
				return p
			}
			p = q
		}
	}
	return 0
}

// maxAncestry bounds the walk up the process tree.
const maxAncestry = 64

// parentAt returns who started pid, by the tracer's fork events: the last
// fork of pid up to a second after at (a fork event can be written after
// the child's exec), else the first.
func (t procTree) parentAt(pid int, at time.Time) (int, bool) {
	fs := t.forks[pid]
	if len(fs) == 0 {
		return 0, false
	}
	best := fs[0]
	for _, f := range fs[1:] {
		if !f.Time.After(at.Add(time.Second)) {
			best = f
		}
	}
	return best.PPID, true
}

// ancestor finds the nearest ancestor of ev's process whose provenance is
// known (the driver's is), walking up from its parent (who forked it, or
// its parent when it exec'ed) through the tracer's fork events; ok is
// false when none is found.
func (t procTree) ancestor(ev execEvent, role map[int]evidence.Provenance) (pid int, r evidence.Provenance, ok bool) {
	p := ev.PPID
	if q, ok := t.parentAt(ev.PID, ev.Time); ok {
		p = q
	}
	for range maxAncestry {
		if p <= 0 {
			break
		}
		if r, ok := role[p]; ok {
			return p, r, true
		}
		q, ok := t.parentAt(p, ev.Time)
		if !ok {
			break
		}
		p = q
	}
	return ev.PPID, "", false
}

// provenanceUnknown: a process whose place in the process tree could not
// be established (its parent never exec'ed in the window and no fork of
// it was seen). It is not taken for the package's doing.
const provenanceUnknown evidence.Provenance = "unknown"

// indexExecs groups the tracer's exec events by PID, each in time order.
func indexExecs(execs []execEvent) map[int][]execEvent {
	out := map[int][]execEvent{}
	for _, ev := range execs {
		out[ev.PID] = append(out[ev.PID], ev)
	}
	for _, evs := range out {
		sort.SliceStable(evs, func(a, b int) bool { return evs[a].Time.Before(evs[b].Time) })
	}
	return out
}

// programOf names the program process pid ran at time at: what it last
// exec'ed by then (its first exec, when all of them were timed later), or,
// for a process that forked without exec'ing (a worker of node's), its
// nearest ancestor's, through the tracer's fork events. "" when unknown.
func (w *watch) programOf(pid int, at time.Time) string {
	var tree procTree
	if w.obs != nil {
		tree = w.obs.tree(0)
	}
	for hops := 0; pid > 0 && hops < maxAncestry; hops++ {
		if evs := w.progs[pid]; len(evs) > 0 {
			exe := evs[0].Exe
			for _, ev := range evs[1:] {
				if !ev.Time.After(at) {
					exe = ev.Exe
				}
			}
			return exe
		}
		ppid, ok := tree.parentAt(pid, at)
		if !ok || ppid == pid {
			return ""
		}
		pid = ppid
	}
	return ""
}

// headerValue returns the first value of an HTTP header of a sink event
// (its headers as the sink wrote them, sink.Event.HTTPHeaders), by name in
// any case; empty when absent.
func headerValue(raw []byte, name string) string {
	var h http.Header
	if len(raw) == 0 || json.Unmarshal(raw, &h) != nil {
		return ""
	}
	return h.Get(name)
}
