// Package report turns an evidence bundle and its rubric result into the
// report a user reads: a versioned JSON document, validated by the JSON
// Schema embedded here, and a terminal table.
//
// A report says what was found and which checks ran. It never says a
// package is safe: no findings means nothing was found in the checks that
// ran, and every check that did not run is listed with its state.
package report

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
)

// SchemaVersion identifies the JSON form of Report and its JSON Schema.
//
// Version 2 added the required behavior member. It is required, null when
// behaviour was not captured, because every member of a report is present
// so that "not captured" (null) and "nothing seen" (empty lists) differ;
// and version 1's schema forbids unknown members, so a report carrying
// behavior would not validate against it.
//
// Version 3 added the required supply member (null only for evidence from
// before supply-chain collection) and, on every signal, where and when it
// was fetched: endpoint, authenticated, fetched_at and cached. Version 2's
// schema forbids unknown members in both places.
//
// Version 4 added the required supply.dnssec member: the DNSSEC check of
// the domains the package leans on, in the shape of the other supply-chain
// checks. Version 3's schema forbids unknown members of supply.
//
// Version 5 added the required judge member: the LLM judge's verdicts on
// the tool surface in the shape of a supply-chain check, with everything
// that pins them (model, endpoint, temperature, seed, judge specification,
// rubric version, cache key and hit, when the model answered), because a
// judge is not a deterministic check and a reader must be able to tell
// which model said what, and when. Version 4's schema forbids unknown
// top-level members, and its notice does not say what the judge is.
//
// Version 6 added what the sandbox records about who did what and how the
// session went: each process's provenance, each network event's stage of
// the run phase, each lifecycle script's signal, memory kill, optional
// package and attempted network, and the session's truncations (with
// their counts), late answers, notifications and shutdown; and the
// required masking member, which secrets were masked where; and the
// bounds of the places package code writes (sandbox.limits) and, per
// watched phase, what it kept in them and which events were counted but
// not listed (behavior.watches). Version 5's schema forbids unknown
// members of all of those.
//
// Version 7 added the required drift member: the contract compared with
// the pin of its server identity (baseline, who pinned it, every change
// with its kind, subject, sides and safety bit) and with the second
// listing of the session. Version 6's schema forbids unknown top-level
// members.
//
// Version 8 added the required summary member, first (outcome, findings
// by severity, the gate, the signals not observed, the score and the share
// of the rubric's weight it covers), and each finding's ignored member
// (null, or the ignore entry that accepted it). Version 7's schema forbids
// unknown members of both.
//
// Version 9 added, on every network event, the process that made it (pid,
// exe), the secrets masked in what it sent, and whether it was read
// inside TLS (tls, alpn, tls_refused).
//
// Version 10 added the required exercise member (null when the sandbox
// called no tool): each listed tool called once after the idle watch, with
// its arguments, outcome, result, files and counts of what it did, the
// tools not called and why, and the requests the server sent the client;
// the call whose window an event of behavior came in (call, on network
// events, processes and canary hits, omitted outside calls); each network
// event's mail recipients; and drift.session.after_calls. Version 9's
// schema forbids unknown members of all of those.
//
// Version 11 added the required shipped member (null for a release that
// was installed): a release that ran as shipped, a container image or an
// MCPB bundle, with its digest, reference, source, what it declares it
// starts with and as whom, the user the sandbox ran it as, its env and
// label names (never their values), ports, MCP registry name, OS and
// package count, a bundle's manifest, the surface it declares, its
// signature, and why behaviour was not watched. Version 10's schema
// forbids unknown top-level members.
//
// Version 12 added shipped.first_start (null when the first start was the
// only one): the start as the sandbox's unprivileged user that failed
// before the server answered, of an image the sandbox then started as the
// user its configuration names, with its user, outcome, exit status,
// error and the end of its standard error. Version 11's schema forbids
// unknown members of shipped.
const SchemaVersion = "verifymcp.report/v12"

// Notice is carried by every report.
const Notice = "No findings means that nothing was found in the checks that ran; " +
	"the checks and their states are listed under signals, and a signal that is not observed was not checked. " +
	"Behaviour was watched only for the time listed under behavior.watches: nothing seen means nothing seen in that time. " +
	"A supply-chain check whose signal was not observed is unverified, never clean. " +
	"The judge is an LLM, pinned (model, temperature, seed, judge specification) and cached by the tool surface's hash, " +
	"not a deterministic check: its verdicts and its silence are a model's judgment, not a proof. " +
	"This report never says a package is safe."

