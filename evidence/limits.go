package evidence

import (
	"regexp"
	"strconv"
	"strings"
)

// Kinds of scanner limit (Limit.Kind).
const (
	// LimitInterpreter: the tree needs a Python or Node.js the sandbox
	// does not have (Requires-Python, wheels only for other Pythons,
	// engines.node when npm refuses).
	LimitInterpreter = "interpreter"
	// LimitPlatform: the package is built for another operating system or
	// architecture (npm's os and cpu, wheels only for other platforms).
	LimitPlatform = "platform"
	// LimitFetch: the fetch step cannot get the tree by its own design (it
	// reaches only the registry, and never runs a build backend).
	LimitFetch = "fetch"
	// LimitConfiguration: the server stopped for arguments or environment
	// the scan did not give.
	LimitConfiguration = "configuration"
	// LimitNetwork: the server needed the network at start, which the run
	// phase does not give.
	LimitNetwork = "network"
	// LimitMemory: the kernel killed the code at the sandbox's memory
	// limit, a setting of the scan.
	LimitMemory = "memory"
)

// Limit is something the sandbox could not do for a package, shown by the
// stored evidence of a failed install or session: an interpreter or
// platform it lacks, a tree its fetch step cannot get, configuration,
// network or memory it does not give. A limit is the scanner's, never the
// package's: the signal it stopped is not assessed, with Reason, and no
// finding is raised on it.
//
// ScannerLimit is the one place that reads a limit from evidence: the
// pipeline calls it when a scan ends, to record the signal states, and
// the rubric (from version 11) on any stored bundle, so that a bundle
// recorded before it existed is read the same way.
type Limit struct {
	// Signal is the signal whose question the limit left unanswered:
	// SignalInstall (the install could not be done) or SignalSession (the
	// server could not be started as the scan ran it).
	Signal string
	Kind   string
	// Reason says in one sentence what the package needs that the sandbox
	// does not give, and what to do about it.
	Reason string
	// Evidence quotes the stored line that shows it.
	Evidence string
}

// stoppedBy lists, for the signal a limit stopped, the signals whose
// evidence could not be collected after it.
var stoppedBy = map[string][]string{
	SignalInstall: {SignalInstall, SignalSession, SignalContract, SignalJudge, SignalDrift, SignalBehavior, SignalOSV},
	SignalSession: {SignalSession, SignalContract, SignalJudge, SignalDrift},
}

// Apply returns the state the limit leaves signal name in, given its
// recorded state s (recorded is false when the bundle has no such signal),
// and whether the limit stopped it. The limit's own signal is not_assessed
// whatever was recorded (a bundle recorded before limits were read holds
// the failure as observed). A later signal the limit kept from being
// collected is not_assessed unless it was observed: evidence that was
// collected (what lifecycle scripts did before an install ran out of
// memory) stays evidence.
func (l Limit) Apply(name string, s Signal, recorded bool) (Signal, bool) {
	stops := false
	for _, n := range stoppedBy[l.Signal] {
		if n == name {
			stops = true
			break
		}
	}
	if !stops || (name != l.Signal && recorded && s.State == StateObserved) {
		return s, false
	}
	out := Signal{State: StateNotAssessed, ThirdParty: s.ThirdParty, DurationMS: s.DurationMS, Endpoint: s.Endpoint}
	if name == l.Signal {
		out.Reason = "a limit of the sandbox, not a failure of the package: " + l.Reason
	} else {
		out.Reason = "not collected: " + l.Reason
	}
	return out, true
}

