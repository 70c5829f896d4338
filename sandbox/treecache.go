package sandbox

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/internal/atomicfile"
)

// The tree cache keeps the install tree that a fetch step produced, in a
// volume, so that a later scan of the same artefact skips the fetch. The
// fetch step runs no package code (npm's --ignore-scripts; for PyPI, no
// build backend can start), so its tree is a function of the key's inputs
// and of what the registry served when it was first fetched. A reused tree
// is only ever mounted read-only; when scripts or builds must run, their
// step copies it into the run's own volume first.
//
// The volume is the truth, shared by every store on the engine: its name
// is the key, and a tree is complete only when its marker file
// (treeMarker, holding the fetch result) is there, written last, after the
// fetch succeeded. A volume without it is being filled, or its filler
// died: it is never mounted, and the scan that meets it fetches into its
// own volume. A scan fills only a volume it created (creating one that
// exists returns the other's, whose filler label names another run), so
// two fills never mix. The scan that meets an abandoned one (its filler's
// process is gone, or it is older than staleTreeAge) removes it, when no
// container uses it, and fills it again.
// Each data directory keeps a local index (one file per key, written under
// an exclusive lock) that remembers the volume's creation time and filler,
// so that a hit it already knows costs one inspect; any other hit reads the
// marker.

// LabelTreeKey names the tree-cache key of a cached tree volume.
const LabelTreeKey = "verifymcp.tree.key"

// LabelTreeNamespace names the tree-cache namespace of a cached tree
// volume (Options.TreeCacheNamespace); the default namespace has none.
const LabelTreeNamespace = "verifymcp.tree.namespace"

// treeMarker is the completeness marker, relative to the tree's root.
const treeMarker = ".verifymcp/tree-complete.json"

// labelTreeFiller names the run that created (and so fills) a cached tree
// volume.
const labelTreeFiller = LabelRun + ".filler"

// staleTreeAge is the age after which an incomplete cached tree is
// abandoned whoever made it: a fill is bounded by the install timeout
// (180 s by default), so one not finished after an hour never will be.
// This covers a filler on another host (whose process this host cannot
// see) and a live process whose marker could not be written.
const staleTreeAge = time.Hour

type treeIndex[R any] struct {
	Key    string    `json:"key"`
	Volume string    `json:"volume"`
	Run    string    `json:"run"`
	At     time.Time `json:"at"`
	// Created is the volume's creation time: a volume removed and made
	// again (perhaps being filled now) has another.
	Created string `json:"created"`
	Result  *R     `json:"result"`
}

// treeKey identifies a fetched tree: the exact artefact, where it came
// from, the image that fetched it (node and npm versions, or uv and
// Python), the driver and, when set, the namespace (the default namespace
// adds nothing, so its keys are those stored before namespaces were).
func (s *Sandbox) treeKey(t Target) string {
	h := sha256.New()
	installerOf(t).treeKey(s, h, t)
	return s.treeSum(h)
}

// treeSum ends a tree key: the namespace, if any, then the digest.
func (s *Sandbox) treeSum(h hash.Hash) string {
	if ns := s.opts.TreeCacheNamespace; ns != "" {
		fmt.Fprintf(h, "namespace %q\n", ns)
	}
	return hex.EncodeToString(h.Sum(nil))[:24]
}

type cachedTree[R any] struct {
	fr       *R
	timedOut bool
	volume   string // the volume holding the tree; "" when the fetch failed
	info     *evidence.TreeCache
}

// fetchFunc runs a fetch step into a volume; cacheable says whether its
// result is a complete tree worth keeping.
type fetchFunc[R any] struct {
	run       func(vol string) (*R, bool, error)
	cacheable func(*R) bool
}

// cachedFetch returns the complete cached tree for t, or fetches it into a
// new cache volume, marks it complete and records it. When the volume
// exists but is incomplete (another store is filling it, or a fill was
// cut short and its filler still lives), it fetches into the run's own
// volume instead and leaves the cache volume alone; an abandoned one it
// removes and fills again.
func cachedFetch[R any](ctx context.Context, s *Sandbox, r *run, runTree string, t Target, f fetchFunc[R]) (cachedTree[R], error) {
	return cachedTreeOf(ctx, s, r, runTree, s.treeKey(t), f)
}

