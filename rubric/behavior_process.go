package rubric

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"al.essio.dev/pkg/shellescape"
	units "github.com/docker/go-units"

	"github.com/verifymcp/verifymcp/evidence"
)

func scoreExecutionSafety(p *probe) verdict {
	p.emitRootUser()
	rootOnly := 0
	if p.emitRequiresRoot() {
		rootOnly = 1 // deducted as one spawn (v15)
	}
	beh, gap, v := p.behavior(observerTracer, observerFiles)
	if v != nil {
		return *v
	}
	for _, w := range beh.Watches {
		var bad, all []string
		for _, o := range []observer{observerSink, observerTracer, observerFiles} {
			st := o.status(w)
			all = append(all, o.name()+": "+orUnknown(st))
			if st != observerOK {
				bad = append(bad, o.name())
			}
		}
		if len(bad) > 0 {
			p.emit(CodeObserverIncomplete, orUnknown(w.Phase),
				fmt.Sprintf("the %s did not cover the %s phase; what it would have recorded is unknown, and the evidence may have been tampered with",
					strings.Join(bad, " and "), orUnknown(w.Phase)),
				p.clip(strings.Join(all, "; ")))
		}
	}
	writes := 0
	byCalls := p.callFileKeys()
	for _, f := range beh.Files {
		if p.sensitive(f) {
			continue // scored under secret_handling
		}
		if byCalls[f.Path] {
			continue // a tool call's doing (v13): judged by pkg.behavior.tool.*
		}
		writes++
		p.emitInDir(CodeFileWrite, behaviorSubject(f.Phase, f.Package), f.Path, "files",
			fmt.Sprintf("%s %s %s %s", p.actor(f.Phase, f.Package), orUnknown(f.Op), f.Path, p.during(f.Phase)),
			p.clip(orUnknown(f.Op)+" "+f.Path),
			func(dir string, n int, ex []string) string {
				return fmt.Sprintf("%s created, modified or deleted %d files in %s %s: %s", p.actor(f.Phase, f.Package), n, dir, p.during(f.Phase), examplesText(ex, n))
			})
	}
	procs := beh.Processes
	if p.readsCalls() {
		// A tool call's processes (v13) are judged by
		// pkg.behavior.tool.undeclared_shell, and by
		// pkg.behavior.process.shell when they fetch or run code
		// (emitCallShells).
		procs = make([]evidence.ProcessEvent, 0, len(beh.Processes))
		for _, e := range beh.Processes {
			if e.Call == 0 {
				procs = append(procs, e)
			}
		}
	}
	spawns, shells, tools := p.processes(procs)
	shells += p.emitCallShells(beh.Processes)
	undeclared, note := p.emitUndeclaredShells(beh.Processes)
	spawns += undeclared
	filled := p.diskFilled(beh.Watches)
	if gap != "" {
		return zeroPoint(gap + note)
	}
	es := p.p.Behavior.ExecutionSafety
	var notes []string
	if spawns == 1 {
		notes = append(notes, "1 unexpected process")
	} else if spawns > 1 {
		notes = append(notes, strconv.Itoa(spawns)+" unexpected processes")
	}
	if writes > 0 {
		notes = append(notes, plural(writes, "file")+" changed")
	}
	if rootOnly > 0 {
		notes = append(notes, "started only as root")
	}
	switch {
	case shells > 0 || tools > 0 || filled > 0:
		var why []string
		if filled > 0 {
			why = append(why, plural(filled, "bounded place")+" filled")
		}
		if shells > 0 {
			why = append(why, plural(shells, "shell command"))
		}
		if tools > 0 {
			why = append(why, plural(tools, "network tool"))
		}
		return scored(0, strings.Join(append(why, notes...), "; ")+note)
	case len(notes) > 0:
		return scored(100-es.SpawnPenalty*float64(spawns+rootOnly)-es.FileWritePenalty*float64(writes), strings.Join(notes, "; ")+note)
	default:
		return scored(100, "no unexpected process and no file changed in "+watchedFor(beh.Watches)+note)
	}
}

// diskFilled emits a finding for each bounded place package code filled
// (v6) and returns how many.
func (p *probe) diskFilled(ws []evidence.Watch) int {
	if !p.atLeast("6") {
		return 0
	}
	n := 0
	for _, w := range ws {
		for _, d := range w.Disk {
			if !d.Full {
				continue
			}
			n++
			who := "the lifecycle scripts"
			if p.readsPyPI() {
				who = "the sdist builds"
			}
			if w.Phase == evidence.PhaseRun {
				who = "the server"
			}
			p.emit(CodeDiskFilled, orUnknown(w.Phase)+":"+orUnknown(d.Place),
				fmt.Sprintf("%s wrote until %s was full %s (bound %s, %s files)", who, placeName(d.Place), p.during(w.Phase), mib(d.BoundBytes), strconv.FormatInt(d.BoundFiles, 10)),
				p.clip(fmt.Sprintf("%s: %s and %d files at the end, %s when package code started", orUnknown(d.Place), mib(d.UsedBytes), d.UsedFiles, mib(d.StartBytes))))
		}
	}
	return n
}

func placeName(place string) string {
	switch place {
	case evidence.PlaceTree:
		return "the installed tree"
	case evidence.PlaceHome:
		return "its home directory"
	case evidence.PlaceTmp:
		return "/tmp"
	}
	return orUnknown(place)
}

// mib prints a byte count in binary units: "512MiB", "16KiB".
func mib(n int64) string { return units.BytesSize(float64(n)) }

// spawn is one distinct unexpected command line in one phase.
type spawn struct {
	ev    evidence.ProcessEvent
	count int
	// noSpawn marks a command line that is no spawn of its own (v6): a
	// declared command, or a program its process exec'ed away from.
	noSpawn bool
}

