package supplychain

import (
	"fmt"
	"strings"
)

// PythonSatisfies reports whether the interpreter version (X.Y.Z)
// satisfies a Requires-Python specifier set (PEP 440, comma-separated
// clauses, as packaging.specifiers.SpecifierSet reads it). A specifier set
// that does not parse is ErrBadRequirement.
func PythonSatisfies(requires, version string) (bool, error) {
	v, err := parsePEP440(version)
	if err != nil {
		return false, fmt.Errorf("%w: %s", ErrBadRequirement, err)
	}
	requires = strings.TrimSpace(requires)
	if requires == "" {
		return true, nil
	}
	for part := range strings.SplitSeq(requires, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue // packaging ignores empty clauses (">=3.10,")
		}
		c, err := parsePEP440Clause(part)
		if err != nil {
			return false, err
		}
		if !c.match(version, v) {
			return false, nil
		}
	}
	return true, nil
}

// ComparePEP440 compares two PEP 440 versions (-1, 0, 1); a version that
// does not parse sorts before every one that does.
func ComparePEP440(a, b string) int {
	va, ea := parsePEP440(a)
	vb, eb := parsePEP440(b)
	switch {
	case ea != nil && eb != nil:
		return strings.Compare(a, b)
	case ea != nil:
		return -1
	case eb != nil:
		return 1
	}
	return va.compare(vb)
}
