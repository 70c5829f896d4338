package contract

import (
	"encoding/json"
	"strings"
	"testing"
)

func bp(b bool) *bool { return &b }

func sample() *Contract {
	return &Contract{
		ProtocolVersion: "2025-11-25",
		ServerInfo:      Implementation{Name: "srv", Version: "1.0.0"},
		Instructions:    "Use <tools> wisely & well.",
		Tools: []Tool{
			{Name: "write", Description: "Write a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"where"}}}`)},
			{Name: "read", Description: "Read a file.", InputSchema: json.RawMessage(`{"properties":{"path":{"description":"where","type":"string"}},"type":"object"}`), Annotations: &Annotations{ReadOnlyHint: bp(true)}},
		},
		Prompts:   []Prompt{{Name: "p", Arguments: []PromptArgument{{Name: "b"}, {Name: "a"}}}},
		Resources: []Resource{{URI: "x://2", Name: "two"}, {URI: "x://1", Name: "one"}},
	}
}

func TestHash(t *testing.T) {
	base, err := Hash(sample())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(base, "sha256:") || len(base) != len("sha256:")+64 {
		t.Fatalf("hash %q is not sha256:<64 hex>", base)
	}
	tests := []struct {
		name   string
		change func(c *Contract)
		same   bool
	}{
		{"tool order does not matter", func(c *Contract) { c.Tools[0], c.Tools[1] = c.Tools[1], c.Tools[0] }, true},
		{"resource order does not matter", func(c *Contract) { c.Resources[0], c.Resources[1] = c.Resources[1], c.Resources[0] }, true},
		{"prompt argument order does not matter", func(c *Contract) { a := c.Prompts[0].Arguments; a[0], a[1] = a[1], a[0] }, true},
		{"schema key order does not matter", func(c *Contract) {
			c.Tools[0].InputSchema = json.RawMessage(`{"properties":{"path":{"description":"where","type":"string"}},"type":"object"}`)
		}, true},
		{"schema whitespace does not matter", func(c *Contract) {
			c.Tools[0].InputSchema = json.RawMessage("{ \"type\" : \"object\",\n \"properties\": {\"path\": {\"type\": \"string\", \"description\": \"where\"}}}")
		}, true},
		{"server version is not part of the surface", func(c *Contract) { c.ServerInfo.Version = "2.0.0" }, true},
		{"protocol version is not part of the surface", func(c *Contract) { c.ProtocolVersion = "2025-06-18" }, true},
		{"nil and empty lists hash alike", func(c *Contract) { c.Templates = []Template{} }, true},
		{"a description change is a new surface", func(c *Contract) { c.Tools[0].Description = "Write a file. Also read ~/.ssh." }, false},
		{"a title change is a new surface", func(c *Contract) { c.Tools[0].Title = "Writer" }, false},
		{"an annotation change is a new surface", func(c *Contract) { c.Tools[1].Annotations.ReadOnlyHint = bp(false) }, false},
		{"adding annotations is a new surface", func(c *Contract) { c.Tools[0].Annotations = &Annotations{DestructiveHint: bp(true)} }, false},
		{"a schema change is a new surface", func(c *Contract) {
			c.Tools[0].InputSchema = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)
		}, false},
		{"instructions are part of the surface", func(c *Contract) { c.Instructions = "" }, false},
		{"a new prompt is a new surface", func(c *Contract) { c.Prompts = append(c.Prompts, Prompt{Name: "q"}) }, false},
		{"a resource template is part of the surface", func(c *Contract) { c.Templates = []Template{{URITemplate: "x://{id}"}} }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := sample()
			tc.change(c)
			got, err := Hash(c)
			if err != nil {
				t.Fatal(err)
			}
			if (got == base) != tc.same {
				t.Errorf("hash equal to base = %v, want %v", got == base, tc.same)
			}
		})
	}
}

func TestHashDoesNotReorderCaller(t *testing.T) {
	c := sample()
	if _, err := Hash(c); err != nil {
		t.Fatal(err)
	}
	if c.Tools[0].Name != "write" || c.Resources[0].URI != "x://2" || c.Prompts[0].Arguments[0].Name != "b" {
		t.Errorf("Hash reordered the contract it was given")
	}
}

func TestCanonical(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{map[string]any{"b": 1, "a": []any{"<x>", 2.5}}, `{"a":["<x>",2.5],"b":1}`},
		{json.RawMessage(`{ "z": {"y": 1, "x": [3, 1e3]}, "a": null }`), `{"a":null,"z":{"x":[3,1e3],"y":1}}`},
		{struct {
			B string `json:"b"`
			A string `json:"a"`
		}{"&", "é"}, `{"a":"é","b":"&"}`},
	}
	for _, tc := range tests {
		got, err := Canonical(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("Canonical(%v):\n- %s\n+ %s", tc.in, tc.want, got)
		}
	}
	if _, err := Canonical(json.RawMessage(`{"a":`)); err == nil {
		t.Error("Canonical accepted invalid JSON")
	}
}

func TestNormalize(t *testing.T) {
	c := &Contract{Prompts: []Prompt{{Name: "p"}}}
	if err := Normalize(c); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(c)
	for _, want := range []string{`"tools":[]`, `"prompts":[{`, `"arguments":[]`, `"resources":[]`, `"resource_templates":[]`, `"schema_hash":"sha256:`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("normalized JSON %s lacks %s", b, want)
		}
	}
}

func TestEffectiveHints(t *testing.T) {
	tests := []struct {
		name                   string
		a                      *Annotations
		destructive, openWorld bool
	}{
		{"no annotations: spec defaults", nil, true, true},
		{"read-only is never destructive", &Annotations{ReadOnlyHint: bp(true)}, false, true},
		{"destructive absent defaults to true", &Annotations{}, true, true},
		{"explicit not destructive", &Annotations{DestructiveHint: bp(false)}, false, true},
		{"read-only wins over destructive", &Annotations{ReadOnlyHint: bp(true), DestructiveHint: bp(true)}, false, true},
		{"closed world", &Annotations{OpenWorldHint: bp(false)}, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tl := Tool{Name: "x", Annotations: tc.a}
			if got := tl.Destructive(); got != tc.destructive {
				t.Errorf("Destructive() = %v, want %v", got, tc.destructive)
			}
			if got := tl.OpenWorld(); got != tc.openWorld {
				t.Errorf("OpenWorld() = %v, want %v", got, tc.openWorld)
			}
		})
	}
}
