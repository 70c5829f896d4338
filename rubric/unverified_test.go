package rubric

import (
	"strings"
	"testing"
)

// TestUnverifiedIsNotAFinding: a third party that did not answer is a
// signal state, never a claim about the package. Under rubric v10 it was
// listed among the findings (pkg.supply.socket.unverified, medium, first
// in the table); from v11 no unverified marker is a finding, and every
// dimension whose signal did not answer still gets its zero point, never
// a clean score.
func TestUnverifiedIsNotAFinding(t *testing.T) {
	b := loadBundle(t, "unavailable.bundle.json")
	markers := func(res Result) []string {
		var out []string
		for _, f := range res.Findings {
			if strings.HasSuffix(f.Code, ".unverified") {
				out = append(out, f.Code)
			}
		}
		return out
	}
	old := Evaluate(b, mustLoad(t, "10"))
	if len(markers(old)) == 0 {
		t.Fatal("rubric v10 lists no unverified marker for a bundle whose third parties did not answer; the test's bundle no longer shows the difference")
	}
	r := mustLoad(t, "11")
	res := Evaluate(b, r)
	if got := markers(res); len(got) != 0 {
		t.Errorf("rubric v11 lists unverified markers as findings: %v", got)
	}
	for _, c := range r.Codes {
		if strings.HasSuffix(c.Code, ".unverified") {
			t.Errorf("rubric v11 catalogues %s", c.Code)
		}
	}
	for _, d := range old.Dimensions {
		if d.State != StateZeroPoint || !strings.HasPrefix(d.Reason, "signal ") {
			continue
		}
		got := dim(res, d.ID)
		if got.State != StateZeroPoint || got.Score != d.Score {
			t.Errorf("dimension %s: v10 %s %v, v11 %s %v; a signal that did not answer must keep its zero point", d.ID, d.State, d.Score, got.State, got.Score)
		}
	}
}