// ScannerLimit returns the limit of the sandbox that b's evidence shows
// stopped its install or its session, if any. It reads only stored
// evidence (the install error and log tail, the session outcome, stderr and
// stdout samples, the behaviour events), so it is a pure function of the
// bundle.
//
// What separates a limit from the package's own failure: a limit is what a
// user with the interpreter, the platform, the configuration, the network
// or the memory the package asks for would not hit. A dependency that does
// not exist on the registry (npm E404 or ETARGET, uv's "not found in the
// package registry" or "there is no version of"), a version conflict the
// package's own manifest creates (ERESOLVE, a uv derivation with no Python
// in it), bytes that do not match their integrity, an install that timed
// out, and a server that crashed on its own code (a module it cannot find,
// a syntax error, an exception with no sign of missing configuration or
// network) are the package's, and stay findings.
func ScannerLimit(b *Bundle) (Limit, bool) {
	if b == nil {
		return Limit{}, false
	}
	if in := b.Install; in != nil && in.Outcome != InstallOK {
		return installLimit(b, in)
	}
	if s := b.Session; s != nil && s.Outcome != OutcomeOK && s.Outcome != "" {
		return sessionLimit(b, s)
	}
	return Limit{}, false
}

var (
	npmCodeRe       = regexp.MustCompile(`npm install failed \((E[A-Z0-9_]+)\)|npm (?:error|ERR!) code (E[A-Z0-9_]+)`)
	npmPlatformRe   = regexp.MustCompile(`Unsupported platform for (\S+?):? wanted (\{[^}]*\}) \(current: (\{[^}]*\})\)`)
	npmEngineForRe  = regexp.MustCompile(`Not compatible with your version of node/npm: (\S+)`)
	npmRequiredRe   = regexp.MustCompile(`Required: (\{[^}]*\})`)
	npmActualRe     = regexp.MustCompile(`Actual:\s+(\{[^}]*\})`)
	uvPythonRe      = regexp.MustCompile(`(?:current|requested) Python version \(([^)]+)\) does not satisfy (Python\s*[<>=!~][^\s,]*)`)
	uvPythonWhoRe   = regexp.MustCompile(`and (\S+) depends on Python\s*[<>=!~]`)
	uvWheelTagRe    = regexp.MustCompile(`(\S+) has no wheels with a matching (Python ABI|Python version|Python implementation|platform) tag(?: \(e\.g\., ` + "`" + `([^` + "`" + `]+)` + "`" + `\))?`)
	uvOwnFailureRe  = regexp.MustCompile(`(?i)was not found in the package registry|not found in the provided package locations|there is no version of|no versions? of \S+ (?:are|is) available`)
	npmGitRe        = regexp.MustCompile(`a dependency comes from a git repository \(([^)]*)\)`)
	npmForeignRe    = regexp.MustCompile(`a dependency is fetched from (\S+) \(`)
	pyDynamicRe     = regexp.MustCompile(`only its build backend could say`)
	pyMetaRe        = regexp.MustCompile(`dynamic metadata: ([^\n]+)`)
	pyNoFileRe      = regexp.MustCompile(`the resolution gives (\S+ \S+) no file to fetch`)
	sandboxPythonRe = regexp.MustCompile(`sandbox's Python (\d+\.\d+)`)
	// pyNoPythonRe reads the sandbox's own refusal when none of the
	// interpreters it offers satisfies the release's Requires-Python
	// (sandbox/pyinterp.go, noPythonError).
	pyNoPythonRe = regexp.MustCompile(`(\S+) requires Python (.+), which is satisfied by none of the sandbox's Pythons \(CPython ([^)]*)\)`)
	pyTooLargeRe = regexp.MustCompile(`(\S+) is larger than the fetch step's bound of (\d+ MiB) per file`)
)

