// Package pkgspec is the grammar of package names, versions and targets:
// npm's rules for a package name, PyPI's for a project name and its PEP
// 503 normal form, PEP 440's versions and specifier sets, their order and
// their matching, and the package targets a scan takes (npm:NAME@SPEC,
// pypi: and uvx: requirements, pkg:npm and pkg:pypi package URLs; see
// ParseTarget), with typed errors. It is a leaf with no I/O (the standard
// library and packageurl-go only), so that code which must run anywhere,
// the config reader in the browser included, can check a name, a version
// or a target without importing a registry client.
package pkgspec

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// ErrBadName is every name this package refuses; the CLI maps it to the
// exit code of a bad target.
var ErrBadName = errors.New("invalid package name")

var npmNameRe = regexp.MustCompile(`^(@[a-z0-9~-][a-z0-9._~-]*/)?[a-z0-9~-][a-z0-9._~-]*$`)

// ValidNPMName reports whether name follows npm's rules for new packages.
func ValidNPMName(name string) error {
	if name == "" || len(name) > 214 {
		return fmt.Errorf("%w: %q must be 1 to 214 characters", ErrBadName, name)
	}
	if !npmNameRe.MatchString(name) {
		return fmt.Errorf("%w: %q (lower case letters, digits, '-', '.', '_', '~', optionally @scope/)", ErrBadName, name)
	}
	return nil
}

var (
	pypiNameRe     = regexp.MustCompile(`^([A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9])$`)
	pypiNameRunsRe = regexp.MustCompile(`[-_.]+`)
)

// NormalizePyPIName is the PEP 503 normal form of a project name: lower
// case, every run of '-', '_' and '.' made one '-'.
func NormalizePyPIName(name string) string {
	return pypiNameRunsRe.ReplaceAllString(strings.ToLower(name), "-")
}

// ValidPyPIName reports whether name is a valid project name (PEP 508:
// ASCII letters and digits, with '.', '_' and '-' inside).
func ValidPyPIName(name string) error {
	if !pypiNameRe.MatchString(name) {
		return fmt.Errorf("%w: %q (ASCII letters, digits, and '.', '_', '-' between them)", ErrBadName, name)
	}
	return nil
}
