package pkgspec

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// PEP 440 versions and specifier sets, as the packaging library parses,
// orders and matches them (packaging.version.Version,
// packaging.specifiers.Specifier and SpecifierSet).

// ErrBadVersion is a string that is not a PEP 440 version.
var ErrBadVersion = errors.New("invalid version")

// ErrBadRequirement is a version specifier that is not valid PEP 440.
var ErrBadRequirement = errors.New("invalid requirement")

// versionRe is VERSION_PATTERN of PEP 440's appendix B, with the
// surrounding white space packaging strips.
var versionRe = regexp.MustCompile(`(?i)^\s*v?(?:(?:([0-9]+)!)?([0-9]+(?:\.[0-9]+)*)` +
	`([-_.]?(alpha|a|beta|b|preview|pre|c|rc)[-_.]?([0-9]+)?)?` +
	`((?:-([0-9]+))|(?:[-_.]?(post|rev|r)[-_.]?([0-9]+)?))?` +
	`([-_.]?(dev)[-_.]?([0-9]+)?)?)` +
	`(?:\+([a-z0-9]+(?:[-_.][a-z0-9]+)*))?\s*$`)

// localRunsRe splits a local version label into its parts.
var localRunsRe = regexp.MustCompile(`[-_.]+`)

// Version is a parsed PEP 440 version.
type Version struct {
	// raw is the version as written (=== compares it).
	raw     string
	epoch   uint64
	release []uint64
	// preL is "a", "b" or "rc", "" for none; preN its number.
	preL  string
	preN  uint64
	post  *uint64
	dev   *uint64
	local []string
}

// ParseVersion parses a PEP 440 version; one that is not is ErrBadVersion.
func ParseVersion(s string) (Version, error) {
	m := versionRe.FindStringSubmatch(s)
	if m == nil {
		return Version{}, fmt.Errorf("%w: %q is not a PEP 440 version", ErrBadVersion, s)
	}
	v := Version{raw: s}
	var err error
	num := func(n string) uint64 {
		if n == "" || err != nil {
			return 0
		}
		x, e := strconv.ParseUint(n, 10, 64)
		if e != nil {
			err = fmt.Errorf("%w: %q: version number %s is too large", ErrBadVersion, s, n)
		}
		return x
	}
	v.epoch = num(m[1])
	for r := range strings.SplitSeq(m[2], ".") {
		v.release = append(v.release, num(r))
	}
	if m[3] != "" {
		switch strings.ToLower(m[4]) {
		case "alpha", "a":
			v.preL = "a"
		case "beta", "b":
			v.preL = "b"
		default:
			v.preL = "rc"
		}
		v.preN = num(m[5])
	}
	if m[6] != "" {
		n := num(m[7] + m[9])
		v.post = &n
	}
	if m[10] != "" {
		n := num(m[12])
		v.dev = &n
	}
	if m[13] != "" {
		v.local = localRunsRe.Split(strings.ToLower(m[13]), -1)
	}
	if err != nil {
		return Version{}, err
	}
	return v, nil
}

// IsPrerelease reports whether v is a pre-release or a development
// release.
func (v Version) IsPrerelease() bool { return v.preL != "" || v.dev != nil }

// public drops the local label; base keeps only the epoch and release.
func (v Version) public() Version { v.local = nil; return v }

func (v Version) base() Version {
	return Version{epoch: v.epoch, release: v.release}
}

// Compare orders versions (-1, 0, 1) as packaging's _cmpkey does: epoch,
// release (trailing zeros ignored), pre-release (a development release
// of the release itself sorts before its pre-releases; no pre-release
// sorts after them), post-release (none first), development release
// (none last), local label (none first; numeric segments above
// alphanumeric ones, then compared segment by segment).
func (v Version) Compare(w Version) int {
	if d := cmp.Compare(v.epoch, w.epoch); d != 0 {
		return d
	}
	for i := range max(len(v.release), len(w.release)) {
		var a, b uint64
		if i < len(v.release) {
			a = v.release[i]
		}
		if i < len(w.release) {
			b = w.release[i]
		}
		if d := cmp.Compare(a, b); d != 0 {
			return d
		}
	}
	if d := cmp.Compare(v.preRank(), w.preRank()); d != 0 {
		return d
	}
	if v.preL != "" && w.preL != "" {
		if d := cmp.Compare(v.preN, w.preN); d != 0 {
			return d
		}
	}
	if d := compareOpt(v.post, w.post, -1); d != 0 {
		return d
	}
	if d := compareOpt(v.dev, w.dev, 1); d != 0 {
		return d
	}
	return compareLocal(v.local, w.local)
}

