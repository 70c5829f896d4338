package report

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestExerciseJSON checks what the report carries of the exercise
// fixture's tool calls: every call with its arguments as sent and the
// counts of its events read from behavior, the tools not called, the
// client requests, the call of each event in a call's window and the
// calls before the second listing.
func TestExerciseJSON(t *testing.T) {
	rep := build(t, loadBundle(t, "exercise"))
	ex := rep.Exercise
	if ex == nil {
		t.Fatal("exercise is null for a bundle with tool calls")
	}
	type counts struct{ Call, Files, Network, Processes, Canaries int }
	var got []counts
	for _, c := range ex.Calls {
		got = append(got, counts{c.Call, len(c.Files), c.Network, c.Processes, c.Canaries})
	}
	want := []counts{{1, 0, 0, 0, 0}, {2, 0, 0, 0, 0}, {3, 2, 2, 1, 1}, {4, 1, 0, 0, 0}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if c := ex.Calls[2]; c.Tool != "send_email" || c.Outcome != "tool_error" || !c.Files[0].Decoy || !c.Files[1].Seeded ||
		string(c.Arguments) != `{"to":"placeholder@mail.sink.verifymcp.test","subject":"verifymcp placeholder","body":"verifymcp placeholder"}` {
		t.Errorf("call 3 = %+v, arguments %s", c, c.Arguments)
	}
	if len(ex.NotCalled) != 1 || ex.NotCalled[0].Tool != "purge_index" || len(ex.ClientRequests) != 2 || ex.ClientRequests[1].Call != 3 {
		t.Errorf("not called %+v, client requests %+v", ex.NotCalled, ex.ClientRequests)
	}
	last := rep.Behavior.Network[len(rep.Behavior.Network)-1]
	if last.Call != 3 || last.Stage != "call" || len(last.Recipients) != 2 {
		t.Errorf("the call's connection = %+v", last)
	}
	if rep.Drift == nil || rep.Drift.Session == nil || rep.Drift.Session.AfterCalls != 4 {
		t.Errorf("drift.session = %+v", rep.Drift)
	}

	var m map[string]any
	if err := json.Unmarshal(mustJSON(t, rep), &m); err != nil {
		t.Fatal(err)
	}
	// A network event outside a call has no call member.
	first := m["behavior"].(map[string]any)["network"].([]any)[0].(map[string]any)
	if _, ok := first["call"]; ok {
		t.Errorf("an event outside calls carries call: %v", first)
	}
	noCalls := build(t, loadBundle(t, "behavior"))
	if noCalls.Exercise != nil {
		t.Errorf("exercise of a bundle without calls = %+v", noCalls.Exercise)
	}
}

// TestArguments: arguments are written as compact JSON; bytes that are
// not JSON are written as a JSON string, so the report is still written.
func TestArguments(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", "null"},
		{`{ "a" : [1, 2] }`, `{"a":[1,2]}`},
		{`{"a":`, `"{\"a\":"`},
	} {
		if got := string(arguments(json.RawMessage(tt.in))); got != tt.want {
			t.Errorf("arguments(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// TestSchemaRejectsExercise checks the schema's hold on the exercise
// member, and that version 9's schema rejects a report that has one.
func TestSchemaRejectsExercise(t *testing.T) {
	sch := compileSchema(t)
	data := mustJSON(t, build(t, loadBundle(t, "exercise")))
	call := func(m map[string]any, i int) map[string]any {
		return m["exercise"].(map[string]any)["calls"].([]any)[i].(map[string]any)
	}
	tests := []struct {
		name   string
		mutate func(m map[string]any)
	}{
		{"exercise_omitted", func(m map[string]any) { delete(m, "exercise") }},
		{"calls_null", func(m map[string]any) { m["exercise"].(map[string]any)["calls"] = nil }},
		{"outcome_unknown", func(m map[string]any) { call(m, 0)["outcome"] = "ok" }},
		{"call_zero", func(m map[string]any) { call(m, 0)["call"] = 0.0 }},
		{"call_extra_member", func(m map[string]any) { call(m, 0)["safe"] = true }},
		{"network_call_zero", func(m map[string]any) {
			ns := m["behavior"].(map[string]any)["network"].([]any)
			ns[len(ns)-1].(map[string]any)["call"] = 0.0
		}},
		{"recipients_omitted", func(m map[string]any) {
			delete(m["behavior"].(map[string]any)["network"].([]any)[0].(map[string]any), "recipients")
		}},
		{"after_calls_omitted", func(m map[string]any) {
			delete(m["drift"].(map[string]any)["session"].(map[string]any), "after_calls")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
			tt.mutate(m)
			out, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if err := validate(t, sch, out); err == nil {
				t.Error("schema accepted the mutated report")
			}
		})
	}

	v9 := compileSchemaBytes(t, "report.v9.schema.json", mustRead(t, "schema/report.v9.schema.json"))
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m["schema_version"] = "verifymcp.report/v9"
	out, _ := json.Marshal(m)
	if err := validate(t, v9, out); err == nil {
		t.Error("a v10 report with tool calls validates against the v9 schema")
	}
	asV9(m)
	out, _ = json.Marshal(m)
	if err := validate(t, v9, out); err != nil {
		t.Errorf("without what v10 added, the report should be a v9 report: %v", err)
	}
}
