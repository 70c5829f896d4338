package mcpb_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verifymcp/verifymcp/ecosystem/mcpb"
)

const validManifest = `{"manifest_version": "0.3", "name": "x", "version": "1.0.0", "description": "d",
 "author": {"name": "a"}, "server": {"type": "node", "entry_point": "server/index.js"}}`

// file is a zip entry to build.
type file struct {
	name, body string
	mode       fs.FileMode // 0: 0644
	store      bool        // stored, not deflated
}

func buildZip(t testing.TB, files []file) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, f := range files {
		h := &zip.FileHeader{Name: f.name, Method: zip.Deflate}
		if f.store {
			h.Method = zip.Store
		}
		mode := f.mode
		if mode == 0 {
			mode = 0o644
		}
		h.SetMode(mode)
		fw, err := w.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(fw, f.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func open(data []byte, lim mcpb.Limits) (*mcpb.Bundle, error) {
	return mcpb.Open(bytes.NewReader(data), int64(len(data)), lim)
}

func TestOpenRefuses(t *testing.T) {
	m := file{name: "manifest.json", body: validManifest}
	for _, tc := range []struct {
		name  string
		data  []byte
		lim   mcpb.Limits
		cause string
	}{
		{"not a zip", []byte("PK\x03\x04 this is not a zip archive at all"), mcpb.Limits{}, "not a zip"},
		{"empty file", nil, mcpb.Limits{}, "not a zip"},
		{"no manifest", buildZip(t, []file{{name: "server/index.js"}}), mcpb.Limits{}, "no manifest.json"},
		{"manifest not at the root", buildZip(t, []file{{name: "sub/manifest.json", body: validManifest}}), mcpb.Limits{}, "no manifest.json"},
		{"manifest as a directory", buildZip(t, []file{{name: "manifest.json/", mode: fs.ModeDir | 0o755}}), mcpb.Limits{}, "no manifest.json"},
		{"manifest not JSON", buildZip(t, []file{{name: "manifest.json", body: "{"}}), mcpb.Limits{}, "invalid manifest"},
		{"manifest without a name", buildZip(t, []file{{name: "manifest.json", body: strings.Replace(validManifest, `"name": "x",`, "", 1)}}), mcpb.Limits{}, "name: missing"},
		{"absolute path", buildZip(t, []file{m, {name: "/etc/passwd"}}), mcpb.Limits{}, "absolute path"},
		{"dot-dot", buildZip(t, []file{m, {name: "server/../../escape"}}), mcpb.Limits{}, "'..'"},
		{"backslash dot-dot", buildZip(t, []file{m, {name: `..\escape`}}), mcpb.Limits{}, "'..'"},
		{"backslash absolute", buildZip(t, []file{m, {name: `\Windows\x`}}), mcpb.Limits{}, "absolute path"},
		{"drive letter", buildZip(t, []file{m, {name: `C:\x`}}), mcpb.Limits{}, "drive-letter"},
		{"duplicate", buildZip(t, []file{m, {name: "a.js"}, {name: "a.js"}}), mcpb.Limits{}, "repeats"},
		{"duplicate by case", buildZip(t, []file{m, {name: "README.md"}, {name: "readme.md"}}), mcpb.Limits{}, "repeats"},
		{"duplicate after cleaning", buildZip(t, []file{m, {name: "a/b.js"}, {name: "a//./b.js"}}), mcpb.Limits{}, "repeats"},
		{"duplicate manifest", buildZip(t, []file{m, {name: "Manifest.json", body: validManifest}}), mcpb.Limits{}, "repeats"},
		{"file below a file", buildZip(t, []file{m, {name: "a/b/c"}, {name: "A/b"}}), mcpb.Limits{}, "below the file"},
		{"file below a file listed after it", buildZip(t, []file{m, {name: "a"}, {name: "a/b/c"}}), mcpb.Limits{}, "below the file"},
		{"implied directories count", buildZip(t, []file{m, {name: "a/b/c/d/e"}}), mcpb.Limits{Files: 4}, "more than 4 entries with the directories"},
		{"name too long", buildZip(t, []file{m, {name: strings.Repeat("n", 1025)}}), mcpb.Limits{}, "over 1024 bytes"},
		{"name too deep", buildZip(t, []file{m, {name: strings.Repeat("d/", 128) + "f"}}), mcpb.Limits{}, "over 128 components"},
		{"symlink", buildZip(t, []file{m, {name: "link", body: "/etc/shadow", mode: fs.ModeSymlink | 0o777}}), mcpb.Limits{}, "symbolic link"},
		{"device", buildZip(t, []file{m, {name: "dev", mode: fs.ModeDevice | 0o644}}), mcpb.Limits{}, "not a file or directory"},
		{"named pipe", buildZip(t, []file{m, {name: "fifo", mode: fs.ModeNamedPipe | 0o644}}), mcpb.Limits{}, "not a file or directory"},
		{"too many entries", buildZip(t, []file{m, {name: "a"}, {name: "b"}}), mcpb.Limits{Files: 2}, "3 entries"},
		{"too many bytes", buildZip(t, []file{m, {name: "a", body: strings.Repeat("x", 600)}, {name: "b", body: strings.Repeat("y", 600)}}), mcpb.Limits{Bytes: 1200}, "byte limit"},
		{"compression bomb", buildZip(t, []file{m, {name: "zeros", body: strings.Repeat("\x00", 8<<20)}}), mcpb.Limits{}, "inflates more than 200 times"},
		{"size header that lies", lyingZip(t), mcpb.Limits{}, "zip: not a valid zip file"},
		{"footer without a block", append(buildZip(t, []file{m}), "MCPB_SIG_V1\xff\xff\xff\xffMCPB_SIG_END"...), mcpb.Limits{}, "without a signature block"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := open(tc.data, tc.lim)
			if !errors.Is(err, mcpb.ErrMalformed) {
				t.Fatalf("Open = %v, %v; want ErrMalformed", b, err)
			}
			if !strings.Contains(err.Error(), tc.cause) {
				t.Errorf("Open: %v; want it to say %q", err, tc.cause)
			}
		})
	}
}

// lyingZip has an entry whose header says 10 bytes and which inflates to a
// megabyte.
func lyingZip(t *testing.T) []byte {
	t.Helper()
	body := strings.Repeat("a", 1<<20)
	var deflated bytes.Buffer
	{
		var tmp bytes.Buffer
		w := zip.NewWriter(&tmp)
		fw, _ := w.CreateHeader(&zip.FileHeader{Name: "x", Method: zip.Deflate})
		io.WriteString(fw, body)
		w.Close()
		r, _ := zip.NewReader(bytes.NewReader(tmp.Bytes()), int64(tmp.Len()))
		raw, _ := r.File[0].OpenRaw()
		io.Copy(&deflated, raw)
	}
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	mw, _ := w.Create("manifest.json")
	io.WriteString(mw, validManifest)
	h := &zip.FileHeader{Name: "x", Method: zip.Deflate, CompressedSize64: uint64(deflated.Len()), UncompressedSize64: 10}
	fw, err := w.CreateRaw(h)
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(deflated.Bytes())
	w.Close()
	return buf.Bytes()
}

func TestOpen(t *testing.T) {
	const lock = `{"lockfileVersion": 3, "packages": {"node_modules/zod": {"version": "3.25.0"}}}`
	data := buildZip(t, []file{
		{name: "manifest.json", body: validManifest},
		{name: "./server/", mode: fs.ModeDir | 0o755},
		{name: "server/index.js", body: "console.log(1)\n"},
		{name: `server\lib\util.js`, body: "x", store: true}, // a Windows packer's separators
		{name: "bin/tool", body: "#!/bin/sh\n", mode: 0o4755},
		{name: "data/", mode: fs.ModeDir | 0o1777},
		{name: "package-lock.json", body: lock},
	})
	b, err := open(data, mcpb.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if b.Digest != "sha256:"+hex.EncodeToString(sum[:]) || b.Size != int64(len(data)) {
		t.Errorf("Digest, Size = %s, %d", b.Digest, b.Size)
	}
	if b.Files != 5 || b.Unpacked != int64(len(validManifest)+15+1+10+len(lock)) {
		t.Errorf("Files, Unpacked = %d, %d", b.Files, b.Unpacked)
	}
	if b.Manifest.Name != "x" || string(b.RawManifest) != validManifest {
		t.Errorf("Manifest = %+v", b.Manifest)
	}
	if b.Signature == nil || b.Signature.Present {
		t.Errorf("Signature = %+v, want not present", b.Signature)
	}
	if got := (mcpb.Ecosystem{}).TreePurls(b.Lockfile(), ""); !cmp.Equal(got, []string{"pkg:npm/zod@3.25.0"}) {
		t.Errorf("TreePurls(Lockfile) = %v", got)
	}

	var buf bytes.Buffer
	if err := b.WriteTar(&buf, "/ext/", 1000, 1001); err != nil {
		t.Fatal(err)
	}
	type hdr struct {
		Name     string
		Type     byte
		Mode     int64
		Uid, Gid int
		Body     string
	}
	var got []hdr
	tr := tar.NewReader(&buf)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		got = append(got, hdr{h.Name, h.Typeflag, h.Mode, h.Uid, h.Gid, string(body)})
	}
	d := func(name string) hdr { return hdr{name, tar.TypeDir, 0o755, 1000, 1001, ""} }
	f := func(name string, mode int64, body string) hdr { return hdr{name, tar.TypeReg, mode, 1000, 1001, body} }
	want := []hdr{
		d("ext/"),
		f("ext/manifest.json", 0o644, validManifest),
		d("ext/server/"),
		f("ext/server/index.js", 0o644, "console.log(1)\n"),
		d("ext/server/lib/"),
		f("ext/server/lib/util.js", 0o644, "x"),
		d("ext/bin/"),
		f("ext/bin/tool", 0o755, "#!/bin/sh\n"),
		d("ext/data/"),
		f("ext/package-lock.json", 0o644, lock),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tar (-want +got):\n%s", diff)
	}
}

func TestLockfile(t *testing.T) {
	hidden := `{"lockfileVersion": 3, "packages": {"node_modules/a": {"version": "1.0.0"}}}`
	b, err := open(buildZip(t, []file{
		{name: "manifest.json", body: validManifest},
		{name: "node_modules/.package-lock.json", body: hidden},
	}), mcpb.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if string(b.Lockfile()) != hidden {
		t.Errorf("Lockfile = %q, want node_modules/.package-lock.json", b.Lockfile())
	}
	b, err = open(buildZip(t, []file{{name: "manifest.json", body: validManifest}}), mcpb.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Lockfile() != nil {
		t.Errorf("Lockfile = %q, want none", b.Lockfile())
	}
}
