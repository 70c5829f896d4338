//go:build docker

package sandbox

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"testing"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
)

// TestPruneHelperImages: images of earlier builds are removed, the one to
// keep stays, and one a container still uses is left in place. The images
// carry a label of this test's own (the engine's real helper images are
// other tests'), so only what the test made is touched.
func TestPruneHelperImages(t *testing.T) {
	ctx := t.Context()
	cli, err := NewClient()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b)
	label := "verifymcp.test.prune=" + id
	var refs []string
	for _, v := range []string{"old", "older", "kept", "used", "dangling"} {
		ref := "verifymcp-prune-test:" + id + "-" + v
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		df := []byte("FROM scratch\nCOPY f /f\nLABEL " + label + "\nLABEL v=" + v + "\n")
		for _, f := range []struct {
			name string
			data []byte
		}{{"Dockerfile", df}, {"f", []byte(v + id)}} {
			if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.data))}); err != nil {
				t.Fatal(err)
			}
			_, _ = tw.Write(f.data)
		}
		_ = tw.Close()
		// Its own content and no build cache: a cached step is an image
		// another test's cleanup may remove while this build uses it
		// ("unable to find image" at COPY, seen once in CI).
		tags := []string{ref}
		if v == "dangling" { // an image of no tag, as a rebuilt one leaves
			tags = nil
		}
		resp, err := cli.ImageBuild(ctx, &buf, build.ImageBuildOptions{Tags: tags, Remove: true, ForceRemove: true, NoCache: true, Version: types.BuilderV1})
		if err != nil {
			t.Fatal(err)
		}
		err = drainBuild(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, ref)
	}
	// t.Context is cancelled before the cleanups run: they use their own.
	t.Cleanup(func() {
		ctx := context.Background()
		for _, r := range refs {
			_, _ = cli.ImageRemove(ctx, r, image.RemoveOptions{Force: true, PruneChildren: true})
		}
		imgs, _ := cli.ImageList(ctx, image.ListOptions{Filters: filters.NewArgs(filters.Arg("label", label))})
		for _, img := range imgs {
			_, _ = cli.ImageRemove(ctx, img.ID, image.RemoveOptions{Force: true, PruneChildren: true})
		}
	})
	// A stopped container of the "used" image keeps it.
	c, err := cli.ContainerCreate(ctx, &container.Config{Image: refs[3], Cmd: []string{"/f"}}, nil, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.ContainerRemove(context.Background(), c.ID, container.RemoveOptions{Force: true}) })

	n, err := pruneImages(ctx, cli, label, refs[2])
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Errorf("removed %d images, want the 2 old ones and the dangling one", n)
	}
	if imgs, err := cli.ImageList(ctx, image.ListOptions{Filters: filters.NewArgs(filters.Arg("label", label))}); err != nil || len(imgs) != 2 {
		t.Errorf("%d images left of the test's label (%v), want the kept and the used one", len(imgs), err)
	}
	left, err := cli.ImageList(ctx, image.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var tags []string
	for _, img := range left {
		tags = append(tags, img.RepoTags...)
	}
	for i, r := range refs[:4] {
		if want := i >= 2; slices.Contains(tags, r) != want {
			t.Errorf("%s present %v, want %v", r, !want, want)
		}
	}
}
