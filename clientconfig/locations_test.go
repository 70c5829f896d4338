package clientconfig

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestKnownLocations(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	for _, p := range []string{filepath.Join(home, ".cursor", "mcp.json"), filepath.Join(cwd, ".vscode", "mcp.json")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(`{}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A directory where a file belongs is not found.
	if err := os.MkdirAll(filepath.Join(home, ".claude.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	type row struct{ Client, Scope, Path string }
	want := map[string][]row{
		"linux": {
			{"claude-desktop", "user", "~/.config/Claude/claude_desktop_config.json"},
			{"claude-code", "user", "~/.claude.json"},
			{"claude-code", "project", "./.mcp.json"},
			{"cursor", "user", "~/.cursor/mcp.json"},
			{"cursor", "project", "./.cursor/mcp.json"},
			{"vscode", "user", "~/.config/Code/User/mcp.json"},
			{"vscode", "project", "./.vscode/mcp.json"},
			{"windsurf", "user", "~/.codeium/windsurf/mcp_config.json"},
			{"gemini-cli", "user", "~/.gemini/settings.json"},
			{"gemini-cli", "project", "./.gemini/settings.json"},
			{"zed", "user", "~/.config/zed/settings.json"},
			{"zed", "project", "./.zed/settings.json"},
			{"cline", "user", "~/.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"},
		},
		"darwin": {
			{"claude-desktop", "user", "~/Library/Application Support/Claude/claude_desktop_config.json"},
			{"claude-code", "user", "~/.claude.json"},
			{"claude-code", "project", "./.mcp.json"},
			{"cursor", "user", "~/.cursor/mcp.json"},
			{"cursor", "project", "./.cursor/mcp.json"},
			{"vscode", "user", "~/Library/Application Support/Code/User/mcp.json"},
			{"vscode", "project", "./.vscode/mcp.json"},
			{"windsurf", "user", "~/.codeium/windsurf/mcp_config.json"},
			{"gemini-cli", "user", "~/.gemini/settings.json"},
			{"gemini-cli", "project", "./.gemini/settings.json"},
			{"zed", "user", "~/.config/zed/settings.json"},
			{"zed", "project", "./.zed/settings.json"},
			{"cline", "user", "~/Library/Application Support/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"},
		},
	}
	for goos, rows := range want {
		var got []row
		found := map[string]bool{}
		for _, l := range KnownLocations(home, cwd, goos) {
			p := l.Path
			if rel, err := filepath.Rel(home, p); err == nil && l.Scope == "user" {
				p = "~/" + filepath.ToSlash(rel)
			} else if rel, err := filepath.Rel(cwd, p); err == nil {
				p = "./" + filepath.ToSlash(rel)
			}
			got = append(got, row{l.Client, l.Scope, p})
			if l.ClientName == "" {
				t.Errorf("%s: no client name", l.Client)
			}
			if l.Found {
				found[l.Client+" "+l.Scope] = true
			}
		}
		if d := cmp.Diff(rows, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", goos, d)
		}
		if d := cmp.Diff(map[string]bool{"cursor user": true, "vscode project": true}, found); d != "" {
			t.Errorf("%s found (-want +got):\n%s", goos, d)
		}
	}
	if n := len(KnownLocations(home, "", "linux")); n != 8 {
		t.Errorf("without cwd: %d locations, want 8", n)
	}
	if n := len(KnownLocations(home, cwd, "windows")); n != 10 {
		t.Errorf("windows: %d locations, want the 10 paths the same everywhere", n)
	}
}

// TestKnownLocationsOnce: run from the home directory, a client's user and
// project locations are one file, listed once with both roles; a file a
// second client's location links to is listed once too, under the first.
func TestKnownLocationsOnce(t *testing.T) {
	home := t.TempDir()
	write := func(rel string) string {
		p := filepath.Join(home, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(`{"mcpServers": {}}`), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cursor := write(".cursor/mcp.json")
	// Windsurf's file is a link to Cursor's.
	ws := filepath.Join(home, ".codeium", "windsurf", "mcp_config.json")
	if err := os.MkdirAll(filepath.Dir(ws), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(cursor, ws); err != nil {
		t.Fatal(err)
	}
	locs := KnownLocations(home, home, "linux")
	type row struct {
		Client, Scope, Path string
		Found               bool
		Also                []Role
	}
	var got []row
	for _, l := range locs {
		if l.Client == ClientCursor || l.Client == ClientWindsurf || l.Client == ClientGemini {
			got = append(got, row{l.Client, l.Scope, l.Path, l.Found, l.Also})
		}
	}
	gemini := filepath.Join(home, ".gemini", "settings.json")
	want := []row{
		{ClientCursor, "user", cursor, true, []Role{
			{Client: ClientCursor, ClientName: "Cursor", Path: cursor, Scope: "project"},
			{Client: ClientWindsurf, ClientName: "Windsurf", Path: ws, Scope: "user"},
		}},
		// Not found: the same path twice is still one location.
		{ClientGemini, "user", gemini, false, []Role{{Client: ClientGemini, ClientName: "Gemini CLI", Path: gemini, Scope: "project"}}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if n := len(locs); n != 10 {
		t.Errorf("%d locations, want 13 less the 3 that are another's file", n)
	}
}
