package ocirun_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/verifymcp/verifymcp/ecosystem/oci"
	"github.com/verifymcp/verifymcp/ecosystem/oci/ocirun"
)

// TestParseLayoutAbsolute: a layout directory is named by its absolute
// path, its selector kept; other references are their own refs.
func TestParseLayoutAbsolute(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	digest := "sha256:" + "9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e"
	for raw, want := range map[string]struct{ path, tag, digest string }{
		"oci-layout:img":           {filepath.Join(wd, "img") + "/", "", ""},
		"oci-layout:./img:1.0":     {filepath.Join(wd, "img") + "/", "1.0", ""},
		"oci-layout:img@" + digest: {filepath.Join(wd, "img") + "/", "", digest},
		"oci-layout:/srv/img":      {"/srv/img", "", ""},
		"docker-daemon:acme/x:1":   {"", "1", ""},
	} {
		ref, ok, err := ocirun.Ecosystem{}.Parse(raw)
		if !ok || err != nil {
			t.Fatalf("Parse(%q) = %q, %v, %v", raw, ref, ok, err)
		}
		r, err := oci.ParseRef(ref)
		if err != nil {
			t.Fatalf("Parse(%q) = %q, which does not parse: %v", raw, ref, err)
		}
		if filepath.Clean(r.Path) != filepath.Clean(want.path) && want.path != "" || r.Tag != want.tag || r.Digest != want.digest {
			t.Errorf("Parse(%q) = %q: path %q tag %q digest %q; want %+v", raw, ref, r.Path, r.Tag, r.Digest, want)
		}
	}
}
