package oci

import (
	"archive/tar"
	"bytes"
	_ "crypto/sha256" // registers sha256 for go-digest
	_ "crypto/sha512" // registers sha384 and sha512 for go-digest
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/opencontainers/go-digest"
	v1 "github.com/opencontainers/image-spec/specs-go/v1"
)

// ErrBadLayout is an OCI image layout LayoutArchive refuses: malformed,
// incomplete, or holding a blob whose content does not match its digest.
var ErrBadLayout = errors.New("bad OCI image layout")

// Image is the image LayoutArchive wrote.
type Image struct {
	// ManifestDigest is the digest of the image manifest (of the
	// platform's manifest when the layout holds an index of platforms).
	ManifestDigest string
	// ConfigDigest is the digest of the image configuration: the image ID
	// the Docker engine gives the loaded image.
	ConfigDigest string
	// Layers are the layers' digests, bottom first, as the manifest lists
	// them (compressed blobs' digests).
	Layers []string
	Config Config
}

// Media types Docker's registry client writes, which image layouts
// written by docker and skopeo may carry next to the OCI ones.
const (
	dockerManifestList = "application/vnd.docker.distribution.manifest.list.v2+json"
	dockerManifest     = "application/vnd.docker.distribution.manifest.v2+json"
	dockerLayerGzip    = "application/vnd.docker.image.rootfs.diff.tar.gzip"
	dockerConfig       = "application/vnd.docker.container.image.v1+json"
)

// maxMetaBlob bounds the JSON blobs read into memory (indexes, manifests,
// configurations); real ones are a few kilobytes.
const maxMetaBlob = 8 << 20

// maxIndexDepth bounds nested indexes.
const maxIndexDepth = 4

// LayoutArchive reads the OCI image layout in dir (its oci-layout file,
// index.json and blobs) and writes to w the image selector names as the
// archive `docker save` writes and the Docker engine's image load (API
// 1.41, Docker 20.10) reads: manifest.json (Config, RepoTags, Layers), the
// configuration blob as <hex>.json, and each layer blob as
// blobs/<algorithm>/<hex>, written as it is stored (gzip-compressed or
// not; a zstd layer is refused, see checkLayerType): the engine's load
// decompresses a layer file
// (moby's archive.DecompressStream) and checks its uncompressed digest
// against the configuration's diff_ids.
//
// selector is a tag (the value of an index entry's
// org.opencontainers.image.ref.name annotation, or the tag of a full
// reference written there), a digest (of a manifest or an index, at any
// depth), or "" when index.json lists one entry. An index of platforms is
// resolved to linux and the architecture this program was built for
// (runtime.GOARCH), which is the engine's when both run on one machine;
// attestation entries (platform unknown/unknown) are never chosen.
//
// Every blob is checked against its descriptor's size and digest as it is
// read. A layer is checked while it is copied to w, so a mismatch is
// found after part of the archive is written; manifest.json is written
// last, only when every blob matched, and the engine's load refuses an
// archive without it. The error is then ErrBadLayout and the caller must
// discard what w received.
//
// RepoTags holds the entry's org.opencontainers.image.ref.name annotation
// when it is a full reference with a tag (docker.io/acme/x:1); otherwise
// it is empty and the loaded image is known by its ID (ConfigDigest).
func LayoutArchive(dir, selector string, w io.Writer) (Image, error) {
	l := layout{dir: dir}
	if err := l.checkVersion(); err != nil {
		return Image{}, err
	}
	var index v1.Index
	if err := l.readJSONFile("index.json", &index); err != nil {
		return Image{}, err
	}
	desc, err := l.selectEntry(index, selector)
	if err != nil {
		return Image{}, err
	}
	tags := repoTags(desc)
	mdesc, err := l.resolve(desc, 0)
	if err != nil {
		return Image{}, err
	}
	var m v1.Manifest
	if err := l.readJSONBlob(mdesc, &m); err != nil {
		return Image{}, err
	}
	if len(m.Layers) == 0 {
		return Image{}, l.bad("manifest %s lists no layers", mdesc.Digest)
	}
	cfgBytes, err := l.readBlob(m.Config)
	if err != nil {
		return Image{}, err
	}
	cfg, err := ParseConfig(cfgBytes)
	if err != nil {
		return Image{}, l.bad("config %s: %v", m.Config.Digest, err)
	}
	img := Image{ManifestDigest: mdesc.Digest.String(), ConfigDigest: m.Config.Digest.String(), Config: cfg}
	tw := tar.NewWriter(w)
	cfgName := m.Config.Digest.Encoded() + ".json"
	if err := writeTarFile(tw, cfgName, int64(len(cfgBytes)), bytes.NewReader(cfgBytes)); err != nil {
		return Image{}, err
	}
	layers := make([]string, 0, len(m.Layers))
	dirs := map[string]bool{}
	for _, ld := range m.Layers {
		if err := checkLayerType(ld.MediaType); err != nil {
			return Image{}, l.bad("layer %s: %v", ld.Digest, err)
		}
		dir := "blobs/" + ld.Digest.Algorithm().String() + "/"
		if !dirs[dir] {
			if err := writeTarDirs(tw, dir); err != nil {
				return Image{}, err
			}
			dirs[dir] = true
		}
		name := dir + ld.Digest.Encoded()
		if err := l.copyBlob(tw, name, ld); err != nil {
			return Image{}, err
		}
		layers = append(layers, name)
		img.Layers = append(img.Layers, ld.Digest.String())
	}
	manifest, err := json.Marshal([]dockerSaveManifest{{Config: cfgName, RepoTags: tags, Layers: layers}})
	if err != nil {
		return Image{}, fmt.Errorf("oci: write manifest.json: %w", err)
	}
	if err := writeTarFile(tw, "manifest.json", int64(len(manifest)), bytes.NewReader(manifest)); err != nil {
		return Image{}, err
	}
	if err := tw.Close(); err != nil {
		return Image{}, fmt.Errorf("oci: write archive: %w", err)
	}
	return img, nil
}

