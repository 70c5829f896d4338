package supplychain

import (
	"errors"
	"testing"
)

func TestPythonSatisfies(t *testing.T) {
	tests := []struct {
		spec, version string
		want          bool
		bad           bool
	}{
		{">=3.12", "3.13.5", true, false},
		{">=3.12", "3.11.2", false, false},
		{">=3.10,<3.12", "3.11.2", true, false},
		{">=3.10,<3.12", "3.13.5", false, false},
		{"<3.9", "3.11.2", false, false},
		{">=3.11.5", "3.11.2", false, false},
		{"~=3.11", "3.13.5", true, false},
		{"==3.11.*", "3.11.2", true, false},
		{"!=3.13.*", "3.13.5", false, false},
		{"", "3.11.2", true, false},
		{">=3.10 <4", "3.11.2", false, true},
		{"3.10", "3.11.2", false, true},
	}
	for _, tt := range tests {
		got, err := PythonSatisfies(tt.spec, tt.version)
		if (err != nil) != tt.bad || (tt.bad && !errors.Is(err, ErrBadRequirement)) || got != tt.want {
			t.Errorf("PythonSatisfies(%q, %q) = %v, %v; want %v, bad %v", tt.spec, tt.version, got, err, tt.want, tt.bad)
		}
	}
	if ComparePEP440("3.13.5", "3.11.2") <= 0 || ComparePEP440("3.9.0", "3.11.2") >= 0 {
		t.Error("ComparePEP440 does not order versions numerically")
	}
}
