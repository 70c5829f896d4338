package report

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
)

// section returns the table's section whose heading line starts with
// heading, up to the next blank line.
func section(t *testing.T, table, heading string) string {
	t.Helper()
	for _, s := range strings.Split(table, "\n\n") {
		if strings.HasPrefix(s, heading) {
			return s
		}
	}
	t.Fatalf("table has no %s section:\n%s", heading, table)
	return ""
}

// asV4 turns a v5 report's JSON into what report v4 would have held: no
// judge member, the v4 notice and schema version.
func asV4(t *testing.T, m map[string]any) {
	t.Helper()
	asV5(m)
	var v4 struct {
		Properties struct {
			Notice struct {
				Const string `json:"const"`
			} `json:"notice"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(mustRead(t, "schema/report.v4.schema.json"), &v4); err != nil || v4.Properties.Notice.Const == "" {
		t.Fatalf("v4 schema has no notice: %v", err)
	}
	delete(m, "judge")
	m["notice"] = v4.Properties.Notice.Const
	m["schema_version"] = "verifymcp.report/v4"
}

// asV5 removes from a decoded report what version 6 added.
func asV5(m map[string]any) {
	asV9(m)
	m["schema_version"] = "verifymcp.report/v5"
	delete(m, "masking")
	delete(m, "drift")
	delete(m, "summary")
	if tg, ok := m["target"].(map[string]any); ok {
		delete(tg, "mcp_registry")
	}
	if fs, ok := m["findings"].([]any); ok {
		for _, f := range fs {
			delete(f.(map[string]any), "ignored")
		}
	}
	if r, ok := m["rubric"].(map[string]any); ok {
		delete(r, "contract_checks")
	}
	if s, ok := m["session"].(map[string]any); ok {
		for _, k := range []string{"truncations", "late_answers", "unmatched_answers", "notifications", "unread_messages", "shutdown"} {
			delete(s, k)
		}
	}
	if in, ok := m["install"].(map[string]any); ok {
		scripts, _ := in["scripts"].([]any)
		for _, sc := range scripts {
			for _, k := range []string{"optional", "signal", "oom", "left_running", "network"} {
				delete(sc.(map[string]any), k)
			}
		}
	}
	if sb, ok := m["sandbox"].(map[string]any); ok {
		if l, ok := sb["limits"].(map[string]any); ok {
			for _, k := range []string{"tree_bytes", "home_bytes", "tmp_bytes"} {
				delete(l, k)
			}
		}
	}
	if b, ok := m["behavior"].(map[string]any); ok {
		watches, _ := b["watches"].([]any)
		for _, w := range watches {
			delete(w.(map[string]any), "disk")
			delete(w.(map[string]any), "dropped")
		}
		for list, key := range map[string]string{"network": "stage", "processes": "provenance"} {
			events, _ := b[list].([]any)
			for _, e := range events {
				delete(e.(map[string]any), key)
			}
		}
	}
}

// asV9 removes from a decoded report what version 10 added.
func asV9(m map[string]any) {
	m["schema_version"] = "verifymcp.report/v9"
	delete(m, "exercise")
	delete(m, "shipped") // v11's
	if b, ok := m["behavior"].(map[string]any); ok {
		for _, list := range []string{"network", "processes", "exfiltration"} {
			events, _ := b[list].([]any)
			for _, e := range events {
				e := e.(map[string]any)
				delete(e, "call")
				delete(e, "recipients")
				if e["stage"] == "call" {
					e["stage"] = "" // the call stage is v10's
				}
			}
		}
	}
	if d, ok := m["drift"].(map[string]any); ok {
		if s, ok := d["session"].(map[string]any); ok {
			delete(s, "after_calls")
		}
	}
}

// TestJudgeSection checks what the JUDGE section shows of the judge
// fixture: who answered, under which specification and rubric, that it
// came from the cache and when the model answered, how it was asked, and
// one line per verdict with its quote and rationale.
func TestJudgeSection(t *testing.T) {
	out := tableText(t, build(t, loadBundle(t, "judge")))
	js := section(t, out, "JUDGE")
	for _, want := range []string{
		"JUDGE  an LLM's reading of the tool surface, pinned and cached; not a deterministic check",
		"  judge     observed      gpt-4o-2024-08-06 @ https://api.openai.com/v1  2 verdicts",
		"    judge spec  v1, prompt v1  sha256:426caad92c1770f20b06b194c53b738fd7c9eef3ba85fcb32e7e5578d7bbe01a",
		"    rubric      asked under rubric v5 (this report is scored under rubric v15)\n",
		"    answer      cache hit (answered 2026-04-21T16:02:47Z)",
		"    sampling    temperature 0 (sent as 1e-45), seed 42",
		"    surface     sha256:eaa89a6a3c79e7ede217730d57eeeca13a893c6bf327543c5be0b4938d6582f7  cache key 292098a408adc2140c540af0bf389d8459d4b3e1643da59ff02b4dc1df2df964",
		"    TOOL      CODE                        EVIDENCE                                           RATIONALE",
		`    printEnv  pkg.judge.sensitive_access  "Prints all environment variables"                 Every environment variable is returned to the model,`,
		`    zip       pkg.judge.sensitive_access  "mapping of name to URI, which can be a data URI"  The tool fetches whatever URIs it is given`,
	} {
		if !strings.Contains(js, want) {
			t.Errorf("JUDGE section lacks %q:\n%s", want, js)
		}
	}
	if strings.Contains(js, "UNVERIFIED") || strings.Contains(js, "no verdict") {
		t.Errorf("the judge answered with two verdicts, but the section says otherwise:\n%s", js)
	}
	// The section comes after the tools it judges.
	if strings.Index(out, "\nTOOLS (") > strings.Index(out, "\nJUDGE ") {
		t.Errorf("JUDGE comes before TOOLS:\n%s", out)
	}
	sig := section(t, out, "SIGNALS")
	if !strings.Contains(sig, "judge              observed      third party  https://api.openai.com/v1  no    2026-04-21T16:02:47Z (cache)") {
		t.Errorf("SIGNALS does not show where and when the judge answered:\n%s", sig)
	}
}

// TestJudgeJSON checks that the judge member carries everything that pins
// the judgment, and each verdict in full.
func TestJudgeJSON(t *testing.T) {
	m := reportJSON(t, build(t, loadBundle(t, "judge")))
	j, ok := m["judge"].(map[string]any)
	if !ok {
		t.Fatalf("judge = %v, want an object", m["judge"])
	}
	if j["signal"] != "judge" || j["state"] != "observed" || j["status"] != StatusObserved || j["reason"] != "" {
		t.Errorf("judge check = %v", j)
	}
	r, ok := j["result"].(map[string]any)
	if !ok {
		t.Fatalf("judge.result = %v, want an object", j["result"])
	}
	want := map[string]any{
		"model": "gpt-4o-2024-08-06", "endpoint": "https://api.openai.com/v1", "temperature": 1.401298464324817e-45,
		"seed": 42.0, "spec_version": "1", "prompt_version": "1",
		"spec_digest":    "sha256:426caad92c1770f20b06b194c53b738fd7c9eef3ba85fcb32e7e5578d7bbe01a",
		"rubric_version": "5", "schema_hash": "sha256:eaa89a6a3c79e7ede217730d57eeeca13a893c6bf327543c5be0b4938d6582f7",
		"cache_hit": true, "cache_key": "292098a408adc2140c540af0bf389d8459d4b3e1643da59ff02b4dc1df2df964",
		"fetched_at": "2026-04-21T16:02:47Z",
		"verdicts": []any{
			map[string]any{
				"tool": "printEnv", "code": "pkg.judge.sensitive_access", "evidence": "Prints all environment variables",
				"rationale": "Every environment variable is returned to the model, including any API key or token the agent was started with, which is more than debugging a configuration needs.",
			},
			map[string]any{
				"tool": "zip", "code": "pkg.judge.sensitive_access", "evidence": "mapping of name to URI, which can be a data URI",
				"rationale": "The tool fetches whatever URIs it is given and returns their contents without saying which schemes or hosts it will read, so it can reach local files and internal addresses.",
			},
		},
	}
	if d := diff(want, r); d != "" {
		t.Errorf("judge.result (-want +got):\n%s", d)
	}
}

// TestJudgeNoVerdict checks that a judgment with no verdict keeps verdicts
// as [] and is told apart, in the table, from a judge that did not answer,
// as an LLM's judgment and not a proof.
func TestJudgeNoVerdict(t *testing.T) {
	b := loadBundle(t, "judge")
	b.Judge.Verdicts = nil
	rep := build(t, b)
	data := mustJSON(t, rep)
	var m struct {
		Judge struct {
			Result map[string]json.RawMessage `json:"result"`
		} `json:"judge"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if got := string(m.Judge.Result["verdicts"]); got != "[]" {
		t.Errorf("judge.result.verdicts = %s, want []", got)
	}
	if err := validate(t, compileSchema(t), data); err != nil {
		t.Errorf("report does not validate: %v", err)
	}
	js := section(t, tableText(t, rep), "JUDGE")
	for _, want := range []string{"0 verdicts", "    " + judgeNoVerdict} {
		if !strings.Contains(js, want) {
			t.Errorf("JUDGE section lacks %q:\n%s", want, js)
		}
	}
	if strings.Contains(js, "TOOL ") {
		t.Errorf("JUDGE section lists verdicts it does not have:\n%s", js)
	}
	checkNeverClean(t, js)
}

// TestJudgeNotObserved puts the judge signal of the judge fixture in each
// state other than observed, and checks that the judge is unverified with
// no result, in the JSON and the table, that none of the stored verdict is
// shown, and that it is never called clean.
func TestJudgeNotObserved(t *testing.T) {
	for _, state := range []string{"unavailable", "error", "not_assessed", "missing", "observed_without_evidence"} {
		t.Run(state, func(t *testing.T) {
			b := loadBundle(t, "judge")
			switch state {
			case "missing":
				delete(b.Signals, evidence.SignalJudge)
			case "observed_without_evidence":
				b.Judge = nil
			default:
				b.Signals[evidence.SignalJudge] = evidence.Signal{State: evidence.State(state), Reason: "why", ThirdParty: true}
			}
			rep := build(t, b)
			m := reportJSON(t, rep)
			j := m["judge"].(map[string]any)
			if j["status"] != StatusUnverified || j["result"] != nil || j["reason"] == "" {
				t.Errorf("judge = %v, want unverified with a reason and a null result", j)
			}
			if err := validate(t, compileSchema(t), mustJSON(t, rep)); err != nil {
				t.Errorf("report does not validate: %v", err)
			}
			js := section(t, tableText(t, rep), "JUDGE")
			label := labelUnverified
			if state == "not_assessed" {
				label = labelNotAssessed
			}
			if !strings.Contains(js, "  judge     "+label+"  signal judge is ") {
				t.Errorf("JUDGE section does not say the judge is %s:\n%s", strings.TrimSpace(label), js)
			}
			for _, ev := range []string{"gpt-4o", "Prints all environment variables", "cache hit", "seed", "no verdict"} {
				if strings.Contains(js, ev) {
					t.Errorf("JUDGE section shows %q of a judge that was not observed:\n%s", ev, js)
				}
			}
			checkNeverClean(t, js)
		})
	}
}

// TestJudgeUnavailableFixture checks the fixture with no judge configured.
func TestJudgeUnavailableFixture(t *testing.T) {
	rep := build(t, loadBundle(t, "unavailable"))
	if j := rep.Judge; j == nil || j.State != "unavailable" || j.Status != StatusUnverified || j.Reason != "no LLM judge configured" || j.Result != nil {
		t.Errorf("judge = %+v", j)
	}
	want := "  judge     UNVERIFIED    signal judge is unavailable (no LLM judge configured): " + judgeUnknown
	if js := section(t, tableText(t, rep), "JUDGE"); !strings.Contains(js, want) {
		t.Errorf("JUDGE section lacks %q:\n%s", want, js)
	}
}

// TestJudgeNullForOldEvidence checks that judge is null only for evidence
// with neither a judge result nor its signal, scored under a rubric that
// does not read it, and that the table then says it was not collected.
func TestJudgeNullForOldEvidence(t *testing.T) {
	b := loadBundle(t, "everything")
	delete(b.Signals, evidence.SignalJudge)
	v4, err := rubric.Load("4")
	if err != nil {
		t.Fatal(err)
	}
	rep := Build(b, v4, rubric.Evaluate(b, v4))
	m := reportJSON(t, rep)
	if v, ok := m["judge"]; !ok || v != nil {
		t.Errorf("judge = %v (present %v), want null", v, ok)
	}
	if err := validate(t, compileSchema(t), mustJSON(t, rep)); err != nil {
		t.Errorf("report does not validate: %v", err)
	}
	if out := tableText(t, rep); !strings.Contains(out, "JUDGE  not collected: this evidence predates the LLM judge; its verdict is unverified") {
		t.Errorf("table does not say the judge was not collected:\n%s", out)
	}
	// Under the current rubric, which reads the judge, the missing signal
	// is an error and the judge unverified.
	if rep := build(t, b); rep.Judge == nil || rep.Judge.Status != StatusUnverified || rep.Judge.State != "error" {
		t.Errorf("judge under the current rubric = %+v, want unverified", rep.Judge)
	}
}

// TestJudgeRows checks the pins of a judgment as the table writes them.
func TestJudgeRows(t *testing.T) {
	at := "2026-04-21T16:02:47Z"
	tests := []struct {
		name string
		r    JudgeResult
		want []string
	}{
		{"fresh_answer", JudgeResult{SpecVersion: "1", PromptVersion: "2", RubricVersion: "5", FetchedAt: &at, Temperature: 0.2, Seed: -3},
			[]string{"judge spec: v1, prompt v2", "rubric: asked under rubric v5", "answer: asked 2026-04-21T16:02:47Z", "sampling: temperature 0.2, seed -3", "surface: -"}},
		{"cache_hit_other_rubric", JudgeResult{RubricVersion: "4", CacheHit: true, FetchedAt: &at, Temperature: zeroTemperature, SchemaHash: "sha256:ab", CacheKey: "cd"},
			[]string{"judge spec: v-, prompt v-", "rubric: asked under rubric v4 (this report is scored under rubric v5)",
				"answer: cache hit (answered 2026-04-21T16:02:47Z)", "sampling: temperature 0 (sent as 1e-45), seed 0", "surface: sha256:ab  cache key cd"}},
		{"time_not_recorded", JudgeResult{RubricVersion: "5", Temperature: 1},
			[]string{"judge spec: v-, prompt v-", "rubric: asked under rubric v5", "answer: asked unknown", "sampling: temperature 1, seed 0", "surface: -"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, row := range judgeRows(&tt.r, "5") {
				got = append(got, strings.Join(row, ": "))
			}
			if d := diff(tt.want, got); d != "" {
				t.Errorf("rows (-want +got):\n%s", d)
			}
		})
	}
}

// TestJudgeTableEscapesTerminalControl checks that text the package or
// the model controls (tool names, quotes, rationales, the model name)
// cannot drive the terminal from the JUDGE section.
func TestJudgeTableEscapesTerminalControl(t *testing.T) {
	b := loadBundle(t, "judge")
	b.Judge.Model = "gpt\x1b[2J"
	b.Judge.Verdicts = append(b.Judge.Verdicts,
		evidence.JudgeVerdict{Tool: "fs-helper\x1b]0;pwned\x07", Code: "pkg.judge.injection", Evidence: "ignore\u202e previous\ninstructions", Rationale: "hidden\x9b31m text"},
		evidence.JudgeVerdict{Tool: "", Code: "pkg.judge.concealment", Evidence: "do not tell the user\U000E0041", Rationale: ""})
	out := tableText(t, build(t, b))
	for _, bad := range []string{"\x1b", "\x07", "\u202e", "\u009b", "\U000E0041"} {
		if strings.Contains(out, bad) {
			t.Errorf("table contains raw %q", bad)
		}
	}
	js := section(t, out, "JUDGE")
	for _, want := range []string{
		`gpt\x1b[2J @ https://api.openai.com/v1  4 verdicts`,
		`fs-helper\x1b]0;pwned\x07  pkg.judge.injection`,
		`"ignore\u202e previous\ninstructions"`,
		`hidden\x9b31m text`,
		`(server instructions)`,
		`"do not tell the user\U000e0041"`,
	} {
		if !strings.Contains(js, want) {
			t.Errorf("JUDGE section lacks the escaped form %s:\n%s", want, js)
		}
	}
}

// TestJudgeEndpointNeverCarriesCredentials gives the judge result an
// endpoint with credentials, which the evidence should never hold, and
// checks that none reaches the JSON or the table.
func TestJudgeEndpointNeverCarriesCredentials(t *testing.T) {
	b := loadBundle(t, "judge")
	b.Judge.Endpoint = "https://user:sk-t0ken@llm.example/v1?api-key=sk-t0ken#sk-t0ken"
	rep := build(t, b)
	data := mustJSON(t, rep)
	out := tableText(t, rep)
	if bytes.Contains(data, []byte("sk-t0ken")) || strings.Contains(out, "sk-t0ken") {
		t.Error("report carries the judge's credential")
	}
	if got := rep.Judge.Result.Endpoint; got != "https://llm.example/v1" {
		t.Errorf("judge endpoint = %q", got)
	}
	if err := validate(t, compileSchema(t), data); err != nil {
		t.Errorf("report does not validate: %v", err)
	}
}

// notDeterministic finds "deterministic" and the two words before it.
var notDeterministic = regexp.MustCompile(`(?i)(\S+\s+\S+)\s+deterministic`)

// TestJudgeNeverCalledDeterministic checks that every table and the notice
// mention determinism only to say the judge is not a deterministic check.
func TestJudgeNeverCalledDeterministic(t *testing.T) {
	texts := []string{Notice}
	for _, name := range fixtures {
		texts = append(texts, tableText(t, build(t, loadBundle(t, name))))
	}
	for _, s := range texts {
		for _, m := range notDeterministic.FindAllStringSubmatch(s, -1) {
			if !strings.EqualFold(m[1], "not a") {
				t.Errorf("text says %q", m[0])
			}
		}
	}
	if !strings.Contains(Notice, "The judge is an LLM, pinned") || !strings.Contains(Notice, "not a deterministic check") {
		t.Errorf("notice %q does not say what the judge is", Notice)
	}
}

// TestSchemaRejectsJudge checks the schema's hold on the judge member.
func TestSchemaRejectsJudge(t *testing.T) {
	sch := compileSchema(t)
	data := mustJSON(t, build(t, loadBundle(t, "judge")))
	if err := validate(t, sch, data); err != nil {
		t.Fatalf("the judge report does not validate: %v", err)
	}
	j := func(m map[string]any) map[string]any { return m["judge"].(map[string]any) }
	res := func(m map[string]any) map[string]any { return j(m)["result"].(map[string]any) }
	verdict := func(m map[string]any) map[string]any { return res(m)["verdicts"].([]any)[0].(map[string]any) }
	tests := []struct {
		name   string
		mutate func(m map[string]any)
	}{
		{"judge_omitted", func(m map[string]any) { delete(m, "judge") }},
		{"status_clean", func(m map[string]any) { j(m)["status"] = "clean" }},
		{"wrong_signal_name", func(m map[string]any) { j(m)["signal"] = "llm" }},
		{"observed_status_on_unavailable_signal", func(m map[string]any) { j(m)["state"] = "unavailable" }},
		{"unverified_with_result", func(m map[string]any) { j(m)["status"] = "unverified" }},
		{"observed_without_result", func(m map[string]any) { j(m)["result"] = nil }},
		{"result_omitted", func(m map[string]any) { delete(j(m), "result") }},
		{"extra_check_member", func(m map[string]any) { j(m)["deterministic"] = true }},
		{"extra_result_member", func(m map[string]any) { res(m)["verdict"] = "clean" }},
		{"model_omitted", func(m map[string]any) { delete(res(m), "model") }},
		{"temperature_omitted", func(m map[string]any) { delete(res(m), "temperature") }},
		{"temperature_negative", func(m map[string]any) { res(m)["temperature"] = -1.0 }},
		{"seed_omitted", func(m map[string]any) { delete(res(m), "seed") }},
		{"seed_fraction", func(m map[string]any) { res(m)["seed"] = 4.2 }},
		{"spec_version_omitted", func(m map[string]any) { delete(res(m), "spec_version") }},
		{"prompt_version_omitted", func(m map[string]any) { delete(res(m), "prompt_version") }},
		{"rubric_version_omitted", func(m map[string]any) { delete(res(m), "rubric_version") }},
		{"cache_hit_omitted", func(m map[string]any) { delete(res(m), "cache_hit") }},
		{"cache_hit_as_string", func(m map[string]any) { res(m)["cache_hit"] = "yes" }},
		{"fetched_at_omitted", func(m map[string]any) { delete(res(m), "fetched_at") }},
		{"fetched_at_not_utc", func(m map[string]any) { res(m)["fetched_at"] = "2026-04-21T18:02:47+02:00" }},
		{"endpoint_with_userinfo", func(m map[string]any) { res(m)["endpoint"] = "https://sk-x@api.openai.com/v1" }},
		{"endpoint_with_query", func(m map[string]any) { res(m)["endpoint"] = "https://api.openai.com/v1?key=x" }},
		{"verdicts_omitted", func(m map[string]any) { delete(res(m), "verdicts") }},
		{"verdicts_null", func(m map[string]any) { res(m)["verdicts"] = nil }},
		{"verdict_evidence_omitted", func(m map[string]any) { delete(verdict(m), "evidence") }},
		{"verdict_rationale_omitted", func(m map[string]any) { delete(verdict(m), "rationale") }},
		{"verdict_extra_member", func(m map[string]any) { verdict(m)["severity"] = "high" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
			tt.mutate(m)
			mutated, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if err := validate(t, sch, mutated); err == nil {
				t.Error("schema accepted the mutated report")
			}
		})
	}
}

// TestSchemaV4Kept checks that version 4's schema is still shipped and
// still rejects reports carrying judge, which it does not know, and that
// a v5 report without it is a v4 report.
func TestSchemaV4Kept(t *testing.T) {
	v4 := compileSchemaBytes(t, "report.v4.schema.json", mustRead(t, "schema/report.v4.schema.json"))
	var m map[string]any
	if err := json.Unmarshal(mustJSON(t, build(t, loadBundle(t, "judge"))), &m); err != nil {
		t.Fatal(err)
	}
	m["schema_version"] = "verifymcp.report/v4"
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(t, v4, data); err == nil {
		t.Error("a v5 report validates against the v4 schema, which forbids judge")
	}
	asV4(t, m)
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := validate(t, v4, data); err != nil {
		t.Errorf("without judge and with the v4 notice, the report should be a v4 report: %v", err)
	}
}
