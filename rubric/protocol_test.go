package rubric

import (
	"strings"
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
		for _, notFound := range []string{
			`calling "resources/templates/list": Method not found`,
			// maverick-mcp-server's own message, in lower case; bundles
			// from then on also carry the code.
			`calling "resources/templates/list": method not found: resources/templates/list`,
			`calling "resources/templates/list": no such method (JSON-RPC error -32601)`,
		} {
			errs["resources/templates/list"] = notFound
			b := okBundle()
			b.Session.ListErrors = errs
			got := outcomeOf(Evaluate(b, mustLoad(t, tc.version)), "protocol_hygiene")
			want := outcome{State: StateScored, Score: tc.score, Findings: tc.want}
			if d := diff(want, got); d != "" {
				t.Errorf("v%s %q protocol_hygiene (-want +got):\n%s", tc.version, notFound, d)
			}
		}
	}
}

// TestListLimitV11: a list call that failed for the network the run phase
// does not give (linear-mcp-server lists its resources from Linear's API:
// "Fetch failed") or for configuration the scan did not give
// (mysql-mcp-server: "Missing required database configuration") was a
// failed list under v10; from v11 it is not assessed, no finding, no
// deduction, with the reason in the dimension's.
func TestListLimitV11(t *testing.T) {
	for _, errText := range []string{`calling "resources/list": Fetch failed`, `calling "resources/list": Missing required database configuration`} {
		for _, v := range []string{"10", "11"} {
			b := okBundle()
			b.Session.ListErrors = map[string]string{"resources/list": errText}
			res := Evaluate(b, mustLoad(t, v))
			got := outcomeOf(res, "protocol_hygiene")
			want := outcome{State: StateScored, Score: 100, Findings: []string{}}
			if v == "10" {
				want = outcome{State: StateScored, Score: 75, Findings: []string{"pkg.protocol.list.failed resources/list"}}
			}
			if d := diff(want, got); d != "" {
				t.Errorf("v%s %q (-want +got):\n%s", v, errText, d)
			}
			if v == "11" && !strings.Contains(dim(res, "protocol_hygiene").Reason, "not assessed: resources/list needed") {
				t.Errorf("v11 reason %q", dim(res, "protocol_hygiene").Reason)
			}
		}
	}
}
