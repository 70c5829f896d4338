package rubric

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/judge/checks"
)

// Reason codes emitted by the probes of rubric v1 (and kept by v2).
const (
	CodeInstallFailed           = "pkg.install.failed"
	CodeInstallTimeout          = "pkg.install.timeout"
	CodeIntegrityMismatch       = "pkg.install.integrity.mismatch"
	CodeIntegrityUnverified     = "pkg.install.integrity.unverified"
	CodeScriptsPresent          = "pkg.install.scripts.present"
	CodeScriptsFailed           = "pkg.install.scripts.failed"
	CodeScriptsNetworkDenied    = "pkg.install.scripts.network_denied"
	CodeScriptsOptionalFailed   = "pkg.install.scripts.optional_failed"
	CodeInstallOOM              = "pkg.install.oom"
	CodeArchivePathEscape       = "pkg.install.archive.path_escape"
	CodeTreeModified            = "pkg.install.tree.modified"
	CodeScriptsLeftRunning      = "pkg.install.scripts.left_running"
	CodeStartupHook             = "pkg.install.startup_hook"
	CodeSessionAfterDenied      = "pkg.session.failed_after_denied_install"
	CodeSessionStartCrashed     = "pkg.session.start_crashed"
	CodeSessionHandshakeTimeout = "pkg.session.handshake_timeout"
	CodeSessionProtocolError    = "pkg.session.protocol_error"
	CodeSessionOOM              = "pkg.session.oom"
	CodeDiscoverUnanswered      = "pkg.session.discover.unanswered"
	CodeStdoutNonJSON           = "pkg.protocol.stdout.non_json"
	CodeListFailed              = "pkg.protocol.list.failed"
	CodeListUnsupported         = "pkg.protocol.list.unsupported"
	CodeOutputTruncated         = "pkg.protocol.output.truncated"
	CodeSpecOutdated            = "pkg.session.spec.outdated"
	CodeSchemaCompleteness      = "pkg.contract.schema.completeness"
	CodeSchemaMissing           = "pkg.contract.schema.missing"
	CodeUndescribedParameter    = "pkg.contract.schema.undescribed_parameter"
	CodeDescriptionCoverage     = "pkg.contract.description.coverage"
	CodeDescriptionMissing      = "pkg.contract.description.missing"
	CodeAnnotationAbsent        = "pkg.contract.annotation.absent"
	CodeAnnotationContradiction = "pkg.contract.annotation.contradiction"
	CodeToolDestructive         = "pkg.contract.tool.destructive"
)

