package sandbox

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/sandbox/image"
)

var testPythons = []Python{{Version: "3.11.2", Image: "img:py311"}, {Version: "3.13.5", Image: "img:py313"}}

func TestChoosePython(t *testing.T) {
	tests := []struct {
		name, requires string
		ok             bool
		want, rule     string
		newer          string // the interpreter to try when the choice cannot resolve the tree
	}{
		{"needs 3.12 or newer: 3.13", ">=3.12", true, "3.13.5", "newest", ""},
		{"3.10 up to 3.12: 3.11", ">=3.10,<3.12", true, "3.11.2", "the default", ""},
		{"both fit: the default", ">=3.10", true, "3.11.2", "the default", "3.13.5"},
		{"needs 3.11.5 or newer: not bookworm's 3.11.2", ">=3.11.5", true, "3.13.5", "newest", ""},
		{"compatible release", "~=3.11.0", true, "3.11.2", "the default", ""},
		{"exclusion", ">=3.10, !=3.13.*", true, "3.11.2", "the default", ""},
		{"trailing comma, as packaging reads it", ">=3.12,", true, "3.13.5", "newest", ""},
		{"older than any offered", "<3.9", false, "", "", ""},
		{"newer than any offered", ">=3.14", false, "", "", ""},
		{"absent: the default", "", true, "3.11.2", "no Requires-Python", "3.13.5"},
		{"blank: the default", "  ", true, "3.11.2", "no Requires-Python", "3.13.5"},
		{"malformed: the default, uv judges", ">=3.10 <4", true, "3.11.2", "not a PEP 440", ""},
		{"not an operator: the default", "python3", true, "3.11.2", "not a PEP 440", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := choosePython(tt.requires, testPythons)
			if c.ok != tt.ok {
				t.Fatalf("ok = %v, want %v (%+v)", c.ok, tt.ok, c)
			}
			if !c.ok {
				return
			}
			if c.py.Version != tt.want || !strings.Contains(c.rule, tt.rule) {
				t.Errorf("chose %s (%q), want %s (%q)", c.py.Version, c.rule, tt.want, tt.rule)
			}
			if got := ""; c.newer != nil || tt.newer != "" {
				if c.newer != nil {
					got = c.newer.Version
				}
				if got != tt.newer {
					t.Errorf("newer %q, want %q", got, tt.newer)
				}
			}
		})
	}
}

func TestNoPythonError(t *testing.T) {
	got := noPythonError("old==1.0", "<3.9", testPythons)
	want := "old==1.0 requires Python <3.9, which is satisfied by none of the sandbox's Pythons (CPython 3.11.2, 3.13.5)"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestRecipePythons(t *testing.T) {
	all := Pythons()
	if len(all) < 2 || all[0].Image != image.Ref() || !strings.HasPrefix(all[0].Version, "3.11.") {
		t.Fatalf("Pythons() = %+v: want the default 3.11 image first", all)
	}
	if !strings.HasPrefix(all[len(all)-1].Version, "3.13.") {
		t.Errorf("Pythons() = %+v: want trixie's 3.13 offered", all)
	}
}

func TestLocalRequiresPython(t *testing.T) {
	var wb bytes.Buffer
	zw := zip.NewWriter(&wb)
	w, _ := zw.Create("p-1.0.dist-info/METADATA")
	w.Write([]byte("Metadata-Version: 2.1\nName: p\nVersion: 1.0\nRequires-Python: >=3.12\n\nRequires-Python: <3\n"))
	zw.Close()
	if got := localRequiresPython("p-1.0-py3-none-any.whl", wb.Bytes()); got != ">=3.12" {
		t.Errorf("wheel: %q", got)
	}
	var sb bytes.Buffer
	gz := gzip.NewWriter(&sb)
	tw := tar.NewWriter(gz)
	meta := []byte("Metadata-Version: 2.1\nName: p\nVersion: 1.0\nRequires-Python: <3.9\n")
	tw.WriteHeader(&tar.Header{Name: "p-1.0/PKG-INFO", Mode: 0o644, Size: int64(len(meta))})
	tw.Write(meta)
	tw.Close()
	gz.Close()
	if got := localRequiresPython("p-1.0.tar.gz", sb.Bytes()); got != "<3.9" {
		t.Errorf("sdist: %q", got)
	}
	if got := localRequiresPython("p.whl", []byte("not a zip")); got != "" {
		t.Errorf("garbage: %q", got)
	}
}
