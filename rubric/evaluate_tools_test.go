package rubric

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/evidence"
)

func TestSchemaCompleteness(t *testing.T) {
	tools := func(ts ...contract.Tool) func(*evidence.Bundle) {
		return func(b *evidence.Bundle) { b.Contract.Tools = ts }
	}
	tool := func(name, schema string) contract.Tool {
		return contract.Tool{Name: name, Description: "A tool description that is long enough.", InputSchema: json.RawMessage(schema), Annotations: &contract.Annotations{ReadOnlyHint: ptr(true)}}
	}
	runProbeCases(t, "schema_completeness", []probeCase{
		{name: "complete", want: outcome{State: StateScored, Score: 100, Findings: []string{"pkg.contract.schema.completeness"}}},
		{
			name: "half_described_and_one_missing",
			modify: tools(
				tool("a", `{"type":"object","properties":{"x":{"type":"string","description":"X"},"y":{"type":"string"}}}`),
				tool("b", ``),
				tool("c", `{"type":"object"}`),
				tool("d", `{"type":"object","properties":{"e":{"enum":["1","2"],"description":"E"},"r":{"$ref":"#/$defs/r","description":" "}}}`),
			),
			// a: 1/2, b: 0, c: 1, d: 1/2 -> mean 0.5.
			want: outcome{State: StateScored, Score: 50, Findings: []string{
				"pkg.contract.schema.completeness", "pkg.contract.schema.missing b",
				"pkg.contract.schema.undescribed_parameter a", "pkg.contract.schema.undescribed_parameter d",
			}},
		},
		{
			name:   "no_tools_is_not_applicable",
			modify: tools(),
			want:   outcome{State: StateDropped, Score: 0},
		},
		{
			name:   "contract_not_assessed",
			modify: func(b *evidence.Bundle) { b.Signals[evidence.SignalContract] = sig("not_assessed", "opted out") },
			want:   outcome{State: StateDropped, Score: 0},
		},
		{
			name: "contract_not_reached_after_crash",
			modify: func(b *evidence.Bundle) {
				b.Sandbox.Outcome = evidence.OutcomeStartCrashed
				b.Session = &evidence.Session{Outcome: evidence.OutcomeStartCrashed}
				b.Contract = nil
				b.Signals[evidence.SignalContract] = sig("not_assessed", "no session")
			},
			want: outcome{State: StateZeroPoint, Score: 0},
		},
	})
}

func TestCheckSchema(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   schemaCheck
	}{
		{"absent", ``, schemaCheck{problem: "no input schema"}},
		{"null", `null`, schemaCheck{problem: "no input schema"}},
		{"array", `[1]`, schemaCheck{problem: "input schema is not a JSON object: [1]"}},
		{"invalid", `{"type":"object",`, schemaCheck{problem: "input schema is not valid JSON"}},
		{"escaped_type", `{"typ\u0065":"obj\u0065ct"}`, schemaCheck{object: true}},
		{
			name:   "duplicate_keys_last_wins",
			schema: `{"type":"string","type":"object","properties":{"a":{"type":"string"},"a":{"type":"string","description":"A"}}}`,
			want:   schemaCheck{object: true, total: 1, complete: 1},
		},
		{
			name:   "nested_strings_with_braces",
			schema: `{"properties":{"q":{"description":"a \"}\" brace","default":"{]","type":"string"}},"type":"object"}`,
			want:   schemaCheck{object: true, total: 1, complete: 1},
		},
		{
			name:   "blank_escaped_description",
			schema: `{"type":"object","properties":{"q":{"type":"string","description":"\u0020\t"}}}`,
			want:   schemaCheck{object: true, total: 1, lacking: []string{"q (no description)"}},
		},
		{"no_type", `{"properties":{}}`, schemaCheck{problem: `input schema has no "type"`}},
		{"string_type", `{"type":"string"}`, schemaCheck{problem: `input schema "type" is "string", not "object"`}},
		{"type_list", `{"type":["object","null"]}`, schemaCheck{problem: `input schema "type" is ["object","null"], not "object"`}},
		{"bad_properties", `{"type":"object","properties":[]}`, schemaCheck{problem: `input schema "properties" is not an object`}},
		{"no_properties", `{"type":"object"}`, schemaCheck{object: true}},
		{"null_properties", `{"type":"object","properties":null}`, schemaCheck{object: true}},
		{
			name:   "mixed",
			schema: `{"type":"object","properties":{"z":{"type":"string","description":"Z"},"b":true,"a":{"description":"A"},"c":{"oneOf":[{"type":"string"}]},"d":{},"e":{"const":1,"Description":"case matters"}}}`,
			want: schemaCheck{object: true, total: 6, complete: 1, lacking: []string{
				"a (no type)", "b (not a schema object)", "c (no description)", "d (no type, no description)", "e (no description)",
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := checkSchema(json.RawMessage(tt.schema))
			if !reflect.DeepEqual(tt.want, got) {
				t.Errorf("checkSchema(%s) (-want +got):\n%s", tt.schema, lineDiff(
					strings.Split(fmt.Sprintf("%+v", tt.want), " "), strings.Split(fmt.Sprintf("%+v", got), " ")))
			}
		})
	}
}