//go:embed schema/report.v12.schema.json
var schema []byte

// Schema returns the JSON Schema (draft 2020-12) of the report's JSON form.
func Schema() []byte { return append([]byte(nil), schema...) }

// Report is the JSON form of one scan's result. Lists are never nil, so
// that "nothing found" ([]) and "not captured" (null) stay distinct.
type Report struct {
	// Summary comes first: what a reader (or a CI job) needs at a glance.
	Summary       Summary            `json:"summary"`
	SchemaVersion string             `json:"schema_version"`
	Tool          Tool               `json:"tool"`
	Run           Run                `json:"run"`
	Target        Target             `json:"target"`
	Rubric        Rubric             `json:"rubric"`
	Sandbox       Sandbox            `json:"sandbox"`
	Signals       map[string]Signal  `json:"signals"`
	Contract      *contract.Contract `json:"contract"` // nil when not captured
	Session       *Session           `json:"session"`  // nil when the run phase left no evidence
	Install       *Install           `json:"install"`  // nil when the install phase left no evidence
	Behavior      *Behavior          `json:"behavior"` // nil when behaviour was not captured
	Exercise      *Exercise          `json:"exercise"` // nil when the sandbox called no tool
	Shipped       *Shipped           `json:"shipped"`  // nil for a release that was installed, not run as shipped
	Supply        *Supply            `json:"supply"`   // nil for evidence from before supply-chain collection
	Judge         *JudgeCheck        `json:"judge"`    // nil for evidence from before the judge
	Drift         *Drift             `json:"drift"`    // nil for evidence from before pins
	// Masking lists the secrets masked in this evidence before it was
	// stored: [] when none was found (or for evidence from before masking
	// was recorded).
	Masking    []Masking   `json:"masking"`
	Findings   []Finding   `json:"findings"`
	Dimensions []Dimension `json:"dimensions"`
	Score      *float64    `json:"score"` // nil when every dimension was dropped
	Notice     string      `json:"notice"`
}

// Tool names the program that produced the evidence.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Run identifies the scan.
type Run struct {
	ID   string `json:"id"`
	Date string `json:"date"` // UTC, RFC 3339
	// Recollected is set on a run made by rescore --recollect.
	Recollected *Recollected `json:"recollected,omitempty"`
}

// Recollected says which run's evidence a derived run carries over and
// which signals it collected again, when and with which tool version.
type Recollected struct {
	From        string   `json:"from"`
	Signals     []string `json:"signals"`
	At          string   `json:"at"` // UTC, RFC 3339
	ToolVersion string   `json:"tool_version"`
}

// Target is the exact artefact scanned.
type Target struct {
	Ecosystem string `json:"ecosystem"`
	Name      string `json:"name"`
	Version   string `json:"version"`
	Requested string `json:"requested"`
	Integrity string `json:"integrity"`
	Source    string `json:"source"`
	Purl      string `json:"purl"`
	Bin       *Bin   `json:"bin"`
	// MCPRegistry is the MCP registry entry the target was named by; nil
	// for a target named by its package.
	MCPRegistry *evidence.MCPRegistryEntry `json:"mcp_registry"`
}

// Bin is the entry point that was started.
type Bin struct {
	Name string `json:"name"`
	Path string `json:"path"`
	Rule string `json:"rule"`
}

// Rubric identifies the rubric the result was scored under.
type Rubric struct {
	Version string `json:"version"`
	Hash    string `json:"hash"`
	// ContractChecks names the contract checks the rubric pins and where
	// their findings came from (stored at scan time, recomputed from the
	// stored contract, unavailable, not run); absent for a rubric without
	// prompt_contract_integrity.
	ContractChecks *ContractChecks `json:"contract_checks,omitempty"`
}

// ContractChecks is the checks version a result scored.
type ContractChecks struct {
	Version string `json:"version"`
	Digest  string `json:"digest,omitempty"`
	Source  string `json:"source"`
}