// scorers maps a dimension id to its probe. A rubric file may only name
// dimensions listed here.
var scorers = map[string]scorer{
	"installability": {
		emits: map[string]Kind{
			CodeInstallFailed: KindFinding, CodeInstallTimeout: KindFinding,
			CodeIntegrityMismatch: KindFinding, CodeIntegrityUnverified: KindFinding,
			CodeInstallOOM: KindFinding, CodeArchivePathEscape: KindFinding, CodeTreeModified: KindFinding,
		},
		since: map[string]string{CodeInstallOOM: "6", CodeArchivePathEscape: "12", CodeTreeModified: "12"},
		until: map[string]string{CodeIntegrityUnverified: unverifiedUntil},
		score: scoreInstallability,
	},
	"install_scripts": {
		emits: map[string]Kind{
			CodeScriptsPresent: KindFinding, CodeScriptsFailed: KindFinding,
			CodeScriptsNetworkDenied: KindFinding, CodeScriptsOptionalFailed: KindFinding,
			CodeScriptsLeftRunning: KindFinding, CodeStartupHook: KindFinding,
		},
		since: map[string]string{CodeScriptsNetworkDenied: "6", CodeScriptsOptionalFailed: "6", CodeScriptsLeftRunning: "12", CodeStartupHook: "12"},
		score: scoreInstallScripts,
	},
	"session": {
		emits: map[string]Kind{
			CodeSessionStartCrashed: KindFinding, CodeSessionHandshakeTimeout: KindFinding,
			CodeSessionProtocolError: KindFinding, CodeSessionOOM: KindFinding,
			CodeDiscoverUnanswered: KindFinding, CodeSessionAfterDenied: KindFinding,
		},
		since: map[string]string{CodeSessionAfterDenied: "6"},
		score: scoreSession,
	},
	"protocol_hygiene": {
		emits: map[string]Kind{CodeStdoutNonJSON: KindFinding, CodeListFailed: KindFinding, CodeOutputTruncated: KindFinding,
			CodeListUnsupported: KindFinding},
		since: map[string]string{CodeListUnsupported: "11"},
		score: scoreProtocolHygiene,
	},
	"spec_recency": {
		emits:        map[string]Kind{CodeSpecOutdated: KindFinding},
		score:        scoreSpecRecency,
		contractOnly: true,
	},
	"schema_completeness": {
		emits: map[string]Kind{
			CodeSchemaCompleteness: KindMeasurement, CodeSchemaMissing: KindFinding,
			CodeUndescribedParameter: KindFinding,
		},
		score:        scoreSchemaCompleteness,
		contractOnly: true,
	},
	"description_coverage": {
		emits:        map[string]Kind{CodeDescriptionCoverage: KindMeasurement, CodeDescriptionMissing: KindFinding},
		score:        scoreDescriptionCoverage,
		contractOnly: true,
	},
	"action_safety": {
		emits: map[string]Kind{
			CodeAnnotationAbsent: KindFinding, CodeAnnotationContradiction: KindFinding,
			CodeToolDestructive: KindFinding,
		},
		score:        scoreActionSafety,
		contractOnly: true,
	},
	DimensionEgress: {
		emits: map[string]Kind{
			CodeDNSLookup: KindFinding, CodeEgressAttempt: KindFinding,
			CodeEgressLiteralIP: KindFinding, CodeBeacon: KindFinding,
		},
		score: scoreEgress,
	},
	DimensionExfiltration: {
		emits: map[string]Kind{CodeCanaryExfiltration: KindFinding},
		score: scoreExfiltration,
	},
	DimensionSecretHandling: {
		emits: map[string]Kind{CodeFileSensitiveWrite: KindFinding},
		score: scoreSecretHandling,
	},
	DimensionExecutionSafety: {
		emits: map[string]Kind{
			CodeFileWrite: KindFinding, CodeProcessSpawn: KindFinding, CodeProcessShell: KindFinding,
			CodeProcessNetworkTool: KindFinding, CodeProcessPackageManager: KindFinding,
			CodeObserverIncomplete: KindFinding, CodeDiskFilled: KindFinding,
		},
		since: map[string]string{CodeDiskFilled: "6"},
		score: scoreExecutionSafety,
	},
	// The supply-chain probes (supply.go) run whatever the gate decided,
	// so that each observed signal's findings are reported.
	DimensionVulnerability: {
		emits:   map[string]Kind{CodeOSVVulnerable: KindFinding, CodeOSVUnverified: KindFinding},
		until:   map[string]string{CodeOSVUnverified: unverifiedUntil},
		graded:  map[string]bool{CodeOSVVulnerable: true},
		needs:   []string{evidence.SignalOSV},
		observe: scoreVulnerability,
	},
	DimensionMalware: {
		emits: map[string]Kind{
			CodeOSVMalware: KindFinding, CodeSocketMalware: KindFinding, CodeSocketAlert: KindFinding,
			CodeSocketUnverified: KindFinding,
		},
		until:   map[string]string{CodeSocketUnverified: unverifiedUntil},
		graded:  map[string]bool{CodeSocketAlert: true},
		needs:   []string{evidence.SignalSocket, evidence.SignalOSV},
		observe: scoreMalware,
	},
	DimensionProvenance: {
		emits: map[string]Kind{
			CodeRegistryNoRepository: KindFinding, CodeRegistryRepositoryUnparseable: KindFinding,
			CodeRegistryNoProvenance: KindFinding, CodeRegistryMCPNameAbsent: KindFinding,
			CodeRegistryMCPNameMismatch: KindFinding, CodeGitHubNotFound: KindFinding,
			CodeGitHubDisabled: KindFinding, CodeGitHubRenamed: KindFinding,
			CodeDNSSECNXDomain: KindFinding, CodeDNSSECDanglingCNAME: KindFinding,
			CodeDNSSECBogus: KindFinding, CodeDNSSECUnsigned: KindFinding,
			CodeDNSSECIndeterminate: KindFinding, CodeDNSSECUnverified: KindFinding,
		},
		graded: map[string]bool{CodeDNSSECNXDomain: true},
		until:  map[string]string{CodeDNSSECUnverified: unverifiedUntil},
		// The DNSSEC codes are emitted only where the dimension names
		// the dnssec signal (rubric v4 on); the probe then also reads it.
		withSignal: map[string]string{
			CodeDNSSECNXDomain: evidence.SignalDNSSEC, CodeDNSSECDanglingCNAME: evidence.SignalDNSSEC,
			CodeDNSSECBogus: evidence.SignalDNSSEC, CodeDNSSECUnsigned: evidence.SignalDNSSEC,
			CodeDNSSECIndeterminate: evidence.SignalDNSSEC, CodeDNSSECUnverified: evidence.SignalDNSSEC,
		},
		needs:   []string{evidence.SignalRegistryMeta, evidence.SignalGitHub},
		observe: scoreProvenance,
	},
	DimensionMaintenance: {
		emits: map[string]Kind{
			CodeRegistryDeprecated: KindFinding, CodeRegistryRecentPublish: KindFinding,
			CodeRegistryNewPackage: KindFinding, CodeRegistryRapidRelease: KindFinding,
			CodeGitHubArchived: KindFinding, CodeGitHubStale: KindFinding,
			CodeRegistryYanked: KindFinding,
		},
		since:   map[string]string{CodeRegistryYanked: pypiSince},
		needs:   []string{evidence.SignalRegistryMeta, evidence.SignalGitHub},
		observe: scoreMaintenance,
	},
	// The surface-poisoning probes of rubric v5 (integrity.go, clarity.go).
	DimensionPromptIntegrity: {
		// Not contractOnly: the findings may be those the bundle stored.
		emits: integrityEmits(),
		since: map[string]string{checks.CodeCapabilityConfig: "11"},
		score: scorePromptIntegrity,
	},
	DimensionCapabilityClarity: {
		emits: map[string]Kind{
			CodeJudgeInjection: KindFinding, CodeJudgeExfiltration: KindFinding, CodeJudgeConcealment: KindFinding,
			CodeJudgeShadowing: KindFinding, CodeJudgeCredentialRequest: KindFinding, CodeJudgeSensitiveAccess: KindFinding,
			CodeJudgeMismatch: KindFinding, CodeJudgeUnverified: KindFinding,
		},
		until: map[string]string{CodeJudgeUnverified: unverifiedUntil},
		// It runs whatever the gate decided, to report a judge that was
		// not consulted.
		needs:   []string{evidence.SignalJudge},
		observe: scoreCapabilityClarity,
	},
	// Contract drift (drift.go), from rubric v8: since the pin and within
	// the session.
	DimensionContractDrift: {
		emits:   driftEmits(),
		needs:   []string{evidence.SignalSession, evidence.SignalDrift},
		observe: observeDrift,
	},
}

// Install outcomes as the sandbox records them.
const (
	installOK      = evidence.InstallOK
	installFailed  = evidence.InstallFailed
	installTimeout = evidence.InstallTimeout
	stepScripts    = evidence.StepScripts
)