// CompareVersions compares two PEP 440 versions (-1, 0, 1); a version
// that does not parse sorts before every one that does, and two that do
// not as text.
func CompareVersions(a, b string) int {
	va, ea := ParseVersion(a)
	vb, eb := ParseVersion(b)
	switch {
	case ea != nil && eb != nil:
		return strings.Compare(a, b)
	case ea != nil:
		return -1
	case eb != nil:
		return 1
	}
	return va.Compare(vb)
}

// preRank: 0 for a development release without pre- or post-release,
// 1, 2, 3 for a, b, rc, 4 for no pre-release.
func (v Version) preRank() int {
	switch {
	case v.preL == "" && v.post == nil && v.dev != nil:
		return 0
	case v.preL == "a":
		return 1
	case v.preL == "b":
		return 2
	case v.preL == "rc":
		return 3
	}
	return 4
}

// compareOpt compares optional numbers; a missing one sorts below every
// number when missing is -1, above when 1.
func compareOpt(a, b *uint64, missing int) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return missing
	case b == nil:
		return -missing
	}
	return cmp.Compare(*a, *b)
}

func compareLocal(a, b []string) int {
	if a == nil || b == nil {
		return cmp.Compare(len(a), len(b)) // none sorts first
	}
	for i := range min(len(a), len(b)) {
		an, aerr := strconv.ParseUint(a[i], 10, 64)
		bn, berr := strconv.ParseUint(b[i], 10, 64)
		var d int
		switch {
		case aerr == nil && berr == nil:
			d = cmp.Compare(an, bn)
		case aerr == nil:
			d = 1
		case berr == nil:
			d = -1
		default:
			d = strings.Compare(a[i], b[i])
		}
		if d != 0 {
			return d
		}
	}
	return cmp.Compare(len(a), len(b))
}

// clause is one specifier of a set (packaging.specifiers.Specifier).
type clause struct {
	op       string
	v        Version
	wildcard bool
	raw      string // the version as written (for ===)
}

var (
	clauseRe      = regexp.MustCompile(`^(~=|===|==|!=|<=|>=|<|>)\s*(.*)$`)
	splitClauseRe = regexp.MustCompile(`^(~=|===|==|!=|<=|>=|<|>)\s*(\S+)$`)
	releaseRe     = regexp.MustCompile(`(?i)^v?(?:[0-9]+!)?[0-9]+(?:\.[0-9]+)*$`)
)

