package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestTreeDigester: the same tree digests the same; a changed, an added
// and a removed file change the digest and are named; a link is digested
// by its target.
func TestTreeDigester(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("lib/pkg/__init__.py", "x = 1\n")
	write("lib/pkg/util.py", "y = 2\n")
	write("bin/tool", "#!/bin/sh\n")
	if err := os.Symlink("/usr/bin/python3", filepath.Join(dir, "bin/python")); err != nil {
		t.Fatal(err)
	}
	var d treeDigester
	first := d.digest(dir)
	if first.Error != "" || first.Files != 4 || first.Compared {
		t.Fatalf("first digest %+v, want 4 files and nothing compared", first)
	}
	if again := d.digest(dir); again.Digest != first.Digest || len(again.Changed) != 0 || !again.Compared {
		t.Fatalf("unchanged tree: %+v, want the same digest and no change", again)
	}
	write("lib/pkg/__init__.py", "x = 'rewritten'\n")
	write("lib/pkg/new.py", "z = 3\n")
	if err := os.Remove(filepath.Join(dir, "lib/pkg/util.py")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "bin/python")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/tmp/other", filepath.Join(dir, "bin/python")); err != nil {
		t.Fatal(err)
	}
	changed := d.digest(dir)
	want := []string{"bin/python", "lib/pkg/__init__.py", "lib/pkg/new.py", "lib/pkg/util.py"}
	if changed.Digest == first.Digest || !slices.Equal(changed.Changed, want) {
		t.Errorf("changed tree: %+v, want a new digest naming %v", changed, want)
	}
	if missing := (&treeDigester{}).digest(filepath.Join(dir, "absent")); missing.Error == "" {
		t.Errorf("a missing tree digested: %+v", missing)
	}
}
