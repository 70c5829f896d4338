package pkgspec

import (
	"fmt"
	"regexp"
	"strings"
)

// Python requirements as pypi: and uvx: targets write them.
//
// A requirement is a project name and an optional PEP 440 specifier set,
// as pip and uv read one: NAME (the latest release), NAME==1.2 (exact;
// === too), NAME>=1.2,<2, NAME~=1.4. Package.Spec is what a resolver
// takes: "" for the latest release, "==V" or "===V" for an exact pin, else
// the specifier set with its clauses trimmed. Extras and environment
// markers are refused: verifymcp scans one package, with the dependencies
// its metadata declares, on the sandbox's own Python.

// pypiNameHeadRe reads the project name that starts a requirement.
var pypiNameHeadRe = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?`)

// PyPINameHead is the project name that starts s (PEP 508: ASCII letters
// and digits, with '.', '_' and '-' inside), "" when s starts with none.
func PyPINameHead(s string) string {
	return pypiNameHeadRe.FindString(s)
}

// pep440PublicRe is a version in PEP 440's canonical public form, as the
// index spells releases.
var pep440PublicRe = regexp.MustCompile(`^(?:[1-9][0-9]*!)?(?:0|[1-9][0-9]*)(?:\.(?:0|[1-9][0-9]*))*(?:(?:a|b|rc)(?:0|[1-9][0-9]*))?(?:\.post(?:0|[1-9][0-9]*))?(?:\.dev(?:0|[1-9][0-9]*))?$`)

// CanonicalPublicVersion reports whether v is a PEP 440 version in its
// canonical public form (1.2.3, 1.0rc1, 2.0.post1, 1!2.0.dev3): no local
// label, no leading zeros, no alternative spellings.
func CanonicalPublicVersion(v string) bool {
	return pep440PublicRe.MatchString(v)
}

// ParseRequirement reads NAME[SPECIFIERS], the requirement after pypi: or
// uvx: (scheme is "pypi" or "uvx"); uvx also takes NAME@VERSION (==) and
// NAME@latest. raw is the whole target as written, which the errors
// quote; every error is ErrBadTarget.
func ParseRequirement(raw, scheme, s string) (Package, error) {
	bad := func(format string, args ...any) (Package, error) {
		return Package{}, fmt.Errorf("%w: %q: "+format, append([]any{ErrBadTarget, raw}, args...)...)
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return bad("no project name after %s:", scheme)
	}
	if strings.HasPrefix(s, "-") {
		return bad("%s options are not read (verifymcp scans one package from the index; write %s:NAME or %s:NAME==VERSION, and --index-url for a mirror)", scheme, scheme, scheme)
	}
	name := PyPINameHead(s)
	if name == "" {
		return bad("%q does not start with a project name (ASCII letters, digits, and '.', '_', '-' between them)", s)
	}
	rest := strings.TrimSpace(s[len(name):])
	if err := ValidPyPIName(name); err != nil {
		return Package{}, fmt.Errorf("%w: %v", ErrBadTarget, err)
	}
	spec := ""
	switch {
	case strings.HasPrefix(rest, "["):
		return bad("extras (%s) are not scanned: verifymcp scans the package itself; drop the [...]", strings.SplitN(rest, "]", 2)[0]+"]")
	case strings.Contains(rest, ";"):
		return bad("environment markers (;%s) are not scanned: the sandbox has one Python and one platform; drop the ; and what follows", strings.SplitN(rest, ";", 2)[1])
	case strings.HasPrefix(rest, "@"):
		v := strings.TrimSpace(rest[1:])
		if scheme != "uvx" {
			return bad("NAME@... is not a version in a Python requirement (PEP 508 reads a URL after @); write %s:%s==VERSION", scheme, name)
		}
		switch {
		case v == "":
			return bad("an empty version after @")
		case v == "latest":
		case strings.ContainsAny(v, " \t=<>~,*/:"):
			return bad("%q after @ is not one version (uvx NAME@VERSION pins ==VERSION; write uvx:%s followed by a specifier set for a range)", v, name)
		default:
			spec = "==" + v
		}
	case rest == "":
	default:
		if strings.HasPrefix(rest, "(") && strings.HasSuffix(rest, ")") {
			rest = strings.TrimSpace(rest[1 : len(rest)-1]) // PEP 508's name (>=1.0)
			if rest == "" {
				return bad("empty parentheses after the name: PEP 508 puts a specifier set in them, such as %s (>=1.2); drop them for the latest release", name)
			}
		}
		if !strings.ContainsAny(rest[:1], "=<>!~") {
			return bad("%q after the name is not a version specifier (want ==VERSION, or a PEP 440 set such as >=1.2,<2); a command or arguments after the package are not read: the entry point is chosen by the rule or --bin, arguments go in --arg", rest)
		}
		set, clause, ok := TrimSpecifierSet(rest)
		if !ok {
			if clause == "" {
				return bad("the specifier set %q has an empty clause", rest)
			}
			return bad("%q is not a version specifier (want ==VERSION, or a PEP 440 set such as >=1.2,<2 or ~=1.4)", clause)
		}
		spec = set
	}
	if spec != "" {
		if err := checkPyPISpec(name, spec); err != nil {
			return bad("%v", err)
		}
	}
	return Package{Ecosystem: "pypi", Name: name, Spec: spec}, nil
}

// TrimSpecifierSet writes a specifier set's clauses without their white
// space (" >= 1.2 , < 2" is ">=1.2,<2"), the versions unchecked (see
// ParseVersionSpec). When a clause is not an operator followed by one
// word, ok is false and clause is that clause, trimmed ("" for an empty
// clause).
func TrimSpecifierSet(spec string) (set, clause string, ok bool) {
	clauses := strings.Split(spec, ",")
	for i, c := range clauses {
		c = strings.TrimSpace(c)
		op, v, ok := SplitClause(c)
		if !ok {
			return "", c, false
		}
		clauses[i] = op + v
	}
	return strings.Join(clauses, ","), "", true
}

// checkPyPISpec checks a specifier as a resolver reads it
// (ParseVersionSpec), and says what is wrong without the sentinel's
// words.
func checkPyPISpec(name, spec string) error {
	spec = strings.TrimSpace(spec)
	if _, err := ParseVersionSpec(spec); err != nil {
		// "invalid requirement: x" reads better without the sentinel's words.
		msg := strings.Replace(err.Error(), ErrBadRequirement.Error()+": ", "", 1)
		return fmt.Errorf("%s %q: %s", NormalizePyPIName(name), spec, msg)
	}
	return nil
}
