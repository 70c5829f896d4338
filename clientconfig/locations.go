package clientconfig

import (
	"os"
	"path/filepath"
)

// The known configuration files (~ is home, . is cwd):
//
//	client          scope    goos    path                                                             key
//	claude-desktop  user     linux   ~/.config/Claude/claude_desktop_config.json                      mcpServers
//	claude-desktop  user     darwin  ~/Library/Application Support/Claude/claude_desktop_config.json  mcpServers
//	claude-code     user     both    ~/.claude.json                                                   mcpServers, projects.<dir>.mcpServers
//	claude-code     project  both    ./.mcp.json                                                      mcpServers
//	cursor          user     both    ~/.cursor/mcp.json                                               mcpServers
//	cursor          project  both    ./.cursor/mcp.json                                               mcpServers
//	vscode          user     linux   ~/.config/Code/User/mcp.json                                     servers, inputs
//	vscode          user     darwin  ~/Library/Application Support/Code/User/mcp.json                 servers, inputs
//	vscode          project  both    ./.vscode/mcp.json                                               servers, inputs
//	windsurf        user     both    ~/.codeium/windsurf/mcp_config.json                              mcpServers (serverUrl)
//	gemini-cli      user     both    ~/.gemini/settings.json                                          mcpServers (httpUrl)
//	gemini-cli      project  both    ./.gemini/settings.json                                          mcpServers
//	zed             user     both    ~/.config/zed/settings.json                                      context_servers
//	zed             project  both    ./.zed/settings.json                                             context_servers
//	cline           user     linux   ~/.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json
//	cline           user     darwin  ~/Library/Application Support/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json
//
// Cline's file has mcpServers. Zed keeps ~/.config/zed on macOS too.
// Claude Desktop also runs the bundles it installed, unpacked in the
// "Claude Extensions" directory beside its file (ClaudeExtensionsDir,
// ReadExtensions in extensions.go); that directory is no file and is not
// listed here.
// A goos other than linux and darwin gets the paths that are the same on
// every system (those marked both); user-scope paths need home and
// project-scope paths need cwd.

type knownPath struct {
	client, scope string
	linux, darwin string // relative to home (user) or cwd (project); "" if none
}

var knownPaths = []knownPath{
	{ClientClaudeDesktop, "user", ".config/Claude/claude_desktop_config.json", "Library/Application Support/Claude/claude_desktop_config.json"},
	{ClientClaudeCode, "user", ".claude.json", ".claude.json"},
	{ClientClaudeCode, "project", ".mcp.json", ".mcp.json"},
	{ClientCursor, "user", ".cursor/mcp.json", ".cursor/mcp.json"},
	{ClientCursor, "project", ".cursor/mcp.json", ".cursor/mcp.json"},
	{ClientVSCode, "user", ".config/Code/User/mcp.json", "Library/Application Support/Code/User/mcp.json"},
	{ClientVSCode, "project", ".vscode/mcp.json", ".vscode/mcp.json"},
	{ClientWindsurf, "user", ".codeium/windsurf/mcp_config.json", ".codeium/windsurf/mcp_config.json"},
	{ClientGemini, "user", ".gemini/settings.json", ".gemini/settings.json"},
	{ClientGemini, "project", ".gemini/settings.json", ".gemini/settings.json"},
	{ClientZed, "user", ".config/zed/settings.json", ".config/zed/settings.json"},
	{ClientZed, "project", ".zed/settings.json", ".zed/settings.json"},
	{ClientCline, "user", ".config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
		"Library/Application Support/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"},
}

// KnownLocations lists the known configuration files of each client for
// goos ("linux", "darwin"), user scope under home and project scope under
// cwd, in the order of the table above, Found set by os.Stat (a regular
// file or a symbolic link to one). A location that is a file listed
// before it (the same path, or the same file by os.SameFile: run from
// the home directory, a client's project file is its user file; a link
// from one client's file to another's) is not listed again but named in
// that location's Also, so that the file is read once.
func KnownLocations(home, cwd, goos string) []Location {
	out := []Location{}
	var infos []os.FileInfo // infos[i] is out[i]'s, nil when not found
	for _, k := range knownPaths {
		rel := ""
		switch goos {
		case "linux":
			rel = k.linux
		case "darwin":
			rel = k.darwin
		default:
			if k.linux == k.darwin {
				rel = k.linux
			}
		}
		base := home
		if k.scope == "project" {
			base = cwd
		}
		if rel == "" || base == "" {
			continue
		}
		p := filepath.Join(base, filepath.FromSlash(rel))
		st, err := os.Stat(p)
		found := err == nil && st.Mode().IsRegular()
		if !found {
			st = nil
		}
		if i := sameLocation(out, infos, p, st); i >= 0 {
			out[i].Also = append(out[i].Also, Role{Client: k.client, ClientName: clientNames[k.client], Path: p, Scope: k.scope})
			continue
		}
		out = append(out, Location{Client: k.client, ClientName: clientNames[k.client], Path: p, Scope: k.scope, Found: found})
		infos = append(infos, st)
	}
	return out
}

// sameLocation is the index of the location of locs that is the file at p
// (st its FileInfo, nil when not found), or -1.
func sameLocation(locs []Location, infos []os.FileInfo, p string, st os.FileInfo) int {
	for i, l := range locs {
		if filepath.Clean(l.Path) == filepath.Clean(p) || (st != nil && infos[i] != nil && os.SameFile(st, infos[i])) {
			return i
		}
	}
	return -1
}