// SplitClause splits one clause of a specifier set (" >= 1.2 ") into its
// operator and its version as written, which it does not check: ok is
// false when s does not start with an operator (~=, ==, !=, <=, >=, <,
// >, ===) followed by one word (no white space inside).
func SplitClause(s string) (op, version string, ok bool) {
	m := splitClauseRe.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

func parseClause(s string) (clause, error) {
	bad := func(why string) (clause, error) {
		return clause{}, fmt.Errorf("%w: %q %s", ErrBadRequirement, s, why)
	}
	m := clauseRe.FindStringSubmatch(s)
	if m == nil {
		return bad("does not start with a PEP 440 operator (~=, ==, !=, <=, >=, <, >, ===)")
	}
	c := clause{op: m[1], raw: strings.TrimSpace(m[2])}
	if c.raw == "" || strings.ContainsAny(c.raw, " \t;),") {
		return bad("has no version after its operator, or more than one")
	}
	if c.op == "===" {
		return c, nil
	}
	vs := c.raw
	if strings.HasSuffix(vs, ".*") {
		if c.op != "==" && c.op != "!=" {
			return bad("uses a wildcard, which only == and != allow")
		}
		vs = strings.TrimSuffix(vs, ".*")
		if !releaseRe.MatchString(vs) {
			return bad("has a wildcard after a pre-, post-, development or local part")
		}
		c.wildcard = true
	}
	v, err := ParseVersion(vs)
	if err != nil {
		return bad("has an invalid version")
	}
	c.v = v
	if v.local != nil && c.op != "==" && c.op != "!=" {
		return bad("has a local version label, which only == and != allow")
	}
	if c.op == "~=" && len(v.release) < 2 {
		return bad("~= needs a version with at least two release numbers")
	}
	return c, nil
}

// match reports whether v satisfies the clause (packaging's
// Specifier.contains, pre-releases aside).
func (c clause) match(v Version) bool {
	switch c.op {
	case "===":
		return strings.EqualFold(strings.TrimSpace(v.raw), c.raw)
	case "==":
		return c.equal(v)
	case "!=":
		return !c.equal(v)
	case "~=":
		// ~=V.N is >=V.N together with ==V.*, suffixes of V.N dropped.
		prefix := clause{op: "==", wildcard: true, v: Version{epoch: c.v.epoch, release: c.v.release[:len(c.v.release)-1]}}
		return v.public().Compare(c.v) >= 0 && prefix.equal(v)
	case "<=":
		return v.public().Compare(c.v) <= 0
	case ">=":
		return v.public().Compare(c.v) >= 0
	case "<":
		// <V never admits a pre-release of V itself unless V is one.
		if v.Compare(c.v) >= 0 {
			return false
		}
		return c.v.IsPrerelease() || !v.IsPrerelease() || v.base().Compare(c.v.base()) != 0
	case ">":
		// >V never admits a post-release of V unless V is one, nor V
		// with a local label.
		if v.Compare(c.v) <= 0 {
			return false
		}
		if c.v.post == nil && v.post != nil && v.base().Compare(c.v.base()) == 0 {
			return false
		}
		return v.local == nil || v.base().Compare(c.v.base()) != 0
	}
	return false
}

func (c clause) equal(v Version) bool {
	if c.wildcard {
		// Prefix match on the release, the shorter padded with zeros.
		if v.epoch != c.v.epoch {
			return false
		}
		for i, n := range c.v.release {
			var m uint64
			if i < len(v.release) {
				m = v.release[i]
			}
			if m != n {
				return false
			}
		}
		return true
	}
	if c.v.local == nil {
		v = v.public()
	}
	return v.Compare(c.v) == 0
}

// SpecifierSet is a parsed set of version specifiers; no clauses admits
// every version.
type SpecifierSet struct {
	clauses []clause
	exact   bool
}

// ParseVersionSpec reads the version part of a requirement as a resolver
// takes it: "" or "latest" (no clauses: the latest release), a bare
// version (an exact pin, ==VERSION), or a comma-separated PEP 440
// specifier set with no empty clause. Anything else is ErrBadRequirement.
func ParseVersionSpec(spec string) (SpecifierSet, error) {
	if spec == "" || spec == "latest" {
		return SpecifierSet{}, nil
	}
	if !strings.ContainsAny(spec[:1], "=!<>~") {
		v, err := ParseVersion(spec)
		if err != nil {
			return SpecifierSet{}, fmt.Errorf("%w: %q is neither \"latest\", a version nor a PEP 440 specifier set", ErrBadRequirement, spec)
		}
		return SpecifierSet{clauses: []clause{{op: "==", v: v, raw: spec}}, exact: true}, nil
	}
	var s SpecifierSet
	for part := range strings.SplitSeq(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return SpecifierSet{}, fmt.Errorf("%w: %q has an empty clause", ErrBadRequirement, spec)
		}
		c, err := parseClause(part)
		if err != nil {
			return SpecifierSet{}, err
		}
		s.clauses = append(s.clauses, c)
	}
	s.exact = len(s.clauses) == 1 && !s.clauses[0].wildcard && (s.clauses[0].op == "==" || s.clauses[0].op == "===")
	return s, nil
}

// Exact reports whether the set pins one version: a bare version, or a
// single == (without a wildcard) or === clause.
func (s SpecifierSet) Exact() bool { return s.exact }

// Prereleases reports whether a clause admits pre-releases by naming one
// (packaging's Specifier.prereleases).
func (s SpecifierSet) Prereleases() bool {
	for _, c := range s.clauses {
		v := c.v
		if c.op == "===" {
			v, _ = ParseVersion(c.raw) // not a version: no pre-release
		}
		switch c.op {
		case "==", ">=", "<=", "~=", "===":
			if v.IsPrerelease() {
				return true
			}
		}
	}
	return false
}

// Contains reports whether v satisfies every clause of the set (the
// admission of pre-releases aside, which is the resolver's policy).
func (s SpecifierSet) Contains(v Version) bool {
	for _, c := range s.clauses {
		if !c.match(v) {
			return false
		}
	}
	return true
}

// Satisfies reports whether version satisfies the specifier set as
// packaging.specifiers.SpecifierSet reads one (a Requires-Python, say):
// comma-separated clauses, empty ones ignored, "" admitting every
// version. The clauses are read in order, up to the first the version
// fails. A version or a clause that does not parse is ErrBadRequirement.
func Satisfies(specifierSet, version string) (bool, error) {
	v, err := ParseVersion(version)
	if err != nil {
		return false, fmt.Errorf("%w: %w", ErrBadRequirement, err)
	}
	specifierSet = strings.TrimSpace(specifierSet)
	if specifierSet == "" {
		return true, nil
	}
	for part := range strings.SplitSeq(specifierSet, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue // packaging ignores empty clauses (">=3.10,")
		}
		c, err := parseClause(part)
		if err != nil {
			return false, err
		}
		if !c.match(v) {
			return false, nil
		}
	}
	return true, nil
}