// Sandbox describes where the package ran.
type Sandbox struct {
	Image         string `json:"image"`
	ImageDigest   string `json:"image_digest"`
	Outcome       string `json:"outcome"`
	EngineVersion string `json:"engine_version"`
	APIVersion    string `json:"api_version"`
	Limits        Limits `json:"limits"`
}

// Limits are the run phase's resource limits.
type Limits struct {
	MemoryBytes        int64 `json:"memory_bytes"`
	NanoCPUs           int64 `json:"nano_cpus"`
	Pids               int64 `json:"pids"`
	InstallTimeoutMS   int64 `json:"install_timeout_ms"`
	HandshakeTimeoutMS int64 `json:"handshake_timeout_ms"`
	// TreeBytes, HomeBytes and TmpBytes bound what package code can keep
	// in the tree (while its scripts run), its home and /tmp; 0 when the
	// bundle predates the bounds.
	TreeBytes int64 `json:"tree_bytes"`
	HomeBytes int64 `json:"home_bytes"`
	TmpBytes  int64 `json:"tmp_bytes"`
}

// Signal is the state of one evidence source during the run, and for a
// third party where and when it was asked.
type Signal struct {
	State      string `json:"state"`
	Reason     string `json:"reason"`
	ThirdParty bool   `json:"third_party"`
	// Endpoint is the base URL asked, never with a credential; "" when
	// none was recorded.
	Endpoint string `json:"endpoint"`
	// Authenticated says whether a credential was sent.
	Authenticated bool `json:"authenticated"`
	// FetchedAt is when the answer was fetched (UTC, RFC 3339), earlier
	// than the run when it came from the cache; nil when nothing was.
	FetchedAt *string `json:"fetched_at"`
	// Cached says whether the answer came from the cache.
	Cached bool `json:"cached"`
}

func signal(s evidence.Signal) Signal {
	return Signal{
		State: string(s.State), Reason: s.Reason, ThirdParty: s.ThirdParty, Endpoint: endpoint(s.Endpoint),
		Authenticated: s.Authenticated, FetchedAt: timePtr(s.FetchedAt), Cached: s.Cached,
	}
}

// Session is the evidence of the run phase.
type Session struct {
	Outcome       string            `json:"outcome"`
	HandshakePath string            `json:"handshake_path"`
	Error         string            `json:"error"`
	ExitCode      *int              `json:"exit_code"`
	OOMKilled     bool              `json:"oom_killed"`
	NonJSONLines  int               `json:"non_json_lines"`
	NonJSONSample []string          `json:"non_json_sample"`
	StderrTail    string            `json:"stderr_tail"`
	Truncated     bool              `json:"truncated"`
	ListErrors    map[string]string `json:"list_errors"`
	// Truncations are the cuts the sandbox's bounds made, with counts.
	Truncations []Truncation `json:"truncations"`
	// LateAnswers came after the session that asked was given up.
	LateAnswers      []LateAnswer   `json:"late_answers"`
	UnmatchedAnswers int            `json:"unmatched_answers"`
	Notifications    map[string]int `json:"notifications"`
	UnreadMessages   int            `json:"unread_messages"`
	// Shutdown is how the server was stopped; nil when it was not run.
	Shutdown *Shutdown `json:"shutdown"`
}

// Truncation is one cut of what the server sent.
type Truncation struct {
	List      string `json:"list"`
	Item      string `json:"item"`
	Field     string `json:"field"`
	Kept      int    `json:"kept"`
	Offered   int    `json:"offered"`
	MorePages bool   `json:"more_pages"`
	Bytes     int64  `json:"bytes"`
	Reason    string `json:"reason"`
}

// LateAnswer is an answer that came after its session was given up.
type LateAnswer struct {
	Method  string `json:"method"`
	AfterMS int64  `json:"after_ms"`
	Error   string `json:"error"`
}

// Shutdown is how the server was stopped after the session.
type Shutdown struct {
	Ended       string `json:"ended"`
	ExitCode    *int   `json:"exit_code"`
	StdinWaitMS int64  `json:"stdin_wait_ms"`
	TermWaitMS  int64  `json:"term_wait_ms"`
	KillWaitMS  int64  `json:"kill_wait_ms"`
	GraceMS     int64  `json:"grace_ms"`
}

