package sandbox

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Requests the server sends the client. The client advertises what the
// MCP Inspector's does (clientCapabilities: roots, and no sampling or
// elicitation), so the go-sdk answers roots/list with the client's roots
// and refuses the rest; whatever it answers, every request is recorded
// here as it crossed the wire, with its parameters bounded, so that what
// a server asked of the client's model is evidence.

// maxServerRequests bounds the requests recorded; maxRequestParams the
// parameters kept of one.
const (
	maxServerRequests = 100
	maxRequestParams  = 16 << 10
)

// serverRequest is one request the server sent the client.
type serverRequest struct {
	id     string // the JSON-RPC id, as text
	method string
	params json.RawMessage
	at     time.Time
	// answer is what the client answered: "result" or the error's
	// message; empty until it answered.
	answer string
}

// serverRequest records a request the server sent.
func (w *wire) serverRequest(m *jsonrpc.Request) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.asked) >= maxServerRequests {
		return
	}
	p := m.Params
	if len(p) > maxRequestParams {
		p = nil
	}
	w.asked = append(w.asked, &serverRequest{id: idText(m.ID), method: clip(m.Method, 100), params: append(json.RawMessage(nil), p...), at: time.Now()})
}

// clientAnswer records the client's answer to a request of the server.
func (w *wire) clientAnswer(r *jsonrpc.Response) {
	w.mu.Lock()
	defer w.mu.Unlock()
	id := idText(r.ID)
	for i := len(w.asked) - 1; i >= 0; i-- {
		if q := w.asked[i]; q.id == id && q.answer == "" {
			q.answer = "result"
			if r.Error != nil {
				q.answer = "error: " + clip(r.Error.Error(), 200)
			}
			return
		}
	}
}

// serverRequests returns the requests the server sent from since on.
func (w *wire) serverRequests(since time.Time) []serverRequest {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []serverRequest
	for _, q := range w.asked {
		if !q.at.Before(since) {
			out = append(out, *q)
		}
	}
	return out
}

func idText(id jsonrpc.ID) string { return fmt.Sprint(id.Raw()) }

// requestText is the text a request of the server asks the client's model
// or user: a sampling request's system prompt and messages, an
// elicitation's message (and URL); empty for one that carries none.
func requestText(method string, params json.RawMessage) string {
	var p struct {
		SystemPrompt string `json:"systemPrompt"`
		Messages     []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Message string `json:"message"`
		URL     string `json:"url"`
	}
	if len(params) == 0 || json.Unmarshal(params, &p) != nil {
		return ""
	}
	var parts []string
	if p.SystemPrompt != "" {
		parts = append(parts, "system: "+p.SystemPrompt)
	}
	for _, m := range p.Messages {
		for _, t := range contentTexts(m.Content) {
			parts = append(parts, m.Role+": "+t)
		}
	}
	if p.Message != "" {
		parts = append(parts, p.Message)
	}
	if p.URL != "" {
		parts = append(parts, "url: "+p.URL)
	}
	return strings.Join(parts, "\n")
}

// contentTexts returns the texts of a content item or array of them.
func contentTexts(raw json.RawMessage) []string {
	type item struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	var one item
	if json.Unmarshal(raw, &one) == nil {
		if one.Text != "" {
			return []string{one.Text}
		}
		return nil
	}
	var many []item
	if json.Unmarshal(raw, &many) != nil {
		return nil
	}
	var out []string
	for _, it := range many {
		if it.Text != "" {
			out = append(out, it.Text)
		}
	}
	return out
}