func scoreInstallability(p *probe) verdict {
	in := p.b.Install
	if in == nil {
		return zeroPoint("install signal is observed but the bundle holds no install evidence")
	}
	ig := in.Integrity
	compared := ig.Computed != "" || ig.Lockfile != ""
	mismatch := !ig.Match && ig.Expected != "" && compared
	// What was hashed: npm's tarball against dist.integrity; for PyPI
	// (v10 on) the one file installed for the target, a wheel or the
	// sdist, against the sha256 the index lists for it.
	file, against := "tarball", "the registry's integrity"
	if p.readsPyPI() {
		file, against = "distribution file (the wheel or sdist installed for the target)", "the sha256 the index lists for it"
	}
	if mismatch {
		p.emit(CodeIntegrityMismatch, p.b.Target.Name,
			"the installed "+file+" does not match "+against+" for this version",
			p.clip(fmt.Sprintf("expected %s; computed %s; lockfile %s", orNone(ig.Expected), orNone(ig.Computed), orNone(ig.Lockfile))))
	}
	tampered := p.archiveEscapes(in) + p.treeModified(in)
	switch in.Outcome {
	case installOK:
		switch {
		case tampered > 0:
			return scored(0, "installed, but "+plural(tampered, "finding")+" show the tree leaving or changing the directory it was installed into")
		case ig.Match:
			return scored(100, "installed; integrity matched")
		case mismatch && p.readsPyPI():
			return scored(0, "installed, but the distribution file's sha256 does not match the index")
		case mismatch:
			return scored(0, "installed, but the tarball's integrity does not match the registry")
		default:
			p.unverified(CodeIntegrityUnverified, p.b.Target.Name,
				"the install succeeded but the "+file+"'s integrity was not verified",
				p.clip(fmt.Sprintf("expected %s; computed %s; lockfile %s", orNone(ig.Expected), orNone(ig.Computed), orNone(ig.Lockfile))))
			return scored(0, "installed, but integrity was not verified")
		}
	case installFailed:
		msg := fmt.Sprintf("the install failed at the %s step", orUnknown(in.FailedStep))
		if p.atLeast(limitsSince) && in.Error != "" {
			// From v11 what remains after the sandbox's limits is the
			// package's own failure: say which.
			msg += ": " + p.clip(firstLine(in.Error))
		}
		p.emit(CodeInstallFailed, p.b.Target.Name, msg, p.installEvidence(in))
		return scored(0, fmt.Sprintf("install failed at the %s step", orUnknown(in.FailedStep)))
	case installTimeout:
		msg := fmt.Sprintf("the install timed out at the %s step", orUnknown(in.FailedStep))
		if ms := p.b.Sandbox.Limits.InstallTimeoutMS; p.atLeast(limitsSince) && ms > 0 {
			msg = fmt.Sprintf("the install did not finish within the sandbox's limit of %s, at the %s step (scripts run with no network); "+
				"what it was waiting for is not known", seconds(ms), orUnknown(in.FailedStep))
		}
		p.emit(CodeInstallTimeout, p.b.Target.Name, msg, p.installEvidence(in))
		return scored(0, fmt.Sprintf("install timed out at the %s step", orUnknown(in.FailedStep)))
	case evidence.InstallOOM:
		if !p.atLeast("6") {
			return zeroPoint(fmt.Sprintf("install outcome %q is not one this rubric knows", in.Outcome))
		}
		p.emit(CodeInstallOOM, p.b.Target.Name, orUnknown(in.Error), p.installEvidence(in))
		return scored(0, "a lifecycle script was killed for memory")
	default:
		return zeroPoint(fmt.Sprintf("install outcome %q is not one this rubric knows", in.Outcome))
	}
}

func (p *probe) installEvidence(in *evidence.Install) string {
	parts := []string{"step: " + orUnknown(in.FailedStep)}
	if in.Error != "" {
		parts = append(parts, "error: "+p.clip(in.Error))
	}
	if in.LogTail != "" {
		parts = append(parts, "log: "+p.tail(in.LogTail))
	}
	return strings.Join(parts, "; ")
}

