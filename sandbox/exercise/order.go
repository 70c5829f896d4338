package exercise

import (
	"slices"

	"github.com/verifymcp/verifymcp/contract"
)

// destructiveVerbs are the verbs that make an unannotated tool's name read
// as destructive.
var destructiveVerbs = map[string]bool{
	"delete": true, "remove": true, "drop": true, "destroy": true, "kill": true, "truncate": true,
	"purge": true, "wipe": true, "erase": true, "uninstall": true, "reset": true, "terminate": true,
	"revoke": true, "unlink": true, "rm": true, "clear": true,
}

// otherVerbs are common verbs that are not destructive: a name whose first
// verb is one of them ("get_deleted_items") is not read as destructive.
var otherVerbs = map[string]bool{
	"get": true, "list": true, "read": true, "search": true, "find": true, "fetch": true, "show": true,
	"describe": true, "query": true, "create": true, "add": true, "update": true, "set": true,
	"write": true, "edit": true, "send": true, "run": true, "execute": true, "exec": true, "open": true,
	"move": true, "copy": true, "rename": true, "upload": true, "download": true, "insert": true,
	"start": true, "stop": true, "check": true, "count": true, "view": true, "post": true, "put": true,
}

// Order returns the tools in the order they are called: read-only tools
// first (readOnlyHint true), then the others, destructive tools last
// (destructiveHint true, or, for a tool with no annotations, a name whose
// first verb is destructive). Listing order is kept within each group.
func Order(tools []contract.Tool) []contract.Tool {
	out := slices.Clone(tools)
	slices.SortStableFunc(out, func(a, b contract.Tool) int { return group(a) - group(b) })
	return out
}

// group is 0 for read-only, 1 for other and 2 for destructive tools.
func group(t contract.Tool) int {
	a := t.Annotations
	switch {
	case a != nil && a.ReadOnlyHint != nil && *a.ReadOnlyHint:
		return 0
	case a != nil && a.DestructiveHint != nil && *a.DestructiveHint:
		return 2
	case a == nil && destructiveName(t.Name):
		return 2
	}
	return 1
}

// destructiveName reports whether the first verb among a name's first three
// words (past a prefix such as "github_" or "db_") is destructive.
func destructiveName(name string) bool {
	ws := words(name)
	for i, w := range ws {
		if i == 3 {
			break
		}
		if destructiveVerbs[w] {
			return true
		}
		if otherVerbs[w] {
			return false
		}
	}
	return false
}
