package cli

// treeCacheNamespace is the sandbox's tree-cache namespace
// (sandbox.Options.TreeCacheNamespace): empty, the engine's own cache,
// but in this package's tests, which give their in-process scans one of
// their own (export_test.go) so that whether a scan fetches does not
// depend on what the engine's cache already holds.
var treeCacheNamespace string
