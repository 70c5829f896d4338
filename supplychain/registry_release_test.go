package supplychain

import (
	"testing"
	"time"
)

func TestPreviousRelease(t *testing.T) {
	at := func(day int) time.Time { return time.Date(2026, 1, day, 12, 0, 0, 0, time.UTC) }
	tests := []struct {
		name       string
		published  map[string]time.Time
		target     string
		prerelease func(string) bool
		want       string
		wantAt     time.Time
	}{
		{"the release before", map[string]time.Time{"1.0.0": at(1), "1.1.0": at(2), "1.2.0": at(3)}, "1.2.0", npmPrerelease, "1.1.0", at(2)},
		{"by time, not by number: a backport", map[string]time.Time{"1.0.0": at(1), "2.0.0": at(3), "1.0.1": at(4)}, "1.0.1", npmPrerelease, "2.0.0", at(3)},
		{"by time, not by number: after a backport", map[string]time.Time{"1.0.0": at(1), "1.0.1": at(4), "2.0.0": at(3), "2.0.1": at(5)}, "2.0.1", npmPrerelease, "1.0.1", at(4)},
		{"map order does not matter", map[string]time.Time{"3.0.0": at(1), "0.1.0": at(2), "2.0.0": at(3)}, "2.0.0", npmPrerelease, "0.1.0", at(2)},
		{"a release skips prereleases", map[string]time.Time{"1.0.0": at(1), "2.0.0-beta.1": at(2), "2.0.0-rc.1": at(3), "2.0.0": at(4)}, "2.0.0", npmPrerelease, "1.0.0", at(1)},
		{"a prerelease counts prereleases", map[string]time.Time{"1.0.0": at(1), "2.0.0-beta.1": at(2), "2.0.0-rc.1": at(3)}, "2.0.0-rc.1", npmPrerelease, "2.0.0-beta.1", at(2)},
		{"a prerelease counts releases", map[string]time.Time{"1.0.0": at(1), "2.0.0-rc.1": at(3)}, "2.0.0-rc.1", npmPrerelease, "1.0.0", at(1)},
		{"only prereleases before a release", map[string]time.Time{"1.0.0-alpha": at(1), "1.0.0-rc": at(2), "1.0.0": at(3)}, "1.0.0", npmPrerelease, "", time.Time{}},
		{"the first version", map[string]time.Time{"1.0.0": at(1), "1.1.0": at(2)}, "1.0.0", npmPrerelease, "", time.Time{}},
		{"the only version", map[string]time.Time{"1.0.0": at(1)}, "1.0.0", npmPrerelease, "", time.Time{}},
		{"no time for the target", map[string]time.Time{"1.0.0": at(1)}, "1.1.0", npmPrerelease, "", time.Time{}},
		{"a tie goes to the higher version", map[string]time.Time{"1.0.9": at(1), "1.0.10": at(1), "1.1.0": at(2)}, "1.1.0", npmPrerelease, "1.0.10", at(1)},
		{"published with the target is not before it", map[string]time.Time{"1.0.0": at(1), "1.0.1": at(2), "1.0.2": at(2)}, "1.0.2", npmPrerelease, "1.0.0", at(1)},
		{"pep 440 release skips rc", map[string]time.Time{"2025.4.7": at(1), "2025.5.0rc1": at(2), "2025.5.0.dev3": at(3), "2025.5.0": at(4)}, "2025.5.0", pep440Prerelease, "2025.4.7", at(1)},
		{"pep 440 post-release is a release", map[string]time.Time{"1.0": at(1), "1.0.post1": at(2), "1.1": at(3)}, "1.1", pep440Prerelease, "1.0.post1", at(2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, gotAt := previousRelease(tt.target, tt.published, tt.prerelease)
			if got != tt.want {
				t.Errorf("previousRelease(%s) = %q, want %q", tt.target, got, tt.want)
			}
			switch {
			case tt.want == "" && gotAt != nil:
				t.Errorf("time = %v, want none", gotAt)
			case tt.want != "" && (gotAt == nil || !gotAt.Equal(tt.wantAt)):
				t.Errorf("time = %v, want %v", gotAt, tt.wantAt)
			}
		})
	}
}

func TestPEP440Prerelease(t *testing.T) {
	tests := map[string]bool{
		"1.0": false, "2025.4.7": false, "1.0.post1": false, "1.0-1": false, "1.0+local.abc": false, "1.0+dev": false,
		"1.0a1": true, "1.0.alpha1": true, "1.0b2": true, "1.0-beta.2": true, "1.0rc1": true, "1.0c1": true,
		"1.0.preview1": true, "1.0.dev0": true, "1.0a1.post1": true, "1.0.post1.dev2": true, "1.0RC1": true,
	}
	for v, want := range tests {
		if got := pep440Prerelease(v); got != want {
			t.Errorf("pep440Prerelease(%q) = %v, want %v", v, got, want)
		}
	}
}
