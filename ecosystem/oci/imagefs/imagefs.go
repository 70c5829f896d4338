// oci.Package imagefs reads what an image's filesystem holds: the OS packages
// and language trees osv-scalibr's extractors find in it, its os-release
// and its shells (oci.Contents). It is apart from package oci so that
// naming an image does not take in osv-scalibr's extractors.
package imagefs

import (
	"archive/tar"
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
	"testing/fstest"

	cpb "github.com/google/osv-scalibr/binary/proto/config_go_proto"
	"github.com/google/osv-scalibr/extractor/filesystem"
	"github.com/google/osv-scalibr/extractor/filesystem/language/javascript/packagejson"
	"github.com/google/osv-scalibr/extractor/filesystem/language/javascript/packagelockjson"
	"github.com/google/osv-scalibr/extractor/filesystem/language/python/wheelegg"
	"github.com/google/osv-scalibr/extractor/filesystem/os/apk"
	"github.com/google/osv-scalibr/extractor/filesystem/os/dpkg"
	"github.com/google/osv-scalibr/purl"
	"github.com/verifymcp/verifymcp/ecosystem/oci"
)

// ErrLimit is an image filesystem whose files of interest exceed Limits.
var ErrLimit = errors.New("image inventory limit exceeded")

// Limits bound what Inventory holds in memory.
type Limits struct {
	// Bytes is the most the files the extractors want may add up to
	// (DefaultInventoryBytes when 0).
	Bytes int64
	// Files is the most files the extractors may want
	// (DefaultInventoryFiles when 0).
	Files int
}

// The default Limits.
const (
	DefaultInventoryBytes = 256 << 20
	DefaultInventoryFiles = 100_000
)

// imageExtractor is an osv-scalibr extractor and the files of it this
// package lets it read.
type imageExtractor struct {
	ex filesystem.Extractor
	// only narrows the files the extractor wants; nil takes them all.
	only func(p string) bool
}

// extractors are the osv-scalibr extractors run over an image: OS
// packages (dpkg's status file and distroless status.d, apk's installed
// database), npm packages (package.json in node_modules, and
// package-lock.json outside them) and Python distributions (dist-info
// and egg-info metadata, eggs and wheels).
func extractors() ([]imageExtractor, error) {
	cfg := &cpb.PluginConfig{}
	var out []imageExtractor
	for _, c := range []struct {
		new  func(*cpb.PluginConfig) (filesystem.Extractor, error)
		only func(string) bool
	}{
		{new: dpkg.New},
		{new: apk.New},
		// A package.json outside node_modules is a project's own, not an
		// installed package.
		{new: packagejson.New, only: inNodeModules},
		{new: packagelockjson.New},
		{new: wheelegg.New},
	} {
		ex, err := c.new(cfg)
		if err != nil {
			return nil, fmt.Errorf("oci: inventory: %w", err)
		}
		out = append(out, imageExtractor{ex: ex, only: c.only})
	}
	return out, nil
}

func inNodeModules(p string) bool {
	return slices.Contains(strings.Split(path.Dir(p), "/"), "node_modules")
}

// tarFile is a file of the stream as osv-scalibr's FileRequired sees it.
type tarFile struct {
	path string
	info fs.FileInfo
}

func (f tarFile) Path() string               { return f.path }
func (f tarFile) Stat() (fs.FileInfo, error) { return f.info, nil }

// Version names what Inventory reads and how: it changes with the
// extractors used or how files are given to them, so that an inventory
// kept by an earlier version is read again.
const Version = "1"

