package mcpbrun

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/ecosystem/mcpb"
	"github.com/verifymcp/verifymcp/pkgspec"
)

// tree writes an unpacked bundle: the benign fixture's manifest and
// files, then whatever add puts beside them.
func tree(t *testing.T, add func(t *testing.T, root, outside string)) string {
	t.Helper()
	base := t.TempDir()
	root, outside := filepath.Join(base, "bundle"), filepath.Join(base, "outside")
	manifest, err := os.ReadFile(filepath.Join("testdata", "src", "benign", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	for p, data := range map[string][]byte{
		filepath.Join(root, "manifest.json"):             manifest,
		filepath.Join(root, "server", "index.js"):        []byte("console.error('hi')\n"),
		filepath.Join(outside, "secret.txt"):             []byte("not the bundle's\n"),
		filepath.Join(root, "node_modules", "a", "x.js"): []byte("module.exports = 1\n"),
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if add != nil {
		add(t, root, outside)
	}
	return root
}

func symlink(old, new string) func(t *testing.T, root, outside string) {
	return func(t *testing.T, root, outside string) {
		t.Helper()
		old := strings.NewReplacer("ROOT", root, "OUTSIDE", outside).Replace(old)
		if err := os.Symlink(old, filepath.Join(root, new)); err != nil {
			t.Skipf("no symbolic links here: %v", err)
		}
	}
}

func TestZipDir(t *testing.T) {
	for _, tc := range []struct {
		name  string
		add   func(t *testing.T, root, outside string)
		lim   mcpb.Limits
		files []string // the bundle's files, when it is not refused
		bad   string   // what the refusal says
	}{
		{name: "plain_tree", files: []string{"manifest.json", "node_modules/a/x.js", "server/index.js"}},
		{name: "link_to_a_file_inside_is_that_file", add: symlink("server/index.js", "main.js"),
			files: []string{"main.js", "manifest.json", "node_modules/a/x.js", "server/index.js"}},
		{name: "link_leaving_the_directory_is_refused", add: symlink("OUTSIDE/secret.txt", "server/leak.txt"), bad: "leaves the bundle's directory"},
		{name: "relative_link_leaving_is_refused", add: symlink("../../outside/secret.txt", "server/leak.txt"), bad: "leaves the bundle's directory"},
		{name: "link_to_a_directory_is_refused", add: symlink("ROOT/node_modules", "nm"), bad: "not a plain file"},
		{name: "socket_is_refused", add: func(t *testing.T, root, _ string) {
			l, err := net.Listen("unix", filepath.Join(root, "s.sock"))
			if err != nil {
				t.Skipf("no unix sockets here: %v", err)
			}
			t.Cleanup(func() { _ = l.Close() })
		}, bad: "not a plain file"},
		{name: "manifest_as_a_link_is_refused", add: func(t *testing.T, root, outside string) {
			if err := os.Rename(filepath.Join(root, "manifest.json"), filepath.Join(outside, "manifest.json")); err != nil {
				t.Fatal(err)
			}
			symlink("OUTSIDE/manifest.json", "manifest.json")(t, root, outside)
		}, bad: "no manifest.json file"},
		{name: "over_the_files_limit", lim: mcpb.Limits{Files: 3}, bad: "more than 3 files"},
		{name: "over_the_bytes_limit", lim: mcpb.Limits{Bytes: 100}, bad: "more than 100 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := tree(t, tc.add)
			data, err := zipDir(root, tc.lim)
			if tc.bad != "" {
				if err == nil || !errors.Is(err, errDir) || !strings.Contains(err.Error(), tc.bad) {
					t.Fatalf("zipDir = %v, want a refusal saying %q", err, tc.bad)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := mcpb.Open(bytes.NewReader(data), int64(len(data)), mcpb.Limits{})
			if err != nil {
				t.Fatalf("mcpb.Open of the packed tree: %v", err)
			}
			if b.Manifest.Name != "verifymcp-fixture-benign" {
				t.Errorf("manifest name %q", b.Manifest.Name)
			}
			var got []string
			var buf bytes.Buffer
			if err := b.WriteTar(&buf, "", 0, 0); err != nil {
				t.Fatal(err)
			}
			got = tarFiles(t, buf.Bytes())
			if !slices.Equal(got, tc.files) {
				t.Errorf("files %v, want %v", got, tc.files)
			}
			again, err := zipDir(root, tc.lim)
			if err != nil || !bytes.Equal(again, data) {
				t.Errorf("a second packing of the same tree differs (%v): its digest would not be the tree's", err)
			}
		})
	}
}

// TestResolveDirectory: mcpb:DIR runs the unpacked bundle as its .mcpb
// would run, noting where its digest comes from.
func TestResolveDirectory(t *testing.T) {
	dir := filepath.Join("testdata", "src", "benign")
	rel, err := Ecosystem{}.Resolve(context.Background(), "mcpb:"+dir)
	if err != nil {
		t.Fatal(err)
	}
	if rel.Name != "verifymcp-fixture-benign" || rel.Source != "directory" || rel.Kind != "bundle" || !strings.HasPrefix(rel.Integrity, "sha256:") {
		t.Errorf("release %+v", rel)
	}
	p, ok := rel.Shipped.(*prepare)
	if !ok || !slices.Contains(p.notes, dirNote) {
		t.Errorf("notes %v, want the note on the unpacked tree's digest", p.notes)
	}
	if _, _, err := (Ecosystem{}).Parse("mcpb:" + dir); err != nil {
		t.Errorf("Parse(mcpb:%s): %v", dir, err)
	}
	bad := tree(t, symlink("OUTSIDE/secret.txt", "leak.txt"))
	if _, err := (Ecosystem{}).Resolve(context.Background(), "mcpb:"+bad); !errors.Is(err, pkgspec.ErrBadTarget) || !errors.Is(err, errDir) {
		t.Errorf("a tree with a link out: %v, want a bad target", err)
	}
}

// tarFiles lists the plain files of a tar, sorted.
func tarFiles(t *testing.T, data []byte) []string {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(data))
	var out []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			out = append(out, strings.TrimPrefix(h.Name, "./"))
		}
	}
	slices.Sort(out)
	return out
}
