package pipeline

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/ecosystem/npm"
)

// targetDiff returns "" when want and got are deeply equal, else both values as
// (-want +got).
func targetDiff[T any](want, got T) string {
	if reflect.DeepEqual(want, got) {
		return ""
	}
	return fmt.Sprintf("\n-%+v\n+%+v", want, got)
}

func TestParseTarget(t *testing.T) {
	dir := t.TempDir()
	tgz := filepath.Join(dir, "acme-weather-1.2.3.tgz")
	tarGz := filepath.Join(dir, "acme-weather-1.2.3.tar.gz")
	for _, p := range []string{tgz, tarGz} {
		if err := os.WriteFile(p, []byte("not read by ParseTarget"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const se = "@modelcontextprotocol/server-everything"

	tests := []struct {
		name    string
		in      string
		want    Target
		wantErr error
		errHas  string
	}{
		// npm: targets.
		{name: "npm exact version", in: "npm:left-pad@1.3.0",
			want: Target{Raw: "npm:left-pad@1.3.0", Ecosystem: "npm", Name: "left-pad", Spec: "1.3.0"}},
		{name: "npm scoped exact version", in: "npm:" + se + "@2026.8.31",
			want: Target{Raw: "npm:" + se + "@2026.8.31", Ecosystem: "npm", Name: se, Spec: "2026.8.31"}},
		{name: "npm caret range", in: "npm:" + se + "@^2025.4.0",
			want: Target{Raw: "npm:" + se + "@^2025.4.0", Ecosystem: "npm", Name: se, Spec: "^2025.4.0"}},
		{name: "npm range with spaces", in: "npm:express@>=4.0.0 <5",
			want: Target{Raw: "npm:express@>=4.0.0 <5", Ecosystem: "npm", Name: "express", Spec: ">=4.0.0 <5"}},
		{name: "npm dist-tag", in: "npm:@acme/weather@next",
			want: Target{Raw: "npm:@acme/weather@next", Ecosystem: "npm", Name: "@acme/weather", Spec: "next"}},
		{name: "npm name alone is latest", in: "npm:left-pad",
			want: Target{Raw: "npm:left-pad", Ecosystem: "npm", Name: "left-pad", Spec: "latest"}},
		{name: "npm scoped name alone is latest", in: "npm:" + se,
			want: Target{Raw: "npm:" + se, Ecosystem: "npm", Name: se, Spec: "latest"}},
		{name: "bare name@version is npm", in: "left-pad@1.3.0",
			want: Target{Raw: "left-pad@1.3.0", Ecosystem: "npm", Name: "left-pad", Spec: "1.3.0"}},
		{name: "bare name is npm latest", in: "left-pad",
			want: Target{Raw: "left-pad", Ecosystem: "npm", Name: "left-pad", Spec: "latest"}},
		{name: "bare scoped name is npm latest", in: se,
			want: Target{Raw: se, Ecosystem: "npm", Name: se, Spec: "latest"}},
		{name: "surrounding spaces are trimmed, Raw is kept", in: "  npm:left-pad@1.3.0 \n",
			want: Target{Raw: "  npm:left-pad@1.3.0 \n", Ecosystem: "npm", Name: "left-pad", Spec: "1.3.0"}},

		// purls.
		{name: "purl with %40scope", in: "pkg:npm/%40modelcontextprotocol/server-everything@2026.8.31",
			want: Target{Raw: "pkg:npm/%40modelcontextprotocol/server-everything@2026.8.31", Ecosystem: "npm", Name: se, Spec: "2026.8.31"}},
		{name: "purl with @scope", in: "pkg:npm/@modelcontextprotocol/server-everything@2026.8.31",
			want: Target{Raw: "pkg:npm/@modelcontextprotocol/server-everything@2026.8.31", Ecosystem: "npm", Name: se, Spec: "2026.8.31"}},
		{name: "purl unscoped", in: "pkg:npm/left-pad@1.3.0",
			want: Target{Raw: "pkg:npm/left-pad@1.3.0", Ecosystem: "npm", Name: "left-pad", Spec: "1.3.0"}},
		{name: "purl scope without its @", in: "pkg:npm/acme/weather@1.2.3",
			want: Target{Raw: "pkg:npm/acme/weather@1.2.3", Ecosystem: "npm", Name: "@acme/weather", Spec: "1.2.3"}},
		{name: "purl scoped without version is latest", in: "pkg:npm/%40acme/weather",
			want: Target{Raw: "pkg:npm/%40acme/weather", Ecosystem: "npm", Name: "@acme/weather", Spec: "latest"}},
		{name: "purl with an encoded range", in: "pkg:npm/left-pad@%5E1.3.0",
			want: Target{Raw: "pkg:npm/left-pad@%5E1.3.0", Ecosystem: "npm", Name: "left-pad", Spec: "^1.3.0"}},
		// repository_url naming the public registry says what a purl without
		// it says (the purl spec's default for npm), so it is honoured.
		{name: "purl repository_url of the public registry", in: "pkg:npm/left-pad@1.3.0?repository_url=https://registry.npmjs.org/",
			want: Target{Raw: "pkg:npm/left-pad@1.3.0?repository_url=https://registry.npmjs.org/", Ecosystem: "npm", Name: "left-pad", Spec: "1.3.0"}},
		{name: "purl repository_url of the public registry without scheme or slash", in: "pkg:npm/left-pad@1.3.0?repository_url=Registry.npmjs.org",
			want: Target{Raw: "pkg:npm/left-pad@1.3.0?repository_url=Registry.npmjs.org", Ecosystem: "npm", Name: "left-pad", Spec: "1.3.0"}},
		{name: "purl empty qualifier", in: "pkg:npm/left-pad@1.3.0?",
			want: Target{Raw: "pkg:npm/left-pad@1.3.0?", Ecosystem: "npm", Name: "left-pad", Spec: "1.3.0"}},
		// A qualifier or subpath the scanner cannot honour is refused: scanning
		// the default registry's package instead would scan another artefact.
		{name: "purl repository_url of another registry", in: "pkg:npm/%40acme/weather@1.2.3?repository_url=https://npm.example.com/",
			wantErr: ErrUnsupported, errHas: "qualifier repository_url=https://npm.example.com/ names another registry"},
		{name: "purl repository_url over http", in: "pkg:npm/left-pad@1.3.0?repository_url=http://registry.npmjs.org",
			wantErr: ErrUnsupported, errHas: "names another registry"},
		{name: "purl repository_url with a path", in: "pkg:npm/left-pad@1.3.0?repository_url=https://registry.npmjs.org/mirror",
			wantErr: ErrUnsupported, errHas: "names another registry"},
		{name: "purl checksum", in: "pkg:npm/left-pad@1.3.0?checksum=sha512:abc",
			wantErr: ErrUnsupported, errHas: "qualifier checksum=sha512:abc is not verified"},
		// Ends in .tgz, so it is also a purl that is not taken for a local file.
		{name: "purl download_url", in: "pkg:npm/left-pad@1.3.0?download_url=https://example.com/left-pad.tgz",
			wantErr: ErrUnsupported, errHas: "qualifier download_url=https://example.com/left-pad.tgz names a tarball"},
		{name: "purl unknown qualifier", in: "pkg:npm/left-pad@1.3.0?flavour=sweet",
			wantErr: ErrUnsupported, errHas: "qualifier flavour=sweet"},
		{name: "purl subpath", in: "pkg:npm/%40acme/weather@1.2.3#dist/index.js",
			wantErr: ErrUnsupported, errHas: "subpath dist/index.js names a file"},
		{name: "purl qualifiers and subpath", in: "pkg:npm/%40acme/weather@1.2.3?repository_url=https://npm.example.com/&checksum=sha512:abc#dist/index.js",
			wantErr: ErrUnsupported, errHas: "qualifier checksum=sha512:abc is not verified"},
		{name: "purl with an invalid qualifier key", in: "pkg:npm/left-pad@1.3.0?1key=x", wantErr: ErrBadTarget},
		{name: "purl with a namespace too deep", in: "pkg:npm/a/b/c@1.0.0", wantErr: ErrBadTarget},
		{name: "purl without version is latest", in: "pkg:npm/left-pad",
			want: Target{Raw: "pkg:npm/left-pad", Ecosystem: "npm", Name: "left-pad", Spec: "latest"}},
		{name: "purl with encoded build metadata", in: "pkg:npm/left-pad@1.3.0%2Bbuild.5",
			want: Target{Raw: "pkg:npm/left-pad@1.3.0%2Bbuild.5", Ecosystem: "npm", Name: "left-pad", Spec: "1.3.0+build.5"}},
		{name: "purl type is case-insensitive", in: "pkg:NPM/left-pad@1.3.0",
			want: Target{Raw: "pkg:NPM/left-pad@1.3.0", Ecosystem: "npm", Name: "left-pad", Spec: "1.3.0"}},
		{name: "purl of another type", in: "pkg:gem/rails@7.1.0", wantErr: ErrUnsupported, errHas: "npm and pypi only"},
		{name: "purl without a name", in: "pkg:npm", wantErr: ErrBadTarget},
		{name: "purl with an upper-case name", in: "pkg:npm/Left-Pad@1.3.0", wantErr: ErrBadTarget},
		{name: "purl with a bad escape", in: "pkg:npm/%zz@1.0.0", wantErr: ErrBadTarget},

		{name: "empty version after @", in: "npm:left-pad@", wantErr: ErrBadTarget, errHas: "empty version after @"},
		{name: "empty version after a scoped name's @", in: "@acme/weather@", wantErr: ErrBadTarget, errHas: "empty version after @"},
		{name: "registry name with an empty version", in: "io.github.acme/weather@", wantErr: ErrBadTarget, errHas: "empty version after @"},
		{name: "purl with an empty version", in: "pkg:npm/left-pad@", wantErr: ErrBadTarget, errHas: "empty version"},
		{name: "purl with an @scope and no version", in: "pkg:npm/@acme/weather",
			want: Target{Raw: "pkg:npm/@acme/weather", Ecosystem: "npm", Name: "@acme/weather", Spec: "latest"}},

		// Local tarballs.
		{name: "local .tgz that exists", in: tgz,
			want: Target{Raw: tgz, Ecosystem: "npm", File: tgz}},
		{name: "local .tar.gz that exists", in: tarGz,
			want: Target{Raw: tarGz, Ecosystem: "npm", File: tarGz}},
		{name: "local .tgz that is missing", in: filepath.Join(dir, "missing.tgz"), wantErr: ErrBadTarget, errHas: "missing.tgz"},

		// Other ecosystems and tracks.
		{name: "pypi (see TestParseTargetPyPI)", in: "pypi:mcp-server-fetch==2025.4.7",
			want: Target{Raw: "pypi:mcp-server-fetch==2025.4.7", Ecosystem: "pypi", Name: "mcp-server-fetch", Spec: "==2025.4.7"}},
		{name: "https endpoint", in: "https://mcp.example.com/mcp", wantErr: ErrUnsupported, errHas: "remote"},
		{name: "http endpoint", in: "http://localhost:3000/sse", wantErr: ErrUnsupported, errHas: "remote"},
		{name: "a client config file", in: "/home/alice/.cursor/mcp.json", wantErr: ErrBadTarget, errHas: "verifymcp config scan /home/alice/.cursor/mcp.json"},
		{name: "unknown scheme", in: "github:modelcontextprotocol/servers", wantErr: ErrBadTarget, errHas: "unknown scheme"},
		{name: "git url", in: "git+https://github.com/modelcontextprotocol/servers.git", wantErr: ErrBadTarget},

		// Malformed names.
		{name: "empty", in: "", wantErr: ErrBadTarget},
		{name: "only spaces", in: "   ", wantErr: ErrBadTarget},
		{name: "npm: with nothing after", in: "npm:", wantErr: ErrBadTarget},
		{name: "upper case", in: "npm:Left-Pad@1.3.0", wantErr: ErrBadTarget},
		{name: "upper-case scope", in: "npm:@ACME/weather@1.0.0", wantErr: ErrBadTarget},
		{name: "space in the name", in: "npm:left pad@1.3.0", wantErr: ErrBadTarget},
		{name: "leading dot", in: "npm:.hidden@1.0.0", wantErr: ErrBadTarget},
		{name: "scope without a name", in: "npm:@acme/@1.0.0", wantErr: ErrBadTarget},
		{name: "scope only", in: "npm:@acme@1.0.0", wantErr: ErrBadTarget},
		{name: "path traversal", in: "npm:../../etc/passwd", wantErr: ErrBadTarget},
		{name: "name over 214 characters", in: "npm:" + strings.Repeat("a", 215), wantErr: ErrBadTarget},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTarget(tt.in)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("ParseTarget(%q) = %+v, %v; want error %v", tt.in, got, err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.errHas) {
					t.Errorf("error %q does not mention %q", err, tt.errHas)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseTarget(%q): %v", tt.in, err)
			}
			if d := targetDiff(tt.want, got); d != "" {
				t.Errorf("ParseTarget(%q) (-want +got):%s", tt.in, d)
			}
		})
	}
}

func TestPurlRoundTrip(t *testing.T) {
	tests := []struct {
		name, version, want string
	}{
		{"left-pad", "1.3.0", "pkg:npm/left-pad@1.3.0"},
		{"@modelcontextprotocol/server-everything", "2026.8.31", "pkg:npm/%40modelcontextprotocol/server-everything@2026.8.31"},
		{"@acme/weather", "1.0.0-beta.1+build.5", "pkg:npm/%40acme/weather@1.0.0-beta.1+build.5"},
		{"zod-to-json-schema", "0.0.0-next.20250101", "pkg:npm/zod-to-json-schema@0.0.0-next.20250101"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			p := npm.Ecosystem{}.Purl(tt.name, tt.version)
			if p != tt.want {
				t.Errorf("Purl(%q, %q) = %q, want %q", tt.name, tt.version, p, tt.want)
			}
			got, err := ParseTarget(p)
			if err != nil {
				t.Fatalf("ParseTarget(%q): %v", p, err)
			}
			want := Target{Raw: p, Ecosystem: "npm", Name: tt.name, Spec: tt.version}
			if d := targetDiff(want, got); d != "" {
				t.Errorf("ParseTarget(Purl(%q, %q)) (-want +got):%s", tt.name, tt.version, d)
			}
		})
	}
}

