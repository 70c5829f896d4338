package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/internal/atomicfile"
	"github.com/verifymcp/verifymcp/supplychain"
)

// The tree cache keeps the install tree that a fetch step produced, in a
// volume, so that a later scan of the same artefact skips npm install. The
// fetch step runs no package code (npm's --ignore-scripts; for PyPI, no
// build backend can start), so its tree is a function of the key's inputs
// and of what the registry served when it was first fetched. A reused tree is only ever mounted
// read-only; when lifecycle scripts must run, the script step copies it into
// the run's own volume first. The index (which volume holds which key, and
// the fetch result) lives in a host directory, one file per key, written
// under an exclusive lock.

// LabelTreeKey names the tree-cache key of a cached tree volume.
const LabelTreeKey = "verifymcp.tree.key"

type treeIndex[R any] struct {
	Key    string    `json:"key"`
	Volume string    `json:"volume"`
	Run    string    `json:"run"`
	At     time.Time `json:"at"`
	Result *R        `json:"result"`
}

// treeKey identifies a fetched tree: the exact artefact, where it came
// from, the image that fetched it (node and npm versions, or uv and
// Python) and the driver.
func (s *Sandbox) treeKey(t Target) string {
	h := sha256.New()
	if t.Ecosystem == "pypi" {
		driver := sha256.Sum256([]byte(pyFetchDriver))
		fmt.Fprintf(h, "verifymcp-tree/pypi/1\n%s\n%s\n%s\n%s\n%x\n", supplychain.NormalizePyPIName(t.Name), t.Version, s.opts.IndexURL, s.opts.Image, driver)
		names := make([]string, 0, len(t.PyPIFiles))
		for n := range t.PyPIFiles {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(h, "index-file %s %s\n", n, t.PyPIFiles[n])
		}
		if t.Tarball != nil {
			sum := sha256.Sum256(t.Tarball)
			fmt.Fprintf(h, "file %s %x\n", t.Filename, sum)
		}
		return hex.EncodeToString(h.Sum(nil))[:24]
	}
	driver := sha256.Sum256([]byte(fetchDriver))
	fmt.Fprintf(h, "verifymcp-tree/1\n%s\n%s\n%s\n%s\n%s\n%x\n", t.Name, t.Version, t.Integrity, s.opts.Registry, s.opts.Image, driver)
	if t.Tarball != nil {
		sum := sha256.Sum256(t.Tarball)
		fmt.Fprintf(h, "file %x\n", sum)
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

// cachedFetch returns the cached tree for t, or fetches it into a new cache
// volume and records it. If the cache cannot be used (a stale volume still
// in use), it fetches into the run's own volume instead.
func cachedFetch[R any](ctx context.Context, s *Sandbox, r *run, runTree string, t Target, f fetchFunc[R]) (cachedTree[R], error) {
	dir := s.opts.TreeCacheDir
	key := s.treeKey(t)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return cachedTree[R]{}, fmt.Errorf("tree cache: %w", err)
	}
	unlock, err := lockFile(ctx, filepath.Join(dir, key+".lock"))
	if err != nil {
		return cachedTree[R]{}, fmt.Errorf("tree cache: %w", err)
	}
	defer unlock()
	idxPath := filepath.Join(dir, key+".json")
	if data, err := os.ReadFile(idxPath); err == nil {
		var idx treeIndex[R]
		if json.Unmarshal(data, &idx) == nil && idx.Result != nil && idx.Key == key {
			if v, err := s.cli.VolumeInspect(ctx, idx.Volume); err == nil && v.Labels[LabelTreeKey] == key {
				return cachedTree[R]{fr: idx.Result, volume: idx.Volume, info: &evidence.TreeCache{Key: key, Hit: true, FetchedBy: idx.Run, FetchedAt: idx.At}}, nil
			}
		}
	}
	vol := "verifymcp-tree-" + key
	if err := s.cli.VolumeRemove(ctx, vol, true); err != nil && !client.IsErrNotFound(err) {
		// A stale tree still mounted somewhere: do without the cache.
		s.opts.Logger.Warn("tree cache unusable; fetching without it", "volume", vol, "err", err)
		fr, timedOut, err := f.run(runTree)
		return cachedTree[R]{fr: fr, timedOut: timedOut, volume: runTree}, err
	}
	if _, err := s.cli.VolumeCreate(ctx, volume.CreateOptions{Name: vol, Labels: map[string]string{LabelCache: "tree", LabelTreeKey: key}}); err != nil {
		return cachedTree[R]{}, fmt.Errorf("create tree cache volume: %w", err)
	}
	fr, timedOut, err := f.run(vol)
	if err != nil || timedOut || fr == nil || !f.cacheable(fr) {
		rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		_ = s.cli.VolumeRemove(rmCtx, vol, true)
		cancel()
		return cachedTree[R]{fr: fr, timedOut: timedOut}, err
	}
	now := time.Now().UTC()
	idx := treeIndex[R]{Key: key, Volume: vol, Run: r.id, At: now, Result: fr}
	data, err := json.Marshal(idx)
	if err == nil {
		err = writeAtomic(idxPath, data)
	}
	if err != nil {
		s.opts.Logger.Warn("could not record the tree in the cache index", "err", err)
	}
	return cachedTree[R]{fr: fr, volume: vol, info: &evidence.TreeCache{Key: key, Hit: false, FetchedBy: r.id, FetchedAt: now}}, nil
}

// PruneTreeCache removes every cached tree volume not in use, and the index
// entries of removed volumes.
func PruneTreeCache(ctx context.Context, cli client.APIClient, dir string) (int, error) {
	vs, err := cli.VolumeList(ctx, volume.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("list volumes: %w", err)
	}
	n := 0
	var errs []error
	for _, v := range vs.Volumes {
		if v.Labels[LabelCache] != "tree" {
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
