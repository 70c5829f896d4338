package mcpbrun

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/verifymcp/verifymcp/ecosystem/mcpb"
)

// errDir is why an unpacked bundle's directory is refused.
var errDir = errors.New("unpacked bundle refused")

// dirNote says what the digest of a bundle read from a directory is: a
// client keeps an installed bundle unpacked (Claude Desktop's "Claude
// Extensions/<id>/"), so the .mcpb it came from, and that file's digest,
// are gone.
const dirNote = "the bundle was read from an unpacked directory: its digest is that of a zip verifymcp made of the tree " +
	"(files in name order, times zeroed), a digest of the unpacked tree and not of any .mcpb file that was shipped"

// zipDir packs the unpacked bundle at root (manifest.json at its top) into
// a zip held in memory, so that it is opened and run exactly as a .mcpb
// file is (mcpb.Open checks it again). It keeps what the tree holds and
// nothing of the host: entries in name order with no times, so that one
// tree always gives one digest. It refuses, before reading more, a tree
// over lim's files or bytes (mcpb.Limits' defaults when zero), a device,
// pipe or socket, and a symbolic link that leaves root or names a
// directory (a link to a file inside root is packed as that file).
func zipDir(root string, lim mcpb.Limits) ([]byte, error) {
	files, size := lim.Files, lim.Bytes
	// The defaults of mcpb.Limits (ecosystem/mcpb/bundle.go), which does
	// not export them.
	if files <= 0 {
		files = 20000
	}
	if size <= 0 {
		size = 512 << 20
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errDir, root, err)
	}
	if st, err := os.Lstat(filepath.Join(real, "manifest.json")); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s has no manifest.json file at its top", errDir, root)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	count, room := 0, size
	err = filepath.WalkDir(real, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == real {
			return nil
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, real+string(filepath.Separator)))
		if count++; count > files {
			return fmt.Errorf("more than %d files", files)
		}
		src := p
		switch t := d.Type(); {
		case t.IsDir():
			_, err := zw.CreateHeader(&zip.FileHeader{Name: rel + "/", Method: zip.Store})
			return err
		case t&fs.ModeSymlink != 0:
			if src, err = inside(real, p); err != nil {
				return err
			}
		case !t.IsRegular():
			return fmt.Errorf("%s is not a plain file (%s)", rel, t.Type())
		}
		st, err := os.Stat(src)
		if err != nil {
			return err
		}
		if st.Size() > room {
			return fmt.Errorf("more than %d bytes", size)
		}
		room -= st.Size()
		// Stored, not deflated: the files are read from disk already
		// bounded, and mcpb.Open's ratio bound, which is for a shipped
		// zip's bombs, must not refuse a large file that compresses well.
		h := &zip.FileHeader{Name: rel, Method: zip.Store}
		h.SetMode(st.Mode().Perm())
		w, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		return copyFile(w, src, st.Size())
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errDir, root, err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errDir, root, err)
	}
	return buf.Bytes(), nil
}

// inside is the file the link at p names, which must be a regular file
// under root (itself free of links).
func inside(root, p string) (string, error) {
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("link %s: %w", p, err)
	}
	if rel, err := filepath.Rel(root, target); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("link %s leaves the bundle's directory (to %s)", p, target)
	}
	st, err := os.Stat(target)
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("link %s names %s, not a plain file", p, target)
	}
	return target, nil
}

// copyFile copies at most n bytes of the file at p: a file that grew since
// it was measured is cut, not read whole.
func copyFile(w io.Writer, p string, n int64) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, io.LimitReader(f, n))
	return err
}
