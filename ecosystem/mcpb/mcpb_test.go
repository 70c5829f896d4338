package mcpb_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verifymcp/verifymcp/ecosystem"
	"github.com/verifymcp/verifymcp/ecosystem/mcpb"
)

var _ ecosystem.Ecosystem = mcpb.Ecosystem{}

func TestPinUnpinExact(t *testing.T) {
	var e mcpb.Ecosystem
	for _, tc := range []struct {
		ref, name, version string
	}{
		{"filesystem@0.1.3", "filesystem", "0.1.3"},
		{"hello-world-uv", "hello-world-uv", ""},
		{"a@b@1.0.0", "a@b", "1.0.0"},
	} {
		name, version := e.Unpin(tc.ref)
		if name != tc.name || version != tc.version {
			t.Errorf("Unpin(%q) = %q, %q; want %q, %q", tc.ref, name, version, tc.name, tc.version)
		}
		if tc.version != "" && e.Pin(name, version) != tc.ref {
			t.Errorf("Pin(%q, %q) = %q", name, version, e.Pin(name, version))
		}
	}
	for _, tc := range []struct {
		spec string
		ok   bool
	}{
		{"1.0.0", true}, {"0.1.3-rc.1", true}, {"1.2.3+build.5", true},
		{"", false}, {"latest", false}, {"^1.0.0", false}, {"1.0", false}, {"v1.0.0", false}, {">=1.0.0", false},
	} {
		if got, ok := e.Exact(tc.spec); ok != tc.ok || (ok && got != tc.spec) {
			t.Errorf("Exact(%q) = %q, %v; want ok %v", tc.spec, got, ok, tc.ok)
		}
	}
}

func TestPurl(t *testing.T) {
	var e mcpb.Ecosystem
	for _, tc := range []struct{ name, version, want string }{
		{"filesystem", "0.1.3", "pkg:generic/filesystem@0.1.3?type=mcpb"},
		{"my ext/x", "1.0.0+b", "pkg:generic/my%20ext%2Fx@1.0.0+b?type=mcpb"},
	} {
		if got := e.Purl(tc.name, tc.version); got != tc.want {
			t.Errorf("Purl(%q, %q) = %q, want %q", tc.name, tc.version, got, tc.want)
		}
	}
	if got := e.PurlName("", "filesystem"); got != "filesystem" {
		t.Errorf("PurlName = %q", got)
	}
	if got := e.Key("Filesystem", "1.0.0"); got != "Filesystem@1.0.0" {
		t.Errorf("Key = %q", got)
	}
}

func TestTreePurls(t *testing.T) {
	lock := `{
	  "name": "filesystem", "version": "0.1.3", "lockfileVersion": 3,
	  "packages": {
	    "": {"name": "filesystem", "version": "0.1.3"},
	    "node_modules/zod": {"version": "3.25.0"},
	    "node_modules/@modelcontextprotocol/sdk": {"version": "1.12.0"},
	    "node_modules/@modelcontextprotocol/sdk/node_modules/zod": {"version": "3.24.1"},
	    "node_modules/other/node_modules/zod": {"version": "3.25.0"},
	    "node_modules/local": {"resolved": "../local", "link": true},
	    "node_modules/aliased": {"name": "real-name", "version": "2.0.0"},
	    "node_modules/skipme": {"version": "1.0.0"},
	    "packages/ws": {"name": "ws", "version": "0.0.1"}
	  }
	}`
	got := mcpb.Ecosystem{}.TreePurls([]byte(lock), "pkg:npm/skipme@1.0.0")
	want := []string{
		"pkg:npm/%40modelcontextprotocol/sdk@1.12.0",
		"pkg:npm/real-name@2.0.0",
		"pkg:npm/zod@3.24.1",
		"pkg:npm/zod@3.25.0",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("TreePurls (-want +got):\n%s", diff)
	}
	for _, in := range []string{"", "{", `{"lockfileVersion": 1, "dependencies": {}}`} {
		if got := (mcpb.Ecosystem{}).TreePurls([]byte(in), ""); got != nil {
			t.Errorf("TreePurls(%q) = %v, want none", in, got)
		}
	}
}
