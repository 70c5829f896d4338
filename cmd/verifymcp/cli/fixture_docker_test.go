//go:build docker

package cli_test

import (
	"archive/tar"
	"compress/gzip"
	"os"
	"testing"
	"time"

	"github.com/docker/docker/api/types/volume"
)

func volumeOpts(name string, labels map[string]string) volume.CreateOptions {
	return volume.CreateOptions{Name: name, Labels: labels}
}

// writeHangFixture writes an npm tarball of a server that reads stdin and
// never answers.
func writeHangFixture(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	files := []struct {
		name, body string
		mode       int64
	}{
		{"package/package.json", `{"name":"verifymcp-fixture-hang-cli","version":"1.0.0","bin":{"hang":"server.js"}}`, 0o644},
		{"package/server.js", "#!/usr/bin/env node\nprocess.stdin.resume();\nsetInterval(() => {}, 1000);\n", 0o755},
	}
	for _, fl := range files {
		tw.WriteHeader(&tar.Header{Name: fl.name, Mode: fl.mode, Size: int64(len(fl.body)), ModTime: time.Unix(1e9, 0)})
		tw.Write([]byte(fl.body))
	}
	tw.Close()
	gz.Close()
}
