package clientconfig

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func targetOf(t *testing.T, server string) Target {
	t.Helper()
	f, err := ParseFile("x.json", []byte(`{"mcpServers": {"s": `+server+`}}`), ClientGeneric)
	if err != nil {
		t.Fatalf("%s: %v", server, err)
	}
	ts := Targets(f)
	if len(ts) != 1 {
		t.Fatalf("%d targets", len(ts))
	}
	return ts[0]
}

func TestTargetsLaunchers(t *testing.T) {
	tg := func(target, name, spec string, pinned bool, args ...string) Target {
		if args == nil {
			args = []string{}
		}
		return Target{Target: target, Ecosystem: "npm", Name: name, Spec: spec, Pinned: pinned, Args: args}
	}
	ns := func(eco, name, spec string, pinned bool, why string, args ...string) Target {
		if args == nil {
			args = []string{}
		}
		return Target{Ecosystem: eco, Name: name, Spec: spec, Pinned: pinned, Args: args, NotScanned: why}
	}
	none := func(why string) Target { return Target{Args: []string{}, NotScanned: why} }
	py := func(target, name, spec string, pinned bool, args ...string) Target {
		if args == nil {
			args = []string{}
		}
		return Target{Target: target, Ecosystem: "pypi", Name: name, Spec: spec, Pinned: pinned, Args: args}
	}
	bin := func(t Target, b string) Target { t.Bin = b; return t }
	oci := func(target, name, spec string, pinned bool, args ...string) Target {
		t := tg(target, name, spec, pinned, args...)
		t.Ecosystem = "oci"
		return t
	}
	digest := "sha256:" + strings.Repeat("c", 64)
	tests := []struct {
		name, server string
		want         Target
	}{
		{"npx", `{"command": "npx", "args": ["pkg", "--flag", "v"]}`, tg("npm:pkg@latest", "pkg", "latest", false, "--flag", "v")},
		{"npx -y scoped", `{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"]}`, tg("npm:@modelcontextprotocol/server-github@latest", "@modelcontextprotocol/server-github", "latest", false)},
		{"npx --yes pinned", `{"command": "npx", "args": ["--yes", "pkg@1.2.3", "a"]}`, tg("npm:pkg@1.2.3", "pkg", "1.2.3", true, "a")},
		{"npx range", `{"command": "npx", "args": ["pkg@^1.2.0"]}`, tg("npm:pkg@^1.2.0", "pkg", "^1.2.0", false)},
		{"npx -p", `{"command": "npx", "args": ["-y", "-p", "@s/pkg@2.0.0", "pkg-bin", "--x"]}`, bin(tg("npm:@s/pkg@2.0.0", "@s/pkg", "2.0.0", true, "--x"), "pkg-bin")},
		{"npx --package=", `{"command": "npx", "args": ["--package=pkg@next", "bin"]}`, bin(tg("npm:pkg@next", "pkg", "next", false), "bin")},
		{"npx --", `{"command": "npx", "args": ["-y", "--", "pkg", "-y"]}`, tg("npm:pkg@latest", "pkg", "latest", false, "-y")},
		{"bunx", `{"command": "bunx", "args": ["pkg@1.0.0"]}`, tg("npm:pkg@1.0.0", "pkg", "1.0.0", true)},
		{"bun x", `{"command": "bun", "args": ["x", "pkg"]}`, tg("npm:pkg@latest", "pkg", "latest", false)},
		{"pnpm dlx", `{"command": "pnpm", "args": ["dlx", "pkg", "serve"]}`, tg("npm:pkg@latest", "pkg", "latest", false, "serve")},
		{"yarn dlx", `{"command": "yarn", "args": ["dlx", "@s/p@3.1.4"]}`, tg("npm:@s/p@3.1.4", "@s/p", "3.1.4", true)},
		{"npm exec", `{"command": "npm", "args": ["exec", "--yes", "--", "pkg@1.0.0", "a"]}`, tg("npm:pkg@1.0.0", "pkg", "1.0.0", true, "a")},
		{"masked args", `{"command": "npx", "args": ["pkg", "--api-key", "abcdef123"]}`, tg("npm:pkg@latest", "pkg", "latest", false, "--api-key", "<literal, 9 characters>")},
		{"npx bad name", `{"command": "npx", "args": ["Bad_Name"]}`, ns("npm", "Bad_Name", "", false, `not a valid npm package name: invalid package name: "Bad_Name" (lower case letters, digits, '-', '.', '_', '~', optionally @scope/)`)},
		{"npx git", `{"command": "npx", "args": ["github:u/r"]}`, ns("npm", "", "", false, "a package from outside the npm registry (github:u/r): not resolved")},
		{"npx alias", `{"command": "npx", "args": ["x@npm:y@1.0.0"]}`, ns("npm", "x", "npm:y@1.0.0", false, "an npm alias (x@npm:y@1.0.0): the package it names is not resolved")},
		{"npx -c", `{"command": "npx", "args": ["-c", "pkg serve"]}`, none("npx -c runs a command string: which package it fetches is not read")},
		{"npx unknown flag", `{"command": "npx", "args": ["--foo", "pkg"]}`, none("npx flag --foo is not understood: the package it runs is not read")},
		{"npx two -p", `{"command": "npx", "args": ["-p", "a", "-p", "b", "c"]}`, none("npx names several packages (-p): not one target")},
		{"npx local", `{"command": "npx", "args": ["./tool"]}`, none(NotScannedLocal)},
		{"uvx", `{"command": "uvx", "args": ["mcp-server-fetch", "--x"]}`, py("pypi:mcp-server-fetch", "mcp-server-fetch", "", false, "--x")},
		{"uvx pinned", `{"command": "uvx", "args": ["mcp-server-fetch==1.2.3"]}`, py("pypi:mcp-server-fetch==1.2.3", "mcp-server-fetch", "1.2.3", true)},
		{"uvx @version", `{"command": "uvx", "args": ["mcp-server-git@2025.7.1"]}`, py("pypi:mcp-server-git==2025.7.1", "mcp-server-git", "2025.7.1", true)},
		{"uvx ===", `{"command": "uvx", "args": ["pkg===1.0-custom"]}`, py("pypi:pkg===1.0-custom", "pkg", "1.0-custom", true)},
		{"uvx range", `{"command": "uvx", "args": ["pkg>=1.2, <2"]}`, py("pypi:pkg>=1.2,<2", "pkg", ">=1.2, <2", false)},
		{"uvx wildcard", `{"command": "uvx", "args": ["pkg==1.*"]}`, py("pypi:pkg==1.*", "pkg", "==1.*", false)},
		{"uvx --from", `{"command": "uvx", "args": ["--from", "pkg==1.2.3", "cmd", "a"]}`, bin(py("pypi:pkg==1.2.3", "pkg", "1.2.3", true, "a"), "cmd")},
		{"uvx --python", `{"command": "uvx", "args": ["--python", "3.12", "mcp-server-time", "--local-timezone", "UTC"]}`, py("pypi:mcp-server-time", "mcp-server-time", "", false, "--local-timezone", "UTC")},
		{"uv tool run", `{"command": "uv", "args": ["tool", "run", "pkg@latest"]}`, py("pypi:pkg", "pkg", "latest", false)},
		{"pipx run", `{"command": "pipx", "args": ["run", "pkg", "a"]}`, py("pypi:pkg", "pkg", "", false, "a")},
		{"pipx run --spec", `{"command": "pipx", "args": ["run", "--spec", "pkg~=1.4", "pkg-cli"]}`, bin(py("pypi:pkg~=1.4", "pkg", "~=1.4", false), "pkg-cli")},
		{"uvx extras", `{"command": "uvx", "args": ["--from", "pkg[cli]==1.2.3", "cmd", "a"]}`, bin(ns("pypi", "pkg", "1.2.3", true, "a Python requirement with extras (pkg[cli]==1.2.3): the scan installs the package alone", "a"), "cmd")},
		{"uvx markers", `{"command": "uvx", "args": ["pkg==1.0; sys_platform == 'linux'"]}`, ns("pypi", "pkg", "==1.0; sys_platform == 'linux'", false, "a Python requirement with environment markers (pkg==1.0; sys_platform == 'linux'): the scan installs the package alone")},
		{"uvx --with", `{"command": "uvx", "args": ["--with", "requests", "pkg"]}`, ns("pypi", "pkg", "", false, "uvx --with requests installs more than the one package a scan installs: not one target")},
		{"uvx --index-url", `{"command": "uvx", "args": ["--index-url", "https://mirror.example.com/simple", "pkg"]}`, ns("pypi", "pkg", "", false, "a package from another index (uvx --index-url https://mirror.example.com/simple): scan it with verifymcp --index-url")},
		{"uvx --from git", `{"command": "uvx", "args": ["--from", "git+https://github.com/u/r", "cmd"]}`, bin(ns("pypi", "", "", false, "a package from outside PyPI (git+https://github.com/u/r): not resolved"), "cmd")},
		{"uvx --from path", `{"command": "uvx", "args": ["--from", "./src/server", "cmd"]}`, none(NotScannedLocal)},
		{"uvx bad version", `{"command": "uvx", "args": ["pkg==banana"]}`, ns("pypi", "pkg", "banana", true, "not a PEP 440 version (pkg==banana): not resolved")},
		{"uvx @ not a version", `{"command": "uvx", "args": ["pkg@main"]}`, ns("pypi", "pkg", "main", false, "not a PEP 440 version or specifier set (pkg@main): not resolved")},
		{"uvx ~= one number", `{"command": "uvx", "args": ["pkg~=1"]}`, ns("pypi", "pkg", "~=1", false, "not a PEP 440 version or specifier set (pkg~=1): not resolved")},
		{"uvx >= wildcard", `{"command": "uvx", "args": ["pkg>=1.*"]}`, ns("pypi", "pkg", ">=1.*", false, "not a PEP 440 version or specifier set (pkg>=1.*): not resolved")},
		// The resolver's grammar (pkgspec): a wildcard after a pre-release is no specifier.
		{"uvx wildcard after a pre-release", `{"command": "uvx", "args": ["pkg==1.0a1.*"]}`, ns("pypi", "pkg", "==1.0a1.*", false, "not a PEP 440 version or specifier set (pkg==1.0a1.*): not resolved")},
		{"docker", `{"command": "docker", "args": ["run", "-i", "--rm", "mcp/github", "stdio"]}`, oci("oci:mcp/github", "mcp/github", "", false, "stdio")},
		{"docker digest", `{"command": "docker", "args": ["run", "-i", "mcp/github@` + digest + `"]}`, oci("oci:mcp/github@"+digest, "mcp/github", digest, true)},
		// The container gets the variables -e names (the env block only
		// reaches the docker CLI), not the env block's others.
		{"docker -e", `{"command": "docker", "args": ["run", "-i", "-e", "GITHUB_TOKEN", "--env=LOG_LEVEL=debug", "-e", "GITHUB_TOKEN", "mcp/github"], "env": {"GITHUB_TOKEN": "x", "DOCKER_HOST": "y"}}`,
			envs(oci("oci:mcp/github", "mcp/github", "", false), "GITHUB_TOKEN", "LOG_LEVEL")},
		{"node script", `{"command": "node", "args": ["path/to/x.js"]}`, none(NotScannedLocal)},
		{"python -m", `{"command": "python", "args": ["-m", "srv"]}`, none(NotScannedModule + " (python -m srv): which distribution provides it, and at which version, is not in the file")},
		{"python3 -u -m", `{"command": "/usr/bin/python3", "args": ["-u", "-m", "mcp_server_time", "--local-timezone", "UTC"]}`, none(NotScannedModule + " (python3 -m mcp_server_time): which distribution provides it, and at which version, is not in the file")},
		{"py -mmod", `{"command": "py", "args": ["-X", "utf8", "-mmcp_server_fetch"]}`, none(NotScannedModule + " (py -m mcp_server_fetch): which distribution provides it, and at which version, is not in the file")},
		{"python script", `{"command": "python3", "args": ["server.py", "-m", "x"]}`, none(NotScannedLocal)},
		{"python -c", `{"command": "python3", "args": ["-c", "import srv; srv.main()"]}`, none(NotScannedLocal)},
		{"uvx --from python -m", `{"command": "uvx", "args": ["--from", "mcp-server-time==2026.10.19", "python", "-m", "mcp_server_time"]}`,
			bin(ns("pypi", "mcp-server-time", "2026.10.19", true, "uvx runs python -m mcp_server_time from mcp-server-time==2026.10.19: the scan starts one of the package's console scripts, and running an interpreter or a module is not supported", "-m", "mcp_server_time"), "python")},
		{"uv tool run --from", `{"command": "uv", "args": ["tool", "run", "--from", "mcp-server-git@2025.7.1", "mcp-server-git", "--repository", "."]}`,
			bin(py("pypi:mcp-server-git==2025.7.1", "mcp-server-git", "2025.7.1", true, "--repository", "."), "mcp-server-git")},
		{"uvx options first", `{"command": "uvx", "args": ["--python", "3.12", "--no-cache", "-q", "mcp-server-fetch==2025.4.7"]}`, py("pypi:mcp-server-fetch==2025.4.7", "mcp-server-fetch", "2025.4.7", true)},
		{"uvx --with=", `{"command": "uvx", "args": ["--with=httpx", "mcp-server-fetch"]}`, ns("pypi", "mcp-server-fetch", "", false, "uvx --with httpx installs more than the one package a scan installs: not one target")},
		{"pipx run --spec git", `{"command": "pipx", "args": ["run", "--spec", "git+https://github.com/u/r.git", "srv"]}`, bin(ns("pypi", "", "", false, "a package from outside PyPI (git+https://github.com/u/r.git): not resolved"), "srv")},
		{"pipx run pinned", `{"command": "pipx", "args": ["run", "mcp-server-time==2026.10.19"]}`, py("pypi:mcp-server-time==2026.10.19", "mcp-server-time", "2026.10.19", true)},
		{"uvx --from reference bin", `{"command": "uvx", "args": ["--from", "pkg", "${input:cmd}"]}`, none("the command run from the package is a reference (${input:cmd}): what runs is not in the file")},
		{"binary", `{"command": "/usr/local/bin/mcp-server"}`, none(NotScannedLocal)},
		{"spaces", `{"command": "npx -y pkg"}`, none("the command has spaces and no args: how the client splits it is not known")},
		{"url", `{"url": "https://a.example/mcp"}`, none(NotScannedURL)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := targetOf(t, tc.server)
			tc.want.Server, tc.want.File, tc.want.Line = "s", "x.json", 1
			if tc.want.EnvNames == nil {
				tc.want.EnvNames = []string{}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("%s (-want +got):\n%s", tc.server, d)
			}
		})
	}
}

