package rubric

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/evidence"
)

// The tool calls of the run phase, from rubric v13.
//
// After the idle watch the sandbox calls every listed tool once, one at a
// time, with placeholder arguments (evidence.Exercise). What a call did is
// the tool's doing in answer to our request: its network events carry
// stage "call" and the call's number, its processes the number, its files
// are listed with the call. From v13 these events are judged only by the
// pkg.behavior.tool.* codes below, each of which rests on direct evidence
// that the tool did what its own surface, or its caller, did not ask for;
// the run-phase codes (egress, dns, beacon, process) no longer read them.
// A canary that left during a call is still pkg.behavior.canary_exfiltration,
// whatever the stage.
//
// When the sandbox.exercise signal was not observed, no tool was called
// and no tool-call finding can be raised: the dimensions that read the
// calls say so in their reason, and nothing is deducted for it.
const toolCallsFrom = "13"

// Reason codes of the tool calls (rubric v13 on).
const (
	CodeToolReadOnlyWrite     = "pkg.behavior.tool.readonly_write"
	CodeToolClosedWorldNet    = "pkg.behavior.tool.closed_world_network"
	CodeToolAddedRecipient    = "pkg.behavior.tool.added_recipient"
	CodeToolSecretToArgHost   = "pkg.behavior.tool.secret_to_argument_host"
	CodeToolUndeclaredShell   = "pkg.behavior.tool.undeclared_shell"
	CodeToolResultInjection   = "pkg.behavior.tool.result_injection"
	CodeToolRequestInjection  = "pkg.behavior.tool.request_injection"
	sandboxHome               = "/home/sandbox"
	toolCallsExamples         = 3
	toolCallsMinHostMatchSize = 4
)

// readsCalls reports whether the rubric being evaluated reads the tool
// calls (v13 on).
func (p *probe) readsCalls() bool { return p.atLeast(toolCallsFrom) }

// calls returns the bundle's tool calls when the rubric reads them and the
// sandbox.exercise signal was observed; otherwise nil, and note says why
// no call was read (empty before v13).
func (p *probe) calls() (ex *evidence.Exercise, note string) {
	if !p.readsCalls() {
		return nil, ""
	}
	s, ok := p.b.Signals[evidence.SignalExercise]
	switch {
	case !ok:
		// A bundle recorded before the sandbox called tools: its reasons
		// read as under version 12.
		return nil, ""
	case s.State != evidence.StateObserved:
		return nil, "no tool was called (signal " + evidence.SignalExercise + " is " + string(s.State) + because(s.Reason) + "), so no tool-call finding could be raised"
	case p.b.Exercise == nil:
		return nil, "signal " + evidence.SignalExercise + " is observed but the bundle holds no tool calls"
	}
	return p.b.Exercise, ""
}

// callsNote is the part of a dimension's reason that says what the tool
// calls showed: n findings of the dimension's tool codes, or why none
// could be raised. Empty before v13.
func (p *probe) callsNote(ex *evidence.Exercise, note string, n int) string {
	switch {
	case !p.readsCalls():
		return ""
	case ex == nil && note == "":
		return ""
	case ex == nil:
		return "; " + note
	}
	s := "; " + plural(len(ex.Calls), "tool call") + " watched"
	if k := len(ex.NotCalled); k > 0 {
		s += " (" + plural(k, "listed tool") + " not called)"
	}
	if n > 0 {
		return s + ", " + plural(n, "tool-call finding") + " here"
	}
	return s + ", none raised a finding here"
}

// callTool returns the call of number n and the contract's tool of its
// name (nil when the contract lists none of that name).
func (p *probe) callTool(ex *evidence.Exercise, n int) (*evidence.ToolCall, *contract.Tool) {
	for i := range ex.Calls {
		if ex.Calls[i].Call == n {
			return &ex.Calls[i], p.toolNamed(ex.Calls[i].Tool)
		}
	}
	return nil, nil
}

func (p *probe) toolNamed(name string) *contract.Tool {
	if p.b.Contract == nil {
		return nil
	}
	for i := range p.b.Contract.Tools {
		if p.b.Contract.Tools[i].Name == name {
			return &p.b.Contract.Tools[i]
		}
	}
	return nil
}

// byCall reports whether a run-phase event came in a tool call's window,
// which rubric v13 judges only by the tool-call codes.
func (p *probe) byCall(stage string, call int) bool {
	return p.readsCalls() && (call != 0 || stage == evidence.StageCall)
}

