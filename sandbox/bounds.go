package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/volume"
	"golang.org/x/sys/unix"

	"github.com/verifymcp/verifymcp/evidence"
)

// Bounded places. Package code writes to three places: the installed tree
// (while its lifecycle scripts run; the run phase mounts it read-only), its
// home directory and /tmp. Each is a tmpfs, so that the kernel stops a
// flood at the place's size or file count with ENOSPC, as a full disk
// would, and the host's disk never fills. The tree and the homes must
// outlive the container that wrote them (the run phase reads the tree; the
// home is compared after the phase), and a tmpfs volume is unmounted, and
// emptied, when no container uses it: so a holder keeps every bounded
// volume of a scan mounted until the scan ends. The holder is the observer
// when behaviour is watched (it also reports the places' use, by statfs),
// else a container that only sleeps.
//
// A tmpfs's pages count against the memory limit of the container that
// wrote them, so each phase's memory limit is raised by the bounds of the
// places it writes: --memory stays what the processes themselves may use.

// heldDir is where the holder mounts the bounded volumes, one directory
// per volume part.
const heldDir = "/held"

// Default bounds (Options.TreeSize, HomeSize, TmpSize) and the fixed file
// counts. A tree of 256k files is far past any real dependency tree; a
// tmpfs inode costs kernel memory, so the counts stay modest.
const (
	DefaultTreeSize = 2 << 30
	DefaultHomeSize = 512 << 20
	DefaultTmpSize  = 256 << 20
	treeFiles       = 256 << 10
	homeFiles       = 64 << 10
	tmpFiles        = 64 << 10
	// fullMargin: a place with less room than this left, or no file left,
	// is full (a writer stopped by ENOSPC leaves at most a page).
	fullMargin = 1 << 20
)

// ErrTreeBound is returned when the installed tree does not fit in the
// script step's tree (--tree-size): the bound is too small for the package,
// which says nothing about the package.
var ErrTreeBound = errors.New("the installed tree does not fit in --tree-size")

// bound describes one bounded place of one phase.
type bound struct {
	Part  string // volume part, also its directory under heldDir
	Place string // evidence.PlaceTree, PlaceHome, PlaceTmp
	Size  int64
	Files int64
	// Owner and mode (octal, sticky bit included) of the place's root.
	UID  int
	Mode uint32
}

func (b bound) driverOpts() map[string]string {
	o := fmt.Sprintf("size=%d,nr_inodes=%d,mode=%04o,nosuid,nodev", b.Size, b.Files, b.Mode)
	if b.UID != 0 {
		o += fmt.Sprintf(",uid=%d,gid=%d", b.UID, b.UID)
	}
	return map[string]string{"type": "tmpfs", "device": "tmpfs", "o": o}
}

// bounds returns the bounded places of a watched scan: the tree the
// scripts write, and a home and a /tmp for each watched phase.
func (o Options) bounds() []bound {
	return []bound{
		o.treeBound(),
		{Part: "home-scripts", Place: evidence.PlaceHome, Size: o.HomeSize, Files: homeFiles, UID: 65534, Mode: 0o700},
		{Part: "tmp-scripts", Place: evidence.PlaceTmp, Size: o.TmpSize, Files: tmpFiles, Mode: 0o1777},
		{Part: "home-run", Place: evidence.PlaceHome, Size: o.HomeSize, Files: homeFiles, UID: 65534, Mode: 0o700},
		{Part: "tmp-run", Place: evidence.PlaceTmp, Size: o.TmpSize, Files: tmpFiles, Mode: 0o1777},
	}
}

func (o Options) treeBound() bound {
	return bound{Part: "work-tree", Place: evidence.PlaceTree, Size: o.TreeSize, Files: treeFiles, UID: 65534, Mode: 0o755}
}

// tmpfsOption is the HostConfig.Tmpfs option of an unwatched /tmp.
func (o Options) tmpfsOption() string {
	return fmt.Sprintf("rw,nosuid,nodev,size=%d,nr_inodes=%d,mode=1777", o.TmpSize, tmpFiles)
}

