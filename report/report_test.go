package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/internal/testschema"

	"github.com/verifymcp/verifymcp/internal/testdiff"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// fixtures are the bundles under testdata/, each with a golden report.
var fixtures = []string{"everything", "install_failed", "crashed", "hostile", "behavior", "supply", "dnssec", "unavailable", "judge", "exercise", "shipped_image", "shipped_root", "shipped_bundle"}

// v1Fixtures are the fixtures whose reports under rubric v1 (report schema
// v1) are kept under testdata/rubric_v1, exactly as released.
var v1Fixtures = []string{"everything", "install_failed", "crashed", "hostile"}

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	return compileSchemaBytes(t, "report.v12.schema.json", Schema())
}

// compileSchemaBytes and validate are the tests' one schema check
// (internal/testschema).
var (
	compileSchemaBytes = testschema.Compile
	validate           = testschema.Validate
)

func loadBundle(t *testing.T, name string) *evidence.Bundle {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name+".bundle.json"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := evidence.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func build(t *testing.T, b *evidence.Bundle) Report {
	t.Helper()
	r := rubric.Current()
	return Build(b, r, rubric.Evaluate(b, r))
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte, equal func(want, got []byte) string) {
	t.Helper()
	testdiff.Golden(t, "./report", name, got, *update, equal)
}

var (
	jsonEqual = testdiff.JSONBytes
	textEqual = testdiff.Text
)

func TestGolden(t *testing.T) {
	sch := compileSchema(t)
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			rep := build(t, loadBundle(t, name))
			var js, tbl bytes.Buffer
			if err := WriteJSON(&js, rep); err != nil {
				t.Fatal(err)
			}
			if err := WriteTable(&tbl, rep); err != nil {
				t.Fatal(err)
			}
			if err := validate(t, sch, js.Bytes()); err != nil {
				t.Errorf("report does not validate against the schema: %v", err)
			}
			golden(t, name+".report.json", js.Bytes(), jsonEqual)
			golden(t, name+".table.txt", tbl.Bytes(), textEqual)

			// The committed golden must itself satisfy the schema.
			committed, err := os.ReadFile(filepath.Join("testdata", name+".report.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := validate(t, sch, committed); err != nil {
				t.Errorf("golden %s.report.json does not validate: %v", name, err)
			}
		})
	}
}

// TestSchemaRejects checks that the schema is strict: each mutation of a
// valid report must fail validation.
func TestSchemaRejects(t *testing.T) {
	sch := compileSchema(t)
	var buf bytes.Buffer
	if err := WriteJSON(&buf, build(t, loadBundle(t, "hostile"))); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		mutate func(m map[string]any)
	}{
		{"findings_omitted", func(m map[string]any) { delete(m, "findings") }},
		{"findings_null", func(m map[string]any) { m["findings"] = nil }},
		{"signals_omitted", func(m map[string]any) { delete(m, "signals") }},
		{"signal_state_clean", func(m map[string]any) {
			m["signals"].(map[string]any)["osv"].(map[string]any)["state"] = "clean"
		}},
		{"rubric_version_missing", func(m map[string]any) { delete(m["rubric"].(map[string]any), "version") }},
		{"schema_version_other", func(m map[string]any) { m["schema_version"] = "verifymcp.report/v1" }},
		{"behavior_omitted", func(m map[string]any) { delete(m, "behavior") }},
		{"supply_omitted", func(m map[string]any) { delete(m, "supply") }},
		{"schema_version_v2", func(m map[string]any) { m["schema_version"] = "verifymcp.report/v2" }},
		{"schema_version_v3", func(m map[string]any) { m["schema_version"] = "verifymcp.report/v3" }},
		{"schema_version_v4", func(m map[string]any) { m["schema_version"] = "verifymcp.report/v4" }},
		{"judge_omitted", func(m map[string]any) { delete(m, "judge") }},
		{"supply_dnssec_omitted", func(m map[string]any) { delete(m["supply"].(map[string]any), "dnssec") }},
		{"signal_endpoint_omitted", func(m map[string]any) { delete(m["signals"].(map[string]any)["osv"].(map[string]any), "endpoint") }},
		{"signal_fetched_at_omitted", func(m map[string]any) { delete(m["signals"].(map[string]any)["osv"].(map[string]any), "fetched_at") }},
		{"score_as_string", func(m map[string]any) { m["score"] = "47.4" }},
		{"score_above_100", func(m map[string]any) { m["score"] = 101.0 }},
		{"extra_top_level_key", func(m map[string]any) { m["verdict"] = "safe" }},
		{"notice_changed", func(m map[string]any) { m["notice"] = "No issues found." }},
		{"finding_without_code", func(m map[string]any) { delete(m["findings"].([]any)[0].(map[string]any), "code") }},
		{"finding_bad_code", func(m map[string]any) { m["findings"].([]any)[0].(map[string]any)["code"] = "Pkg.Bad" }},
		{"finding_bad_severity", func(m map[string]any) { m["findings"].([]any)[0].(map[string]any)["severity"] = "none" }},
		{"measurement_without_value", func(m map[string]any) {
			for _, f := range m["findings"].([]any) {
				if f := f.(map[string]any); f["kind"] == "measurement" {
					f["value"] = nil
				}
			}
		}},
		{"dropped_dimension_with_score", func(m map[string]any) {
			d := m["dimensions"].([]any)[0].(map[string]any)
			d["state"] = "dropped"
		}},
		{"dimension_state_unknown", func(m map[string]any) { m["dimensions"].([]any)[0].(map[string]any)["state"] = "skipped" }},
		{"scripts_omitted", func(m map[string]any) { delete(m["install"].(map[string]any), "scripts") }},
		{"contract_tools_omitted", func(m map[string]any) { delete(m["contract"].(map[string]any), "tools") }},
		{"run_date_not_utc", func(m map[string]any) { m["run"].(map[string]any)["date"] = "2026-05-04T11:30:12+02:00" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
				t.Fatal(err)
			}
			tt.mutate(m)
			data, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if err := validate(t, sch, data); err == nil {
				t.Error("schema accepted the mutated report")
			}
		})
	}
}

