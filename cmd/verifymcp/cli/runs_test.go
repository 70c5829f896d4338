package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/evidence"
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

// TestRunsPyPI filters by a PyPI package and by its exact version
// (pypi:NAME==VERSION), and keeps the ecosystems apart.
func TestRunsPyPI(t *testing.T) {
	dir, _ := seedStoreWith(t, func(b *evidence.Bundle) {
		if !strings.HasPrefix(b.Target.Name, "@") && b.Shipped == nil {
			b.Target.Ecosystem = "pypi"
		}
	})
	code, out, errOut := runRescore(t, "runs", "--data-dir", dir, "--format", "json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rows []struct {
		Target string `json:"target"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	var target string
	for _, r := range rows {
		if strings.HasPrefix(r.Target, "pypi:") {
			target = r.Target
			break
		}
	}
	if target == "" {
		t.Fatalf("no PyPI run seeded: %v", rows)
	}
	at := strings.LastIndex(target, "@")
	name, version := target[len("pypi:"):at], target[at+1:]
	count := func(args ...string) int {
		t.Helper()
		code, out, errOut := runRescore(t, append([]string{"runs", "--data-dir", dir, "--format", "json"}, args...)...)
		if code != ExitOK {
			t.Fatalf("runs %v: exit %d: %s", args, code, errOut)
		}
		var rs []struct {
			Target string `json:"target"`
		}
		if err := json.Unmarshal([]byte(out), &rs); err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if r.Target != target {
				t.Errorf("runs %v listed %s", args, r.Target)
			}
		}
		return len(rs)
	}
	if n := count("--target", "pypi:"+name+"=="+version); n != 3 {
		t.Errorf("--target pypi:%s==%s: %d runs, want the 3 seeded", name, version, n)
	}
	if n := count("--target", "pypi:"+name); n != 3 {
		t.Errorf("--target pypi:%s: %d runs, want 3", name, n)
	}
	if n := count("--target", "pypi:"+name+"==0.0.0"); n != 0 {
		t.Errorf("--target pypi:%s==0.0.0: %d runs, want none", name, n)
	}
	if n := count("--target", "npm:"+name); n != 0 {
		t.Errorf("--target npm:%s: %d runs of the PyPI package", name, n)
	}
}
