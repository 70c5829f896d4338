package ecosystem_test

import (
	"slices"
	"testing"

	"github.com/verifymcp/verifymcp/ecosystem"
)

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		ok         bool
	}{
		{"", "npm", true}, {"npm", "npm", true}, {"pypi", "pypi", true},
		{"PyPI", "", false}, {"oci", "oci", true}, {"mcpb", "mcpb", true}, {"nuget", "", false}, {"mcp-registry", "", false},
	} {
		e, ok := ecosystem.Of(tc.name)
		if ok != tc.ok || (ok && e.Name() != tc.want) {
			t.Errorf("Of(%q) = %v, %v; want %q, %v", tc.name, e, ok, tc.want, tc.ok)
		}
	}
	if e, ok := ecosystem.Known("PyPI"); !ok || e.Name() != "pypi" {
		t.Errorf("Known(PyPI) = %v, %v", e, ok)
	}
	if _, ok := ecosystem.Known(""); ok {
		t.Error("Known(\"\") found an ecosystem")
	}
	if e := ecosystem.MustOf("nuget"); e.Name() != "npm" {
		t.Errorf("MustOf(nuget) = %s, want npm", e.Name())
	}
	for _, e := range ecosystem.All {
		if got, ok := ecosystem.Of(e.Name()); !ok || got.Name() != e.Name() {
			t.Errorf("Of(%s) does not find it", e.Name())
		}
	}
}

func TestPinUnpin(t *testing.T) {
	for _, tc := range []struct {
		eco, name, version, pin string
	}{
		{"npm", "@modelcontextprotocol/server-memory", "2025.8.4", "@modelcontextprotocol/server-memory@2025.8.4"},
		{"npm", "left-pad", "1.3.0", "left-pad@1.3.0"},
		{"pypi", "mcp-server-time", "2026.10.19", "mcp-server-time==2026.10.19"},
	} {
		e := ecosystem.MustOf(tc.eco)
		if got := e.Pin(tc.name, tc.version); got != tc.pin {
			t.Errorf("%s Pin = %q, want %q", tc.eco, got, tc.pin)
		}
		if n, v := e.Unpin(tc.pin); n != tc.name || v != tc.version {
			t.Errorf("%s Unpin(%q) = %q, %q", tc.eco, tc.pin, n, v)
		}
		if n, v := e.Unpin(tc.name); n != tc.name || v != "" {
			t.Errorf("%s Unpin(%q) = %q, %q; want no version", tc.eco, tc.name, n, v)
		}
	}
}

func TestPurlAndKeys(t *testing.T) {
	for _, tc := range []struct {
		eco, name, version, purl, key string
	}{
		{"npm", "@scope/pkg", "1.0.0+build.1", "pkg:npm/%40scope/pkg@1.0.0+build.1", "npm/@scope/pkg@1.0.0+build.1"},
		{"npm", "left-pad", "1.3.0", "pkg:npm/left-pad@1.3.0", "npm/left-pad@1.3.0"},
		{"pypi", "MCP_Server.Time", "1.0RC1", "pkg:pypi/mcp-server-time@1.0RC1", "pypi/mcp-server-time@1.0rc1"},
		{"pypi", "torch", "2.1.0+cpu", "pkg:pypi/torch@2.1.0%2Bcpu", "pypi/torch@2.1.0+cpu"},
	} {
		e := ecosystem.MustOf(tc.eco)
		if got := e.Purl(tc.name, tc.version); got != tc.purl {
			t.Errorf("%s Purl(%q, %q) = %q, want %q", tc.eco, tc.name, tc.version, got, tc.purl)
		}
		if got := ecosystem.PurlKey(tc.purl); got != tc.key {
			t.Errorf("PurlKey(%q) = %q, want %q", tc.purl, got, tc.key)
		}
	}
	if got := ecosystem.PurlKey("pkg:golang/github.com/a/b@v1.0.0?x=y"); got != "golang/github.com/a/b@v1.0.0" {
		t.Errorf("PurlKey of another type = %q", got)
	}
	if got := ecosystem.PurlKey("not a purl"); got != "not a purl" {
		t.Errorf("PurlKey of a non-purl = %q", got)
	}
}

