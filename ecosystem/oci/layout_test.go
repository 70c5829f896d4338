package oci

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	v1 "github.com/opencontainers/image-spec/specs-go/v1"
)

// testLayout is an OCI image layout written by a test, as `skopeo copy
// docker://... oci:DIR:TAG` or BuildKit's oci exporter write one.
type testLayout struct {
	t   *testing.T
	dir string
}

func newTestLayout(t *testing.T) *testLayout {
	t.Helper()
	l := &testLayout{t: t, dir: t.TempDir()}
	l.file(v1.ImageLayoutFile, []byte(`{"imageLayoutVersion":"1.0.0"}`))
	return l
}

func (l *testLayout) file(name string, b []byte) {
	l.t.Helper()
	p := filepath.Join(l.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		l.t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		l.t.Fatal(err)
	}
}

// blob stores b and returns its descriptor.
func (l *testLayout) blob(mediaType string, b []byte) v1.Descriptor {
	d := digest.FromBytes(b)
	l.file(filepath.Join("blobs", "sha256", d.Encoded()), b)
	return v1.Descriptor{MediaType: mediaType, Digest: d, Size: int64(len(b))}
}

func (l *testLayout) jsonBlob(mediaType string, v any) v1.Descriptor {
	b, err := json.Marshal(v)
	if err != nil {
		l.t.Fatal(err)
	}
	return l.blob(mediaType, b)
}

func (l *testLayout) index(descs ...v1.Descriptor) {
	b, err := json.Marshal(v1.Index{Versioned: specsVersioned(), MediaType: v1.MediaTypeImageIndex, Manifests: descs})
	if err != nil {
		l.t.Fatal(err)
	}
	l.file("index.json", b)
}

// testImage is what the test wrote for one image.
type testImage struct {
	manifest, config v1.Descriptor
	layers           []v1.Descriptor
	layerBytes       [][]byte
}

// image writes one image of arch: a gzip layer and an uncompressed one,
// its configuration (with the diff_ids the engine checks) and manifest.
func (l *testLayout) image(arch, label string) testImage {
	l.t.Helper()
	var img testImage
	var diffIDs []digest.Digest
	for i, files := range []map[string]string{
		{"etc/os-release": "ID=debian\nVERSION_ID=\"12\"\n", "bin/sh": "#!fake"},
		{"app/server.js": "console.log('" + label + "')\n"},
	} {
		raw := tarOf(l.t, files)
		diffIDs = append(diffIDs, digest.FromBytes(raw))
		b, mt := raw, v1.MediaTypeImageLayer
		if i == 0 {
			b, mt = gzipOf(l.t, raw), v1.MediaTypeImageLayerGzip
		}
		img.layers = append(img.layers, l.blob(mt, b))
		img.layerBytes = append(img.layerBytes, b)
	}
	img.config = l.jsonBlob(v1.MediaTypeImageConfig, map[string]any{
		"architecture": arch, "os": "linux",
		"config": map[string]any{
			"Entrypoint": []string{"node", "/app/server.js"}, "User": "node", "Env": []string{"PATH=/usr/bin", "TOKEN=x"},
			"Labels": map[string]string{OwnershipLabel: label},
		},
		"rootfs": map[string]any{"type": "layers", "diff_ids": diffIDs},
	})
	img.manifest = l.jsonBlob(v1.MediaTypeImageManifest, v1.Manifest{
		Versioned: specsVersioned(), MediaType: v1.MediaTypeImageManifest, Config: img.config, Layers: img.layers,
	})
	img.manifest.Platform = &v1.Platform{OS: "linux", Architecture: arch}
	return img
}

func tarOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, name := range sortedKeys(files) {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(files[name])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(files[name])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gzipOf(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readArchive reads a docker-save archive into its files.
func readArchive(t *testing.T, b []byte) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[hdr.Name] = data
	}
}

