//go:build docker

package sandbox

import (
	"context"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
)

// TestEnsureRefusesAChangedBinary: a helper binary that grew after it was
// loaded (an upgrade mid-command) fails the image build the engine reads
// it in, and no image is left under the loaded binary's tag.
func TestEnsureRefusesAChangedBinary(t *testing.T) {
	ctx := t.Context()
	cli, err := NewClient()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	// Trailing bytes of this test's own make the tag one no other image has.
	tail := make([]byte, 16)
	_, _ = rand.Read(tail)
	path := filepath.Join(t.TempDir(), "verifymcp")
	if err := os.WriteFile(path, append(data, tail...), 0o755); err != nil {
		t.Fatal(err)
	}
	h, err := LoadHelper(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = cli.ImageRemove(context.Background(), h.Ref, image.RemoveOptions{Force: true}) })
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.Write([]byte{0})
	f.Close()

	if err := h.Ensure(ctx, cli); !errors.Is(err, errHelperChanged) {
		t.Errorf("Ensure after the binary changed = %v, want errHelperChanged", err)
	}
	if _, err := cli.ImageInspect(ctx, h.Ref); !client.IsErrNotFound(err) {
		t.Errorf("image %s after a refused build: %v, want none", h.Ref, err)
	}
}