// Inventory reads a tar stream of a container's flattened filesystem (as
// the Docker engine's container export writes it) and lists the
// packages installed in it with osv-scalibr's extractors, as osv-scanner
// scans an image. Only the files an extractor wants (its FileRequired)
// and the os-release files are kept, in memory, within lim; the
// extractors then run over them as an in-memory filesystem. A file an
// extractor fails on is listed in Skipped, not fatal.
func Inventory(ctx context.Context, r io.Reader, lim Limits) (*oci.Contents, error) {
	lim.Bytes = cmp.Or(lim.Bytes, DefaultInventoryBytes)
	lim.Files = cmp.Or(lim.Files, DefaultInventoryFiles)
	exs, err := extractors()
	if err != nil {
		return nil, err
	}
	c := &oci.Contents{Packages: []oci.Package{}, Skipped: []string{}}
	fsys := fstest.MapFS{}
	wanted := map[string][]int{} // path -> extractors
	links := map[string]string{} // os-release symlinks
	var held int64
	tr := tar.NewReader(bufio.NewReader(r))
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("oci: inventory: read filesystem tar: %w", err)
		}
		p := path.Clean(strings.TrimPrefix(strings.TrimPrefix(hdr.Name, "./"), "/"))
		switch hdr.Typeflag {
		case tar.TypeReg, tar.TypeSymlink, tar.TypeLink:
			switch p {
			case "bin/bash", "usr/bin/bash":
				c.HasBash = true
			case "bin/sh", "usr/bin/sh":
				c.HasSh = true
			}
		}
		if hdr.Typeflag == tar.TypeSymlink && (p == "etc/os-release" || p == "usr/lib/os-release") {
			links[p] = hdr.Linkname
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		c.Files++
		var want []int
		for i, e := range exs {
			if e.ex.FileRequired(tarFile{path: p, info: hdr.FileInfo()}) && (e.only == nil || e.only(p)) {
				want = append(want, i)
			}
		}
		osRelease := p == "etc/os-release" || p == "usr/lib/os-release"
		if len(want) == 0 && !osRelease {
			continue
		}
		if held+hdr.Size > lim.Bytes {
			return nil, fmt.Errorf("oci: inventory: %s would bring the files read to more than %d bytes: %w", p, lim.Bytes, ErrLimit)
		}
		if len(wanted) >= lim.Files {
			return nil, fmt.Errorf("oci: inventory: more than %d files to read: %w", lim.Files, ErrLimit)
		}
		b, err := io.ReadAll(io.LimitReader(tr, hdr.Size))
		if err != nil {
			return nil, fmt.Errorf("oci: inventory: read %s: %w", p, err)
		}
		held += int64(len(b))
		fsys[p] = &fstest.MapFile{Data: b, Mode: hdr.FileInfo().Mode(), ModTime: hdr.ModTime}
		if len(want) > 0 {
			wanted[p] = want
		}
	}
	linkOSRelease(fsys, links)
	c.OSRelease = readOSRelease(fsys)
	for _, p := range slices.Sorted(maps.Keys(wanted)) {
		for _, i := range wanted[p] {
			pkgs, err := extract(ctx, exs[i].ex, fsys, p)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				c.Skipped = append(c.Skipped, fmt.Sprintf("%s: %s: %v", p, exs[i].ex.Name(), err))
			}
			c.Packages = append(c.Packages, pkgs...)
		}
	}
	c.Sort()
	return c, nil
}

func extract(ctx context.Context, ex filesystem.Extractor, fsys fstest.MapFS, p string) ([]oci.Package, error) {
	info, err := fsys.Stat(p)
	if err != nil {
		return nil, err
	}
	inv, err := ex.Extract(ctx, &filesystem.ScanInput{
		FS: fsys, Path: p, Root: "/", Info: info, Reader: bytes.NewReader(fsys[p].Data),
	})
	var out []oci.Package
	for _, pkg := range inv.Packages {
		if pkg.Name == "" || pkg.Version == "" {
			continue
		}
		q := oci.Package{
			Name: pkg.Name, Version: pkg.Version, Ecosystem: pkg.Ecosystem().String(),
			Location: cmp.Or(pkg.Location.PathOrEmpty(), p), Extractor: ex.Name(),
		}
		if u := pkg.PURL(); u != nil {
			if u.Type == purl.TypeNPM {
				// osv-scalibr's package.json extractor leaves the
				// package's source to an annotator this scan does not
				// run, and its purl then says source=UNKNOWN; the purl of
				// a package-lock.json's entry has no qualifier. Both are
				// one package.
				u.Qualifiers = nil
			}
			q.Purl = u.String()
		}
		out = append(out, q)
	}
	return out, err
}

// linkOSRelease puts an os-release file that is a symlink to the other
// (Debian's /etc/os-release -> ../usr/lib/os-release) where the link is,
// and gives the in-memory filesystem its /etc, which osv-scalibr's
// os-release reader looks for before it reads either file.
func linkOSRelease(fsys fstest.MapFS, links map[string]string) {
	for p, target := range links {
		if !path.IsAbs(target) {
			target = path.Join(path.Dir(p), target)
		}
		if f, ok := fsys[strings.TrimPrefix(path.Clean(target), "/")]; ok {
			if _, exists := fsys[p]; !exists {
				fsys[p] = f
			}
		}
	}
	if _, err := fsys.Stat("etc"); err != nil {
		fsys["etc"] = &fstest.MapFile{Mode: fs.ModeDir | 0o755}
	}
}

// readOSRelease reads ID and VERSION_ID from /etc/os-release, else
// /usr/lib/os-release (os-release(5)).
func readOSRelease(fsys fstest.MapFS) oci.OSRelease {
	for _, p := range []string{"etc/os-release", "usr/lib/os-release"} {
		f, ok := fsys[p]
		if !ok {
			continue
		}
		var r oci.OSRelease
		for line := range strings.Lines(string(f.Data)) {
			k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
			if !ok {
				continue
			}
			v = strings.Trim(v, `"'`)
			switch k {
			case "ID":
				r.ID = v
			case "VERSION_ID":
				r.VersionID = v
			}
		}
		return r
	}
	return oci.OSRelease{}
}
