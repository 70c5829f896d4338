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
	SchemaVersion string            `json:"schema_version"`
	Run           Run               `json:"run"`
	Target        Target            `json:"target"`
	Sandbox       Sandbox           `json:"sandbox"`
	Signals       map[string]Signal `json:"signals"`
	Install       *Install          `json:"install"`
	// Shipped is the release that ran as shipped (an image, a bundle), in
	// place of an install; nil for a package the sandbox installed.
	Shipped  *Shipped           `json:"shipped,omitempty"`
	Session  *Session           `json:"session"`
	Contract *contract.Contract `json:"contract"`
	// Behavior is what the package did while it was watched; nil when the
	// behaviour signal was not observed.
	Behavior *Behavior `json:"behavior,omitempty"`
	// Exercise is the tool calls the sandbox made after the idle watch;
	// nil when it made none (signal sandbox.exercise says why).
	Exercise *Exercise `json:"exercise,omitempty"`
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
	// AfterCalls is how many tool calls were made between the two
	// listings (see Exercise): a change with calls before it came after
	// use, the rug pull that waits for a tool to be called.
	AfterCalls int `json:"after_calls,omitempty"`
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
// (contract/checks) found on a contract.
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
