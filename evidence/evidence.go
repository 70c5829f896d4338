// Package evidence holds what a scan observed: the four signal states, the
// evidence bundle and its JSON form. It does no I/O; every other package
// reads or writes these types, and scoring is a pure function of a Bundle and
// a rubric.
package evidence

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/verifymcp/verifymcp/contract"
)

// SchemaVersion identifies the JSON form of Bundle. It changes whenever a
// field changes meaning, so stored bundles can be read by the right code.
const SchemaVersion = "verifymcp.evidence/v1"

// State is what happened to one signal during a run. The four states are
// kept apart on purpose: a signal that did not run is never reported as
// clean.
type State string

const (
	// StateObserved means the check ran and answered, including "found nothing".
	StateObserved State = "observed"
	// StateUnavailable means a third party did not answer or no credential was configured.
	StateUnavailable State = "unavailable"
	// StateError means our own check failed.
	StateError State = "error"
	// StateNotAssessed means the check was deliberately not run.
	StateNotAssessed State = "not_assessed"
)

// Valid reports whether s is one of the four states.
func (s State) Valid() bool {
	switch s {
	case StateObserved, StateUnavailable, StateError, StateNotAssessed:
		return true
	default:
		return false
	}
}

// Signal names used by the collectors. A name is stable: rubrics refer to it.
const (
	SignalRegistry = "registry"        // registry metadata and version resolution
	SignalInstall  = "sandbox.install" // fetch step and script step
	SignalSession  = "sandbox.session" // run phase: start-up and MCP handshake
	SignalContract = "contract"        // the listed tool surface
	SignalOSV      = "osv"
	SignalSocket   = "socket"
	SignalGitHub   = "github"
	SignalDNSSEC   = "dnssec"
	SignalJudge    = "judge"
	SignalBehavior = "sandbox.behavior"
	SignalDrift    = "drift" // the contract compared with its identity's pin
)

// Signal is the state of one evidence source during a run.
type Signal struct {
	State State `json:"state"`
	// Reason says why a signal is not observed, or qualifies an observation.
	Reason string `json:"reason,omitempty"`
	// ThirdParty marks signals answered by someone other than this program.
	ThirdParty bool `json:"third_party"`
	// DurationMS is how long the collector ran; 0 when it did not run.
	DurationMS int64 `json:"duration_ms"`
	// Endpoint is the base URL a third-party signal was asked at (never a
	// credential), FetchedAt when the answer was fetched (earlier than the
	// run when it came from the cache), Cached whether it came from the
	// cache, and Authenticated whether a credential was sent.
	Endpoint      string     `json:"endpoint,omitempty"`
	FetchedAt     *time.Time `json:"fetched_at,omitempty"`
	Cached        bool       `json:"cached,omitempty"`
	Authenticated bool       `json:"authenticated,omitempty"`
}

// Bundle is the immutable evidence of one run against one target. It holds
// everything scoring needs, so a stored bundle can be rescored under any
// rubric without re-running anything.
type Bundle struct {
	SchemaVersion string             `json:"schema_version"`
	Run           Run                `json:"run"`
	Target        Target             `json:"target"`
	Sandbox       Sandbox            `json:"sandbox"`
	Signals       map[string]Signal  `json:"signals"`
	Install       *Install           `json:"install"`
	Session       *Session           `json:"session"`
	Contract      *contract.Contract `json:"contract"`
	// Behavior is what the package did while it was watched; nil when the
	// behaviour signal was not observed.
	Behavior *Behavior `json:"behavior,omitempty"`
	// Supply holds the supply-chain signals; each part is nil when its
	// signal was not observed (the signal says why).
	Supply *Supply `json:"supply,omitempty"`
	// Judge is the LLM judge's verdict on the tool surface; nil when the
	// judge signal was not observed.
	Judge *JudgeResult `json:"judge,omitempty"`
	// ContractChecks are the deterministic contract checks' findings on
	// Contract, as the checks of their version reported them when the run
	// was recorded. A rubric that pins those checks scores them as stored;
	// one that pins other checks runs its own over Contract. Nil when the
	// bundle holds no contract, and in bundles recorded before the checks
	// were stored.
	ContractChecks *ContractChecks `json:"contract_checks,omitempty"`
	// Masking says which secrets were masked in this evidence, before it
	// was stored, and where: every known secret (the --env values, the
	// canaries, the operator's third-party keys) and anything shaped like a
	// credential is replaced by a marker that names it. Nil in bundles
	// recorded before masking was recorded.
	Masking []Masking `json:"masking,omitempty"`
	// Drift is Contract compared with the pin of its server identity; nil
	// when it was not compared (signal drift says why).
	Drift *Drift `json:"drift,omitempty"`
}

// Relist is the server's surface listed a second time, after the idle
// watch, in the session that listed Contract.
type Relist struct {
	// AfterMS is how long after the first listing ended the second began.
	AfterMS int64 `json:"after_ms"`
	// SchemaHash is the second listing's schema hash; empty when it failed.
	SchemaHash string `json:"schema_hash,omitempty"`
	// Contract is the second listing, kept only when its schema hash
	// differs from the first's.
	Contract *contract.Contract `json:"contract,omitempty"`
	// Changes are the classified changes from the first listing to the
	// second: a surface that changed after start-up, within one session.
	Changes []contract.Change `json:"changes"`
	// ListChanged counts the notifications/tools/list_changed (and
	// prompts, resources) the server sent before the second listing: a
	// hint, never relied on.
	ListChanged int `json:"list_changed,omitempty"`
	// Error says why the second listing failed (the server exited, a list
	// call failed); Changes are then empty.
	Error string `json:"error,omitempty"`
	// Superseded are description changes whose new text trips contract
	// checks the first listing's did not; those checks' findings are in
	// the bundle's ContractChecks, marked as the relisting's.
	Superseded []SupersededChange `json:"superseded,omitempty"`
}

// Drift is a run's contract compared with the pin of its server identity:
// the package (ecosystem and name), the server arguments and the names of
// the placeholder environment it was started with.
type Drift struct {
	// Identity is the identity's key (see store.IdentityKey).
	Identity string `json:"identity"`
	// FirstScan is set when the identity had no pin: this run became its
	// pin, trust on first use, which is no statement that the server was
	// honest then. Baseline is then nil and Changes empty.
	FirstScan bool `json:"first_scan,omitempty"`
	// Baseline is the pinned run compared with.
	Baseline *Baseline `json:"baseline,omitempty"`
	// Changes are the classified changes from the baseline's contract to
	// this run's; empty, never nil, when nothing moved.
	Changes []contract.Change `json:"changes"`
	// Superseded are description changes left out of Changes because the
	// new text trips a contract check the old did not: that check's
	// finding on this contract is the claim, not a drift kind.
	Superseded []SupersededChange `json:"superseded,omitempty"`
}

