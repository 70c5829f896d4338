package realcorpus

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSplitFollowsTheRule: every server's side is rule 8's (the first
// byte of sha256("verifymcp-split-v1:ECOSYSTEM:NAME") divisible by 3 is
// tuning), unless split.tsv records a move under rule 9 with its date and
// reason; and a move is only ever from held out to tuning.
func TestSplitFollowsTheRule(t *testing.T) {
	servers, err := Load(".")
	if err != nil {
		t.Fatal(err)
	}
	if len(servers) == 0 {
		t.Fatal("no server in split.tsv")
	}
	moved := movedRows(t)
	for _, s := range servers {
		sum := sha256.Sum256([]byte("verifymcp-split-v1:" + s.Ecosystem + ":" + s.Name))
		want := SideHeldOut
		if sum[0]%3 == 0 {
			want = SideTuning
		}
		switch m, ok := moved[s.ID]; {
		case ok && (m != SideTuning || s.Side != SideTuning || want != SideHeldOut):
			t.Errorf("%s: moved to %s from %s; rule 9 moves only from held out to tuning", s.ID, s.Side, want)
		case !ok && s.Side != want:
			t.Errorf("%s: side %s, rule 8 gives %s", s.ID, s.Side, want)
		}
		if s.Recording.Target == "" || !strings.Contains(s.Recording.Target, s.Version) {
			t.Errorf("%s: recording of %q, split.tsv pins %s", s.ID, s.Recording.Target, s.Version)
		}
	}
}

// movedRows returns the servers split.tsv records as moved, with their
// side; a move needs a date and a reason.
func movedRows(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(".", "split.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	head := strings.Split(lines[0], "\t")
	col := map[string]int{}
	for i, c := range head {
		col[c] = i
	}
	for _, l := range lines[1:] {
		f := strings.Split(l, "\t")
		if len(f) <= col["reason"] || f[col["moved_date"]] == "" {
			continue
		}
		if !strings.HasPrefix(f[col["reason"]], "rule 9:") {
			t.Errorf("%s: moved on %s without a rule 9 reason", f[col["id"]], f[col["moved_date"]])
		}
		out[f[col["id"]]] = f[col["side"]]
	}
	return out
}

// TestMechanical: a restating code's claim is checked against the
// Inspector's listing, and a claim the listing does not show is false.
func TestMechanical(t *testing.T) {
	servers, err := Load(".")
	if err != nil {
		t.Fatal(err)
	}
	var s Server
	for _, x := range servers {
		if x.Recording.Contract != nil && len(x.Recording.Contract.Tools) > 0 {
			s = x
			break
		}
	}
	tool := s.Recording.Contract.Tools[0]
	absent := Finding{Server: s.ID, Code: "pkg.contract.annotation.absent", Subject: tool.Name}
	v, _, ok := mechanical(absent, s)
	if want := map[bool]string{true: VerdictTrue, false: VerdictFalse}[tool.Annotations == nil]; !ok || v != want {
		t.Errorf("annotation.absent on %s/%s: %s, %v; want %s", s.ID, tool.Name, v, ok, want)
	}
	if v, _, ok := mechanical(Finding{Server: s.ID, Code: "pkg.contract.annotation.absent", Subject: "no-such-tool"}, s); !ok || v != VerdictFalse {
		t.Errorf("a tool the listing lacks: %s, %v", v, ok)
	}
	if _, _, ok := mechanical(Finding{Server: s.ID, Code: "pkg.contract.param.credential", Subject: "tool:" + tool.Name}, s); ok {
		t.Error("a code that claims more than the listing says was checked mechanically")
	}
}

// TestReviewsRead: review.yaml, when there is one, reads, and each
// verdict is one of three.
func TestReviewsRead(t *testing.T) {
	if _, err := ReadReviews(filepath.Join(".", "review.yaml")); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "review.yaml")
	if err := os.WriteFile(bad, []byte("reviews:\n  - server: x\n    code: pkg.a.b\n    subject: s\n    verdict: maybe\n    why: w\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadReviews(bad); err == nil || !strings.Contains(err.Error(), `verdict "maybe"`) {
		t.Errorf("a verdict of maybe: %v", err)
	}
}