// callFileKeys are the paths of the files the tool calls changed, in both
// the absolute form of the calls and the home-relative form ("~/x") of
// the end-of-run home comparison; nil before v13 or without calls.
func (p *probe) callFileKeys() map[string]bool {
	ex, _ := p.calls()
	if ex == nil {
		return nil
	}
	keys := map[string]bool{}
	for _, c := range ex.Calls {
		for _, f := range c.Files {
			keys[f.Path] = true
			if rel, ok := strings.CutPrefix(f.Path, sandboxHome+"/"); ok {
				keys["~/"+rel] = true
			}
		}
	}
	return keys
}

// emitToolActionSafety emits the tool-call findings of action_safety and
// returns how many contradict a read-only claim (counted as
// contradictions) and how many tool-call findings there were in all.
func (p *probe) emitToolActionSafety() (contradictions, n int, note string) {
	ex, note := p.calls()
	if ex == nil {
		return 0, 0, p.callsNote(ex, note, 0)
	}
	for _, c := range ex.Calls {
		t := p.toolNamed(c.Tool)
		if t == nil || !t.ReadOnly() {
			continue
		}
		if files := readOnlyWrites(ex, c); len(files) > 0 {
			contradictions++
			p.emit(CodeToolReadOnlyWrite, c.Tool,
				fmt.Sprintf("tool %q claims readOnlyHint true, but when called it %s", c.Tool, examplesText(files[:min(toolCallsExamples, len(files))], len(files))),
				p.clip(fmt.Sprintf("call %d; readOnlyHint: true; %s", c.Call, strings.Join(files, ", "))))
		}
	}
	n = contradictions + p.emitClosedWorld(ex)
	note = p.callsNote(ex, "", n)
	if fc := ex.FileCheck; fc != "" && fc != observerOK {
		// The files a call changed may be missing: what is listed is
		// still evidence, what is not is unknown.
		note += "; the per-call file check did not work (" + fc + "), so a read-only tool's writes may be missing"
	}
	return contradictions, n, note
}

// readOnlyWrites lists what a call changed that a read-only tool must
// not: a planted decoy or seeded file modified or deleted, or a file
// created in the scratch directory. A file created elsewhere (a cache in
// /tmp or ~/.cache) is not such a write.
func readOnlyWrites(ex *evidence.Exercise, c evidence.ToolCall) []string {
	var out []string
	scratch := strings.TrimSuffix(ex.Scratch, "/")
	for _, f := range c.Files {
		switch {
		case (f.Decoy || f.Seeded) && (f.Op == "modified" || f.Op == "deleted"):
		case f.Op == "created" && scratch != "" && strings.HasPrefix(f.Path, scratch+"/"):
		default:
			continue
		}
		out = append(out, f.Op+" "+f.Path)
	}
	return out
}

// emitClosedWorld reports the tools that claim openWorldHint false and
// connected, during their call, to a destination the server reached at no
// other time of the run phase (outside the calls, or in another call's
// window) and its configuration does not name.
func (p *probe) emitClosedWorld(ex *evidence.Exercise) int {
	beh := p.b.Behavior
	if beh == nil {
		return 0
	}
	outside := map[string]bool{}
	inCall := map[string]int{} // by host, the one call that reached it; -1: more than one
	for _, e := range beh.Network {
		if e.Phase != evidence.PhaseRun || isDNS(e) {
			continue
		}
		// By host: the sink answers every name at one address, so an
		// address says nothing of where a request was meant to go.
		h := destHost(e)
		switch prev, seen := inCall[h]; {
		case e.Call == 0:
			outside[h] = true
		case !seen:
			inCall[h] = e.Call
		case prev != e.Call:
			inCall[h] = -1
		}
	}
	for h, c := range inCall {
		// A destination reached in the windows of two calls may be what
		// the first set off after its answer (telemetry of every call):
		// it is not held against one of them.
		if c < 0 {
			outside[h] = true
		}
	}
	config := p.configText()
	dests := map[int][]string{}
	var order []int
	for _, e := range beh.Network {
		if e.Call == 0 || (e.Kind != "tcp" && e.Kind != "udp") {
			continue
		}
		host := destHost(e)
		if outside[host] || (host != "" && strings.Contains(config, host)) {
			continue
		}
		if _, ok := dests[e.Call]; !ok {
			order = append(order, e.Call)
		}
		d := dests[e.Call]
		addUnique(&d, e.Kind+" "+destination(e))
		dests[e.Call] = d
	}
	n := 0
	done := map[string]bool{}
	for _, call := range order {
		c, t := p.callTool(ex, call)
		if c == nil || t == nil || t.Annotations == nil || t.Annotations.OpenWorldHint == nil || *t.Annotations.OpenWorldHint || done[c.Tool] {
			continue
		}
		done[c.Tool] = true
		n++
		d := sortedCopy(dests[call])
		p.emit(CodeToolClosedWorldNet, c.Tool,
			fmt.Sprintf("tool %q claims openWorldHint false, but when called it connected to %s, which the server reached at no other time and its configuration does not name", c.Tool, examplesText(d[:min(toolCallsExamples, len(d))], len(d))),
			p.clip(fmt.Sprintf("call %d; openWorldHint: false; %s", call, strings.Join(d, ", "))))
	}
	return n
}

