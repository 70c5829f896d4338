package oci

import (
	"archive/tar"
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
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

// Package is one package installed in an image.
type Package struct {
	// Purl is its package URL as osv-scalibr writes it (for a Debian
	// package with its arch, distro and source qualifiers).
	Purl string `json:"purl"`
	// Ecosystem is its OSV ecosystem: "Debian:12", "Alpine:v3.20", "npm",
	// "PyPI"; "" when the distribution is unknown.
	Ecosystem string `json:"ecosystem"`
	Name      string `json:"name"`
	Version   string `json:"version"`
	// Location is the file it was read from, relative to the root.
	Location string `json:"location"`
	// Extractor is the osv-scalibr extractor that read it (os/dpkg).
	Extractor string `json:"extractor"`
}

// OSRelease is what the image's os-release file says.
type OSRelease struct {
	ID        string `json:"id,omitempty"`
	VersionID string `json:"version_id,omitempty"`
}

// Contents is the inventory of an image's filesystem.
type Contents struct {
	Packages  []Package `json:"packages"`
	OSRelease OSRelease `json:"os_release"`
	// HasBash and HasSh are true when the filesystem has a regular file,
	// a hard link or a symlink at /bin/bash or /usr/bin/bash (/bin/sh,
	// /usr/bin/sh): whether a shell is there to be run.
	HasBash bool `json:"has_bash"`
	HasSh   bool `json:"has_sh"`
	// Files is the number of regular files in the filesystem.
	Files int `json:"files"`
	// Skipped lists the files an extractor failed on ("path: extractor:
	// error"); their packages are missing from Packages.
	Skipped []string `json:"skipped"`
}

// inventorySchema names the form of Lockfile's JSON.
const inventorySchema = "verifymcp/oci-inventory/1"

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

// Inventory reads a tar stream of a container's flattened filesystem (as
// the Docker engine's container export writes it) and lists the
// packages installed in it with osv-scalibr's extractors, as osv-scanner
// scans an image. Only the files an extractor wants (its FileRequired)
// and the os-release files are kept, in memory, within lim; the
// extractors then run over them as an in-memory filesystem. A file an
// extractor fails on is listed in Skipped, not fatal.
func Inventory(ctx context.Context, r io.Reader, lim Limits) (*Contents, error) {
	lim.Bytes = cmp.Or(lim.Bytes, DefaultInventoryBytes)
	lim.Files = cmp.Or(lim.Files, DefaultInventoryFiles)
	exs, err := extractors()
	if err != nil {
		return nil, err
	}
	c := &Contents{Packages: []Package{}, Skipped: []string{}}
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
	c.sort()
	return c, nil
}

func extract(ctx context.Context, ex filesystem.Extractor, fsys fstest.MapFS, p string) ([]Package, error) {
	info, err := fsys.Stat(p)
	if err != nil {
		return nil, err
	}
	inv, err := ex.Extract(ctx, &filesystem.ScanInput{
		FS: fsys, Path: p, Root: "/", Info: info, Reader: bytes.NewReader(fsys[p].Data),
	})
	var out []Package
	for _, pkg := range inv.Packages {
		if pkg.Name == "" || pkg.Version == "" {
			continue
		}
		q := Package{
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
func readOSRelease(fsys fstest.MapFS) OSRelease {
	for _, p := range []string{"etc/os-release", "usr/lib/os-release"} {
		f, ok := fsys[p]
		if !ok {
			continue
		}
		var r OSRelease
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
	return OSRelease{}
}

// sort puts the packages in a stable order, without repeats.
func (c *Contents) sort() {
	slices.SortFunc(c.Packages, func(a, b Package) int {
		return cmp.Or(
			cmp.Compare(a.Ecosystem, b.Ecosystem), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Version, b.Version),
			cmp.Compare(a.Location, b.Location), cmp.Compare(a.Extractor, b.Extractor), cmp.Compare(a.Purl, b.Purl))
	})
	c.Packages = slices.Compact(c.Packages)
	slices.Sort(c.Skipped)
}

type lockfile struct {
	Schema string `json:"schema"`
	*Contents
}

// Lockfile is the inventory as stable JSON (packages sorted), the
// "lockfile" of an image that Ecosystem.TreePurls and ReadLockfile read.
func (c *Contents) Lockfile() []byte {
	cp := *c
	cp.Packages = slices.Clone(c.Packages)
	cp.Skipped = slices.Clone(c.Skipped)
	if cp.Packages == nil {
		cp.Packages = []Package{}
	}
	if cp.Skipped == nil {
		cp.Skipped = []string{}
	}
	cp.sort()
	b, err := json.MarshalIndent(lockfile{Schema: inventorySchema, Contents: &cp}, "", "  ")
	if err != nil {
		panic(err) // strings, ints and bools always marshal
	}
	return append(b, '\n')
}

// ReadLockfile reads what Lockfile writes.
func ReadLockfile(b []byte) (*Contents, error) {
	l := lockfile{Contents: &Contents{}}
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("oci: read image inventory: %w", err)
	}
	if l.Schema != inventorySchema {
		return nil, fmt.Errorf("oci: read image inventory: schema %q, want %q", l.Schema, inventorySchema)
	}
	return l.Contents, nil
}