func TestSameName(t *testing.T) {
	for _, tc := range []struct {
		eco, a, b string
		want      bool
	}{
		{"pypi", "MCP_server.time", " mcp-server-time ", true},
		{"pypi", "mcp-server-time", "mcp-server-times", false},
		{"npm", "Left-Pad", "left-pad", true},
		{"npm", "left_pad", "left-pad", false},
		{"oci", "Alpine", "docker.io/library/alpine", false}, // a repository name is lower case
		{"oci", "alpine:3", "docker.io/library/alpine", true},
		{"nuget", "a", "A", true},
	} {
		if got := ecosystem.SameName(tc.eco, tc.a, tc.b); got != tc.want {
			t.Errorf("SameName(%s, %q, %q) = %v", tc.eco, tc.a, tc.b, got)
		}
	}
}

func TestTreePurls(t *testing.T) {
	lock := []byte(`{"packages": {
		"": {"name": "root", "version": "0.0.0"},
		"node_modules/b": {"version": "2.0.0"},
		"node_modules/@s/a": {"version": "1.0.0"},
		"node_modules/b/node_modules/c": {"name": "c", "version": "3.0.0"},
		"node_modules/linked": {"link": true},
		"node_modules/dup": {"name": "b", "version": "2.0.0"}}}`)
	got := ecosystem.MustOf("npm").TreePurls(lock, "pkg:npm/c@3.0.0")
	want := []string{"pkg:npm/%40s/a@1.0.0", "pkg:npm/b@2.0.0"}
	if !slices.Equal(got, want) {
		t.Errorf("npm TreePurls = %q, want %q", got, want)
	}
	pylock := []byte(`lock-version = "1.0"
created-by = "uv"
[[packages]]
name = "Requests"
version = "2.19.0"
[[packages]]
name = "urllib3"
version = "1.23"
[[packages]]
name = "urllib3"
version = "1.23"
[[packages]]
name = "local"
[packages.directory]
path = "./local"
[[packages]]
name = "root"
[packages.directory]
path = "."
`)
	py := ecosystem.MustOf("pypi")
	if got, want := py.TreePurls(pylock, "requests"), []string{"pkg:pypi/urllib3@1.23"}; !slices.Equal(got, want) {
		t.Errorf("pypi TreePurls skipping a name = %q, want %q", got, want)
	}
	if got, want := py.TreePurls(pylock, "pkg:pypi/URLLIB3@1.23"), []string{"pkg:pypi/requests@2.19.0"}; !slices.Equal(got, want) {
		t.Errorf("pypi TreePurls skipping a purl = %q, want %q", got, want)
	}
	if got := py.TreePurls([]byte(`lock-version = "2.0"`), ""); got != nil {
		t.Errorf("pypi TreePurls of a version 2 lock = %q, want nil", got)
	}
}

func TestExact(t *testing.T) {
	for _, tc := range []struct {
		eco, spec, want string
		ok              bool
	}{
		{"npm", "1.2.3", "1.2.3", true}, {"npm", "latest", "", false}, {"npm", "", "", false},
		{"npm", "^1.2.3", "", false}, {"npm", ">=1 <2", "", false}, {"npm", "1.x || 2", "", false},
		{"pypi", "==1.2.3", "1.2.3", true}, {"pypi", "==1.*", "", false}, {"pypi", ">=1", "", false},
		{"pypi", "==1,!=1.1", "", false}, {"pypi", "", "", false}, {"pypi", "===1.0", "", false},
	} {
		v, ok := ecosystem.MustOf(tc.eco).Exact(tc.spec)
		if v != tc.want || ok != tc.ok {
			t.Errorf("%s Exact(%q) = %q, %v; want %q, %v", tc.eco, tc.spec, v, ok, tc.want, tc.ok)
		}
	}
}
