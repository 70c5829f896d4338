// Package testnpm builds npm package tarballs for tests.
package testnpm

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/base64"
	"fmt"
	"os"
	"testing"
	"time"
)

// Tarball writes to path a minimal npm tarball of name@1.0.0, whose
// package.json declares a bin server.js, and returns its SRI integrity.
func Tarball(t testing.TB, path, name string) string {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	body := fmt.Sprintf(`{"name":%q,"version":"1.0.0","bin":{"s":"server.js"}}`, name)
	if err := tw.WriteHeader(&tar.Header{Name: "package/package.json", Mode: 0o644, Size: int64(len(body)), ModTime: time.Unix(1e9, 0)}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write([]byte(body)); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha512.Sum512(buf.Bytes())
	return "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
}
