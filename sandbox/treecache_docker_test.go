//go:build docker

package sandbox_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/volume"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/supplychain"
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

// memoryTarget is a small real npm package, resolved on the registry, and
// its cached tree volume in the test's namespace (so none before the
// test, whoever else on this engine cached the package), removed after it.
func memoryTarget(t *testing.T) (sandbox.Target, string) {
	t.Helper()
	v, err := supplychain.NewNPM(nil, "").Resolve(context.Background(), "@modelcontextprotocol/server-memory", "2026.8.31")
	if err != nil {
		t.Fatalf("resolve: %v", err)
	}
	target := sandbox.Target{Name: v.Name, Version: v.Version, Integrity: v.Integrity}
	vol := "verifymcp-tree-" + realStore(t, t.TempDir()).TreeKey(target)
	t.Cleanup(func() { _ = engine.VolumeRemove(context.Background(), vol, true) })
	return target, vol
}

// realStore is a sandbox whose tree-cache index is dir: one data
// directory.
func realStore(t *testing.T, dir string) *sandbox.Sandbox {
	return newSandbox(t, func(o *sandbox.Options) { o.Memory = 512 << 20; o.HandshakeTimeout = 30e9; o.TreeCacheDir = dir })
}

// scanStore scans target from a store whose index is dir and checks that
// the run left nothing on the engine.
func scanStore(t *testing.T, dir string, target sandbox.Target) *sandbox.Result {
	t.Helper()
	id := runID(t)
	start := time.Now()
	res, err := realStore(t, dir).Scan(context.Background(), id, target)
	if err != nil {
		t.Fatalf("scan: %v", err)
	}
	assertClean(t, id)
	t.Logf("run %s: outcome %s, tree cache %+v, fetch %d ms, scan %s", id, res.Outcome, res.Install.TreeCache, res.Install.FetchMS, time.Since(start).Round(time.Millisecond))
	return res
}

// TestTreeCacheRealPackageSharedByStores: a real package fetched by one
// data directory is a hit for a fresh, empty one, with the same lockfile;
// the volume carries the marker.
func TestTreeCacheRealPackageSharedByStores(t *testing.T) {
	target, vol := memoryTarget(t)
	first := scanStore(t, t.TempDir(), target)
	if first.Outcome != evidence.OutcomeOK || first.Install.TreeCache == nil || first.Install.TreeCache.Hit {
		t.Fatalf("store A: outcome %s, tree cache %+v; want ok and a miss", first.Outcome, first.Install.TreeCache)
	}
	inVolume(t, vol, "test -s /work/tree/"+sandbox.TreeMarker)
	second := scanStore(t, t.TempDir(), target)
	if tc := second.Install.TreeCache; second.Outcome != evidence.OutcomeOK || tc == nil || !tc.Hit || tc.Key != first.Install.TreeCache.Key || tc.FetchedBy != first.Install.TreeCache.FetchedBy {
		t.Fatalf("store B: outcome %s, tree cache %+v; want a hit on store A's tree %+v", second.Outcome, tc, first.Install.TreeCache)
	}
	if second.Install.LockfileSHA256 == "" || second.Install.LockfileSHA256 != first.Install.LockfileSHA256 {
		t.Errorf("lockfile: store B %q, store A %q; want the same", second.Install.LockfileSHA256, first.Install.LockfileSHA256)
	}
}

