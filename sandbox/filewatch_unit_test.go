//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"
)

func TestFileWatcherLook(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("work/notes.txt", "notes")
	write("work/keep.txt", "keep")
	write(".cache/x", "x")
	fw := fileWatcher{places: []watchedPlace{{dir, "/home/sandbox"}}, stamp: stampOf}
	if l := fw.look(); !l.Baseline || len(l.Changes) != 0 {
		t.Fatalf("first look %+v, want a baseline", l)
	}
	if l := fw.look(); l.Baseline || len(l.Changes) != 0 {
		t.Fatalf("unchanged look %+v", l)
	}
	time.Sleep(10 * time.Millisecond)
	// The same size, and the modification time set back: the change time
	// still moves.
	st, _ := os.Stat(filepath.Join(dir, "work/keep.txt"))
	write("work/keep.txt", "KEEP")
	if err := os.Chtimes(filepath.Join(dir, "work/keep.txt"), st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "work/notes.txt")); err != nil {
		t.Fatal(err)
	}
	write("work/new/file.md", "new")
	want := []fileChange{
		{"/home/sandbox/work/keep.txt", "modified"},
		{"/home/sandbox/work/new/file.md", "created"},
		{"/home/sandbox/work/notes.txt", "deleted"},
	}
	if l := fw.look(); !reflect.DeepEqual(l.Changes, want) || l.Incomplete != "" {
		t.Errorf("look %+v\nwant %+v", l, want)
	}
}

func TestFileWatcherBounds(t *testing.T) {
	before := map[string]fileStamp{}
	now := map[string]fileStamp{}
	for i := range maxFileChanges + 5 {
		now[filepath.Join("/tmp", string(rune('a'+i%26)), strconv.Itoa(i))] = fileStamp{size: 1}
	}
	ch, more := compareLooks(before, now)
	if len(ch) != maxFileChanges || more != 5 {
		t.Errorf("%d changes, %d more", len(ch), more)
	}
	fw := fileWatcher{places: []watchedPlace{{"/nonexistent-verifymcp", "/tmp"}}, stamp: stampOf}
	if l := fw.look(); l.Incomplete == "" {
		t.Errorf("a missing place: %+v, want it incomplete", l)
	}
}