// Baseline is the pin a run was compared with.
type Baseline struct {
	RunID      string    `json:"run_id"`
	RunDate    time.Time `json:"run_date"`
	Version    string    `json:"version"`
	SchemaHash string    `json:"schema_hash"`
	// PinnedBy and PinnedAt say who made it the baseline and when: "first
	// scan (trust on first use)" or the operator who accepted it.
	PinnedBy string    `json:"pinned_by"`
	PinnedAt time.Time `json:"pinned_at"`
}

// SupersededChange is a description change whose new text trips
// contract checks the old text did not.
type SupersededChange struct {
	Subject string   `json:"subject"`
	Codes   []string `json:"codes"`
}

// ContractChecks is what one version of the deterministic contract checks
// (judge/checks) found on a contract.
type ContractChecks struct {
	// Version and Digest identify the checks (checks.Version,
	// checks.Digest: "sha256:" and 64 hex digits).
	Version string `json:"version"`
	Digest  string `json:"digest"`
	// Findings are the checks' findings in contract order; empty, never
	// nil, when they found nothing.
	Findings []CheckFinding `json:"findings"`
}

// CheckFinding is one finding of the contract checks: a reason code about
// a part of the contract, with the text it quotes.
type CheckFinding struct {
	Code     string `json:"code"`
	Severity string `json:"severity"`
	// Kind and Subject name the part of the contract (a tool, prompt,
	// resource, template or the server), Field the text within it.
	Kind     string `json:"kind"`
	Subject  string `json:"subject"`
	Field    string `json:"field"`
	Evidence string `json:"evidence"`
	Decoded  string `json:"decoded,omitempty"`
	Message  string `json:"message"`
	// Listing is "relist" for a finding on the second listing of the
	// session (see Relist) that the first listing did not have; empty for
	// the first listing's.
	Listing string `json:"listing,omitempty"`
}

// Masking is one kind of secret masked in a bundle.
type Masking struct {
	// Marker is what replaced it: [secret:env:NAME], [secret:key:socket],
	// [canary:github_token], [secret:shape:<gitleaks rule>].
	Marker string `json:"marker"`
	// Count is how many times it was masked, Where how many times in each
	// part of the evidence (contract, session, install.scripts, ...).
	Count int            `json:"count"`
	Where map[string]int `json:"where"`
}

// Signal returns the named signal. A signal that was never recorded comes
// back as an error state with a reason, because a missing signal must never
// read as observed.
func (b *Bundle) Signal(name string) Signal {
	s, ok := b.Signals[name]
	if !ok {
		return Signal{State: StateError, Reason: "signal not recorded in this bundle"}
	}
	return s
}

// Run identifies one execution of the scanner.
type Run struct {
	ID   string    `json:"id"`
	Date time.Time `json:"date"`
	Tool Tool      `json:"tool"`
	// Recollected is set on a run made by `rescore --recollect`: it carries
	// over the evidence of an earlier run (its date and tool included) and
	// holds only the listed signals collected again.
	Recollected *Recollection `json:"recollected,omitempty"`
}

// Recollection says which run a derived run carries over, and which of its
// signals were collected again, when and by which tool.
type Recollection struct {
	From    string    `json:"from"`
	Signals []string  `json:"signals"`
	At      time.Time `json:"at"`
	Tool    Tool      `json:"tool"`
}

// Tool names the program that produced a bundle.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Target is the exact artefact that was scanned.
type Target struct {
	Ecosystem string `json:"ecosystem"`
	Name      string `json:"name"`
	Version   string `json:"version"`
	// Requested is the target as the user wrote it ("npm:x@latest").
	Requested string `json:"requested"`
	// Source is "registry" or "file".
	Source string `json:"source"`
	// Integrity is the registry's dist.integrity (or, for a file, the
	// integrity computed from it), in SRI form.
	Integrity string `json:"integrity"`
	Tarball   string `json:"tarball,omitempty"`
	Purl      string `json:"purl"`
	// PublishedAt is the registry's publish time of the exact version.
	PublishedAt *time.Time `json:"published_at,omitempty"`
	Registry    string     `json:"registry,omitempty"`
	// Args are the server arguments given with --arg.
	Args []string `json:"args"`
	// EnvNames are the names of variables given with --env; values are never stored.
	EnvNames []string `json:"env_names"`
	// Bin is the entry point that was started, and the rule that chose it.
	Bin *Bin `json:"bin,omitempty"`
	// MCPRegistry is set when the target was named by its name in the
	// MCP registry: the entry it resolved through.
	MCPRegistry *MCPRegistryEntry `json:"mcp_registry,omitempty"`
}

// MCPRegistryEntry is the MCP registry entry (server.json) a target was
// resolved through.
type MCPRegistryEntry struct {
	Name     string `json:"name"`
	Version  string `json:"version"` // the server.json version
	Registry string `json:"registry"`
	Status   string `json:"status,omitempty"`
	// Package is the package of the entry that was scanned.
	Package string `json:"package"`
	// MCPName is the mcpName the package's own package.json declares, and
	// MCPNameMatches whether it is the entry's name (the registry's proof
	// that the package's publisher claimed the name).
	MCPName        string   `json:"mcp_name"`
	MCPNameMatches bool     `json:"mcp_name_matches"`
	Notes          []string `json:"notes,omitempty"`
	// Unfixed are the entry's arguments whose value is not fixed (they
	// were not passed).
	Unfixed []string `json:"unfixed,omitempty"`
}

// NoteMCPNameUnknown begins the note of an entry whose PyPI release's
// description could not be read: whether it claims the entry's name is
// unknown, never taken for a missing claim.
const NoteMCPNameUnknown = "whether the release's description claims the entry's name (its mcp-name marker) is unknown"

// Bin is the entry point of an npm package.
type Bin struct {
	Name string `json:"name"`
	Path string `json:"path"`
	Rule string `json:"rule"`
}

// Outcome is the overall outcome of the sandboxed part of a scan.
type Outcome string