// TestTreeCacheHalfFilledNeverMounted: a volume of the key with junk and
// no marker (a fetch killed mid-way, or one being filled by a live
// process) is neither a hit nor mounted nor removed: the scan fetches on
// its own and ends ok, and the volume is as it was.
func TestTreeCacheHalfFilledNeverMounted(t *testing.T) {
	target, vol := memoryTarget(t)
	key := realStore(t, t.TempDir()).TreeKey(target)
	ctx := context.Background()
	if _, err := engine.VolumeCreate(ctx, volume.CreateOptions{Name: vol, Labels: map[string]string{
		sandbox.LabelCache: "tree", sandbox.LabelTreeKey: key,
		sandbox.LabelOwner: mustHost(t) + "/" + strconv.Itoa(os.Getpid()), sandbox.LabelRun + ".filler": "killed-mid-fetch"}}); err != nil {
		t.Fatal(err)
	}
	inVolume(t, vol, "mkdir -p /work/tree/node_modules/half && echo half > /work/tree/node_modules/half/index.js && echo '{}' > /work/tree/package.json")
	// CreatedAt of a local volume moves when it is written: take it after
	// the junk, to see that nothing wrote to it nor made it again.
	made, err := engine.VolumeInspect(ctx, vol)
	if err != nil {
		t.Fatal(err)
	}

	res := scanStore(t, t.TempDir(), target)
	if res.Outcome != evidence.OutcomeOK || res.Install.TreeCache != nil {
		t.Fatalf("outcome %s, tree cache %+v; want ok and not from the cache", res.Outcome, res.Install.TreeCache)
	}
	if res.Install.LockfileSHA256 == "" {
		t.Error("the scan's own fetch gave no lockfile")
	}
	v, err := engine.VolumeInspect(ctx, vol)
	if err != nil || v.CreatedAt != made.CreatedAt || v.Labels[sandbox.LabelRun+".filler"] != "killed-mid-fetch" {
		t.Fatalf("the half-filled volume was removed or made again: %v, %+v", err, v)
	}
	inVolume(t, vol, "test -s /work/tree/node_modules/half/index.js && test ! -e /work/tree/"+sandbox.TreeMarker+" && test ! -e /work/tree/package-lock.json")
}

// TestTreeCacheConcurrentFillers: two fresh stores scan an uncached
// package at once; exactly one fills the cache volume, the other fetches
// on its own, both end ok, and a third store hits the filler's tree.
func TestTreeCacheConcurrentFillers(t *testing.T) {
	target, _ := memoryTarget(t)
	var wg sync.WaitGroup
	ids := []string{runID(t), runID(t)}
	results := make([]*sandbox.Result, 2)
	errs := make([]error, 2)
	for i := range 2 {
		s := realStore(t, t.TempDir())
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = s.Scan(context.Background(), ids[i], target)
		}()
	}
	wg.Wait()
	var filler *evidence.TreeCache
	for i, res := range results {
		if errs[i] != nil {
			t.Fatalf("scan %d: %v", i, errs[i])
		}
		assertClean(t, ids[i])
		t.Logf("scan %d: outcome %s, tree cache %+v, fetch %d ms", i, res.Outcome, res.Install.TreeCache, res.Install.FetchMS)
		if res.Outcome != evidence.OutcomeOK {
			t.Errorf("scan %d: outcome %s", i, res.Outcome)
		}
		if tc := res.Install.TreeCache; tc != nil {
			if tc.Hit || filler != nil {
				t.Errorf("scan %d: tree cache %+v; want one filler and one that fetched on its own (first %+v)", i, tc, filler)
			}
			filler = tc
		}
	}
	if filler == nil {
		t.Fatal("neither scan filled the cache volume")
	}
	if results[0].Install.LockfileSHA256 != results[1].Install.LockfileSHA256 {
		t.Errorf("lockfiles differ: %s, %s", results[0].Install.LockfileSHA256, results[1].Install.LockfileSHA256)
	}
	third := scanStore(t, t.TempDir(), target)
	if tc := third.Install.TreeCache; tc == nil || !tc.Hit || tc.FetchedBy != filler.FetchedBy {
		t.Errorf("third store: tree cache %+v; want a hit on %s", tc, filler.FetchedBy)
	}
}

