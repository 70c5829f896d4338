package rubric

import (
	"testing"

	"github.com/verifymcp/verifymcp/evidence"
)

func TestProvenance(t *testing.T) {
	noGitHubAsked := setSignal(evidence.SignalGitHub, "not_assessed", "no repository on GitHub declared")
	reg := func(fn func(r *evidence.RegistryMeta)) func(*evidence.Bundle) {
		return func(b *evidence.Bundle) { fn(b.Supply.Registry) }
	}
	gh := func(fn func(g *evidence.GitHubResult)) func(*evidence.Bundle) {
		return func(b *evidence.Bundle) { fn(b.Supply.GitHub) }
	}
	tests := []probeCase{
		{name: "traceable", want: outcome{State: StateScored, Score: 100}},
		{
			// 100 - 50 (no repository) - 30 (the GitHub namespace cannot
			// be the repository's owner's).
			name: "no_repository",
			modify: both(noGitHubAsked, reg(func(r *evidence.RegistryMeta) { r.RepositoryURL, r.Repository = "", nil }),
				func(b *evidence.Bundle) { b.Supply.GitHub = nil }),
			want: outcome{State: StateScored, Score: 20, Findings: []string{
				"pkg.supply.registry.mcpname_mismatch mcp-notes@1.2.3", "pkg.supply.registry.no_repository mcp-notes@1.2.3",
			}},
		},
		{
			name: "unparseable_repository",
			modify: both(noGitHubAsked, reg(func(r *evidence.RegistryMeta) {
				r.RepositoryURL, r.Repository, r.RepositoryError = "acme notes", nil, "not a URL or shorthand"
				r.MCPName = ""
			}), func(b *evidence.Bundle) { b.Supply.GitHub = nil }),
			want: outcome{State: StateScored, Score: 40, Findings: []string{
				"pkg.supply.registry.mcpname_absent mcp-notes@1.2.3", "pkg.supply.registry.repository_unparseable mcp-notes@1.2.3",
			}},
		},
		{
			// A repository elsewhere is not checked, so it earns no credit
			// for existing (-25); the reverse-DNS mcpName matches the
			// homepage's domain.
			name: "repository_on_another_host",
			modify: both(noGitHubAsked, reg(func(r *evidence.RegistryMeta) {
				r.RepositoryURL = "git+https://gitlab.com/acme/mcp-notes.git"
				r.Repository = &evidence.Repository{Host: "gitlab.com", Owner: "acme", Name: "mcp-notes"}
				r.MCPName = "dev.acme/notes"
			}), func(b *evidence.Bundle) { b.Supply.GitHub = nil }),
			want: outcome{State: StateScored, Score: 75},
		},
		{
			name:   "no_provenance",
			modify: reg(func(r *evidence.RegistryMeta) { r.Provenance = false }),
			want:   outcome{State: StateScored, Score: 70, Findings: []string{"pkg.supply.registry.no_provenance mcp-notes@1.2.3"}},
		},
		{
			name:   "mcpname_absent",
			modify: reg(func(r *evidence.RegistryMeta) { r.MCPName = "" }),
			want:   outcome{State: StateScored, Score: 90, Findings: []string{"pkg.supply.registry.mcpname_absent mcp-notes@1.2.3"}},
		},
		{
			name:   "mcpname_of_another_owner",
			modify: reg(func(r *evidence.RegistryMeta) { r.MCPName = "io.github.modelcontextprotocol/notes" }),
			want:   outcome{State: StateScored, Score: 70, Findings: []string{"pkg.supply.registry.mcpname_mismatch mcp-notes@1.2.3"}},
		},
		{
			name:   "repository_not_found",
			modify: gh(func(g *evidence.GitHubResult) { *g = evidence.GitHubResult{Requested: "acme/mcp-notes"} }),
			want:   outcome{State: StateScored, Score: 50, Findings: []string{"pkg.supply.github.not_found github.com/acme/mcp-notes"}},
		},
		{
			name:   "repository_disabled",
			modify: gh(func(g *evidence.GitHubResult) { g.Disabled = true }),
			want:   outcome{State: StateScored, Score: 50, Findings: []string{"pkg.supply.github.disabled github.com/acme/mcp-notes"}},
		},
		{
			name:   "repository_renamed",
			modify: gh(func(g *evidence.GitHubResult) { g.FullName = "acme-archive/mcp-notes" }),
			want:   outcome{State: StateScored, Score: 85, Findings: []string{"pkg.supply.github.renamed github.com/acme/mcp-notes"}},
		},
		{
			name:   "case_of_the_name_is_not_a_rename",
			modify: gh(func(g *evidence.GitHubResult) { g.FullName = "Acme/MCP-Notes" }),
			want:   outcome{State: StateScored, Score: 100},
		},
		{
			name: "clamped_at_zero",
			modify: both(reg(func(r *evidence.RegistryMeta) { r.Provenance, r.MCPName = false, "com.evil/notes" }),
				gh(func(g *evidence.GitHubResult) { *g = evidence.GitHubResult{Requested: "acme/mcp-notes"} })),
			want: outcome{State: StateScored, Score: 0, Findings: []string{
				"pkg.supply.github.not_found github.com/acme/mcp-notes", "pkg.supply.registry.mcpname_mismatch mcp-notes@1.2.3",
				"pkg.supply.registry.no_provenance mcp-notes@1.2.3",
			}},
		},
		{
			// Registry findings fire although GitHub did not answer.
			name: "github_unavailable_still_reports_the_metadata",
			modify: both(setSignal(evidence.SignalGitHub, "unavailable", "no GitHub token configured"),
				reg(func(r *evidence.RegistryMeta) { r.Provenance = false })),
			want: outcome{State: StateZeroPoint, Score: 0, Findings: []string{"pkg.supply.registry.no_provenance mcp-notes@1.2.3"}},
		},
		{
			// --skip github with a GitHub repository declared is an opt-out.
			name: "github_skipped_with_a_github_repository",
			modify: both(setSignal(evidence.SignalGitHub, "not_assessed", "--skip github"),
				reg(func(r *evidence.RegistryMeta) { r.MCPName = "" })),
			want: outcome{State: StateDropped, Score: 0, Findings: []string{"pkg.supply.registry.mcpname_absent mcp-notes@1.2.3"}},
		},
		{
			name: "metadata_unavailable_still_reports_github",
			modify: both(setSignal(evidence.SignalRegistryMeta, "unavailable", "registry: 503"),
				gh(func(g *evidence.GitHubResult) { *g = evidence.GitHubResult{Requested: "acme/mcp-notes"} })),
			want: outcome{State: StateZeroPoint, Score: 0, Findings: []string{"pkg.supply.github.not_found github.com/acme/mcp-notes"}},
		},
		{
			name:   "metadata_observed_without_metadata",
			modify: func(b *evidence.Bundle) { b.Supply.Registry = nil },
			want:   outcome{State: StateZeroPoint, Score: 0},
		},
		{
			name:   "github_observed_without_an_answer",
			modify: func(b *evidence.Bundle) { b.Supply.GitHub = nil },
			want:   outcome{State: StateZeroPoint, Score: 0},
		},
		{
			name:   "no_supply_evidence_at_all",
			modify: func(b *evidence.Bundle) { b.Supply = nil },
			want:   outcome{State: StateZeroPoint, Score: 0},
		},
	}
	for _, st := range signalStates {
		tests = append(tests,
			probeCase{name: "registry_metadata_" + st.state, modify: setSignal(evidence.SignalRegistryMeta, st.state, "why"), want: outcome{State: st.want, Score: 0}},
			probeCase{name: "github_" + st.state, modify: setSignal(evidence.SignalGitHub, st.state, "why"), want: outcome{State: st.want, Score: 0}},
		)
	}
	// How versions 3 to 10 read the repository and the mcpName; version
	// 11 reads them as TestProvenanceV11 says.
	untilV11 := map[string]bool{"no_repository": true, "repository_on_another_host": true, "mcpname_of_another_owner": true, "clamped_at_zero": true}
	runSupplyCasesWhere(t, DimensionProvenance, tests, func(v, name string) bool {
		return !untilV11[name] || compareVersions(v, repositoryLinksSince) < 0
	})
}