// Sandbox outcomes, one per way a scan can end.
const (
	OutcomeOK               Outcome = "ok"
	OutcomeInstallFailed    Outcome = "install_failed"
	OutcomeInstallTimeout   Outcome = "install_timeout"
	OutcomeStartCrashed     Outcome = "start_crashed"
	OutcomeHandshakeTimeout Outcome = "handshake_timeout"
	OutcomeProtocolError    Outcome = "protocol_error"
	OutcomeOOM              Outcome = "oom"
)

// Sandbox describes the container environment of a run.
type Sandbox struct {
	Image         string  `json:"image"`
	ImageDigest   string  `json:"image_digest"`
	EngineVersion string  `json:"engine_version"`
	APIVersion    string  `json:"api_version"`
	Outcome       Outcome `json:"outcome"`
	Limits        Limits  `json:"limits"`
	// CABundle is the SHA-256 of the CA bundle trusted by the fetch step, or empty.
	CABundle string `json:"ca_bundle_sha256,omitempty"`
}

// Limits are the resource limits of the run phase.
type Limits struct {
	MemoryBytes        int64 `json:"memory_bytes"`
	NanoCPUs           int64 `json:"nano_cpus"`
	Pids               int64 `json:"pids"`
	InstallTimeoutMS   int64 `json:"install_timeout_ms"`
	HandshakeTimeoutMS int64 `json:"handshake_timeout_ms"`
	// TreeBytes, HomeBytes and TmpBytes bound what package code can keep
	// in the installed tree (while its lifecycle scripts run), in its home
	// directory and in /tmp (v6; zero in older bundles).
	TreeBytes int64 `json:"tree_bytes,omitempty"`
	HomeBytes int64 `json:"home_bytes,omitempty"`
	TmpBytes  int64 `json:"tmp_bytes,omitempty"`
}

// Install outcomes and steps (Install.Outcome, Install.FailedStep).
const (
	InstallOK      = "ok"
	InstallFailed  = "failed"
	InstallTimeout = "timeout"
	// InstallOOM: a lifecycle script (of a package npm would not leave
	// out) was killed for exceeding the script step's memory limit.
	InstallOOM  = "oom"
	StepFetch   = "fetch"
	StepScripts = "scripts"
)

// Install is the evidence of the install phase: the fetch step (network to
// the registry only, no package code) and the script step (lifecycle
// scripts, no network).
type Install struct {
	// Outcome is "ok", "failed" or "timeout".
	Outcome string `json:"outcome"`
	// FailedStep is "fetch" or "scripts" when Outcome is not "ok".
	FailedStep string `json:"failed_step,omitempty"`
	Error      string `json:"error,omitempty"`
	FetchMS    int64  `json:"fetch_ms"`
	ScriptsMS  int64  `json:"scripts_ms"`
	// LogTail is the end of npm's output of the failed step.
	LogTail   string    `json:"log_tail,omitempty"`
	Integrity Integrity `json:"integrity"`
	// LockfileSHA256 names package-lock.json as npm wrote it. The lockfile
	// itself is kept beside the bundle as a content-addressed artefact (it
	// can be large, and scoring never reads it).
	LockfileSHA256 string `json:"lockfile_sha256,omitempty"`
	// Packages is the number of packages in the installed tree, root excluded.
	Packages int `json:"packages"`
	// Scripts lists every lifecycle script declared in the installed tree.
	Scripts []Script `json:"scripts"`
	// TreeCache says whether the fetched tree came from the tree cache.
	TreeCache *TreeCache `json:"tree_cache,omitempty"`
	// DeclaredBins are the target's package.json bin entries.
	DeclaredBins map[string]string `json:"declared_bins,omitempty"`
	// DeclaredEngines is the target's package.json engines field.
	DeclaredEngines map[string]string `json:"declared_engines,omitempty"`
	// ArchiveEscapes lists the members of the tree's distribution files
	// whose path leaves the directory they are extracted into (a parent
	// component, an absolute path, a link pointing out), read from the
	// archives without extracting them, and such entries of a wheel's
	// RECORD. Nil when the archives were not read (npm, or a bundle
	// recorded before they were).
	ArchiveEscapes []ArchiveEscape `json:"archive_escapes,omitempty"`
	// StartupHooks lists what in the installed tree runs code whenever the
	// interpreter starts, before any program: .pth files with executable
	// (import) lines and sitecustomize or usercustomize modules (PyPI).
	// Nil when the tree was not read for them.
	StartupHooks []StartupHook `json:"startup_hooks,omitempty"`
	// TreeCheck is the check that the tree the server ran from is the one
	// the installer wrote (PyPI): digests of the installed files taken when
	// the installer ended, compared before the server started. Nil when
	// it was not made.
	TreeCheck *TreeCheck `json:"tree_check,omitempty"`
	// Python is the interpreter a PyPI target was installed and run on,
	// and why (absent from bundles recorded before it was chosen: those
	// ran on CPython 3.11).
	Python *Python `json:"python,omitempty"`
	// LearnedMetadata is, for a PyPI tree, the metadata of the sdists that
	// only their build backend could give: the metadata step built them
	// (their builds are in Scripts, event "metadata") and the resolution
	// used what they declared. The lockfile is what uv resolved with it.
	LearnedMetadata []LearnedMetadata `json:"learned_metadata,omitempty"`
}

// ArchiveEscape is one member of a distribution file whose path leaves
// the directory the archive is extracted into.
type ArchiveEscape struct {
	// Package and Version name the distribution; File is its file name.
	Package string `json:"package"`
	Version string `json:"version,omitempty"`
	File    string `json:"file"`
	// Member is the path as the archive (or its RECORD) writes it, clipped.
	Member string `json:"member"`
	// Where is "archive" (a member of the zip or tar) or "record" (a line
	// of the wheel's RECORD, which installers use to uninstall).
	Where string `json:"where"`
	// Why is "parent" (a .. component), "absolute" or "link" (a symbolic or
	// hard link whose target leaves the tree).
	Why string `json:"why"`
}

// StartupHook is one file of the installed tree that runs code whenever
// Python starts.
type StartupHook struct {
	// Path is relative to the venv's site-packages.
	Path string `json:"path"`
	// Kind is "pth" (a .pth file with an import line) or "sitecustomize"
	// or "usercustomize" (a module site imports at start-up).
	Kind string `json:"kind"`
	// Package is the distribution whose RECORD lists the file, when one
	// does.
	Package string `json:"package,omitempty"`
	// Line is the first executable line of a .pth file, clipped and
	// masked.
	Line string `json:"line,omitempty"`
}