// Install is the evidence of the install phase.
type Install struct {
	Outcome        string    `json:"outcome"`
	FailedStep     string    `json:"failed_step"`
	Error          string    `json:"error"`
	Integrity      Integrity `json:"integrity"`
	Scripts        []Script  `json:"scripts"`
	Packages       int       `json:"packages"`
	LockfileSHA256 string    `json:"lockfile_sha256"`
	// Python is the interpreter of a PyPI target (absent for npm, and in
	// runs recorded before the sandbox offered more than one).
	Python *Python `json:"python,omitempty"`
	// TreeCheck is the check that the installed tree the server ran from
	// is the one the installer wrote (absent when it was not made).
	TreeCheck *TreeCheck `json:"tree_check,omitempty"`
}

// TreeCheck is the installed tree's digest at install and before start.
type TreeCheck struct {
	Files   int      `json:"files"`
	Digest  string   `json:"digest"`
	Checked string   `json:"checked"`
	Match   bool     `json:"match"`
	Changed []string `json:"changed,omitempty"`
}

// Python is the sandbox's choice of interpreter for a PyPI target.
type Python struct {
	Version        string `json:"version"`
	RequiresPython string `json:"requires_python"`
	Offered        string `json:"offered"`
	Rule           string `json:"rule"`
}

// Integrity is the check of the tarball against the registry.
type Integrity struct {
	Expected string `json:"expected"`
	Lockfile string `json:"lockfile"`
	Computed string `json:"computed"`
	Match    bool   `json:"match"`
}

// Script is one lifecycle script of the installed tree.
type Script struct {
	Package  string `json:"package"`
	Version  string `json:"version"`
	Path     string `json:"path"`
	Event    string `json:"event"`
	Command  string `json:"command"`
	Ran      bool   `json:"ran"`
	Optional bool   `json:"optional"`
	ExitCode int    `json:"exit_code"`
	Signal   string `json:"signal"`
	TimedOut bool   `json:"timed_out"`
	OOM      bool   `json:"oom"`
	// LeftRunning: the script left processes running, which were killed.
	LeftRunning bool   `json:"left_running"`
	OutputTail  string `json:"output_tail"`
	// Network is what the script tried to reach; nil when behaviour was
	// not watched.
	Network *ScriptNetwork `json:"network"`
}

// ScriptNetwork is the network a lifecycle script tried to use.
type ScriptNetwork struct {
	Attempts int      `json:"attempts"`
	Wanted   []string `json:"wanted"`
}

// Behavior is what the package did in the phases it was watched, as the
// sandbox recorded it. Canaries are named by kind and place, never by
// value; the events carry only masked and redacted text.
type Behavior struct {
	Watches      []Watch        `json:"watches"`
	Canaries     []Canary       `json:"canaries"`
	Network      []NetEvent     `json:"network"`
	Files        []FileEvent    `json:"files"`
	Processes    []ProcessEvent `json:"processes"`
	Exfiltration []CanaryHit    `json:"exfiltration"`
}

// Watch is one watched phase: how long, and whether each observer (the
// network sink, the process tracer, the file check) covered all of it.
type Watch struct {
	Phase     string `json:"phase"`
	WatchedMS int64  `json:"watched_ms"`
	IdleMS    int64  `json:"idle_ms"`
	Sink      string `json:"sink"`
	Tracer    string `json:"tracer"`
	Files     string `json:"files"`
	// Disk is what the phase kept in each bounded place; Dropped counts,
	// by kind, the phase's events past what the evidence lists.
	Disk    []evidence.DiskUse `json:"disk"`
	Dropped map[string]int     `json:"dropped"`
}

// Canary is one planted canary credential, by kind and place.
type Canary struct {
	Kind  string `json:"kind"`
	Where string `json:"where"`
}

