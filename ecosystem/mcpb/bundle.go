package mcpb

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"
)

// ErrMalformed is a bundle that is refused: not a zip, no valid root
// manifest.json, an entry that is not a plain file or directory or whose
// name leaves the bundle, a repeated name, or more than its Limits.
var ErrMalformed = errors.New("malformed bundle")

// Limits bound what Open unpacks; a zero field takes its default.
type Limits struct {
	// Files bounds the zip's entries, and the files and directories, the
	// implied ones too, of the tree it unpacks to; default 20000.
	Files int
	Bytes int64 // uncompressed bytes, counted while inflating; default 512 MiB
	// Ratio bounds an entry's uncompressed bytes to Ratio times its
	// compressed ones (plus 1 MiB, for small files that compress well);
	// default 200, above what source, minified code and binaries reach.
	Ratio int64
}

func (l Limits) withDefaults() Limits {
	if l.Files <= 0 {
		l.Files = 20000
	}
	if l.Bytes <= 0 {
		l.Bytes = 512 << 20
	}
	if l.Ratio <= 0 {
		l.Ratio = 200
	}
	return l
}

// maxManifest and maxLockfile bound files read into memory. maxName and
// maxDepth bound an entry's name (a bundle must unpack on Windows, whose
// paths stop at 260 characters without long-path support), which bounds
// the work on each name.
const (
	maxManifest = 1 << 20
	maxLockfile = 64 << 20
	maxName     = 1024
	maxDepth    = 128
)

// Bundle is an opened, checked bundle.
type Bundle struct {
	Manifest    *Manifest
	RawManifest []byte
	Digest      string // sha256:HEX of the whole file, signature block included
	Size        int64  // bytes of the whole file
	Files       int    // regular files
	Unpacked    int64  // uncompressed bytes of the regular files
	// Signature is the signature block's check against the system roots
	// at Open's time; Verify checks it against other roots.
	Signature *Signature

	r       io.ReaderAt
	content int64 // bytes of the zip: the file without its signature block
	block   []byte
	entries []entry
}

// entry is a checked zip entry under its clean name.
type entry struct {
	name string
	dir  bool
	exec bool
	size int64
	f    *zip.File
}

// Open reads and checks a bundle of size bytes: its signature block
// (see Signature) is set apart, every entry of the zip before it is
// checked and read through once, counting what it really inflates to,
// and manifest.json is parsed. What is refused is ErrMalformed, wrapped
// with the reason. Symbolic links are refused, not followed or kept: one
// unpacked into a sandbox's volume can point anywhere in its file system.
func Open(r io.ReaderAt, size int64, lim Limits) (*Bundle, error) {
	lim = lim.withDefaults()
	b := &Bundle{Size: size, r: r, content: size}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(r, 0, size)); err != nil {
		return nil, fmt.Errorf("mcpb: read bundle: %w", err)
	}
	b.Digest = "sha256:" + hex.EncodeToString(h.Sum(nil))
	content, block, err := splitSignature(r, size)
	if err != nil {
		return nil, err
	}
	b.content, b.block = content, block
	zr, err := zip.NewReader(io.NewSectionReader(r, 0, content), content)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		// ErrInsecurePath comes with a usable reader: the names are
		// checked below, each with its own reason.
		return nil, fmt.Errorf("%w: not a zip archive: %w", ErrMalformed, err)
	}
	if err := b.check(zr, lim); err != nil {
		return nil, err
	}
	if err := b.readManifest(); err != nil {
		return nil, err
	}
	b.Signature = b.Verify(nil, time.Now())
	return b, nil
}

