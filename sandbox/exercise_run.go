package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/sandbox/exercise"
)

// The exercise: once the idle watch has ended, each listed tool is called
// once, one at a time, so that everything in a call's window is that
// call's doing: read-only tools first, destructive ones last
// (exercise.Order), with arguments generated from the tool's input schema
// (exercise.Arguments) that point at places the sandbox controls. Before
// the first call and after each one the observer compares the home and
// /tmp (filewatch.go); the sink's and the tracer's events carry the call
// whose window they came in (watch.callAt). The second listing follows the
// calls, so a surface that changed after use is seen and classified.

// Defaults of the exercise's bounds (Options.CallTimeout, CallBudget).
const (
	DefaultCallTimeout = time.Second
	DefaultCallBudget  = 15 * time.Second
	// callSettle is how long after a call's answer the next call waits:
	// what the tool set off on answering lands in its own window.
	callSettle = 25 * time.Millisecond
	// maxResultText bounds the result text kept of one call.
	maxResultText = 8 << 10
	// maxCalls bounds the tools called.
	maxCalls = 200
)

// exercisePlaces are what the generated arguments point at: the scratch
// directory and its decoys (seeded into the home, the client's one root),
// a URL, a host and a mail address.
var exercisePlaces = exercise.DefaultPlaces()

// exercising reports whether the sandbox calls the listed tools: only
// with behaviour capture on, which watches what each call does.
func (o Options) exercising() bool { return o.Behavior && !o.NoExercise }

// exerciseTools calls the tools of c over the session ss (see the top of
// this file) and returns what it did.
func (s *Sandbox) exerciseTools(ctx context.Context, r *run, ss session, c *contract.Contract, w observer) *evidence.Exercise {
	places := exercisePlaces
	ex := &evidence.Exercise{
		CallTimeoutMS: s.opts.CallTimeout.Milliseconds(), BudgetMS: s.opts.CallBudget.Milliseconds(),
		Scratch: places.Scratch, Placeholders: places.Map(), FileCheck: "ok",
		Calls: []evidence.ToolCall{}, NotCalled: []evidence.NotCalled{},
	}
	for _, d := range places.Decoys {
		ex.Decoys = append(ex.Decoys, d.Path)
	}
	start := time.Now()
	deadline := start.Add(s.opts.CallBudget)
	if _, err := w.lookFiles(ctx); err != nil {
		ex.FileCheck = "error: " + err.Error()
	}
	seeded := w.seededFiles()
	stopped := ""
	for _, t := range exercise.Order(c.Tools) {
		args, err := exercise.Arguments(t.InputSchema, places)
		switch {
		case stopped != "":
			ex.NotCalled = append(ex.NotCalled, evidence.NotCalled{Tool: t.Name, Reason: stopped})
			continue
		case err != nil:
			ex.NotCalled = append(ex.NotCalled, evidence.NotCalled{Tool: t.Name, Reason: "its input schema cannot be satisfied: " + err.Error()})
			continue
		case len(ex.Calls) >= maxCalls:
			ex.NotCalled = append(ex.NotCalled, evidence.NotCalled{Tool: t.Name, Reason: fmt.Sprintf("past the bound of %d calls", maxCalls)})
			continue
		case !time.Now().Before(deadline):
			ex.NotCalled = append(ex.NotCalled, evidence.NotCalled{Tool: t.Name, Reason: "the exercise budget of " + s.opts.CallBudget.String() + " ran out"})
			continue
		}
		call := s.callTool(ctx, r, ss, w, t, args, len(ex.Calls)+1, deadline)
		if ex.FileCheck == "ok" {
			look, err := w.lookFiles(ctx)
			switch {
			case err != nil:
				ex.FileCheck = "error: " + err.Error()
			case look.Incomplete != "":
				ex.FileCheck = "incomplete: " + look.Incomplete
			}
			call.Files = callFiles(look, places, seeded)
		}
		ex.Calls = append(ex.Calls, call)
		if call.Outcome == evidence.CallExited || ctx.Err() != nil {
			stopped = fmt.Sprintf("the server exited during call %d (%s)", call.Call, call.Tool)
		}
	}
	w.callsDone()
	ex.ElapsedMS = time.Since(start).Milliseconds()
	ex.ClientRequests = clientRequests(r, ss.w.serverRequests(start), ex.Calls)
	return ex
}

