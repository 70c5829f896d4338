package sandbox

import (
	"fmt"
	"net"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/sandbox/canary"
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
	for _, ev := range events {
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
			DstIP: ev.DstIP, DstPort: ev.DstPort, LiteralIP: ev.LiteralIP,
			DNSName: strings.TrimSuffix(ev.DNSName, "."), DNSType: ev.DNSType, SNI: ev.SNI,
			HTTPMethod: ev.HTTPMethod, HTTPHost: ev.HTTPHost, Bytes: ev.Bytes,
		}
		if phase == evidence.PhaseScripts {
			ne.Package = w.packageAt(ev.Time)
		}
		if phase == evidence.PhaseRun && !w.listEnd.IsZero() && ev.Time.After(w.listEnd) {
			ne.AfterHandshake = true
		}
		dest := destination(ne)
		// Canary search over everything captured, before anything is masked.
		hit := func(ch string, hs []canary.Hit) {
			for _, h := range hs {
				w.addHit(h, ch, phase, ne.Package, dest)
			}
		}
		if ne.DNSName != "" {
			hit("dns", w.canary.ScanDNSName(ne.DNSName))
		}
		if ev.SNI != "" {
			hit("tls_sni", w.canary.Scan([]byte(ev.SNI)))
		}
		if ev.HTTPTarget != "" {
			hit("http_target", w.canary.Scan([]byte(ev.HTTPTarget)))
		}
		if len(ev.HTTPHeaders) > 0 {
			hit("http_header", w.canary.Scan(ev.HTTPHeaders))
		}
		if len(ev.Body) > 0 {
			hit("http_body", w.canary.Scan(ev.Body))
		}
		// Raw bytes are searched when they were not parsed as HTTP or TLS
		// (those parts are searched above, each under its own channel).
		raw := len(ev.Data) > 0 && ev.HTTPMethod == "" && ev.SNI == "" && ev.Type != "dns"
		if raw {
			hit(ev.Type, w.canary.Scan(ev.Data))
		}
		ne.HTTPTarget = w.clean(ev.HTTPTarget, 400)
		ne.DNSName = w.clean(ne.DNSName, 300)
		ne.SNI = w.clean(ne.SNI, 300)
		ne.HTTPHost = w.clean(ne.HTTPHost, 300)
		switch {
		case len(ev.Body) > 0:
			ne.Preview = w.clean(string(ev.Body), maxPreview)
		case raw:
			ne.Preview = w.clean(string(ev.Data), maxPreview)
		}
		if len(w.b.Network) < maxNetEvents {
			w.b.Network = append(w.b.Network, ne)
		}
	}
}

func destination(ne evidence.NetEvent) string {
	switch {
	case ne.Kind == "dns":
		return ne.DNSName
	case ne.HTTPHost != "":
		return ne.HTTPHost
	case ne.SNI != "":
		return net.JoinHostPort(ne.SNI, strconv.Itoa(ne.DstPort))
	case ne.DstIP != "":
		return net.JoinHostPort(ne.DstIP, strconv.Itoa(ne.DstPort))
	}
	return ""
}

func (w *watch) addHit(h canary.Hit, channel, phase, pkg, dest string) {
	c := evidence.CanaryHit{
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
	s = string(w.canary.MaskAll([]byte(s)))
	s = Redact(s, w.envVals)
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// addProcesses turns the tracer's exec events of one phase into process
// evidence, marking the processes the sandbox itself started as expected.
func (w *watch) addProcesses(phase string, events []execEvent, declared map[string]bool) {
	expected := map[int]bool{}
	if len(events) > 0 {
		// The first exec is the wrapper handing over to the entry point (run
		// phase) or to the script driver (script step).
		expected[events[0].PID] = true
	}
	npm := map[int]bool{}
	for _, ev := range events {
		if expected[ev.PID] {
			continue
		}
		switch phase {
		case evidence.PhaseScripts:
			// npm run-script (or rebuild) started by the driver, and the
			// shell npm starts for a declared script command.
			if expected[ev.PPID] && isNPM(ev.Argv) {
				expected[ev.PID], npm[ev.PID] = true, true
				continue
			}
			if npm[ev.PPID] && len(ev.Argv) >= 3 && path.Base(ev.Argv[0]) == "sh" && ev.Argv[1] == "-c" && declared[ev.Argv[2]] {
				expected[ev.PID] = true
				continue
			}
		}
	}
	for _, ev := range events {
		for _, h := range w.canary.Scan([]byte(strings.Join(ev.Argv, " "))) {
			w.addHit(h, "process_argv", phase, w.pkgFor(phase, ev.Time), path.Base(ev.Exe))
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
			break
		}
		w.b.Processes = append(w.b.Processes, evidence.ProcessEvent{
			Phase: phase, Package: w.pkgFor(phase, ev.Time), Time: ev.Time.UTC(),
			PID: ev.PID, PPID: ev.PPID, Exe: w.clean(ev.Exe, maxArgLen), Argv: clean, Expected: expected[ev.PID],
		})
	}
}

func (w *watch) pkgFor(phase string, t time.Time) string {
	if phase == evidence.PhaseScripts {
		return w.packageAt(t)
	}
	return ""
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

// addFiles records file changes, attributing script-step changes to the
// package whose script ran when the change happened, where known.
func (w *watch) addFiles(events []evidence.FileEvent) {
	w.b.Files = append(w.b.Files, events...)
}

// addWatch records how a phase was watched.
func (w *watch) addWatch(phase string, watched, idle time.Duration, sink, tracer, files string) {
	w.b.Watches = append(w.b.Watches, evidence.Watch{
		Phase: phase, WatchedMS: watched.Milliseconds(), IdleMS: idle.Milliseconds(),
		Sink: sink, Tracer: tracer, Files: files,
	})
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