// NetEvent is one network attempt seen by the sink.
type NetEvent struct {
	Phase          string `json:"phase"`
	Package        string `json:"package"`
	Time           string `json:"time"` // UTC, RFC 3339; "" when not recorded
	AfterHandshake bool   `json:"after_handshake"`
	Stage          string `json:"stage"`          // startup, idle, call, shutdown; "" in the script step
	Call           int    `json:"call,omitempty"` // the tool call whose window it came in; 0 outside calls
	Kind           string `json:"kind"`
	DstIP          string `json:"dst_ip"`
	DstPort        int    `json:"dst_port"`
	LiteralIP      bool   `json:"literal_ip"`
	LookedUp       string `json:"looked_up"`
	DNSName        string `json:"dns_name"`
	DNSType        string `json:"dns_type"`
	SNI            string `json:"sni"`
	HTTPMethod     string `json:"http_method"`
	HTTPTarget     string `json:"http_target"`
	HTTPHost       string `json:"http_host"`
	Preview        string `json:"preview"`
	Bytes          int64  `json:"bytes"`
	// TLS: read inside TLS under the run's CA (HTTPS); TLSRefused: the
	// client refused that CA, and only its server name is known.
	TLS        bool   `json:"tls"`
	ALPN       string `json:"alpn"`
	TLSRefused bool   `json:"tls_refused"`
	// PID and Exe: the process that made it and its program; 0 and ""
	// when unknown.
	PID int    `json:"pid"`
	Exe string `json:"exe"`
	// Secrets names the secrets masked in what was sent (env:NAME,
	// shape:RULE): where a secret went, which is no finding by itself.
	Secrets []string `json:"secrets"`
	// Recipients are the mail addresses the request names in a recipient
	// field: whose they are is the rubric's question.
	Recipients []string `json:"recipients"`
}

// FileEvent is one file created, modified or deleted.
type FileEvent struct {
	Phase     string `json:"phase"`
	Package   string `json:"package"`
	Path      string `json:"path"`
	Op        string `json:"op"`
	Sensitive bool   `json:"sensitive"`
	Why       string `json:"why"`
}

// ProcessEvent is one program executed.
type ProcessEvent struct {
	Phase   string   `json:"phase"`
	Package string   `json:"package"`
	Time    string   `json:"time"` // UTC, RFC 3339; "" when not recorded
	PID     int      `json:"pid"`
	PPID    int      `json:"ppid"`
	Exe     string   `json:"exe"`
	Argv    []string `json:"argv"`
	// Provenance: sandbox, package_manager, build_tool, declared or
	// package; "" for evidence recorded before it existed.
	Provenance string `json:"provenance"`
	Expected   bool   `json:"expected"`
	Call       int    `json:"call,omitempty"` // the tool call whose window it started in; 0 outside calls
}

// CanaryHit is a canary credential seen leaving, with its value masked.
type CanaryHit struct {
	Canary      Canary `json:"canary"`
	Phase       string `json:"phase"`
	Package     string `json:"package"`
	Channel     string `json:"channel"`
	Encoding    string `json:"encoding"`
	Destination string `json:"destination"`
	Masked      string `json:"masked"`
	Call        int    `json:"call,omitempty"` // the tool call whose window it left in; 0 outside calls
}

// Masking is one kind of secret masked in the evidence: the marker that
// replaced it, how often, and where.
type Masking struct {
	Marker string         `json:"marker"`
	Count  int            `json:"count"`
	Where  map[string]int `json:"where"`
}

// Finding is one reason code with its catalog remediation.
type Finding struct {
	Code        string   `json:"code"`
	Kind        string   `json:"kind"`
	Severity    string   `json:"severity"`
	Dimension   string   `json:"dimension"`
	Subject     string   `json:"subject"`
	Message     string   `json:"message"`
	Evidence    string   `json:"evidence"`
	Value       *float64 `json:"value"`
	Remediation string   `json:"remediation"`
	// Ignored is set when an ignore file accepts the finding: it stays in
	// the report and does not trip the gate.
	Ignored *Ignored `json:"ignored"`
}

// Dimension is one dimension's outcome. Score is nil when it was dropped,
// so that a dropped dimension never reads as a 0.
type Dimension struct {
	ID     string   `json:"id"`
	Weight float64  `json:"weight"`
	State  string   `json:"state"`
	Score  *float64 `json:"score"`
	Reason string   `json:"reason"`
}

// Build assembles the report of a bundle scored under r with result res.
func checksOf(u *rubric.ChecksUse) *ContractChecks {
	if u == nil {
		return nil
	}
	return &ContractChecks{Version: u.Version, Digest: u.Digest, Source: u.Source}
}