// TestEmptyListsArePresent builds a report from a bundle with no findings
// and no session or install evidence, and checks that lists are [] and
// absent evidence is null rather than omitted.
func TestEmptyListsArePresent(t *testing.T) {
	b := loadBundle(t, "everything")
	b.Install, b.Session = nil, nil
	b.Contract = &contract.Contract{ProtocolVersion: "2025-11-25"} // nil lists
	res := rubric.Result{RubricVersion: "1", RubricHash: rubric.Current().Hash}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, Build(b, rubric.Current(), res)); err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"findings": "[]", "dimensions": "[]", "session": "null", "install": "null", "behavior": "null", "score": "null"} {
		if got := string(m[key]); got != want {
			t.Errorf("%s = %s, want %s", key, got, want)
		}
	}
	var c map[string]json.RawMessage
	if err := json.Unmarshal(m["contract"], &c); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"tools", "prompts", "resources", "resource_templates"} {
		if got := string(c[key]); got != "[]" {
			t.Errorf("contract.%s = %s, want []", key, got)
		}
	}
	if err := validate(t, compileSchema(t), buf.Bytes()); err != nil {
		t.Errorf("report does not validate: %v", err)
	}
}

// TestMissingSignalIsListed checks that a signal the rubric needs but the
// bundle never recorded appears in the report as an error.
func TestMissingSignalIsListed(t *testing.T) {
	b := loadBundle(t, "everything")
	delete(b.Signals, evidence.SignalContract)
	rep := build(t, b)
	got := rep.Signals[evidence.SignalContract]
	if got.State != string(evidence.StateError) || got.Reason == "" {
		t.Errorf("signals[contract] = %+v, want an error state with a reason", got)
	}
}

var safeWord = regexp.MustCompile(`(?i)\bsafe\b`)

// TestNeverSaysSafe checks the text this program writes (catalog, messages,
// reasons, table labels) for the word "safe"; only the notice, which says
// the report never says it, may contain it.
func TestNeverSaysSafe(t *testing.T) {
	r := rubric.Current()
	var texts []string
	texts = append(texts, r.Description)
	for _, c := range r.Codes {
		texts = append(texts, c.Description, c.Remediation)
	}
	for _, d := range r.Dimensions {
		texts = append(texts, d.Description)
	}
	for _, name := range fixtures {
		rep := build(t, loadBundle(t, name))
		for _, f := range rep.Findings {
			texts = append(texts, f.Message, f.Remediation)
		}
		for _, d := range rep.Dimensions {
			texts = append(texts, d.Reason)
		}
		var tbl bytes.Buffer
		if err := WriteTable(&tbl, rep); err != nil {
			t.Fatal(err)
		}
		texts = append(texts, strings.ReplaceAll(tbl.String(), rep.Notice, ""))
	}
	for _, s := range texts {
		if safeWord.MatchString(s) {
			t.Errorf("says safe: %q", s)
		}
	}
	if !strings.Contains(Notice, "never says a package is safe") {
		t.Errorf("notice %q does not say the report never calls a package safe", Notice)
	}
}