// dockerSaveManifest is an entry of a docker-save archive's manifest.json
// (moby's image/tarexport manifestItem).
type dockerSaveManifest struct {
	Config   string
	RepoTags []string
	Layers   []string
}

type layout struct{ dir string }

func (l layout) bad(format string, args ...any) error {
	return fmt.Errorf("oci layout %s: %s: %w", l.dir, fmt.Sprintf(format, args...), ErrBadLayout)
}

func (l layout) checkVersion() error {
	var v v1.ImageLayout
	if err := l.readJSONFile(v1.ImageLayoutFile, &v); err != nil {
		return err
	}
	if v.Version != v1.ImageLayoutVersion {
		return l.bad("%s: imageLayoutVersion %q, want %q", v1.ImageLayoutFile, v.Version, v1.ImageLayoutVersion)
	}
	return nil
}

// readJSONFile reads a file of the layout that is not a blob (oci-layout,
// index.json).
func (l layout) readJSONFile(name string, v any) error {
	f, err := os.Open(filepath.Join(l.dir, name))
	if err != nil {
		return l.bad("%v", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxMetaBlob+1))
	if err != nil {
		return l.bad("read %s: %v", name, err)
	}
	if len(b) > maxMetaBlob {
		return l.bad("%s is larger than %d bytes", name, maxMetaBlob)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return l.bad("%s: %v", name, err)
	}
	return nil
}