// cachedTreeOf is cachedFetch for the tree of key, which f fills (a
// fetched tree, or a built one: see pybuilt.go).
func cachedTreeOf[R any](ctx context.Context, s *Sandbox, r *run, runTree, key string, f fetchFunc[R]) (cachedTree[R], error) {
	dir := s.opts.TreeCacheDir
	vol := "verifymcp-tree-" + key
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return cachedTree[R]{}, fmt.Errorf("tree cache: %w", err)
	}
	unlock, err := lockFile(ctx, filepath.Join(dir, key+".lock"))
	if err != nil {
		return cachedTree[R]{}, fmt.Errorf("tree cache: %w", err)
	}
	defer unlock()
	idxPath := filepath.Join(dir, key+".json")
	hit := func(idx treeIndex[R]) cachedTree[R] {
		return cachedTree[R]{fr: idx.Result, volume: vol, info: &evidence.TreeCache{Key: key, Hit: true, FetchedBy: idx.Run, FetchedAt: idx.At}}
	}
	uncached := func(why string) (cachedTree[R], error) {
		s.opts.Logger.Debug("tree cache not used for this scan; fetching into the run's own volume", "volume", vol, "why", why)
		fr, timedOut, err := f.run(runTree)
		return cachedTree[R]{fr: fr, timedOut: timedOut, volume: runTree}, err
	}
	v, err := s.cli.VolumeInspect(ctx, vol)
	switch {
	case err != nil && !client.IsErrNotFound(err):
		return cachedTree[R]{}, fmt.Errorf("tree cache: inspect %s: %w", vol, err)
	case err == nil && v.Labels[LabelTreeKey] != key:
		return uncached("a volume of that name is not a tree of this key")
	case err == nil:
		var idx treeIndex[R]
		if data, err := os.ReadFile(idxPath); err == nil && json.Unmarshal(data, &idx) == nil && knownTree(idx, key, v) {
			return hit(idx), nil
		}
		m, ok, err := readTreeMarker[R](ctx, s, r, vol)
		if err != nil {
			return cachedTree[R]{}, err
		}
		if completeMarker(m, ok, key) {
			m.Volume, m.Created = vol, v.CreatedAt
			s.writeTreeIndex(idxPath, m)
			return hit(m), nil
		}
		gone, why := abandonedTree(v, time.Now(), ownerAlive)
		if !gone {
			return uncached("the cached tree is incomplete and " + why)
		}
		if why, err := s.removeAbandonedTree(ctx, v); err != nil {
			return cachedTree[R]{}, err
		} else if why != "" {
			return uncached(why)
		}
	}
	labels := map[string]string{LabelCache: "tree", LabelTreeKey: key, LabelOwner: ownerLabel(), labelTreeFiller: r.id}
	if ns := s.opts.TreeCacheNamespace; ns != "" {
		labels[LabelTreeNamespace] = ns
	}
	created, err := s.cli.VolumeCreate(ctx, volume.CreateOptions{Name: vol, Labels: labels})
	if err != nil {
		return cachedTree[R]{}, fmt.Errorf("create tree cache volume: %w", err)
	}
	if created.Labels[labelTreeFiller] != r.id {
		// Another store created it first (creating a volume that exists
		// returns it): it fills it.
		return uncached("another scan is filling the cached tree")
	}
	fr, timedOut, err := f.run(vol)
	if err == nil && !timedOut && fr != nil && f.cacheable(fr) {
		now := time.Now().UTC()
		m := treeIndex[R]{Key: key, Volume: vol, Run: r.id, At: now, Created: created.CreatedAt, Result: fr}
		werr := stillOurs(ctx, s, vol, r.id)
		if errors.Is(werr, errNotOurs) {
			// Removed and made again by another store while this run
			// filled it (two scans that met the same abandoned volume at
			// the same instant): two fills may have mixed, so neither mark
			// it nor use it. The run's fetch step has run already and
			// cannot run again in this run.
			return cachedTree[R]{}, fmt.Errorf("tree cache: %w", werr)
		}
		if werr == nil {
			werr = writeTreeMarker(ctx, s, r, vol, m)
		}
		if werr != nil {
			// Not marked, so never reused (until it is abandoned, after
			// staleTreeAge); the tree itself is whole.
			s.opts.Logger.Warn("could not mark the cached tree complete", "volume", vol, "err", werr)
			return cachedTree[R]{fr: fr, volume: vol}, nil
		}
		// The engine's CreatedAt of a local volume is its directory's
		// modification time, which the fill moved: record it as it is now.
		if v, err := s.cli.VolumeInspect(ctx, vol); err == nil {
			m.Created = v.CreatedAt
		}
		s.writeTreeIndex(idxPath, m)
		return cachedTree[R]{fr: fr, volume: vol, info: &evidence.TreeCache{Key: key, Hit: false, FetchedBy: r.id, FetchedAt: now}}, nil
	}
	rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	_ = s.cli.VolumeRemove(rmCtx, vol, false)
	cancel()
	return cachedTree[R]{fr: fr, timedOut: timedOut}, err
}

