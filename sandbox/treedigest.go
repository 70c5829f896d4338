package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// The installed-tree check (PyPI). The tree a server runs from must be the
// one the installer wrote: a process the build left running could rewrite
// it between the install and the server's start. Every process of the
// build step is killed when the step ends (drivers/pybuild.py) and the run
// phase mounts the tree read-only, so nothing should; the check proves it.
// The observer, which holds the tree mounted read-only for the whole scan
// (bounds.go), digests the venv when the build step has ended and again
// just before the run phase releases the server, and reports the paths
// that differ. Both digests are taken by the same code from the same
// mount, so they agree on every byte they did not see change.

// digestDir is the part of the held tree the check covers: the venv the
// server runs from.
const digestDir = heldDir + "/work-tree/venv"

// maxChanged bounds the changed paths reported.
const maxChanged = 20

// treeDigest is the observer's answer to "digest".
type treeDigest struct {
	Files  int    `json:"files"`
	Digest string `json:"digest"`
	// Changed lists the paths (relative to the venv) that differ from the
	// previous digest of the same observer, at most maxChanged; Compared
	// says whether there was one.
	Changed  []string `json:"changed,omitempty"`
	Compared bool     `json:"compared"`
	Error    string   `json:"error,omitempty"`
}

// treeDigester digests a directory and remembers the last manifest, so
// that the next digest names what changed.
type treeDigester struct {
	last map[string][32]byte
}

// digest walks root: every regular file by the sha256 of its content, every
// symbolic link by its target, every other entry by its type; the digest is
// the sha256 of the sorted "path NUL kind NUL sha256" lines.
func (d *treeDigester) digest(root string) treeDigest {
	manifest := map[string][32]byte{}
	var paths []string
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." || e.IsDir() {
			return nil
		}
		var sum [32]byte
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			t, err := os.Readlink(p)
			if err != nil {
				return err
			}
			sum = sha256.Sum256([]byte("link\x00" + t))
		case e.Type().IsRegular():
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			h := sha256.New()
			_, err = io.Copy(h, f)
			f.Close()
			if err != nil {
				return err
			}
			copy(sum[:], h.Sum(nil))
		default:
			sum = sha256.Sum256([]byte("type\x00" + e.Type().String()))
		}
		manifest[rel] = sum
		paths = append(paths, rel)
		return nil
	})
	if err != nil {
		return treeDigest{Error: err.Error()}
	}
	sort.Strings(paths)
	h := sha256.New()
	for _, p := range paths {
		sum := manifest[p]
		h.Write([]byte(p))
		h.Write([]byte{0})
		h.Write([]byte(hex.EncodeToString(sum[:])))
		h.Write([]byte{'\n'})
	}
	out := treeDigest{Files: len(paths), Digest: hex.EncodeToString(h.Sum(nil))}
	if d.last != nil {
		out.Compared = true
		out.Changed = changedPaths(d.last, manifest)
	}
	d.last = manifest
	return out
}

// changedPaths lists, sorted, the paths added, removed or changed between
// two manifests, at most maxChanged.
func changedPaths(was, now map[string][32]byte) []string {
	var out []string
	for p, s := range now {
		if w, ok := was[p]; !ok || w != s {
			out = append(out, p)
		}
	}
	for p := range was {
		if _, ok := now[p]; !ok {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	if len(out) > maxChanged {
		out = out[:maxChanged]
	}
	return out
}