// emitAddedRecipients reports the mail addresses a request made during a
// call named as a recipient that the caller never gave: not in the call's
// arguments, the server's configuration or the placeholders. It returns
// how many findings it raised and the reason's note.
func (p *probe) emitAddedRecipients() (n int, note string) {
	ex, note := p.calls()
	if ex == nil || p.b.Behavior == nil {
		return 0, p.callsNote(ex, note, 0)
	}
	config := p.configText()
	seen := map[string]bool{}
	for _, e := range p.b.Behavior.Network {
		if e.Call == 0 || len(e.Recipients) == 0 {
			continue
		}
		c, t := p.callTool(ex, e.Call)
		if c == nil {
			continue
		}
		args, surface := strings.ToLower(string(c.Arguments)), surfaceText(t)
		for _, r := range e.Recipients {
			addr := strings.ToLower(strings.TrimSpace(r))
			if addr == "" || strings.Contains(args, addr) || strings.Contains(config, addr) || strings.Contains(surface, addr) ||
				placeholder(ex, addr) || seen[c.Tool+"\x00"+addr] {
				continue
			}
			seen[c.Tool+"\x00"+addr] = true
			n++
			req := requestLine(e)
			p.emit(CodeToolAddedRecipient, c.Tool,
				fmt.Sprintf("when tool %q was called, the server's request %s named %s as a recipient, an address the caller never gave (not in the call's arguments nor the server's configuration)", c.Tool, req, addr),
				p.clip(fmt.Sprintf("call %d; recipient %s; %s; arguments %s", c.Call, addr, req, compactJSON(c.Arguments))))
		}
	}
	return n, p.callsNote(ex, "", n)
}

// placeholder reports whether addr is, or is inside, a placeholder value
// of the exercise.
func placeholder(ex *evidence.Exercise, addr string) bool {
	for _, v := range ex.Placeholders {
		if v = strings.ToLower(v); v != "" && strings.Contains(v, addr) {
			return true
		}
	}
	return false
}

// requestLine names a request: its method, host and target, else its
// destination.
func requestLine(e evidence.NetEvent) string {
	host := hostOnly(e.HTTPHost)
	if host == "" {
		host = e.SNI
	}
	if e.HTTPMethod == "" && e.HTTPTarget == "" {
		return orUnknown(e.Kind) + " to " + destination(e)
	}
	return strings.TrimSpace(e.HTTPMethod + " " + orUnknown(host) + e.HTTPTarget)
}

// emitSecretToArgumentHost reports an operator's configured secret
// (--env) sent during a call to a host the call's arguments name, that is
// one the caller chose. Sending it to any other host is evidence, not a
// finding: a server sends its API key to its own API by design.
func (p *probe) emitSecretToArgumentHost() (n int, note string) {
	ex, note := p.calls()
	if ex == nil || p.b.Behavior == nil {
		return 0, p.callsNote(ex, note, 0)
	}
	config := p.configText()
	seen := map[string]bool{}
	for _, e := range p.b.Behavior.Network {
		if e.Call == 0 {
			continue
		}
		secrets := envSecrets(e.Secrets)
		if len(secrets) == 0 {
			continue
		}
		c, t := p.callTool(ex, e.Call)
		if c == nil {
			continue
		}
		args := strings.ToLower(string(c.Arguments))
		host := argumentHost(e, args, config+" "+surfaceText(t))
		if host == "" || seen[c.Tool+"\x00"+host] {
			continue
		}
		seen[c.Tool+"\x00"+host] = true
		n++
		p.emit(CodeToolSecretToArgHost, c.Tool,
			fmt.Sprintf("when tool %q was called, the operator's configured %s went to %s, a host the call's arguments named: the secret followed a caller-chosen address", c.Tool, strings.Join(secrets, ", "), host),
			p.clip(fmt.Sprintf("call %d; %s; %s; arguments %s", c.Call, strings.Join(secrets, ", "), requestLine(e), compactJSON(c.Arguments))))
	}
	return n, p.callsNote(ex, "", n)
}

