package pkgspec

import (
	"errors"
	"testing"
)

// TestParseTarget holds the target grammar to its results and to its
// messages, byte for byte: the CLI prints them, and pipeline's and the
// CLI's tests compare them.
func TestParseTarget(t *testing.T) {
	// The tails of ValidNPMName's and ValidPyPIName's messages.
	const (
		npmName  = " (lower case letters, digits, '-', '.', '_', '~', optionally @scope/)"
		pypiName = " (ASCII letters, digits, and '.', '_', '-' between them)"
	)
	tests := []struct {
		in   string
		want Package
		err  error
		msg  string
	}{
		{in: "npm:left-pad@1.3.0", want: Package{"npm", "left-pad", "1.3.0"}},
		{in: "npm:@acme/weather@^1.2.0", want: Package{"npm", "@acme/weather", "^1.2.0"}},
		{in: "npm:express@>=4.0.0 <5", want: Package{"npm", "express", ">=4.0.0 <5"}},
		{in: "npm:left-pad", want: Package{"npm", "left-pad", "latest"}},
		{in: "left-pad@next", want: Package{"npm", "left-pad", "next"}},
		{in: "@acme/weather", want: Package{"npm", "@acme/weather", "latest"}},
		{in: "  npm:left-pad@1.3.0 \n", want: Package{"npm", "left-pad", "1.3.0"}},
		{in: "npm:left-pad@", err: ErrBadTarget, msg: "invalid target: \"npm:left-pad@\": empty version after @ (write npm:left-pad@VERSION, or npm:left-pad for the latest release)"},
		{in: "@acme/weather@", err: ErrBadTarget, msg: "invalid target: \"@acme/weather@\": empty version after @ (write @acme/weather@VERSION, or @acme/weather for the latest release)"},
		{in: "npm:", err: ErrBadTarget, msg: "invalid target: invalid package name: \"\" must be 1 to 214 characters"},
		{in: "npm:Left-Pad@1.3.0", err: ErrBadTarget, msg: "invalid target: invalid package name: \"Left-Pad\"" + npmName},
		{in: "npm:.hidden", err: ErrBadTarget, msg: "invalid target: invalid package name: \".hidden\"" + npmName},
		{in: "npm:@acme@1.0.0", err: ErrBadTarget, msg: "invalid target: invalid package name: \"@acme\"" + npmName},
		{in: "", err: ErrBadTarget, msg: "invalid target: empty target"},
		{in: "   ", err: ErrBadTarget, msg: "invalid target: empty target"},
		{in: "https://mcp.example.com/mcp", err: ErrUnsupported, msg: "unsupported target: https://mcp.example.com/mcp looks like a remote endpoint; remote servers are another track with another rubric, and verifymcp scores packages only"},
		{in: "http://localhost:3000/sse", err: ErrUnsupported, msg: "unsupported target: http://localhost:3000/sse looks like a remote endpoint; remote servers are another track with another rubric, and verifymcp scores packages only"},
		{in: "github:owner/repo", err: ErrBadTarget, msg: "invalid target: \"github:owner/repo\": unknown scheme (want npm:NAME@VERSION, pkg:npm/NAME@VERSION, pypi:NAME==VERSION, uvx:NAME, pkg:pypi/NAME@VERSION, a .tgz, a .whl or an sdist)"},
		{in: "mcp-server-fetch==2025.4.7", err: ErrBadTarget, msg: "invalid target: \"mcp-server-fetch==2025.4.7\" looks like a Python requirement; write pypi:mcp-server-fetch==2025.4.7 (a bare target is npm)"},
		{in: "mcp >= 1", err: ErrBadTarget, msg: "invalid target: \"mcp >= 1\" looks like a Python requirement; write pypi:mcp >= 1 (a bare target is npm)"},
		{in: "pypi:mcp-server-fetch==2025.4.7", want: Package{"pypi", "mcp-server-fetch", "==2025.4.7"}},
		{in: "pypi:MCP_Server.Fetch==1.0", want: Package{"pypi", "MCP_Server.Fetch", "==1.0"}},
		{in: "pypi:mcp", want: Package{"pypi", "mcp", ""}},
		{in: "pypi:mcp >= 1.2 , < 2", want: Package{"pypi", "mcp", ">=1.2,<2"}},
		{in: "pypi:mcp~=1.4", want: Package{"pypi", "mcp", "~=1.4"}},
		{in: "pypi:mcp===1.0-custom", want: Package{"pypi", "mcp", "===1.0-custom"}},
		{in: "pypi:mcp==1.*", want: Package{"pypi", "mcp", "==1.*"}},
		{in: "pypi:mcp (>=1.2)", want: Package{"pypi", "mcp", ">=1.2"}},
		{in: "pypi:", err: ErrBadTarget, msg: "invalid target: \"pypi:\": no project name after pypi:"},
		{in: "pypi:--index-url https://x mcp", err: ErrBadTarget, msg: "invalid target: \"pypi:--index-url https://x mcp\": pypi options are not read (verifymcp scans one package from the index; write pypi:NAME or pypi:NAME==VERSION, and --index-url for a mirror)"},
		{in: "pypi:-mcp", err: ErrBadTarget, msg: "invalid target: \"pypi:-mcp\": pypi options are not read (verifymcp scans one package from the index; write pypi:NAME or pypi:NAME==VERSION, and --index-url for a mirror)"},
		{in: "pypi:.mcp", err: ErrBadTarget, msg: "invalid target: \"pypi:.mcp\": \".mcp\" does not start with a project name" + pypiName},
		{in: "pypi:mcp.==1.0", err: ErrBadTarget, msg: "invalid target: \"pypi:mcp.==1.0\": \".==1.0\" after the name is not a version specifier (want ==VERSION, or a PEP 440 set such as >=1.2,<2); a command or arguments after the package are not read: the entry point is chosen by the rule or --bin, arguments go in --arg"},
		{in: "pypi:mcp[cli]==1.0", err: ErrBadTarget, msg: "invalid target: \"pypi:mcp[cli]==1.0\": extras ([cli]) are not scanned: verifymcp scans the package itself; drop the [...]"},
		{in: "pypi:mcp==1.0; python_version>='3.10'", err: ErrBadTarget, msg: "invalid target: \"pypi:mcp==1.0; python_version>='3.10'\": environment markers (; python_version>='3.10') are not scanned: the sandbox has one Python and one platform; drop the ; and what follows"},
		{in: "pypi:mcp@1.0", err: ErrBadTarget, msg: "invalid target: \"pypi:mcp@1.0\": NAME@... is not a version in a Python requirement (PEP 508 reads a URL after @); write pypi:mcp==VERSION"},
		{in: "pypi:mcp==not a version", err: ErrBadTarget, msg: "invalid target: \"pypi:mcp==not a version\": \"==not a version\" is not a version specifier (want ==VERSION, or a PEP 440 set such as >=1.2,<2 or ~=1.4)"},
		{in: "pypi:mcp==1.0.0.dev1.post", err: ErrBadTarget, msg: "invalid target: \"pypi:mcp==1.0.0.dev1.post\": mcp \"==1.0.0.dev1.post\": \"==1.0.0.dev1.post\" has an invalid version"},
		{in: "pypi:mcp>=1.*", err: ErrBadTarget, msg: "invalid target: \"pypi:mcp>=1.*\": mcp \">=1.*\": \">=1.*\" uses a wildcard, which only == and != allow"},
		{in: "pypi:mcp~=1", err: ErrBadTarget, msg: "invalid target: \"pypi:mcp~=1\": mcp \"~=1\": \"~=1\" ~= needs a version with at least two release numbers"},
		{in: "pypi:mcp>=1,,<2", err: ErrBadTarget, msg: "invalid target: \"pypi:mcp>=1,,<2\": the specifier set \">=1,,<2\" has an empty clause"},
		{in: "pypi:mcp>=1,", err: ErrBadTarget, msg: "invalid target: \"pypi:mcp>=1,\": the specifier set \">=1,\" has an empty clause"},
		{in: "pypi:mcp>=1,1", err: ErrBadTarget, msg: "invalid target: \"pypi:mcp>=1,1\": \"1\" is not a version specifier (want ==VERSION, or a PEP 440 set such as >=1.2,<2 or ~=1.4)"},
		{in: "pypi:mcp 1.0", err: ErrBadTarget, msg: "invalid target: \"pypi:mcp 1.0\": \"1.0\" after the name is not a version specifier (want ==VERSION, or a PEP 440 set such as >=1.2,<2); a command or arguments after the package are not read: the entry point is chosen by the rule or --bin, arguments go in --arg"},
		{in: "pypi:mcp==1.0+local>=2", err: ErrBadTarget, msg: "invalid target: \"pypi:mcp==1.0+local>=2\": mcp \"==1.0+local>=2\": \"==1.0+local>=2\" has an invalid version"},
		{in: "uvx:mcp-server-git", want: Package{"pypi", "mcp-server-git", ""}},
		{in: "uvx:mcp-server-git@2025.7.1", want: Package{"pypi", "mcp-server-git", "==2025.7.1"}},
		{in: "uvx:mcp-server-git@latest", want: Package{"pypi", "mcp-server-git", ""}},
		{in: "uvx:mcp-server-git>=2025", want: Package{"pypi", "mcp-server-git", ">=2025"}},
		{in: "uvx:--from x y", err: ErrBadTarget, msg: "invalid target: \"uvx:--from x y\": uvx options are not read (verifymcp scans one package from the index; write uvx:NAME or uvx:NAME==VERSION, and --index-url for a mirror)"},
		{in: "uvx:mcp-server-git serve", err: ErrBadTarget, msg: "invalid target: \"uvx:mcp-server-git serve\": \"serve\" after the name is not a version specifier (want ==VERSION, or a PEP 440 set such as >=1.2,<2); a command or arguments after the package are not read: the entry point is chosen by the rule or --bin, arguments go in --arg"},
		{in: "uvx:mcp@>=1", err: ErrBadTarget, msg: "invalid target: \"uvx:mcp@>=1\": \">=1\" after @ is not one version (uvx NAME@VERSION pins ==VERSION; write uvx:mcp followed by a specifier set for a range)"},
		{in: "uvx:mcp@", err: ErrBadTarget, msg: "invalid target: \"uvx:mcp@\": an empty version after @"},
		{in: "uvx:mcp@banana", err: ErrBadTarget, msg: "invalid target: \"uvx:mcp@banana\": mcp \"==banana\": \"==banana\" has an invalid version"},
		{in: "uvx:mcp[cli]", err: ErrBadTarget, msg: "invalid target: \"uvx:mcp[cli]\": extras ([cli]) are not scanned: verifymcp scans the package itself; drop the [...]"},
		{in: "pypi:mcp ()", err: ErrBadTarget, msg: "invalid target: \"pypi:mcp ()\": empty parentheses after the name: PEP 508 puts a specifier set in them, such as mcp (>=1.2); drop them for the latest release"},
		{in: "uvx:mcp ( )", err: ErrBadTarget, msg: "invalid target: \"uvx:mcp ( )\": empty parentheses after the name: PEP 508 puts a specifier set in them, such as mcp (>=1.2); drop them for the latest release"},
		{in: "pypi:mcp (>=1.0)", want: Package{"pypi", "mcp", ">=1.0"}},
		{in: "uvx:", err: ErrBadTarget, msg: "invalid target: \"uvx:\": no project name after uvx:"},
		{in: "pkg:npm/%40acme/weather@1.2.3", want: Package{"npm", "@acme/weather", "1.2.3"}},
		{in: "pkg:npm/@acme/weather", want: Package{"npm", "@acme/weather", "latest"}},
		{in: "pkg:npm/acme/weather@1.2.3", want: Package{"npm", "@acme/weather", "1.2.3"}},
		{in: "pkg:npm/left-pad@%5E1.3.0", want: Package{"npm", "left-pad", "^1.3.0"}},
		{in: "pkg:npm/left-pad@1.3.0%2Bbuild.5", want: Package{"npm", "left-pad", "1.3.0+build.5"}},
		{in: "pkg:NPM/left-pad@1.3.0", want: Package{"npm", "left-pad", "1.3.0"}},
		{in: "pkg:npm/left-pad@1.3.0?repository_url=https://registry.npmjs.org/", want: Package{"npm", "left-pad", "1.3.0"}},
		{in: "pkg:npm/left-pad@1.3.0?repository_url=Registry.npmjs.org", want: Package{"npm", "left-pad", "1.3.0"}},
		{in: "pkg:npm/left-pad@1.3.0?repository_url=https://npm.example.com/", err: ErrUnsupported, msg: "unsupported target: purl \"pkg:npm/left-pad@1.3.0?repository_url=https://npm.example.com/\": qualifier repository_url=https://npm.example.com/ names another registry; scan it with --registry and a purl without the qualifier"},
		{in: "pkg:npm/left-pad@1.3.0?repository_url=http://registry.npmjs.org", err: ErrUnsupported, msg: "unsupported target: purl \"pkg:npm/left-pad@1.3.0?repository_url=http://registry.npmjs.org\": qualifier repository_url=http://registry.npmjs.org names another registry; scan it with --registry and a purl without the qualifier"},
		{in: "pkg:npm/left-pad@1.3.0?checksum=sha512:abc", err: ErrUnsupported, msg: "unsupported target: purl \"pkg:npm/left-pad@1.3.0?checksum=sha512:abc\": qualifier checksum=sha512:abc is not verified by verifymcp; scan the exact version and compare the report's integrity"},
		{in: "pkg:npm/left-pad@1.3.0?download_url=https://example.com/left-pad.tgz", err: ErrUnsupported, msg: "unsupported target: purl \"pkg:npm/left-pad@1.3.0?download_url=https://example.com/left-pad.tgz\": qualifier download_url=https://example.com/left-pad.tgz names a tarball outside the registry; download it and scan the local .tgz"},
		{in: "pkg:npm/left-pad@1.3.0?flavour=sweet", err: ErrUnsupported, msg: "unsupported target: purl \"pkg:npm/left-pad@1.3.0?flavour=sweet\": qualifier flavour=sweet is not one verifymcp can honour; drop it to scan the registry's package"},
		{in: "pkg:npm/left-pad@1.3.0#dist/index.js", err: ErrUnsupported, msg: "unsupported target: purl \"pkg:npm/left-pad@1.3.0#dist/index.js\": subpath dist/index.js names a file inside the package; verifymcp scans whole packages (drop the #subpath)"},
		{in: "pkg:npm/left-pad@1.3.0?1key=x", err: ErrBadTarget, msg: "invalid target: purl \"pkg:npm/left-pad@1.3.0?1key=x\": invalid qualifiers: invalid qualifier key: '1key'"},
		{in: "pkg:npm/a/b/c@1.0.0", err: ErrBadTarget, msg: "invalid target: invalid package name: \"@a/b/c\"" + npmName},
		{in: "pkg:npm/left-pad@", err: ErrBadTarget, msg: "invalid target: purl \"pkg:npm/left-pad@\": empty version after @ (drop the @ for the latest release)"},
		{in: "pkg:npm/Left-Pad@1.3.0", err: ErrBadTarget, msg: "invalid target: invalid package name: \"Left-Pad\"" + npmName},
		{in: "pkg:npm/%zz@1.0.0", err: ErrBadTarget, msg: "invalid target: purl \"pkg:npm/%zz@1.0.0\": error unescaping name: invalid URL escape \"%zz\""},
		{in: "pkg:npm", err: ErrBadTarget, msg: "invalid target: purl \"pkg:npm\": purl is missing type or name"},
		{in: "pkg:gem/rails@7.1.0", err: ErrUnsupported, msg: "unsupported target: purl type \"gem\" (npm and pypi only)"},
		{in: "pkg:pypi/mcp-server-fetch@2025.4.7", want: Package{"pypi", "mcp-server-fetch", "==2025.4.7"}},
		{in: "pkg:pypi/Django_Thing@1.0", want: Package{"pypi", "django-thing", "==1.0"}},
		{in: "pkg:pypi/mcp", want: Package{"pypi", "mcp", ""}},
		{in: "pkg:pypi/mcp@1.0%2Blocal.1", want: Package{"pypi", "mcp", "==1.0+local.1"}},
		{in: "pkg:pypi/mcp@1.0?repository_url=https://pypi.org/simple", want: Package{"pypi", "mcp", "==1.0"}},
		{in: "pkg:pypi/mcp@1.0?repository_url=pypi.org", want: Package{"pypi", "mcp", "==1.0"}},
		{in: "pkg:pypi/mcp@1.0?repository_url=https://pypi.org/pypi/", want: Package{"pypi", "mcp", "==1.0"}},
		{in: "pkg:pypi/mcp@1.0?repository_url=https://pypi.python.org", want: Package{"pypi", "mcp", "==1.0"}},
		{in: "pkg:pypi/mcp@1.0?repository_url=https://mirror.example.com/simple", err: ErrUnsupported, msg: "unsupported target: purl \"pkg:pypi/mcp@1.0?repository_url=https://mirror.example.com/simple\": qualifier repository_url=https://mirror.example.com/simple names another index; scan it with --index-url and a purl without the qualifier"},
		{in: "pkg:pypi/mcp@1.0?file_name=mcp-1.0-py3-none-any.whl", err: ErrUnsupported, msg: "unsupported target: purl \"pkg:pypi/mcp@1.0?file_name=mcp-1.0-py3-none-any.whl\": qualifier file_name=mcp-1.0-py3-none-any.whl names one distribution file; verifymcp installs the release from the index (or scan the local wheel or sdist)"},
		{in: "pkg:pypi/mcp@1.0?download_url=https://x/mcp-1.0.whl", err: ErrUnsupported, msg: "unsupported target: purl \"pkg:pypi/mcp@1.0?download_url=https://x/mcp-1.0.whl\": qualifier download_url=https://x/mcp-1.0.whl names a file outside the index; download it and scan the local wheel or sdist"},
		{in: "pkg:pypi/mcp@1.0?checksum=sha256:ab", err: ErrUnsupported, msg: "unsupported target: purl \"pkg:pypi/mcp@1.0?checksum=sha256:ab\": qualifier checksum=sha256:ab is not verified by verifymcp; scan the exact version and compare the report's integrity"},
		{in: "pkg:pypi/mcp@1.0?vcs_url=x", err: ErrUnsupported, msg: "unsupported target: purl \"pkg:pypi/mcp@1.0?vcs_url=x\": qualifier vcs_url=x is not one verifymcp can honour; drop it to scan the registry's package"},
		{in: "pkg:pypi/mcp@1.0#mcp/server.py", err: ErrUnsupported, msg: "unsupported target: purl \"pkg:pypi/mcp@1.0#mcp/server.py\": subpath mcp/server.py names a file inside the package; verifymcp scans whole packages (drop the #subpath)"},
		{in: "pkg:pypi/acme/mcp@1.0", err: ErrBadTarget, msg: "invalid target: purl \"pkg:pypi/acme/mcp@1.0\": a pypi purl has no namespace (acme/)"},
		{in: "pkg:pypi/mcp@%3E%3D1.0", err: ErrBadTarget, msg: "invalid target: purl \"pkg:pypi/mcp@%3E%3D1.0\": version \">=1.0\" is not one version (a purl names an exact release)"},
		{in: "pkg:pypi/mcp@banana", err: ErrBadTarget, msg: "invalid target: purl \"pkg:pypi/mcp@banana\": mcp \"==banana\": \"==banana\" has an invalid version"},
		{in: "pkg:pypi/-mcp@1.0", err: ErrBadTarget, msg: "invalid target: invalid package name: \"-mcp\"" + pypiName},
	}
	for _, tt := range tests {
		got, err := ParseTarget(tt.in)
		if tt.err == nil {
			if err != nil || got != tt.want {
				t.Errorf("ParseTarget(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
			continue
		}
		if !errors.Is(err, tt.err) {
			t.Errorf("ParseTarget(%q) = %+v, %v; want %v", tt.in, got, err, tt.err)
			continue
		}
		if got != (Package{}) {
			t.Errorf("ParseTarget(%q) = %+v with an error", tt.in, got)
		}
		if err.Error() != tt.msg {
			t.Errorf("ParseTarget(%q) error\n got %q\nwant %q", tt.in, err, tt.msg)
		}
	}
}

// TestParseRequirement: the messages quote the target as written, which
// need not be the requirement (an MCP registry entry's, say).
func TestParseRequirement(t *testing.T) {
	got, err := ParseRequirement("registry:io.github.acme/weather", "pypi", " Acme.Weather == 1.0 ")
	if want := (Package{"pypi", "Acme.Weather", "==1.0"}); err != nil || got != want {
		t.Errorf("ParseRequirement = %+v, %v; want %+v", got, err, want)
	}
	_, err = ParseRequirement("registry:io.github.acme/weather", "pypi", "acme-weather==1.0.0.dev1.post")
	const msg = `invalid target: "registry:io.github.acme/weather": acme-weather "==1.0.0.dev1.post": "==1.0.0.dev1.post" has an invalid version`
	if !errors.Is(err, ErrBadTarget) || err.Error() != msg {
		t.Errorf("ParseRequirement error\n got %v\nwant %s", err, msg)
	}
}

func TestTrimSpecifierSet(t *testing.T) {
	for _, tt := range []struct {
		in, set, clause string
		ok              bool
	}{
		{in: ">=1.2,<2", set: ">=1.2,<2", ok: true},
		{in: " >= 1.2 , < 2 ", set: ">=1.2,<2", ok: true},
		{in: "==1.*", set: "==1.*", ok: true},
		{in: "=== 1.0-custom", set: "===1.0-custom", ok: true},
		{in: "==banana", set: "==banana", ok: true}, // the versions are ParseVersionSpec's
		{in: ">=1,,<2", clause: ""},
		{in: ">=1,", clause: ""},
		{in: ">=1, 2 ", clause: "2"},
		{in: "==1.0 2", clause: "==1.0 2"},
		{in: "1.0", clause: "1.0"},
	} {
		set, clause, ok := TrimSpecifierSet(tt.in)
		if set != tt.set || clause != tt.clause || ok != tt.ok {
			t.Errorf("TrimSpecifierSet(%q) = %q, %q, %v; want %q, %q, %v", tt.in, set, clause, ok, tt.set, tt.clause, tt.ok)
		}
	}
}

func TestPyPINameHead(t *testing.T) {
	for in, want := range map[string]string{
		"mcp-server-fetch==1.0": "mcp-server-fetch",
		"MCP_Server.Fetch":      "MCP_Server.Fetch",
		"mcp.==1.0":             "mcp",
		"mcp[cli]":              "mcp",
		"a":                     "a",
		"-mcp":                  "",
		".mcp":                  "",
		"":                      "",
		"\u212a":                "", // KELVIN SIGN: ASCII only
	} {
		if got := PyPINameHead(in); got != want {
			t.Errorf("PyPINameHead(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCanonicalPublicVersion(t *testing.T) {
	for v, want := range map[string]bool{
		"1.2.3": true, "0": true, "1.0rc1": true, "1.0a0": true, "2.0.post1": true, "1!2.0.dev3": true, "1.1.2.post1": true,
		"1.0.post0.dev0": true,
		"01.0":           false, "v1.0": false, "1.0-alpha1": false, "1.0+local": false, "1.*": false, "1.0 ": false,
		"1.0a": false, "0!1.0": false, "1.0.RC1": false, "": false,
	} {
		if got := CanonicalPublicVersion(v); got != want {
			t.Errorf("CanonicalPublicVersion(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestCutPurlVersion(t *testing.T) {
	for _, tt := range []struct {
		in, name, version, err string
		found                  bool
	}{
		{in: "mcp@1.0", name: "mcp", version: "1.0", found: true},
		{in: "%40acme/weather@1.0%2Bb", name: "@acme/weather", version: "1.0+b", found: true},
		{in: "mcp@", name: "mcp", version: "", found: true},
		{in: "mcp"},
		{in: "@1.0"},
		{in: "%zz@1.0", found: true, err: `invalid URL escape "%zz"`},
		{in: "mcp@%zz", found: true, err: `invalid URL escape "%zz"`},
	} {
		name, version, found, err := CutPurlVersion(tt.in)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if name != tt.name || version != tt.version || found != tt.found || gotErr != tt.err {
			t.Errorf("CutPurlVersion(%q) = %q, %q, %v, %q; want %q, %q, %v, %q", tt.in, name, version, found, gotErr, tt.name, tt.version, tt.found, tt.err)
		}
	}
}