// The rubric identity in the report is the result's; r supplies the
// remediation text, and only when it is the rubric the result came from.
func Build(b *evidence.Bundle, r *rubric.Rubric, res rubric.Result) Report {
	rep := Report{
		SchemaVersion: SchemaVersion,
		Tool:          Tool{Name: b.Run.Tool.Name, Version: b.Run.Tool.Version},
		Run:           runOf(b.Run),
		Target: Target{
			Ecosystem: b.Target.Ecosystem, Name: b.Target.Name, Version: b.Target.Version,
			Requested: b.Target.Requested, Integrity: b.Target.Integrity, Source: b.Target.Source, Purl: b.Target.Purl,
		},
		Rubric: Rubric{Version: res.RubricVersion, Hash: res.RubricHash, ContractChecks: checksOf(res.ContractChecks)},
		Sandbox: Sandbox{
			Image: b.Sandbox.Image, ImageDigest: b.Sandbox.ImageDigest, Outcome: string(b.Sandbox.Outcome),
			EngineVersion: b.Sandbox.EngineVersion, APIVersion: b.Sandbox.APIVersion,
			Limits: Limits{
				MemoryBytes: b.Sandbox.Limits.MemoryBytes, NanoCPUs: b.Sandbox.Limits.NanoCPUs, Pids: b.Sandbox.Limits.Pids,
				InstallTimeoutMS: b.Sandbox.Limits.InstallTimeoutMS, HandshakeTimeoutMS: b.Sandbox.Limits.HandshakeTimeoutMS,
				TreeBytes: b.Sandbox.Limits.TreeBytes, HomeBytes: b.Sandbox.Limits.HomeBytes, TmpBytes: b.Sandbox.Limits.TmpBytes,
			},
		},
		Signals:    map[string]Signal{},
		Contract:   normalizedContract(b.Contract),
		Findings:   make([]Finding, 0, len(res.Findings)),
		Dimensions: make([]Dimension, 0, len(res.Dimensions)),
		Score:      res.Score,
		Notice:     Notice,
	}
	if bin := b.Target.Bin; bin != nil {
		rep.Target.Bin = &Bin{Name: bin.Name, Path: bin.Path, Rule: bin.Rule}
	}
	rep.Target.MCPRegistry = b.Target.MCPRegistry
	for name, s := range b.Signals {
		rep.Signals[name] = signal(s)
	}
	// A signal the rubric needed but the bundle never recorded is listed
	// as the error it is, not left out.
	if r != nil {
		for _, d := range r.Dimensions {
			for _, name := range d.Signals {
				if _, ok := rep.Signals[name]; !ok {
					rep.Signals[name] = signal(b.Signal(name))
				}
			}
		}
	}
	rep.Supply = buildSupply(b, rep.Signals)
	rep.Judge = buildJudge(b, rep.Signals)
	rep.Drift = buildDrift(b)
	rep.Session = buildSession(b.Session)
	rep.Install = buildInstall(b.Install)
	rep.Behavior = buildBehavior(b.Behavior)
	rep.Exercise = buildExercise(b.Exercise, rep.Behavior)
	rep.Shipped = buildShipped(b.Shipped)
	rep.Masking = make([]Masking, 0, len(b.Masking))
	for _, m := range b.Masking {
		where := map[string]int{}
		for w, n := range m.Where {
			where[w] = n
		}
		rep.Masking = append(rep.Masking, Masking{Marker: m.Marker, Count: m.Count, Where: where})
	}
	sameRubric := r != nil && r.Version == res.RubricVersion && r.Hash == res.RubricHash
	for _, f := range res.Findings {
		rf := Finding{
			Code: f.Code, Kind: string(f.Kind), Severity: string(f.Severity), Dimension: f.Dimension,
			Subject: f.Subject, Message: f.Message, Evidence: f.Evidence, Value: f.Value,
		}
		if sameRubric {
			if def, ok := r.Code(f.Code); ok {
				rf.Remediation = def.Remediation
			}
		}
		rep.Findings = append(rep.Findings, rf)
	}
	for _, d := range res.Dimensions {
		rd := Dimension{ID: d.ID, Weight: d.Weight, State: string(d.State), Reason: d.Reason}
		if d.State != rubric.StateDropped {
			score := d.Score
			rd.Score = &score
		}
		rep.Dimensions = append(rep.Dimensions, rd)
	}
	rep.Summary.Cap = res.Cap
	summarize(&rep, b)
	return rep
}

