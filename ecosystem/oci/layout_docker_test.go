//go:build docker

package oci

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	v1 "github.com/opencontainers/image-spec/specs-go/v1"
)

// TestLayoutArchiveDockerLoad loads the archive into the real engine with
// `docker load -i` (the engine's image load, as the integrator calls it)
// and checks the engine's image ID is the configuration's digest: the
// engine decompressed the gzip layer, and both layers' diff_ids matched.
func TestLayoutArchiveDockerLoad(t *testing.T) {
	if err := exec.Command("docker", "info").Run(); err != nil {
		t.Fatalf("docker info: %v (this test needs a running engine)", err)
	}
	l := newTestLayout(t)
	img := l.image(runtime.GOARCH, "io.github.acme/load-test")
	idx := l.jsonBlob(v1.MediaTypeImageIndex, v1.Index{Versioned: specsVersioned(), MediaType: v1.MediaTypeImageIndex, Manifests: []v1.Descriptor{img.manifest}})
	l.index(idx)

	var buf bytes.Buffer
	got, err := LayoutArchive(l.dir, "", &buf)
	if err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(t.TempDir(), "image.tar")
	if err := os.WriteFile(archive, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("docker", "load", "-i", archive).CombinedOutput()
	if err != nil {
		t.Fatalf("docker load: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("docker", "image", "rm", got.ConfigDigest).CombinedOutput(); err != nil {
			t.Logf("docker image rm %s: %v: %s", got.ConfigDigest, err, out)
		}
	})
	if !strings.Contains(string(out), "Loaded image ID: "+got.ConfigDigest) {
		t.Errorf("docker load said %q, want the image ID %s", out, got.ConfigDigest)
	}
	id, err := exec.Command("docker", "image", "inspect", "--format", "{{.Id}} {{index .Config.Labels \""+OwnershipLabel+"\"}}", got.ConfigDigest).CombinedOutput()
	if err != nil {
		t.Fatalf("docker image inspect: %v: %s", err, id)
	}
	if want := got.ConfigDigest + " io.github.acme/load-test"; strings.TrimSpace(string(id)) != want {
		t.Errorf("docker image inspect = %q, want %q", strings.TrimSpace(string(id)), want)
	}
}