// envs is t with the environment names given.
func envs(t Target, names ...string) Target {
	t.EnvNames = names
	return t
}

func TestTargetsTestdata(t *testing.T) {
	f := mustParse(t, "testdata/claude-desktop/claude_desktop_config.json")
	want := []Target{
		{Server: "filesystem", Line: 3, Target: "npm:@modelcontextprotocol/server-filesystem@latest", Ecosystem: "npm", Name: "@modelcontextprotocol/server-filesystem", Spec: "latest", Args: []string{"/Users/alice", "/Users/alice/projects"}, EnvNames: []string{}},
		{Server: "github", Line: 12, Target: "npm:@modelcontextprotocol/server-github@2025.4.8", Ecosystem: "npm", Name: "@modelcontextprotocol/server-github", Spec: "2025.4.8", Pinned: true, Args: []string{}, EnvNames: []string{"GITHUB_PERSONAL_ACCESS_TOKEN"}},
		{Server: "postgres", Line: 19, Target: "npm:@modelcontextprotocol/server-postgres@0.6.2", Ecosystem: "npm", Name: "@modelcontextprotocol/server-postgres", Spec: "0.6.2", Pinned: true, Args: []string{"postgresql://app:<literal, 16 characters>@db.example.com:5432/app"}, EnvNames: []string{}},
		{Server: "brave-search", Line: 23, Target: "npm:@modelcontextprotocol/server-brave-search@^0.6.0", Ecosystem: "npm", Name: "@modelcontextprotocol/server-brave-search", Spec: "^0.6.0", Args: []string{}, EnvNames: []string{"BRAVE_API_KEY", "NODE_ENV"}},
	}
	if d := cmp.Diff(want, Targets(f), cmpopts.IgnoreFields(Target{}, "File")); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	cline := mustParse(t, "testdata/cline/cline_mcp_settings.json")
	ts := Targets(cline)
	if !ts[0].Disabled || ts[0].Target != "npm:old-search-mcp@latest" || ts[1].Disabled {
		t.Errorf("cline targets: %+v", ts[:2])
	}
}

