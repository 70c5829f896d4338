package testdiff

import (
	"strings"
	"testing"
)

func TestJSON(t *testing.T) {
	if d := JSON(map[string]int{"a": 1}, map[string]int{"a": 1}); d != "" {
		t.Errorf("equal values: %q", d)
	}
	d := JSON(map[string]int{"a": 1, "b": 2}, map[string]int{"a": 1, "b": 3})
	if !strings.Contains(d, `"b": 2`) || !strings.Contains(d, `"b": 3`) || strings.Contains(d, `-	"a"`) {
		t.Errorf("diff does not show the moved line alone:\n%s", d)
	}
	if d := JSON(func() {}, 1); !strings.HasPrefix(d, "marshal want") {
		t.Errorf("unmarshalable want: %q", d)
	}
}