// TreeCheck records the check of the installed tree before the server
// started.
type TreeCheck struct {
	// Files is how many files the digest covers; Digest is the sha256 of
	// the sorted list of their paths and sha256s, taken when the installer
	// ended.
	Files  int    `json:"files"`
	Digest string `json:"digest"`
	// Checked is the digest taken just before the server started; Match
	// says whether they are equal, and Changed lists (up to 20) the paths
	// that differ.
	Checked string   `json:"checked"`
	Match   bool     `json:"match"`
	Changed []string `json:"changed,omitempty"`
}

// Python records the sandbox's choice of interpreter for a PyPI target.
type Python struct {
	// Version is the CPython version used ("" when none fitted).
	Version string `json:"version,omitempty"`
	// RequiresPython is the release's Requires-Python ("" when none).
	RequiresPython string `json:"requires_python,omitempty"`
	// Offered lists the versions the sandbox offered, comma-separated.
	Offered string `json:"offered"`
	// Rule says why Version was chosen.
	Rule string `json:"rule"`
}

// LearnedMetadata is the core metadata an sdist's build gave, with no
// network, in the metadata step of round Round (from 1).
type LearnedMetadata struct {
	Package        string   `json:"package"`
	Version        string   `json:"version"`
	Filename       string   `json:"filename"`
	RequiresDist   []string `json:"requires_dist"`
	RequiresPython string   `json:"requires_python,omitempty"`
	Round          int      `json:"round"`
}

// TreeCache describes a reuse of an install tree fetched by an earlier run.
// The fetch step runs no package code, so the tree it leaves is a pure
// function of the exact version, the registry, the image and the fetch
// driver, which make up the key; lifecycle scripts always run afresh, on a
// copy.
type TreeCache struct {
	Key string `json:"key"`
	// Hit is true when this run reused the tree; false when it fetched it
	// and stored it for later runs.
	Hit bool `json:"hit"`
	// FetchedBy is the run that fetched the tree, and FetchedAt when.
	FetchedBy string    `json:"fetched_by"`
	FetchedAt time.Time `json:"fetched_at"`
}

// Integrity records the check of the tarball against the registry.
type Integrity struct {
	// Expected is dist.integrity from the registry.
	Expected string `json:"expected"`
	// Lockfile is what npm recorded for the target in the lockfile.
	Lockfile string `json:"lockfile"`
	// Computed is the sha512 of the tarball bytes, computed in the sandbox.
	Computed string `json:"computed"`
	Match    bool   `json:"match"`
}

// Script is one lifecycle script of one package in the installed tree.
type Script struct {
	Package string `json:"package"`
	Version string `json:"version"`
	// Path is the package's location in the tree (node_modules/x).
	Path    string `json:"path"`
	Event   string `json:"event"`
	Command string `json:"command"`
	Ran     bool   `json:"ran"`
	// Optional is set when the lockfile marks the package optional: npm
	// goes on when its script fails, and leaves the package out.
	Optional bool `json:"optional,omitempty"`
	// ExitCode is meaningful when Ran is true; Signal names the signal
	// that ended the script, if one did.
	ExitCode int    `json:"exit_code"`
	Signal   string `json:"signal,omitempty"`
	// TimedOut is set on the script that was running when the install
	// timeout passed; OOM when the kernel killed it for memory.
	TimedOut bool `json:"timed_out,omitempty"`
	OOM      bool `json:"oom,omitempty"`
	// LeftRunning is set when the script left processes running when it
	// ended; they were killed.
	LeftRunning bool   `json:"left_running,omitempty"`
	OutputTail  string `json:"output_tail,omitempty"`
	DurationMS  int64  `json:"duration_ms"`
	// Network is what the script tried to reach while it ran, from the
	// behaviour sink (nil when behaviour was not watched). The script
	// step has no route out: every attempt was answered by the sink.
	Network *ScriptNetwork `json:"network,omitempty"`
}

// ScriptNetwork is the network a lifecycle script tried to use.
type ScriptNetwork struct {
	// Attempts counts the DNS queries and connections.
	Attempts int `json:"attempts"`
	// Wanted lists the distinct names (or addresses) it looked up or
	// connected to, in the order first seen, at most 20.
	Wanted []string `json:"wanted"`
}

// Handshake paths, recording how the MCP session was established.
const (
	// HandshakeDiscover: the server answered server/discover.
	HandshakeDiscover = "discover"
	// HandshakeInitialize: server/discover was rejected with an error and
	// initialize followed on the same connection.
	HandshakeInitialize = "initialize"
	// HandshakeInitializeFallback: server/discover got no answer within the
	// probe deadline, and initialize (2025-11-25) was sent on a new session.
	HandshakeInitializeFallback = "initialize_fallback"
	// HandshakeDiscoverRetry: server/discover was answered with a result
	// only after the probe deadline, initialize on a new session failed,
	// and server/discover asked again established the session.
	HandshakeDiscoverRetry = "discover_retry"
)

// Session is the evidence of the run phase.
type Session struct {
	Outcome       Outcome `json:"outcome"`
	HandshakePath string  `json:"handshake_path,omitempty"`
	Error         string  `json:"error,omitempty"`
	// ExitCode is set when the server exited during the run phase.
	ExitCode  *int `json:"exit_code,omitempty"`
	OOMKilled bool `json:"oom_killed"`
	// StderrTail is the end of stderr, with secrets redacted.
	StderrTail string `json:"stderr_tail"`
	// NonJSONLines counts stdout lines that were not JSON-RPC messages.
	NonJSONLines int `json:"non_json_lines"`
	// NonJSONSample holds the first such lines, truncated.
	NonJSONSample []string `json:"non_json_sample"`
	StdoutBytes   int64    `json:"stdout_bytes"`
	// Truncated is set when a time or byte bound cut the listing short.
	Truncated   bool  `json:"truncated"`
	StartMS     int64 `json:"start_ms"`
	HandshakeMS int64 `json:"handshake_ms"`
	ListMS      int64 `json:"list_ms"`
	// ListErrors records list calls that failed, by method.
	ListErrors map[string]string `json:"list_errors,omitempty"`
	// Truncations are the cuts the sandbox's bounds made in what the
	// server sent (items beyond a list's bound, a field longer than the
	// text bound), each with its counts; what was kept is in the contract.
	Truncations []Truncation `json:"truncations,omitempty"`
	// LateAnswers are answers that came after the session that asked was
	// given up (server/discover answered after the probe deadline); they
	// were matched to their request by id and dropped. UnmatchedAnswers
	// counts answers that matched no request at all.
	LateAnswers      []LateAnswer `json:"late_answers,omitempty"`
	UnmatchedAnswers int          `json:"unmatched_answers,omitempty"`
	// Notifications counts the notifications the server sent, by method
	// (notifications/tools/list_changed among them).
	Notifications map[string]int `json:"notifications,omitempty"`
	// Relist is the second listing, made after the idle watch in the same
	// session, so that a surface that changes after start-up is seen; nil
	// when it was not made (the session failed, or the bundle predates it).
	Relist *Relist `json:"relist,omitempty"`
	// UnreadMessages counts the messages the server sent after the session
	// ended: read to the end of its output, but not examined (v6).
	UnreadMessages int `json:"unread_messages,omitempty"`
	// Shutdown is how the server's process was stopped and ended.
	Shutdown *Shutdown `json:"shutdown,omitempty"`
}