func TestTargetIsPackage(t *testing.T) {
	npm := Target{Ecosystem: "npm", Name: "@s/pkg", Spec: "1.2.3", Pinned: true}
	latest := Target{Ecosystem: "npm", Name: "pkg", Spec: "latest"}
	py := Target{Ecosystem: "pypi", Name: "Mcp_Server.Time", Spec: "2026.10.19", Pinned: true}
	tests := []struct {
		t    Target
		ref  string
		want bool
	}{
		{npm, "npm:@s/pkg", true},
		{npm, "@s/pkg", true},
		{npm, "npm:@s/pkg@1.2.3", true},
		{npm, "npm:@s/pkg@1.2.4", false},
		{npm, "pypi:@s/pkg", false},
		{latest, "npm:pkg", true},
		{latest, "npm:pkg@latest", false},
		{py, "pypi:mcp-server-time", true},
		{py, "pypi:mcp-server-time==2026.10.19", true},
		{py, "pypi:mcp-server-time==2026.10.10", false},
		{py, "mcp-server-time", false},
		{Target{}, "npm:pkg", false},
	}
	for _, tc := range tests {
		if got := tc.t.IsPackage(tc.ref); got != tc.want {
			t.Errorf("%+v IsPackage(%q) = %v, want %v", tc.t, tc.ref, got, tc.want)
		}
	}
}
