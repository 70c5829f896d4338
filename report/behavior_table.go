package report

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"al.essio.dev/pkg/shellescape"

	units "github.com/docker/go-units"

	"github.com/verifymcp/verifymcp/evidence"
)

// previewChars bounds the preview of sent bytes shown per connection; the
// JSON report carries the whole recorded preview.
const previewChars = 60

// behavior writes the BEHAVIOUR section: per watched phase, how long it was
// watched and by which observers, then what was seen. It always ends by
// saying what the absence of behaviour findings means, since behaviour is
// watched for seconds and a package can wait longer or notice the sandbox.
func (t *table) behavior(rep Report) {
	t.line("")
	bh := rep.Behavior
	sig, recorded := rep.Signals[evidence.SignalBehavior]
	if bh == nil {
		state := "not recorded"
		if recorded {
			state = clean(sig.State)
			if sig.Reason != "" {
				state += " (" + clean(sig.Reason) + ")"
			}
		}
		switch {
		case recorded && sig.State == string(evidence.StateNotAssessed):
			t.line("BEHAVIOUR  not assessed: signal " + evidence.SignalBehavior + " is " + state)
		default:
			t.line("BEHAVIOUR  not captured: signal " + evidence.SignalBehavior + " is " + state)
		}
		t.para("  ", "No phase was watched, so the absence of behaviour findings says nothing about what the "+
			"package does when it is installed or run.")
		return
	}

	var total int64
	var phases []string
	for _, w := range bh.Watches {
		total += w.WatchedMS
		phases = append(phases, clean(orDash(w.Phase))+" "+secs(w.WatchedMS))
	}
	head := "BEHAVIOUR  " + plural(len(bh.Watches), "phase") + " watched, " + secs(total) + " in total"
	if recorded && sig.State != string(evidence.StateObserved) {
		head += "; signal " + evidence.SignalBehavior + " is " + clean(sig.State)
	}
	t.line(head)
	if len(bh.Canaries) > 0 {
		var cs []string
		for _, c := range bh.Canaries {
			cs = append(cs, clean(c.Kind)+" at "+clean(c.Where))
		}
		t.line("  canaries planted (values never shown): " + strings.Join(cs, ", "))
	} else {
		t.line("  canaries planted: none")
	}

	listed := map[string]bool{}
	for _, w := range bh.Watches {
		if listed[w.Phase] {
			continue
		}
		listed[w.Phase] = true
		t.phase(bh, w)
	}
	// Events of a phase with no watch are still shown, never dropped.
	for _, ph := range eventPhases(bh) {
		if !listed[ph] {
			listed[ph] = true
			t.phase(bh, Watch{Phase: ph})
		}
	}

	t.para("  ", "No behaviour finding only means nothing was seen in the "+secs(total)+" watched ("+strings.Join(phases, ", ")+"): "+
		"what the package does after that, or when it detects the sandbox, was not observed.")
}

// phase writes one watched phase and what was seen in it.
// startedBy says who started a process.
func startedBy(p ProcessEvent) string {
	switch p.Provenance {
	case "sandbox":
		return "started by the sandbox"
	case "package_manager":
		return "started by npm to run a declared script"
	case "build_tool":
		return "started by node-gyp"
	case "declared":
		return "the command of a declared lifecycle script"
	case "package":
		return "started by package code"
	}
	if p.Expected {
		return "started by the sandbox"
	}
	return "started by package code"
}

