package benchmark

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSelect(t *testing.T) {
	cases := []Case{{ID: "a", Kind: KindSynthetic}, {ID: "b", Kind: KindReviewed}, {ID: "c", Kind: KindSynthetic}}
	ids := func(cs []Case) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	tests := []struct {
		name        string
		kind        Kind
		only        []string
		want        []string
		wantMissing string
	}{
		{name: "all", want: []string{"a", "b", "c"}},
		{name: "by_kind", kind: KindSynthetic, want: []string{"a", "c"}},
		{name: "ids_in_the_order_given", only: []string{"c", "a"}, want: []string{"c", "a"}},
		{name: "id_of_another_kind_is_missing", kind: KindReviewed, only: []string{"a"}, wantMissing: "a"},
		{name: "unknown_id", only: []string{"b", "zz"}, wantMissing: "zz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, missing := Select(cases, tt.kind, tt.only)
			if missing != tt.wantMissing {
				t.Fatalf("missing = %q, want %q", missing, tt.wantMissing)
			}
			if diff := cmp.Diff(tt.want, ids(got)); diff != "" {
				t.Errorf("Select (-want +got):\n%s", diff)
			}
		})
	}
	if len(cases) != 3 {
		t.Error("Select changed its input")
	}
}
