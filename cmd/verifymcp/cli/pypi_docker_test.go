//go:build docker

package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/benchmark"
)

// TestPyPICommands takes one real PyPI server through every command that
// takes a target besides batch, config scan and the fleet queue (which
// have their own PyPI tests): scan stores it, pin show finds its identity,
// diff compares two stored sides of it without scanning again, and cases
// run scores a reviewed case that targets it from the store.
func TestPyPICommands(t *testing.T) {
	data := t.TempDir()
	env := []string{"VERIFYMCP_CONFIG="}
	// A release no other test scans, so that its fetch is this test's.
	const target = "pypi:mcp-server-time==2026.10.10"
	ident := []string{"--arg", "--local-timezone", "--arg", "UTC"}
	common := []string{"--data-dir", data, "--no-behavior", "--skip", "osv,socket,github,dnssec,judge"}

	res := verifymcp(t, env, append(append([]string{"scan", "--format", "json", target}, common...), ident...)...)
	if res.code != 0 {
		t.Fatalf("scan: exit %d\n%s", res.code, res.stderr)
	}
	var rep struct {
		Target  struct{ Ecosystem, Name, Version string }
		Sandbox struct{ Outcome string }
	}
	if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Target.Ecosystem != "pypi" || rep.Target.Name != "mcp-server-time" || rep.Target.Version != "2026.10.10" || rep.Sandbox.Outcome != "ok" {
		t.Fatalf("scan report: %+v %+v", rep.Target, rep.Sandbox)
	}

	t.Run("pin show", func(t *testing.T) {
		res := verifymcp(t, env, append([]string{"pin", "show", "--data-dir", data, "pypi:mcp-server-time"}, ident...)...)
		if res.code != 0 || !strings.Contains(res.stdout, "pypi:mcp-server-time") || !strings.Contains(res.stdout, "version 2026.10.10") {
			t.Errorf("pin show: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
		}
	})
	t.Run("diff from the store", func(t *testing.T) {
		res := verifymcp(t, env, append(append([]string{"diff", "--format", "json", target, target}, common...), ident...)...)
		if res.code != 0 {
			t.Fatalf("diff: exit %d\n%s", res.code, res.stderr)
		}
		var d struct {
			A, B struct {
				Target  string `json:"target"`
				Scanned bool   `json:"scanned"`
			}
		}
		if err := json.Unmarshal([]byte(res.stdout), &d); err != nil {
			t.Fatalf("%v\n%s", err, res.stdout)
		}
		if d.A.Target != "pypi:mcp-server-time@2026.10.10" || d.A.Scanned || d.B.Scanned {
			t.Errorf("diff sides %+v %+v; want both the stored PyPI run\n%s", d.A, d.B, res.stderr)
		}
	})
	t.Run("cases from the store", func(t *testing.T) {
		corpus := t.TempDir()
		src, err := os.ReadFile("../../../benchmark/cases/reviewed/mcp-server-time-pypi.yaml")
		if err != nil {
			t.Fatal(err)
		}
		c := strings.Replace(string(src), "pypi:mcp-server-time==2026.10.19", target, 1)
		if c == string(src) {
			t.Fatal("the reviewed case no longer targets pypi:mcp-server-time==2026.10.19")
		}
		dir := filepath.Join(corpus, "cases", "reviewed")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "mcp-server-time-pypi.yaml"), []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
		res := verifymcp(t, env, "cases", "run", "--corpus", corpus, "--from-store", "--format", "json", "--data-dir", data)
		if res.code != 0 {
			t.Fatalf("cases run: exit %d\n%s", res.code, res.stderr)
		}
		var br benchmark.Report
		if err := json.Unmarshal([]byte(res.stdout), &br); err != nil {
			t.Fatal(err)
		}
		if len(br.Cases) != 1 || br.Cases[0].Target != target || br.Cases[0].Error != "" || len(br.Cases[0].Refused) != 0 || br.Cases[0].RunID == "" {
			t.Errorf("cases run did not score the PyPI case from its stored run: %+v\n%s", br.Cases, res.stderr)
		}
	})
}