func scoreInstallScripts(p *probe) verdict {
	in := p.b.Install
	if in == nil {
		return zeroPoint("install signal is observed but the bundle holds no install evidence")
	}
	pypi := p.readsPyPI()
	if in.Outcome != installOK && in.FailedStep != stepScripts {
		before := "before lifecycle scripts ran; there is no script evidence"
		if pypi {
			before = "before any sdist was built; there is no build evidence"
		}
		return zeroPoint(fmt.Sprintf("the install %s at the %s step, %s", in.Outcome, orUnknown(in.FailedStep), before))
	}
	v6 := p.atLeast("6")
	failed, ran, optional := 0, 0, 0
	var denied []string
	for _, s := range in.Scripts {
		if s.Ran {
			ran++
		}
		switch {
		case pypi && s.Event == "metadata" && p.atLeast(installNamedSince) && builtAlso(in.Scripts, s.Package):
			// The metadata step built the sdist before the build step
			// built it again: one sdist, one finding (v12).
		case pypi:
			// A PyPI tree's install-time code is the build backend of
			// each sdist that had to be built; wheels run none.
			p.emit(CodeScriptsPresent, s.Package,
				fmt.Sprintf("%s is installed from its sdist, whose build backend runs code at install (%s)", p.pkgAt(s), s.Command),
				p.clip(s.Event+": "+s.Command))
		default:
			p.emit(CodeScriptsPresent, s.Package,
				fmt.Sprintf("%s declares lifecycle script %q", p.pkgAt(s), s.Event),
				p.clip(s.Event+": "+s.Command))
		}
		switch {
		case s.TimedOut:
			failed++
			p.emit(CodeScriptsFailed, s.Package,
				fmt.Sprintf("%s timed out", p.scriptOf(s)),
				p.scriptEvidence(s, "timed out"))
		case v6 && s.OOM:
			// pkg.install.oom, under installability, when npm would have
			// stopped; an optional package's is left out and told below.
			if s.Optional {
				optional++
				p.emit(CodeScriptsOptionalFailed, s.Package,
					fmt.Sprintf("%s, an optional dependency, was killed for memory; npm leaves the package out and goes on", p.scriptOf(s)),
					p.scriptEvidence(s, "killed for memory"))
			} else {
				failed++
			}
		case s.Ran && s.ExitCode != 0 && v6 && s.Optional:
			optional++
			p.emit(CodeScriptsOptionalFailed, s.Package,
				fmt.Sprintf("%s, an optional dependency, exited with code %d; npm leaves the package out and goes on", p.scriptOf(s), s.ExitCode),
				p.scriptEvidence(s, "exit code "+strconv.Itoa(s.ExitCode)))
		case s.Ran && s.ExitCode != 0 && v6 && s.Network != nil && s.Network.Attempts > 0:
			want := orUnknown(strings.Join(s.Network.Wanted, ", "))
			denied = append(denied, p.pkgAt(s)+" (wanted "+want+")")
			p.emit(CodeScriptsNetworkDenied, s.Package,
				fmt.Sprintf("%s exited with code %d after the sandbox denied it the network: it wanted %s; whether it works with a network is not known",
					p.scriptOf(s), s.ExitCode, want),
				p.scriptEvidence(s, fmt.Sprintf("exit code %d; %s", s.ExitCode, plural(s.Network.Attempts, "network attempt"))))
		case s.Ran && s.ExitCode != 0 && p.offlineFetch(s) != "":
			// npx or npm fetching a package from the script: the sandbox's
			// offline cache refuses it before any connection is tried.
			want := p.offlineFetch(s)
			denied = append(denied, p.pkgAt(s)+" (wanted "+want+")")
			p.emit(CodeScriptsNetworkDenied, s.Package,
				fmt.Sprintf("%s exited with code %d when npm, offline in the sandbox, could not fetch what it asked for: it wanted %s; whether it works with a network is not known",
					p.scriptOf(s), s.ExitCode, want),
				p.scriptEvidence(s, fmt.Sprintf("exit code %d; npm's fetch refused offline", s.ExitCode)))
		case s.Ran && s.ExitCode != 0:
			failed++
			msg := fmt.Sprintf("%s exited with code %d", p.scriptOf(s), s.ExitCode)
			if v6 {
				msg += " in the sandbox, which has no network and no C/C++ compiler"
				switch {
				case s.Network == nil && p.atLeast(aggregateSince) && p.scriptsWatched():
					msg += " (it tried no network while it was watched)"
				case s.Network == nil:
					msg += " (behaviour was not watched, so whether it tried the network is not known)"
				}
			}
			p.emit(CodeScriptsFailed, s.Package, msg, p.scriptEvidence(s, "exit code "+strconv.Itoa(s.ExitCode)))
		}
	}
	p.leftRunning(in)
	p.startupHooks(in)
	noun := "lifecycle script"
	if pypi {
		noun = "sdist build"
		if v, ok := pypiBuildVerdict(in, failed, ran, denied); ok {
			return v
		}
	}
	switch {
	case len(in.Scripts) == 0 && in.Outcome == installOK:
		return scored(100, "no lifecycle scripts in the installed tree")
	case failed > 0:
		return scored(0, fmt.Sprintf("%d of %s failed or timed out", failed, plural(len(in.Scripts), noun)))
	case in.Outcome != installOK:
		return scored(0, fmt.Sprintf("the script step %s", in.Outcome))
	case len(denied) > 0:
		return zeroPoint(fmt.Sprintf("%s failed after the sandbox denied it the network: %s; whether it works with a network is not known",
			plural(len(denied), noun), strings.Join(denied, "; ")))
	case optional > 0:
		return scored(50, fmt.Sprintf("%s present; none of a required package failed (%d of optional packages did, which npm leaves out)", plural(len(in.Scripts), noun), optional))
	case ran == len(in.Scripts):
		return scored(50, fmt.Sprintf("%s ran and exited 0", plural(len(in.Scripts), noun)))
	default:
		return scored(50, fmt.Sprintf("%s present; %d ran and exited 0, none failed", plural(len(in.Scripts), noun), ran))
	}
}

// builtAlso reports whether the scripts hold a build of the package (a
// PyPI sdist the build step built).
func builtAlso(scripts []evidence.Script, pkg string) bool {
	for _, s := range scripts {
		if s.Package == pkg && s.Event == "build" {
			return true
		}
	}
	return false
}

// scriptsWatched reports whether the bundle's behaviour evidence watched
// the script step.
func (p *probe) scriptsWatched() bool {
	if p.b.Behavior == nil {
		return false
	}
	for _, w := range p.b.Behavior.Watches {
		if w.Phase == evidence.PhaseScripts {
			return true
		}
	}
	return false
}

// deniedScripts lists the lifecycle scripts of required packages that
// failed after the sandbox denied them the network.
func (p *probe) deniedScripts(in *evidence.Install) []string {
	if in == nil {
		return nil
	}
	var out []string
	for _, s := range in.Scripts {
		if !s.Ran || s.ExitCode == 0 || s.Optional || s.TimedOut || s.OOM {
			continue
		}
		if s.Network != nil && s.Network.Attempts > 0 {
			out = append(out, fmt.Sprintf("%s (it wanted %s)", p.scriptOf(s), orUnknown(strings.Join(s.Network.Wanted, ", "))))
		} else if want := p.offlineFetch(s); want != "" {
			out = append(out, fmt.Sprintf("%s (it wanted %s)", p.scriptOf(s), want))
		}
	}
	return out
}