type tgzEntry struct {
	name string
	body string
	dir  bool
}

// targetTgz writes a gzipped tar with the entries, in order, and returns its
// path and bytes.
func targetTgz(t *testing.T, entries ...tgzEntry) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.body)), Typeflag: tar.TypeReg}
		if e.dir {
			h = &tar.Header{Name: e.name, Mode: 0o755, Typeflag: tar.TypeDir}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "target.tgz")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p, buf.Bytes()
}

func targetSRI(data []byte) string {
	sum := sha512.Sum512(data)
	return "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
}

func TestTarballInfo(t *testing.T) {
	const pj = `{"name":"@acme/weather","version":"1.2.3","bin":{"weather":"dist/index.js"}}`
	tests := []struct {
		name    string
		entries []tgzEntry
	}{
		{"npm pack layout", []tgzEntry{
			{name: "package/", dir: true},
			{name: "package/node_modules/dep/package.json", body: `{"name":"dep","version":"9.9.9"}`},
			{name: "package/dist/index.js", body: "#!/usr/bin/env node\n"},
			{name: "package/package.json", body: pj},
		}},
		{"another top directory name", []tgzEntry{
			{name: "weather-1.2.3/package.json", body: pj},
		}},
		{"leading ./", []tgzEntry{
			{name: "./package/package.json", body: pj},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, data := targetTgz(t, tt.entries...)
			name, version, integrity, gotData, err := tarballInfo(p)
			if err != nil {
				t.Fatalf("tarballInfo: %v", err)
			}
			if name != "@acme/weather" || version != "1.2.3" {
				t.Errorf("name, version = %q, %q; want @acme/weather, 1.2.3", name, version)
			}
			if want := targetSRI(data); integrity != want {
				t.Errorf("integrity = %q, want %q", integrity, want)
			}
			if !bytes.Equal(gotData, data) {
				t.Errorf("data = %d bytes, want the file's %d bytes", len(gotData), len(data))
			}
		})
	}
}

