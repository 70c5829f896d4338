package exercise

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// same reports whether two JSON documents are equal after unmarshalling.
func same(t *testing.T, got, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("output %q is not JSON: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want %q is not JSON: %v", want, err)
	}
	return reflect.DeepEqual(g, w)
}

// obj wraps properties and required names in an object schema.
func obj(props string, required ...string) string {
	req, _ := json.Marshal(required)
	return fmt.Sprintf(`{"type":"object","properties":{%s},"required":%s}`, props, req)
}

func TestArguments(t *testing.T) {
	tests := []struct {
		name, schema, want string
	}{
		{"nil schema", ``, `{}`},
		{"empty object", `{}`, `{}`},
		{"no properties", `{"type":"object"}`, `{}`},
		{"root not an object", `{"type":"string"}`, `{}`},
		{"root true", `true`, `{}`},
		{"required only", obj(`"a":{"type":"string"},"b":{"type":"string"}`, "a"), `{"a":"example"}`},
		{"nothing required", obj(`"a":{"type":"string"}`), `{}`},
		{"required not declared", obj(`"a":{"type":"string"}`, "zzz"), `{"zzz":"example"}`},
		{"required with additionalProperties", `{"type":"object","properties":{"a":{}},"additionalProperties":{"type":"integer"},"required":["n"]}`, `{"n":1}`},
		{"nested required", obj(`"o":{"type":"object","properties":{"x":{"type":"integer"},"y":{"type":"string"}},"required":["x"]}`, "o"), `{"o":{"x":1}}`},
		{"object implied by properties", obj(`"o":{"properties":{"x":{"type":"boolean"}},"required":["x"]}`, "o"), `{"o":{"x":false}}`},
		{"enum first", obj(`"m":{"type":"string","enum":["fast","slow"]}`, "m"), `{"m":"fast"}`},
		{"const null", obj(`"v":{"const":null}`, "v"), `{"v":null}`},
		{"enum null first", obj(`"v":{"enum":[null,"x"]}`, "v"), `{"v":null}`},
		{"default null", obj(`"v":{"type":["string","null"],"default":null}`, "v"), `{"v":null}`},
		{"const", obj(`"v":{"const":{"k":[1,2]}}`, "v"), `{"v":{"k":[1,2]}}`},
		{"default of the type", obj(`"n":{"type":"integer","default":42}`, "n"), `{"n":42}`},
		{"default of another type ignored", obj(`"n":{"type":"integer","default":"many"}`, "n"), `{"n":1}`},
		{"default without type", obj(`"s":{"default":"keep"}`, "s"), `{"s":"keep"}`},
		{"boolean", obj(`"b":{"type":"boolean"}`, "b"), `{"b":false}`},
		{"null", obj(`"z":{"type":"null"}`, "z"), `{"z":null}`},
		{"type list first non-null", obj(`"x":{"type":["null","integer"]}`, "x"), `{"x":1}`},
		{"number", obj(`"x":{"type":"number"}`, "x"), `{"x":1}`},
		{"minimum", obj(`"x":{"type":"integer","minimum":10}`, "x"), `{"x":10}`},
		{"maximum below one", obj(`"x":{"type":"integer","maximum":-3}`, "x"), `{"x":-3}`},
		{"draft-4 exclusiveMinimum", obj(`"x":{"type":"integer","minimum":10,"exclusiveMinimum":true}`, "x"), `{"x":11}`},
		{"draft-6 exclusiveMinimum", obj(`"x":{"type":"integer","exclusiveMinimum":10}`, "x"), `{"x":11}`},
		{"draft-4 exclusiveMaximum", obj(`"x":{"type":"integer","maximum":1,"exclusiveMaximum":true}`, "x"), `{"x":0}`},
		{"draft-6 exclusiveMaximum number", obj(`"x":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1}`, "x"), `{"x":0.5}`},
		{"multipleOf", obj(`"x":{"type":"integer","minimum":5,"multipleOf":3}`, "x"), `{"x":6}`},
		{"fractional multipleOf", obj(`"x":{"type":"number","minimum":0.3,"maximum":0.6,"multipleOf":0.25}`, "x"), `{"x":0.5}`},
		{"minLength pads", obj(`"s":{"type":"string","minLength":10}`, "s"), `{"s":"examplexxx"}`},
		{"maxLength truncates", obj(`"s":{"type":"string","maxLength":3}`, "s"), `{"s":"exa"}`},
		{"pattern met by a candidate", obj(`"s":{"type":"string","pattern":"^[0-9]+$"}`, "s"), `{"s":"1"}`},
		{"pattern met by the pattern", obj(`"s":{"type":"string","pattern":"^[A-Z]{2}-\\d{4}$"}`, "s"), `{"s":"AA-0000"}`},
		{"pattern unanchored", obj(`"s":{"type":"string","pattern":"amp"}`, "s"), `{"s":"example"}`},
		{"format uri", obj(`"s":{"type":"string","format":"uri"}`, "s"), `{"s":"https://docs.example.com/guide/index.html"}`},
		{"format email", obj(`"s":{"type":"string","format":"email"}`, "s"), `{"s":"jordan.lee@example.com"}`},
		{"format hostname", obj(`"s":{"type":"string","format":"hostname"}`, "s"), `{"s":"docs.example.com"}`},
		{"format date", obj(`"s":{"type":"string","format":"date"}`, "s"), `{"s":"2026-01-15"}`},
		{"format date-time", obj(`"s":{"type":"string","format":"date-time"}`, "s"), `{"s":"2026-01-15T10:00:00Z"}`},
		{"format time", obj(`"s":{"type":"string","format":"time"}`, "s"), `{"s":"10:00:00"}`},
		{"format uuid", obj(`"s":{"type":"string","format":"uuid"}`, "s"), `{"s":"3f2b8c1e-6d4a-4e5b-9c7d-2a1b0c9d8e7f"}`},
		{"format ipv4", obj(`"s":{"type":"string","format":"ipv4"}`, "s"), `{"s":"192.0.2.10"}`},
		{"format ipv6", obj(`"s":{"type":"string","format":"ipv6"}`, "s"), `{"s":"2001:db8::10"}`},
		{"format duration", obj(`"s":{"type":"string","format":"duration"}`, "s"), `{"s":"PT1M"}`},
		{"format regex", obj(`"s":{"type":"string","format":"regex"}`, "s"), `{"s":"^example$"}`},
		{"format beats name", obj(`"path":{"type":"string","format":"date"}`, "path"), `{"path":"2026-01-15"}`},
		{"unknown format uses the name", obj(`"url":{"type":"string","format":"x-custom"}`, "url"), `{"url":"https://docs.example.com/guide/index.html"}`},
		{"name path", obj(`"filePath":{"type":"string"}`, "filePath"), `{"filePath":"/home/sandbox/work/notes.txt"}`},
		{"name source", obj(`"source":{"type":"string"}`, "source"), `{"source":"/home/sandbox/work/notes.txt"}`},
		{"name directory", obj(`"directory":{"type":"string"}`, "directory"), `{"directory":"/home/sandbox/work"}`},
		{"name dir_path", obj(`"dir_path":{"type":"string"}`, "dir_path"), `{"dir_path":"/home/sandbox/work"}`},
		{"name url", obj(`"webhook_url":{"type":"string"}`, "webhook_url"), `{"webhook_url":"https://docs.example.com/guide/index.html"}`},
		{"name email", obj(`"to":{"type":"string"},"userEmail":{"type":"string"}`, "to", "userEmail"), `{"to":"jordan.lee@example.com","userEmail":"jordan.lee@example.com"}`},
		{"name host", obj(`"domain":{"type":"string"}`, "domain"), `{"domain":"docs.example.com"}`},
		{"name id string", obj(`"issue_id":{"type":"string"}`, "issue_id"), `{"issue_id":"example-1"}`},
		{"name id integer", obj(`"issue_id":{"type":"integer"}`, "issue_id"), `{"issue_id":1}`},
		{"name language", obj(`"lang":{"type":"string"}`, "lang"), `{"lang":"en"}`},
		{"name text", obj(`"query":{"type":"string"},"title":{"type":"string"}`, "query", "title"), `{"query":"example","title":"example"}`},
		{"plural name", obj(`"urls":{"type":"array","minItems":1,"items":{"type":"string"}}`, "urls"), `{"urls":["https://docs.example.com/guide/index.html"]}`},
		{"array without minItems", obj(`"a":{"type":"array","items":{"type":"string"}}`, "a"), `[]`},
		{"array minItems", obj(`"a":{"type":"array","minItems":2,"items":{"type":"integer"}}`, "a"), `{"a":[1,1]}`},
		{"array uniqueItems", obj(`"a":{"type":"array","minItems":3,"uniqueItems":true,"items":{"type":"integer","minimum":1}}`, "a"), `{"a":[1,2,3]}`},
		{"array uniqueItems enum", obj(`"a":{"type":"array","minItems":2,"uniqueItems":true,"items":{"enum":["x","y"]}}`, "a"), `{"a":["x","y"]}`},
		{"array uniqueItems two letters", obj(`"a":{"type":"array","minItems":6,"uniqueItems":true,"items":{"type":"string","pattern":"^[ab]{4}$"}}`, "a"), `{"a":["aaaa","aaab","aaba","aabb","abaa","abab"]}`},
		{"array uniqueItems strings", obj(`"tags":{"type":"array","minItems":3,"uniqueItems":true,"items":{"type":"string","pattern":"^[a-z]{3}$"}}`, "tags"), `{"tags":["aaa","aab","aac"]}`},
		{"unique paths are decoys", obj(`"paths":{"type":"array","minItems":3,"uniqueItems":true,"items":{"type":"string"}}`, "paths"), `{"paths":["/home/sandbox/work/notes.txt","/home/sandbox/work/todo.md","/home/sandbox/work/data/report.csv"]}`},
		{"unique emails", obj(`"cc":{"type":"array","minItems":2,"uniqueItems":true,"items":{"type":"string","format":"email"}}`, "cc"), `{"cc":["jordan.lee@example.com","jordan.lee+2@example.com"]}`},
		{"unique urls", obj(`"x":{"type":"array","minItems":2,"uniqueItems":true,"items":{"type":"string","format":"uri"}}`, "x"), `{"x":["https://docs.example.com/guide/index.html","https://docs.example.com/guide/index.html?page=2"]}`},
		{"unique plain strings", obj(`"x":{"type":"array","minItems":3,"uniqueItems":true,"items":{"type":"string"}}`, "x"), `{"x":["example","a","1"]}`},
		{"tuple items", obj(`"t":{"type":"array","minItems":2,"prefixItems":[{"type":"integer"},{"type":"string"}]}`, "t"), `{"t":[1,"example"]}`},
		{"draft-4 tuple items", obj(`"t":{"type":"array","minItems":2,"items":[{"type":"boolean"},{"type":"integer"}]}`, "t"), `{"t":[false,1]}`},
		{"minProperties", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"},"c":{"type":"string"}},"required":["c"],"minProperties":2}`, `{"c":"example","a":"example"}`},
		{"ref to $defs", `{"type":"object","properties":{"p":{"$ref":"#/$defs/point"}},"required":["p"],"$defs":{"point":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}}}`, `{"p":{"x":1}}`},
		{"ref to definitions escaped", `{"type":"object","properties":{"p":{"$ref":"#/definitions/a~1b"}},"required":["p"],"definitions":{"a/b":{"type":"integer","minimum":7}}}`, `{"p":7}`},
		{"root ref", `{"$ref":"#/$defs/args","$defs":{"args":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}}`, `{"q":"example"}`},
		{"recursive but optional", `{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"},"v":{"type":"integer"}},"required":["v"]}},"type":"object","properties":{"root":{"$ref":"#/$defs/n"}},"required":["root"]}`, `{"root":{"v":1}}`},
		{"ref into a list", `{"type":"object","properties":{"a":{"$ref":"#/$defs/alts/1"}},"required":["a"],"$defs":{"alts":[{"type":"string"},{"type":"integer","minimum":3}]}}`, `{"a":3}`},
		{"ref to the root optional", `{"type":"object","properties":{"self":{"$ref":"#"},"n":{"type":"integer"}},"required":["n"]}`, `{"n":1}`},
		{"root anyOf not an object", `{"anyOf":[{"type":"string"}],"properties":{"a":{}}}`, `{}`},
		{"number implied by bounds", obj(`"x":{"minimum":2.5}`, "x"), `{"x":2.5}`},
		{"array implied by minItems", obj(`"x":{"minItems":1,"items":{"type":"boolean"}}`, "x"), `{"x":[false]}`},
		{"maximum only with multipleOf", obj(`"x":{"type":"integer","maximum":-10,"multipleOf":4}`, "x"), `{"x":-12}`},
		{"allOf upper bounds", obj(`"s":{"allOf":[{"type":"string","maxLength":5},{"maxLength":2}]}`, "s"), `{"s":"ex"}`},
		{"name from", obj(`"from":{"type":"string"}`, "from"), `{"from":"jordan.lee@example.com"}`},
		{"anyOf first", obj(`"x":{"anyOf":[{"type":"integer"},{"type":"string"}]}`, "x"), `{"x":1}`},
		{"anyOf null last", obj(`"x":{"anyOf":[{"type":"null"},{"type":"string","format":"email"}]}`, "x"), `{"x":"jordan.lee@example.com"}`},
		{"default beside anyOf", obj(`"due":{"anyOf":[{"type":"string","format":"date"},{"type":"null"}],"default":null}`, "due"), `{"due":null}`},
		{"anyOf only null", obj(`"x":{"anyOf":[{"type":"null"}]}`, "x"), `{"x":null}`},
		{"oneOf skips unsatisfiable", obj(`"x":{"oneOf":[{"type":"string","pattern":"(?=x)"},{"type":"integer","minimum":3}]}`, "x"), `{"x":3}`},
		{"anyOf with siblings", obj(`"x":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"anyOf":[{"required":["b"]},{"required":["a"]}]}`, "x"), `{"x":{"b":1}}`},
		{"root anyOf", `{"anyOf":[{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]},{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}]}`, `{"id":1}`},
		{"allOf merges", `{"allOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{"type":"integer"}},"required":["b"]}]}`, `{"a":"example","b":1}`},
		{"allOf bounds", obj(`"n":{"allOf":[{"type":"number","minimum":2},{"type":"integer","maximum":9,"minimum":4}]}`, "n"), `{"n":4}`},
		{"ignored keywords", obj(`"s":{"type":"string","not":{"const":"example"},"if":{"type":"string"},"then":{"minLength":100}}`, "s"), `{"s":"example"}`},
		{"additionalProperties false", `{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],"additionalProperties":false}`, `{"a":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Arguments(json.RawMessage(tt.schema), DefaultPlaces())
			if err != nil {
				t.Fatalf("Arguments: %v", err)
			}
			want := tt.want
			if want == `[]` { // shorthand: the one required property is an empty array
				want = `{"a":[]}`
			}
			if !same(t, string(got), want) {
				t.Errorf("Arguments(%s) = %s, want %s", tt.schema, got, want)
			}
		})
	}
}

func TestArgumentsErrors(t *testing.T) {
	// deep nests required objects 40 levels down, with no reference.
	deep := `{"type":"string"}`
	for range 40 {
		deep = obj(`"a":`+deep, "a")
	}
	// bomb is 3^6 required strings of 4000 characters, through references.
	bomb := `{"$defs":{"l0":{"type":"string","minLength":4000}`
	for i := 1; i <= 6; i++ {
		bomb += fmt.Sprintf(`,"l%d":{"type":"object","properties":{"a":{"$ref":"#/$defs/l%d"},"b":{"$ref":"#/$defs/l%d"},"c":{"$ref":"#/$defs/l%d"}},"required":["a","b","c"]}`, i, i-1, i-1, i-1)
	}
	bomb += `},"$ref":"#/$defs/l6"}`
	// branchy offers two branches per level, 24 levels down, that all fail
	// at the bottom: 2^24 tries without the bound on nodes visited.
	branchy := `{"$defs":{"l0":{"type":"string","pattern":"("}`
	for i := 1; i <= 24; i++ {
		branchy += fmt.Sprintf(`,"l%d":{"anyOf":[{"$ref":"#/$defs/l%d"},{"$ref":"#/$defs/l%d"}]}`, i, i-1, i-1)
	}
	branchy += `},"type":"object","properties":{"x":{"$ref":"#/$defs/l24"}},"required":["x"]}`
	tests := []struct {
		name, schema, want string
	}{
		{"too many branches", branchy, "schema is too complex to generate arguments for"},
		{"invalid JSON", `{"type":`, "input schema is not valid JSON"},
		{"trailing data", `{} {}`, "input schema is not valid JSON"},
		{"JSON nested too deep", strings.Repeat(`[`, 5000) + strings.Repeat(`]`, 5000), "input schema is not valid JSON: JSON is nested past depth 1000"},
		{"pattern never met", obj(`"s":{"type":"string","pattern":"^x$","maxLength":0}`, "s"), `property s: pattern "^x$" cannot be satisfied`},
		{"pattern not RE2", obj(`"s":{"type":"string","pattern":"^(?!a)b"}`, "s"), `property s: pattern "^(?!a)b" cannot be satisfied`},
		{"nested path in error", obj(`"o":{"type":"object","properties":{"s":{"type":"string","pattern":"("}},"required":["s"]}`, "o"), `property o.s: pattern "(" cannot be satisfied`},
		{"minLength past the bound", obj(`"s":{"type":"string","minLength":100000}`, "s"), "property s: minLength 100000 is past the bound"},
		{"minLength over maxLength", obj(`"s":{"type":"string","minLength":5,"maxLength":2}`, "s"), "property s: minLength 5 is more than maxLength 2"},
		{"minItems past the bound", obj(`"a":{"type":"array","minItems":1000}`, "a"), "property a: minItems 1000 is past the bound"},
		{"minItems over maxItems", obj(`"a":{"type":"array","minItems":3,"maxItems":1}`, "a"), "property a: minItems 3 is more than maxItems 1"},
		{"unique booleans", obj(`"a":{"type":"array","minItems":3,"uniqueItems":true,"items":{"type":"boolean"}}`, "a"), "property a: 3 distinct items cannot be generated"},
		{"no integer in bounds", obj(`"n":{"type":"integer","minimum":1.2,"maximum":1.8}`, "n"), "property n: no integer fits the bounds"},
		{"empty exclusive range", obj(`"n":{"type":"number","exclusiveMinimum":1,"exclusiveMaximum":1}`, "n"), "property n: no number fits the bounds"},
		{"false schema", obj(`"x":false`, "x"), "property x: schema false accepts no value"},
		{"dangling ref", obj(`"x":{"$ref":"#/$defs/none"}`, "x"), `property x: reference "#/$defs/none" names nothing`},
		{"remote ref", obj(`"x":{"$ref":"https://example.com/s.json"}`, "x"), "is not local"},
		{"required cycle", `{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}},"required":["next"]}},"$ref":"#/$defs/n"}`, "schema is recursive past depth 32"},
		{"ref to itself", `{"type":"object","properties":{"x":{"$ref":"#/properties/x"}},"required":["x"]}`, "schema is recursive past depth 32"},
		{"deep nesting", deep, "schema is nested past depth 32"},
		{"size bomb", bomb, "arguments would be larger than 64 KiB"},
		{"allOf types disagree", obj(`"x":{"allOf":[{"type":"string"},{"type":"integer"}]}`, "x"), "allOf branches disagree on the type"},
		{"anyOf none satisfiable", obj(`"x":{"anyOf":[{"type":"string","pattern":"("},{"type":"integer","minimum":2,"maximum":1}]}`, "x"), `property x: pattern "(" cannot be satisfied`},
		{"minProperties unmet", `{"type":"object","properties":{"a":{}},"minProperties":3}`, "minProperties 3 is more than the properties declared"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Arguments(json.RawMessage(tt.schema), DefaultPlaces())
			if err == nil {
				t.Fatalf("Arguments = %s, want an error containing %q", got, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestFromPattern(t *testing.T) {
	for _, pattern := range []string{
		`^[A-Z]{2}-\d{4}$`, `^(foo|bar)+baz?$`, `^\w+@\w+\.com$`, `^[^a-z]{3}$`, `^.{5}$`,
		`^(?i)hello$`, `^v\d+\.\d+\.\d+(-[a-z]+)?$`, `^[\p{Greek}]{2}$`, `^x{2,5}y*$`,
	} {
		got, ok := fromPattern(pattern)
		if !ok || !regexp.MustCompile(pattern).MatchString(got) {
			t.Errorf("fromPattern(%q) = %q, %v; it does not match", pattern, got, ok)
		}
	}
	if got, ok := fromPattern(`[^\x00-\x{10FFFF}]`); ok {
		t.Errorf("fromPattern of an empty class = %q, want failure", got)
	}
}

func TestArgumentsDeterministic(t *testing.T) {
	schema := json.RawMessage(obj(`"z":{"type":"string"},"a":{"type":"integer"},"m":{"type":"object","properties":{"y":{"type":"boolean"},"b":{"type":"string","format":"uri"}},"required":["y","b"]}`, "z", "a", "m"))
	first, err := Arguments(schema, DefaultPlaces())
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		got, _ := Arguments(schema, DefaultPlaces())
		if string(got) != string(first) {
			t.Fatalf("Arguments = %s, then %s", first, got)
		}
	}
	if want := `{"a":1,"m":{"b":"https://docs.example.com/guide/index.html","y":false},"z":"example"}`; string(first) != want {
		t.Errorf("Arguments = %s, want %s (sorted keys)", first, want)
	}
}

func TestArgumentsPlaces(t *testing.T) {
	p := Places{Scratch: "/tmp/s", Decoys: []Decoy{{Path: "a/b.txt"}}, URL: "http://u.test/x", Host: "u.test", Email: "m@u.test"}
	got, err := Arguments(json.RawMessage(obj(`"file":{"type":"string"},"folder":{"type":"string"},"link":{"type":"string"},"host":{"type":"string"},"email":{"type":"string"}`, "file", "folder", "link", "host", "email")), p)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"email":"m@u.test","file":"/tmp/s/a/b.txt","folder":"/tmp/s","host":"u.test","link":"http://u.test/x"}`
	if !same(t, string(got), want) {
		t.Errorf("Arguments = %s, want %s", got, want)
	}
}

