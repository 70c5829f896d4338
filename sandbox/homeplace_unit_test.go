//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
	"time"
)

func testSeed() homeSeed {
	return homeSeed{UID: os.Getuid(), MTime: time.Now().Add(-72 * time.Hour).Unix(), Files: []seedFile{
		{Path: ".npmrc", Data: []byte("//registry.npmjs.org/:_authToken=canary\n"), Mode: 0o600},
		{Path: ".ssh/id_ed25519", Data: []byte("-----BEGIN OPENSSH PRIVATE KEY-----\n"), Mode: 0o600},
		{Path: ".config/gh/hosts.yml", Data: []byte("github.com:\n"), Mode: 0o644},
	}}
}

func seedSums(s homeSeed) map[string]seedSum {
	out := map[string]seedSum{}
	for _, f := range s.Files {
		out[f.Path] = sumOf(f.Data)
	}
	return out
}

func TestHomeSeedAndCompare(t *testing.T) {
	dir := t.TempDir()
	s := testSeed()
	if err := writeSeed(dir, s); err != nil {
		t.Fatal(err)
	}
	st, err := os.Lstat(filepath.Join(dir, ".ssh/id_ed25519"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 || time.Since(st.ModTime()) < 71*time.Hour {
		t.Errorf("seeded key: mode %v, modified %v", st.Mode(), st.ModTime())
	}
	if d, _ := os.Lstat(filepath.Join(dir, ".config")); d == nil || !d.IsDir() || time.Since(d.ModTime()) < 71*time.Hour {
		t.Errorf("seeded directory .config: %v", d)
	}
	if got, err := compareHome(dir, seedSums(s)); err != nil || len(got) != 0 {
		t.Fatalf("untouched home: %v, %v", got, err)
	}

	// What a package does to a home: every kind of change.
	if err := os.WriteFile(filepath.Join(dir, ".npmrc"), []byte("stolen\n"), 0o600); err != nil { // same path, other content
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, ".config/gh/hosts.yml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, ".config/gh/hosts.yml")); err != nil { // a link where a file was
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, ".ssh/id_ed25519.pub"), 0o600); err != nil { // must not hang the walk
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".cache/x"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".cache/x/blob"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := compareHome(dir, seedSums(s))
	if err != nil {
		t.Fatal(err)
	}
	want := []fileChange{
		{".cache/x/blob", "created"},
		{".config/gh/hosts.yml", "modified"},
		{".npmrc", "modified"},
		{".ssh/id_ed25519.pub", "created"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("changes %+v\nwant %+v", got, want)
	}
	if err := os.RemoveAll(filepath.Join(dir, ".ssh")); err != nil {
		t.Fatal(err)
	}
	got, _ = compareHome(dir, seedSums(s))
	if n := len(got); n == 0 || got[n-1] != (fileChange{".ssh/id_ed25519", "deleted"}) {
		t.Errorf("a deleted seed: %+v", got)
	}
}

// TestHomeSeedAgain: the script phase's home is seeded again before each
// PyPI step, after package code had it. A link it left where the seed
// goes is replaced, never written through.
func TestHomeSeedAgain(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	s := testSeed()
	if err := writeSeed(dir, s); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(outside, "victim")
	if err := os.WriteFile(victim, []byte("untouched"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, ".npmrc")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(dir, ".npmrc")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, ".ssh")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, ".ssh")); err != nil { // a linked directory
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, ".config/gh")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".config/gh"), []byte("a file where a directory was"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := writeSeed(dir, s); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "untouched" {
		t.Errorf("the seed was written through a link: %q", b)
	}
	if _, err := os.Stat(filepath.Join(outside, "id_ed25519")); err == nil {
		t.Error("the seed was written into a linked directory")
	}
	if got, err := compareHome(dir, seedSums(s)); err != nil || len(got) != 0 {
		t.Errorf("home seeded again: %v, %v", got, err)
	}
}

func TestHomeChangesBounded(t *testing.T) {
	var cs []fileChange
	for i := range maxFileEvents + 20 {
		cs = append(cs, fileChange{Path: fmt.Sprintf("junk/%04d", i), Op: "created"})
	}
	cs = append(cs, fileChange{Path: ".ssh/authorized_keys", Op: "created"})
	kept, more := keepHomeChanges(cs)
	if len(kept) != maxFileEvents || more != 21 {
		t.Fatalf("kept %d, more %d", len(kept), more)
	}
	if kept[0].Path != ".ssh/authorized_keys" {
		t.Errorf("a sensitive change was not kept first: %v", kept[0])
	}
}

func TestHomePart(t *testing.T) {
	for _, bad := range []string{"work-tree", "home-../x", "home-run/..", "tmp-run", ""} {
		if _, err := homePart(bad); err == nil {
			t.Errorf("homePart(%q) accepted", bad)
		}
	}
	if d, err := homePart("home-run"); err != nil || d != heldDir+"/home-run" {
		t.Errorf("homePart(home-run) = %q, %v", d, err)
	}
}
