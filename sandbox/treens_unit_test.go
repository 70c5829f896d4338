package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/verifymcp/verifymcp/pkgspec"
)

// legacyTreeKey is the tree key as it was before namespaces: the default
// namespace must keep it byte for byte, or every user's cached trees would
// be orphaned and fetched again.
func legacyTreeKey(o Options, t Target) string {
	h := sha256.New()
	if t.Ecosystem == "pypi" {
		fmt.Fprintf(h, "verifymcp-tree/pypi/1\n%s\n%s\n%s\n%s\n%x\n", pkgspec.NormalizePyPIName(t.Name), t.Version, o.IndexURL, o.Image, sha256.Sum256([]byte(pyFetchDriver)))
		for _, n := range []string{"a.whl", "b.tar.gz"} { // sorted, as the key sorts them
			if d, ok := t.PyPIFiles[n]; ok {
				fmt.Fprintf(h, "index-file %s %s\n", n, d)
			}
		}
		if t.Tarball != nil {
			fmt.Fprintf(h, "file %s %x\n", t.Filename, sha256.Sum256(t.Tarball))
		}
	} else {
		fmt.Fprintf(h, "verifymcp-tree/1\n%s\n%s\n%s\n%s\n%s\n%x\n", t.Name, t.Version, t.Integrity, o.Registry, o.Image, sha256.Sum256([]byte(fetchDriver)))
		if t.Tarball != nil {
			fmt.Fprintf(h, "file %x\n", sha256.Sum256(t.Tarball))
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:24]
}

// TestTreeKeyNamespace: the default namespace keeps the key users' cached
// trees are stored under; any other namespace has keys of its own, so a
// test in its namespace fetches whatever the engine's cache holds, and
// two namespaces never share a tree.
func TestTreeKeyNamespace(t *testing.T) {
	targets := map[string]Target{
		"npm":              {Name: "is-number", Version: "7.0.0", Integrity: "sha512-41Cifkg6e8TylSpdtTpeLVMqvSBEVzTttHvERD741+pnZ8ANv0004MRL43QKPDlK9cGvNp6NZWZUBlbGXYxxng=="},
		"npm tarball":      {Name: "verifymcp-fixture-x", Version: "1.0.0", Tarball: []byte("tgz")},
		"pypi":             {Ecosystem: "pypi", Name: "Mcp_Server", Version: "1.0", PyPIFiles: map[string]string{"b.tar.gz": "sha256:2", "a.whl": "sha256:1"}},
		"pypi local sdist": {Ecosystem: "pypi", Name: "fx", Version: "1.0", Filename: "fx-1.0.tar.gz", Tarball: []byte("sdist")},
	}
	store := func(ns string) *Sandbox {
		s, err := New(nil, Options{Image: "verifymcp/sandbox@sha256:abc", HelperImage: "h", TreeCacheNamespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	def, a, b := store(""), store("test TestA host/1 1"), store("test TestB host/1 1")
	for name, target := range targets {
		t.Run(name, func(t *testing.T) {
			kd, ka, kb := def.treeKey(target), a.treeKey(target), b.treeKey(target)
			if want := legacyTreeKey(def.opts, target); kd != want {
				t.Errorf("default namespace key %s, want the stored key %s", kd, want)
			}
			if ka == kd || kb == kd || ka == kb {
				t.Errorf("keys: default %s, A %s, B %s; want three", kd, ka, kb)
			}
			if again := store(a.opts.TreeCacheNamespace).treeKey(target); again != ka {
				t.Errorf("namespace A: keys %s then %s; want one key within a namespace", ka, again)
			}
		})
	}
	// A namespace is quoted into the key: one cannot end with what would
	// begin another line of it.
	if x, y := store("n\nfile 00").treeKey(targets["npm"]), store("n").treeKey(targets["npm"]); x == y {
		t.Error("namespaces that differ gave one key")
	}
}