// knownTree reports whether a local index entry still describes v: the
// same key, a result, and the same volume: the same filler (a volume
// removed and made again, perhaps being filled now, has another) and the
// same CreatedAt (for a local volume, its directory's modification time,
// which moves when it is written).
func knownTree[R any](idx treeIndex[R], key string, v volume.Volume) bool {
	return idx.Key == key && idx.Result != nil && idx.Created != "" && idx.Created == v.CreatedAt &&
		idx.Run != "" && idx.Run == v.Labels[labelTreeFiller] && v.Labels[LabelTreeKey] == key
}

// completeMarker reports whether a marker read from a volume makes it a
// complete tree of key.
func completeMarker[R any](m treeIndex[R], ok bool, key string) bool {
	return ok && m.Key == key && m.Result != nil
}

// abandonedTree reports whether the incomplete tree volume v may be
// removed and filled again: its filler's process is gone (alive judges
// the owner label, as the reaper does), or v is older than staleTreeAge
// (by its CreatedAt, which for a local volume moves when its top is
// written, so a fill under way looks younger, never older). Otherwise why
// says who may still be filling it.
func abandonedTree(v volume.Volume, now time.Time, alive func(string) bool) (bool, string) {
	owner := v.Labels[LabelOwner]
	if created, err := time.Parse(time.RFC3339Nano, v.CreatedAt); err == nil && now.Sub(created) > staleTreeAge {
		return true, "it is older than " + staleTreeAge.String()
	}
	if !alive(owner) {
		return true, "its filler " + strconv.Quote(owner) + " is gone"
	}
	return false, "its filler " + strconv.Quote(owner) + " may still be filling it"
}

// removeAbandonedTree removes the abandoned incomplete volume v, if it is
// still the volume judged abandoned and no container uses it. It returns
// why not; then the caller fetches on its own. No claim is taken: a scan
// fills only a volume whose creation it made (its filler label), so a
// removal that races another scan's removal and creation costs that scan
// its marker (stillOurs), never a tree that mixes two fills.
func (s *Sandbox) removeAbandonedTree(ctx context.Context, v volume.Volume) (string, error) {
	// Not one made again (another filler) nor written (another CreatedAt)
	// since it was judged.
	w, err := s.cli.VolumeInspect(ctx, v.Name)
	if client.IsErrNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("tree cache: inspect %s: %w", v.Name, err)
	}
	if w.CreatedAt != v.CreatedAt || w.Labels[labelTreeFiller] != v.Labels[labelTreeFiller] {
		return "the incomplete cached tree was made again meanwhile", nil
	}
	users, err := s.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("volume", v.Name))})
	if err != nil {
		return "", fmt.Errorf("tree cache: list the users of %s: %w", v.Name, err)
	}
	if len(users) > 0 {
		return "an incomplete cached tree is in use by a container", nil
	}
	// Without force, the engine refuses a volume a container mounts.
	if err := s.cli.VolumeRemove(ctx, v.Name, false); err != nil && !client.IsErrNotFound(err) {
		return "an incomplete cached tree could not be removed: " + err.Error(), nil
	}
	s.opts.Logger.Debug("removed an abandoned incomplete cached tree", "volume", v.Name, "created", v.CreatedAt, "filler", v.Labels[labelTreeFiller])
	return "", nil
}

var errNotOurs = errors.New("the cached tree volume is not the one this run created")

// stillOurs checks, before the marker is written, that vol is still the
// volume this run created to fill: its filler label names this run (the
// engine's CreatedAt is no identity: it moves when the volume is written).
func stillOurs(ctx context.Context, s *Sandbox, vol, runID string) error {
	v, err := s.cli.VolumeInspect(ctx, vol)
	if err != nil {
		return err
	}
	if v.Labels[labelTreeFiller] != runID {
		return fmt.Errorf("%w: %s was made again by %q", errNotOurs, vol, v.Labels[labelTreeFiller])
	}
	return nil
}

func (s *Sandbox) writeTreeIndex(path string, idx any) {
	data, err := json.Marshal(idx)
	if err == nil {
		err = writeAtomic(path, data)
	}
	if err != nil {
		s.opts.Logger.Warn("could not record the tree in the cache index", "err", err)
	}
}