// check checks every entry's name and type, and reads each regular file
// through under lim.
func (b *Bundle) check(zr *zip.Reader, lim Limits) error {
	if len(zr.File) > lim.Files {
		return fmt.Errorf("%w: %d entries, more than %d", ErrMalformed, len(zr.File), lim.Files)
	}
	seen := map[string]string{} // folded name to the name first seen
	for _, f := range zr.File {
		name, err := cleanName(f.Name)
		if err != nil {
			return fmt.Errorf("%w: entry %q: %w", ErrMalformed, f.Name, err)
		}
		mode := f.Mode()
		e := entry{name: name, f: f, dir: mode.IsDir()}
		switch {
		case mode&fs.ModeSymlink != 0:
			return fmt.Errorf("%w: entry %q is a symbolic link", ErrMalformed, f.Name)
		case !mode.IsDir() && !mode.IsRegular():
			return fmt.Errorf("%w: entry %q is not a file or directory (%v)", ErrMalformed, f.Name, mode.Type())
		}
		if name == "." {
			if !e.dir {
				return fmt.Errorf("%w: entry %q has no name", ErrMalformed, f.Name)
			}
			continue // the root itself
		}
		fold := strings.ToLower(name)
		if first, dup := seen[fold]; dup {
			return fmt.Errorf("%w: entry %q repeats %q", ErrMalformed, f.Name, first)
		}
		seen[fold] = name
		if !e.dir {
			e.exec = mode&0o111 != 0
			n, err := readEntry(f, lim.Bytes-b.Unpacked, lim.Ratio)
			if err != nil {
				return fmt.Errorf("%w: entry %q: %w", ErrMalformed, f.Name, err)
			}
			e.size = n
			b.Unpacked += n
			b.Files++
		}
		b.entries = append(b.entries, e)
	}
	// The directories the names imply are entries of the tar too, so they
	// count against lim.Files; and a file may not be one of them.
	dirs := map[string]bool{}
	for _, e := range b.entries {
		d := strings.ToLower(e.name)
		if !e.dir {
			d = path.Dir(d)
		}
		for ; d != "." && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
			if b.Files+len(dirs) > lim.Files {
				return fmt.Errorf("%w: more than %d entries with the directories they imply", ErrMalformed, lim.Files)
			}
		}
	}
	for _, e := range b.entries {
		if !e.dir && dirs[strings.ToLower(e.name)] {
			return fmt.Errorf("%w: a name is below the file %q", ErrMalformed, e.f.Name)
		}
	}
	return nil
}