// buildSession is the report's session, from the bundle's; nil when the
// bundle has none.
func buildSession(s *evidence.Session) *Session {
	if s == nil {
		return nil
	}
	out := &Session{
		Outcome: string(s.Outcome), HandshakePath: s.HandshakePath, Error: s.Error, ExitCode: s.ExitCode,
		OOMKilled: s.OOMKilled, NonJSONLines: s.NonJSONLines, NonJSONSample: nonNil(s.NonJSONSample),
		StderrTail: s.StderrTail, Truncated: s.Truncated, ListErrors: map[string]string{},
		Truncations: []Truncation{}, LateAnswers: []LateAnswer{}, UnmatchedAnswers: s.UnmatchedAnswers, Notifications: map[string]int{},
		UnreadMessages: s.UnreadMessages,
	}
	for m, e := range s.ListErrors {
		out.ListErrors[m] = e
	}
	for _, t := range s.Truncations {
		out.Truncations = append(out.Truncations, Truncation{List: t.List, Item: t.Item, Field: t.Field, Kept: t.Kept,
			Offered: t.Offered, MorePages: t.MorePages, Bytes: t.Bytes, Reason: t.Reason})
	}
	for _, l := range s.LateAnswers {
		out.LateAnswers = append(out.LateAnswers, LateAnswer{Method: l.Method, AfterMS: l.AfterMS, Error: l.Error})
	}
	for m, n := range s.Notifications {
		out.Notifications[m] = n
	}
	if sd := s.Shutdown; sd != nil {
		out.Shutdown = &Shutdown{Ended: sd.Ended, ExitCode: sd.ExitCode, StdinWaitMS: sd.StdinWaitMS,
			TermWaitMS: sd.TermWaitMS, KillWaitMS: sd.KillWaitMS, GraceMS: sd.GraceMS}
	}
	return out
}

// buildInstall is the report's install, from the bundle's; nil when the
// bundle has none.
func buildInstall(in *evidence.Install) *Install {
	if in == nil {
		return nil
	}
	out := &Install{
		Outcome: in.Outcome, FailedStep: in.FailedStep, Error: in.Error,
		Integrity: Integrity{Expected: in.Integrity.Expected, Lockfile: in.Integrity.Lockfile, Computed: in.Integrity.Computed, Match: in.Integrity.Match},
		Scripts:   make([]Script, 0, len(in.Scripts)), Packages: in.Packages, LockfileSHA256: in.LockfileSHA256,
	}
	if p := in.Python; p != nil {
		out.Python = &Python{Version: p.Version, RequiresPython: p.RequiresPython, Offered: p.Offered, Rule: p.Rule}
	}
	if tc := in.TreeCheck; tc != nil {
		out.TreeCheck = &TreeCheck{Files: tc.Files, Digest: tc.Digest, Checked: tc.Checked, Match: tc.Match, Changed: tc.Changed}
	}
	for _, sc := range in.Scripts {
		out.Scripts = append(out.Scripts, Script{
			Package: sc.Package, Version: sc.Version, Path: sc.Path, Event: sc.Event, Command: sc.Command,
			Ran: sc.Ran, Optional: sc.Optional, ExitCode: sc.ExitCode, Signal: sc.Signal, TimedOut: sc.TimedOut, OOM: sc.OOM,
			LeftRunning: sc.LeftRunning, OutputTail: sc.OutputTail, Network: scriptNetwork(sc.Network),
		})
	}
	return out
}

func scriptNetwork(n *evidence.ScriptNetwork) *ScriptNetwork {
	if n == nil {
		return nil
	}
	return &ScriptNetwork{Attempts: n.Attempts, Wanted: nonNil(n.Wanted)}
}