// Truncation is one cut a bound of the sandbox made in what the server
// sent.
type Truncation struct {
	// List is the method whose answer was cut: tools/list, prompts/list,
	// resources/list, resources/templates/list, or initialize.
	List string `json:"list"`
	// Item and Field name the field that was cut (a tool's description);
	// both are empty when the list itself was cut.
	Item  string `json:"item,omitempty"`
	Field string `json:"field,omitempty"`
	// Kept is how many items were kept, or for a field how many bytes;
	// Offered how many items the server sent, when that is known (0: not
	// known); MorePages is set when the server offered pages that were not
	// read.
	Kept      int  `json:"kept"`
	Offered   int  `json:"offered,omitempty"`
	MorePages bool `json:"more_pages,omitempty"`
	// Bytes is the size of what was cut: the field, or the whole answer.
	Bytes int64 `json:"bytes,omitempty"`
	// Reason names the bound.
	Reason string `json:"reason"`
}

// LateAnswer is an answer that came after its session was given up.
type LateAnswer struct {
	Method string `json:"method"`
	// AfterMS is how long after the request it came.
	AfterMS int64 `json:"after_ms"`
	// Error is the error the server answered with, empty for a result.
	Error string `json:"error,omitempty"`
}

// How the server's process ended (Shutdown.Ended).
const (
	// EndedBefore: it had exited before the shutdown began.
	EndedBefore = "exited_before_shutdown"
	// EndedStdinClose: it exited after its stdin was closed, as the MCP
	// stdio transport asks of a server.
	EndedStdinClose = "exited_on_stdin_close"
	// EndedTerm: it exited after SIGTERM.
	EndedTerm = "exited_on_sigterm"
	// EndedKill: it was killed with SIGKILL.
	EndedKill = "killed"
)

// Shutdown is how the server was stopped after the session, following the
// MCP stdio transport: close its stdin, wait, SIGTERM, wait, SIGKILL. The
// behaviour observers watch all the while.
type Shutdown struct {
	Ended    string `json:"ended"`
	ExitCode *int   `json:"exit_code,omitempty"`
	// StdinWaitMS is how long the server ran after its stdin was closed
	// (up to the grace), TermWaitMS after SIGTERM, KillWaitMS after
	// SIGKILL; a step not reached is 0.
	StdinWaitMS int64 `json:"stdin_wait_ms"`
	TermWaitMS  int64 `json:"term_wait_ms,omitempty"`
	KillWaitMS  int64 `json:"kill_wait_ms,omitempty"`
	// GraceMS is the configured wait after closing stdin and after SIGTERM.
	GraceMS int64 `json:"grace_ms"`
	// ServerExitMS is how long after its stdin was closed the server's own
	// process exited, as the tracer saw it. A process the server started
	// may outlive it (a watchdog that reports its end): the run then ends,
	// and the waits above are measured, when the last of them exits,
	// within the same grace periods; ExitCode stays the server's. Absent
	// when not traced, and in runs recorded before it existed.
	ServerExitMS *int64 `json:"server_exit_ms,omitempty"`
}

// Validate checks the invariants every stored bundle must satisfy.
func (b *Bundle) Validate() error {
	if b.SchemaVersion != SchemaVersion {
		return fmt.Errorf("evidence: schema version %q, want %q", b.SchemaVersion, SchemaVersion)
	}
	if b.Run.ID == "" || b.Run.Date.IsZero() {
		return fmt.Errorf("evidence: run id and date are required")
	}
	if b.Target.Name == "" || b.Target.Version == "" {
		return fmt.Errorf("evidence: target name and exact version are required")
	}
	if r := b.Run.Recollected; r != nil && (r.From == "" || r.From == b.Run.ID || len(r.Signals) == 0 || r.At.IsZero()) {
		return fmt.Errorf("evidence: a recollected run names the run it carries over (not itself), the signals collected again and when")
	}
	for name, s := range b.Signals {
		if !s.State.Valid() {
			return fmt.Errorf("evidence: signal %s has invalid state %q", name, s.State)
		}
	}
	if cc := b.ContractChecks; cc != nil {
		if cc.Version == "" || !strings.HasPrefix(cc.Digest, "sha256:") || len(cc.Digest) != len("sha256:")+64 || cc.Findings == nil {
			return fmt.Errorf("evidence: contract checks need a version, a sha256 digest and a findings list")
		}
		if b.Contract == nil {
			return fmt.Errorf("evidence: contract checks without a contract")
		}
	}
	return nil
}

// Decode parses a bundle and validates it.
func Decode(data []byte) (*Bundle, error) {
	var b Bundle
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("evidence: decode bundle: %w", err)
	}
	if err := b.Validate(); err != nil {
		return nil, err
	}
	return &b, nil
}

// Phases a behaviour event can belong to.
const (
	PhaseScripts = "scripts" // the script step of the install phase
	PhaseRun     = "run"     // the run phase: start-up, handshake, listing, idle
)

// Behavior is what a package did in the phases it was watched: network
// attempts seen by the sink, files changed in the home directory, processes
// spawned, and canary credentials seen leaving. Absence of events means
// nothing was seen in the time watched (Watches), never that nothing happened.
type Behavior struct {
	// Watches says, per phase, how long it was watched and whether each
	// observer worked for the whole phase.
	Watches []Watch `json:"watches"`
	// Canaries names the planted canary credentials (kind and where), never
	// their values.
	Canaries  []Canary       `json:"canaries"`
	Network   []NetEvent     `json:"network"`
	Files     []FileEvent    `json:"files"`
	Processes []ProcessEvent `json:"processes"`
	// Exfiltration lists canary values (or encodings of them) seen in
	// captured traffic or process arguments.
	Exfiltration []CanaryHit `json:"exfiltration"`
}