func TestCheckMCPName(t *testing.T) {
	shared := Current().Params.Supply.Provenance.SharedHosts
	gh := &evidence.Repository{Host: "github.com", Owner: "Acme", Name: "mcp-notes"}
	tests := []struct {
		name, mcpName, homepage string
		repo                    *evidence.Repository
		consistent              bool
	}{
		{"github_owner", "io.github.acme/mcp-notes", "", gh, true},
		{"github_owner_case", "io.github.ACME/notes", "", gh, true},
		{"github_other_owner", "io.github.modelcontextprotocol/notes", "", gh, false},
		{"github_no_repository", "io.github.acme/notes", "", nil, false},
		{"github_repository_elsewhere", "io.github.acme/notes", "", &evidence.Repository{Host: "gitlab.com", Owner: "acme", Name: "x"}, false},
		{"domain_of_homepage", "dev.acme/notes", "https://acme.dev/notes", gh, true},
		{"homepage_with_www_and_port", "dev.acme/notes", "https://www.acme.dev:8443/", gh, true},
		{"namespace_subdomain_of_homepage", "dev.acme.mcp/notes", "https://acme.dev", gh, true},
		{"homepage_subdomain_of_namespace", "dev.acme/notes", "https://docs.acme.dev", gh, true},
		{"self_hosted_repository", "dev.acme/notes", "", &evidence.Repository{Host: "git.acme.dev", Owner: "a", Name: "b"}, true},
		{"homepage_on_github_says_nothing", "com.github/notes", "https://github.com/acme/mcp-notes#readme", gh, false},
		{"other_domain", "com.example/notes", "https://acme.dev", gh, false},
		{"lookalike_domain", "dev.acme/notes", "https://notacme.dev", gh, false},
		{"no_slash", "io.github.acme", "", gh, false},
		{"one_label", "acme/notes", "https://acme", gh, false},
		{"empty_label", "dev..acme/notes", "https://acme.dev", gh, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := &evidence.RegistryMeta{MCPName: tt.mcpName, Homepage: tt.homepage, Repository: tt.repo}
			why := checkMCPName(reg, shared)
			if (why == "") != tt.consistent {
				t.Errorf("checkMCPName(%q, homepage %q) = %q, want consistent %v", tt.mcpName, tt.homepage, why, tt.consistent)
			}
		})
	}
}