// TestTreeCacheNamespaceApart: a test's answer does not depend on what
// the engine's cache holds. With is-number's tree in the engine's default
// namespace (as on a machine that has scanned it; filled here when it was
// not, and then removed), a scan in the test's namespace without the CA
// bundle still meets the fault of its fetch, and with the CA bundle misses
// and fetches into a tree of its own (labelled with the namespace), which
// its next scan hits; the namespace's volumes are removed when it is
// pruned, the default namespace's tree is left alone.
func TestTreeCacheNamespaceApart(t *testing.T) {
	ctx := context.Background()
	target := sandbox.Target{Name: isNumber, Version: isNumberVersion, Integrity: isNumberIntegrity}
	scan := func(s *sandbox.Sandbox) (*sandbox.Result, string, error) {
		t.Helper()
		id := runID(t)
		res, err := s.Scan(ctx, id, target)
		assertClean(t, id)
		if res != nil {
			t.Logf("run %s: outcome %s, tree cache %+v, fetch %d ms", id, res.Outcome, res.Install.TreeCache, res.Install.FetchMS)
		}
		return res, id, err
	}

	def := newSandbox(t, func(o *sandbox.Options) { o.TreeCacheDir = t.TempDir(); o.TreeCacheNamespace = "" })
	defVol := "verifymcp-tree-" + def.TreeKey(target)
	base, id, err := scan(def)
	if err != nil {
		t.Fatalf("scan in the default namespace: %v", err)
	}
	if base.Install.TreeCache == nil {
		t.Fatalf("scan in the default namespace: outcome %s, not from the cache nor filling it (another scan filling it?)", base.Outcome)
	}
	if tc := base.Install.TreeCache; !tc.Hit && tc.FetchedBy == id {
		// This test filled it: remove it when done, unless a scan of the
		// user's mounts it meanwhile (then it stays, a tree like any).
		t.Cleanup(func() { _ = engine.VolumeRemove(context.Background(), defVol, false) })
	}

	ns := treeNamespace(t)
	noCA := newSandbox(t, func(o *sandbox.Options) { o.CABundle = nil; o.TreeCacheDir = t.TempDir() })
	if res, _, err := scan(noCA); !errors.As(err, new(*sandbox.EnvironmentError)) {
		t.Errorf("scan in the test's namespace without the CA bundle = %+v, %v; want the fetch's *EnvironmentError, whatever the default namespace holds", res, err)
	}

	dir := t.TempDir()
	own := newSandbox(t, func(o *sandbox.Options) { o.TreeCacheDir = dir })
	first, _, err := scan(own)
	if err != nil {
		t.Fatal(err)
	}
	key := own.TreeKey(target)
	if tc := first.Install.TreeCache; tc == nil || tc.Hit || tc.Key != key || key == base.Install.TreeCache.Key {
		t.Fatalf("first scan in the namespace: tree cache %+v (default namespace's key %s); want a miss and a fill on a key of its own", tc, base.Install.TreeCache.Key)
	}
	if first.Outcome != base.Outcome || first.Install.LockfileSHA256 != base.Install.LockfileSHA256 {
		t.Errorf("outcome %s, lockfile %s; the default namespace's scan gave %s, %s", first.Outcome, first.Install.LockfileSHA256, base.Outcome, base.Install.LockfileSHA256)
	}
	vol := "verifymcp-tree-" + key
	if v, err := engine.VolumeInspect(ctx, vol); err != nil || v.Labels[sandbox.LabelTreeNamespace] != ns {
		t.Errorf("the namespace's volume: %v, labels %v; want it labelled %q", err, v.Labels, ns)
	}
	second, _, err := scan(own)
	if err != nil {
		t.Fatal(err)
	}
	if tc := second.Install.TreeCache; tc == nil || !tc.Hit || tc.FetchedBy != first.Install.TreeCache.FetchedBy {
		t.Errorf("second scan in the namespace: tree cache %+v; want a hit on %s", tc, first.Install.TreeCache.FetchedBy)
	}

	if n, err := sandbox.PruneTreeNamespace(ctx, engine, dir, ns); err != nil || n != 1 {
		t.Errorf("prune the namespace: %d volumes, %v; want its one", n, err)
	}
	if _, err := engine.VolumeInspect(ctx, vol); err == nil {
		t.Errorf("%s outlived its namespace's prune", vol)
	}
	if _, err := engine.VolumeInspect(ctx, defVol); err != nil {
		t.Errorf("the default namespace's tree did not outlive the test namespace's prune: %v", err)
	}
}