// callTool makes call n of tool t with args, within the per-call timeout
// and what is left of the budget, and waits callSettle after the answer.
func (s *Sandbox) callTool(ctx context.Context, r *run, ss session, w observer, t contract.Tool, args json.RawMessage, n int, deadline time.Time) evidence.ToolCall {
	call := evidence.ToolCall{Call: n, Tool: t.Name, Arguments: args}
	limit := min(s.opts.CallTimeout, time.Until(deadline))
	callCtx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	w.calling(n)
	call.Start = time.Now().UTC()
	res, err := ss.cs.CallTool(callCtx, &mcp.CallToolParams{Name: t.Name, Arguments: args})
	call.DurationMS = time.Since(call.Start).Milliseconds()
	var rpcErr *jsonrpc.Error
	switch {
	case errors.Is(context.Cause(ctx), errExited) || errors.Is(err, mcp.ErrConnectionClosed):
		call.Outcome, call.Error = evidence.CallExited, "the server exited before it answered"
	case err != nil && callCtx.Err() != nil:
		call.Outcome, call.Error = evidence.CallTimeout, "no answer within "+limit.Round(time.Millisecond).String()
	case errors.As(err, &rpcErr):
		call.Outcome, call.Error = evidence.CallError, r.mask.text(clip(rpcErr.Message, 1000), "exercise")
	case err != nil:
		call.Outcome, call.Error = evidence.CallError, r.mask.text(clip(err.Error(), 1000), "exercise")
	default:
		call.Outcome = evidence.CallResult
		if res.IsError {
			call.Outcome = evidence.CallToolError
		}
		text, size := resultText(res)
		call.ResultBytes = size
		full := r.mask.text(strings.ToValidUTF8(text, "\uFFFD"), "exercise")
		call.Result = clip(full, maxResultText)
		call.ResultTruncated = len(call.Result) < len(full)
	}
	if call.Outcome != evidence.CallExited {
		select {
		case <-ctx.Done():
		case <-time.After(callSettle):
		}
	}
	return call
}

// resultText is a call result as text: its text items, what the others
// are, and its structured content as JSON; and the size of the result.
func resultText(res *mcp.CallToolResult) (string, int64) {
	raw, _ := json.Marshal(res)
	var parts []string
	for _, c := range res.Content {
		switch v := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, v.Text)
		case *mcp.ImageContent:
			parts = append(parts, "[image "+v.MIMEType+"]")
		case *mcp.AudioContent:
			parts = append(parts, "[audio "+v.MIMEType+"]")
		case *mcp.ResourceLink:
			parts = append(parts, "[resource link "+v.URI+"]")
		case *mcp.EmbeddedResource:
			if v.Resource != nil {
				if v.Resource.Text != "" {
					parts = append(parts, v.Resource.Text)
				} else {
					parts = append(parts, "[resource "+v.Resource.URI+"]")
				}
			}
		}
	}
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	return strings.Join(parts, "\n"), int64(len(raw))
}

// callFiles turns the observer's look after a call into the call's files,
// marking the decoys and the files the sandbox seeded.
func callFiles(look fileLook, places exercise.Places, seeded map[string]bool) []evidence.CallFile {
	decoys := map[string]bool{}
	for _, d := range places.Decoys {
		decoys[path.Join(places.Scratch, d.Path)] = true
	}
	var out []evidence.CallFile
	for _, ch := range look.Changes {
		out = append(out, evidence.CallFile{Path: ch.Path, Op: ch.Op, Decoy: decoys[ch.Path], Seeded: seeded[ch.Path]})
	}
	return out
}

// clientRequests turns the requests the server sent during the calls into
// evidence: the call in flight when each came, its text (masked, bounded)
// and the client's answer.
func clientRequests(r *run, asked []serverRequest, calls []evidence.ToolCall) []evidence.ClientRequest {
	var out []evidence.ClientRequest
	for _, q := range asked {
		n := 0
		for _, c := range calls {
			end := c.Start.Add(time.Duration(c.DurationMS)*time.Millisecond + callSettle)
			if !q.at.Before(c.Start) && !q.at.After(end) {
				n = c.Call
			}
		}
		answer := q.answer
		switch {
		case answer == "":
			answer = "none"
		case q.method == "roots/list" && answer == "result":
			answer = "roots: file://" + exercisePlaces.Scratch
		case strings.HasPrefix(answer, "error: "):
			answer = "declined (" + strings.TrimPrefix(answer, "error: ") + ")"
		}
		text := r.mask.text(strings.ToValidUTF8(requestText(q.method, q.params), "\uFFFD"), "exercise")
		out = append(out, evidence.ClientRequest{Call: n, Method: q.method, Text: clip(text, maxResultText), Answer: answer})
	}
	return out
}
