package cli

import "testing"

// SetTreeCacheNamespace gives the in-process scans the tree-cache
// namespace ns until t ends. The tests that call it run one at a time
// (they set the environment).
func SetTreeCacheNamespace(t testing.TB, ns string) {
	old := treeCacheNamespace
	treeCacheNamespace = ns
	t.Cleanup(func() { treeCacheNamespace = old })
}
