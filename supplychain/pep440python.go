package supplychain

import "github.com/verifymcp/verifymcp/pkgspec"

// PythonSatisfies reports whether the interpreter version (X.Y.Z)
// satisfies a Requires-Python specifier set: pkgspec.Satisfies. A
// specifier set that does not parse is ErrBadRequirement.
func PythonSatisfies(requires, version string) (bool, error) {
	return pkgspec.Satisfies(requires, version)
}

// ComparePEP440 compares two PEP 440 versions (-1, 0, 1); a version that
// does not parse sorts before every one that does: pkgspec.CompareVersions.
func ComparePEP440(a, b string) int { return pkgspec.CompareVersions(a, b) }
