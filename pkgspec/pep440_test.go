package pkgspec

import (
	"errors"
	"strings"
	"testing"
)

// The PEP 440 ordering, from the spec's examples and packaging's tests.
func TestVersionOrder(t *testing.T) {
	ordered := []string{
		"1.0.dev456", "1.0a1", "1.0a2.dev456", "1.0a12.dev456", "1.0a12", "1.0b1.dev456", "1.0b2",
		"1.0b2.post345.dev456", "1.0b2.post345", "1.0rc1.dev456", "1.0rc1", "1.0", "1.0+abc.5", "1.0+abc.7",
		"1.0+5", "1.0.post456.dev34", "1.0.post456", "1.0.15", "1.1.dev1", "1!0.1", "1!0.2.dev1", "2!0",
	}
	for i := range ordered {
		for j := range ordered {
			a, err := ParseVersion(ordered[i])
			if err != nil {
				t.Fatal(err)
			}
			b, _ := ParseVersion(ordered[j])
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := a.Compare(b); got != want {
				t.Errorf("compare(%s, %s) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
	for _, eq := range [][2]string{
		{"1.0", "1.0.0"}, {"1.0", "v1.0"}, {"1.0a", "1.0a0"}, {"1.0alpha1", "1.0a1"}, {"1.0-beta.2", "1.0b2"},
		{"1.0c1", "1.0rc1"}, {"1.0pre1", "1.0rc1"}, {"1.0preview1", "1.0rc1"}, {"1.0-1", "1.0.post1"},
		{"1.0rev1", "1.0.post1"}, {"1.0r", "1.0.post0"}, {"1.0-dev", "1.0.dev0"}, {"0!1.0", "1.0"},
		{"1.0+ABC-1_2", "1.0+abc.1.2"}, {"2025.08.04", "2025.8.4"}, {" 1.0 ", "1.0"},
	} {
		a, err1 := ParseVersion(eq[0])
		b, err2 := ParseVersion(eq[1])
		if err1 != nil || err2 != nil || a.Compare(b) != 0 {
			t.Errorf("%s and %s should be equal (%v %v)", eq[0], eq[1], err1, err2)
		}
	}
	for _, bad := range []string{"", "1.0.", "1..0", "a1.0", "1.0+", "1.0+a..b", "1.0-foo", "1.0 1", "1.2.3-beta+local+x"} {
		if _, err := ParseVersion(bad); err == nil {
			t.Errorf("ParseVersion(%q) accepted", bad)
		}
	}
}

// Specifier matching, from PEP 440's examples and packaging's tests
// (pre-release admission aside, which pick does).
func TestSpecifierMatch(t *testing.T) {
	tests := []struct {
		version, spec string
		want          bool
	}{
		{"2.0", "==2", true}, {"2.0", "==2.0.0", true}, {"2.0+deadbeef", "==2", true}, {"2.0+deadbeef", "==2.0+deadbeef", true},
		{"2.0+other", "==2.0+deadbeef", false}, {"2.0", "==2.0+deadbeef", false}, {"2.0.1", "==2", false},
		{"2.0", "==2.*", true}, {"2.9.1", "==2.*", true}, {"3.0", "==2.*", false}, {"2.0rc1", "==2.0.*", true}, {"2", "==2.0.*", true},
		{"2.1", "==2.0.*", false}, {"1!2.0", "==2.*", false}, {"2.0+local", "==2.0.*", true},
		{"2.0", "!=2", false}, {"2.1", "!=2", true}, {"2.0", "!=2.0.*", false}, {"2.1", "!=2.0.*", true}, {"2.0+x", "!=2.0", false},
		{"2.0", "~=2.0", true}, {"2.5", "~=2.0", true}, {"3.0", "~=2.0", false}, {"1.9", "~=2.0", false},
		{"1.4.5", "~=1.4.5", true}, {"1.4.9", "~=1.4.5", true}, {"1.5.0", "~=1.4.5", false}, {"1.4.5.post1", "~=1.4.5", true},
		{"2.0.post1", "~=2.0.post1", true}, {"2.0", "~=2.0.post1", false}, {"1!2.1", "~=1!2.0", true}, {"2.1", "~=1!2.0", false},
		{"2.0", "<=2", true}, {"2.0+local", "<=2", true}, {"2.0.post1", "<=2", false}, {"1.9", ">=2", false}, {"2.0+local", ">=2", true},
		{"1.9", "<2", true}, {"2.0a1", "<2", false}, {"2.0.dev1", "<2", false}, {"2.0a1", "<2.0b1", true}, {"1.9a1", "<2", true},
		{"2.0", "<2", false}, {"2.0+local", "<2", false},
		{"2.1", ">2", true}, {"2.0.post1", ">2", false}, {"2.0+local", ">2", false}, {"2.0.1", ">2", true}, {"2.1.post1", ">2", true},
		{"2.0.post2", ">2.0.post1", true}, {"1!0.1", ">2", true}, {"2.0", ">2", false},
		{"2.0", "===2.0", true}, {"2.0.0", "===2.0", false}, {"2.0", "===2.0.0", false}, {"foobar", "===FooBar", true},
	}
	for _, tt := range tests {
		c, err := parseClause(tt.spec)
		if err != nil {
			t.Errorf("parseClause(%q): %v", tt.spec, err)
			continue
		}
		v, err := ParseVersion(tt.version)
		if err != nil {
			v = Version{raw: tt.version} // === compares the text alone
		}
		if got := c.match(v); got != tt.want {
			t.Errorf("%s in %s = %v, want %v", tt.version, tt.spec, got, tt.want)
		}
	}
}

func TestSatisfies(t *testing.T) {
	tests := []struct {
		spec, version string
		want          bool
		bad           bool
	}{
		{">=3.12", "3.13.5", true, false},
		{">=3.12", "3.11.2", false, false},
		{">=3.10,<3.12", "3.11.2", true, false},
		{">=3.10,<3.12", "3.13.5", false, false},
		{"<3.9", "3.11.2", false, false},
		{">=3.11.5", "3.11.2", false, false},
		{"~=3.11", "3.13.5", true, false},
		{"==3.11.*", "3.11.2", true, false},
		{"!=3.13.*", "3.13.5", false, false},
		{"", "3.11.2", true, false},
		{">=3.10 <4", "3.11.2", false, true},
		{"3.10", "3.11.2", false, true},
	}
	for _, tt := range tests {
		got, err := Satisfies(tt.spec, tt.version)
		if (err != nil) != tt.bad || (tt.bad && !errors.Is(err, ErrBadRequirement)) || got != tt.want {
			t.Errorf("Satisfies(%q, %q) = %v, %v; want %v, bad %v", tt.spec, tt.version, got, err, tt.want, tt.bad)
		}
	}
	if CompareVersions("3.13.5", "3.11.2") <= 0 || CompareVersions("3.9.0", "3.11.2") >= 0 {
		t.Error("CompareVersions does not order versions numerically")
	}
}

func TestParseVersionErrors(t *testing.T) {
	for _, bad := range []string{"", "banana", "1.0-foo", "99999999999999999999.0"} {
		if _, err := ParseVersion(bad); !errors.Is(err, ErrBadVersion) {
			t.Errorf("ParseVersion(%q) = %v, want ErrBadVersion", bad, err)
		}
	}
	if CompareVersions("banana", "1.0") != -1 || CompareVersions("1.0", "banana") != 1 || CompareVersions("a", "b") != -1 {
		t.Error("CompareVersions does not sort what does not parse first, as text")
	}
}

// ParseVersionSpec is what a resolver takes; its errors name the clause
// and why.
func TestParseVersionSpec(t *testing.T) {
	for _, tt := range []struct {
		spec            string
		exact, pre      bool
		errHas          string
		admits, rejects string
	}{
		{spec: "", admits: "1.0"},
		{spec: "latest", admits: "1.0"},
		{spec: "1.2", exact: true, admits: "1.2.0", rejects: "1.3"},
		{spec: "==1.2", exact: true, admits: "1.2", rejects: "1.2.1"},
		{spec: "===1.0-custom", exact: true, admits: "1.0-custom", rejects: "1.0"},
		{spec: "==1.*", admits: "1.9", rejects: "2.0"},
		{spec: ">=1.2,<2", admits: "1.5", rejects: "2.0"},
		{spec: ">=2.0b1", pre: true, admits: "2.0b2", rejects: "2.0a1"},
		{spec: "~=1.4", admits: "1.9", rejects: "2.0"},
		{spec: "banana", errHas: `"banana" is neither "latest", a version nor a PEP 440 specifier set`},
		{spec: ">=1,,<2", errHas: "has an empty clause"},
		{spec: ">=1.*", errHas: "uses a wildcard"},
		{spec: "==1.0a1.*", errHas: "has a wildcard after a pre-"},
		{spec: ">=1.0+local", errHas: "local version label"},
		{spec: "~=1", errHas: "at least two release numbers"},
		{spec: "==1.0.0.dev1.post", errHas: `"==1.0.0.dev1.post" has an invalid version`},
		{spec: "== 1.0 2.0", errHas: "has no version after its operator, or more than one"},
		{spec: ">=1,2", errHas: "does not start with a PEP 440 operator"},
	} {
		s, err := ParseVersionSpec(tt.spec)
		if tt.errHas != "" {
			if !errors.Is(err, ErrBadRequirement) || !strings.Contains(err.Error(), tt.errHas) {
				t.Errorf("ParseVersionSpec(%q) = %v, want ErrBadRequirement with %q", tt.spec, err, tt.errHas)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseVersionSpec(%q): %v", tt.spec, err)
			continue
		}
		if s.Exact() != tt.exact || s.Prereleases() != tt.pre {
			t.Errorf("ParseVersionSpec(%q): exact %v, prereleases %v; want %v, %v", tt.spec, s.Exact(), s.Prereleases(), tt.exact, tt.pre)
		}
		for v, want := range map[string]bool{tt.admits: true, tt.rejects: false} {
			if v == "" {
				continue
			}
			pv, err := ParseVersion(v)
			if err != nil {
				pv = Version{raw: v} // === compares the text alone
			}
			if got := s.Contains(pv); got != want {
				t.Errorf("ParseVersionSpec(%q).Contains(%s) = %v, want %v", tt.spec, v, got, want)
			}
		}
	}
}

func TestSplitClause(t *testing.T) {
	for in, want := range map[string][2]string{
		">=1.2":      {">=", "1.2"},
		" >= 1.2 ":   {">=", "1.2"},
		"===1.0-x":   {"===", "1.0-x"},
		"~=1.4":      {"~=", "1.4"},
		"==1.*":      {"==", "1.*"},
		"<2":         {"<", "2"},
		"1.2":        {},
		"=1.2":       {},
		"==":         {},
		">= 1.0 2.0": {},
		"":           {},
	} {
		op, v, ok := SplitClause(in)
		if ok != (want[0] != "") || op != want[0] || v != want[1] {
			t.Errorf("SplitClause(%q) = %q, %q, %v; want %q, %q", in, op, v, ok, want[0], want[1])
		}
	}
}
