//go:build docker

package sandbox_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The PyPI fixtures' archives, built in the tests: a wheel is a zip of the
// module and a dist-info (METADATA, WHEEL, entry_points.txt, RECORD); an
// sdist a tar.gz of a directory NAME-VERSION/.

// member is one file of a fixture archive, by its path in the archive.
type member struct{ name, data string }

// pyWheel writes a py3-none-any wheel of the module dir/mod (a package
// whose __init__.py is server), dist-info METADATA built from meta (lines
// after Name and Version), one console script named like the distribution,
// the extra members, and a RECORD of every member followed by
// recordExtra. It returns the wheel's path and bytes.
func pyWheel(t *testing.T, mod, version, server, meta string, extra []member, recordExtra string) (string, []byte) {
	t.Helper()
	dist := strings.ReplaceAll(mod, "_", "-")
	di := mod + "-" + version + ".dist-info/"
	files := append([]member{
		{mod + "/__init__.py", server},
		{di + "METADATA", "Metadata-Version: 2.1\nName: " + dist + "\nVersion: " + version + "\n" + meta},
		{di + "WHEEL", "Wheel-Version: 1.0\nGenerator: verifymcp-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
		{di + "entry_points.txt", "[console_scripts]\n" + dist + " = " + mod + ":main\n"},
	}, extra...)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	var record strings.Builder
	for _, f := range files {
		w, err := zw.Create(f.name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(f.data)); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(f.data))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f.name, base64.RawURLEncoding.EncodeToString(sum[:]), len(f.data))
	}
	record.WriteString(di + "RECORD,,\n" + recordExtra)
	w, err := zw.Create(di + "RECORD")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte(record.String())); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), mod+"-"+version+"-py3-none-any.whl")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, buf.Bytes()
}

// pySdist writes filename, a tar.gz of the members as named (unchecked:
// a hostile fixture names what it likes), and returns its path.
func pySdist(t *testing.T, filename string, files []member) string {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.data)), ModTime: time.Unix(1700000000, 0), Format: tar.FormatPAX}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(f.data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), filename)
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
