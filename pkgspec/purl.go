package pkgspec

import (
	"net/url"
	"strings"
)

// SplitPurl reads a package URL's type (lower case), name (its namespace
// and name, unescaped) and version (unescaped), qualifiers and subpath
// dropped; ok is false for a string that is not a package URL.
func SplitPurl(p string) (typ, name, version string, ok bool) {
	rest, ok := strings.CutPrefix(p, "pkg:")
	if !ok {
		return "", "", "", false
	}
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i]
	}
	typ, name, _ = strings.Cut(rest, "/")
	if i := strings.LastIndexByte(name, '@'); i > 0 {
		name, version = name[:i], name[i+1:]
	}
	if u, err := url.PathUnescape(name); err == nil {
		name = u
	}
	if v, err := url.PathUnescape(version); err == nil {
		version = v
	}
	return strings.ToLower(typ), name, version, true
}