// Watch describes one watched phase.
type Watch struct {
	Phase string `json:"phase"`
	// WatchedMS is how long the phase was watched.
	WatchedMS int64 `json:"watched_ms"`
	// IdleMS is the part of the run phase watched after the listing ended,
	// with no request from us in flight.
	IdleMS int64 `json:"idle_ms"`
	// Sink, Tracer and Files say whether each observer covered the phase:
	// "ok", or why not ("died", "error: ...", "not_run").
	Sink   string `json:"sink"`
	Tracer string `json:"tracer"`
	Files  string `json:"files"`
	// Disk is what the phase kept in each of its bounded places (v6).
	Disk []DiskUse `json:"disk,omitempty"`
	// Dropped counts, by kind ("network", "process", "file"), the events
	// of the phase past the bound of what is kept: counted, and examined
	// for canaries where that applies, but not listed (v6).
	Dropped map[string]int `json:"dropped,omitempty"`
}

// Places a phase writes to, each bounded in size and files (DiskUse.Place).
const (
	PlaceTree = "tree" // the installed tree, writable by lifecycle scripts
	PlaceHome = "home"
	PlaceTmp  = "tmp"
)

// DiskUse is one bounded, writable place of a watched phase at the end of
// the phase.
type DiskUse struct {
	Place string `json:"place"`
	// BoundBytes and BoundFiles are the place's size and file-count bounds.
	BoundBytes int64 `json:"bound_bytes"`
	BoundFiles int64 `json:"bound_files"`
	// StartBytes is what the place held when package code started (the
	// installed tree, the seeded home); UsedBytes and UsedFiles what it
	// held at the end.
	StartBytes int64 `json:"start_bytes"`
	UsedBytes  int64 `json:"used_bytes"`
	UsedFiles  int64 `json:"used_files"`
	// Full is set when no room or no file was left: package code wrote
	// until the bound stopped it.
	Full bool `json:"full"`
}

// Canary is one planted credential, described without its value.
type Canary struct {
	Kind string `json:"kind"` // e.g. aws_secret_access_key, github_token
	// Where is "env:NAME" or "file:~/.aws/credentials".
	Where string `json:"where"`
}

// NetEvent is one network attempt seen by the sink.
type NetEvent struct {
	Phase string `json:"phase"`
	// Package is the package whose lifecycle script was running (script step).
	Package string    `json:"package,omitempty"`
	Time    time.Time `json:"time"`
	// AfterHandshake is set for run-phase events after the MCP listing ended.
	AfterHandshake bool `json:"after_handshake"`
	// Stage places a run-phase event: "startup" (until the listing
	// ended), "idle" (the idle watch, no request of ours in flight) or
	// "shutdown" (after the server's stdin was closed). Empty in the script
	// step and in bundles recorded before it existed.
	Stage   string `json:"stage,omitempty"`
	Kind    string `json:"kind"` // dns, tcp, udp
	DstIP   string `json:"dst_ip,omitempty"`
	DstPort int    `json:"dst_port,omitempty"`
	// LiteralIP is true for a connection to an address no DNS answer of the
	// sink gave out (the package used a literal IP).
	LiteralIP bool `json:"literal_ip"`
	// LookedUp is, on a connection, the name whose DNS answer from the
	// sink gave out the address it went to (the sink hands out one address
	// per name).
	LookedUp string `json:"looked_up,omitempty"`
	DNSName  string `json:"dns_name,omitempty"`
	DNSType  string `json:"dns_type,omitempty"`
	SNI      string `json:"sni,omitempty"`
	// HTTP request line and Host, for plain HTTP.
	HTTPMethod string `json:"http_method,omitempty"`
	HTTPTarget string `json:"http_target,omitempty"`
	HTTPHost   string `json:"http_host,omitempty"`
	// Preview is the start of what was sent (body or raw bytes), with canary
	// values masked and secrets redacted.
	Preview string `json:"preview,omitempty"`
	Bytes   int64  `json:"bytes"`
}

// Stages of the run phase (NetEvent.Stage).
const (
	StageStartup  = "startup"
	StageIdle     = "idle"
	StageShutdown = "shutdown"
)

// FileEvent is a file created, modified or deleted outside the scratch and
// install areas.
type FileEvent struct {
	Phase     string `json:"phase"`
	Package   string `json:"package,omitempty"`
	Path      string `json:"path"`
	Op        string `json:"op"` // created, modified, deleted
	Sensitive bool   `json:"sensitive"`
	// Why names the sensitive class (ssh, npmrc, aws, shell_profile, ...).
	Why string `json:"why,omitempty"`
}

// ProcessEvent is one program executed during a phase.
type ProcessEvent struct {
	Phase   string    `json:"phase"`
	Package string    `json:"package,omitempty"`
	Time    time.Time `json:"time"`
	PID     int       `json:"pid"`
	PPID    int       `json:"ppid"`
	Exe     string    `json:"exe"`
	// Argv is the command line, redacted and with canary values masked.
	Argv []string `json:"argv"`
	// Provenance says who started the process (see Provenance). Empty in
	// bundles recorded before it existed, which carry only Expected.
	Provenance Provenance `json:"provenance,omitempty"`
	// Expected marks processes that are not the package's doing: the
	// sandbox's (the entry point, the script driver), the package
	// manager's (npm running a declared script, the shell it runs the
	// script in) and the build tool's (node-gyp and what it runs). The
	// others were started by package code, or are the commands a declared
	// lifecycle script runs.
	Expected bool `json:"expected"`
}

// Provenance is who started a process.
type Provenance string

// Provenances of a process.
const (
	// ProvenanceSandbox: verifymcp itself (the server's entry point, the
	// script driver).
	ProvenanceSandbox Provenance = "sandbox"
	// ProvenancePackageManager: npm running one lifecycle event, and the
	// shell it starts to run the declared command line.
	ProvenancePackageManager Provenance = "package_manager"
	// ProvenanceBuildTool: node-gyp and everything it runs.
	ProvenanceBuildTool Provenance = "build_tool"
	// ProvenanceDeclared: a command of a declared lifecycle script, as
	// package.json writes it (node install.js).
	ProvenanceDeclared Provenance = "declared"
	// ProvenancePackage: started by package code (a declared command's
	// own children, anything the server starts).
	ProvenancePackage Provenance = "package"
)

