package main

import "testing"

// Rule 7 per ecosystem in rule order: the quota met by the first
// candidates of an ecosystem puts every later recorded one beyond it, and
// a gap (a candidate not yet recorded) before the quota leaves the cut-off
// open.
func TestRelabel(t *testing.T) {
	mk := func(eco, outcome string) *candidate { return &candidate{Eco: eco, Outcome: outcome} }
	list := []*candidate{
		mk("npm", "in corpus"),
		mk("pypi", "crashed: x"),
		mk("npm", "crashed: y"),
		mk("pypi", ""),
		mk("npm", "in corpus"),
		mk("pypi", "in corpus"),
		mk("npm", "in corpus"),
		mk("npm", "needs configuration: z"),
		mk("npm", ""),
		mk("pypi", "in corpus"),
	}
	in := relabel(list, map[string]int{"npm": 2, "pypi": 1})
	want := []string{"in corpus", "crashed: x", "crashed: y", "", "in corpus", "in corpus",
		beyondPrefix + "in corpus", beyondPrefix + "needs configuration: z", "", "in corpus"}
	for i, c := range list {
		if c.Outcome != want[i] {
			t.Errorf("%d: %q, want %q", i, c.Outcome, want[i])
		}
	}
	if in["npm"] != 2 || in["pypi"] != 2 {
		t.Errorf("in corpus %v", in)
	}
	// The gap is filled and does not list: pypi's cut-off is after index 5.
	list[3].Outcome = "crashed: w"
	in = relabel(list, map[string]int{"npm": 2, "pypi": 1})
	if list[9].Outcome != beyondPrefix+"in corpus" || in["pypi"] != 1 {
		t.Errorf("pypi after the gap: %q, %v", list[9].Outcome, in)
	}
	// A larger quota takes the label back.
	relabel(list, map[string]int{"npm": 5, "pypi": 5})
	if list[6].Outcome != "in corpus" || list[7].Outcome != "needs configuration: z" {
		t.Errorf("labels not taken back: %q %q", list[6].Outcome, list[7].Outcome)
	}
}
