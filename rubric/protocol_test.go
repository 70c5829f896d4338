package rubric

import (
	"testing"
)

// TestListUnsupportedV11: a list method of a declared capability answered
// with Method not found (onchain-mcp and mcp-linear declare resources and
// answer resources/templates/list so) was pkg.protocol.list.failed
// (medium) before rubric v11; from v11 it is pkg.protocol.list.unsupported
// (low), with a smaller deduction, and a real failure is still a failure.
func TestListUnsupportedV11(t *testing.T) {
	errs := map[string]string{
		"resources/templates/list": `calling "resources/templates/list": Method not found`,
		"resources/list":           "-32603 internal error",
	}
	for _, tc := range []struct {
		version string
		score   float64
		want    []string
	}{
		{"10", 50, []string{"pkg.protocol.list.failed resources/list", "pkg.protocol.list.failed resources/templates/list"}},
		{"11", 65, []string{"pkg.protocol.list.failed resources/list", "pkg.protocol.list.unsupported resources/templates/list"}},
	} {
		b := okBundle()
		b.Session.ListErrors = errs
		got := outcomeOf(Evaluate(b, mustLoad(t, tc.version)), "protocol_hygiene")
		want := outcome{State: StateScored, Score: tc.score, Findings: tc.want}
		if d := diff(want, got); d != "" {
			t.Errorf("v%s protocol_hygiene (-want +got):\n%s", tc.version, d)
		}
	}
}
