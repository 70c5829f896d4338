package clientconfig

// testdataFiles are the real-shaped configuration files, one or more per
// client.
var testdataFiles = []string{
	"testdata/claude-desktop/claude_desktop_config.json",
	"testdata/claude-code/home/.claude.json",
	"testdata/claude-code/project/.mcp.json",
	"testdata/cursor/.cursor/mcp.json",
	"testdata/vscode/.vscode/mcp.json",
	"testdata/windsurf/.codeium/windsurf/mcp_config.json",
	"testdata/gemini/.gemini/settings.json",
	"testdata/zed/.config/zed/settings.json",
	"testdata/cline/cline_mcp_settings.json",
}