// reOfflineFetch: npm refusing a fetch in offline mode ("request to
// https://registry.npmjs.org/only-allow failed: cache mode is
// 'only-if-cached'", code ENOTCACHED).
var reOfflineFetch = regexp.MustCompile(`request to (https?://[^/\s]+)\S* failed: cache mode is 'only-if-cached'`)

// offlineFetch returns what a failed script asked npm to fetch when npm's
// offline cache refused it ("" when that is not why it failed, or under a
// rubric before v11, which read it as the script's own failure).
func (p *probe) offlineFetch(s evidence.Script) string {
	if !p.atLeast(limitsSince) {
		return ""
	}
	if m := reOfflineFetch.FindStringSubmatch(s.OutputTail); m != nil {
		return m[1]
	}
	if strings.Contains(s.OutputTail, "ENOTCACHED") {
		return "a package from the registry"
	}
	return ""
}

func (p *probe) scriptEvidence(s evidence.Script, how string) string {
	ev := s.Event + ": " + p.clip(s.Command) + "; " + how
	if s.OutputTail != "" {
		ev += "; output: " + p.tail(s.OutputTail)
	}
	return ev
}

// pkgAt names a script's package: name@version, or for PyPI the
// name==version a requirement would pin.
func (p *probe) pkgAt(s evidence.Script) string {
	if s.Version == "" {
		return s.Package
	}
	if p.readsPyPI() {
		return s.Package + "==" + s.Version
	}
	return s.Package + "@" + s.Version
}

// scriptOf names one install-time script: npm's "the postinstall script
// of x@1.0", PyPI's "the sdist build of x==1.0".
func (p *probe) scriptOf(s evidence.Script) string {
	if p.readsPyPI() {
		return "the sdist build of " + p.pkgAt(s)
	}
	return "the " + s.Event + " script of " + p.pkgAt(s)
}

func scoreSession(p *probe) verdict {
	s := p.b.Session
	if s == nil {
		return zeroPoint("session signal is observed but the bundle holds no session evidence")
	}
	var code, what string
	switch s.Outcome {
	case evidence.OutcomeOK:
		if late := lateDiscover(s); s.HandshakePath == evidence.HandshakeInitializeFallback && late != nil && p.atLeast("6") {
			// Slow, not silent: the answer came, after the probe's deadline.
			return scored(100, fmt.Sprintf("session established by the fallback initialize; the server answered server/discover %s after it was sent, past the probe's deadline", seconds(late.AfterMS)))
		}
		if s.HandshakePath == evidence.HandshakeInitializeFallback {
			p.emit(CodeDiscoverUnanswered, "",
				"the server gave no answer to server/discover; the session was established by a fallback initialize",
				"handshake path: "+s.HandshakePath)
			return scored(p.p.Session.DiscoverUnansweredScore, "session established after server/discover went unanswered")
		}
		return scored(100, "session established via "+orUnknown(s.HandshakePath))
	case evidence.OutcomeStartCrashed, evidence.OutcomeHandshakeTimeout, evidence.OutcomeProtocolError:
		if denied := p.deniedScripts(p.b.Install); p.atLeast("6") && len(denied) > 0 {
			msg := fmt.Sprintf("the session ended with %s after %s had failed when the sandbox denied it the network; the failure may follow from that, so it is not held against the package",
				s.Outcome, strings.Join(denied, " and "))
			p.emit(CodeSessionAfterDenied, "", msg, p.sessionEvidence(s))
			return zeroPoint(msg)
		}
	}
	switch s.Outcome {
	case evidence.OutcomeStartCrashed:
		code, what = CodeSessionStartCrashed, "the server exited before the handshake completed"
		if p.atLeast(limitsSince) {
			what = "the server exited" + exitText(s) + " before the handshake completed, and its output shows no configuration, network or memory the sandbox withheld"
		}
	case evidence.OutcomeHandshakeTimeout:
		code, what = CodeSessionHandshakeTimeout, "the server did not complete the handshake in time"
		if l := p.b.Sandbox.Limits; p.atLeast(limitsSince) && l.HandshakeTimeoutMS > 0 {
			what = fmt.Sprintf("the server did not complete the handshake within the sandbox's limit of %s, with %s and no network; its output does not say why",
				seconds(l.HandshakeTimeoutMS), cpusText(l.NanoCPUs))
		}
	case evidence.OutcomeProtocolError:
		code, what = CodeSessionProtocolError, "the server broke the MCP protocol during the handshake"
		if p.atLeast(limitsSince) && s.Error != "" {
			what += ": " + p.clip(firstLine(s.Error))
		}
	case evidence.OutcomeOOM:
		code, what = CodeSessionOOM, "the server was killed for exceeding the memory limit"
	default:
		return zeroPoint(fmt.Sprintf("session outcome %q is not one this rubric knows", s.Outcome))
	}
	p.emit(code, "", what, p.sessionEvidence(s))
	return scored(0, "session outcome "+string(s.Outcome))
}

// lateDiscover returns the late answer to server/discover, if one came.
func lateDiscover(s *evidence.Session) *evidence.LateAnswer {
	for i := range s.LateAnswers {
		if s.LateAnswers[i].Method == "server/discover" {
			return &s.LateAnswers[i]
		}
	}
	return nil
}

// sessionEvidence quotes how a failed session ended.
func (p *probe) sessionEvidence(s *evidence.Session) string {
	var parts []string
	if s.ExitCode != nil {
		parts = append(parts, "exit code "+strconv.Itoa(*s.ExitCode))
	}
	if s.OOMKilled {
		parts = append(parts, "oom killed")
	}
	if s.Error != "" {
		parts = append(parts, "error: "+p.clip(s.Error))
	}
	if s.StderrTail != "" {
		parts = append(parts, "stderr: "+p.tail(s.StderrTail))
	}
	if len(parts) == 0 {
		parts = append(parts, "outcome: "+string(s.Outcome))
	}
	return strings.Join(parts, "; ")
}

