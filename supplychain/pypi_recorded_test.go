package supplychain_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/supplychain"
)

// TestPyPIMetadata_recorded reads the project documents recorded from
// pypi.org (testdata/pypi/recorded; their release documents answered 404
// from this machine, and the project documents' info describes exactly
// these versions).
func TestPyPIMetadata_recorded(t *testing.T) {
	servers := &evidence.Repository{Host: "github.com", Owner: "modelcontextprotocol", Name: "servers"}
	tests := []struct {
		file, version string
		maintainers   []evidence.Maintainer
		repoURL       string
	}{
		{
			"mcp-server-time", "2026.10.19",
			[]evidence.Maintainer{{Name: "Mariusz 'maledorak' Korzekwa", EmailDomain: "korzekwa.dev"}},
			"https://github.com/modelcontextprotocol/servers/tree/main/src/time",
		},
		{
			"mcp-server-fetch", "2026.10.24",
			[]evidence.Maintainer{{Name: "Jack Adamson", EmailDomain: "anthropic.com"}, {Name: "Anthropic, PBC."}},
			"https://github.com/modelcontextprotocol/servers/tree/main/src/fetch",
		},
		{
			"mcp-server-git", "2026.10.19",
			[]evidence.Maintainer{{Name: "David Soria Parra", EmailDomain: "anthropic.com"}, {Name: "Anthropic, PBC."}},
			"https://github.com/modelcontextprotocol/servers/tree/main/src/git",
		},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			doc, err := os.ReadFile(filepath.Join("testdata", "pypi", "recorded", tc.file+".project.json"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := supplychain.PyPIMetadata(doc, tc.version)
			if err != nil {
				t.Fatal(err)
			}
			if got.Ecosystem != "pypi" || got.Name != tc.file || got.Version != tc.version || got.License != "MIT" {
				t.Errorf("identity %s %s %s license %q", got.Ecosystem, got.Name, got.Version, got.License)
			}
			if d := resultDiff(tc.maintainers, got.Maintainers); d != "" {
				t.Errorf("maintainers (-want +got):%s", d)
			}
			if got.RepositoryURL != tc.repoURL || got.Repository == nil || got.Repository.Host != servers.Host ||
				got.Repository.Owner != servers.Owner || got.Repository.Name != servers.Name {
				t.Errorf("repository %q %+v (%s), want %s parsed to modelcontextprotocol/servers", got.RepositoryURL, got.Repository, got.RepositoryError, tc.repoURL)
			}
			if got.Provenance || len(got.Unserved) != 1 || got.Unserved[0] != "provenance" {
				t.Errorf("provenance %v unserved %v, want provenance unserved (the JSON API does not serve it)", got.Provenance, got.Unserved)
			}
			if got.PublishedAt == nil || got.VersionCount == 0 || got.FirstPublishedAt == nil || got.PreviousVersion == "" {
				t.Errorf("history: published %v, %d versions, first %v, previous %q; want all from the project document", got.PublishedAt, got.VersionCount, got.FirstPublishedAt, got.PreviousVersion)
			}
		})
	}
}
