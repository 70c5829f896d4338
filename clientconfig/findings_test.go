package clientconfig

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func compact(fs []Finding) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s %d %s %s", f.Code, f.Line, f.Server, f.Key))
	}
	return out
}

// TestFindingsTestdata: the exact findings of every real-shaped file.
func TestFindingsTestdata(t *testing.T) {
	want := map[string][]string{
		"testdata/claude-desktop/claude_desktop_config.json": {
			"cfg.reach.local_process 3 filesystem command",
			"cfg.launch.unpinned 7 filesystem args",
			"cfg.filesystem.broad 8 filesystem args[2]",
			"cfg.reach.local_process 12 github command",
			"cfg.launch.pinned 14 github args",
			"cfg.credential.literal 16 github GITHUB_PERSONAL_ACCESS_TOKEN",
			"cfg.reach.local_process 19 postgres command",
			"cfg.launch.pinned 21 postgres args",
			"cfg.credential.literal 21 postgres args[2]",
			"cfg.reach.local_process 23 brave-search command",
			"cfg.launch.unpinned 25 brave-search args",
			"cfg.credential.literal 27 brave-search BRAVE_API_KEY",
		},
		"testdata/claude-code/home/.claude.json": {
			"cfg.reach.remote 8 sentry url",
			"cfg.credential.reference 10 sentry Authorization",
			"cfg.reach.local_process 13 slack command",
			"cfg.launch.unpinned 16 slack args",
			"cfg.credential.literal 18 slack SLACK_BOT_TOKEN",
			"cfg.reach.local_process 28 sqlite command",
			"cfg.launch.pinned 31 sqlite args",
		},
		"testdata/claude-code/project/.mcp.json": {
			"cfg.credential.reference 7 api Authorization",
			"cfg.reach.loopback 12 local-dev url",
			"cfg.reach.local_process 14 browser command",
			"cfg.launch.unpinned 16 browser args",
			"cfg.credential.literal 16 browser args[4]",
			"cfg.reach.local_process 18 everything command",
		},
		"testdata/cursor/.cursor/mcp.json": {
			"cfg.reach.local_process 3 context7 command",
			"cfg.launch.unpinned 5 context7 args",
			"cfg.credential.literal 5 context7 args[3]",
			"cfg.reach.remote 8 remote-api url",
			"cfg.credential.literal 10 remote-api X-API-Key",
			"cfg.credential.literal 8 remote-api url",
			"cfg.reach.local_process 13 notes command",
		},
		"testdata/vscode/.vscode/mcp.json": {
			"cfg.reach.remote 20 github url",
			"cfg.credential.reference 22 github Authorization",
			"cfg.reach.local_process 25 memory command",
			"cfg.launch.pinned 28 memory args",
			"cfg.credential.reference 31 memory OPENAI_API_KEY",
			"cfg.reach.local_process 35 fetch command",
			"cfg.launch.unpinned 37 fetch args",
		},
		"testdata/windsurf/.codeium/windsurf/mcp_config.json": {
			"cfg.reach.remote 4 internal url",
			"cfg.credential.literal 6 internal Authorization",
			"cfg.transport.plaintext 4 internal url",
			"cfg.reach.local_process 9 puppeteer command",
			"cfg.launch.pinned 11 puppeteer args",
		},
		"testdata/gemini/.gemini/settings.json": {
			"cfg.reach.remote 6 github-remote url",
			"cfg.credential.reference 7 github-remote Authorization",
			"cfg.reach.loopback 11 events url",
			"cfg.reach.local_process 13 git command",
			"cfg.launch.pinned 15 git args",
			"cfg.credential.reference 16 git API_KEY",
			"cfg.filesystem.broad 15 git args[4]",
			"cfg.reach.local_process 20 time command",
			"cfg.launch.unpinned 22 time args",
		},
		"testdata/zed/.config/zed/settings.json": {
			"cfg.reach.local_process 7 mcp-server-sqlite command",
			"cfg.launch.pinned 10 mcp-server-sqlite args",
			"cfg.credential.literal 11 mcp-server-sqlite SQLITE_PASSWORD",
			"cfg.filesystem.broad 10 mcp-server-sqlite args[2]",
			"cfg.reach.local_process 14 everything command",
			"cfg.launch.pinned 17 everything args",
			"cfg.credential.literal 25 mcp-server-github settings.github_personal_access_token",
			"cfg.reach.remote 29 remote url",
			"cfg.credential.reference 30 remote Authorization",
		},
		"testdata/cline/cline_mcp_settings.json": {
			"cfg.reach.local_process 3 old-search command",
			"cfg.launch.unpinned 5 old-search args",
			"cfg.credential.literal 6 old-search SEARCH_API_KEY",
			"cfg.reach.local_process 10 yarn-tools command",
			"cfg.launch.pinned 12 yarn-tools args",
			"cfg.reach.local_process 16 registry command",
			"cfg.launch.pinned 18 registry args",
			"cfg.credential.literal 19 registry NPM_TOKEN",
			"cfg.filesystem.broad 18 registry args[4]",
			"cfg.reach.local_process 21 aws command",
			"cfg.launch.pinned 23 aws args",
			"cfg.credential.literal 23 aws args[2]",
			"cfg.reach.remote 27 sse-server url",
			"cfg.reach.local_process 31 helper command",
		},
	}
	for _, p := range testdataFiles {
		f := mustParse(t, p)
		fs := Findings(f)
		if d := cmp.Diff(want[p], compact(fs)); d != "" {
			t.Errorf("%s (-want +got):\n%s", p, d)
		}
		for _, x := range fs {
			if x.File != p || x.Evidence == "" || x.Message == "" || x.Line == 0 || x.Server == "" {
				t.Errorf("%s: incomplete finding %+v", p, x)
			}
			srv := serverNamed(f, x.Server)
			if srv.Disabled != strings.Contains(x.Message, "disabled") {
				t.Errorf("%s: disabled=%v but message %q", p, srv.Disabled, x.Message)
			}
		}
	}
}