// createBounded creates the tmpfs volume of a bounded place.
func (r *run) createBounded(ctx context.Context, b bound) (string, error) {
	v, err := r.cli.VolumeCreate(ctx, volume.CreateOptions{Name: r.name(b.Part), Driver: "local", DriverOpts: b.driverOpts(), Labels: r.labels()})
	if err != nil {
		return "", fmt.Errorf("create volume %s: %w", b.Part, err)
	}
	return v.Name, nil
}

// heldMounts mounts volumes, by part, read-only under heldDir.
func heldMounts(vols map[string]string) []mount.Mount {
	parts := make([]string, 0, len(vols))
	for p := range vols {
		parts = append(parts, p)
	}
	sort.Strings(parts)
	out := make([]mount.Mount, 0, len(parts))
	for _, p := range parts {
		out = append(out, mount.Mount{Type: mount.TypeVolume, Source: vols[p], Target: heldDir + "/" + p, ReadOnly: true})
	}
	return out
}

// startHolder starts a container that keeps the given volumes mounted
// until the run's cleanup removes it (unwatched scans; the observer holds
// them otherwise). It runs nothing but sleep, with no network.
func (s *Sandbox) startHolder(ctx context.Context, r *run, vols map[string]string) error {
	hc := hardened()
	hc.NetworkMode = "none"
	hc.Mounts = heldMounts(vols)
	hc.Resources = container.Resources{Memory: 32 << 20, PidsLimit: int64Ptr(8)}
	created, err := r.cli.ContainerCreate(ctx, &container.Config{
		Image: s.opts.Image, User: sandboxUser, Cmd: []string{"sleep", "infinity"}, Labels: r.labels(),
	}, hc, nil, nil, r.name("holder"))
	if cerrdefs.IsConflict(err) {
		// The run's holder runs already (a PyPI install copies its
		// tree into the work tree again after a metadata step).
		return nil
	}
	if err != nil {
		return fmt.Errorf("create holder: %w", err)
	}
	if err := r.cli.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		return fmt.Errorf("start holder: %w", err)
	}
	return nil
}

// placeUsage is one held place's use, as the observer reports it.
type placeUsage struct {
	Bytes     int64 `json:"bytes"`
	Size      int64 `json:"size"`
	Files     int64 `json:"files"`
	FilesMax  int64 `json:"files_max"`
	FreeBytes int64 `json:"free_bytes"`
	FreeFiles int64 `json:"free_files"`
}

// heldUsage reports, by part, the use of every filesystem mounted under
// dir (run in the observer).
func heldUsage(dir string) map[string]placeUsage {
	out := map[string]placeUsage{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		var st unix.Statfs_t
		if err := unix.Statfs(filepath.Join(dir, e.Name()), &st); err != nil {
			continue
		}
		bs := int64(st.Bsize) //nolint:unconvert // int64 on linux/amd64, not on every platform
		out[e.Name()] = placeUsage{
			Bytes: int64(st.Blocks-st.Bfree) * bs, Size: int64(st.Blocks) * bs, FreeBytes: int64(st.Bavail) * bs,
			Files: int64(st.Files - st.Ffree), FilesMax: int64(st.Files), FreeFiles: int64(st.Ffree),
		}
	}
	return out
}

// diskUse is the evidence of one place at the end of a phase, from its use
// then and when package code started.
func diskUse(b bound, start, end placeUsage) evidence.DiskUse {
	return evidence.DiskUse{
		Place: b.Place, BoundBytes: b.Size, BoundFiles: b.Files,
		StartBytes: start.Bytes, UsedBytes: end.Bytes, UsedFiles: end.Files,
		Full: end.Size > 0 && (end.FreeBytes < fullMargin || end.FreeFiles == 0),
	}
}

// drops counts events left out of the evidence, by phase and kind
// ("network", "process", "file").
type drops map[string]map[string]int

func (d *drops) add(phase, kind string, n int) {
	if *d == nil {
		*d = drops{}
	}
	if (*d)[phase] == nil {
		(*d)[phase] = map[string]int{}
	}
	(*d)[phase][kind] += n
}

// addDropped counts n events of a kind a phase's evidence left out.
func addDropped(wt *evidence.Watch, kind string, n int) {
	if n <= 0 {
		return
	}
	if wt.Dropped == nil {
		wt.Dropped = map[string]int{}
	}
	wt.Dropped[kind] += n
}