// surfaceText is what a tool's own surface says, lower-cased: its title,
// description and input schema (defaults and examples included). A host
// or address named there is the tool's own, shown to the caller, not one
// the caller chose or one hidden from it.
func surfaceText(t *contract.Tool) string {
	if t == nil {
		return ""
	}
	return strings.ToLower(t.Title + " " + t.Description + " " + string(t.InputSchema))
}

// envSecrets returns the "env:NAME" entries of a request's secrets.
func envSecrets(s []string) []string {
	var out []string
	for _, v := range s {
		if strings.HasPrefix(v, "env:") {
			addUnique(&out, v)
		}
	}
	return out
}

// argumentHost returns the host of e (HTTP Host, SNI, the name looked up
// or the DNS name, without port) that args names and own (the server's
// configuration and the tool's surface) does not, or "".
func argumentHost(e evidence.NetEvent, args, own string) string {
	for _, h := range []string{hostOnly(e.HTTPHost), e.SNI, e.LookedUp, e.DNSName} {
		h = strings.ToLower(strings.TrimSuffix(h, "."))
		if len(h) < toolCallsMinHostMatchSize || !strings.Contains(args, h) || strings.Contains(own, h) {
			continue
		}
		return h
	}
	return ""
}

// emitUndeclaredShells reports, once per tool, a shell run with -c during
// a call of a tool whose own text says nothing of running commands nor
// names the program the command runs. It returns how many it raised.
func (p *probe) emitUndeclaredShells(events []evidence.ProcessEvent) (n int, note string) {
	ex, note := p.calls()
	if ex == nil {
		return 0, p.callsNote(ex, note, 0)
	}
	es := p.p.Behavior.ExecutionSafety
	// A command line run in the windows of two calls or more is the
	// server's own machinery (a browser launcher looking for a display on
	// every call), not what one tool does unsaid: it is held against no
	// tool. A shell whose command fetches or runs code is
	// pkg.behavior.process.shell whatever the stage.
	windows := map[string]map[int]bool{}
	for _, e := range events {
		if e.Call != 0 {
			k := strings.Join(e.Argv, "\x00")
			if windows[k] == nil {
				windows[k] = map[int]bool{}
			}
			windows[k][e.Call] = true
		}
	}
	done := map[string]bool{}
	for _, e := range events {
		if e.Call == 0 || !(e.Provenance == evidence.ProvenancePackage || (e.Provenance == "" && !e.Expected)) {
			continue
		}
		names, args := programOf(e, es.MultiCall)
		shell, ok := match(names, es.Shells)
		if !ok || !hasCommandFlag(args) || len(windows[strings.Join(e.Argv, "\x00")]) > 1 {
			continue
		}
		c, t := p.callTool(ex, e.Call)
		if c == nil || done[c.Tool] {
			continue
		}
		text := toolText(c.Tool, t)
		prog := firstProgram(shellCommand(args))
		if declaresCommands(text, prog, es.CommandWords) {
			continue
		}
		done[c.Tool] = true
		n++
		p.emit(CodeToolUndeclaredShell, c.Tool,
			fmt.Sprintf("when tool %q was called, the server ran a shell command with %s -c (running %s), and the tool's name, title and description say nothing of running commands", c.Tool, shell, orUnknown(prog)),
			p.clip(fmt.Sprintf("call %d; %s", c.Call, commandLine(e))))
	}
	return n, p.callsNote(ex, "", n)
}

