package report

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

func TestParseRepoLocation(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want RepoLocation
	}{
		{"package.json", RepoLocation{Path: "package.json"}},
		{"package.json:14", RepoLocation{Path: "package.json", Line: 14}},
		{"./.vscode/mcp.json:3", RepoLocation{Path: ".vscode/mcp.json", Line: 3}},
		{"tools/mcp/package-lock.json", RepoLocation{Path: "tools/mcp/package-lock.json"}},
		{"a//b/./c.json", RepoLocation{Path: "a/b/c.json"}},
		// A colon after the first directory is part of a name, and a
		// suffix that is no number is not a line.
		{"dir/a:b", RepoLocation{Path: "dir/a:b"}},
		{"dir/a:b:7", RepoLocation{Path: "dir/a:b", Line: 7}},
	} {
		got, err := ParseRepoLocation(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseRepoLocation(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
		if again, err := ParseRepoLocation(got.String()); err != nil || again != got {
			t.Errorf("ParseRepoLocation(%q) = %+v, %v; want %+v again", got.String(), again, err, got)
		}
	}
	for _, tc := range []struct{ in, why string }{
		{"", "no path"},
		{":3", "no path"},
		{"package.json:0", "not 1 or more"},
		{"/home/dev/repo/package.json", "not absolute"},
		{"//host/share/package.json", "not absolute"},
		{"file:///home/dev/repo/package.json", "not a URI"},
		{"pkg:npm/left-pad@1.3.0", "not a URI"},
		{"https://example.com/package.json", "not a URI"},
		{"C:/repo/package.json", "not a URI or a drive"},
		{`.vscode\mcp.json`, "with / between"},
		{"../package.json", "no .."},
		{"tools/../../package.json", "no .."},
		{"tools/../package.json", "no .."},
		{"tools/", "not a directory"},
		{".", "names no file"},
		{"./", "not a directory"},
	} {
		got, err := ParseRepoLocation(tc.in)
		if !errors.Is(err, ErrRepoLocation) || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("ParseRepoLocation(%q) = %+v, %v; want an ErrRepoLocation saying %q", tc.in, got, err, tc.why)
		}
	}
}

func TestInRepo(t *testing.T) {
	for _, tc := range []struct {
		root, file, want string
		in               bool
	}{
		{"/work/repo", "/work/repo/.vscode/mcp.json", ".vscode/mcp.json", true},
		{"/work/repo", ".vscode/mcp.json", ".vscode/mcp.json", true},
		{"/work/repo", "./sub/../.mcp.json", ".mcp.json", true},
		{"/work/repo", "/work/repository/.mcp.json", "", false},
		{"/work/repo", "/home/dev/.cursor/mcp.json", "", false},
		{"/work/repo", "../other/.mcp.json", "", false},
		{"/work/repo", "/work/repo", "", false},
		{"/work/repo", "", "", false},
		{"", ".mcp.json", ".mcp.json", true},
		{"", "../.mcp.json", "", false},
		{"", "/work/repo/.mcp.json", "", false},
	} {
		got, in := inRepo(tc.root, tc.file)
		if in != tc.in || (in && got != tc.want) {
			t.Errorf("inRepo(%q, %q) = %q, %v; want %q, %v", tc.root, tc.file, got, in, tc.want, tc.in)
		}
	}
}

// Every stand-in path is a relative URI reference under .verifymcp/ that
// reads back as the path, whatever the name: a hostile package may name
// itself anything a tarball's package.json holds.
func TestStandIns(t *testing.T) {
	for _, tc := range []struct {
		name, got, want string
	}{
		{"npm", packageStandIn(Target{Ecosystem: "npm", Name: "left-pad"}), ".verifymcp/npm/left-pad"},
		{"scoped npm", packageStandIn(Target{Ecosystem: "npm", Name: "@modelcontextprotocol/server-everything"}),
			".verifymcp/npm/@modelcontextprotocol/server-everything"},
		{"pypi", packageStandIn(Target{Ecosystem: "pypi", Name: "mcp-server-fetch"}), ".verifymcp/pypi/mcp-server-fetch"},
		{"climbing", packageStandIn(Target{Ecosystem: "npm", Name: "../../etc/passwd"}), ".verifymcp/npm/_../_../etc/passwd"},
		{"empty", packageStandIn(Target{}), ".verifymcp/_/_"},
		{"dots and slashes", packageStandIn(Target{Ecosystem: "npm", Name: "/./a//b/"}), ".verifymcp/npm/_/_./a/_/b/_"},
		{"config under home", configStandIn("/home/dev", "/home/dev/.cursor/mcp.json"), ".verifymcp/config/home/.cursor/mcp.json"},
		{"config elsewhere", configStandIn("/home/dev", "/etc/claude/mcp.json"), ".verifymcp/config/abs/etc/claude/mcp.json"},
		{"config, no home", configStandIn("", "/home/dev/.cursor/mcp.json"), ".verifymcp/config/abs/home/dev/.cursor/mcp.json"},
		{"config of another user", configStandIn("/home/dev", "/home/devops/.cursor/mcp.json"), ".verifymcp/config/abs/home/devops/.cursor/mcp.json"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, tc.got, tc.want)
		}
	}
	for _, name := range []string{"x y#?%&;,", "sync\u202egnp.exe", "a:b", `c:\x`, "%2e%2e/x", "@scope/name"} {
		p := packageStandIn(Target{Ecosystem: "npm", Name: name})
		raw := relativeURI(p)
		u, err := url.Parse(raw)
		if err != nil || u.Scheme != "" || u.Host != "" || u.RawQuery != "" || u.Fragment != "" || u.Path != p ||
			strings.ContainsAny(raw, " \u202e\\#?") || !strings.HasPrefix(u.Path, ".verifymcp/npm/") {
			t.Errorf("name %q: uri %q reads as %+v (%v), want the path %q", name, raw, u, err, p)
		}
	}
}
