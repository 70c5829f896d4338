package dnssec_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/verifymcp/verifymcp/dnssec"
)

func TestDomains(t *testing.T) {
	type d = dnssec.Domain
	src := func(s ...dnssec.Source) []dnssec.Source { return s }
	tests := []struct {
		name string
		in   dnssec.Inputs
		want []dnssec.Domain
	}{
		{"empty", dnssec.Inputs{}, nil},
		{"homepage", dnssec.Inputs{Homepage: "https://Docs.Example.COM./guide?x=1"},
			[]d{{Name: "docs.example.com", Sources: src(dnssec.SourceHomepage)}}},
		{"homepage_without_scheme", dnssec.Inputs{Homepage: "example.com/mcp"},
			[]d{{Name: "example.com", Sources: src(dnssec.SourceHomepage)}}},
		{"homepage_with_port_and_userinfo", dnssec.Inputs{Homepage: "https://u:p@mcp.example.net:8443/"},
			[]d{{Name: "mcp.example.net", Sources: src(dnssec.SourceHomepage)}}},
		{"forge_homepage_skipped", dnssec.Inputs{Homepage: "https://github.com/o/r#readme", AuthorURL: "https://someone.github.io/"}, nil},
		{"registry_homepage_skipped", dnssec.Inputs{Homepage: "https://www.npmjs.com/package/x"}, nil},
		{"repository_forges_skipped", dnssec.Inputs{Repository: "git+https://github.com/o/r.git"}, nil},
		{"repository_forges_skipped_gitlab", dnssec.Inputs{Repository: "https://gitlab.com/o/r"}, nil},
		{"repository_forges_skipped_bitbucket", dnssec.Inputs{Repository: "git@bitbucket.org:o/r.git"}, nil},
		{"repository_forges_skipped_codeberg", dnssec.Inputs{Repository: "https://codeberg.org/o/r"}, nil},
		{"repository_forges_skipped_sourceforge", dnssec.Inputs{Repository: "https://sourceforge.net/p/x/code"}, nil},
		{"repository_shorthands_skipped", dnssec.Inputs{Repository: "github:o/r"}, nil},
		{"repository_bare_shorthand_skipped", dnssec.Inputs{Repository: "o/r"}, nil},
		{"repository_self_hosted", dnssec.Inputs{Repository: "git+ssh://git@git.example.org/o/r.git"},
			[]d{{Name: "git.example.org", Sources: src(dnssec.SourceRepository)}}},
		{"repository_scp_like", dnssec.Inputs{Repository: "git@git.example.org:o/r.git"},
			[]d{{Name: "git.example.org", Sources: src(dnssec.SourceRepository)}}},
		{"emails", dnssec.Inputs{MaintainerEmails: []string{"a@Example.com", "Bea <b@example.com>", "nobody", "c@[192.0.2.1]", ""}},
			[]d{{Name: "example.com", Sources: src(dnssec.SourceMaintainerEmail)}}},
		{"author_url", dnssec.Inputs{AuthorURL: "http://author.example/"},
			[]d{{Name: "author.example", Sources: src(dnssec.SourceAuthorURL)}}},
		{"mcp_name", dnssec.Inputs{MCPName: "com.example/server"},
			[]d{{Name: "example.com", Sources: src(dnssec.SourceMCPName)}}},
		{"mcp_name_deeper", dnssec.Inputs{MCPName: "com.example.mcp/x"},
			[]d{{Name: "mcp.example.com", Sources: src(dnssec.SourceMCPName)}}},
		{"mcp_name_github_skipped", dnssec.Inputs{MCPName: "io.github.someone/server"}, nil},
		{"mcp_name_without_server_skipped", dnssec.Inputs{MCPName: "com.example"}, nil},
		{"ip_literals_and_localhost_skipped", dnssec.Inputs{
			Homepage: "http://127.0.0.1:3000/", Repository: "https://[2001:db8::1]/r", AuthorURL: "http://localhost:8080",
			MaintainerEmails: []string{"root@localhost", "x@intranet"},
		}, nil},
		{"non_ascii_skipped", dnssec.Inputs{Homepage: "https://bücher.example/"}, nil},
		{"deduplicated_with_all_sources_in_order", dnssec.Inputs{
			Homepage:         "https://example.com",
			Repository:       "https://git.example.com/r",
			MaintainerEmails: []string{"a@example.com", "b@EXAMPLE.com."},
			AuthorURL:        "https://example.com/about",
			MCPName:          "com.example/s",
		}, []d{
			{Name: "example.com", Sources: src(dnssec.SourceHomepage, dnssec.SourceMaintainerEmail, dnssec.SourceAuthorURL, dnssec.SourceMCPName)},
			{Name: "git.example.com", Sources: src(dnssec.SourceRepository)},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := dnssec.Domains(tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Domains (-want +got):\n%s", diff)
			}
		})
	}
}
