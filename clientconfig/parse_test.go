package clientconfig

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mustParse(t *testing.T, p string) *File {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	f, err := ParseFile(p, data, "")
	if err != nil {
		t.Fatalf("ParseFile(%s): %v", p, err)
	}
	return f
}

// TestParseTestdata reads every real-shaped file: client, servers (name,
// line, transport, project), inputs and unknown, exactly.
func TestParseTestdata(t *testing.T) {
	tests := []struct {
		path    string
		client  string
		servers []string
		inputs  []Input
		unknown []Unknown
	}{
		{"testdata/claude-desktop/claude_desktop_config.json", ClientClaudeDesktop,
			[]string{"filesystem 3 stdio ", "github 12 stdio ", "postgres 19 stdio ", "brave-search 23 stdio "}, nil, nil},
		{"testdata/claude-code/home/.claude.json", ClientClaudeCode,
			[]string{"sentry 6 http ", "slack 13 stdio ", "sqlite 28 stdio /home/alice/app"}, nil, nil},
		{"testdata/claude-code/project/.mcp.json", ClientClaudeCode,
			[]string{"api 3 http ", "local-dev 10 sse ", "browser 14 stdio ", "everything 18 stdio "}, nil,
			[]Unknown{
				{5, "mcpServers.api.url", "a URL whose host cannot be told (not http or https, or a reference): its reach is not assessed"},
				{20, "mcpServers.everything.args", "the package argument is a reference (@modelcontextprotocol/server-everything@${EVERYTHING_VERSION:-latest}): which version runs is not in the file"},
				{23, "extraKey", "a top-level key this reader does not know for Claude Code"},
			}},
		{"testdata/cursor/.cursor/mcp.json", ClientCursor,
			[]string{"context7 3 stdio ", "remote-api 7 http ", "notes 13 stdio "}, nil,
			[]Unknown{{17, "mcpServers.notes.transport", "a server field this reader does not know for Cursor"}}},
		{"testdata/vscode/.vscode/mcp.json", ClientVSCode,
			[]string{"github 18 http ", "memory 25 stdio ", "fetch 35 stdio "},
			[]Input{{ID: "github-token", Type: "promptString", Password: true, Line: 4}, {ID: "workspace", Type: "promptString", Line: 10}}, nil},
		{"testdata/windsurf/.codeium/windsurf/mcp_config.json", ClientWindsurf,
			[]string{"internal 3 http ", "puppeteer 9 stdio "}, nil, nil},
		{"testdata/gemini/.gemini/settings.json", ClientGemini,
			[]string{"github-remote 5 http ", "events 10 sse ", "git 13 stdio ", "time 20 stdio "}, nil, nil},
		{"testdata/zed/.config/zed/settings.json", ClientZed,
			[]string{"mcp-server-sqlite 7 stdio ", "everything 14 stdio ", "mcp-server-github 22 extension ", "remote 28 http "}, nil, nil},
		{"testdata/cline/cline_mcp_settings.json", ClientCline,
			[]string{"old-search 3 stdio ", "yarn-tools 10 stdio ", "registry 16 stdio ", "aws 21 stdio ", "sse-server 26 sse ", "helper 31 stdio "}, nil, nil},
	}
	if len(tests) != len(testdataFiles) {
		t.Fatalf("%d cases for %d testdata files", len(tests), len(testdataFiles))
	}
	for _, tc := range tests {
		t.Run(filepath.Base(filepath.Dir(tc.path)), func(t *testing.T) {
			f := mustParse(t, tc.path)
			if f.Client != tc.client {
				t.Errorf("client %q, want %q", f.Client, tc.client)
			}
			var got []string
			for _, s := range f.Servers {
				got = append(got, fmt.Sprintf("%s %d %s %s", s.Name, s.Line, s.Transport, s.Project))
			}
			if d := cmp.Diff(tc.servers, got); d != "" {
				t.Errorf("servers (-want +got):\n%s", d)
			}
			if tc.inputs == nil {
				tc.inputs = []Input{}
			}
			if d := cmp.Diff(tc.inputs, f.Inputs); d != "" {
				t.Errorf("inputs (-want +got):\n%s", d)
			}
			if tc.unknown == nil {
				tc.unknown = []Unknown{}
			}
			if d := cmp.Diff(tc.unknown, f.Unknown); d != "" {
				t.Errorf("unknown (-want +got):\n%s", d)
			}
		})
	}
}

