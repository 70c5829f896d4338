package rubric

import (
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
)

func TestMaintenanceSignal(t *testing.T) {
	reg := func(fn func(r *evidence.RegistryMeta)) func(*evidence.Bundle) {
		return func(b *evidence.Bundle) { fn(b.Supply.Registry) }
	}
	gh := func(fn func(g *evidence.GitHubResult)) func(*evidence.Bundle) {
		return func(b *evidence.Bundle) { fn(b.Supply.GitHub) }
	}
	tests := []probeCase{
		{name: "maintained", want: outcome{State: StateScored, Score: 100}},
		{
			name:   "deprecated",
			modify: reg(func(r *evidence.RegistryMeta) { r.Deprecated = "use @acme/notes instead" }),
			want:   outcome{State: StateScored, Score: 40, Findings: []string{"pkg.supply.registry.deprecated mcp-notes@1.2.3"}},
		},
		{
			name:   "archived",
			modify: gh(func(g *evidence.GitHubResult) { g.Archived = true }),
			want:   outcome{State: StateScored, Score: 60, Findings: []string{"pkg.supply.github.archived github.com/acme/mcp-notes"}},
		},
		{
			name:   "stale",
			modify: gh(func(g *evidence.GitHubResult) { g.PushedAt = at(-366 * day) }),
			want:   outcome{State: StateScored, Score: 75, Findings: []string{"pkg.supply.github.stale github.com/acme/mcp-notes"}},
		},
		{
			name:   "pushed_exactly_the_threshold_ago_is_not_stale",
			modify: gh(func(g *evidence.GitHubResult) { g.PushedAt = at(-365 * day) }),
			want:   outcome{State: StateScored, Score: 100},
		},
		{
			name:   "last_push_unknown_earns_no_credit",
			modify: gh(func(g *evidence.GitHubResult) { g.PushedAt = nil }),
			want:   outcome{State: StateScored, Score: 75},
		},
		{
			name: "published_hours_before_the_run",
			modify: reg(func(r *evidence.RegistryMeta) {
				r.PublishedAt = at(-5 * time.Hour)
			}),
			want: outcome{State: StateScored, Score: 80, Findings: []string{"pkg.supply.registry.recent_publish mcp-notes@1.2.3"}},
		},
		{
			name:   "published_exactly_the_threshold_before",
			modify: reg(func(r *evidence.RegistryMeta) { r.PublishedAt = at(-72 * time.Hour) }),
			want:   outcome{State: StateScored, Score: 100},
		},
		{
			name: "publish_time_from_the_target_when_the_metadata_lacks_it",
			modify: both(reg(func(r *evidence.RegistryMeta) { r.PublishedAt = nil }),
				func(b *evidence.Bundle) { b.Target.PublishedAt = at(-2 * time.Hour) }),
			// Recent (-20); the previous version's gap is measured from
			// the same time: 40 days minus 2 hours.
			want: outcome{State: StateScored, Score: 80, Findings: []string{"pkg.supply.registry.recent_publish mcp-notes@1.2.3"}},
		},
		{
			// Unknown publish time: no credit for recency (-20) nor for
			// the gap since the previous version (-10); no finding.
			name:   "publish_time_unknown",
			modify: reg(func(r *evidence.RegistryMeta) { r.PublishedAt = nil }),
			want:   outcome{State: StateScored, Score: 70},
		},
		{
			name:   "new_package",
			modify: reg(func(r *evidence.RegistryMeta) { r.FirstPublishedAt, r.PublishedAt = at(-10*day), at(-4*day) }),
			want:   outcome{State: StateScored, Score: 80, Findings: []string{"pkg.supply.registry.new_package mcp-notes@1.2.3"}},
		},
		{
			name:   "rapid_release",
			modify: reg(func(r *evidence.RegistryMeta) { r.PreviousPublishedAt = at(-30*day - 2*time.Hour) }),
			want:   outcome{State: StateScored, Score: 90, Findings: []string{"pkg.supply.registry.rapid_release mcp-notes@1.2.3"}},
		},
		{
			name: "first_version_has_no_previous",
			modify: reg(func(r *evidence.RegistryMeta) {
				r.PreviousVersion, r.PreviousPublishedAt, r.VersionCount = "", nil, 1
				r.FirstPublishedAt = r.PublishedAt
			}),
			want: outcome{State: StateScored, Score: 100},
		},
		{
			name:   "previous_time_unknown",
			modify: reg(func(r *evidence.RegistryMeta) { r.PreviousPublishedAt = nil }),
			want:   outcome{State: StateScored, Score: 90},
		},
		{
			// No repository: nothing to ask GitHub, so the dimension is
			// scored, and the unknown activity earns no credit.
			name: "no_repository",
			modify: both(setSignal(evidence.SignalGitHub, "not_assessed", "no repository declared"),
				reg(func(r *evidence.RegistryMeta) { r.RepositoryURL, r.Repository = "", nil }),
				func(b *evidence.Bundle) { b.Supply.GitHub = nil }),
			want: outcome{State: StateScored, Score: 75},
		},
		{
			name:   "repository_not_found",
			modify: gh(func(g *evidence.GitHubResult) { *g = evidence.GitHubResult{Requested: "acme/mcp-notes"} }),
			want:   outcome{State: StateScored, Score: 75},
		},
		{
			// Deprecated, archived and stale, a rapid release: clamped.
			name: "clamped_at_zero",
			modify: both(reg(func(r *evidence.RegistryMeta) {
				r.Deprecated = "unmaintained"
				r.PreviousPublishedAt = at(-30*day - time.Hour)
			}), gh(func(g *evidence.GitHubResult) { g.Archived, g.PushedAt = true, at(-800*day) })),
			want: outcome{State: StateScored, Score: 0, Findings: []string{
				"pkg.supply.github.archived github.com/acme/mcp-notes", "pkg.supply.github.stale github.com/acme/mcp-notes",
				"pkg.supply.registry.deprecated mcp-notes@1.2.3", "pkg.supply.registry.rapid_release mcp-notes@1.2.3",
			}},
		},
		{
			name: "github_unavailable_still_reports_the_metadata",
			modify: both(setSignal(evidence.SignalGitHub, "unavailable", "rate limited"),
				reg(func(r *evidence.RegistryMeta) { r.Deprecated = "use v2" })),
			want: outcome{State: StateZeroPoint, Score: 0, Findings: []string{"pkg.supply.registry.deprecated mcp-notes@1.2.3"}},
		},
	}
	for _, st := range signalStates {
		tests = append(tests,
			probeCase{name: "registry_metadata_" + st.state, modify: setSignal(evidence.SignalRegistryMeta, st.state, "why"), want: outcome{State: st.want, Score: 0}},
			probeCase{name: "github_" + st.state, modify: setSignal(evidence.SignalGitHub, st.state, "why"), want: outcome{State: st.want, Score: 0}},
		)
	}
	runSupplyCases(t, DimensionMaintenance, tests)
}

// TestSupplyTimesFollowTheRunDate moves the run date, and nothing else:
// the same evidence is recent under one date and not under the other.
func TestSupplyTimesFollowTheRunDate(t *testing.T) {
	b := supplyBundle()
	b.Supply.Registry.PublishedAt = at(-30 * time.Hour)
	if got := outcomeOf(Evaluate(b, Current()), DimensionMaintenance); got.Score != 80 {
		t.Errorf("published 30 hours before the run: %+v, want 80 with recent_publish", got)
	}
	b.Run.Date = b.Run.Date.Add(10 * day)
	if got := outcomeOf(Evaluate(b, Current()), DimensionMaintenance); got.Score != 100 || len(got.Findings) != 0 {
		t.Errorf("run ten days later: %+v, want 100 and no finding", got)
	}
}