// maxTruncationFindings bounds the truncation findings of one session; the
// last one counts the rest.
const maxTruncationFindings = 10

// emitTruncations reports each cut the sandbox's bounds made, with its
// counts: what was kept is what every contract check ran over. A bundle
// recorded before cuts were itemised says only that the listing was cut.
func (p *probe) emitTruncations(s *evidence.Session) {
	if len(s.Truncations) == 0 {
		p.emit(CodeOutputTruncated, "", "the listing was cut short by the sandbox's bounds",
			fmt.Sprintf("stdout bytes %d; list %d ms", s.StdoutBytes, s.ListMS))
		return
	}
	for i, t := range s.Truncations {
		if i == maxTruncationFindings-1 && len(s.Truncations) > maxTruncationFindings {
			p.emit(CodeOutputTruncated, "", fmt.Sprintf("%d more cuts of what the server sent", len(s.Truncations)-i),
				fmt.Sprintf("%d cuts in all", len(s.Truncations)))
			return
		}
		subject, msg, ev := truncationText(t)
		p.emit(CodeOutputTruncated, subject, msg, p.clip(ev))
	}
}

// truncationText words one cut as a finding's subject, message and
// evidence.
func truncationText(t evidence.Truncation) (subject, msg, ev string) {
	kind := strings.TrimSuffix(strings.TrimPrefix(t.List, "resources/"), "/list")
	switch kind {
	case "templates":
		kind = "resource templates"
	case "list":
		kind = "resources"
	}
	switch {
	case t.Field != "":
		what := strings.TrimSuffix(kind, "s")
		subject = t.Item
		if t.Item == "" {
			what, subject = "server", t.List
		}
		msg = fmt.Sprintf("the %s of %s %q was %s bytes, longer than the sandbox keeps; the checks ran over what was kept", t.Field, what, t.Item, thousands(t.Bytes))
		if t.Kept > 0 {
			msg = fmt.Sprintf("the %s of %s %q was %s bytes; the first %s were kept and checked", t.Field, what, t.Item, thousands(t.Bytes), thousands(int64(t.Kept)))
		}
	case t.List == "stdout":
		subject, msg = "stdout", "the server wrote more to stdout than the sandbox reads; what came after the bound was not read"
	default:
		subject = t.List
		offered := "more than " + thousands(int64(t.Kept))
		if t.Offered > t.Kept {
			offered = thousands(int64(t.Offered))
		}
		if t.MorePages {
			offered = "at least " + offered + ", with more pages offered,"
		}
		msg = fmt.Sprintf("the server offered %s %s; the sandbox kept the first %s and the checks ran over those", offered, kind, thousands(int64(t.Kept)))
	}
	ev = t.Reason
	if t.Bytes > 0 && t.Field == "" {
		ev += fmt.Sprintf("; %s bytes", thousands(t.Bytes))
	}
	return subject, msg, ev
}

// thousands prints n with comma separators: 100,001.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func scoreProtocolHygiene(p *probe) verdict {
	s := p.b.Session
	if s == nil {
		return zeroPoint("session signal is observed but the bundle holds no session evidence")
	}
	// Findings are claims about what was observed and fire whatever the
	// outcome; the score needs a full session to mean anything.
	pp := p.p.ProtocolHygiene
	score := 100.0
	var notes []string
	if s.NonJSONLines > 0 {
		ev := plural(s.NonJSONLines, "line")
		if len(s.NonJSONSample) > 0 {
			ev += fmt.Sprintf("; first: %q", p.clip(s.NonJSONSample[0]))
		}
		p.emit(CodeStdoutNonJSON, "", fmt.Sprintf("the server wrote %s to stdout", plural(s.NonJSONLines, "non-JSON line")), ev)
		score -= pp.NonJSONPenalty
		notes = append(notes, plural(s.NonJSONLines, "non-JSON stdout line"))
	}
	methods := make([]string, 0, len(s.ListErrors))
	for m := range s.ListErrors {
		methods = append(methods, m)
	}
	sort.Strings(methods)
	failed, unsupported := 0, 0
	var limited []string
	for _, m := range methods {
		// From rubric v11 a list that failed for what the sandbox does not
		// give (the network, configuration) is not assessed, not a
		// finding.
		if pp.ListUnsupportedPenalty != nil {
			if why, ok := evidence.ListLimit(m, s.ListErrors[m]); ok {
				limited = append(limited, why)
				continue
			}
		}
		// From rubric v11 "Method not found" for a list method of a
		// declared capability is the method unsupported, a restatement of
		// the server's answer that clients handle, not a failed call.
		if pp.ListUnsupportedPenalty != nil && methodNotFound(s.ListErrors[m]) {
			unsupported++
			p.emit(CodeListUnsupported, m, fmt.Sprintf("the server declared the capability of %s but answered it with Method not found", m), p.clip(m+": "+s.ListErrors[m]))
			score -= *pp.ListUnsupportedPenalty
			continue
		}
		failed++
		p.emit(CodeListFailed, m, fmt.Sprintf("%s failed", m), p.clip(m+": "+s.ListErrors[m]))
		score -= pp.ListFailedPenalty
	}
	if failed > 0 {
		notes = append(notes, plural(failed, "failed list call"))
	}
	if unsupported > 0 {
		notes = append(notes, plural(unsupported, "declared list method")+" answered with Method not found")
	}
	for _, why := range limited {
		notes = append(notes, "not assessed: "+why)
	}
	if s.Truncated || len(s.Truncations) > 0 {
		p.emitTruncations(s)
		score -= pp.TruncatedPenalty
		notes = append(notes, "listing truncated")
	}
	if s.Outcome != evidence.OutcomeOK {
		return zeroPoint(fmt.Sprintf("session outcome %s; protocol hygiene is scored only for an established session", orUnknown(string(s.Outcome))))
	}
	if len(notes) == 0 {
		return scored(100, "stdout carried only JSON-RPC and every list call answered")
	}
	return scored(score, strings.Join(notes, "; "))
}