// TestParseDetails checks the fields of servers in each command form.
func TestParseDetails(t *testing.T) {
	zed := mustParse(t, "testdata/zed/.config/zed/settings.json")
	str, obj := zed.Servers[0], zed.Servers[1]
	if str.Command != "uvx" || !cmp.Equal(str.Args, []string{"mcp-server-sqlite@0.6.2", "--db-path", "/"}) || len(str.Env) != 1 || str.Env[0].Key != "SQLITE_PASSWORD" {
		t.Errorf("zed string form: %+v", str)
	}
	if obj.Command != "npx" || len(obj.Args) != 5 || len(obj.Env) != 1 || obj.Env[0].Key != "DEBUG" || obj.Env[0].Line != 18 {
		t.Errorf("zed object form: %+v", obj)
	}
	ext := zed.Servers[2]
	if len(ext.Settings) != 1 || ext.Settings[0].Key != "settings.github_personal_access_token" || ext.Settings[0].Kind != "literal" {
		t.Errorf("zed extension settings: %+v", ext.Settings)
	}
	cline := mustParse(t, "testdata/cline/cline_mcp_settings.json")
	if !cline.Servers[0].Disabled || cline.Servers[1].Disabled {
		t.Errorf("cline disabled: %v %v", cline.Servers[0].Disabled, cline.Servers[1].Disabled)
	}
	if cline.Servers[0].Extra["autoApprove"] != `["search"]` {
		t.Errorf("cline autoApprove kept as %q", cline.Servers[0].Extra["autoApprove"])
	}
	ws := mustParse(t, "testdata/windsurf/.codeium/windsurf/mcp_config.json")
	if ws.Servers[0].URL != "http://mcp.internal.example:8080/mcp" {
		t.Errorf("windsurf serverUrl: %q", ws.Servers[0].URL)
	}
	vs := mustParse(t, "testdata/vscode/.vscode/mcp.json")
	var kinds []string
	for _, e := range vs.Servers[1].Env {
		kinds = append(kinds, e.Key+"="+e.Kind+":"+e.Masked)
	}
	want := []string{
		"MEMORY_FILE_PATH=literal:<literal, 30 characters>",
		"OPENAI_API_KEY=env_reference:${env:OPENAI_API_KEY}",
		"EMPTY_TOKEN=empty:<empty>",
	}
	if d := cmp.Diff(want, kinds); d != "" {
		t.Errorf("vscode env (-want +got):\n%s", d)
	}
	if h := vs.Servers[0].Headers[0]; h.Kind != "input_reference" || h.Masked != "Bearer ${input:github-token}" || h.Line != 22 {
		t.Errorf("vscode header: %+v", h)
	}
}

func TestClassify(t *testing.T) {
	tests := []struct{ in, kind, masked string }{
		{"", "empty", "<empty>"},
		{"  ", "empty", "<empty>"},
		{"${GITHUB_TOKEN}", "env_reference", "${GITHUB_TOKEN}"},
		{"$GITHUB_TOKEN", "env_reference", "$GITHUB_TOKEN"},
		{"${env:GITHUB_TOKEN}", "env_reference", "${env:GITHUB_TOKEN}"},
		{"${input:github-token}", "input_reference", "${input:github-token}"},
		{"Bearer ${input:tok}", "input_reference", "Bearer ${input:tok}"},
		{"${TOKEN:-}", "env_reference", "${TOKEN:-}"},
		{"${TOKEN:-abc123}", "literal", "${TOKEN:-<literal, 6 characters>}"},
		{"x", "literal", "<literal, 1 character>"},
		{"hunter2", "literal", "<literal, 7 characters>"},
		{"$HOME/x", "literal", "<literal, 7 characters>"},
		{"pre-${TOKEN}", "literal", "<literal, 12 characters>"},
	}
	for _, tc := range tests {
		k, m := classify(tc.in)
		if k != tc.kind || m != tc.masked {
			t.Errorf("classify(%q) = %q, %q; want %q, %q", tc.in, k, m, tc.kind, tc.masked)
		}
	}
}