func TestDefaultPlaces(t *testing.T) {
	p := DefaultPlaces()
	want := map[string]string{
		"url":     "https://docs.example.com/guide/index.html",
		"host":    "docs.example.com",
		"email":   "jordan.lee@example.com",
		"scratch": "/home/sandbox/work",
	}
	if got := p.Map(); !reflect.DeepEqual(got, want) {
		t.Errorf("Map() = %v, want %v", got, want)
	}
	var paths []string
	for _, d := range p.Decoys {
		paths = append(paths, d.Path)
		if len(d.Data) == 0 {
			t.Errorf("decoy %s is empty", d.Path)
		}
		if strings.Contains(strings.ToLower(string(d.Data)), "key") || strings.Contains(strings.ToLower(string(d.Data)), "token") || strings.Contains(strings.ToLower(string(d.Data)), "password") {
			t.Errorf("decoy %s looks like it holds a secret", d.Path)
		}
	}
	if want := []string{"notes.txt", "todo.md", "data/report.csv", "data/config.json", "docs/plan.md"}; !reflect.DeepEqual(paths, want) {
		t.Errorf("decoys = %v, want %v", paths, want)
	}
	for _, d := range p.Decoys {
		if strings.HasSuffix(d.Path, ".json") && !json.Valid(d.Data) {
			t.Errorf("decoy %s is not valid JSON", d.Path)
		}
	}
}