func serverNamed(f *File, name string) Server {
	for _, s := range f.Servers {
		if s.Name == name {
			return s
		}
	}
	return Server{}
}

// finding runs one server (a JSON object for the generic mcpServers
// format) and returns "code key" for the codes under prefix.
func findingsOf(t *testing.T, server, prefix string) []string {
	t.Helper()
	f, err := ParseFile("x.json", []byte(`{"mcpServers": {"s": `+server+`}}`), ClientGeneric)
	if err != nil {
		t.Fatalf("%s: %v", server, err)
	}
	out := []string{}
	for _, x := range Findings(f) {
		if strings.HasPrefix(x.Code, prefix) {
			out = append(out, x.Code+" "+x.Key)
		}
	}
	return out
}

func TestFindingsTable(t *testing.T) {
	const ghp = "ghp_Zq8rT4wLm2Xv9Nc6Bp1Ys7Hd3Kf5Gj0Ua8Re"
	tests := []struct {
		name, prefix, server string
		want                 []string
	}{
		// cfg.credential.*
		{"env literal by name", "cfg.credential", `{"command": "x", "env": {"MY_SECRET": "abcdef123"}}`, []string{"cfg.credential.literal MY_SECRET"}},
		{"env literal by shape", "cfg.credential", `{"command": "x", "env": {"GH": "` + ghp + `"}}`, []string{"cfg.credential.literal GH"}},
		{"env literal camel case", "cfg.credential", `{"command": "x", "env": {"apiKey": "abcdef123"}}`, []string{"cfg.credential.literal apiKey"}},
		{"env reference not literal", "cfg.credential", `{"command": "x", "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}}`, []string{"cfg.credential.reference GITHUB_TOKEN"}},
		{"env $VAR reference", "cfg.credential", `{"command": "x", "env": {"PASSWORD": "$DB_PASSWORD"}}`, []string{"cfg.credential.reference PASSWORD"}},
		{"env input reference", "cfg.credential", `{"command": "x", "env": {"ACCESS_KEY": "${input:k}"}}`, []string{"cfg.credential.reference ACCESS_KEY"}},
		{"env default literal", "cfg.credential", `{"command": "x", "env": {"TOKEN": "${TOKEN:-abcdef123}"}}`, []string{"cfg.credential.literal TOKEN"}},
		{"env not a credential name", "cfg.credential", `{"command": "x", "env": {"NODE_ENV": "production", "AUTHOR": "alice"}}`, []string{}},
		{"env reference not credential name", "cfg.credential", `{"command": "x", "env": {"HOME_DIR": "${HOME}"}}`, []string{}},
		{"env empty", "cfg.credential", `{"command": "x", "env": {"API_KEY": ""}}`, []string{}},
		{"env placeholder", "cfg.credential", `{"command": "x", "env": {"API_KEY": "<your-api-key>", "B_TOKEN": "YOUR_TOKEN_HERE"}}`, []string{}},
		{"env token path and url", "cfg.credential", `{"command": "x", "env": {"TOKEN_FILE": "abc", "AUTH_URL": "https://a", "GOOGLE_APPLICATION_CREDENTIALS": "/k.json", "AUTH_ENABLED": "true"}}`, []string{}},
		{"header authorization literal", "cfg.credential", `{"url": "https://a.example", "headers": {"Authorization": "Bearer abcdef123"}}`, []string{"cfg.credential.literal Authorization"}},
		{"header x-api-key", "cfg.credential", `{"url": "https://a.example", "headers": {"X-API-Key": "abcdef123", "Accept": "json"}}`, []string{"cfg.credential.literal X-API-Key"}},
		{"header reference", "cfg.credential", `{"url": "https://a.example", "headers": {"Authorization": "Bearer ${TOKEN}"}}`, []string{"cfg.credential.reference Authorization"}},
		{"arg flag value", "cfg.credential", `{"command": "x", "args": ["--api-key", "abcdef123"]}`, []string{"cfg.credential.literal args[1]"}},
		{"arg flag inline", "cfg.credential", `{"command": "x", "args": ["--token=abcdef123"]}`, []string{"cfg.credential.literal args[0]"}},
		{"arg flag reference", "cfg.credential", `{"command": "x", "args": ["--token", "${TOKEN}"]}`, []string{"cfg.credential.reference args[1]"}},
		{"arg shape", "cfg.credential", `{"command": "x", "args": ["` + ghp + `"]}`, []string{"cfg.credential.literal args[0]"}},
		{"arg header", "cfg.credential", `{"command": "npx", "args": ["mcp-remote", "https://a", "--header", "Authorization: Bearer abcdef123"]}`, []string{"cfg.credential.literal args[3]"}},
		{"arg docker -e", "cfg.credential", `{"command": "docker", "args": ["run", "-e", "API_TOKEN=abcdef123", "-e", "GITHUB_TOKEN", "img@sha256:` + strings.Repeat("a", 64) + `"]}`, []string{"cfg.credential.literal args[2]"}},
		{"arg url password", "cfg.credential", `{"command": "x", "args": ["postgres://u:pw12345@h/db"]}`, []string{"cfg.credential.literal args[0]"}},
		{"arg not credential", "cfg.credential", `{"command": "x", "args": ["--port", "3000", "--token-file", "/t"]}`, []string{}},
		{"url query", "cfg.credential", `{"url": "https://a.example/mcp?token=abcdef123&x=1"}`, []string{"cfg.credential.literal url"}},
		{"url query reference", "cfg.credential", `{"url": "https://a.example/mcp?api_key=${KEY}"}`, []string{"cfg.credential.reference url"}},
		{"value shapes", "cfg.credential", `{"command": "x", "env": {"A": "sk-ant-api03-Qm7Vx2Lp9Rt4Wz6Yb1Nc8Hd3", "B": "sk-proj-Qm7Vx2Lp9Rt4Wz6Yb1Nc8Hd3", "C": "xoxp-1234567890-abc", "D": "AKIAQ7XW3M9K2L5N8P4R", "E": "glpat-Hx4Kq8Lm2Np6Rt9Vw3Yz", "F": "npm_Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3Wx5", "G": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.Xk3vQ9mL2pR7tW4y", "H": "github_pat_11ABCDE2F0abcdefghij12"}}`,
			[]string{"cfg.credential.literal A", "cfg.credential.literal B", "cfg.credential.literal C", "cfg.credential.literal D", "cfg.credential.literal E", "cfg.credential.literal F", "cfg.credential.literal G", "cfg.credential.literal H"}},
		{"not shapes", "cfg.credential", `{"command": "x", "env": {"A": "sk-short", "B": "task-runner", "C": "AKIA"}}`, []string{}},

		// cfg.launch.*
		{"npx unpinned", "cfg.launch", `{"command": "npx", "args": ["pkg"]}`, []string{"cfg.launch.unpinned args"}},
		{"npx -y unpinned", "cfg.launch", `{"command": "npx", "args": ["-y", "pkg"]}`, []string{"cfg.launch.unpinned args"}},
		{"npx --yes latest", "cfg.launch", `{"command": "npx", "args": ["--yes", "pkg@latest"]}`, []string{"cfg.launch.unpinned args"}},
		{"npx range", "cfg.launch", `{"command": "npx", "args": ["-y", "@s/pkg@^1.2.0"]}`, []string{"cfg.launch.unpinned args"}},
		{"npx dist-tag", "cfg.launch", `{"command": "npx", "args": ["pkg@next"]}`, []string{"cfg.launch.unpinned args"}},
		{"npx pinned", "cfg.launch", `{"command": "npx", "args": ["pkg@1.2.3"]}`, []string{"cfg.launch.pinned args"}},
		{"npx scoped pinned", "cfg.launch", `{"command": "npx", "args": ["-y", "@s/pkg@1.2.3-beta.1"]}`, []string{"cfg.launch.pinned args"}},
		{"windows npx.cmd", "cfg.launch", `{"command": "C:\\Program Files\\nodejs\\npx.cmd", "args": ["-y", "pkg"]}`, []string{"cfg.launch.unpinned args"}},
		{"cmd /c npx", "cfg.launch", `{"command": "cmd", "args": ["/c", "npx", "-y", "pkg@1.0.0"]}`, []string{"cfg.launch.pinned args"}},
		{"bunx", "cfg.launch", `{"command": "bunx", "args": ["pkg"]}`, []string{"cfg.launch.unpinned args"}},
		{"pnpm dlx", "cfg.launch", `{"command": "pnpm", "args": ["dlx", "pkg"]}`, []string{"cfg.launch.unpinned args"}},
		{"yarn dlx pinned", "cfg.launch", `{"command": "yarn", "args": ["dlx", "pkg@2.0.0"]}`, []string{"cfg.launch.pinned args"}},
		{"uvx unpinned", "cfg.launch", `{"command": "uvx", "args": ["mcp-server-fetch"]}`, []string{"cfg.launch.unpinned args"}},
		{"uvx range", "cfg.launch", `{"command": "uvx", "args": ["mcp-server-fetch>=1.0"]}`, []string{"cfg.launch.unpinned args"}},
		{"uvx pinned", "cfg.launch", `{"command": "uvx", "args": ["mcp-server-fetch==1.2.3"]}`, []string{"cfg.launch.pinned args"}},
		{"uvx --from pinned", "cfg.launch", `{"command": "uvx", "args": ["--from", "pkg==1.2.3", "cmd"]}`, []string{"cfg.launch.pinned args"}},
		{"uvx wildcard", "cfg.launch", `{"command": "uvx", "args": ["pkg==1.2.*"]}`, []string{"cfg.launch.unpinned args"}},
		{"pipx run", "cfg.launch", `{"command": "pipx", "args": ["run", "pkg"]}`, []string{"cfg.launch.unpinned args"}},
		{"pipx run pinned", "cfg.launch", `{"command": "pipx", "args": ["run", "--spec", "pkg==1.0", "pkg"]}`, []string{"cfg.launch.pinned args"}},
		{"docker untagged", "cfg.launch", `{"command": "docker", "args": ["run", "-i", "--rm", "mcp/github"]}`, []string{"cfg.launch.unpinned args"}},
		{"docker latest", "cfg.launch", `{"command": "docker", "args": ["run", "-i", "mcp/github:latest"]}`, []string{"cfg.launch.unpinned args"}},
		{"docker tag", "cfg.launch", `{"command": "docker", "args": ["run", "-i", "-e", "A=b", "registry:5000/mcp/github:1.2"]}`, []string{"cfg.launch.unpinned args"}},
		{"docker digest", "cfg.launch", `{"command": "podman", "args": ["run", "-i", "mcp/github:1.2@sha256:` + strings.Repeat("b", 64) + `"]}`, []string{"cfg.launch.pinned args"}},
		{"docker unknown flag", "cfg.launch", `{"command": "docker", "args": ["run", "--weird", "x", "img"]}`, []string{}},
		{"node script", "cfg.launch", `{"command": "node", "args": ["/srv/x.js"]}`, []string{}},
		{"python -m", "cfg.launch", `{"command": "python", "args": ["-m", "server"]}`, []string{}},
		{"npx local path", "cfg.launch", `{"command": "npx", "args": ["./local"]}`, []string{}},
		{"npx git", "cfg.launch", `{"command": "npx", "args": ["github:user/repo"]}`, []string{}},
		{"url server", "cfg.launch", `{"url": "https://a.example"}`, []string{}},

		// cfg.reach.*
		{"stdio", "cfg.reach", `{"command": "x"}`, []string{"cfg.reach.local_process command"}},
		{"loopback v4", "cfg.reach", `{"url": "http://127.0.0.1:3000/mcp"}`, []string{"cfg.reach.loopback url"}},
		{"loopback 127/8", "cfg.reach", `{"url": "http://127.1.2.3/mcp"}`, []string{"cfg.reach.loopback url"}},
		{"loopback v6", "cfg.reach", `{"url": "http://[::1]:3000/mcp"}`, []string{"cfg.reach.loopback url"}},
		{"localhost", "cfg.reach", `{"url": "http://LOCALHOST:3000/mcp"}`, []string{"cfg.reach.loopback url"}},
		{"remote", "cfg.reach", `{"url": "https://mcp.example.com/mcp"}`, []string{"cfg.reach.remote url"}},
		{"private is remote", "cfg.reach", `{"url": "http://10.0.0.5/mcp"}`, []string{"cfg.reach.remote url"}},
		{"localhost lookalike", "cfg.reach", `{"url": "http://localhost.evil.example/mcp"}`, []string{"cfg.reach.remote url"}},
		{"unspecified", "cfg.reach", `{"url": "http://0.0.0.0:3000/mcp"}`, []string{}},
		{"reference url", "cfg.reach", `{"url": "${BASE}/mcp"}`, []string{}},

		// cfg.filesystem.broad
		{"root", "cfg.filesystem", `{"command": "x", "args": ["/"]}`, []string{"cfg.filesystem.broad args[0]"}},
		{"tilde", "cfg.filesystem", `{"command": "x", "args": ["~", "~/"]}`, []string{"cfg.filesystem.broad args[0]", "cfg.filesystem.broad args[1]"}},
		{"home vars", "cfg.filesystem", `{"command": "x", "args": ["$HOME", "${HOME}", "%USERPROFILE%"]}`, []string{"cfg.filesystem.broad args[0]", "cfg.filesystem.broad args[1]", "cfg.filesystem.broad args[2]"}},
		{"drive roots", "cfg.filesystem", `{"command": "x", "args": ["C:\\", "D:/"]}`, []string{"cfg.filesystem.broad args[0]", "cfg.filesystem.broad args[1]"}},
		{"homes", "cfg.filesystem", `{"command": "x", "args": ["/home/alice", "/Users/bob/", "/root"]}`, []string{"cfg.filesystem.broad args[0]", "cfg.filesystem.broad args[1]", "cfg.filesystem.broad args[2]"}},
		{"flag value root", "cfg.filesystem", `{"command": "x", "args": ["--root=/"]}`, []string{"cfg.filesystem.broad args[0]"}},
		{"docker mount home", "cfg.filesystem", `{"command": "docker", "args": ["run", "-v", "/Users/bob:/data", "--mount", "type=bind,source=/,target=/h", "img"]}`, []string{"cfg.filesystem.broad args[2]", "cfg.filesystem.broad args[4]"}},
		{"not broad", "cfg.filesystem", `{"command": "x", "args": ["/home/user/projects", "~/code", "/tmp", "/home/alice/.", "C:", "./", "/Users/bob/Desktop", "$HOME/work", "root"]}`, []string{}},
		{"docker mount not broad", "cfg.filesystem", `{"command": "docker", "args": ["run", "-v", "/home/bob/data:/data", "img"]}`, []string{}},

		// cfg.transport.plaintext
		{"plaintext remote", "cfg.transport", `{"url": "http://mcp.example.com/mcp"}`, []string{"cfg.transport.plaintext url"}},
		{"plaintext private", "cfg.transport", `{"url": "http://192.168.1.2:8080/mcp"}`, []string{"cfg.transport.plaintext url"}},
		{"not plaintext localhost", "cfg.transport", `{"url": "http://localhost:3000"}`, []string{}},
		{"not plaintext loopback", "cfg.transport", `{"url": "http://127.0.0.1:3000"}`, []string{}},
		{"not plaintext https", "cfg.transport", `{"url": "https://mcp.example.com"}`, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := findingsOf(t, tc.server, tc.prefix)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("%s (-want +got):\n%s", tc.server, d)
			}
		})
	}
}

