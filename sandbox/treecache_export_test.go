package sandbox

// TreeKey is the tree-cache key of t, for the tests.
func (s *Sandbox) TreeKey(t Target) string { return s.treeKey(t) }

// TreeMarker is the completeness marker's path in a cached tree.
const TreeMarker = treeMarker