func scoreSpecRecency(p *probe) verdict {
	c := p.b.Contract
	if c == nil {
		return zeroPoint("contract signal is observed but the bundle holds no contract")
	}
	v := c.ProtocolVersion
	score, listed := p.p.SpecRecency.Scores[v]
	if !listed {
		score = p.p.SpecRecency.UnlistedScore
	}
	if score < 100 {
		p.emit(CodeSpecOutdated, "", "the negotiated protocol version "+strconv.Quote(v)+" is not a current revision",
			p.clip("protocol version "+strconv.Quote(v)))
	}
	return scored(score, "protocol version "+strconv.Quote(v))
}

// tools returns the listed tools, or a verdict when there are none to judge.
func (p *probe) tools() ([]contract.Tool, *verdict) {
	c := p.b.Contract
	if c == nil {
		v := zeroPoint("contract signal is observed but the bundle holds no contract")
		return nil, &v
	}
	if len(c.Tools) == 0 {
		v := dropped("not applicable: the server lists no tools")
		return nil, &v
	}
	return c.Tools, nil
}

func scoreSchemaCompleteness(p *probe) verdict {
	tools, v := p.tools()
	if v != nil {
		return *v
	}
	var sum float64
	missing := 0
	for _, t := range tools {
		sc := checkSchema(t.InputSchema)
		if !sc.object {
			missing++
			p.emit(CodeSchemaMissing, t.Name, fmt.Sprintf("tool %q has no object input schema", t.Name), p.clip(sc.problem))
			continue
		}
		if len(sc.lacking) > 0 {
			p.emit(CodeUndescribedParameter, t.Name,
				fmt.Sprintf("tool %q has %d of %s without a type or description", t.Name, len(sc.lacking), plural(sc.total, "parameter")),
				p.clip(strings.Join(sc.lacking, ", ")))
		}
		if sc.total == 0 {
			sum++
		} else {
			sum += float64(sc.complete) / float64(sc.total)
		}
	}
	pct := 100 * sum / float64(len(tools))
	p.measure(CodeSchemaCompleteness, "input schemas are "+formatScore(round1(pct))+"% complete over "+plural(len(tools), "tool"), pct)
	reason := "mean schema completeness over " + plural(len(tools), "tool")
	if missing > 0 {
		reason += fmt.Sprintf("; %d without an object schema", missing)
	}
	return scored(pct, reason)
}

// schemaCheck is what checkSchema learned about one input schema.
type schemaCheck struct {
	object          bool
	problem         string // why the schema is not an object schema
	total, complete int
	lacking         []string // "name (no description)", sorted by name
}

// checkSchema inspects an input schema. Keys are matched exactly, as JSON
// Schema keywords are case-sensitive; duplicate keys resolve as
// encoding/json resolves them, the last one winning.
func checkSchema(raw json.RawMessage) schemaCheck {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return schemaCheck{problem: "no input schema"}
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		if json.Valid(raw) {
			return schemaCheck{problem: "input schema is not a JSON object: " + string(raw)}
		}
		return schemaCheck{problem: "input schema is not valid JSON"}
	}
	typ, ok := top["type"]
	if !ok {
		return schemaCheck{problem: `input schema has no "type"`}
	}
	if s, ok := jsonString(typ); !ok || s != "object" {
		return schemaCheck{problem: `input schema "type" is ` + string(typ) + `, not "object"`}
	}
	sc := schemaCheck{object: true}
	props := top["properties"]
	if props == nil || string(props) == "null" {
		return sc
	}
	var list map[string]json.RawMessage
	if props[0] != '{' || json.Unmarshal(props, &list) != nil {
		return schemaCheck{problem: `input schema "properties" is not an object`}
	}
	for _, name := range slices.Sorted(maps.Keys(list)) {
		val := list[name]
		sc.total++
		var kw map[string]json.RawMessage
		if val[0] != '{' || json.Unmarshal(val, &kw) != nil {
			sc.lacking = append(sc.lacking, name+" (not a schema object)")
			continue
		}
		desc, _ := jsonString(kw["description"])
		described := strings.TrimSpace(desc) != ""
		typed := false
		for _, k := range []string{"type", "$ref", "anyOf", "oneOf", "allOf", "enum", "const"} {
			if _, ok := kw[k]; ok {
				typed = true
			}
		}
		var why string
		switch {
		case typed && described:
			sc.complete++
			continue
		case typed:
			why = " (no description)"
		case described:
			why = " (no type)"
		default:
			why = " (no type, no description)"
		}
		sc.lacking = append(sc.lacking, name+why)
	}
	return sc
}