func (t *table) phase(bh *Behavior, w Watch) {
	name := orDash(clean(w.Phase))
	var how string
	if w.WatchedMS == 0 && w.Sink == "" && w.Tracer == "" && w.Files == "" {
		how = "no watch recorded for this phase"
	} else {
		how = "watched " + secs(w.WatchedMS)
		if w.IdleMS > 0 {
			how += " (" + secs(w.IdleMS) + " idle after the listing)"
		}
		how += " by " + observerStatus("sink", w.Sink) + ", " + observerStatus("tracer", w.Tracer) + ", " + observerStatus("files", w.Files)
	}
	t.line("  phase " + name + ": " + how)
	if len(w.Disk) > 0 {
		var ds []string
		for _, d := range w.Disk {
			x := fmt.Sprintf("%s %s of %s, %d of %d files", clean(d.Place), mebibytes(d.UsedBytes), mebibytes(d.BoundBytes), d.UsedFiles, d.BoundFiles)
			if d.Full {
				x += " FULL"
			}
			ds = append(ds, x)
		}
		t.line("    bounded places at the end: " + strings.Join(ds, "; "))
	}
	if len(w.Dropped) > 0 {
		kinds := make([]string, 0, len(w.Dropped))
		for k := range w.Dropped {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		var ds []string
		for _, k := range kinds {
			ds = append(ds, plural(w.Dropped[k], clean(k)+" event"))
		}
		t.line("    not listed (past the evidence's bounds; counted, and searched for canaries): " + strings.Join(ds, ", "))
	}

	var rows [][]string
	hasPkg := false
	add := func(what, pkg string, detail ...string) {
		if pkg != "" {
			hasPkg = true
		}
		rows = append(rows, append([]string{what, clean(pkg)}, detail...))
	}
	for _, e := range bh.Network {
		if e.Phase != w.Phase {
			continue
		}
		if e.Kind == "dns" {
			add("dns", e.Package, clock(e.Time), strings.TrimSpace(clean(e.DNSType)+" "+clean(e.DNSName))+afterListing(e))
			continue
		}
		add("connect", e.Package, clock(e.Time), connection(e))
	}
	for _, f := range bh.Files {
		if f.Phase != w.Phase {
			continue
		}
		d := clean(f.Op) + " " + clean(f.Path)
		if f.Sensitive {
			d += "  SENSITIVE (" + orDash(clean(f.Why)) + ")"
		}
		add("file", f.Package, "", d)
	}
	for _, p := range bh.Processes {
		if p.Phase != w.Phase {
			continue
		}
		d := "pid " + strconv.Itoa(p.PID) + "  " + argvLine(p) + "  (" + startedBy(p) + ")" + inCall(p.Call)
		add("process", p.Package, clock(p.Time), d)
	}
	for _, h := range bh.Exfiltration {
		if h.Phase != w.Phase {
			continue
		}
		d := "CANARY " + clean(h.Canary.Kind) + " (" + clean(h.Canary.Where) + ") left by " + clean(h.Channel) +
			", encoded " + clean(h.Encoding)
		if h.Destination != "" {
			d += ", to " + clean(h.Destination)
		}
		d += ": " + clean(h.Masked) + inCall(h.Call)
		add("exfil", h.Package, "", d)
	}
	if len(rows) == 0 {
		t.line("    nothing seen")
		return
	}
	for i, r := range rows {
		if !hasPkg {
			rows[i] = append(r[:1], r[2:]...)
		}
		rows[i][0] = "  " + rows[i][0]
	}
	t.grid(rows)
}

// mebibytes prints a byte count in binary units: "512MiB", "16KiB".
func mebibytes(n int64) string { return units.BytesSize(float64(n)) }

// eventPhases lists, in first-seen order, the phases events belong to.
func eventPhases(bh *Behavior) []string {
	var out []string
	seen := map[string]bool{}
	note := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, e := range bh.Network {
		note(e.Phase)
	}
	for _, f := range bh.Files {
		note(f.Phase)
	}
	for _, p := range bh.Processes {
		note(p.Phase)
	}
	for _, h := range bh.Exfiltration {
		note(h.Phase)
	}
	return out
}

func observerStatus(name, status string) string {
	if status == "ok" {
		return name + " ok"
	}
	return name + " NOT OK (" + orDash(clean(status)) + ")"
}

// connection describes a TCP or UDP attempt: protocol, address, the names
// the package used (SNI, HTTP request line), and the start of what it sent.
func connection(e NetEvent) string {
	parts := []string{clean(e.Kind) + " " + hostPort(e.DstIP, e.DstPort)}
	if e.LiteralIP {
		parts = append(parts, "LITERAL IP")
	} else if e.DNSName != "" && e.DNSName != e.SNI {
		parts = append(parts, "name "+clean(e.DNSName))
	} else if e.LookedUp != "" && e.LookedUp != e.SNI {
		parts = append(parts, "looked up as "+clean(e.LookedUp))
	}
	if e.SNI != "" {
		parts = append(parts, "sni "+clean(e.SNI))
	}
	switch {
	case e.TLSRefused:
		parts = append(parts, "TLS REFUSED (the client does not trust the run's CA: what it sent is not known)")
	case e.TLS && e.ALPN != "":
		parts = append(parts, "https ("+clean(e.ALPN)+")")
	case e.TLS:
		parts = append(parts, "https")
	}
	if e.HTTPMethod != "" || e.HTTPTarget != "" {
		line := strings.TrimSpace(clean(e.HTTPMethod) + " " + clean(e.HTTPTarget))
		if e.HTTPHost != "" {
			line += " Host " + clean(e.HTTPHost)
		}
		parts = append(parts, line)
	}
	if e.PID > 0 {
		parts = append(parts, "by "+orDash(clean(path.Base(e.Exe)))+" pid "+strconv.Itoa(e.PID))
	}
	parts = append(parts, strconv.FormatInt(e.Bytes, 10)+" bytes")
	if len(e.Secrets) > 0 {
		parts = append(parts, "SECRET SENT "+clean(strings.Join(e.Secrets, ", ")))
	}
	if len(e.Recipients) > 0 {
		parts = append(parts, "mail to "+clean(strings.Join(e.Recipients, ", ")))
	}
	if e.Preview != "" {
		parts = append(parts, "sent "+clean(strconv.Quote(truncate(e.Preview, previewChars))))
	}
	return strings.Join(parts, "  ") + afterListing(e)
}

func afterListing(e NetEvent) string {
	switch {
	case e.Stage == "shutdown":
		return "  AT SHUTDOWN"
	case e.Call > 0:
		return inCall(e.Call)
	case e.AfterHandshake:
		return "  AFTER THE LISTING"
	}
	return ""
}

// inCall marks a row of behaviour that came in a tool call's window, so
// that it can be read with that call under TOOL CALLS.
func inCall(call int) string {
	if call <= 0 {
		return ""
	}
	return "  IN CALL " + strconv.Itoa(call)
}

func hostPort(host string, port int) string {
	host = orDash(clean(host))
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port == 0 {
		return host
	}
	return host + ":" + strconv.Itoa(port)
}

// argvLine quotes a process's argv as a shell would read it.
func argvLine(p ProcessEvent) string {
	if len(p.Argv) == 0 {
		return clean(orDash(p.Exe)) + " (no argv recorded)"
	}
	parts := make([]string, len(p.Argv))
	for i, a := range p.Argv {
		parts[i] = clean(shellescape.Quote(a))
	}
	line := strings.Join(parts, " ")
	if p.Exe != "" && !strings.HasSuffix(p.Exe, "/"+p.Argv[0]) && p.Exe != p.Argv[0] {
		line += "  [exe " + clean(p.Exe) + "]"
	}
	return line
}

// clock shows the time of day of an event, to the millisecond, so that
// intervals (a beacon's period) can be read off the table.
func clock(ts string) string {
	if ts == "" {
		return "--:--:--.---"
	}
	tm, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return clean(ts)
	}
	return tm.UTC().Format("15:04:05.000")
}

// secs prints milliseconds as seconds: "4.2s", "42s".
func secs(ms int64) string {
	return strconv.FormatFloat(float64(ms)/1000, 'f', -1, 64) + "s"
}

// truncate keeps the first n runes of s, marking the cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
