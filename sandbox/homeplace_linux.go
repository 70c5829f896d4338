//go:build linux

package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The observer's side of the home's seed and comparison (homeplace.go).

// homePart checks that a control line names a held home (home-scripts,
// home-run) and returns its directory.
func homePart(part string) (string, error) {
	if !strings.HasPrefix(part, "home-") || strings.ContainsAny(part, "/\\.") {
		return "", fmt.Errorf("not a home: %q", part)
	}
	return filepath.Join(heldDir, part), nil
}

// writeSeed writes the seed into dir, owned by s.UID. Paths are relative
// and clean (the scan made them); anything else is refused. A PyPI
// install seeds the script phase's home again before each of its steps,
// after package code ran in it: whatever stands where a seeded directory
// or file goes and is not one (a link, above all) is removed first, as
// the engine's archive extraction did, and nothing is opened through a
// link. No process of the package runs while the seed is written.
func writeSeed(dir string, s homeSeed) error {
	mt := time.Unix(s.MTime, 0)
	var dirs []string
	seen := map[string]bool{}
	for _, f := range s.Files {
		if !fs.ValidPath(f.Path) || f.Path == "." {
			return fmt.Errorf("seed path %q", f.Path)
		}
		for d := path.Dir(f.Path); d != "." && !seen[d]; d = path.Dir(d) {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	sort.Strings(dirs) // parents first
	for _, d := range dirs {
		p := filepath.Join(dir, filepath.FromSlash(d))
		if st, err := os.Lstat(p); err == nil && !st.IsDir() {
			if err := os.Remove(p); err != nil {
				return err
			}
		}
		if err := os.Mkdir(p, 0o700); err != nil && !os.IsExist(err) {
			return err
		}
		if err := os.Lchown(p, s.UID, s.UID); err != nil {
			return err
		}
	}
	for _, f := range s.Files {
		if err := writeSeedFile(filepath.Join(dir, filepath.FromSlash(f.Path)), f, s.UID, mt); err != nil {
			return err
		}
	}
	for i := len(dirs) - 1; i >= 0; i-- { // children first: writing in a directory moves its time
		p := filepath.Join(dir, filepath.FromSlash(dirs[i]))
		if err := unix.UtimesNanoAt(unix.AT_FDCWD, p, []unix.Timespec{unix.NsecToTimespec(mt.UnixNano()), unix.NsecToTimespec(mt.UnixNano())}, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return err
		}
	}
	return nil
}

// writeSeedFile writes one seeded file at p, replacing whatever is there.
func writeSeedFile(p string, f seedFile, uid int, mt time.Time) error {
	if err := os.RemoveAll(p); err != nil {
		return err
	}
	fd, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	_, err = fd.Write(f.Data)
	for _, step := range []func() error{
		func() error { return fd.Chmod(fs.FileMode(f.Mode).Perm()) },
		func() error { return fd.Chown(uid, uid) },
		func() error {
			return unix.Futimes(int(fd.Fd()), []unix.Timeval{unix.NsecToTimeval(mt.UnixNano()), unix.NsecToTimeval(mt.UnixNano())})
		},
	} {
		if err == nil {
			err = step()
		}
	}
	if cerr := fd.Close(); err == nil {
		err = cerr
	}
	return err
}

// compareHome walks dir (never following a link) and lists what differs
// from the seed, given as each seeded file's SHA-256: every entry that is
// not a directory and was not seeded is created; a seeded path that is no
// longer a regular file with the seeded content is modified; a seeded path
// that is gone is deleted. The home is bounded (bounds.go), so the walk is.
func compareHome(dir string, seed map[string]seedSum) ([]fileChange, error) {
	var out []fileChange
	seen := map[string]bool{}
	err := filepath.WalkDir(dir, func(fp string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			return nil
		}
		rel, rerr := filepath.Rel(dir, fp)
		if rerr != nil {
			return rerr
		}
		rel = filepath.ToSlash(rel)
		want, seeded := seed[rel]
		if !seeded {
			out = append(out, fileChange{Path: rel, Op: "created"})
			return nil
		}
		seen[rel] = true
		if !e.Type().IsRegular() || !sameContent(fp, want) {
			out = append(out, fileChange{Path: rel, Op: "modified"})
		}
		return nil
	})
	for p := range seed {
		if !seen[p] {
			out = append(out, fileChange{Path: p, Op: "deleted"})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, err
}

// sameContent reports whether the regular file at p holds what was
// seeded: its size first, then its SHA-256. It is opened without
// following a link or blocking (no process of the package runs any more,
// but a file swapped for a FIFO must not hang the observer).
func sameContent(p string, want seedSum) bool {
	f, err := os.OpenFile(p, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() != want.Size {
		return false
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, want.Size+1)); err != nil {
		return false
	}
	return hex.EncodeToString(h.Sum(nil)) == want.SHA256
}