// installLimit reads a failed install. Only the fetch step's failures and
// a kill for memory can be the sandbox's: the script step runs the
// package's own code.
func installLimit(b *Bundle, in *Install) (Limit, bool) {
	if in.Outcome == InstallOOM {
		return Limit{Signal: SignalInstall, Kind: LimitMemory, Evidence: clipLine(in.Error),
			Reason: "a lifecycle script was killed at the script step's memory limit (2 GiB), a setting of the sandbox, not a property of the package: " +
				"how the install ends with more memory is not known"}, true
	}
	if in.Outcome != InstallFailed || in.FailedStep != StepFetch {
		return Limit{}, false
	}
	text := in.Error + "\n" + in.LogTail
	lim := Limit{Signal: SignalInstall}
	// npm.
	if m := npmCodeRe.FindStringSubmatch(text); m != nil {
		code := m[1] + m[2]
		switch code {
		case "EBADPLATFORM":
			lim.Kind = LimitPlatform
			if p := npmPlatformRe.FindStringSubmatch(text); p != nil {
				lim.Evidence = p[0]
				lim.Reason = p[1] + " is built for " + p[2] + " and the sandbox is " + p[3] +
					": a platform the scanner does not offer, so the package could not be installed to be assessed"
			} else {
				lim.Evidence = clipLine(in.Error)
				lim.Reason = "npm refused the package for this platform (EBADPLATFORM): a platform the scanner does not offer"
			}
			return lim, true
		case "EBADENGINE":
			lim.Kind = LimitInterpreter
			who, req, act := "the package", "", ""
			if p := npmEngineForRe.FindStringSubmatch(text); p != nil {
				who = p[1]
			}
			if p := npmRequiredRe.FindStringSubmatch(text); p != nil {
				req = p[1]
			}
			if p := npmActualRe.FindStringSubmatch(text); p != nil {
				act = p[1]
			}
			lim.Evidence = clipLine("EBADENGINE: " + who + " required " + orDash(req) + ", actual " + orDash(act))
			lim.Reason = who + " requires " + orText(req, "another Node.js or npm") + " and the sandbox has " + orText(act, "another") +
				" (npm refused it, EBADENGINE): an interpreter the scanner lacks"
			return lim, true
		}
	}
	if m := npmGitRe.FindStringSubmatch(in.Error); m != nil {
		lim.Kind, lim.Evidence = LimitFetch, clipLine(in.Error)
		lim.Reason = "a dependency of the tree comes from a git repository (" + m[1] + "), and the fetch step reaches only the registry, by design: " +
			"the tree could not be fetched to be assessed (code from git is outside what the registry's integrity covers)"
		return lim, true
	}
	if m := npmForeignRe.FindStringSubmatch(in.Error); m != nil {
		lim.Kind, lim.Evidence = LimitFetch, clipLine(in.Error)
		lim.Reason = "a dependency of the tree is a tarball on " + m[1] + ", and the fetch step reaches only the registry, by design: " +
			"the tree could not be fetched to be assessed (a tarball from another host is outside what the registry's integrity covers)"
		return lim, true
	}
	// Before uv's own failures: the metadata build's log may show one
	// (a build requirement offline uv did not find).
	if m := pyMetaRe.FindStringSubmatch(in.Error); m != nil {
		// The metadata step (no network, watched) could not learn what an
		// sdist declares. A user's uv builds it with the network open; how
		// that ends is not known, so the package is not blamed.
		lim.Kind, lim.Evidence = LimitFetch, clipLine(in.Error)
		lim.Reason = "an sdist of the tree declares its dependencies only through its build backend, and the sandbox, which builds it for them with no network, " +
			"could not resolve the tree that way (" + strings.TrimSpace(m[1]) + "): the tree could not be resolved to be assessed; how it installs with the network open is not known"
		return lim, true
	}
	if m := pyNoPythonRe.FindStringSubmatch(in.Error); m != nil {
		lim.Kind, lim.Evidence = LimitInterpreter, clipLine(m[0])
		lim.Reason = m[1] + " requires Python " + m[2] + " and the sandbox offers CPython " + m[3] +
			": an interpreter the scanner lacks, so the release could not be installed to be assessed"
		return lim, true
	}
	// uv (PyPI). A derivation that also shows a dependency missing from
	// the index fails on any interpreter: that is the package's.
	if uvOwnFailureRe.MatchString(text) {
		return Limit{}, false
	}
	python := "3.11"
	if m := sandboxPythonRe.FindStringSubmatch(text); m != nil {
		python = m[1]
	}
	if m := uvPythonRe.FindStringSubmatch(text); m != nil {
		who := "the tree"
		if w := uvPythonWhoRe.FindStringSubmatch(text); w != nil {
			who = w[1]
		}
		lim.Kind, lim.Evidence = LimitInterpreter, clipLine(m[0])
		lim.Reason = who + " requires " + m[2] + " and the sandbox has CPython " + m[1] + ": an interpreter the scanner lacks, so the tree could not be resolved to be assessed"
		return lim, true
	}
	if m := uvWheelTagRe.FindStringSubmatch(text); m != nil {
		lim.Evidence = clipLine(m[0])
		if m[2] == "platform" {
			lim.Kind = LimitPlatform
			lim.Reason = m[1] + " publishes wheels only for other platforms and no sdist, and the sandbox, Linux, needs one such as " + orText(m[3], "a manylinux wheel") +
				": a platform the scanner does not offer"
		} else {
			lim.Kind = LimitInterpreter
			lim.Reason = m[1] + " publishes wheels only for other Pythons and no sdist, and the sandbox has CPython " + python +
				" (" + orText(m[3], "cp"+strings.ReplaceAll(python, ".", "")) + "): an interpreter the scanner lacks"
		}
		return lim, true
	}
	if pyDynamicRe.MatchString(text) {
		lim.Kind, lim.Evidence = LimitFetch, clipLine(in.Error)
		lim.Reason = "an sdist of the tree declares its dependencies only through its build backend, which the fetch step (the one with network) never runs, by design: " +
			"the tree could not be resolved to be assessed"
		return lim, true
	}
	if m := pyTooLargeRe.FindStringSubmatch(text); m != nil {
		lim.Kind, lim.Evidence = LimitFetch, clipLine(m[0])
		lim.Reason = m[1] + " is larger than the " + m[2] + " the fetch step takes per file, a bound of the sandbox, not a property of the package: " +
			"the tree could not be fetched to be assessed"
		return lim, true
	}
	if m := pyNoFileRe.FindStringSubmatch(text); m != nil {
		lim.Kind, lim.Evidence = LimitFetch, clipLine(in.Error)
		lim.Reason = "the resolution takes " + m[1] + " from a VCS or a directory, and the fetch step fetches only from the index, by design: the tree could not be fetched to be assessed"
		return lim, true
	}
	return Limit{}, false
}