// TestParseErrors: each malformed file with its exact path:line:col error.
func TestParseErrors(t *testing.T) {
	files := []struct{ path, want string }{
		{"testdata/bad/trailing-garbage.json", "testdata/bad/trailing-garbage.json:6:1: invalid character '}' after the top-level value (trailing garbage)"},
		{"testdata/bad/args-string.json", "testdata/bad/args-string.json:5:15: mcpServers.a.args: want an array of strings, got a string"},
		{"testdata/bad/no-command.json", `testdata/bad/no-command.json:3:5: mcpServers.nothing: server "nothing" has neither a command nor a url`},
		{"testdata/bad/servers-array.json", "testdata/bad/servers-array.json:2:17: mcpServers: want an object of servers by name, got an array"},
		{"testdata/bad/env-number.json", "testdata/bad/env-number.json:5:23: mcpServers.a.env.PORT: want a string, got a number"},
		{"testdata/bad/missing-comma.json", `testdata/bad/missing-comma.json:3:28: invalid character '"' after object value (expecting ',' or '}')`},
	}
	for _, tc := range files {
		data, err := os.ReadFile(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		// As the client named, and as detected (config scan FILE with no
		// --client): a syntax error is the error either way.
		for _, client := range []string{ClientCursor, ""} {
			_, err = ParseFile(tc.path, data, client)
			var pe *ParseError
			if !errors.As(err, &pe) || err.Error() != tc.want {
				t.Errorf("%s (client %q):\n got %v\nwant %s", tc.path, client, err, tc.want)
			}
		}
	}
	inline := []struct{ name, client, in, want string }{
		{"top level array", ClientCursor, `[]`, "x.json:1:1: (top level): want an object, got an array"},
		{"server not object", ClientCursor, `{"mcpServers": {"a": "npx"}}`, "x.json:1:22: mcpServers.a: want an object, got a string"},
		{"arg number", ClientCursor, `{"mcpServers": {"a": {"command": "npx", "args": ["-y", 1]}}}`, "x.json:1:56: mcpServers.a.args[1]: want a string, got a number"},
		{"disabled string", ClientCline, `{"mcpServers": {"a": {"command": "npx", "disabled": "yes"}}}`, "x.json:1:53: mcpServers.a.disabled: want true or false, got a string"},
		{"command and url", ClientCursor, `{"mcpServers": {"a": {"command": "npx", "url": "https://x"}}}`, `x.json:1:41: mcpServers.a: server "a" has both a command and url: which one the client uses is not known`},
		{"empty command", ClientCursor, `{"mcpServers": {"a": {"command": ""}}}`, "x.json:1:34: mcpServers.a.command: the command is empty"},
		{"unknown type", ClientClaudeCode, `{"mcpServers": {"a": {"type": "ws", "url": "wss://x"}}}`, `x.json:1:31: mcpServers.a.type: transport type "ws" is not known (want "http", "streamable-http" or "sse")`},
		{"sse with command", ClientClaudeCode, `{"mcpServers": {"a": {"type": "sse", "command": "x"}}}`, `x.json:1:31: mcpServers.a.type: "sse" with a command (want "stdio")`},
		{"duplicate server", ClientCursor, "{\"mcpServers\": {\n\"a\": {\"command\": \"x\"},\n\"a\": {\"command\": \"y\"}}}", `x.json:3:1: mcpServers: duplicate key "a"`},
		{"vscode servers array", ClientVSCode, `{"servers": []}`, "x.json:1:13: servers: want an object of servers by name, got an array"},
		{"vscode input no id", ClientVSCode, `{"inputs": [{"type": "promptString"}], "servers": {}}`, "x.json:1:13: inputs[0]: an input with no id"},
		{"zed no command", ClientZed, `{"context_servers": {"z": {"env": {}}}}`, `x.json:1:22: context_servers.z: server "z" has neither a command nor a url`},
		{"zed command number", ClientZed, `{"context_servers": {"z": {"command": 3}}}`, "x.json:1:39: context_servers.z.command: want a string or an object {path, args, env}, got a number"},
		{"zed args twice", ClientZed, `{"context_servers": {"z": {"command": {"path": "x", "args": []}, "args": []}}}`, "x.json:1:66: context_servers.z: args both in the command object and beside it"},
		{"projects array", ClientClaudeCode, `{"projects": []}`, "x.json:1:14: projects: want an object of project directories, got an array"},
		{"unclosed", ClientCursor, "{\"mcpServers\": {", "x.json:1:17: parsing value: unexpected EOF"},
		{"no client", "", `{"other": 1}`, "x.json:1:1: not a known MCP client configuration (no mcpServers, servers or context_servers key) and no client given"},
	}
	for _, tc := range inline {
		_, err := ParseFile("x.json", []byte(tc.in), tc.client)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s:\n got %v\nwant %s", tc.name, err, tc.want)
		}
	}
}

