package report

import (
	"bytes"
	"encoding/json"

	"github.com/verifymcp/verifymcp/evidence"
)

// Exercise is the tool calls of the run phase: after the idle watch the
// sandbox called each listed tool once, with arguments generated from its
// input schema and pointing at places it controls. What a call did is in
// its row (its files, and counts of its network events and processes)
// and, marked with the call's number, in behavior.
type Exercise struct {
	CallTimeoutMS int64 `json:"call_timeout_ms"`
	BudgetMS      int64 `json:"budget_ms"`
	ElapsedMS     int64 `json:"elapsed_ms"`
	// Scratch is the scratch directory the path arguments point into;
	// Decoys the files planted in it, relative to it.
	Scratch string   `json:"scratch"`
	Decoys  []string `json:"decoys"`
	// Placeholders are the values the arguments point at (url, email,
	// host): made up by the sandbox, never secrets.
	Placeholders map[string]string `json:"placeholders"`
	// FileCheck is "ok", or why the per-call file check did not work.
	FileCheck      string          `json:"file_check"`
	Calls          []ToolCall      `json:"calls"`
	NotCalled      []NotCalled     `json:"not_called"`
	ClientRequests []ClientRequest `json:"client_requests"`
}

// ToolCall is one call of one tool, with what it answered and what the
// package did in its window.
type ToolCall struct {
	Call int    `json:"call"`
	Tool string `json:"tool"`
	// Arguments are the arguments as sent.
	Arguments  json.RawMessage `json:"arguments"`
	Start      string          `json:"start"` // UTC, RFC 3339; "" when not recorded
	DurationMS int64           `json:"duration_ms"`
	// Outcome is result, tool_error, error, timeout or exited.
	Outcome string `json:"outcome"`
	Error   string `json:"error"`
	// Result is the result's text, bounded and masked by the sandbox;
	// ResultBytes the size of the whole result as sent.
	Result          string     `json:"result"`
	ResultBytes     int64      `json:"result_bytes"`
	ResultTruncated bool       `json:"result_truncated"`
	Files           []CallFile `json:"files"`
	// Network, Processes and Canaries count the events of behavior whose
	// call is this one.
	Network   int `json:"network"`
	Processes int `json:"processes"`
	Canaries  int `json:"canaries"`
}

// CallFile is one file created, modified or deleted during a call.
type CallFile struct {
	Path   string `json:"path"`
	Op     string `json:"op"`
	Decoy  bool   `json:"decoy"`
	Seeded bool   `json:"seeded"`
}

// NotCalled is a listed tool that was not called, and why.
type NotCalled struct {
	Tool   string `json:"tool"`
	Reason string `json:"reason"`
}

// ClientRequest is a request the server sent the client after the
// listing, and how the client answered.
type ClientRequest struct {
	Call   int    `json:"call,omitempty"` // 0: no call was in flight
	Method string `json:"method"`
	Text   string `json:"text"`
	Answer string `json:"answer"`
}

// buildExercise is the report's exercise, from the bundle's; nil when the
// bundle has none. The counts are read from bh, the report's behaviour.
func buildExercise(ex *evidence.Exercise, bh *Behavior) *Exercise {
	if ex == nil {
		return nil
	}
	out := &Exercise{
		CallTimeoutMS: ex.CallTimeoutMS, BudgetMS: ex.BudgetMS, ElapsedMS: ex.ElapsedMS,
		Scratch: ex.Scratch, Decoys: nonNil(ex.Decoys), Placeholders: map[string]string{}, FileCheck: ex.FileCheck,
		Calls: make([]ToolCall, 0, len(ex.Calls)), NotCalled: make([]NotCalled, 0, len(ex.NotCalled)),
		ClientRequests: make([]ClientRequest, 0, len(ex.ClientRequests)),
	}
	for k, v := range ex.Placeholders {
		out.Placeholders[k] = v
	}
	net, procs, hits := map[int]int{}, map[int]int{}, map[int]int{}
	if bh != nil {
		for _, e := range bh.Network {
			net[e.Call]++
		}
		for _, p := range bh.Processes {
			procs[p.Call]++
		}
		for _, h := range bh.Exfiltration {
			hits[h.Call]++
		}
	}
	for _, c := range ex.Calls {
		tc := ToolCall{
			Call: c.Call, Tool: c.Tool, Arguments: arguments(c.Arguments), Start: eventTime(c.Start), DurationMS: c.DurationMS,
			Outcome: c.Outcome, Error: c.Error, Result: c.Result, ResultBytes: c.ResultBytes, ResultTruncated: c.ResultTruncated,
			Files: make([]CallFile, 0, len(c.Files)), Network: net[c.Call], Processes: procs[c.Call], Canaries: hits[c.Call],
		}
		for _, f := range c.Files {
			tc.Files = append(tc.Files, CallFile{Path: f.Path, Op: f.Op, Decoy: f.Decoy, Seeded: f.Seeded})
		}
		out.Calls = append(out.Calls, tc)
	}
	for _, n := range ex.NotCalled {
		out.NotCalled = append(out.NotCalled, NotCalled{Tool: n.Tool, Reason: n.Reason})
	}
	for _, r := range ex.ClientRequests {
		out.ClientRequests = append(out.ClientRequests, ClientRequest{Call: r.Call, Method: r.Method, Text: r.Text, Answer: r.Answer})
	}
	return out
}

// arguments is a call's arguments as compact JSON: null when none were
// recorded, and a JSON string of the bytes when they are not JSON, so
// that the report is always written.
func arguments(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("null")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err == nil {
		return buf.Bytes()
	}
	s, err := json.Marshal(string(raw))
	if err != nil {
		return json.RawMessage("null")
	}
	return s
}
