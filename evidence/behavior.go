package evidence

import "time"

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
	Stage string `json:"stage,omitempty"`
	// Call is the tool call in whose window the event came (stage
	// "call", see Exercise), 0 outside calls.
	Call    int    `json:"call,omitempty"`
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
	// TLS marks a connection the sink answered with TLS under the run's
	// CA: the HTTP fields and Preview are then the request inside it
	// (HTTPS), and ALPN is the protocol it negotiated (h2, http/1.1).
	// TLSRefused marks a client that aborted the handshake on the run's
	// CA (it pins its certificates or keeps its own roots): only its SNI
	// is known, and that is evidence of nothing else.
	TLS        bool   `json:"tls,omitempty"`
	ALPN       string `json:"alpn,omitempty"`
	TLSRefused bool   `json:"tls_refused,omitempty"`
	// PID is the process that owned the socket (in the observer's PID
	// namespace, as ProcessEvent.PID), and Exe the program it ran: what it
	// last exec'ed, or for a process that forked without exec'ing, its
	// nearest ancestor's. Zero and empty when the sink could not tell.
	PID int    `json:"pid,omitempty"`
	Exe string `json:"exe,omitempty"`
	// Secrets names the secrets masked in the body (at most ten):
	// env:NAME for an --env value, shape:RULE for a string shaped like a
	// credential. A server sends its API key to its own API by design, so
	// this is evidence of where a secret went, not a finding; a canary,
	// which no server needs, is (Behavior.Exfiltration).
	Secrets []string `json:"secrets,omitempty"`
	// Recipients are the mail addresses the whole request (not only its
	// preview) names in a recipient field: a JSON key or form field to,
	// cc, bcc, recipient(s) and their variants, or a To, Cc or Bcc
	// header of a message it carries (at most ten, lower-cased). Whose
	// they are is the rubric's question (pkg.behavior.tool.*).
	Recipients []string `json:"recipients,omitempty"`
	// HTTP request line and Host, of plain HTTP or of HTTPS read inside
	// TLS.
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
	// Call is the tool call in whose window the process started (see
	// Exercise), 0 outside calls.
	Call int `json:"call,omitempty"`
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
	// http_target, https_header, https_body, https_target (the same,
	// read inside TLS), tcp, udp, process_argv.
	Channel string `json:"channel"`
	// Encoding is how it was written: raw, hex, base64, url, dns_labels.
	Encoding    string `json:"encoding"`
	Destination string `json:"destination,omitempty"`
	// Call is the tool call in whose window it left (see Exercise), 0
	// outside calls.
	Call int `json:"call,omitempty"`
	// Masked shows the start of the value only.
	Masked string `json:"masked"`
}
