// Package judgetest is a fake OpenAI-compatible chat completions API on
// loopback, for tests of the judge and for end-to-end tests that point the
// verifymcp binary at it. It answers POST /v1/chat/completions in the
// shape of OpenAI's API (id, object, created, model, choices with
// index, message{role, content, refusal} and finish_reason, usage), with
// answers scripted as a function of the request, and can misbehave the
// ways real endpoints do: 429 with Retry-After, 5xx, a malformed body or
// content, a refusal, a truncated answer (finish_reason "length") and a
// slow answer. It records every request and counts them.
//
// It knows nothing of the judge: a script reads the request it is given
// and returns the reply.
package judgetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"time"
)

// Request is one request as the fake received it.
type Request struct {
	// N counts the fake's requests from 1.
	N      int
	Method string
	Path   string
	Header http.Header
	// Body is the raw request body.
	Body []byte
	// Chat is Body decoded; zero when it was not a chat request.
	Chat ChatRequest
}

// ChatRequest is the part of a chat completions request the fake decodes.
// Pointers tell a field that was sent from one that was omitted.
type ChatRequest struct {
	Model               string          `json:"model"`
	Messages            []Message       `json:"messages"`
	Temperature         *float64        `json:"temperature"`
	Seed                *int64          `json:"seed"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	ResponseFormat      json.RawMessage `json:"response_format"`
	Stream              bool            `json:"stream"`
}

// Message is one chat message of a request.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Reply is how the fake answers one request. The zero value is a 200 with
// an empty assistant message and finish_reason "stop".
type Reply struct {
	// Content is the assistant message content.
	Content string
	// Refusal, when set, answers with a refusal and null content.
	Refusal string
	// FinishReason defaults to "stop".
	FinishReason string
	// Status, when not 0 or 200, answers with that status and OpenAI's
	// error body for it.
	Status int
	// RetryAfter is sent as the Retry-After header.
	RetryAfter string
	// Body, when set, is sent verbatim as the answer body (with Status,
	// or 200): a malformed answer.
	Body string
	// Delay holds the answer back; a client that gives up ends the wait.
	Delay time.Duration
}

// Script chooses the reply to a request.
type Script func(r Request) Reply

// Always answers every request with r.
func Always(r Reply) Script { return func(Request) Reply { return r } }

// Sequence answers the nth request with replies[n-1], and every request
// after the last with the last.
func Sequence(replies ...Reply) Script {
	return func(r Request) Reply {
		if len(replies) == 0 {
			return Reply{}
		}
		return replies[min(r.N, len(replies))-1]
	}
}

// Verdict is one verdict in the answer format of the judge specification.
type Verdict struct {
	Tool      string `json:"tool"`
	Code      string `json:"code"`
	Evidence  string `json:"evidence"`
	Rationale string `json:"rationale"`
}

// Verdicts is the content of an answer holding vs (an empty list when
// none).
func Verdicts(vs ...Verdict) string {
	if vs == nil {
		vs = []Verdict{}
	}
	b, err := json.Marshal(struct {
		Verdicts []Verdict `json:"verdicts"`
	}{vs})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Server is the fake API.
type Server struct {
	srv     *httptest.Server
	closing chan struct{}
	once    sync.Once

	mu       sync.Mutex
	script   Script
	requests []Request
}

// New starts the fake with script (nil answers every request with no
// verdicts). Close it when done.
func New(script Script) *Server {
	if script == nil {
		script = Always(Reply{Content: Verdicts()})
	}
	s := &Server{script: script, closing: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

// URL is the server's root, http://127.0.0.1:port.
func (s *Server) URL() string { return s.srv.URL }

// BaseURL is the API base a client is configured with, URL()+"/v1".
func (s *Server) BaseURL() string { return s.srv.URL + "/v1" }

// Close ends waiting answers, then stops the server; later calls do nothing.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.closing)
		s.srv.Close()
	})
}

// SetScript replaces the script for later requests.
func (s *Server) SetScript(script Script) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = script
}

// Count is the number of requests received.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// Requests returns the requests received, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	_ = json.Unmarshal(body, &req.Chat)
	s.mu.Lock()
	req.N = len(s.requests) + 1
	s.requests = append(s.requests, req)
	script := s.script
	s.mu.Unlock()

	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		writeError(w, http.StatusNotFound, fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path), "invalid_request_error", "")
		return
	}
	rep := script(req)
	if rep.Delay > 0 {
		t := time.NewTimer(rep.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		case <-s.closing:
			return
		}
	}
	if rep.RetryAfter != "" {
		w.Header().Set("Retry-After", rep.RetryAfter)
	}
	w.Header().Set("X-Request-Id", "req_fake_"+strconv.Itoa(req.N))
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	switch {
	case rep.Body != "":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, rep.Body)
	case status == http.StatusTooManyRequests:
		writeError(w, status, "Rate limit reached for requests. Please try again later.", "requests", "rate_limit_exceeded")
	case status >= 500:
		writeError(w, status, "The server had an error while processing your request. Sorry about that!", "server_error", "")
	case status == http.StatusUnauthorized:
		writeError(w, status, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key")
	case status != http.StatusOK:
		writeError(w, status, "The request was rejected.", "invalid_request_error", "")
	default:
		writeCompletion(w, req, rep)
	}
}

// completion is the body of a chat completion, field for field as OpenAI
// sends it.
type completion struct {
	ID                string   `json:"id"`
	Object            string   `json:"object"`
	Created           int64    `json:"created"`
	Model             string   `json:"model"`
	Choices           []choice `json:"choices"`
	Usage             usage    `json:"usage"`
	ServiceTier       string   `json:"service_tier"`
	SystemFingerprint string   `json:"system_fingerprint"`
}

type choice struct {
	Index        int             `json:"index"`
	Message      message         `json:"message"`
	Logprobs     json.RawMessage `json:"logprobs"`
	FinishReason string          `json:"finish_reason"`
}

type message struct {
	Role        string   `json:"role"`
	Content     *string  `json:"content"`
	Refusal     *string  `json:"refusal"`
	Annotations []string `json:"annotations"`
}

type usage struct {
	PromptTokens            int            `json:"prompt_tokens"`
	CompletionTokens        int            `json:"completion_tokens"`
	TotalTokens             int            `json:"total_tokens"`
	PromptTokensDetails     map[string]int `json:"prompt_tokens_details"`
	CompletionTokensDetails map[string]int `json:"completion_tokens_details"`
}

func writeCompletion(w http.ResponseWriter, req Request, rep Reply) {
	msg := message{Role: "assistant", Annotations: []string{}}
	if rep.Refusal != "" {
		msg.Refusal = &rep.Refusal
	} else {
		msg.Content = &rep.Content
	}
	finish := rep.FinishReason
	if finish == "" {
		finish = "stop"
	}
	// Token counts are rough (four bytes a token), as a real server's are
	// for the client's purposes.
	in, out := len(req.Body)/4, (len(rep.Content)+len(rep.Refusal))/4
	c := completion{
		ID:      fmt.Sprintf("chatcmpl-fake%06d", req.N),
		Object:  "chat.completion",
		Created: time.Now().Unix(),
		Model:   req.Chat.Model,
		Choices: []choice{{Index: 0, Message: msg, Logprobs: json.RawMessage("null"), FinishReason: finish}},
		Usage: usage{PromptTokens: in, CompletionTokens: out, TotalTokens: in + out,
			PromptTokensDetails:     map[string]int{"cached_tokens": 0, "audio_tokens": 0},
			CompletionTokensDetails: map[string]int{"reasoning_tokens": 0, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}},
		ServiceTier:       "default",
		SystemFingerprint: "fp_judgetest",
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c); err != nil {
		writeError(w, http.StatusInternalServerError, err.Error(), "server_error", "")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Openai-Processing-Ms", "1")
	_, _ = w.Write(buf.Bytes())
}

// writeError writes OpenAI's error body.
func writeError(w http.ResponseWriter, status int, msg, typ, code string) {
	var c any
	if code != "" {
		c = code
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": c}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
