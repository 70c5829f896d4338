package evidence

import (
	"encoding/json"
	"time"
)

// SignalExercise is the tool calls of the run phase: observed when the
// sandbox called the listed tools (whatever each call answered),
// not_assessed when it did not (--no-exercise, behaviour capture off, no
// tool listed, the session failed), error when its own driver failed.
const SignalExercise = "sandbox.exercise"

// StageCall places a run-phase event in a tool call's window: from the
// call's request until the next call's (or, after the last, until the
// second listing began); NetEvent.Call names the call.
const StageCall = "call"

// Outcomes of one tool call (ToolCall.Outcome).
const (
	// CallResult: the tool answered with a result.
	CallResult = "result"
	// CallToolError: the tool answered with a result marked isError (the
	// tool ran and reported its own failure, as for a missing API key).
	CallToolError = "tool_error"
	// CallError: the server answered with a JSON-RPC error.
	CallError = "error"
	// CallTimeout: no answer within the per-call timeout; the call was
	// cancelled.
	CallTimeout = "timeout"
	// CallExited: the server exited during the call.
	CallExited = "exited"
)

// Exercise is what the sandbox did with the listed tools, once the idle
// watch had ended: each tool called once, one at a time so that every
// event of a call's window is that call's, read-only tools first and
// destructive ones last, with arguments generated from its input schema
// and pointing at places the sandbox controls (a scratch directory of
// decoy files, names the sink answers, a placeholder mail address). What
// each call did is in Calls (its files) and, marked with the call's
// number, in Behavior (network, processes, canaries).
type Exercise struct {
	// CallTimeoutMS and BudgetMS are the per-call timeout and the total
	// budget of the calls; ElapsedMS is how long the calls took.
	CallTimeoutMS int64 `json:"call_timeout_ms"`
	BudgetMS      int64 `json:"budget_ms"`
	ElapsedMS     int64 `json:"elapsed_ms"`
	// Scratch is the scratch directory (the client's one root, and where
	// a path argument points); Decoys the files planted in it, relative
	// to it.
	Scratch string   `json:"scratch"`
	Decoys  []string `json:"decoys"`
	// Placeholders are the values the arguments point at: "url" (a URL on
	// a name the sink answers), "email" (a mail address on such a name),
	// "host". Values the sandbox made up, never secrets.
	Placeholders map[string]string `json:"placeholders,omitempty"`
	// FileCheck says whether the per-call file check (home, /tmp and the
	// scratch directory compared before and after each call) worked: "ok",
	// or why not.
	FileCheck string `json:"file_check"`
	// Calls are the calls made, in order; NotCalled the listed tools that
	// were not, each with its reason.
	Calls     []ToolCall  `json:"calls"`
	NotCalled []NotCalled `json:"not_called"`
	// ClientRequests are the requests the server sent the client after
	// the listing (roots/list, sampling/createMessage, elicitation/create,
	// ...), with how the client answered.
	ClientRequests []ClientRequest `json:"client_requests,omitempty"`
}

// ToolCall is one call of one tool.
type ToolCall struct {
	// Call is the call's number, from 1: NetEvent.Call, ProcessEvent.Call
	// and CanaryHit.Call refer to it.
	Call int    `json:"call"`
	Tool string `json:"tool"`
	// Arguments are the generated arguments, as sent (they hold no
	// secret: every value is a placeholder).
	Arguments json.RawMessage `json:"arguments"`
	Start     time.Time       `json:"start"`
	// DurationMS is how long the answer took.
	DurationMS int64 `json:"duration_ms"`
	// Outcome is CallResult, CallToolError, CallError, CallTimeout or
	// CallExited.
	Outcome string `json:"outcome"`
	// Error is the JSON-RPC error's message, or why there was no answer.
	Error string `json:"error,omitempty"`
	// Result is the text of the result's content (text items, and
	// structured content as JSON), bounded and masked; ResultBytes the
	// size of the whole result as sent; ResultTruncated whether Result
	// was cut.
	Result          string `json:"result,omitempty"`
	ResultBytes     int64  `json:"result_bytes"`
	ResultTruncated bool   `json:"result_truncated,omitempty"`
	// Files are the files created, modified or deleted in the home
	// directory (the scratch directory and its decoys included) and in
	// /tmp during the call's window. Decoy marks a planted decoy.
	Files []CallFile `json:"files,omitempty"`
}

// CallFile is one file changed during a call.
type CallFile struct {
	// Path is absolute, inside the sandbox.
	Path string `json:"path"`
	Op   string `json:"op"` // created, modified, deleted
	// Decoy marks a decoy of the scratch directory; Seeded a file the
	// sandbox planted elsewhere (canary credentials, the lived-in home).
	Decoy  bool `json:"decoy,omitempty"`
	Seeded bool `json:"seeded,omitempty"`
}

// NotCalled is a listed tool that was not called.
type NotCalled struct {
	Tool string `json:"tool"`
	// Reason says why: the schema cannot be satisfied (and how), the
	// budget ran out, the server exited.
	Reason string `json:"reason"`
}

// ClientRequest is a request the server sent the client.
type ClientRequest struct {
	// Call is the call in flight when it came, 0 when none was.
	Call   int    `json:"call,omitempty"`
	Method string `json:"method"`
	// Text is what the request asks, as text (a sampling request's
	// messages and system prompt, an elicitation's message), bounded and
	// masked; empty for a request that carries none (roots/list).
	Text string `json:"text,omitempty"`
	// Answer is how the client answered: "roots: file:///...",
	// "declined", "method not found".
	Answer string `json:"answer"`
}
