package supplychain

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verifymcp/verifymcp/evidence"
)

// TestRepositoryLinks reads recorded documents of MCP servers that put
// their repository somewhere other than the field meant for it, and checks
// what the metadata keeps of those places and the repository read from
// them (evidence.RegistryMeta.FindRepository). The repository field itself
// keeps its meaning: only what was declared there.
func TestRepositoryLinks(t *testing.T) {
	type found struct {
		Repo  evidence.Repository
		Field string
	}
	tests := []struct {
		name      string
		meta      func(t *testing.T) *evidence.RegistryMeta
		declared  *evidence.Repository
		links     []evidence.RegistryLink
		found     *found
		mcpName   string
		homepage  string
		repoField string // RepositoryURL
	}{
		{
			// npm: no repository; the homepage is the GitHub repository
			// (with a trailing slash) and bugs the string form.
			name: "npm @neondatabase/mcp-server-neon@0.6.5",
			meta: func(t *testing.T) *evidence.RegistryMeta {
				return npmRecordedMeta(t, "mcp-server-neon", "0.6.5")
			},
			links: []evidence.RegistryLink{
				{Field: "homepage", URL: "https://github.com/neondatabase/mcp-server-neon/"},
				{Field: "bugs.url", URL: "https://github.com/neondatabase/mcp-server-neon/issues"},
			},
			found:    &found{evidence.Repository{Host: "github.com", Owner: "neondatabase", Name: "mcp-server-neon"}, "homepage"},
			homepage: "https://github.com/neondatabase/mcp-server-neon/",
		},
		{
			// npm: no repository and a homepage off the code hosts; the
			// bugs URL (an object) names the repository.
			name: "npm @modelcontextprotocol/server-everything@2025.8.18",
			meta: func(t *testing.T) *evidence.RegistryMeta {
				return npmRecordedMeta(t, "server-everything", "2025.8.18")
			},
			links: []evidence.RegistryLink{
				{Field: "homepage", URL: "https://modelcontextprotocol.io"},
				{Field: "bugs.url", URL: "https://github.com/modelcontextprotocol/servers/issues"},
			},
			found:    &found{evidence.Repository{Host: "github.com", Owner: "modelcontextprotocol", Name: "servers"}, "bugs.url"},
			homepage: "https://modelcontextprotocol.io",
		},
		{
			// npm: a vendor's package with a reverse-DNS mcpName and its
			// repository on GitHub, declared.
			name: "npm @azure/mcp@2.0.5",
			meta: func(t *testing.T) *evidence.RegistryMeta {
				return npmRecordedMeta(t, "azure-mcp", "2.0.5")
			},
			declared: &evidence.Repository{Host: "github.com", Owner: "microsoft", Name: "mcp"},
			links: []evidence.RegistryLink{
				{Field: "homepage", URL: "https://github.com/Microsoft/mcp/blob/main/servers/Azure.Mcp.Server#readme"},
				{Field: "bugs.url", URL: "https://github.com/microsoft/mcp/issues"},
			},
			found:     &found{evidence.Repository{Host: "github.com", Owner: "Microsoft", Name: "mcp"}, "homepage"},
			mcpName:   "com.microsoft/azure",
			homepage:  "https://github.com/Microsoft/mcp/blob/main/servers/Azure.Mcp.Server#readme",
			repoField: "https://github.com/microsoft/mcp.git",
		},
		{
			// PyPI: the only project URL is labelled Home, which is
			// neither a source label nor "Homepage".
			name: "pypi mcp-clickhouse 0.7.0",
			meta: func(t *testing.T) *evidence.RegistryMeta {
				data, err := os.ReadFile("testdata/pypi/recorded/mcp-clickhouse.project.json")
				if err != nil {
					t.Fatal(err)
				}
				m, err := PyPIMetadata(data, "0.7.0")
				if err != nil {
					t.Fatal(err)
				}
				return m
			},
			links:   []evidence.RegistryLink{{Field: "project_urls.Home", URL: "https://github.com/ClickHouse/mcp-clickhouse"}},
			found:   &found{evidence.Repository{Host: "github.com", Owner: "ClickHouse", Name: "mcp-clickhouse"}, "project_urls.Home"},
			mcpName: "io.github.ClickHouse/mcp-clickhouse",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := tt.meta(t)
			if !m.LinksRead {
				t.Error("LinksRead = false")
			}
			if d := cmp.Diff(tt.links, m.Links); d != "" {
				t.Errorf("Links (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.declared, m.Repository); d != "" {
				t.Errorf("Repository (-want +got):\n%s", d)
			}
			if m.RepositoryURL != tt.repoField || m.Homepage != tt.homepage || m.MCPName != tt.mcpName {
				t.Errorf("repository_url %q, homepage %q, mcp_name %q; want %q, %q, %q", m.RepositoryURL, m.Homepage, m.MCPName, tt.repoField, tt.homepage, tt.mcpName)
			}
			f, ok := m.FindRepository()
			switch {
			case tt.found == nil && ok:
				t.Errorf("FindRepository = %+v, want none", f)
			case tt.found != nil && (!ok || f.Repository != tt.found.Repo || f.Field != tt.found.Field):
				t.Errorf("FindRepository = %+v, %v; want %+v", f, ok, *tt.found)
			}
		})
	}
}

func npmRecordedMeta(t *testing.T, file, version string) *evidence.RegistryMeta {
	t.Helper()
	m, err := NPMMetadata(regVersion(t, regDoc(t, file, nil), version))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestPyPILinksOrder: every project URL is kept with its label as
// published, in the document's order, then home_page and download_url; a
// password in a URL is not.
func TestPyPILinksOrder(t *testing.T) {
	doc := []byte(`{"info": {"name": "x", "version": "1.0", "project_urls": {
		"Documentation": "https://x.readthedocs.io", "Bug Tracker": "https://github.com/acme/x/issues",
		"Changelog": "https://github.com/acme/x/blob/main/CHANGES.md", "Funding": null, "": "https://nowhere.example"},
		"home_page": "https://acme.example", "download_url": "https://user:hunter2@github.com/acme/x/archive/v1.0.tar.gz"}}`)
	m, err := PyPIMetadata(doc, "1.0")
	if err != nil {
		t.Fatal(err)
	}
	want := []evidence.RegistryLink{
		{Field: "project_urls.Documentation", URL: "https://x.readthedocs.io"},
		{Field: "project_urls.Bug Tracker", URL: "https://github.com/acme/x/issues"},
		{Field: "project_urls.Changelog", URL: "https://github.com/acme/x/blob/main/CHANGES.md"},
		{Field: "home_page", URL: "https://acme.example"},
		{Field: "download_url", URL: "https://user:redacted@github.com/acme/x/archive/v1.0.tar.gz"},
	}
	if d := cmp.Diff(want, m.Links); d != "" {
		t.Errorf("Links (-want +got):\n%s", d)
	}
	// The issue tracker comes before any other label.
	if f, ok := m.FindRepository(); !ok || f.Field != "project_urls.Bug Tracker" || f.Repository.Owner != "acme" || f.Repository.Name != "x" {
		t.Errorf("FindRepository = %+v, %v", f, ok)
	}
}
