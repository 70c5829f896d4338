package rubric

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/verifymcp/verifymcp/contract/checks"
	"github.com/verifymcp/verifymcp/evidence"
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
			CodeSignatureInvalid: KindFinding,
		},
		since: map[string]string{CodeInstallOOM: "6", CodeArchivePathEscape: "12", CodeTreeModified: "12", CodeSignatureInvalid: shippedFrom},
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
			CodeToolDestructive: KindFinding, CodeToolReadOnlyWrite: KindFinding, CodeToolClosedWorldNet: KindFinding,
		},
		since:        map[string]string{CodeToolReadOnlyWrite: toolCallsFrom, CodeToolClosedWorldNet: toolCallsFrom},
		score:        scoreActionSafety,
		contractOnly: true,
		// From v13 it reads the tool calls too.
		contractOnlyUntil: toolCallsFrom,
	},
	DimensionEgress: {
		emits: map[string]Kind{
			CodeDNSLookup: KindFinding, CodeEgressAttempt: KindFinding,
			CodeEgressLiteralIP: KindFinding, CodeBeacon: KindFinding,
		},
		score: scoreEgress,
	},
	DimensionExfiltration: {
		emits: map[string]Kind{CodeCanaryExfiltration: KindFinding, CodeToolAddedRecipient: KindFinding},
		since: map[string]string{CodeToolAddedRecipient: toolCallsFrom},
		score: scoreExfiltration,
	},
	DimensionSecretHandling: {
		emits: map[string]Kind{CodeFileSensitiveWrite: KindFinding, CodeToolSecretToArgHost: KindFinding},
		since: map[string]string{CodeToolSecretToArgHost: toolCallsFrom},
		score: scoreSecretHandling,
	},
	DimensionExecutionSafety: {
		emits: map[string]Kind{
			CodeFileWrite: KindFinding, CodeProcessSpawn: KindFinding, CodeProcessShell: KindFinding,
			CodeProcessNetworkTool: KindFinding, CodeProcessPackageManager: KindFinding,
			CodeObserverIncomplete: KindFinding, CodeDiskFilled: KindFinding, CodeToolUndeclaredShell: KindFinding,
			CodeImageRootUser: KindFinding, CodeImageRequiresRoot: KindFinding,
		},
		since: map[string]string{
			CodeDiskFilled: "6", CodeToolUndeclaredShell: toolCallsFrom, CodeImageRootUser: shippedFrom,
			CodeImageRequiresRoot: requiresRootFrom,
		},
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
		since: map[string]string{checks.CodeCapabilityConfig: "11",
			CodeToolResultInjection: toolCallsFrom, CodeToolRequestInjection: toolCallsFrom},
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
		since:   map[string]string{CodeSurfaceUndeclared: shippedFrom, CodeSurfaceUnserved: shippedFrom},
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
		case p.signatureInvalid():
			return scored(0, "prepared, but the "+p.b.Shipped.Kind+"'s signature does not verify over its content")
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