var (
	// ownCrashRe marks a crash on the package's own code or tree: a module
	// it cannot load, or code that does not parse. A JSON parse error is
	// not one: it is what a client sees when the sandbox's sink answers a
	// request with an empty body.
	ownCrashRe = regexp.MustCompile(`Cannot find module|Cannot find package|ERR_MODULE_NOT_FOUND|MODULE_NOT_FOUND|ERR_REQUIRE_ESM|ERR_PACKAGE_PATH_NOT_EXPORTED|ERR_UNSUPPORTED_DIR_IMPORT|ModuleNotFoundError|ImportError|No module named|IndentationError|TabError`)
	syntaxRe   = regexp.MustCompile(`\bSyntaxError\b`)
	usageRe    = regexp.MustCompile(`^\s*(?:Usage|USAGE|usage):\s*\S`)
	// needRe finds a line by which the server says it lacks something it
	// must be given.
	needRe = regexp.MustCompile(`(?i)\b(?:is|are)\s+(?:required|not\s+set|missing|not\s+provided|not\s+configured|not\s+defined|unset)\b` +
		`|\bnot\s+provided\b` +
		`|\bplease\s+(?:set|provide|specify|pass|configure|supply|define|export)\b` +
		`|\b(?:must|needs?\s+to)\s+be\s+(?:set|provided|specified|configured|given|passed)\b` +
		`|\bmissing\s+(?:required\s+)?(?:environment|env|config|configuration|arguments?|options?|credentials?|api|token|key|variables?|parameters?)\b` +
		`|\brequired\s+(?:environment|env)\b|\bfield\s+required\b|\bset\s+it\s+in\b` +
		`|\bno\s+(?:[\w-]+\s+){0,2}(?:api[\s_-]?key|key|token|access\s+token|credentials?|secret|password|url|uri|host|directory|directories|path|database|connection\s+string|config(?:uration)?|arguments?)\s+(?:was\s+|were\s+)?(?:provided|given|specified|configured|set|found)\b`)
	pydanticRe = regexp.MustCompile(`Field required \[type=missing`)
	// softRe marks a line that tells of something optional, not a need.
	softRe = regexp.MustCompile(`(?i)\b(?:optional|optionally|disabled|keyless|warn|warning|fallback|falling\s+back|default)\b`)
	// nounRe names what a need line without a variable asks for.
	nounRe    = regexp.MustCompile(`(?i)api[\s_-]?key|access\s+token|\btoken\b|credential|secret|password|\burl\b|\buri\b|director(?:y|ies)|argument|database|connection\s+string|environment\s+variable|\benv\b|\bpath\b|\bhost\b`)
	envRe     = regexp.MustCompile(`\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b`)
	flagRe    = regexp.MustCompile(`(?:^|[\s` + "`" + `'"(/])(--[a-z][a-z0-9-]*[a-z0-9])`)
	netRe     = regexp.MustCompile(`fetch failed|Failed to fetch|\bENOTFOUND\b|\bEAI_AGAIN\b|getaddrinfo|\bECONNREFUSED\b|\bECONNRESET\b|\bETIMEDOUT\b|\bEHOSTUNREACH\b|\bENETUNREACH\b|socket hang up|Temporary failure in name resolution|Name or service not known|Network is unreachable|ConnectError|ConnectTimeout|ConnectionError|NewConnectionError|Failed to establish a new connection|Connection refused|handshake failure|ERR_SSL_|SSLError|CERTIFICATE_VERIFY_FAILED|Unexpected end of JSON input|JSONDecodeError|Expecting value: line 1 column 1 \(char 0\)|invalid json response body|could not be loaded|failed to load`)
	lookupRe  = regexp.MustCompile(`getaddrinfo (?:EAI_AGAIN|ENOTFOUND) \S+|Temporary failure in name resolution|Name or service not known`)
	dnsFailRe = regexp.MustCompile(`\bENOTFOUND\b|\bEAI_AGAIN\b|getaddrinfo|Temporary failure in name resolution|Name or service not known|fetch failed|Network is unreachable|\bENETUNREACH\b|ConnectError|NewConnectionError|Failed to establish a new connection`)
)