func TestDisabledMessage(t *testing.T) {
	f, err := ParseFile("x.json", []byte(`{"mcpServers": {"s": {"command": "npx", "args": ["pkg"], "env": {"API_KEY": "abcdef123"}, "disabled": true}}}`), ClientCline)
	if err != nil {
		t.Fatal(err)
	}
	fs := Findings(f)
	if d := cmp.Diff([]string{"cfg.reach.local_process 1 s command", "cfg.launch.unpinned 1 s args", "cfg.credential.literal 1 s API_KEY"}, compact(fs)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	for _, x := range fs {
		if !strings.Contains(x.Message, "The server is disabled") {
			t.Errorf("%s: message does not say disabled: %q", x.Code, x.Message)
		}
	}
}

func TestCredentialName(t *testing.T) {
	yes := []string{"GITHUB_TOKEN", "github_personal_access_token", "API_KEY", "apiKey", "X-API-Key", "APIKEY", "OPENAI_APIKEY",
		"AWS_SECRET_ACCESS_KEY", "ACCESS_KEY", "PRIVATE_KEY", "GOOGLE_CREDENTIALS", "AUTH", "BASIC_AUTH", "BEARER", "DB_PASSWORD",
		"clientSecret", "GITHUBTOKEN", "--api-key", "Authorization", "SLACK_BOT_TOKEN"}
	no := []string{"AUTHOR", "TOKEN_URL", "AUTH_TYPE", "PASSWORD_FILE", "AUTH_CLIENT_ID", "NODE_ENV", "KEY", "MONKEY", "TOKENIZER", "OAUTH_SCOPES", "MAX_TOKENS", "SECRETARY"}
	for _, k := range yes {
		if !credentialName(k) {
			t.Errorf("credentialName(%q) = false", k)
		}
	}
	for _, k := range no {
		if credentialName(k) {
			t.Errorf("credentialName(%q) = true", k)
		}
	}
}

// TestNoSecretInOutput marshals every file, its findings and its targets
// and checks no literal secret of the testdata appears anywhere.
func TestNoSecretInOutput(t *testing.T) {
	raw, err := os.ReadFile("testdata/secrets.txt")
	if err != nil {
		t.Fatal(err)
	}
	secrets := strings.Fields(string(raw))
	if len(secrets) < 10 {
		t.Fatalf("only %d secrets", len(secrets))
	}
	var all strings.Builder
	for _, p := range testdataFiles {
		f := mustParse(t, p)
		b, err := json.Marshal(struct {
			F *File
			X []Finding
			T []Target
		}{f, Findings(f), Targets(f)})
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
		// So that the test can fail: the raw file holds its secrets.
		data, _ := os.ReadFile(p)
		found := false
		for _, s := range secrets {
			found = found || strings.Contains(string(data), s)
		}
		if !found && !strings.Contains(p, "vscode") && !strings.Contains(p, "gemini") {
			t.Errorf("%s holds none of the secrets: the test checks nothing there", p)
		}
	}
	out := all.String()
	for _, s := range secrets {
		for _, part := range []string{s, s[:len(s)/2+4], s[len(s)/2-4:]} {
			if strings.Contains(out, part) {
				t.Errorf("output holds (part of) secret %q", part[:6]+"...")
			}
		}
	}
	// The Unexported value is what made the findings: each secret was seen.
	if n := strings.Count(out, "cfg.credential.literal"); n < len(secrets) {
		t.Errorf("%d literal findings for %d secrets", n, len(secrets))
	}
}
