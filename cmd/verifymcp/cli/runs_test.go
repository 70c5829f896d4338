package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRuns lists a seeded store: newest first, filtered by package and
// version, limited, as a table and as JSON; bad input is exit 2.
func TestRuns(t *testing.T) {
	dir, ids := seedStore(t)
	code, out, errOut := runRescore(t, "runs", "--data-dir", dir, "--format", "json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rows []struct {
		RunID  string `json:"run_id"`
		Target string `json:"target"`
		Date   string `json:"date"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != len(ids) {
		t.Fatalf("rows %d (%v), want %d", len(rows), err, len(ids))
	}
	for i := 1; i < len(rows); i++ {
		if rows[i-1].Date < rows[i].Date {
			t.Errorf("not newest first: %s before %s", rows[i-1].Date, rows[i].Date)
		}
	}
	name := strings.TrimPrefix(rows[0].Target, "npm:")
	name = name[:strings.LastIndex(name, "@")]
	code, out, _ = runRescore(t, "runs", "--data-dir", dir, "--target", "npm:"+name, "--limit", "2")
	if code != ExitOK || strings.Count(out, "\n") != 3 || !strings.Contains(out, name) {
		t.Errorf("--target --limit 2: exit %d\n%s", code, out)
	}
	for _, bad := range [][]string{{"--target", "npm:Bad Name"}, {"--limit", "-1"}, {"--format", "xml"}, {"extra"}} {
		if code, _, _ := runRescore(t, append([]string{"runs", "--data-dir", dir}, bad...)...); code != ExitUsage {
			t.Errorf("runs %v: exit %d, want 2", bad, code)
		}
	}
}
