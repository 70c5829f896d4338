package cli

import (
	"runtime/debug"
	"strings"
	"testing"
)

// TestBuildVersion: a version set with -ldflags is kept; a build that did
// not set one (go install MODULE@VERSION, go build in a clone) names its
// module version or its commit.
func TestBuildVersion(t *testing.T) {
	info := func(version string, settings ...string) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/verifymcp/verifymcp", Version: version}}
			for i := 0; i+1 < len(settings); i += 2 {
				bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
			}
			return bi, true
		}
	}
	none := func() (*debug.BuildInfo, bool) { return nil, false }
	for _, tc := range []struct {
		name string
		set  string
		read func() (*debug.BuildInfo, bool)
		want string
	}{
		{"set with -ldflags", "v1.4.0", info("v1.4.0-0.20260101000000-abcdef123456"), "v1.4.0"},
		{"go install MODULE@v1.2.3", unsetVersion, info("v1.2.3"), "v1.2.3"},
		{"go build in a clone", unsetVersion, info("v0.0.0-20260102030405-0123456789ab+dirty"), "v0.0.0-20260102030405-0123456789ab+dirty"},
		{"(devel) with the commit", unsetVersion, info("(devel)", "vcs.revision", "0123456789abcdef0123", "vcs.modified", "false"), unsetVersion + "+0123456789ab"},
		{"(devel) with a modified tree", unsetVersion, info("(devel)", "vcs.revision", "0123456789abcdef0123", "vcs.modified", "true"), unsetVersion + "+0123456789ab-dirty"},
		{"(devel) without a commit", unsetVersion, info("(devel)"), unsetVersion},
		{"no build information", unsetVersion, none, unsetVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := buildVersion(tc.set, tc.read); got != tc.want {
				t.Errorf("buildVersion = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestHelperLine(t *testing.T) {
	for _, tc := range []struct {
		arches []string
		want   []string
	}{
		{nil, []string{"none", "VERIFYMCP_HELPER_BINARY"}},
		{[]string{"amd64", "arm64"}, []string{"for linux/amd64 and linux/arm64 engines"}},
	} {
		got := helperLine(tc.arches)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("helperLine(%v) = %q, want it to say %q", tc.arches, got, w)
			}
		}
	}
}
