package pkgspec

import (
	"errors"
	"strings"
	"testing"
)

func TestPyPIName(t *testing.T) {
	for in, want := range map[string]string{
		"Mcp_Server.Time":  "mcp-server-time",
		"mcp-server-time":  "mcp-server-time",
		"MCP__server--git": "mcp-server-git",
		"a.-_b":            "a-b",
		"Django":           "django",
		"zope.interface":   "zope-interface",
		"x":                "x",
	} {
		if got := NormalizePyPIName(in); got != want {
			t.Errorf("NormalizePyPIName(%q) = %q, want %q", in, got, want)
		}
	}
	for _, ok := range []string{"a", "A1", "mcp-server-time", "Mcp_Server.Time", "a..b", "0"} {
		if err := ValidPyPIName(ok); err != nil {
			t.Errorf("ValidPyPIName(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "-a", "a-", ".a", "a_", "a b", "ünicode", "a/b", "a@1", "../x",
		"\u212a", "mcp-\u017ferver"} { // the Kelvin sign and the long s fold to k and s under (?i)
		if err := ValidPyPIName(bad); !errors.Is(err, ErrBadName) {
			t.Errorf("ValidPyPIName(%q) = %v, want ErrBadName", bad, err)
		}
	}
}

func TestNPMName(t *testing.T) {
	for _, ok := range []string{"is-number", "@modelcontextprotocol/server-everything", "a", "a.b_c~d", "@s/x"} {
		if err := ValidNPMName(ok); err != nil {
			t.Errorf("ValidNPMName(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "Is-Number", "a b", "@scope", "@/x", ".x", "_x", "a/b", "../x", strings.Repeat("a", 215)} {
		if err := ValidNPMName(bad); !errors.Is(err, ErrBadName) {
			t.Errorf("ValidNPMName(%q) = %v, want ErrBadName", bad, err)
		}
	}
}