func TestTableEscapesTerminalControl(t *testing.T) {
	rep := build(t, loadBundle(t, "hostile"))
	var tbl bytes.Buffer
	if err := WriteTable(&tbl, rep); err != nil {
		t.Fatal(err)
	}
	out := tbl.String()
	for _, bad := range []string{"\x1b", "\x07", "\u202e"} {
		if strings.Contains(out, bad) {
			t.Errorf("table contains raw %q", bad)
		}
	}
	for _, want := range []string{`fs-helper\x1b]0;pwned\x07`, `sync\u202egnp.exe`, `\x1b[32mfs-helper ready\x1b[0m`} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks the escaped form %s", want)
		}
	}
}

func TestClean(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text", "plain text"},
		{"ñandú 日本語", "ñandú 日本語"},
		{"a\nb\tc\r", `a\nb\tc\r`},
		{"\x1b[2J\x07\x7f", `\x1b[2J\x07\x7f`},
		{"\u009b31m", `\x9b31m`},
		{"ab\u202ecd\u200b\ufeff", `ab\u202ecd\u200b\ufeff`},
		{"\xff\xfe", `\xff\xfe`},
		{"line\u2028sep", `line\u2028sep`},
	}
	for _, tt := range tests {
		if got := clean(tt.in); got != tt.want {
			t.Errorf("clean(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSchemaIsACopy(t *testing.T) {
	s := Schema()
	s[0] = 'x'
	if Schema()[0] == 'x' {
		t.Error("Schema() returned the embedded bytes, which a caller could change")
	}
}

// TestRecollectedRun: a run made by rescore --recollect says so, in the
// JSON (valid against the schema) and in the table, naming the run whose
// evidence it carries over.
func TestRecollectedRun(t *testing.T) {
	b := loadBundle(t, "everything")
	at := time.Date(2026, 11, 30, 13, 0, 0, 0, time.UTC)
	b.Run.Recollected = &evidence.Recollection{From: "20260301t000000z-00000001", Signals: []string{"judge"}, At: at,
		Tool: evidence.Tool{Name: "verifymcp", Version: "0.9.0"}}
	rep := build(t, b)
	var buf bytes.Buffer
	if err := WriteJSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	if err := validate(t, compileSchema(t), buf.Bytes()); err != nil {
		t.Errorf("report does not validate: %v", err)
	}
	if !strings.Contains(buf.String(), `"recollected": {`) || !strings.Contains(buf.String(), `"from": "20260301t000000z-00000001"`) {
		t.Errorf("JSON lacks the recollection:\n%.600s", buf.String())
	}
	buf.Reset()
	if err := WriteTable(&buf, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "judge at 2026-11-30T13:00:00Z by verifymcp 0.9.0; the rest carried over from run 20260301t000000z-00000001") {
		t.Errorf("table lacks the recollection:\n%s", buf.String())
	}
	// A run that is not derived says nothing of it.
	b.Run.Recollected = nil
	data, _ := json.Marshal(build(t, b))
	if strings.Contains(string(data), "recollected") {
		t.Error("a scanned run's report mentions a recollection")
	}
}

// TestMCPRegistryLine says what claims an entry's name in the package's
// own terms (npm's mcpName, a PyPI release's mcp-name marker), and never
// takes a description that was not read for a missing claim.
func TestMCPRegistryLine(t *testing.T) {
	for _, tc := range []struct {
		e    evidence.MCPRegistryEntry
		want string
	}{
		{evidence.MCPRegistryEntry{Package: "npm:a@1", MCPNameMatches: true, MCPName: "io.github.a/a"}, "the package's mcpName matches"},
		{evidence.MCPRegistryEntry{Package: "npm:a@1"}, "the package declares no mcpName"},
		{evidence.MCPRegistryEntry{Package: "pypi:a@1", MCPNameMatches: true, MCPName: "io.github.a/a"}, "the release's mcp-name marker matches"},
		{evidence.MCPRegistryEntry{Package: "pypi:a@1"}, "the release's description carries no mcp-name marker"},
		{evidence.MCPRegistryEntry{Package: "pypi:a@1", Notes: []string{evidence.NoteMCPNameUnknown + ": not served"}}, "whether the release claims the name is unknown"},
		{evidence.MCPRegistryEntry{Package: "pypi:a@1", MCPName: "io.github.b/b"}, "the release's mcp-name marker is io.github.b/b, not the entry's name"},
	} {
		if got := mcpRegistryLine(&tc.e); !strings.Contains(got, tc.want) {
			t.Errorf("%+v: %q, want %q", tc.e, got, tc.want)
		}
	}
}