// Expected reports whether a process of this provenance is not the
// package's doing.
func (p Provenance) Expected() bool {
	switch p {
	case ProvenanceSandbox, ProvenancePackageManager, ProvenanceBuildTool:
		return true
	default:
		return false
	}
}

// CanaryHit is a canary credential seen leaving.
type CanaryHit struct {
	Canary  Canary `json:"canary"`
	Phase   string `json:"phase"`
	Package string `json:"package,omitempty"`
	// Channel is where it was seen: dns, tls_sni, http_header, http_body,
	// http_target, tcp, udp, process_argv.
	Channel string `json:"channel"`
	// Encoding is how it was written: raw, hex, base64, url, dns_labels.
	Encoding    string `json:"encoding"`
	Destination string `json:"destination,omitempty"`
	// Masked shows the start of the value only.
	Masked string `json:"masked"`
}

// Signal names of the supply-chain signals (besides SignalRegistry).
const (
	SignalRegistryMeta = "registry.metadata"
)

// Supply is what third parties know about the package.
type Supply struct {
	Registry *RegistryMeta `json:"registry,omitempty"`
	OSV      *OSVResult    `json:"osv,omitempty"`
	Socket   *SocketResult `json:"socket,omitempty"`
	GitHub   *GitHubResult `json:"github,omitempty"`
	DNSSEC   *DNSSECResult `json:"dnssec,omitempty"`
	// MCPRegistry is the MCP registry's answer about the mcpName (signal
	// mcp_registry); nil in bundles recorded before it was asked.
	MCPRegistry *MCPNameCheck `json:"mcp_registry,omitempty"`
}

// RegistryMeta is the registry's document for the exact version, reduced
// to what a reviewer weighs. The shape is ecosystem-neutral (npm now, PyPI
// next).
type RegistryMeta struct {
	Ecosystem   string     `json:"ecosystem"`
	Name        string     `json:"name"`
	Version     string     `json:"version"`
	PublishedAt *time.Time `json:"published_at,omitempty"`
	// PreviousVersion is the version published just before this one, by time.
	PreviousVersion     string     `json:"previous_version,omitempty"`
	PreviousPublishedAt *time.Time `json:"previous_published_at,omitempty"`
	// VersionCount is the number of published versions of the package.
	VersionCount int `json:"version_count"`
	// FirstPublishedAt is when the package's first version was published.
	FirstPublishedAt *time.Time   `json:"first_published_at,omitempty"`
	Maintainers      []Maintainer `json:"maintainers"`
	// Deprecated is the deprecation message, empty when not deprecated.
	Deprecated string `json:"deprecated,omitempty"`
	// RepositoryURL is the repository as declared; Repository is it parsed,
	// nil when absent or unparseable (RepositoryError says why).
	RepositoryURL   string      `json:"repository_url,omitempty"`
	Repository      *Repository `json:"repository,omitempty"`
	RepositoryError string      `json:"repository_error,omitempty"`
	Homepage        string      `json:"homepage,omitempty"`
	AuthorURL       string      `json:"author_url,omitempty"`
	License         string      `json:"license,omitempty"`

	// Links are the other fields of the document that name a URL, where
	// publishers put their repository when they declare none (npm:
	// homepage, bugs.url; PyPI: every project_urls label in the
	// document's order, home_page, download_url); see FindRepository.
	// LinksRead is true when the collector read them all; metadata
	// recorded before they were kept has neither.
	Links     []RegistryLink `json:"links,omitempty"`
	LinksRead bool           `json:"links_read,omitempty"`

	// MCPName is the package's mcpName (the MCP registry's server name).
	MCPName string `json:"mcp_name,omitempty"`
	// Provenance is true when the registry holds a provenance attestation
	// (npm: dist.attestations with a SLSA provenance predicate).
	Provenance bool `json:"provenance"`
	// LifecycleScripts are the install-time scripts the manifest declares.
	LifecycleScripts map[string]string `json:"lifecycle_scripts,omitempty"`
	// Unserved names facts the registry's document did not carry at all
	// ("provenance", "maintainers", "deprecation"), as mirrors that strip
	// documents do: nothing can be said about them, in either direction.
	Unserved []string `json:"unserved,omitempty"`
}

// Maintainer is one maintainer of the package. Only the email's domain is
// kept: the domain is the evidence (an expired domain can be re-registered
// to take the account over); the address itself is personal data.
type Maintainer struct {
	Name        string `json:"name"`
	EmailDomain string `json:"email_domain,omitempty"`
}

// Repository is a parsed source repository reference.
type Repository struct {
	Host  string `json:"host"`
	Owner string `json:"owner"`
	Name  string `json:"name"`
	// Directory is a monorepo sub-directory, when declared.
	Directory string `json:"directory,omitempty"`
}

// OSVResult is what OSV knows about the installed tree.
type OSVResult struct {
	// Source is "api" (the OSV API at the signal's endpoint) or
	// "offline-db" (a local database).
	Source string `json:"source"`
	// Packages is the number of packages queried (the whole installed tree).
	Packages int `json:"packages"`
	// Vulnerabilities lists each advisory affecting a package in the tree.
	Vulnerabilities []Vulnerability `json:"vulnerabilities"`
}

// Vulnerability is one OSV advisory affecting one package of the tree.
type Vulnerability struct {
	ID      string   `json:"id"`
	Aliases []string `json:"aliases"`
	Summary string   `json:"summary,omitempty"`
	// Severity is the highest CVSS score found (0 when none), and its
	// vector or the database's rating.
	Score    float64 `json:"score"`
	Severity string  `json:"severity,omitempty"`
	Package  string  `json:"package"`
	Version  string  `json:"version"`
	// Direct is true when the package is the scanned package or one of its
	// direct dependencies.
	Direct bool `json:"direct"`
	// Target is true when the package is the scanned package itself.
	Target bool     `json:"target"`
	Fixed  []string `json:"fixed"`
	// Malware is true for MAL- advisories: malicious packages, not bugs.
	Malware bool `json:"malware"`
}

