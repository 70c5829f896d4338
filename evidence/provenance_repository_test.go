package evidence

import "testing"

func TestCodeHostRepository(t *testing.T) {
	tests := []struct {
		url, host, owner, name string // owner "" means none
	}{
		{"https://github.com/neondatabase/mcp-server-neon/", "github.com", "neondatabase", "mcp-server-neon"},
		{"https://github.com/upstash/context7#readme", "github.com", "upstash", "context7"},
		{"https://github.com/Microsoft/mcp/blob/main/servers/Azure.Mcp.Server#readme", "github.com", "Microsoft", "mcp"},
		{"https://www.github.com/acme/x.git", "github.com", "acme", "x"},
		{"http://github.com/request/request/issues", "github.com", "request", "request"},
		{"https://github.com/awslabs/mcp/blob/main/src/core-mcp-server/CHANGELOG.md", "github.com", "awslabs", "mcp"},
		{"https://gitlab.com/group/sub/project/-/issues", "gitlab.com", "group/sub", "project"},
		{"https://gitlab.com/group/project/issues", "gitlab.com", "group", "project"},
		{"https://gitlab.com/group/sub/project", "gitlab.com", "group/sub", "project"},
		{"https://bitbucket.org/acme/x/src/main/", "bitbucket.org", "acme", "x"},
		{"https://codeberg.org/acme/x", "codeberg.org", "acme", "x"},
		// No repository named.
		{"https://github.com/acme", "", "", ""},
		{"https://github.com/sponsors/acme", "", "", ""},
		{"https://github.com/orgs/acme/discussions", "", "", ""},
		{"https://acme.github.io/x/", "", "", ""},
		{"https://modelcontextprotocol.io", "", "", ""},
		{"https://pypi.org/project/x/", "", "", ""},
		{"git+https://github.com/acme/x.git", "", "", ""},
		{"https://user:pw@github.com/acme/x", "", "", ""},
		{"github.com/acme/x", "", "", ""},
		{"", "", "", ""},
	}
	for _, tt := range tests {
		r, ok := CodeHostRepository(tt.url)
		switch {
		case tt.owner == "" && ok:
			t.Errorf("CodeHostRepository(%q) = %+v, want none", tt.url, r)
		case tt.owner != "" && (!ok || r.Host != tt.host || r.Owner != tt.owner || r.Name != tt.name):
			t.Errorf("CodeHostRepository(%q) = %+v, %v; want %s/%s/%s", tt.url, r, ok, tt.host, tt.owner, tt.name)
		}
	}
}

func TestFindRepository(t *testing.T) {
	// Metadata recorded before links were kept is read from its homepage.
	old := &RegistryMeta{Homepage: "https://github.com/acme/x#readme"}
	if f, ok := old.FindRepository(); !ok || f.Field != "homepage" || f.Repository.Name != "x" {
		t.Errorf("old metadata: %+v, %v", f, ok)
	}
	// Links read: the homepage comes before the issue tracker, which
	// comes before other labels; a source label comes first.
	m := &RegistryMeta{LinksRead: true, Links: []RegistryLink{
		{Field: "project_urls.Documentation", URL: "https://github.com/acme/docs"},
		{Field: "project_urls.Issues", URL: "https://github.com/acme/x/issues"},
		{Field: "project_urls.Home", URL: "https://acme.example"},
	}}
	if f, ok := m.FindRepository(); !ok || f.Field != "project_urls.Issues" {
		t.Errorf("FindRepository = %+v, %v; want the Issues link", f, ok)
	}
	m.Links = append(m.Links, RegistryLink{Field: "project_urls.Source Code", URL: "https://gitlab.com/acme/x"})
	if f, ok := m.FindRepository(); !ok || f.Field != "project_urls.Source Code" || f.Repository.Host != "gitlab.com" {
		t.Errorf("FindRepository = %+v, %v; want the Source Code link", f, ok)
	}
	// Links read and none names a repository: the homepage field is not
	// read again.
	none := &RegistryMeta{LinksRead: true, Homepage: "https://github.com/acme/x"}
	if f, ok := none.FindRepository(); ok {
		t.Errorf("FindRepository = %+v, want none", f)
	}
}