// cleanName is an entry's name as a relative slash-separated path, "."
// for the root. Backslashes are read as separators, as a Windows client
// unpacks them. An absolute name, a drive or UNC name, a ".." component, a
// NUL, and a name longer or deeper than any a bundle needs are refused.
func cleanName(name string) (string, error) {
	n := strings.ReplaceAll(name, `\`, "/")
	switch {
	case n == "":
		return "", errors.New("empty name")
	case strings.ContainsRune(n, 0):
		return "", errors.New("NUL in name")
	case strings.HasPrefix(n, "/"):
		return "", errors.New("absolute path")
	case len(n) >= 2 && n[1] == ':':
		return "", errors.New("drive-letter path")
	}
	parts := strings.Split(n, "/")
	switch {
	case slices.Contains(parts, ".."):
		return "", errors.New("'..' component")
	case len(n) > maxName:
		return "", fmt.Errorf("name over %d bytes", maxName)
	case len(parts) > maxDepth:
		return "", fmt.Errorf("over %d components", maxDepth)
	}
	return path.Clean(n), nil
}

// readEntry reads a regular file through, and is its size: at most room
// bytes in all, at most ratio times its compressed size plus 1 MiB, and
// exactly what its header says (archive/zip checks the size and CRC-32 at
// its end).
func readEntry(f *zip.File, room, ratio int64) (int64, error) {
	rc, err := f.Open()
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	bound := min(room, int64(min(f.CompressedSize64, 1<<40))*ratio+1<<20)
	n, err := io.Copy(io.Discard, io.LimitReader(rc, bound+1))
	switch {
	case err != nil:
		return n, err
	case n > room:
		return n, errors.New("the bundle unpacks to more than its byte limit")
	case n > bound:
		return n, fmt.Errorf("inflates more than %d times (%d compressed bytes)", ratio, f.CompressedSize64)
	}
	return n, nil
}

// readManifest reads and parses the root manifest.json.
func (b *Bundle) readManifest() error {
	i := slices.IndexFunc(b.entries, func(e entry) bool { return e.name == "manifest.json" && !e.dir })
	if i < 0 {
		return fmt.Errorf("%w: no manifest.json at the root", ErrMalformed)
	}
	if b.entries[i].size > maxManifest {
		return fmt.Errorf("%w: manifest.json is over %d bytes", ErrMalformed, maxManifest)
	}
	raw, err := b.read(b.entries[i])
	if err != nil {
		return fmt.Errorf("%w: manifest.json: %w", ErrMalformed, err)
	}
	m, err := ParseManifest(raw)
	if err != nil {
		return fmt.Errorf("%w: manifest.json: %w", ErrMalformed, err)
	}
	b.Manifest, b.RawManifest = m, raw
	return nil
}

// read is an entry's content, of the size Open counted.
func (b *Bundle) read(e entry) ([]byte, error) {
	rc, err := e.f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	var buf bytes.Buffer
	if n, err := io.Copy(&buf, io.LimitReader(rc, e.size+1)); err != nil {
		return nil, err
	} else if n != e.size {
		return nil, fmt.Errorf("read %d bytes, not %d", n, e.size)
	}
	return buf.Bytes(), nil
}

// Lockfile is the npm lockfile the bundle ships, for TreePurls: its root
// package-lock.json, else node_modules/.package-lock.json (the copy npm
// keeps in the tree it installed, of the same format); nil without one.
func (b *Bundle) Lockfile() []byte {
	for _, name := range []string{"package-lock.json", "node_modules/.package-lock.json"} {
		for _, e := range b.entries {
			if e.name == name && !e.dir && e.size <= maxLockfile {
				if data, err := b.read(e); err == nil {
					return data
				}
			}
		}
	}
	return nil
}

// WriteTar writes the bundle's directories and regular files as a tar
// stream under prefix ("" for none), owned by uid and gid. Modes are
// sanitised: directories 0755, files 0755 when the zip gave any execute
// bit and 0644 otherwise; no setuid, setgid or sticky bit survives.
// Directories that the zip only implies are written before their
// contents.
func (b *Bundle) WriteTar(w io.Writer, prefix string, uid, gid int) error {
	tw := tar.NewWriter(w)
	prefix = strings.Trim(path.Clean("/"+prefix), "/")
	full := func(name string) string {
		if prefix == "" {
			return name
		}
		return prefix + "/" + name
	}
	written := map[string]bool{}
	var dir func(name string, mod time.Time) error
	dir = func(name string, mod time.Time) error {
		if name == "." || name == "" || written[name] {
			return nil
		}
		if err := dir(path.Dir(name), mod); err != nil {
			return err
		}
		written[name] = true
		return tw.WriteHeader(&tar.Header{
			Typeflag: tar.TypeDir, Name: name + "/", Mode: 0o755,
			Uid: uid, Gid: gid, ModTime: mod,
		})
	}
	for _, e := range b.entries {
		mod := e.f.Modified
		if mod.IsZero() {
			mod = time.Unix(0, 0)
		}
		if e.dir {
			if err := dir(full(e.name), mod); err != nil {
				return fmt.Errorf("mcpb: write tar: %w", err)
			}
			continue
		}
		if err := dir(path.Dir(full(e.name)), mod); err != nil {
			return fmt.Errorf("mcpb: write tar: %w", err)
		}
		if err := tarFile(tw, full(e.name), e, mod, uid, gid); err != nil {
			return fmt.Errorf("mcpb: write tar %s: %w", e.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("mcpb: write tar: %w", err)
	}
	return nil
}

func tarFile(tw *tar.Writer, name string, e entry, mod time.Time, uid, gid int) error {
	mode := int64(0o644)
	if e.exec {
		mode = 0o755
	}
	hdr := &tar.Header{
		Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: e.size,
		Uid: uid, Gid: gid, ModTime: mod,
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	rc, err := e.f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	n, err := io.Copy(tw, io.LimitReader(rc, e.size))
	if err != nil {
		return err
	}
	if n != e.size {
		return fmt.Errorf("read %d bytes, not the %d Open counted", n, e.size)
	}
	return nil
}
