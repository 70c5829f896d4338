package sandbox

import (
	"context"

	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"
)

// PruneOwnTrees removes the cached tree volumes this process filled, and
// no other: the engine's cache is shared with the developer's own scans
// and with other packages' tests running at the same time.
func PruneOwnTrees(ctx context.Context, cli client.APIClient, dir string) (int, error) {
	own := ownerLabel()
	return pruneTrees(ctx, cli, dir, func(v *volume.Volume) bool { return v.Labels[LabelOwner] == own })
}

// TreeKey is the tree-cache key of t, for the tests.
func (s *Sandbox) TreeKey(t Target) string { return s.treeKey(t) }

// TreeMarker is the completeness marker's path in a cached tree.
const TreeMarker = treeMarker