// selectEntry picks the index entry selector names.
func (l layout) selectEntry(index v1.Index, selector string) (v1.Descriptor, error) {
	if len(index.Manifests) == 0 {
		return v1.Descriptor{}, l.bad("index.json lists no image")
	}
	if selector == "" {
		if len(index.Manifests) > 1 {
			return v1.Descriptor{}, l.bad("index.json lists %d images (%s): name one by tag or digest", len(index.Manifests), refNames(index.Manifests))
		}
		return index.Manifests[0], nil
	}
	if d, err := digest.Parse(selector); err == nil {
		if desc, ok := l.findDigest(index.Manifests, d, 0); ok {
			return desc, nil
		}
		return v1.Descriptor{}, l.bad("no manifest or index with digest %s", selector)
	}
	for _, desc := range index.Manifests {
		name := desc.Annotations[v1.AnnotationRefName]
		if name == selector || strings.HasSuffix(name, ":"+selector) {
			return desc, nil
		}
	}
	return v1.Descriptor{}, l.bad("no image tagged %q (tags: %s)", selector, refNames(index.Manifests))
}

// findDigest looks for d among descs and in the indexes they name.
func (l layout) findDigest(descs []v1.Descriptor, d digest.Digest, depth int) (v1.Descriptor, bool) {
	for _, desc := range descs {
		if desc.Digest == d {
			return desc, true
		}
	}
	if depth >= maxIndexDepth {
		return v1.Descriptor{}, false
	}
	for _, desc := range descs {
		if !isIndex(desc.MediaType) {
			continue
		}
		var idx v1.Index
		if l.readJSONBlob(desc, &idx) != nil {
			continue
		}
		if found, ok := l.findDigest(idx.Manifests, d, depth+1); ok {
			return found, true
		}
	}
	return v1.Descriptor{}, false
}

// resolve follows indexes down to the manifest of linux/runtime.GOARCH.
func (l layout) resolve(desc v1.Descriptor, depth int) (v1.Descriptor, error) {
	switch {
	case isManifest(desc.MediaType):
		return desc, nil
	case !isIndex(desc.MediaType):
		return v1.Descriptor{}, l.bad("%s has media type %q, neither an image manifest nor an index", desc.Digest, desc.MediaType)
	case depth >= maxIndexDepth:
		return v1.Descriptor{}, l.bad("indexes nested more than %d deep", maxIndexDepth)
	}
	var idx v1.Index
	if err := l.readJSONBlob(desc, &idx); err != nil {
		return v1.Descriptor{}, err
	}
	var seen []string
	for _, m := range idx.Manifests {
		p := m.Platform
		if p == nil {
			if isIndex(m.MediaType) || len(idx.Manifests) == 1 {
				return l.resolve(m, depth+1)
			}
			continue
		}
		seen = append(seen, p.OS+"/"+p.Architecture)
		if p.OS == "linux" && p.Architecture == runtime.GOARCH {
			return l.resolve(m, depth+1)
		}
	}
	return v1.Descriptor{}, l.bad("index %s has no linux/%s image (it has %s)", desc.Digest, runtime.GOARCH, strings.Join(seen, ", "))
}

func isIndex(mt string) bool { return mt == v1.MediaTypeImageIndex || mt == dockerManifestList }

func isManifest(mt string) bool { return mt == v1.MediaTypeImageManifest || mt == dockerManifest }

// checkLayerType accepts the layer media types the engine's load can
// decompress: uncompressed and gzip. Docker 20.10's load does not read a
// zstd layer (it fails with "Error processing tar file(exit status 1):
// unexpected EOF", measured with the 20.10.24 engine), so a zstd layer is
// refused here, with a message, rather than there.
func checkLayerType(mt string) error {
	switch mt {
	case v1.MediaTypeImageLayer, v1.MediaTypeImageLayerGzip, dockerLayerGzip:
		return nil
	case v1.MediaTypeImageLayerZstd:
		return errors.New("a zstd-compressed layer, which the Docker 20.10 engine cannot load: copy the image with gzip layers (skopeo copy --dest-compress-format gzip)")
	default:
		return fmt.Errorf("media type %q is not a layer the Docker engine can load", mt)
	}
}