// jsonString decodes a raw JSON value that is a string.
func jsonString(v json.RawMessage) (string, bool) {
	var s string
	if len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

func scoreDescriptionCoverage(p *probe) verdict {
	tools, v := p.tools()
	if v != nil {
		return *v
	}
	minChars := p.p.DescriptionCoverage.MinChars
	described := 0
	for _, t := range tools {
		d := strings.TrimSpace(t.Description)
		n := utf8.RuneCountInString(d)
		if n >= minChars {
			described++
			continue
		}
		p.emit(CodeDescriptionMissing, t.Name,
			fmt.Sprintf("tool %q has no description of at least %d characters", t.Name, minChars),
			p.clip(fmt.Sprintf("description (%d characters): %q", n, d)))
	}
	pct := 100 * float64(described) / float64(len(tools))
	p.measure(CodeDescriptionCoverage, strconv.Itoa(described)+" of "+plural(len(tools), "tool")+" described", pct)
	return scored(pct, strconv.Itoa(described)+" of "+plural(len(tools), "tool")+" with a description of at least "+strconv.Itoa(minChars)+" characters")
}

func scoreActionSafety(p *probe) verdict {
	tools, v := p.tools()
	if v != nil {
		return *v
	}
	ap := p.p.ActionSafety
	absent, contradictions := 0, 0
	skip := 0
	if p.r.action != nil {
		skip = p.r.action.sharedPrefix(tools)
	}
	for _, t := range tools {
		a := t.Annotations
		if a == nil {
			absent++
			p.emit(CodeAnnotationAbsent, t.Name,
				"tool "+strconv.Quote(t.Name)+" declares no annotations, so by the specification's defaults it is destructive and open-world",
				"annotations: none")
		}
		if t.ReadOnly() {
			if p.r.action != nil {
				if verb, field, text := p.r.action.contradiction(t, skip); verb != "" {
					contradictions++
					p.emit(CodeAnnotationContradiction, t.Name,
						fmt.Sprintf("tool %q claims readOnlyHint true, but its %s puts it to %q, which changes its environment, and its description does not say it writes nothing", t.Name, field, verb),
						p.clip(fmt.Sprintf("%s %q; readOnlyHint: true", field, text)))
				}
			} else if verb, field, text := p.writeVerb(t); verb != "" {
				contradictions++
				p.emit(CodeAnnotationContradiction, t.Name,
					fmt.Sprintf("tool %q claims readOnlyHint true, but its %s says %q", t.Name, field, verb),
					p.clip(fmt.Sprintf("%s %q; readOnlyHint: true", field, text)))
			}
		}
		if t.Destructive() {
			p.emit(CodeToolDestructive, t.Name, "tool "+strconv.Quote(t.Name)+" is destructive by its effective annotations", destructiveBasis(a))
		}
	}
	score := 100 - ap.ContradictionPenalty*float64(contradictions) - ap.AbsentSharePenalty*float64(absent)/float64(len(tools))
	return scored(score, strconv.Itoa(absent)+" of "+plural(len(tools), "tool")+" without annotations; "+plural(contradictions, "read-only contradiction"))
}

// writeVerb returns the first write verb among the tokens of the tool's
// name, title and annotation title, and where it was found.
func (p *probe) writeVerb(t contract.Tool) (verb, field, text string) {
	if verb = p.firstVerb(t.Name); verb != "" {
		return verb, "name", t.Name
	}
	if verb = p.firstVerb(t.Title); verb != "" {
		return verb, "title", t.Title
	}
	if t.Annotations != nil {
		if verb = p.firstVerb(t.Annotations.Title); verb != "" {
			return verb, "annotations title", t.Annotations.Title
		}
	}
	return "", "", ""
}

// firstVerb returns the first token of s that is a write verb, in lower
// case.
func (p *probe) firstVerb(s string) string {
	var found string
	var buf [32]byte
	eachToken(s, func(tok string) bool {
		if p.r.verbs == nil || len(tok) > len(buf) || !isASCII(tok) {
			// A rubric not built by Load, or a token no verb can match
			// without folding: compare one by one.
			for _, v := range p.p.ActionSafety.WriteVerbs {
				if strings.EqualFold(tok, v) {
					found = v
					return false
				}
			}
			return true
		}
		lower := buf[:len(tok)]
		for i := 0; i < len(tok); i++ {
			c := tok[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			lower[i] = c
		}
		if p.r.verbs[string(lower)] {
			found = string(lower)
			return false
		}
		return true
	})
	return found
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func destructiveBasis(a *contract.Annotations) string {
	readOnly := "readOnlyHint: false"
	if a != nil && a.ReadOnlyHint == nil {
		readOnly = "readOnlyHint: absent (specification default false)"
	}
	switch {
	case a == nil:
		return "annotations: none (specification default destructiveHint: true)"
	case a.DestructiveHint == nil:
		return readOnly + "; destructiveHint: absent (specification default true)"
	default:
		return readOnly + "; destructiveHint: true"
	}
}

// tokens splits an identifier or title into lower-case words.
func tokens(s string) []string {
	var out []string
	eachToken(s, func(tok string) bool {
		out = append(out, strings.ToLower(tok))
		return true
	})
	return out
}

// eachToken calls fn with each word of s, as a substring of s, until fn
// returns false: snake_case, kebab-case, camelCase, PascalCase, dotted and
// spaced names all split, and an acronym run stays one word ("HTTPRequest"
// is "HTTP", "Request"). It allocates nothing, as Evaluate runs it on
// every read-only tool.
func eachToken(s string, fn func(tok string) bool) {
	start := -1
	var prev rune
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		i += w
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			if start >= 0 && !fn(s[start:i-w]) {
				return
			}
			start, prev = -1, r
			continue
		}
		if start >= 0 && unicode.IsUpper(r) {
			next, _ := utf8.DecodeRuneInString(s[i:])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && unicode.IsLower(next)) {
				if !fn(s[start : i-w]) {
					return
				}
				start = i - w
			}
		}
		if start < 0 {
			start = i - w
		}
		prev = r
	}
	if start >= 0 {
		fn(s[start:])
	}
}

// plural writes a count and a noun, adding an s unless the count is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// methodNotFound reports whether a list call's recorded error is JSON-RPC's
// -32601, Method not found.
func methodNotFound(err string) bool {
	return strings.Contains(strings.ToLower(err), "method not found") || strings.Contains(err, "-32601")
}