// sessionLimit reads a failed session.
func sessionLimit(b *Bundle, s *Session) (Limit, bool) {
	lim := Limit{Signal: SignalSession}
	if s.Outcome == OutcomeOOM || s.OOMKilled {
		at := "the run phase's memory limit"
		if n := b.Sandbox.Limits.MemoryBytes; n > 0 {
			at += " (" + memoryText(n) + ")"
		}
		lim.Kind, lim.Evidence = LimitMemory, "oom killed; outcome "+string(s.Outcome)
		lim.Reason = "the server was killed at " + at + ", a setting of the scan, not a property of the package: scan again with a higher --memory"
		return lim, true
	}
	switch s.Outcome {
	case OutcomeStartCrashed, OutcomeHandshakeTimeout, OutcomeProtocolError:
	default:
		return Limit{}, false
	}
	lines := outputLines(s)
	for _, l := range lines {
		if ownCrashRe.MatchString(l) || (syntaxRe.MatchString(l) && !strings.Contains(l, "JSON")) {
			return Limit{}, false
		}
	}
	if l, ok := configLimit(b, lines); ok {
		return l, true
	}
	return networkLimit(b, lines)
}

// outputLines are the server's stderr tail and the non-JSON lines it wrote
// to stdout (a usage text printed there breaks the protocol).
func outputLines(s *Session) []string {
	var lines []string
	for _, l := range strings.Split(s.StderrTail, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	for _, l := range s.NonJSONSample {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// configLimit finds a line by which the server says it needs arguments or
// environment the scan did not give: its usage text, or a need line ("X is
// required", "Please set X", "No API key provided") that names a variable
// the scan did not pass (an assignment X=value shows X was there), or that
// names no variable but what is missing (a token, a URL, a directory).
func configLimit(b *Bundle, lines []string) (Limit, bool) {
	given := map[string]bool{}
	for _, n := range b.Target.EnvNames {
		given[n] = true
	}
	lim := Limit{Signal: SignalSession, Kind: LimitConfiguration}
	for i, l := range lines {
		if !needRe.MatchString(l) || softRe.MatchString(l) {
			continue
		}
		near := l
		if i+1 < len(lines) {
			near += "\n" + lines[i+1]
		}
		vars, assigned := missingVars(l, given)
		if len(vars) == 0 && i+1 < len(lines) && !assigned {
			vars, _ = missingVars(lines[i+1], given)
		}
		// pydantic names the missing field on the line before.
		pydantic := pydanticRe.MatchString(l)
		if len(vars) == 0 && pydantic && i > 0 {
			vars, _ = missingVars(lines[i-1], given)
		}
		named, _ := missingVars(l, nil)
		switch {
		case len(vars) > 0 || pydantic:
		case len(named) > 0 || assigned:
			// Every variable the line names was given, or is shown with a
			// value: the line says nothing the scan withheld.
			continue
		case !nounRe.MatchString(l):
			continue
		}
		flags := uniq(flagRe.FindAllStringSubmatch(near, -1))
		lim.Evidence = clipLine(strings.TrimSpace(l))
		switch {
		case len(vars) > 0:
			names := strings.Join(vars, ", ")
			lim.Reason = "the server stopped for configuration the scan did not give: it names " + names + "; pass " + envHint(vars) + " to scan it"
		case len(flags) > 0:
			lim.Reason = "the server stopped for configuration the scan did not give (it names " + strings.Join(flags, ", ") + "): pass it with --arg (or its variable with --env) to scan it"
		default:
			lim.Reason = "the server stopped for configuration the scan did not give (" + strings.TrimSpace(lim.Evidence) + "): pass it with --arg or --env to scan it"
		}
		return lim, true
	}
	for _, l := range lines {
		if usageRe.MatchString(l) {
			lim.Evidence = clipLine(strings.TrimSpace(l))
			lim.Reason = "the server printed its usage and stopped: it needs arguments the scan did not give; pass them with --arg to scan it"
			return lim, true
		}
	}
	return Limit{}, false
}

// missingVars returns the environment variable names line names that are
// not in given, in order and each once; assigned is set when a name is
// written with a value (NAME=value), which shows it was set.
func missingVars(line string, given map[string]bool) (vars []string, assigned bool) {
	seen := map[string]bool{}
	for _, loc := range envRe.FindAllStringIndex(line, -1) {
		name := line[loc[0]:loc[1]]
		if rest := line[loc[1]:]; strings.HasPrefix(rest, "=") && len(strings.TrimSpace(strings.TrimPrefix(rest, "="))) > 0 && !strings.HasPrefix(rest, "=$") && !strings.HasPrefix(rest, "=<") && !strings.HasPrefix(rest, "=…") {
			assigned = true
			continue
		}
		if given[name] || seen[name] {
			continue
		}
		seen[name] = true
		vars = append(vars, name)
	}
	return vars, assigned
}

// networkLimit finds a server that needed the network at start: its output
// says a connection or a lookup failed (or that what it fetched could not
// be read, as the sink's empty answers read), and, when behaviour was
// watched, the sink saw it try the network before the session ended. With
// behaviour not watched the run phase had no network at all, and a failed
// lookup or connection in its output is the evidence.
func networkLimit(b *Bundle, lines []string) (Limit, bool) {
	var hit string
	for _, l := range lines {
		if netRe.MatchString(l) {
			hit = strings.TrimSpace(l)
			break
		}
	}
	if hit == "" {
		return Limit{}, false
	}
	watched := false
	if bh := b.Behavior; bh != nil {
		for _, w := range bh.Watches {
			if w.Phase == PhaseRun {
				watched = true
			}
		}
	}
	lim := Limit{Signal: SignalSession, Kind: LimitNetwork, Evidence: clipLine(hit)}
	if !watched {
		var dns string
		for _, l := range lines {
			if lookupRe.MatchString(l) {
				dns = strings.TrimSpace(l)
				break
			}
		}
		for _, l := range lines {
			if dns == "" && dnsFailRe.MatchString(l) {
				dns = strings.TrimSpace(l)
			}
		}
		if dns == "" {
			return Limit{}, false
		}
		lim.Evidence = clipLine(dns)
		lim.Reason = "the server needed the network at start (" + lim.Evidence + "), which the run phase does not give: whether it starts with a network is not known"
		return lim, true
	}
	var hosts []string
	attempts := 0
	for _, e := range b.Behavior.Network {
		if e.Phase != PhaseRun || e.AfterHandshake || e.Stage == StageIdle || e.Stage == StageShutdown || e.Stage == StageCall || e.Call != 0 {
			continue
		}
		attempts++
		h := e.DNSName
		if h == "" {
			h = e.SNI
		}
		if h == "" {
			h = e.LookedUp
		}
		if h == "" && e.DstIP != "" {
			h = e.DstIP
		}
		if h != "" && !contains(hosts, h) && len(hosts) < 3 {
			hosts = append(hosts, h)
		}
	}
	if attempts == 0 {
		return Limit{}, false
	}
	lim.Reason = "the server needed the network at start (it tried " + orText(strings.Join(hosts, ", "), "the network") + ", " +
		strconv.Itoa(attempts) + " attempt" + pluralS(attempts) + ", then: " + lim.Evidence + "), which the run phase does not give: whether it starts with a network is not known"
	return lim, true
}

func envHint(vars []string) string {
	parts := make([]string, len(vars))
	for i, v := range vars {
		parts[i] = "--env " + v + "=…"
	}
	return strings.Join(parts, " ")
}

func uniq(ms [][]string) []string {
	var out []string
	for _, m := range ms {
		if !contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func pluralS(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func orDash(s string) string { return orText(s, "?") }

func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// clipLine keeps the first line of s, at most 240 bytes cut at a rune.
func clipLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if len(s) <= 240 {
		return s
	}
	cut := 239
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// memoryText prints a byte count in binary units: 512 MiB, 2 GiB.
func memoryText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + " GiB"
	case n >= 1<<20:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// listNetRe and listNeedRe read a list call's error: the network the run
// phase does not give ("Fetch failed" from a server that asks its API to
// list resources), or configuration the scan did not give ("Missing
// required database configuration").
var (
	listNetRe  = regexp.MustCompile(`(?i)fetch failed|failed to fetch|` + netRe.String())
	listNeedRe = regexp.MustCompile(`(?i)\bmissing\s+(?:required\s+)?(?:\w+\s+){0,2}(?:configuration|config|credentials?|api[\s_-]?key|token|settings?|environment\s+variables?)\b|\bnot\s+configured\b|\bno\s+(?:\w+\s+)?(?:api[\s_-]?key|token|credentials?)\s+(?:configured|provided|set)\b|` + needRe.String())
)

// ListLimit reports whether a list call failed for what the sandbox does
// not give, from the error the session recorded for it: the network, or
// configuration the scan did not give. The reason says which. Such a
// failure is not the package's (rubric v11 raises no finding for it).
func ListLimit(method, err string) (reason string, ok bool) {
	e := clipLine(strings.TrimSpace(err))
	switch {
	case listNetRe.MatchString(err):
		return method + " needed the network, which the run phase does not give (" + e + ")", true
	case listNeedRe.MatchString(err) && !softRe.MatchString(err):
		return method + " needed configuration the scan did not give (" + e + ")", true
	}
	return "", false
}