// volumeContainer creates, never starts, a container of the run that
// mounts vol at the tree's place, for copying into or out of it.
func volumeContainer(ctx context.Context, s *Sandbox, r *run, vol, part string, ro bool) (string, func(), error) {
	hc := hardened()
	hc.NetworkMode = "none"
	hc.Mounts = []mount.Mount{mountVolume(vol, treeDir, ro)}
	c, err := r.cli.ContainerCreate(ctx, &container.Config{Image: s.opts.Image, User: sandboxUser, Cmd: []string{"true"}, Labels: r.labels(), NetworkDisabled: true},
		hc, nil, nil, r.name(part))
	if err != nil {
		return "", nil, fmt.Errorf("tree cache: create %s container: %w", part, err)
	}
	return c.ID, func() {
		rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = s.cli.ContainerRemove(rmCtx, c.ID, container.RemoveOptions{Force: true})
	}, nil
}

// readTreeMarker reads vol's completeness marker; ok is false when there
// is none.
func readTreeMarker[R any](ctx context.Context, s *Sandbox, r *run, vol string) (m treeIndex[R], ok bool, err error) {
	id, remove, err := volumeContainer(ctx, s, r, vol, "tree-read", true)
	if err != nil {
		return m, false, err
	}
	defer remove()
	rc, _, err := s.cli.CopyFromContainer(ctx, id, treeDir+"/"+treeMarker)
	if client.IsErrNotFound(err) {
		return m, false, nil
	}
	if err != nil {
		return m, false, fmt.Errorf("tree cache: read the marker of %s: %w", vol, err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	if _, err := tr.Next(); err != nil {
		return m, false, fmt.Errorf("tree cache: read the marker of %s: %w", vol, err)
	}
	data, err := io.ReadAll(io.LimitReader(tr, 256<<20))
	if err != nil {
		return m, false, fmt.Errorf("tree cache: read the marker of %s: %w", vol, err)
	}
	if json.Unmarshal(data, &m) != nil {
		return m, false, nil // a marker that does not decode marks nothing
	}
	return m, true, nil
}

// writeTreeMarker writes vol's completeness marker, the last thing written
// to a cached tree.
func writeTreeMarker[R any](ctx context.Context, s *Sandbox, r *run, vol string, m treeIndex[R]) error {
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	id, remove, err := volumeContainer(ctx, s, r, vol, "tree-mark", false)
	if err != nil {
		return err
	}
	defer remove()
	return copyFile(ctx, s.cli, id, fileIn{Dir: treeDir, Name: treeMarker, Data: data, UID: 65534})
}

// PruneTreeCache removes every cached tree volume not in use, and the index
// entries of removed volumes.
func PruneTreeCache(ctx context.Context, cli client.APIClient, dir string) (int, error) {
	return pruneTrees(ctx, cli, dir, func(*volume.Volume) bool { return true })
}

// PruneTreeNamespace removes the cached tree volumes of namespace ns (never
// the default one) not in use, and their index entries in dir: what the
// tests that gave themselves ns cached, and nothing else.
func PruneTreeNamespace(ctx context.Context, cli client.APIClient, dir, ns string) (int, error) {
	if ns == "" {
		return 0, errors.New("tree cache: no namespace to prune")
	}
	return pruneTrees(ctx, cli, dir, func(v *volume.Volume) bool { return v.Labels[LabelTreeNamespace] == ns })
}

// PruneTreeOwner removes the cached tree volumes not in use that the
// process owner (hostname/pid, as LabelOwner names it) created, in any
// namespace, and their index entries in dir: what a process that has
// exited cached, and nothing else.
func PruneTreeOwner(ctx context.Context, cli client.APIClient, dir, owner string) (int, error) {
	if owner == "" {
		return 0, errors.New("tree cache: no owner to prune")
	}
	return pruneTrees(ctx, cli, dir, func(v *volume.Volume) bool { return v.Labels[LabelOwner] == owner })
}

// pruneTrees removes the cached tree volumes not in use that pick picks.
func pruneTrees(ctx context.Context, cli client.APIClient, dir string, pick func(*volume.Volume) bool) (int, error) {
	vs, err := cli.VolumeList(ctx, volume.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("list volumes: %w", err)
	}
	n := 0
	var errs []error
	for _, v := range vs.Volumes {
		if v.Labels[LabelCache] != "tree" || !pick(v) {
			continue
		}
		if err := cli.VolumeRemove(ctx, v.Name, true); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", v.Name, err))
			continue
		}
		n++
		if dir != "" {
			_ = os.Remove(filepath.Join(dir, strings.TrimPrefix(v.Name, "verifymcp-tree-")+".json"))
		}
	}
	return n, errors.Join(errs...)
}

// lockFile takes an exclusive flock on path, giving up when ctx ends.
func lockFile(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// writeAtomic writes data to path so that a reader never sees a partial
// file.
func writeAtomic(path string, data []byte) error { return atomicfile.Write(path, data) }
