package mcpb_test

import (
	"errors"
	"os"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verifymcp/verifymcp/ecosystem/mcpb"
)

func manifest(t *testing.T, data string) *mcpb.Manifest {
	t.Helper()
	m, err := mcpb.ParseManifest([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func example(t *testing.T, file string) *mcpb.Manifest {
	t.Helper()
	data, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	return manifest(t, string(data))
}

// server is a manifest with the given server object and user_config.
func server(typ, mcpConfig, userConfig string) string {
	s := `{"manifest_version": "0.4", "name": "x", "version": "1.0.0", "description": "d", "author": {"name": "a"},
	"server": {"type": "` + typ + `", "entry_point": "server/main"`
	if mcpConfig != "" {
		s += `, "mcp_config": ` + mcpConfig
	}
	s += `}`
	if userConfig != "" {
		s += `, "user_config": ` + userConfig
	}
	return s + `}`
}

func TestCommand(t *testing.T) {
	const dir = "/opt/bundle"
	for _, tc := range []struct {
		name       string
		m          *mcpb.Manifest
		values     map[string][]string
		platform   string
		cmd        []string
		env        map[string]string
		unresolved []string
		missing    bool
	}{
		{
			name:   "a multiple directory option expands into arguments",
			m:      example(t, "file-system-node.manifest.json"),
			values: map[string][]string{"allowed_directories": {"/home/sandbox/a", "/home/sandbox/b"}},
			cmd:    []string{"node", dir + "/server/index.js", "/home/sandbox/a", "/home/sandbox/b"},
		},
		{
			name:    "a required option with an empty default is missing",
			m:       example(t, "file-system-node.manifest.json"),
			missing: true,
		},
		{
			name: "defaults are substituted, booleans written as JavaScript writes them",
			m:    example(t, "file-manager-python.manifest.json"),
			cmd:  []string{"python", dir + "/server/main.py", "--workspace=/home/sandbox/Documents"},
			env:  map[string]string{"DEBUG": "false", "PYTHONPATH": dir + "/server/lib"},
		},
		{
			name:   "a value replaces the default",
			m:      example(t, "file-manager-python.manifest.json"),
			values: map[string][]string{"workspace_directory": {"/w"}, "debug_mode": {"true"}},
			cmd:    []string{"python", dir + "/server/main.py", "--workspace=/w"},
			env:    map[string]string{"DEBUG": "true", "PYTHONPATH": dir + "/server/lib"},
		},
		{
			name: "the platform's override replaces command, args and env whole",
			m: manifest(t, server("binary", `{"command": "${__dirname}/server/main", "args": ["--a"], "env": {"A": "1", "B": "2"},
				"platform_overrides": {"linux": {"args": ["--linux"], "env": {"L": "${HOME}"}}, "win32": {"command": "main.exe"}}}`, "")),
			platform: "linux",
			cmd:      []string{dir + "/server/main", "--linux"},
			env:      map[string]string{"L": "/home/sandbox"},
		},
		{
			name:     "another platform's override is not applied",
			m:        manifest(t, server("binary", `{"command": "m", "platform_overrides": {"win32": {"command": "main.exe", "args": []}}}`, "")),
			platform: "linux",
			cmd:      []string{"m"},
		},
		{
			name:     "an empty override args list replaces the args",
			m:        manifest(t, server("binary", `{"command": "m", "args": ["x"], "platform_overrides": {"linux": {"args": []}}}`, "")),
			platform: "linux",
			cmd:      []string{"m"},
		},
		{
			name: "system directories and path separators",
			m:    manifest(t, server("node", `{"command": "node", "args": ["${DESKTOP}", "${DOCUMENTS}", "${DOWNLOADS}", "a${/}b${pathSeparator}c"]}`, "")),
			cmd:  []string{"node", mcpb.Desktop, mcpb.Documents, mcpb.Downloads, "a/b/c"},
		},
		{
			name:     "win32's separator is a backslash",
			m:        manifest(t, server("node", `{"command": "node", "args": ["a${/}b"]}`, "")),
			platform: "win32",
			cmd:      []string{"node", `a\b`},
		},
		{
			name:       "unknown variables are left as written and named",
			m:          manifest(t, server("node", `{"command": "node", "args": ["${FOO}/x", "${user_config.nope}"], "env": {"E": "${BAR}"}}`, "")),
			cmd:        []string{"node", "${FOO}/x", "${user_config.nope}"},
			env:        map[string]string{"E": "${BAR}"},
			unresolved: []string{"BAR", "FOO", "user_config.nope"},
		},
		{
			name: "a list in a string is left as written",
			m: manifest(t, server("node", `{"command": "node", "args": ["--d=${user_config.dirs}"]}`,
				`{"dirs": {"type": "directory", "title": "t", "description": "d", "multiple": true, "default": ["${HOME}/a"]}}`)),
			cmd:        []string{"node", "--d=${user_config.dirs}"},
			unresolved: []string{"user_config.dirs"},
		},
		{
			name: "a substituted value is not substituted again",
			m: manifest(t, server("node", `{"command": "node", "args": ["${user_config.k}"], "env": {"K": "x${user_config.k}"}}`,
				`{"k": {"type": "string", "title": "t", "description": "d"}}`)),
			values: map[string][]string{"k": {"${HOME}"}},
			cmd:    []string{"node", "${HOME}"},
			env:    map[string]string{"K": "x${HOME}"},
		},
		{
			name:   "a value for an undeclared key is substituted",
			m:      manifest(t, server("node", `{"command": "node", "args": ["${user_config.extra}"]}`, "")),
			values: map[string][]string{"extra": {"e"}},
			cmd:    []string{"node", "e"},
		},
		{name: "node without mcp_config", m: manifest(t, server("node", "", "")), cmd: []string{"node", dir + "/server/main"}},
		{name: "python without mcp_config", m: manifest(t, server("python", "", "")), cmd: []string{"python3", dir + "/server/main"}},
		{name: "binary without mcp_config", m: manifest(t, server("binary", "", "")), cmd: []string{dir + "/server/main"}},
		{name: "uv without mcp_config", m: manifest(t, server("uv", "", "")), cmd: []string{"uv", "run", "--directory", dir, "server/main"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.platform == "" {
				tc.platform = "linux"
			}
			cmd, env, err := tc.m.Command(dir, tc.values, tc.platform)
			if tc.missing {
				if !errors.Is(err, mcpb.ErrMissingConfig) {
					t.Fatalf("Command: %v, want ErrMissingConfig", err)
				}
				return
			}
			var unresolved *mcpb.UnresolvedError
			if errors.As(err, &unresolved) {
				if diff := cmp.Diff(tc.unresolved, unresolved.Vars); diff != "" {
					t.Errorf("unresolved (-want +got):\n%s", diff)
				}
			} else if err != nil || tc.unresolved != nil {
				t.Fatalf("Command: %v, want unresolved %v", err, tc.unresolved)
			}
			if diff := cmp.Diff(tc.cmd, cmd); diff != "" {
				t.Errorf("cmd (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.env, env); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlaceholders(t *testing.T) {
	m := manifest(t, server("node", `{"command": "node"}`, `{
		"name": {"type": "string", "title": "t", "description": "d"},
		"api_key": {"type": "string", "title": "t", "description": "d", "sensitive": true, "required": true},
		"token": {"type": "string", "title": "t", "description": "d", "sensitive": true, "default": "given"},
		"url": {"type": "string", "title": "t", "description": "d", "default": "${HOME}/x"},
		"n": {"type": "number", "title": "t", "description": "d"},
		"lo": {"type": "number", "title": "t", "description": "d", "min": 5, "max": 9},
		"neg": {"type": "number", "title": "t", "description": "d", "max": -2},
		"timeout": {"type": "number", "title": "t", "description": "d", "default": 30},
		"flag": {"type": "boolean", "title": "t", "description": "d"},
		"on": {"type": "boolean", "title": "t", "description": "d", "default": true},
		"dir": {"type": "directory", "title": "t", "description": "d"},
		"dirs": {"type": "directory", "title": "t", "description": "d", "multiple": true, "required": true, "default": []},
		"host": {"type": "string", "title": "t", "description": "d", "required": true, "default": ""},
		"opt": {"type": "string", "title": "t", "description": "d", "default": ""},
		"docs": {"type": "directory", "title": "t", "description": "d", "multiple": true, "default": ["${HOME}/Desktop", "${DOCUMENTS}"]},
		"db": {"type": "file", "title": "t", "description": "d"}
	}`))
	values, sensitive := mcpb.Placeholders(m, "/scratch")
	key := values["api_key"]
	if len(key) != 1 || !regexp.MustCompile(`^mcpb-api_key-[0-9a-f]{16}$`).MatchString(key[0]) {
		t.Errorf("api_key = %q, want mcpb-api_key-<16 hex>", key)
	}
	again, _ := mcpb.Placeholders(m, "/scratch")
	if again["api_key"][0] == key[0] {
		t.Errorf("two calls gave the same fake credential %q", key[0])
	}
	delete(values, "api_key")
	want := map[string][]string{
		"name": {"placeholder-name"}, "token": {"given"}, "url": {"/home/sandbox/x"},
		"host": {"placeholder-host"}, "opt": {""},
		"n": {"1"}, "lo": {"5"}, "neg": {"-2"}, "timeout": {"30"},
		"flag": {"false"}, "on": {"true"},
		"dir": {"/scratch"}, "dirs": {"/scratch"}, "docs": {"/home/sandbox/Desktop", "/home/sandbox/Documents"},
		"db": {"/scratch/notes.txt"},
	}
	if diff := cmp.Diff(want, values); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"api_key", "token"}, sensitive); diff != "" {
		t.Errorf("sensitive (-want +got):\n%s", diff)
	}
	// The placeholders satisfy every required option, so the server runs.
	values["api_key"] = key
	if _, _, err := m.Command("/b", values, "linux"); err != nil {
		t.Errorf("Command with placeholders: %v", err)
	}
}
