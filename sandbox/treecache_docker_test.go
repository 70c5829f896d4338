//go:build docker

package sandbox_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/volume"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/sandbox"
)

// inVolume runs script as the sandbox user in a container that mounts vol
// at /work/tree, and removes the container.
func inVolume(t *testing.T, vol, script string) {
	t.Helper()
	ctx := context.Background()
	c, err := engine.ContainerCreate(ctx, &container.Config{Image: imageRef, User: "65534:65534", Cmd: []string{"sh", "-c", script}},
		&container.HostConfig{NetworkMode: "none", Mounts: []mount.Mount{{Type: mount.TypeVolume, Source: vol, Target: "/work/tree"}}}, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	defer engine.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true})
	wait, errc := engine.ContainerWait(ctx, c.ID, container.WaitConditionNextExit)
	if err := engine.ContainerStart(ctx, c.ID, container.StartOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case w := <-wait:
		if w.StatusCode != 0 {
			t.Fatalf("%s: exit %d", script, w.StatusCode)
		}
	case err := <-errc:
		t.Fatal(err)
	case <-time.After(time.Minute):
		t.Fatal("timed out")
	}
}

func treeStore(t *testing.T) *sandbox.Sandbox {
	return newSandbox(t, func(o *sandbox.Options) { o.TreeCacheDir = t.TempDir() })
}

// TestTreeCacheSharedByStores: a tree one data directory fetched is a hit
// for another, empty one; a tree whose marker is missing (a fill cut short
// while its filler lives) is neither mounted nor removed; one left by a
// filler that is gone is removed and filled again.
func TestTreeCacheSharedByStores(t *testing.T) {
	f := fixture{Name: "shared-tree"}
	first, _ := scanFixture(t, treeStore(t), f)
	if first.Sandbox.Outcome != evidence.OutcomeOK || first.Install.TreeCache == nil || first.Install.TreeCache.Hit {
		t.Fatalf("first store: outcome %s, tree cache %+v; want a miss", first.Sandbox.Outcome, first.Install.TreeCache)
	}
	key := first.Install.TreeCache.Key
	vol := "verifymcp-tree-" + key
	t.Cleanup(func() { _ = engine.VolumeRemove(context.Background(), vol, true) })

	second, _ := scanFixture(t, treeStore(t), f)
	if tc := second.Install.TreeCache; tc == nil || !tc.Hit || tc.FetchedBy != first.Install.TreeCache.FetchedBy || second.Install.LockfileSHA256 != first.Install.LockfileSHA256 {
		t.Fatalf("second store: tree cache %+v, lockfile %s; want a hit on the first store's tree %s", tc, second.Install.LockfileSHA256, first.Install.LockfileSHA256)
	}

	// The fill cut short, its filler (this process, which made the
	// volume) still alive: the marker is gone and junk is left.
	inVolume(t, vol, "rm /work/tree/"+sandbox.TreeMarker+" && echo half > /work/tree/half-filled")
	third, _ := scanFixture(t, treeStore(t), f)
	if third.Sandbox.Outcome != evidence.OutcomeOK || third.Install.TreeCache != nil {
		t.Fatalf("incomplete tree, filler alive: outcome %s, tree cache %+v; want ok, not from the cache", third.Sandbox.Outcome, third.Install.TreeCache)
	}
	if v, err := engine.VolumeInspect(context.Background(), vol); err != nil || v.Labels[sandbox.LabelTreeKey] != key {
		t.Fatalf("the incomplete volume was removed while its filler lives: %v", err)
	}

	// A filler that is gone: the volume is made again by it (as a killed
	// fetch leaves it), half filled.
	if err := engine.VolumeRemove(context.Background(), vol, true); err != nil {
		t.Fatal(err)
	}
	if _, err := engine.VolumeCreate(context.Background(), volume.CreateOptions{Name: vol, Labels: map[string]string{
		sandbox.LabelCache: "tree", sandbox.LabelTreeKey: key, sandbox.LabelOwner: mustHost(t) + "/999999999"}}); err != nil {
		t.Fatal(err)
	}
	inVolume(t, vol, "echo half > /work/tree/half-filled")
	fourth, _ := scanFixture(t, treeStore(t), f)
	if tc := fourth.Install.TreeCache; fourth.Sandbox.Outcome != evidence.OutcomeOK || tc == nil || tc.Hit {
		t.Fatalf("incomplete tree, filler gone: outcome %s, tree cache %+v; want ok and filled again", fourth.Sandbox.Outcome, tc)
	}
	inVolume(t, vol, "test ! -e /work/tree/half-filled && test -s /work/tree/"+sandbox.TreeMarker)
	fifth, _ := scanFixture(t, treeStore(t), f)
	if tc := fifth.Install.TreeCache; tc == nil || !tc.Hit || tc.FetchedBy != fourth.Install.TreeCache.FetchedBy {
		t.Errorf("after the refill: tree cache %+v, want a hit on %s", tc, fourth.Install.TreeCache.FetchedBy)
	}
}

func mustHost(t *testing.T) string {
	h, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return h
}
