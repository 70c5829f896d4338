package oci

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const testDigest = "sha256:244fd47e07d1004f0aed9c156aa09083c82bf8944eceb67c946ff7430510a77b"

func TestEcosystem(t *testing.T) {
	e := Ecosystem{}
	tests := []struct {
		name, got, want string
	}{
		{"normalize_official", e.Normalize("debian"), "docker.io/library/debian"},
		{"normalize_user", e.Normalize("acme/x:1"), "docker.io/acme/x"},
		{"normalize_ghcr", e.Normalize("ghcr.io/acme/x@" + testDigest), "ghcr.io/acme/x"},
		{"normalize_invalid_kept", e.Normalize(" Foo "), "Foo"},
		{"pin_digest", e.Pin("docker.io/library/debian", testDigest), "docker.io/library/debian@" + testDigest},
		{"pin_tag", e.Pin("docker.io/library/debian", "12"), "docker.io/library/debian:12"},
		{"purl", e.Purl("debian", testDigest), "pkg:oci/debian@sha256%3A244fd47e07d1004f0aed9c156aa09083c82bf8944eceb67c946ff7430510a77b?repository_url=docker.io/library/debian"},
		{"purl_ghcr", e.Purl("ghcr.io/acme/tools/mcp-x", testDigest), "pkg:oci/mcp-x@sha256%3A244fd47e07d1004f0aed9c156aa09083c82bf8944eceb67c946ff7430510a77b?repository_url=ghcr.io/acme/tools/mcp-x"},
		{"purl_tag", e.Purl("mcp/fetch", "latest"), "pkg:oci/fetch?repository_url=docker.io/mcp/fetch&tag=latest"},
		{"key", e.Key("debian", strings.ToUpper(testDigest)), "docker.io/library/debian@" + testDigest},
		{"purlname", e.PurlName("", "debian"), "debian"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
}

func TestUnpinReadsPin(t *testing.T) {
	e := Ecosystem{}
	for _, tc := range []struct{ name, version string }{
		{"docker.io/library/debian", testDigest},
		{"localhost:5000/acme/x", "1.2"},
		{"localhost:5000/acme/x", testDigest},
		{"mcp/fetch", "latest"},
	} {
		n, v := e.Unpin(e.Pin(tc.name, tc.version))
		if n != tc.name || v != tc.version {
			t.Errorf("Unpin(Pin(%q, %q)) = %q, %q", tc.name, tc.version, n, v)
		}
	}
	if n, v := e.Unpin("localhost:5000/acme/x"); n != "localhost:5000/acme/x" || v != "" {
		t.Errorf("Unpin of a name with a port = %q, %q; want the name and no version", n, v)
	}
}

func TestExact(t *testing.T) {
	e := Ecosystem{}
	for _, tc := range []struct {
		spec, want string
		ok         bool
	}{
		{testDigest, testDigest, true},
		{"@" + testDigest, testDigest, true},
		{"latest", "", false},
		{"", "", false},
		{"sha256:abc", "", false},
		{"1.2.3", "", false},
	} {
		got, ok := e.Exact(tc.spec)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Exact(%q) = %q, %v; want %q, %v", tc.spec, got, ok, tc.want, tc.ok)
		}
	}
}

func TestTreePurls(t *testing.T) {
	c := &Contents{Packages: []Package{
		{Purl: "pkg:npm/b@1.0.0", Ecosystem: "npm", Name: "b", Version: "1.0.0", Location: "app/node_modules/b/package.json"},
		{Purl: "pkg:deb/debian/libc6@2.36-9%2Bdeb12u7?arch=amd64&distro=bookworm&source=glibc", Ecosystem: "Debian:12", Name: "libc6", Version: "2.36-9+deb12u7"},
		{Purl: "pkg:npm/b@1.0.0", Ecosystem: "npm", Name: "b", Version: "1.0.0", Location: "app/package-lock.json"},
		{Purl: "pkg:npm/skip@1.0.0", Ecosystem: "npm", Name: "skip", Version: "1.0.0"},
	}}
	got := Ecosystem{}.TreePurls(c.Lockfile(), "pkg:npm/skip@1.0.0")
	want := []string{"pkg:deb/debian/libc6@2.36-9%2Bdeb12u7?arch=amd64&distro=bookworm&source=glibc", "pkg:npm/b@1.0.0"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("TreePurls (-want +got):\n%s", diff)
	}
	if got := (Ecosystem{}).TreePurls([]byte(`{"packages":{}}`), ""); got != nil {
		t.Errorf("TreePurls of a package-lock.json = %v, want none", got)
	}
}

func TestLockfileRoundTrip(t *testing.T) {
	c := &Contents{
		Packages:  []Package{{Purl: "pkg:npm/z@1.0.0", Ecosystem: "npm", Name: "z", Version: "1.0.0"}, {Purl: "pkg:npm/a@1.0.0", Ecosystem: "npm", Name: "a", Version: "1.0.0"}},
		OSRelease: OSRelease{ID: "debian", VersionID: "12"}, HasSh: true, Files: 3, Skipped: []string{},
	}
	b := c.Lockfile()
	got, err := ReadLockfile(b)
	if err != nil {
		t.Fatal(err)
	}
	c.Sort()
	if diff := cmp.Diff(c, got); diff != "" {
		t.Errorf("ReadLockfile(Lockfile()) (-want +got):\n%s", diff)
	}
	if string(got.Lockfile()) != string(b) {
		t.Error("Lockfile is not stable across a round trip")
	}
	if _, err := ReadLockfile([]byte(`{"packages":[]}`)); err == nil {
		t.Error("ReadLockfile accepted JSON without the inventory schema")
	}
}

func TestParseRef(t *testing.T) {
	tests := []struct {
		raw  string
		want Ref
		err  string // the error's text; "" for none
	}{
		{raw: "oci:debian", want: Ref{Transport: TransportRegistry, Name: "docker.io/library/debian", Familiar: "debian:latest", Tag: "latest", DefaultTag: true}},
		{raw: "docker:mcp/fetch:1.0", want: Ref{Transport: TransportRegistry, Name: "docker.io/mcp/fetch", Familiar: "mcp/fetch:1.0", Tag: "1.0"}},
		{raw: "docker://ghcr.io/acme/x@" + testDigest, want: Ref{Transport: TransportRegistry, Name: "ghcr.io/acme/x", Familiar: "ghcr.io/acme/x@" + testDigest, Digest: testDigest}},
		{raw: "oci:localhost:5000/x:2@" + testDigest, want: Ref{Transport: TransportRegistry, Name: "localhost:5000/x", Familiar: "localhost:5000/x:2@" + testDigest, Tag: "2", Digest: testDigest}},
		{raw: "docker-daemon:mcp/fetch", want: Ref{Transport: TransportDaemon, Name: "docker.io/mcp/fetch", Familiar: "mcp/fetch:latest", Tag: "latest", DefaultTag: true}},
		{raw: "docker-daemon:mcp/fetch@" + testDigest, want: Ref{Transport: TransportDaemon, Name: "docker.io/mcp/fetch", Familiar: "mcp/fetch@" + testDigest, Digest: testDigest}},
		{raw: "oci-layout:/srv/images/fetch", want: Ref{Transport: TransportLayout, Path: "/srv/images/fetch"}},
		{raw: "oci-layout:./fetch/:v1", want: Ref{Transport: TransportLayout, Path: "fetch", Tag: "v1"}},
		{raw: "oci-layout:/srv/fetch@" + testDigest, want: Ref{Transport: TransportLayout, Path: "/srv/fetch", Digest: testDigest}},
		{raw: "oci:Foo", err: "oci:Foo: repository name must be lowercase"},
		{raw: "oci:x@sha256:abc", err: "oci:x@sha256:abc: bad digest sha256:abc: want sha256:<64 lower-case hex digits>"},
		{raw: "oci-layout:/srv/fetch@sha256:abc", err: "oci-layout:/srv/fetch@sha256:abc: bad digest sha256:abc: want sha256:<64 lower-case hex digits>"},
		{raw: "oci-layout:", err: "oci-layout:: empty directory: want oci-layout:DIR[:TAG|@DIGEST]"},
		{raw: "oci-layout::v1", err: "oci-layout::v1: empty directory: want oci-layout:DIR[:TAG|@DIGEST]"},
		{raw: "oci:acme/x:-bad", err: "oci:acme/x:-bad: invalid reference format"},
		{raw: "oci:", err: "oci:: no image named"},
		{raw: "docker-daemon:" + testDigest, err: "docker-daemon:" + testDigest + ": an image ID is not a reference: name the image (NAME@sha256:...)"},
		{raw: "debian", err: "debian: not an image target: want oci:, docker:, docker-daemon: or oci-layout: in front"},
		{raw: "podman:debian", err: "podman:debian: unknown transport podman: want oci:, docker:, docker-daemon: or oci-layout:"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			got, err := ParseRef(tt.raw)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err || !errors.Is(err, ErrBadRef) {
					t.Fatalf("ParseRef error = %v, want %q matching ErrBadRef", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.want.Raw = tt.raw
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseRef (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseConfig(t *testing.T) {
	data := []byte(`{
  "architecture": "amd64", "os": "linux",
  "config": {
    "User": "1000:1000",
    "ExposedPorts": {"8080/tcp": {}, "443/tcp": {}},
    "Env": ["PATH=/usr/local/bin:/usr/bin", "API_TOKEN=s3cr3t", "NODE_ENV=production"],
    "Entrypoint": ["node", "/app/dist/index.js"],
    "Cmd": ["--stdio"],
    "WorkingDir": "/app",
    "Labels": {"io.modelcontextprotocol.server.name": "io.github.acme/fetch"}
  },
  "rootfs": {"type": "layers", "diff_ids": []}
}`)
	got, err := ParseConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Entrypoint: []string{"node", "/app/dist/index.js"}, Cmd: []string{"--stdio"}, User: "1000:1000", WorkingDir: "/app",
		EnvNames:     []string{"API_TOKEN", "NODE_ENV", "PATH"},
		Env:          []string{"PATH=/usr/local/bin:/usr/bin", "API_TOKEN=s3cr3t", "NODE_ENV=production"},
		ExposedPorts: []string{"443/tcp", "8080/tcp"},
		Labels:       map[string]string{"io.modelcontextprotocol.server.name": "io.github.acme/fetch"},
		OS:           "linux", Architecture: "amd64",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseConfig (-want +got):\n%s", diff)
	}
	// The values of the environment are kept out of the JSON form, which
	// is what evidence would carry.
	b, err := jsonMarshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "s3cr3t") || !strings.Contains(string(b), "API_TOKEN") {
		t.Errorf("Config JSON = %s; want the names of the environment and no value", b)
	}
	if _, err := ParseConfig([]byte("not json")); err == nil {
		t.Error("ParseConfig accepted a config that is not JSON")
	}
}

func TestCheckOwnership(t *testing.T) {
	const server = "io.github.acme/fetch"
	tests := []struct {
		name   string
		labels map[string]string
		want   Ownership
	}{
		{"match", map[string]string{OwnershipLabel: server}, Ownership{Label: OwnershipLabel, Present: true, Match: true, Reason: `the image's io.modelcontextprotocol.server.name label is "io.github.acme/fetch"`}},
		{"other_server", map[string]string{OwnershipLabel: "io.github.evil/fetch"}, Ownership{Label: OwnershipLabel, Present: true, Reason: `the image's io.modelcontextprotocol.server.name label is "io.github.evil/fetch", not "io.github.acme/fetch"`}},
		{"case_differs", map[string]string{OwnershipLabel: "io.github.Acme/fetch"}, Ownership{Label: OwnershipLabel, Present: true, Reason: `the image's io.modelcontextprotocol.server.name label is "io.github.Acme/fetch", not "io.github.acme/fetch"`}},
		{"space_differs", map[string]string{OwnershipLabel: server + " "}, Ownership{Label: OwnershipLabel, Present: true, Reason: `the image's io.modelcontextprotocol.server.name label is "io.github.acme/fetch ", not "io.github.acme/fetch"`}},
		{"missing", map[string]string{"org.opencontainers.image.source": "https://github.com/acme/fetch"}, Ownership{Label: OwnershipLabel, Reason: `the image has no io.modelcontextprotocol.server.name label; the MCP registry refuses to publish it as "io.github.acme/fetch"`}},
		{"no_labels", nil, Ownership{Label: OwnershipLabel, Reason: `the image has no io.modelcontextprotocol.server.name label; the MCP registry refuses to publish it as "io.github.acme/fetch"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, CheckOwnership(tt.labels, server)); diff != "" {
				t.Errorf("CheckOwnership (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRunsAsRoot(t *testing.T) {
	for user, want := range map[string]bool{
		"": true, "root": true, "0": true, "0:0": true, "root:root": true, "00": true, "0:1000": true, " root ": true,
		"1000": false, "1000:0": false, "nonroot": false, "nonroot:nonroot": false, "node": false, "10": false, "65532:65532": false,
	} {
		if got := RunsAsRoot(user); got != want {
			t.Errorf("RunsAsRoot(%q) = %v, want %v", user, got, want)
		}
	}
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
