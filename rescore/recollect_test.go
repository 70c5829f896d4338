package rescore

import (
	"fmt"
	"slices"
	"testing"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
)

func TestRecollectSignals(t *testing.T) {
	fx := loadRescoreFixtures(t)
	v3, err := rubric.Load("3")
	if err != nil {
		t.Fatal(err)
	}
	v5 := rubric.Current()
	v10, err := rubric.Load("10")
	if err != nil {
		t.Fatal(err)
	}
	stale := withJudge(withSupply(fx.base, fx.dnssec), fx.judge)
	j := *stale.Judge
	j.SpecDigest = "sha256:" + fmt.Sprintf("%064x", 1)
	stale.Judge = &j
	notAsked := withSupply(fx.base, fx.dnssec)
	notAsked.Signals[evidence.SignalJudge] = evidence.Signal{State: evidence.StateUnavailable, Reason: "no key"}
	tests := []struct {
		name string
		b    *evidence.Bundle
		r    *rubric.Rubric
		want []string
	}{
		// The fixtures were recorded before the MCP registry was asked about
		// their mcpName; rubric v11 reads that signal, v10 does not.
		{"complete_evidence", withJudge(withSupply(fx.base, fx.dnssec), fx.judge), v5, []string{evidence.SignalMCPRegistry}},
		{"complete_evidence_v10", withJudge(withSupply(fx.base, fx.dnssec), fx.judge), v10, nil},
		{"no_registry_metadata", fx.base, v5, []string{evidence.SignalRegistryMeta}},
		{"written_before_dnssec_and_judge", without(withSupply(fx.base, fx.supply), evidence.SignalDNSSEC, evidence.SignalJudge), v5, []string{evidence.SignalDNSSEC, evidence.SignalJudge, evidence.SignalMCPRegistry}},
		{"rubric_v3_reads_neither", without(withSupply(fx.base, fx.supply), evidence.SignalDNSSEC, evidence.SignalJudge), v3, nil},
		{"judge_under_another_spec", stale, v5, []string{evidence.SignalJudge, evidence.SignalMCPRegistry}},
		{"judge_spec_irrelevant_to_v3", stale, v3, nil},
		{"judge_unavailable_is_an_answer", notAsked, v10, nil},
		{"sandbox_signal_missing", without(withSupply(fx.base, fx.dnssec), evidence.SignalBehavior), v10, []string{evidence.SignalBehavior}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := RecollectSignals(tc.b, tc.r)
			if !slices.Equal(got, tc.want) {
				t.Errorf("RecollectSignals = %v, want %v", got, tc.want)
			}
		})
	}
}
