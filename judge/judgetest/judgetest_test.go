package judgetest_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/verifymcp/verifymcp/judge/judgetest"
)

func client(s *judgetest.Server) *openai.Client {
	cfg := openai.DefaultConfig("sk-fake")
	cfg.BaseURL = s.BaseURL()
	return openai.NewClientWithConfig(cfg)
}

var chat = openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}}

// The fake's answers decode with go-openai, the client the judge uses.
func TestAnswersDecode(t *testing.T) {
	s := judgetest.New(judgetest.Sequence(
		judgetest.Reply{Content: judgetest.Verdicts(judgetest.Verdict{Tool: "t", Code: "c", Evidence: "e", Rationale: "r"})},
		judgetest.Reply{Refusal: "I can't help with that."},
		judgetest.Reply{Content: `{"verdicts":[`, FinishReason: "length"},
	))
	defer s.Close()
	c := client(s)
	r, err := c.CreateChatCompletion(context.Background(), chat)
	if err != nil {
		t.Fatal(err)
	}
	if r.Object != "chat.completion" || r.Model != "m" || r.ID == "" || r.Created == 0 || r.Usage.TotalTokens == 0 ||
		r.Choices[0].Message.Role != "assistant" || r.Choices[0].FinishReason != openai.FinishReasonStop ||
		r.Choices[0].Message.Content != `{"verdicts":[{"tool":"t","code":"c","evidence":"e","rationale":"r"}]}` {
		t.Errorf("answer %+v", r)
	}
	r, err = c.CreateChatCompletion(context.Background(), chat)
	if err != nil || r.Choices[0].Message.Refusal != "I can't help with that." || r.Choices[0].Message.Content != "" {
		t.Errorf("refusal: %+v, %v", r, err)
	}
	r, err = c.CreateChatCompletion(context.Background(), chat)
	if err != nil || r.Choices[0].FinishReason != openai.FinishReasonLength {
		t.Errorf("truncated: %+v, %v", r, err)
	}
	if s.Count() != 3 {
		t.Errorf("count %d", s.Count())
	}
	req := s.Requests()[0]
	if req.N != 1 || req.Chat.Model != "m" || req.Chat.Messages[0].Content != "hi" || req.Header.Get("Authorization") != "Bearer sk-fake" {
		t.Errorf("recorded %+v", req)
	}
}

func TestFaults(t *testing.T) {
	s := judgetest.New(judgetest.Sequence(
		judgetest.Reply{Status: http.StatusTooManyRequests, RetryAfter: "3"},
		judgetest.Reply{Status: http.StatusInternalServerError},
		judgetest.Reply{Body: `{"id":`},
	))
	defer s.Close()
	post := func() (*http.Response, string) {
		resp, err := http.Post(s.BaseURL()+"/chat/completions", "application/json", strings.NewReader(`{"model":"m"}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, body := post()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "3" || !strings.Contains(body, `"code":"rate_limit_exceeded"`) {
		t.Errorf("429: %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	resp, body = post()
	if resp.StatusCode != 500 || !strings.Contains(body, `"type":"server_error"`) {
		t.Errorf("500: %d %s", resp.StatusCode, body)
	}
	resp, body = post()
	if resp.StatusCode != 200 || body != `{"id":` {
		t.Errorf("malformed: %d %s", resp.StatusCode, body)
	}
	resp, _ = func() (*http.Response, string) {
		r, err := http.Get(s.URL() + "/v1/models")
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		return r, ""
	}()
	if resp.StatusCode != 404 {
		t.Errorf("unknown path: %d", resp.StatusCode)
	}
}

func TestDelayEndsWithTheClient(t *testing.T) {
	s := judgetest.New(judgetest.Always(judgetest.Reply{Delay: time.Minute}))
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := client(s).CreateChatCompletion(ctx, chat)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Errorf("err %v after %v", err, time.Since(start))
	}
}