// refNames lists the entries' ref.name annotations, for a message.
func refNames(descs []v1.Descriptor) string {
	var names []string
	for _, d := range descs {
		if n := d.Annotations[v1.AnnotationRefName]; n != "" {
			names = append(names, n)
		} else {
			names = append(names, d.Digest.String())
		}
	}
	return strings.Join(names, ", ")
}

// repoTags is the entry's name when it is a full reference with a tag.
func repoTags(desc v1.Descriptor) []string {
	for _, key := range []string{v1.AnnotationRefName, "io.containerd.image.name"} {
		name := desc.Annotations[key]
		if r, err := ParseRef("docker:" + name); err == nil && strings.Contains(name, "/") && !r.DefaultTag && r.Digest == "" {
			return []string{r.Familiar}
		}
	}
	return []string{}
}

// openBlob opens a blob after checking its digest is well formed (so it
// cannot name a path outside blobs/) and that its size is the
// descriptor's.
func (l layout) openBlob(desc v1.Descriptor) (*os.File, error) {
	if err := desc.Digest.Validate(); err != nil {
		return nil, l.bad("descriptor digest %q: %v", desc.Digest, err)
	}
	p := filepath.Join(l.dir, "blobs", desc.Digest.Algorithm().String(), desc.Digest.Encoded())
	f, err := os.Open(p)
	if err != nil {
		return nil, l.bad("blob %s: %v", desc.Digest, err)
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, l.bad("blob %s is not a regular file", desc.Digest)
	}
	if st.Size() != desc.Size {
		f.Close()
		return nil, l.bad("blob %s is %d bytes, its descriptor says %d", desc.Digest, st.Size(), desc.Size)
	}
	return f, nil
}

// readBlob reads a small blob and checks its digest.
func (l layout) readBlob(desc v1.Descriptor) ([]byte, error) {
	if desc.Size > maxMetaBlob {
		return nil, l.bad("blob %s is %d bytes, more than %d", desc.Digest, desc.Size, maxMetaBlob)
	}
	f, err := l.openBlob(desc)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, desc.Size))
	if err != nil {
		return nil, l.bad("read blob %s: %v", desc.Digest, err)
	}
	if got := desc.Digest.Algorithm().FromBytes(b); got != desc.Digest {
		return nil, l.bad("blob %s does not match its digest (its content is %s)", desc.Digest, got)
	}
	return b, nil
}

func (l layout) readJSONBlob(desc v1.Descriptor, v any) error {
	b, err := l.readBlob(desc)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return l.bad("blob %s: %v", desc.Digest, err)
	}
	return nil
}

// copyBlob writes a blob into the archive as name, checking its digest as
// it goes.
func (l layout) copyBlob(tw *tar.Writer, name string, desc v1.Descriptor) error {
	f, err := l.openBlob(desc)
	if err != nil {
		return err
	}
	defer f.Close()
	v := desc.Digest.Verifier()
	if err := writeTarFile(tw, name, desc.Size, io.TeeReader(io.LimitReader(f, desc.Size), v)); err != nil {
		return err
	}
	if !v.Verified() {
		return l.bad("blob %s does not match its digest", desc.Digest)
	}
	return nil
}

// writeTarDirs writes the entries of blobs/ and dir, so the archive
// unpacks the same whether or not its reader creates parents.
func writeTarDirs(tw *tar.Writer, dir string) error {
	for _, d := range []string{"blobs/", dir} {
		hdr := &tar.Header{Name: d, Mode: 0o755, Typeflag: tar.TypeDir, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("oci: write archive: %w", err)
		}
	}
	return nil
}

func writeTarFile(tw *tar.Writer, name string, size int64, r io.Reader) error {
	hdr := &tar.Header{Name: name, Mode: 0o644, Size: size, Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
	if err := tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("oci: write archive: %w", err)
	}
	if _, err := io.Copy(tw, r); err != nil {
		return fmt.Errorf("oci: write archive %s: %w", name, err)
	}
	return nil
}