func TestTarballInfoErrors(t *testing.T) {
	dir := t.TempDir()
	notGzip := filepath.Join(dir, "not-gzip.tgz")
	if err := os.WriteFile(notGzip, []byte("PK\x03\x04 this is a zip, not a tarball"), 0o644); err != nil {
		t.Fatal(err)
	}
	noPJ, _ := targetTgz(t, tgzEntry{name: "package/index.js", body: "module.exports = 1\n"})
	nestedOnly, _ := targetTgz(t, tgzEntry{name: "package/lib/package.json", body: `{"name":"x","version":"1.0.0"}`})
	rootPJ, _ := targetTgz(t, tgzEntry{name: "package.json", body: `{"name":"x","version":"1.0.0"}`})
	badJSON, _ := targetTgz(t, tgzEntry{name: "package/package.json", body: `{"name":`})
	badName, _ := targetTgz(t, tgzEntry{name: "package/package.json", body: `{"name":"Bad Name","version":"1.0.0"}`})
	noVersion, _ := targetTgz(t, tgzEntry{name: "package/package.json", body: `{"name":"ok"}`})

	tests := []struct {
		name, path, errHas string
	}{
		{"missing file", filepath.Join(dir, "missing.tgz"), "missing.tgz"},
		{"not gzip", notGzip, "not a gzip tarball"},
		{"no package.json", noPJ, "no package.json"},
		{"package.json only deeper down", nestedOnly, "no package.json"},
		{"package.json outside a top directory", rootPJ, "no package.json"},
		{"package.json is not JSON", badJSON, "package.json"},
		{"invalid name", badName, "valid name"},
		{"no version", noVersion, "valid name and version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name, version, _, _, err := tarballInfo(tt.path)
			if !errors.Is(err, ErrBadTarget) {
				t.Fatalf("tarballInfo = %q, %q, %v; want ErrBadTarget", name, version, err)
			}
			if !strings.Contains(err.Error(), tt.errHas) {
				t.Errorf("error %q does not mention %q", err, tt.errHas)
			}
		})
	}
}