func TestLayoutArchive(t *testing.T) {
	l := newTestLayout(t)
	own := l.image(runtime.GOARCH, "io.github.acme/fetch")
	other := l.image("s390x", "io.github.acme/other")
	if runtime.GOARCH == "s390x" {
		other = l.image("riscv64", "io.github.acme/other")
	}
	// An attestation manifest as BuildKit adds to an index.
	att := l.jsonBlob(v1.MediaTypeImageManifest, v1.Manifest{Versioned: specsVersioned(), MediaType: v1.MediaTypeImageManifest, Config: other.config, Layers: other.layers})
	att.Platform = &v1.Platform{OS: "unknown", Architecture: "unknown"}
	idx := l.jsonBlob(v1.MediaTypeImageIndex, v1.Index{Versioned: specsVersioned(), MediaType: v1.MediaTypeImageIndex, Manifests: []v1.Descriptor{att, other.manifest, own.manifest}})
	idx.Annotations = map[string]string{v1.AnnotationRefName: "docker.io/acme/fetch:1.0"}
	l.index(idx)

	for _, selector := range []string{"", "1.0", "docker.io/acme/fetch:1.0", idx.Digest.String(), own.manifest.Digest.String()} {
		t.Run("selector_"+selector, func(t *testing.T) {
			var buf bytes.Buffer
			img, err := LayoutArchive(l.dir, selector, &buf)
			if err != nil {
				t.Fatal(err)
			}
			want := Image{
				ManifestDigest: own.manifest.Digest.String(), ConfigDigest: own.config.Digest.String(),
				Layers: []string{own.layers[0].Digest.String(), own.layers[1].Digest.String()},
				Config: Config{
					Entrypoint: []string{"node", "/app/server.js"}, User: "node", EnvNames: []string{"PATH", "TOKEN"},
					Env: []string{"PATH=/usr/bin", "TOKEN=x"}, Labels: map[string]string{OwnershipLabel: "io.github.acme/fetch"},
					OS: "linux", Architecture: runtime.GOARCH,
				},
			}
			if diff := cmp.Diff(want, img); diff != "" {
				t.Errorf("Image (-want +got):\n%s", diff)
			}
			files := readArchive(t, buf.Bytes())
			var manifest []dockerSaveManifest
			if err := json.Unmarshal(files["manifest.json"], &manifest); err != nil {
				t.Fatalf("manifest.json: %v", err)
			}
			wantManifest := []dockerSaveManifest{{
				Config:   own.config.Digest.Encoded() + ".json",
				RepoTags: []string{"acme/fetch:1.0"},
				Layers:   []string{"blobs/sha256/" + own.layers[0].Digest.Encoded(), "blobs/sha256/" + own.layers[1].Digest.Encoded()},
			}}
			if selector == own.manifest.Digest.String() {
				// The platform's manifest, named by digest, carries no name.
				wantManifest[0].RepoTags = []string{}
			}
			if diff := cmp.Diff(wantManifest, manifest); diff != "" {
				t.Errorf("manifest.json (-want +got):\n%s", diff)
			}
			if got := digest.FromBytes(files[manifest[0].Config]); got != own.config.Digest {
				t.Errorf("config in the archive is %s, want %s", got, own.config.Digest)
			}
			for i, p := range manifest[0].Layers {
				if !bytes.Equal(files[p], own.layerBytes[i]) {
					t.Errorf("layer %s in the archive is not the blob as stored", p)
				}
			}
		})
	}
}