func TestDescriptionCoverage(t *testing.T) {
	describe := func(descs ...string) func(*evidence.Bundle) {
		return func(b *evidence.Bundle) {
			b.Contract.Tools = nil
			for i, d := range descs {
				b.Contract.Tools = append(b.Contract.Tools, contract.Tool{
					Name: fmt.Sprintf("t%d", i), Description: d,
					InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: &contract.Annotations{ReadOnlyHint: ptr(true)},
				})
			}
		}
	}
	runProbeCases(t, "description_coverage", []probeCase{
		{name: "all_described", want: outcome{State: StateScored, Score: 100, Findings: []string{"pkg.contract.description.coverage"}}},
		{
			name: "threshold_is_20_trimmed_characters",
			// 19 characters padded with spaces, exactly 20, 20 multi-byte
			// runes, empty.
			modify: describe("   Lists all my notes.   ", "Lists all the notes.", "Ññññññññññññññññññññ", ""),
			want: outcome{State: StateScored, Score: 50, Findings: []string{
				"pkg.contract.description.coverage", "pkg.contract.description.missing t0", "pkg.contract.description.missing t3",
			}},
		},
		{name: "no_tools", modify: describe(), want: outcome{State: StateDropped, Score: 0}},
	})
}

func TestActionSafety(t *testing.T) {
	withTools := func(ts ...contract.Tool) func(*evidence.Bundle) {
		return func(b *evidence.Bundle) { b.Contract.Tools = ts }
	}
	readOnly := func(name, title string) contract.Tool {
		return contract.Tool{Name: name, Title: title, Annotations: &contract.Annotations{ReadOnlyHint: ptr(true)}}
	}
	runProbeCases(t, "action_safety", []probeCase{
		{name: "annotated_non_destructive", want: outcome{State: StateScored, Score: 100}},
		{
			name: "contradiction_in_name",
			modify: withTools(
				readOnly("delete_note", ""), readOnly("getNotes", ""),
			),
			want: outcome{State: StateScored, Score: 60, Findings: []string{"pkg.contract.annotation.contradiction delete_note"}},
		},
		{
			name: "contradiction_in_camel_case_and_title",
			modify: withTools(
				readOnly("dropTable", ""), readOnly("notes", "Send Email"), readOnly("runtime", "Runtime info"),
			),
			want: outcome{State: StateScored, Score: 20, Findings: []string{
				"pkg.contract.annotation.contradiction dropTable", "pkg.contract.annotation.contradiction notes",
			}},
		},
		{
			name: "absent_annotations_count_by_share",
			modify: withTools(
				contract.Tool{Name: "write_file"}, readOnly("read_file", ""), readOnly("list_dir", ""), readOnly("stat", ""),
			),
			// 100 - 50 * 1/4 = 87.5; write_file is destructive by default.
			want: outcome{State: StateScored, Score: 87.5, Findings: []string{
				"pkg.contract.annotation.absent write_file", "pkg.contract.tool.destructive write_file",
			}},
		},
		{
			name: "destructive_listed",
			modify: withTools(
				contract.Tool{Name: "drop_table", Annotations: &contract.Annotations{DestructiveHint: ptr(true)}},
				contract.Tool{Name: "insert_row", Annotations: &contract.Annotations{OpenWorldHint: ptr(false)}},
				contract.Tool{Name: "select", Annotations: &contract.Annotations{DestructiveHint: ptr(false)}},
			),
			want: outcome{State: StateScored, Score: 100, Findings: []string{
				"pkg.contract.tool.destructive drop_table", "pkg.contract.tool.destructive insert_row",
			}},
		},
		{
			name: "clamped_at_zero",
			modify: withTools(
				readOnly("delete_a", ""), readOnly("delete_b", ""), readOnly("delete_c", ""),
			),
			want: outcome{State: StateScored, Score: 0, Findings: []string{
				"pkg.contract.annotation.contradiction delete_a", "pkg.contract.annotation.contradiction delete_b",
				"pkg.contract.annotation.contradiction delete_c",
			}},
		},
		{name: "no_tools", modify: withTools(), want: outcome{State: StateDropped, Score: 0}},
		{
			name:   "contract_unavailable",
			modify: func(b *evidence.Bundle) { b.Signals[evidence.SignalContract] = sig("unavailable", "") },
			want:   outcome{State: StateZeroPoint, Score: 0},
		},
	})
}

func TestContradictionEvidence(t *testing.T) {
	b := okBundle()
	b.Contract.Tools = []contract.Tool{{Name: "notes", Title: "Send Email", Annotations: &contract.Annotations{ReadOnlyHint: ptr(true)}}}
	res := Evaluate(b, Current())
	want := Finding{
		Code: CodeAnnotationContradiction, Kind: KindFinding, Severity: SeverityHigh, Dimension: "action_safety", Subject: "notes",
		Message:  `tool "notes" claims readOnlyHint true, but its title puts it to "send", which changes its environment, and its description does not say it writes nothing`,
		Evidence: `title "Send Email"; readOnlyHint: true`,
	}
	var got Finding
	for _, f := range res.Findings {
		if f.Code == CodeAnnotationContradiction {
			got = f
		}
	}
	if d := diff(want, got); d != "" {
		t.Errorf("contradiction (-want +got):\n%s", d)
	}
	// A rubric value built without Load has no verb set; the probe must
	// find the same verbs by comparing them one by one.
	r := *Current()
	r.verbs = nil
	if d := diff(res, Evaluate(b, &r)); d != "" {
		t.Errorf("without the verb set (-want +got):\n%s", d)
	}
}