func TestParseJSONC(t *testing.T) {
	in := "\xef\xbb\xbf// comment\n{\n  /* block */ \"mcpServers\": {\n    \"a\": {\"command\": \"npx\", \"args\": [\"-y\", \"x\",],},\n  },\n}\n"
	f, err := ParseFile("x.json", []byte(in), ClientCursor)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Servers) != 1 || f.Servers[0].Line != 4 || !cmp.Equal(f.Servers[0].Args, []string{"-y", "x"}) {
		t.Errorf("servers: %+v", f.Servers)
	}
}

func TestDetectClient(t *testing.T) {
	tests := []struct{ path, data, want string }{
		{"/home/u/.config/Claude/claude_desktop_config.json", `{}`, ClientClaudeDesktop},
		{"/home/u/.claude.json", `{}`, ClientClaudeCode},
		{"/src/app/.mcp.json", `{}`, ClientClaudeCode},
		{"/home/u/.cursor/mcp.json", `{}`, ClientCursor},
		{"/src/app/.vscode/mcp.json", `{}`, ClientVSCode},
		{"/home/u/.config/Code/User/mcp.json", `{}`, ClientVSCode},
		{"/home/u/.codeium/windsurf/mcp_config.json", `{}`, ClientWindsurf},
		{"/home/u/.gemini/settings.json", `{}`, ClientGemini},
		{"/home/u/.config/zed/settings.json", `{}`, ClientZed},
		{"/x/saoudrizwan.claude-dev/settings/cline_mcp_settings.json", `{}`, ClientCline},
		{"a.json", `{"servers": {}}`, ClientVSCode},
		{"a.json", `{"context_servers": {}}`, ClientZed},
		{"a.json", `{"projects": {}}`, ClientClaudeCode},
		{"a.json", `{"mcpServers": {"x": {"serverUrl": "https://x"}}}`, ClientWindsurf},
		{"a.json", `{"mcpServers": {}}`, ClientGeneric},
		{"a.json", `{"other": {}}`, ""},
		{"a.json", `not json`, ""},
		{"/home/u/settings.json", `{"mcpServers": {}}`, ClientGeneric},
	}
	for _, tc := range tests {
		if got := DetectClient(tc.path, []byte(tc.data)); got != tc.want {
			t.Errorf("DetectClient(%q, %s) = %q, want %q", tc.path, tc.data, got, tc.want)
		}
	}
}

// TestSettingsFileKeys: a settings file's other keys are ignored, a
// dedicated MCP file's are unknown.
func TestSettingsFileKeys(t *testing.T) {
	in := `{"theme": "x", "mcpServers": {}}`
	for client, want := range map[string]int{ClientClaudeDesktop: 0, ClientGemini: 0, ClientCursor: 1, ClientCline: 1, ClientWindsurf: 1, ClientGeneric: 1} {
		f, err := ParseFile("x.json", []byte(in), client)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Unknown) != want {
			t.Errorf("%s: %d unknown, want %d: %+v", client, len(f.Unknown), want, f.Unknown)
		}
	}
}