// SocketResult is Socket's verdict on the package and its tree.
type SocketResult struct {
	// Malware is true when Socket flags the package (or a dependency, see
	// Alerts) as malware.
	Malware bool `json:"malware"`
	// Scores are Socket's 0..1 scores for the package (supply_chain,
	// quality, maintenance, vulnerability, license, overall).
	Scores map[string]float64 `json:"scores,omitempty"`
	Alerts []SocketAlert      `json:"alerts"`
}

// SocketAlert is one Socket alert on a package of the tree.
type SocketAlert struct {
	Type     string `json:"type"`
	Severity string `json:"severity"`
	Category string `json:"category,omitempty"`
	Package  string `json:"package"`
	Version  string `json:"version"`
	// Target is true when the alert is on the scanned package itself.
	Target bool `json:"target"`
}

// GitHubResult is what GitHub says about the repository the metadata names.
type GitHubResult struct {
	// Requested is the owner/name asked for.
	Requested string `json:"requested"`
	Exists    bool   `json:"exists"`
	// FullName is GitHub's owner/name; it differs from Requested when the
	// repository was renamed or moved.
	FullName      string     `json:"full_name,omitempty"`
	Archived      bool       `json:"archived"`
	Disabled      bool       `json:"disabled"`
	Fork          bool       `json:"fork"`
	DefaultBranch string     `json:"default_branch,omitempty"`
	PushedAt      *time.Time `json:"pushed_at,omitempty"`
	CreatedAt     *time.Time `json:"created_at,omitempty"`
	Stars         int        `json:"stars"`
}

// DNSSECResult is the chain-of-trust validation of the domains the package
// leans on (homepage, repository host off the well-known forges, maintainer
// email domains, author URL, the namespace of a reverse-DNS mcpName). The
// signal is observed only when the trust anchor's keys were fetched and
// validated; otherwise nothing below could be judged and the signal is
// unavailable.
type DNSSECResult struct {
	// Resolver is the recursive resolver asked ("host:port"); Anchor the
	// trust anchor the chains start from.
	Resolver  string       `json:"resolver"`
	Anchor    DNSSECAnchor `json:"anchor"`
	CheckedAt time.Time    `json:"checked_at"`
	Domains   []DNSDomain  `json:"domains"`
}

// DNSSECAnchor names a trust anchor: its zone, key tags and where it came
// from ("embedded IANA root anchors" or a file).
type DNSSECAnchor struct {
	Zone    string   `json:"zone"`
	KeyTags []uint16 `json:"key_tags"`
	Source  string   `json:"source"`
}

// DNSSEC states of a domain (RFC 4035 section 4.3).
const (
	DNSSecure        = "secure"
	DNSInsecure      = "insecure"
	DNSBogus         = "bogus"
	DNSIndeterminate = "indeterminate"
)

// DNSDomain is the judgement on one domain.
type DNSDomain struct {
	Name string `json:"name"`
	// Sources say where the name came from: homepage, repository,
	// maintainer_email, author_url, mcp_name.
	Sources []string `json:"sources"`
	// Status is secure, insecure, bogus or indeterminate; BogusReason
	// says why a bogus chain is bogus (bad_signature, signature_expired,
	// signature_not_yet_valid, no_dnskey_matching_ds, dnskey_revoked,
	// missing_rrsig, missing_dnskey, missing_denial_proof,
	// dname_synthesis_mismatch).
	Status      string `json:"status"`
	BogusReason string `json:"bogus_reason,omitempty"`
	// Exists is yes, no (NXDOMAIN) or unknown; NXDomainProof how a
	// nonexistence was proven (nsec, nsec3, nsec3_optout, none).
	Exists        string   `json:"exists"`
	NXDomainProof string   `json:"nxdomain_proof,omitempty"`
	CNAMEs        []string `json:"cnames,omitempty"`
	DanglingCNAME bool     `json:"dangling_cname,omitempty"`
	// Chain lists the zones from the anchor down, each with its state.
	Chain []DNSZoneStep `json:"chain"`
	Error string        `json:"error,omitempty"`
}

// DNSZoneStep is one zone on a chain of trust.
type DNSZoneStep struct {
	Zone        string   `json:"zone"`
	Status      string   `json:"status"`
	BogusReason string   `json:"bogus_reason,omitempty"`
	DSKeyTags   []uint16 `json:"ds_key_tags,omitempty"`
	KeyTags     []uint16 `json:"key_tags,omitempty"`
	Algorithms  []int    `json:"algorithms,omitempty"`
	DSDenial    string   `json:"ds_denial,omitempty"`
	Error       string   `json:"error,omitempty"`
}

// HasSource reports whether the domain came from src.
func (d DNSDomain) HasSource(src string) bool {
	for _, s := range d.Sources {
		if s == src {
			return true
		}
	}
	return false
}

// JudgeResult is the LLM judge's verdict on a contract. It is not a
// deterministic function: it is pinned to the judge spec of a rubric
// version (prompt, response schema, verdict codes) and to a model and its
// parameters, and cached under all of them with the contract's schema
// hash, so the same surface under the same pins gives the same stored
// verdict. The raw request and response stay in the cache entry (CacheKey)
// for audit; the bundle keeps what scoring needs.
type JudgeResult struct {
	// Model and Endpoint say who answered (never a credential);
	// Temperature and Seed how it was asked.
	Model       string  `json:"model"`
	Endpoint    string  `json:"endpoint"`
	Temperature float64 `json:"temperature"`
	Seed        int     `json:"seed"`
	// SpecVersion, PromptVersion and SpecDigest pin the judge spec;
	// RubricVersion the rubric it was asked under; SchemaHash the surface.
	SpecVersion   string `json:"spec_version"`
	PromptVersion string `json:"prompt_version"`
	SpecDigest    string `json:"spec_digest"`
	RubricVersion string `json:"rubric_version"`
	SchemaHash    string `json:"schema_hash"`
	// CacheHit is true when the verdict came from the cache (no call was
	// made); FetchedAt is when the model answered.
	CacheHit  bool           `json:"cache_hit"`
	CacheKey  string         `json:"cache_key"`
	FetchedAt time.Time      `json:"fetched_at"`
	Verdicts  []JudgeVerdict `json:"verdicts"`
}

// JudgeVerdict is one verdict: a code from the judge spec's enumeration,
// about one tool (empty: the server instructions), with the quoted span
// that is its evidence.
type JudgeVerdict struct {
	Tool      string `json:"tool"`
	Code      string `json:"code"`
	Evidence  string `json:"evidence"`
	Rationale string `json:"rationale,omitempty"`
}
