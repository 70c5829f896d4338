package clientconfig

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// targetIn is the one target of a file of client whose one server is
// server.
func targetIn(t *testing.T, client, server string) Target {
	t.Helper()
	key := "mcpServers"
	if client == ClientVSCode {
		key = "servers"
	}
	f, err := ParseFile("x.json", []byte(`{"`+key+`": {"s": `+server+`}}`), client)
	if err != nil {
		t.Fatalf("%s: %v", server, err)
	}
	ts := Targets(f)
	if len(ts) != 1 {
		t.Fatalf("%d targets", len(ts))
	}
	return ts[0]
}

// TestTargetsVariables: each client variable in a server's arguments is
// either replaced by its sandbox stand-in (and the report says so), or the
// server is not scanned with why. Never is a variable passed on as text a
// client would have replaced.
func TestTargetsVariables(t *testing.T) {
	const fs = `{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem@2026.8.31", `
	const tz = `{"command": "uvx", "args": ["mcp-server-time==2026.10.19", `
	type want struct {
		args        []string
		substituted []string
		notScanned  string
	}
	ok := func(args []string, subst ...string) want { return want{args: args, substituted: subst} }
	not := func(why string) want { return want{notScanned: why} }
	tests := []struct {
		name, client, server string
		want                 want
	}{
		// VS Code and Cursor: the predefined variables.
		{"vscode workspaceFolder", ClientVSCode, fs + `"${workspaceFolder}"]}`,
			ok([]string{"/tmp"}, "args[2] ${workspaceFolder} -> /tmp (the sandbox's scratch working directory)")},
		{"vscode userHome", ClientVSCode, fs + `"${userHome}"]}`,
			ok([]string{"/home/sandbox"}, "args[2] ${userHome} -> /home/sandbox (the sandbox user's home)")},
		{"cursor workspaceFolder, trailing slash", ClientCursor, fs + `"${workspaceFolder}/"]}`,
			ok([]string{"/tmp/"}, "args[2] ${workspaceFolder} -> /tmp (the sandbox's scratch working directory)")},
		{"vscode --flag=${workspaceFolder}", ClientVSCode, fs + `"--root=${workspaceFolder}"]}`,
			ok([]string{"--root=/tmp"}, "args[2] ${workspaceFolder} -> /tmp (the sandbox's scratch working directory)")},
		{"vscode basename and separator", ClientVSCode, tz + `"--name", "${workspaceFolderBasename}${/}x"]}`,
			ok([]string{"--name", "tmp/x"}, "args[2] ${workspaceFolderBasename} -> tmp (the name of the sandbox's scratch working directory)", "args[2] ${/} -> / (the sandbox's path separator)")},
		{"vscode path under workspaceFolder", ClientVSCode, fs + `"${workspaceFolder}/src"]}`,
			not(`args[2] is "${workspaceFolder}/src", a path under ${workspaceFolder}: the sandbox has no copy of it, and a server failing on a path the scanner made up would be blamed for it`)},
		{"cursor path under userHome by ${/}", ClientCursor, fs + `"${userHome}${/}Documents"]}`,
			not(`args[2] is "${userHome}${/}Documents", a path under ${userHome}: the sandbox has no copy of it, and a server failing on a path the scanner made up would be blamed for it`)},
		{"vscode input as a credential", ClientVSCode, tz + `"--api-key", "${input:api-key}"]}`,
			ok([]string{"--api-key", "verifymcp-placeholder"}, "args[2] ${input:api-key} -> verifymcp-placeholder (a placeholder credential)")},
		{"vscode input not a credential", ClientVSCode, tz + `"--local-timezone", "${input:tz}"]}`,
			not(`args[2] is "${input:tz}": an input is typed at launch, and the scan gives no made-up value to what is not a credential`)},
		{"vscode env credential NAME=", ClientVSCode, tz + `"API_TOKEN=${env:API_TOKEN}"]}`,
			ok([]string{"API_TOKEN=verifymcp-placeholder"}, "args[1] ${env:API_TOKEN} -> verifymcp-placeholder (a placeholder credential)")},
		{"vscode env HOME", ClientVSCode, fs + `"${env:HOME}"]}`,
			ok([]string{"/home/sandbox"}, "args[2] ${env:HOME} -> /home/sandbox (the sandbox user's home)")},
		{"vscode env not a credential", ClientVSCode, fs + `"${env:PROJECT_DIR}"]}`,
			not(`args[2] is "${env:PROJECT_DIR}": the value of environment variable PROJECT_DIR at launch is not in the file, and the scan gives no made-up value to what is not a credential`)},
		{"vscode command variable", ClientVSCode, fs + `"${command:pickFolder}"]}`,
			not(`args[2] is "${command:pickFolder}": ${command:pickFolder} is not a VS Code variable the scan has a stand-in for`)},
		{"cursor has no inputs", ClientCursor, tz + `"--api-key", "${input:key}"]}`,
			not(`args[2] is "${input:key}": ${input:key} is not a Cursor variable the scan has a stand-in for`)},
		// Windsurf: ${env:NAME} only.
		{"windsurf env credential", ClientWindsurf, tz + `"--token", "${env:TOKEN}"]}`,
			ok([]string{"--token", "verifymcp-placeholder"}, "args[2] ${env:TOKEN} -> verifymcp-placeholder (a placeholder credential)")},
		{"windsurf workspaceFolder", ClientWindsurf, fs + `"${workspaceFolder}"]}`,
			not(`args[2] is "${workspaceFolder}": ${workspaceFolder} is not a Windsurf variable the scan has a stand-in for`)},
		// Claude Code: ${VAR} and ${VAR:-default}; $VAR stays as written.
		{"claude code HOME", ClientClaudeCode, fs + `"${HOME}"]}`,
			ok([]string{"/home/sandbox"}, "args[2] ${HOME} -> /home/sandbox (the sandbox user's home)")},
		{"claude code default", ClientClaudeCode, tz + `"--local-timezone", "${TZ:-UTC}"]}`,
			ok([]string{"--local-timezone", "UTC"}, "args[2] ${TZ:-UTC} -> UTC (its default, as written in the file (TZ is not set in the sandbox))")},
		{"claude code credential", ClientClaudeCode, tz + `"--api-key=${API_KEY}"]}`,
			ok([]string{"--api-key=verifymcp-placeholder"}, "args[1] ${API_KEY} -> verifymcp-placeholder (a placeholder credential)")},
		{"claude code masked default stays masked", ClientClaudeCode, tz + `"--api-key=${API_KEY:-s3cr3tvalue}"]}`,
			ok([]string{"--api-key=<literal, 11 characters>"}, "args[1] ${API_KEY:-<literal, 11 characters>} -> <literal, 11 characters> (its default, as written in the file (API_KEY is not set in the sandbox))")},
		{"claude code not a credential", ClientClaudeCode, fs + `"${DATA_DIR}"]}`,
			not(`args[2] is "${DATA_DIR}": the value of environment variable DATA_DIR at launch is not in the file, and the scan gives no made-up value to what is not a credential`)},
		{"claude code $VAR is text", ClientClaudeCode, tz + `"--local-timezone", "$TZ"]}`, ok([]string{"--local-timezone", "$TZ"})},
		{"claude code nested default", ClientClaudeCode, tz + `"--x", "${A:-${HOME}}"]}`,
			not(`args[2] holds a variable this reader cannot delimit ("${A:-${HOME}}"): what the server gets is not in the file`)},
		// Gemini CLI: $VAR and ${VAR}.
		{"gemini $HOME", ClientGemini, fs + `"$HOME"]}`,
			ok([]string{"/home/sandbox"}, "args[2] ${HOME} -> /home/sandbox (the sandbox user's home)")},
		{"gemini $VAR not a credential", ClientGemini, tz + `"--local-timezone", "$TZ"]}`,
			not(`args[2] is "${TZ}": the value of environment variable TZ at launch is not in the file, and the scan gives no made-up value to what is not a credential`)},
		// Clients this reader knows no expansion for.
		{"claude desktop ${HOME}", ClientClaudeDesktop, fs + `"${HOME}"]}`,
			not(`args[2] is "${HOME}": whether Claude Desktop expands ${HOME} is not known to this reader, so what the server gets is not in the file`)},
		{"generic ${workspaceFolder}", ClientGeneric, fs + `"${workspaceFolder}"]}`,
			not(`args[2] is "${workspaceFolder}": whether an MCP client expands ${workspaceFolder} is not known to this reader, so what the server gets is not in the file`)},
		{"claude desktop $HOME is text", ClientClaudeDesktop, tz + `"--x", "$HOME"]}`, ok([]string{"--x", "$HOME"})},
		{"unterminated", ClientVSCode, tz + `"--x", "${userHome"]}`,
			not(`args[2] holds a variable this reader cannot delimit ("${userHome"): what the server gets is not in the file`)},
		// Variables in the launcher's own options never reach the server.
		{"uvx --python ${env:PY}", ClientVSCode, `{"command": "uvx", "args": ["--python", "${env:PY}", "mcp-server-time"]}`, ok([]string{})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := targetIn(t, tc.client, tc.server)
			gotW := want{args: got.Args, substituted: got.Substituted, notScanned: got.NotScanned}
			if tc.want.notScanned != "" {
				gotW.args = nil
				if got.Target != "" {
					t.Errorf("not scanned, but the target is %q", got.Target)
				}
			} else if got.Target == "" {
				t.Errorf("no target")
			}
			if d := cmp.Diff(tc.want, gotW, cmp.AllowUnexported(want{})); d != "" {
				t.Errorf("%s (-want +got):\n%s", tc.server, d)
			}
		})
	}
}

// TestTargetsVariablesNeverLeakValues: the stand-in of a Claude Code
// default that holds a credential is its masked form; the value written
// in the file never becomes an argument of the scan.
func TestTargetsVariablesNeverLeakValues(t *testing.T) {
	const secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
	got := targetIn(t, ClientClaudeCode, `{"command": "npx", "args": ["pkg@1.0.0", "--token", "${GH_TOKEN:-`+secret+`}"]}`)
	for _, a := range append(got.Args, got.Substituted...) {
		if strings.Contains(a, secret) {
			t.Fatalf("the credential's value is in the scan's arguments: %q", got.Args)
		}
	}
	if got.Target == "" || got.Args[1] != "<literal, 40 characters>" {
		t.Errorf("args %q, target %q", got.Args, got.Target)
	}
}
