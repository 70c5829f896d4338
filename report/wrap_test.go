package report

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWrap(t *testing.T) {
	for _, tc := range []struct {
		name        string
		text        string
		first, rest int
		want        []string
	}{
		{"fits", "a short claim", 40, 40, []string{"a short claim"}},
		{"at spaces", "tool \"zip\" declares no annotations, so by the specification's defaults it is destructive",
			30, 25, []string{`tool "zip" declares no`, "annotations, so by the", "specification's defaults", "it is destructive"}},
		{"spaces within a line are kept", "code  subject:   claim", 40, 40, []string{"code  subject:   claim"}},
		{"spaces at a break are dropped", "aaaaaaaaaa     bbbbbbbbbbbbbbb", 20, 20, []string{"aaaaaaaaaa", "bbbbbbbbbbbbbbb"}},
		{"a URL breaks after its punctuation", "connected to https://exfil.example.net/collect/v2/upload?token=abc&session=def now",
			30, 30, []string{"connected to", "https://exfil.example.net/", "collect/v2/upload?token=abc&", "session=def now"}},
		{"an unbreakable token breaks by width", "sha256:" + strings.Repeat("ab", 20), 24, 24,
			[]string{"sha256:ababababababababa", "bababababababababababab"}},
		{"wide runes take two columns", "名前 " + strings.Repeat("漢", 25), 20, 20,
			[]string{"名前", strings.Repeat("漢", 10), strings.Repeat("漢", 10), strings.Repeat("漢", 5)}},
		{"a combining mark stays with its letter", strings.Repeat("e\u0301", 25), 20, 20,
			[]string{strings.Repeat("e\u0301", 20), strings.Repeat("e\u0301", 5)}},
		{"an escape is not split", strings.Repeat("x", 18) + `\u202egnp.exe`, 20, 20,
			[]string{strings.Repeat("x", 18), `\u202egnp.exe`}},
		{"a first line too narrow for its first word stays empty", "one two three four five six", 2, 2, []string{"", "one two three four", "five six"}},
		{"a narrow first line takes what fits", "one two three four five six", 8, 30, []string{"one two", "three four five six"}},
		{"empty", "", 20, 20, []string{""}},
		{"a word of no width is kept", strings.Repeat("a", 20) + " \u0301", 20, 20, []string{strings.Repeat("a", 20), "\u0301"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := wrap(tc.text, tc.first, tc.rest)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("wrap (-want +got):\n%s", d)
			}
			// Nothing is dropped: the lines hold every character of the
			// words, in order.
			if j, w := strings.Join(got, ""), strings.Join(strings.Fields(tc.text), ""); strings.ReplaceAll(j, " ", "") != w {
				t.Errorf("lines %q do not hold the text %q", got, tc.text)
			}
			for i, l := range got {
				room := max(tc.rest, minRoom)
				if i == 0 {
					room = max(tc.first, 0)
				}
				if width(l) > room {
					t.Errorf("line %d %q is %d columns, room %d", i, l, width(l), room)
				}
			}
		})
	}
}

func TestHang(t *testing.T) {
	got := hang("  HIGH     ", "pkg.contract.capability.environment  printEnv: Tool \"printEnv\" returns environment variables", 11, 62)
	want := []string{
		"  HIGH     pkg.contract.capability.environment  printEnv: Tool",
		"           \"printEnv\" returns environment variables",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("hang (-want +got):\n%s", d)
	}
	// The lead's colour does not count; width 0 wraps nothing.
	if got := hang(ansiRed+"x "+ansiReset, "a b", 2, 0); len(got) != 1 || got[0] != ansiRed+"x "+ansiReset+"a b" {
		t.Errorf("hang at width 0 = %q", got)
	}
}

func TestWidth(t *testing.T) {
	for s, want := range map[string]int{"abc": 3, "漢字": 4, "e\u0301": 1, "\u200b": 0, "👍": 2, `\u202e`: 6} {
		if got := width(s); got != want {
			t.Errorf("width(%q) = %d, want %d", s, got, want)
		}
	}
}