// buildBehavior copies the behaviour evidence, in the order recorded.
func buildBehavior(bh *evidence.Behavior) *Behavior {
	if bh == nil {
		return nil
	}
	out := &Behavior{
		Watches:      make([]Watch, 0, len(bh.Watches)),
		Canaries:     make([]Canary, 0, len(bh.Canaries)),
		Network:      make([]NetEvent, 0, len(bh.Network)),
		Files:        make([]FileEvent, 0, len(bh.Files)),
		Processes:    make([]ProcessEvent, 0, len(bh.Processes)),
		Exfiltration: make([]CanaryHit, 0, len(bh.Exfiltration)),
	}
	for _, w := range bh.Watches {
		rw := Watch{Phase: w.Phase, WatchedMS: w.WatchedMS, IdleMS: w.IdleMS, Sink: w.Sink, Tracer: w.Tracer, Files: w.Files,
			Disk: append([]evidence.DiskUse{}, w.Disk...), Dropped: map[string]int{}}
		for k, n := range w.Dropped {
			rw.Dropped[k] = n
		}
		out.Watches = append(out.Watches, rw)
	}
	for _, c := range bh.Canaries {
		out.Canaries = append(out.Canaries, Canary{Kind: c.Kind, Where: c.Where})
	}
	for _, e := range bh.Network {
		out.Network = append(out.Network, NetEvent{
			Phase: e.Phase, Package: e.Package, Time: eventTime(e.Time), AfterHandshake: e.AfterHandshake, Stage: e.Stage, Call: e.Call,
			Kind: e.Kind, DstIP: e.DstIP, DstPort: e.DstPort, LiteralIP: e.LiteralIP, LookedUp: e.LookedUp, DNSName: e.DNSName, DNSType: e.DNSType,
			SNI: e.SNI, HTTPMethod: e.HTTPMethod, HTTPTarget: e.HTTPTarget, HTTPHost: e.HTTPHost, Preview: e.Preview, Bytes: e.Bytes,
			TLS: e.TLS, ALPN: e.ALPN, TLSRefused: e.TLSRefused, PID: e.PID, Exe: e.Exe, Secrets: nonNil(e.Secrets),
			Recipients: nonNil(e.Recipients),
		})
	}
	for _, f := range bh.Files {
		out.Files = append(out.Files, FileEvent{Phase: f.Phase, Package: f.Package, Path: f.Path, Op: f.Op, Sensitive: f.Sensitive, Why: f.Why})
	}
	for _, p := range bh.Processes {
		out.Processes = append(out.Processes, ProcessEvent{
			Phase: p.Phase, Package: p.Package, Time: eventTime(p.Time), PID: p.PID, PPID: p.PPID,
			Exe: p.Exe, Argv: nonNil(p.Argv), Provenance: string(p.Provenance), Expected: p.Expected, Call: p.Call,
		})
	}
	for _, h := range bh.Exfiltration {
		out.Exfiltration = append(out.Exfiltration, CanaryHit{
			Canary: Canary{Kind: h.Canary.Kind, Where: h.Canary.Where}, Phase: h.Phase, Package: h.Package,
			Channel: h.Channel, Encoding: h.Encoding, Destination: h.Destination, Masked: h.Masked, Call: h.Call,
		})
	}
	return out
}

// eventTime formats an event's time in UTC, or "" when it was not recorded.
func eventTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// normalizedContract returns a copy of c whose lists are never nil.
func normalizedContract(c *contract.Contract) *contract.Contract {
	if c == nil {
		return nil
	}
	n := *c
	n.Tools = nonNil(c.Tools)
	n.Prompts = make([]contract.Prompt, len(c.Prompts))
	for i, p := range c.Prompts {
		p.Arguments = nonNil(p.Arguments)
		n.Prompts[i] = p
	}
	n.Resources = nonNil(c.Resources)
	n.Templates = nonNil(c.Templates)
	return &n
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// WriteJSON writes the report as indented JSON. Characters special in
// HTML are written as they are, since package text such as
// "at Object.<anonymous>" reads badly escaped and the report is not HTML.
func WriteJSON(w io.Writer, rep Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rep); err != nil {
		return fmt.Errorf("report: write json: %w", err)
	}
	return nil
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func runOf(r evidence.Run) Run {
	out := Run{ID: r.ID, Date: r.Date.UTC().Format(time.RFC3339)}
	if rc := r.Recollected; rc != nil {
		out.Recollected = &Recollected{From: rc.From, Signals: rc.Signals, At: rc.At.UTC().Format(time.RFC3339), ToolVersion: rc.Tool.Version}
	}
	return out
}
