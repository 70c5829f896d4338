package mcpb_test

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/ecosystem/mcpb"
)

// TestParseManifestExamples reads the spec repository's own examples
// (testdata/README.md).
func TestParseManifestExamples(t *testing.T) {
	for _, tc := range []struct {
		file, name, version, spec, typ string
		tools, options                 int
	}{
		{"file-system-node.manifest.json", "Filesystem", "0.1.3", "0.1", mcpb.TypeNode, 11, 1},
		{"file-manager-python.manifest.json", "file-manager-python", "0.1.0", "0.1", mcpb.TypePython, 3, 2},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile("testdata/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			m, err := mcpb.ParseManifest(data)
			if err != nil {
				t.Fatal(err)
			}
			if m.Name != tc.name || m.Version != tc.version || m.Spec() != tc.spec || m.Server.Type != tc.typ ||
				len(m.Tools) != tc.tools || len(m.UserConfig) != tc.options || m.Server.MCPConfig == nil {
				t.Errorf("got %s %s spec %s type %s, %d tools, %d options; want %+v",
					m.Name, m.Version, m.Spec(), m.Server.Type, len(m.Tools), len(m.UserConfig), tc)
			}
		})
	}
}

const minimal = `{"manifest_version": "0.3", "name": "x", "version": "1.0.0", "description": "d",
 "author": {"name": "a"}, "server": {"type": "node", "entry_point": "server/index.js",
 "mcp_config": {"command": "node", "args": ["${__dirname}/server/index.js"]}}}`

// edit is minimal with one field replaced (or, with value "", removed).
func edit(t *testing.T, path, value string) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(minimal), &m); err != nil {
		t.Fatal(err)
	}
	keys := strings.Split(path, ".")
	obj := m
	for _, k := range keys[:len(keys)-1] {
		obj = obj[k].(map[string]any)
	}
	last := keys[len(keys)-1]
	if value == "" {
		delete(obj, last)
	} else {
		var v any
		if err := json.Unmarshal([]byte(value), &v); err != nil {
			t.Fatal(err)
		}
		obj[last] = v
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestParseManifest(t *testing.T) {
	for _, tc := range []struct {
		name, path, value string
		field             string // "" when valid
	}{
		{"minimal is valid", "license", `"MIT"`, ""},
		{"unknown fields are tolerated", "id", `"anthropic.demo"`, ""},
		{"neither version key", "manifest_version", "", "manifest_version"},
		{"legacy dxt_version", "dxt_version", `"0.2"`, ""},
		{"unknown version", "manifest_version", `"0.9"`, "manifest_version"},
		{"versions differ", "dxt_version", `"0.1"`, "dxt_version"},
		{"no name", "name", "", "name"},
		{"no version", "version", "", "version"},
		{"no description", "description", "", "description"},
		{"no author name", "author.name", "", "author.name"},
		{"no author", "author", "", "author.name"},
		{"bad server type", "server.type", `"docker"`, "server.type"},
		{"no server type", "server.type", "", "server.type"},
		{"uv before 0.4", "server.type", `"uv"`, "server.type"},
		{"no entry point", "server.entry_point", "", "server.entry_point"},
		{"no command", "server.mcp_config.command", "", "server.mcp_config.command"},
		{"no mcp_config", "server.mcp_config", "", ""},
		{"tool without name", "tools", `[{"description": "d"}]`, "tools[0].name"},
		{"prompt without name", "prompts", `[{"text": "t"}]`, "prompts[0].name"},
		{"bad option type", "user_config", `{"k": {"type": "color", "title": "t", "description": "d"}}`, "user_config.k.type"},
		{"version not a string", "version", `1`, "version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := edit(t, tc.path, tc.value)
			if tc.name == "legacy dxt_version" {
				data = edit(t, "manifest_version", "")
				data = []byte(strings.Replace(string(data), "{", `{"dxt_version": "0.2",`, 1))
			}
			_, err := mcpb.ParseManifest(data)
			switch {
			case tc.field == "" && err != nil:
				t.Errorf("ParseManifest: %v, want no error", err)
			case tc.field != "" && !errors.Is(err, mcpb.ErrManifest):
				t.Errorf("ParseManifest: %v, want ErrManifest", err)
			case tc.field != "" && !strings.Contains(err.Error(), tc.field):
				t.Errorf("ParseManifest: %v, want it to name %s", err, tc.field)
			}
		})
	}
	uv := edit(t, "server.type", `"uv"`)
	uv = []byte(strings.Replace(string(uv), `"0.3"`, `"0.4"`, 1))
	if _, err := mcpb.ParseManifest(uv); err != nil {
		t.Errorf("uv with 0.4: %v", err)
	}
}

// TestParseManifestAsJavaScript: keys are matched as a client's
// JSON.parse matches them, by exact name, so that no manifest means one
// thing here and another to the client.
func TestParseManifestAsJavaScript(t *testing.T) {
	// A key in other case is an unknown key, as to JSON.parse.
	other := strings.Replace(minimal, `"author"`,
		`"Server": {"type": "binary", "entry_point": "x", "mcp_config": {"command": "/bin/evil"}}, "author"`, 1)
	m, err := mcpb.ParseManifest([]byte(other))
	if err != nil || m.Server.Type != mcpb.TypeNode || m.Server.MCPConfig.Command != "node" {
		t.Errorf("ParseManifest = %+v, %v; want the server under the exact key", m, err)
	}
	for _, tc := range []struct{ name, data string }{
		{"a name only in other case", strings.Replace(minimal, `"name": "x"`, `"Name": "x"`, 1)},
		{"a repeated key", strings.Replace(minimal, `"name": "x"`, `"name": "x", "name": "y"`, 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := mcpb.ParseManifest([]byte(tc.data))
			if !errors.Is(err, mcpb.ErrManifest) {
				t.Errorf("ParseManifest = %+v, %v; want ErrManifest", m, err)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	for _, tc := range []struct {
		raw      string
		want     []string
		list, ok bool
	}{
		{`"${HOME}/x"`, []string{"${HOME}/x"}, false, true},
		{`30`, []string{"30"}, false, true},
		{`1.5`, []string{"1.5"}, false, true},
		{`true`, []string{"true"}, false, true},
		{`["a", "b"]`, []string{"a", "b"}, true, true},
		{`[]`, []string{}, true, true},
		{``, nil, false, false},
		{`[1]`, nil, false, false},
		{`null`, nil, false, false},
	} {
		got, list, ok := mcpb.UserOption{Default: []byte(tc.raw)}.Defaults()
		if ok != tc.ok || list != tc.list || strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("Defaults(%s) = %q, %v, %v; want %q, %v, %v", tc.raw, got, list, ok, tc.want, tc.list, tc.ok)
		}
	}
}
