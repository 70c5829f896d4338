package sandbox

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
)

func TestCallAt(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 1, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	w := &watch{listEnd: at(0), calls: []time.Time{at(2000), at(2100), at(2500)}, callsEnd: at(2600), relistAt: at(2600), shutdownAt: at(3000)}
	for _, tt := range []struct {
		ms    int
		phase string
		call  int
		stage string
	}{
		{-10, evidence.PhaseRun, 0, evidence.StageStartup},
		{1000, evidence.PhaseRun, 0, evidence.StageIdle},
		{2000, evidence.PhaseRun, 1, evidence.StageCall},
		{2099, evidence.PhaseRun, 1, evidence.StageCall},
		{2100, evidence.PhaseRun, 2, evidence.StageCall},
		{2599, evidence.PhaseRun, 3, evidence.StageCall},
		{2601, evidence.PhaseRun, 0, evidence.StageStartup},
		{2700, evidence.PhaseRun, 0, evidence.StageStartup},
		{3100, evidence.PhaseRun, 0, evidence.StageShutdown},
		{2050, evidence.PhaseScripts, 0, ""},
	} {
		if got := w.callAt(tt.phase, at(tt.ms)); got != tt.call {
			t.Errorf("callAt(%s, %d ms) = %d, want %d", tt.phase, tt.ms, got, tt.call)
		}
		if tt.phase != evidence.PhaseRun {
			continue
		}
		if stage, _ := w.runStage(at(tt.ms)); stage != tt.stage {
			t.Errorf("runStage(%d ms) = %s, want %s", tt.ms, stage, tt.stage)
		}
	}
	// Without the end mark, the second listing closes the last window.
	w.callsEnd = time.Time{}
	if got := w.callAt(evidence.PhaseRun, at(2650)); got != 0 {
		t.Errorf("after the relisting: call %d", got)
	}
	if got := (&watch{}).callAt(evidence.PhaseRun, at(5)); got != 0 {
		t.Errorf("no calls: call %d", got)
	}
}

func TestRequestText(t *testing.T) {
	for _, tt := range []struct{ method, params, want string }{
		{"sampling/createMessage", `{"systemPrompt":"Be brief.","messages":[{"role":"user","content":{"type":"text","text":"Summarise this."}},{"role":"assistant","content":[{"type":"text","text":"Sure"},{"type":"image","data":"AA=="}]}],"maxTokens":10}`,
			"system: Be brief.\nuser: Summarise this.\nassistant: Sure"},
		{"elicitation/create", `{"message":"Your API key, please","requestedSchema":{"type":"object"}}`, "Your API key, please"},
		{"elicitation/create", `{"mode":"url","message":"Sign in","url":"https://login.example.com/x"}`, "Sign in\nurl: https://login.example.com/x"},
		{"roots/list", ``, ""},
		{"sampling/createMessage", `not json`, ""},
	} {
		if got := requestText(tt.method, json.RawMessage(tt.params)); got != tt.want {
			t.Errorf("requestText(%s, %s) = %q, want %q", tt.method, tt.params, got, tt.want)
		}
	}
}

func TestClientRequests(t *testing.T) {
	t0 := time.Now()
	calls := []evidence.ToolCall{{Call: 1, Start: t0, DurationMS: 100}, {Call: 2, Start: t0.Add(200 * time.Millisecond), DurationMS: 50}}
	asked := []serverRequest{
		{method: "roots/list", at: t0.Add(10 * time.Millisecond), answer: "result"},
		{method: "sampling/createMessage", params: json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}`), at: t0.Add(210 * time.Millisecond), answer: "error: client does not support CreateMessage"},
		{method: "elicitation/create", at: t0.Add(time.Second)},
	}
	r := &run{mask: newMasker(nil, nil)}
	got := clientRequests(r, asked, calls)
	want := []evidence.ClientRequest{
		{Call: 1, Method: "roots/list", Answer: "roots: file:///home/sandbox/work"},
		{Call: 2, Method: "sampling/createMessage", Text: "user: hi", Answer: "declined (client does not support CreateMessage)"},
		{Method: "elicitation/create", Answer: "none"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("request %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
