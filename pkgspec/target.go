package pkgspec

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// The target grammar: npm:NAME[@SPEC] (and a bare NAME[@SPEC]),
// pypi:REQUIREMENT, uvx:REQUIREMENT and pkg:npm and pkg:pypi package URLs,
// read into a Package. Local files and the MCP registry's names are the
// pipeline's: they need I/O or a registry's own rules.

// ErrBadTarget is a target that cannot be parsed.
var ErrBadTarget = errors.New("invalid target")

// ErrUnsupported is a target of another track or ecosystem, or one whose
// qualifiers the scanner cannot honour.
var ErrUnsupported = errors.New("unsupported target")

// Package is a parsed package target.
type Package struct {
	// Ecosystem is "npm" or "pypi".
	Ecosystem string
	// Name is the package name as written (a pypi purl's as packageurl-go
	// normalises it).
	Name string
	// Spec is the version, range or dist-tag asked for: for npm "latest"
	// when none; for pypi "" for the latest release, "==VERSION" (or
	// "===VERSION") for an exact one, else a PEP 440 specifier set with
	// its clauses trimmed, such as ">=1.2,<2".
	Spec string
}

// pypiLikeRe is a bare Python requirement with a specifier, which is not
// an npm target: NAME==1.2, NAME>=1.
var pypiLikeRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*\s*(==|~=|>=|<=|!=)`)

// ParseTarget reads a package target written as a string: npm:NAME[@SPEC],
// pkg:npm and pkg:pypi purls, pypi:REQUIREMENT and uvx:REQUIREMENT (see
// ParseRequirement), and a bare NAME[@SPEC], which is npm. raw is the
// target as written; white space around it is trimmed. An http(s) URL is
// ErrUnsupported (a remote server); every other refusal is ErrBadTarget or
// ErrUnsupported, wrapped, with the target in its message.
func ParseTarget(raw string) (Package, error) {
	s := strings.TrimSpace(raw)
	switch {
	case s == "":
		return Package{}, fmt.Errorf("%w: empty target", ErrBadTarget)
	case strings.HasPrefix(s, "pkg:"):
		return ParsePurl(s)
	case strings.HasPrefix(s, "pypi:"):
		return ParseRequirement(raw, "pypi", strings.TrimPrefix(s, "pypi:"))
	case strings.HasPrefix(s, "uvx:"):
		return ParseRequirement(raw, "uvx", strings.TrimPrefix(s, "uvx:"))
	case strings.HasPrefix(s, "http://"), strings.HasPrefix(s, "https://"):
		return Package{}, fmt.Errorf("%w: %s looks like a remote endpoint; remote servers are another track with another rubric, and verifymcp scores packages only", ErrUnsupported, s)
	case strings.HasPrefix(s, "npm:"):
		s = strings.TrimPrefix(s, "npm:")
	case strings.Contains(s, ":"):
		return Package{}, fmt.Errorf("%w: %q: unknown scheme (want npm:NAME@VERSION, pkg:npm/NAME@VERSION, pypi:NAME==VERSION, uvx:NAME, pkg:pypi/NAME@VERSION, a .tgz, a .whl or an sdist)", ErrBadTarget, raw)
	case pypiLikeRe.MatchString(s):
		return Package{}, fmt.Errorf("%w: %q looks like a Python requirement; write pypi:%s (a bare target is npm)", ErrBadTarget, raw, s)
	}
	return parseNPMSpec(raw, s)
}

// parseNPMSpec reads NAME[@SPEC] (after npm:, or bare).
func parseNPMSpec(raw, s string) (Package, error) {
	name, spec := SplitNPMSpec(s)
	if err := ValidNPMName(name); err != nil {
		return Package{}, fmt.Errorf("%w: %v", ErrBadTarget, err)
	}
	if spec == "" && strings.HasSuffix(s, "@") {
		base := strings.TrimSuffix(strings.TrimSpace(raw), "@")
		return Package{}, fmt.Errorf("%w: %q: empty version after @ (write %s@VERSION, or %s for the latest release)", ErrBadTarget, raw, base, base)
	}
	if spec == "" {
		spec = "latest"
	}
	return Package{Ecosystem: "npm", Name: name, Spec: spec}, nil
}

// SplitNPMSpec splits NAME@SPEC at its last '@' after the first
// character (a scope's @ is the name's): spec is "" when there is none.
func SplitNPMSpec(s string) (name, spec string) {
	at := strings.LastIndex(s, "@")
	if at <= 0 { // no version, or only the scope's @
		return s, ""
	}
	return s[:at], s[at+1:]
}