// emitCallShells reports, from v13, the shells a tool call ran whose
// command fetches or runs code it did not ship with (a network tool piped
// into a shell, base64 decoded and run, /dev/tcp): the arguments of a call
// are placeholders, so such a command is the server's own, and it is
// pkg.behavior.process.shell whatever the tool says. It returns how many.
func (p *probe) emitCallShells(events []evidence.ProcessEvent) int {
	ex, _ := p.calls()
	if ex == nil {
		return 0
	}
	es := p.p.Behavior.ExecutionSafety
	n := 0
	for _, e := range events {
		if e.Call == 0 || e.Expected {
			continue
		}
		names, args := programOf(e, es.MultiCall)
		name, ok := match(names, es.Shells)
		if !ok || !hasCommandFlag(args) || !shellRunsCode(args) {
			continue
		}
		tool := "an unknown tool"
		if c, _ := p.callTool(ex, e.Call); c != nil {
			tool = strconv.Quote(c.Tool)
		}
		n++
		cmd := commandLine(e)
		p.emitCapped(CodeProcessShell, behaviorSubject(e.Phase, e.Package), short(cmd), "shell commands",
			fmt.Sprintf("%s ran a shell command with %s -c %s, during a call of %s", p.actor(e.Phase, e.Package), name, p.during(e.Phase), tool), p.clip(cmd))
	}
	return n
}

// validateCommandWords checks parameters.behavior.execution_safety's
// command_words: set from rubric v13 on, which reads the tool calls, and
// absent before.
func (r *Rubric) validateCommandWords() []error {
	if r.Params.Behavior == nil {
		return nil // reported by BehaviorParams.validate
	}
	words := r.Params.Behavior.ExecutionSafety.CommandWords
	has := compareVersions(r.Version, toolCallsFrom) >= 0
	switch {
	case has && len(words) == 0:
		return []error{fmt.Errorf("parameters.behavior.execution_safety.command_words: missing, and rubric v%s reads the tool calls (from v%s on)", r.Version, toolCallsFrom)}
	case !has && len(words) > 0:
		return []error{fmt.Errorf("parameters.behavior.execution_safety.command_words: present, but rubric v%s is older than v%s, the first that reads the tool calls", r.Version, toolCallsFrom)}
	}
	return nil
}

// toolText is a tool's name, titles and description, lower-cased.
func toolText(name string, t *contract.Tool) string {
	parts := []string{name}
	if t != nil {
		parts = append(parts, t.Title, t.Description)
		if t.Annotations != nil {
			parts = append(parts, t.Annotations.Title)
		}
	}
	return strings.ToLower(strings.Join(parts, " "))
}

// declaresCommands reports whether a tool's text says it runs commands
// (one of words), or names prog, the program its shell command runs.
func declaresCommands(text, prog string, words []string) bool {
	toks := tokens(text)
	for _, tok := range toks {
		if slices.Contains(words, tok) {
			return true
		}
	}
	prog = strings.ToLower(prog)
	if prog == "" {
		return false
	}
	return slices.Contains(toks, prog) || (len(prog) >= toolCallsMinHostMatchSize && strings.Contains(text, prog))
}

// shellCommand returns the command string of a shell's arguments: the
// first operand after its options (sh -c CMD, sh -ec CMD).
func shellCommand(args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			if i+1 < len(args) {
				return args[i+1]
			}
			return ""
		}
		if !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "+") {
			return a
		}
		if !strings.HasPrefix(a, "--") && (strings.HasSuffix(a, "o") || strings.HasSuffix(a, "O")) {
			i++ // -o pipefail
		}
	}
	return ""
}

// firstProgram is the base name of the first word of a shell command that
// is not a variable assignment ("FOO=1 git status" runs git).
func firstProgram(cmd string) string {
	for _, w := range strings.Fields(cmd) {
		w = strings.Trim(w, `"'(`)
		if w == "" || strings.Contains(w, "=") && !strings.HasPrefix(w, "=") && !strings.Contains(w, "/") {
			continue
		}
		if w == "exec" || w == "command" || w == "env" {
			continue
		}
		return path.Base(w)
	}
	return ""
}

// callPhrase names the call a canary left during, for its message.
func (p *probe) callPhrase(call int) string {
	if call == 0 || !p.readsCalls() || p.b.Exercise == nil {
		return ""
	}
	c, _ := p.callTool(p.b.Exercise, call)
	if c == nil {
		return fmt.Sprintf(", during tool call %d", call)
	}
	return fmt.Sprintf(", during a call of %s", c.Tool)
}

// compactJSON is a call's arguments on one line (a stored bundle holds
// them indented).
func compactJSON(raw []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// configText is the server's configuration as the calls' codes compare
// with it: its arguments, lower-cased.
func (p *probe) configText() string {
	return strings.ToLower(strings.Join(p.b.Target.Args, " "))
}