func TestLayoutArchiveRefuses(t *testing.T) {
	tests := []struct {
		name     string
		selector string
		build    func(l *testLayout)
		want     string // in the error
	}{
		{"no_oci_layout_file", "", func(l *testLayout) {
			img := l.image(runtime.GOARCH, "x")
			l.index(img.manifest)
			if err := os.Remove(filepath.Join(l.dir, v1.ImageLayoutFile)); err != nil {
				l.t.Fatal(err)
			}
		}, "oci-layout: no such file"},
		{"layout_version", "", func(l *testLayout) {
			l.file(v1.ImageLayoutFile, []byte(`{"imageLayoutVersion":"2.0.0"}`))
			l.index(l.image(runtime.GOARCH, "x").manifest)
		}, `imageLayoutVersion "2.0.0"`},
		{"no_index", "", func(l *testLayout) {}, "index.json: no such file"},
		{"empty_index", "", func(l *testLayout) { l.index() }, "index.json lists no image"},
		{"two_images_no_selector", "", func(l *testLayout) {
			a, b := l.image(runtime.GOARCH, "a"), l.image(runtime.GOARCH, "b")
			a.manifest.Annotations = map[string]string{v1.AnnotationRefName: "a"}
			b.manifest.Annotations = map[string]string{v1.AnnotationRefName: "b"}
			l.index(a.manifest, b.manifest)
		}, "index.json lists 2 images (a, b): name one by tag or digest"},
		{"unknown_tag", "v9", func(l *testLayout) {
			a := l.image(runtime.GOARCH, "a")
			a.manifest.Annotations = map[string]string{v1.AnnotationRefName: "v1"}
			l.index(a.manifest)
		}, `no image tagged "v9" (tags: v1)`},
		{"unknown_digest", testDigest, func(l *testLayout) { l.index(l.image(runtime.GOARCH, "a").manifest) }, "no manifest or index with digest " + testDigest},
		{"layer_tampered", "", func(l *testLayout) {
			img := l.image(runtime.GOARCH, "a")
			b := bytes.Clone(img.layerBytes[1])
			b[len(b)-1] ^= 1 // same size, other content
			l.file(filepath.Join("blobs", "sha256", img.layers[1].Digest.Encoded()), b)
			l.index(img.manifest)
		}, "does not match its digest"},
		{"config_tampered", "", func(l *testLayout) {
			img := l.image(runtime.GOARCH, "a")
			b, _ := os.ReadFile(filepath.Join(l.dir, "blobs", "sha256", img.config.Digest.Encoded()))
			l.file(filepath.Join("blobs", "sha256", img.config.Digest.Encoded()), bytes.Replace(b, []byte(`"node"`), []byte(`"root"`), 1))
			l.index(img.manifest)
		}, "does not match its digest"},
		{"layer_missing", "", func(l *testLayout) {
			img := l.image(runtime.GOARCH, "a")
			if err := os.Remove(filepath.Join(l.dir, "blobs", "sha256", img.layers[0].Digest.Encoded())); err != nil {
				l.t.Fatal(err)
			}
			l.index(img.manifest)
		}, "no such file"},
		{"layer_size", "", func(l *testLayout) {
			img := l.image(runtime.GOARCH, "a")
			img.layers[0].Size++
			img.manifest = l.jsonBlob(v1.MediaTypeImageManifest, v1.Manifest{Versioned: specsVersioned(), MediaType: v1.MediaTypeImageManifest, Config: img.config, Layers: img.layers})
			l.index(img.manifest)
		}, "its descriptor says"},
		{"digest_escapes", "", func(l *testLayout) {
			l.index(v1.Descriptor{MediaType: v1.MediaTypeImageManifest, Digest: "sha256:../../etc/passwd", Size: 10})
		}, "descriptor digest"},
		{"no_platform", "", func(l *testLayout) {
			img := l.image("s390x", "a")
			if runtime.GOARCH == "s390x" {
				img = l.image("riscv64", "a")
			}
			l.index(l.jsonBlob(v1.MediaTypeImageIndex, v1.Index{Versioned: specsVersioned(), MediaType: v1.MediaTypeImageIndex, Manifests: []v1.Descriptor{img.manifest}}))
		}, "has no linux/" + runtime.GOARCH + " image"},
		{"zstd_layer", "", func(l *testLayout) {
			img := l.image(runtime.GOARCH, "a")
			img.layers[1].MediaType = v1.MediaTypeImageLayerZstd
			img.manifest = l.jsonBlob(v1.MediaTypeImageManifest, v1.Manifest{Versioned: specsVersioned(), MediaType: v1.MediaTypeImageManifest, Config: img.config, Layers: img.layers})
			l.index(img.manifest)
		}, "which the Docker 20.10 engine cannot load"},
		{"foreign_layer", "", func(l *testLayout) {
			img := l.image(runtime.GOARCH, "a")
			img.layers[0].MediaType = "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip"
			img.manifest = l.jsonBlob(v1.MediaTypeImageManifest, v1.Manifest{Versioned: specsVersioned(), MediaType: v1.MediaTypeImageManifest, Config: img.config, Layers: img.layers})
			l.index(img.manifest)
		}, "is not a layer the Docker engine can load"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newTestLayout(t)
			tt.build(l)
			var buf bytes.Buffer
			_, err := LayoutArchive(l.dir, tt.selector, &buf)
			if !errors.Is(err, ErrBadLayout) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("LayoutArchive error = %v, want ErrBadLayout saying %q", err, tt.want)
			}
			if _, ok := readArchiveLax(buf.Bytes())["manifest.json"]; ok {
				t.Error("a refused layout's archive has a manifest.json, so the engine would load it")
			}
		})
	}
}

// readArchiveLax lists the files of a possibly unfinished archive.
func readArchiveLax(b []byte) map[string]bool {
	out := map[string]bool{}
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		hdr, err := tr.Next()
		if err != nil {
			return out
		}
		out[hdr.Name] = true
	}
}

func specsVersioned() specs.Versioned { return specs.Versioned{SchemaVersion: 2} }

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
