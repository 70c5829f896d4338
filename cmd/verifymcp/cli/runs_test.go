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

// TestRunsShipped filters the runs of an image and of a bundle by every
// target form a scan of them takes: an image by name, by tag and by
// digest (the seeded image was scanned by tag, so its digest is only in
// its bundle), a bundle by its URL and by its digest. The image's runs are
// those of two fixture bundles (shipped_image, shipped_root), seeded on
// three days each.
func TestRunsShipped(t *testing.T) {
	dir, _ := seedStore(t)
	const (
		image       = "ghcr.io/acme/time-mcp"
		imageDigest = "sha256:7d3f9a1c5e2b8d4f6a0c9e1b3d5f7a9c2e4b6d8f0a1c3e5b7d9f2a4c6e8b0d1f"
		otherDigest = "sha256:0000000000000000000000000000000000000000000000000000000000000000"
		bundleURL   = "https://downloads.example.com/time-tools-0.3.1.mcpb"
		bundleHex   = "4b9e2d7a1c6f3e8b0d5a2c7f4e9b1d6a3c8f5e0b7d2a9c4f1e6b3d8a5c0f7e2b"
	)
	for _, c := range []struct {
		target string
		want   int
		eco    string
	}{
		{"oci:" + image, 6, "oci"},
		{"oci:" + image + ":1.4.2", 6, "oci"},
		{"docker://" + image + ":1.4.2", 6, "oci"},
		{"docker-daemon:" + image + ":1.4.2", 6, "oci"},
		{"oci:" + image + "@" + imageDigest, 6, "oci"},
		{"oci:" + image + ":9.9@" + imageDigest, 6, "oci"},
		{"oci:" + image + ":9.9", 0, ""},
		{"oci:" + image + "@" + otherDigest, 0, ""},
		{"oci:ghcr.io/acme/other-mcp", 0, ""},
		{"mcpb:" + bundleURL, 3, "mcpb"},
		{"mcpb:" + bundleURL + "#sha256=" + bundleHex, 3, "mcpb"},
		{"mcpb:https://mirror.example.org/t.mcpb#sha256=" + bundleHex, 3, "mcpb"},
		{"mcpb:" + bundleURL + "#sha256=" + strings.Repeat("0", 64), 0, ""},
		{"./time-tools-0.3.1.mcpb", 0, ""},
	} {
		code, out, errOut := runRescore(t, "runs", "--data-dir", dir, "--format", "json", "--target", c.target)
		if code != ExitOK {
			t.Errorf("--target %s: exit %d: %s", c.target, code, errOut)
			continue
		}
		var rows []struct {
			Target string `json:"target"`
		}
		if err := json.Unmarshal([]byte(out), &rows); err != nil {
			t.Fatal(err)
		}
		if len(rows) != c.want {
			t.Errorf("--target %s: %d runs, want %d", c.target, len(rows), c.want)
		}
		for _, r := range rows {
			if want := map[string]string{"oci": "oci:" + image + ":1.4.2", "mcpb": "mcpb:time-tools@0.3.1"}[c.eco]; r.Target != want {
				t.Errorf("--target %s listed %s, want %s", c.target, r.Target, want)
			}
		}
	}
	for _, bad := range []string{"oci:Bad/Name", "mcpb:", "oci:" + image + "@sha256:12"} {
		if code, _, _ := runRescore(t, "runs", "--data-dir", dir, "--target", bad); code != ExitUsage {
			t.Errorf("--target %s: exit %d, want 2", bad, code)
		}
	}
}

// TestDiffShippedNames names each side of a diff of stored runs as the
// report names the release: an image scanned by tag by the digest it
// resolved to, a bundle by its manifest's name and version; a package as
// before.
func TestDiffShippedNames(t *testing.T) {
	dir, _ := seedStore(t)
	runOf := func(target string) string {
		t.Helper()
		code, out, errOut := runRescore(t, "runs", "--data-dir", dir, "--format", "json", "--target", target, "--limit", "1")
		var rows []struct {
			RunID string `json:"run_id"`
		}
		if code != ExitOK || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 1 {
			t.Fatalf("runs --target %s: exit %d: %s%s", target, code, out, errOut)
		}
		return rows[0].RunID
	}
	for _, c := range []struct{ target, want string }{
		{"oci:ghcr.io/acme/time-mcp:1.4.2", "oci:ghcr.io/acme/time-mcp@sha256:7d3f9a1c5e2b8d4f6a0c9e1b3d5f7a9c2e4b6d8f0a1c3e5b7d9f2a4c6e8b0d1f"},
		{"mcpb:https://downloads.example.com/time-tools-0.3.1.mcpb", "mcpb:time-tools@0.3.1"},
		{"npm:@modelcontextprotocol/server-everything@2025.9.25", "npm:@modelcontextprotocol/server-everything@2025.9.25"},
	} {
		id := runOf(c.target)
		code, out, errOut := runRescore(t, "diff", "--data-dir", dir, id, id)
		if code != ExitOK {
			t.Fatalf("diff %s: exit %d: %s", c.target, code, errOut)
		}
		for _, side := range []string{"A", "B"} {
			if want := side + "  " + c.want + "  run " + id; !strings.Contains(out, want+" ") {
				t.Errorf("diff of %s: want the line %q in\n%s", c.target, want, out)
			}
		}
	}
}

// TestDiffImageByDigest reads a side named by an image's digest from a
// stored run of a tag that resolved to that digest, rather than scanning.
func TestDiffImageByDigest(t *testing.T) {
	dir, _ := seedStore(t)
	const digest = "oci:ghcr.io/acme/time-mcp@sha256:7d3f9a1c5e2b8d4f6a0c9e1b3d5f7a9c2e4b6d8f0a1c3e5b7d9f2a4c6e8b0d1f"
	code, out, errOut := runRescore(t, "diff", "--data-dir", dir, digest, digest)
	if code != ExitOK {
		t.Fatalf("diff: exit %d: %s", code, errOut)
	}
	if strings.Count(out, "  "+digest+"  run 20260501t000000z-") != 2 || strings.Contains(out, "scanned now") {
		t.Errorf("diff of a digest did not read the newest stored run of it:\n%s", out)
	}
}