// processes emits the findings of unexpected processes, one per distinct
// command line in each phase and package, and returns how many distinct
// spawns, shell commands and network tools there were.
func (p *probe) processes(events []evidence.ProcessEvent) (spawns, shells, tools int) {
	type key struct {
		phase, pkg, exe, argv string
		noSpawn               bool
	}
	byKey := map[key]*spawn{}
	var list []*spawn
	// From rubric v6 a declared process (the command a declared lifecycle
	// script runs) is no spawn, but is still matched against the lists;
	// and a process that execs another program in place (env handing over
	// to node, a shell to its one command) is one spawn, of the program it
	// ends as.
	v6 := p.atLeast("6")
	type proc struct {
		phase     string
		pid, ppid int
	}
	last := map[proc]int{}
	for i, e := range events {
		last[proc{e.Phase, e.PID, e.PPID}] = i
	}
	for i, e := range events {
		if e.Expected && !(v6 && e.Provenance == evidence.ProvenanceDeclared) {
			continue
		}
		noSpawn := v6 && (e.Provenance == evidence.ProvenanceDeclared || (e.PID != 0 && last[proc{e.Phase, e.PID, e.PPID}] != i))
		k := key{e.Phase, e.Package, e.Exe, strings.Join(e.Argv, "\x00"), noSpawn}
		if s, ok := byKey[k]; ok {
			s.count++
			continue
		}
		s := &spawn{ev: e, count: 1, noSpawn: noSpawn}
		byKey[k] = s
		list = append(list, s)
	}
	es := p.p.Behavior.ExecutionSafety
	for _, s := range list {
		e := s.ev
		subject := behaviorSubject(e.Phase, e.Package)
		names, args := programOf(e, es.MultiCall)
		cmd := commandLine(e)
		times := ""
		if s.count > 1 {
			times = fmt.Sprintf(" (%d times)", s.count)
		}
		ev := p.clip(cmd)
		if !s.noSpawn {
			spawns++
			p.emitCapped(CodeProcessSpawn, subject, short(cmd), "command lines started",
				fmt.Sprintf("%s started %s %s%s", p.actor(e.Phase, e.Package), displayName(names), p.during(e.Phase), times), ev)
		}
		if name, ok := match(names, es.Shells); ok && hasCommandFlag(args) && (!p.atLeast(execFrom) || shellRunsCode(args)) {
			shells++
			p.emitCapped(CodeProcessShell, subject, short(cmd), "shell commands",
				fmt.Sprintf("%s ran a shell command with %s -c %s%s", p.actor(e.Phase, e.Package), name, p.during(e.Phase), times), ev)
		}
		if name, ok := match(names, es.NetworkTools); ok {
			tools++
			p.emitCapped(CodeProcessNetworkTool, subject, short(cmd), "network tool commands",
				fmt.Sprintf("%s ran the network tool %s %s%s", p.actor(e.Phase, e.Package), name, p.during(e.Phase), times), ev)
		}
		if name, ok := match(names, es.PackageManagers); ok {
			p.emitCapped(CodeProcessPackageManager, subject, short(cmd), "package manager commands",
				fmt.Sprintf("%s ran the package manager %s %s%s", p.actor(e.Phase, e.Package), name, p.during(e.Phase), times), ev)
		}
	}
	return spawns, shells, tools
}

// programOf returns the names a process ran under, the base names of its
// executable and of argv[0] and, for a multi-call binary invoked by its
// own name (busybox sh -c ...), the applet named by the next argument;
// and the arguments that follow the program.
func programOf(e evidence.ProcessEvent, multiCall []string) (names, args []string) {
	if e.Exe != "" {
		names = append(names, path.Base(e.Exe))
	}
	if len(e.Argv) > 0 {
		if e.Argv[0] != "" {
			addUnique(&names, path.Base(e.Argv[0]))
		}
		args = e.Argv[1:]
	}
	if len(e.Argv) > 0 && slices.Contains(multiCall, path.Base(e.Argv[0])) && len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		addUnique(&names, path.Base(args[0]))
		args = args[1:]
	}
	return names, args
}

// displayName is the most telling of a process's names: the applet or
// argv[0] rather than the executable it resolved to.
func displayName(names []string) string {
	if len(names) == 0 {
		return "a program with no name recorded"
	}
	return names[len(names)-1]
}

// match returns the most telling of names found in list: the applet, then
// argv[0], then the executable.
func match(names, list []string) (string, bool) {
	for i := len(names) - 1; i >= 0; i-- {
		if slices.Contains(list, names[i]) {
			return names[i], true
		}
	}
	return "", false
}

// hasCommandFlag reports whether a shell's options include -c, alone or
// in a cluster (-c, -ec, -lc), before the first operand.
func hasCommandFlag(args []string) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || a == "-" || (!strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "+")) {
			return false
		}
		if strings.HasPrefix(a, "--") {
			continue // long options: --norc, --login
		}
		flags := a[1:]
		if a[0] == '-' && strings.ContainsRune(flags, 'c') {
			return true
		}
		if strings.HasSuffix(flags, "o") || strings.HasSuffix(flags, "O") {
			i++ // -o pipefail: the option takes the next argument
		}
	}
	return false
}

// commandLine quotes a process's argv as a shell would read it.
func commandLine(e evidence.ProcessEvent) string {
	argv := e.Argv
	if len(argv) == 0 {
		return orUnknown(e.Exe) + " (no argv recorded)"
	}
	parts := make([]string, len(argv))
	for i, a := range argv {
		parts[i] = shellescape.Quote(a)
	}
	return strings.Join(parts, " ")
}
