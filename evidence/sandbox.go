package evidence

import "time"

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
	// Built is set when the reused tree is a PyPI release's venv as built
	// by FetchedBy, whose build ran no package code (wheels only): this
	// run did no fetch and no build, and the install evidence is that
	// run's record.
	Built bool `json:"built,omitempty"`
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
