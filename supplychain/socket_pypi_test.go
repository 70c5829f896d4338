package supplychain_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/ecosystem/pypi"

	"github.com/verifymcp/verifymcp/supplychain"
)

func readPylock(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "osv", "pylock", name+".pylock.toml"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPyPITreePurls(t *testing.T) {
	lock := readPylock(t, "requests-2.19.0")
	t.Run("every_package_sorted_without_the_target", func(t *testing.T) {
		got := pypiEco.TreePurls(lock, "Requests")
		want := []string{
			"pkg:pypi/certifi@2026.10.19.post1",
			"pkg:pypi/chardet@3.0.4",
			"pkg:pypi/idna@2.7",
			"pkg:pypi/urllib3@1.23",
		}
		if d := resultDiff(want, got); d != "" {
			t.Errorf("purls (-want +got):%s", d)
		}
	})
	t.Run("skip_a_purl", func(t *testing.T) {
		got := pypiEco.TreePurls(lock, "pkg:pypi/URLLIB3@1.23")
		if len(got) != 4 || slices.Contains(got, "pkg:pypi/urllib3@1.23") || !slices.Contains(got, "pkg:pypi/requests@2.19.0") {
			t.Errorf("purls = %v, want the four others", got)
		}
	})
	t.Run("names_normalized_local_version_encoded_no_versionless", func(t *testing.T) {
		l := []byte(`lock-version = "1.0"
[[packages]]
name = "Typing_Extensions"
version = "4.16.0"
[[packages]]
name = "torch"
version = "2.9.0+cpu"
[[packages]]
name = "local-mcp"
directory = { path = "../local-mcp" }
[[packages]]
name = "typing.extensions"
version = "4.16.0"
`)
		want := []string{"pkg:pypi/torch@2.9.0%2Bcpu", "pkg:pypi/typing-extensions@4.16.0"}
		if d := resultDiff(want, pypiEco.TreePurls(l, "")); d != "" {
			t.Errorf("purls (-want +got):%s", d)
		}
	})
	t.Run("the_real_mcp_server_tree", func(t *testing.T) {
		got := pypiEco.TreePurls(readPylock(t, "mcp-server-time-2026.10.19"), "mcp-server-time")
		if len(got) != 30 || !slices.IsSorted(got) || slices.Contains(got, "pkg:pypi/mcp-server-time@2026.10.19") || !slices.Contains(got, "pkg:pypi/mcp@2.3.0") {
			t.Errorf("%d purls %v, want the 30 packages besides the target, sorted", len(got), got)
		}
	})
	t.Run("not_a_pylock_is_nil", func(t *testing.T) {
		for _, in := range []string{"", "{}", "requests==2.19.0", "lock-version = \"2.0\"\n"} {
			if got := pypiEco.TreePurls([]byte(in), ""); got != nil {
				t.Errorf("PyPITreePurls(%q) = %v, want nil", in, got)
			}
		}
	})
}

func TestSocket_pypi(t *testing.T) {
	ctx := context.Background()
	lock := readPylock(t, "mcp-server-time-2026.10.19")
	target := pypiEco.Purl("mcp-server-time", "2026.10.19")
	tree := append([]string{target}, pypiEco.TreePurls(lock, "mcp_server_time")...)

	t.Run("target_and_tree", func(t *testing.T) {
		api := newSocketAPI(t)
		s := socketServe(t, api, supplychain.SocketOptions{APIKey: socketKey})
		got, _, err := s.Scan(ctx, "mcp_server_time", tree)
		if err != nil {
			t.Fatal(err)
		}
		if got.Malware {
			t.Error("Malware = true without a malware alert")
		}
		if got.Scores["supply_chain"] != 0.91 || got.Scores["overall"] != 0.9 {
			t.Errorf("scores = %v, want mcp-server-time's", got.Scores)
		}
		type row struct {
			Package, Version, Type string
			Target                 bool
		}
		var rows []row
		for _, a := range got.Alerts {
			rows = append(rows, row{a.Package, a.Version, a.Type, a.Target})
		}
		want := []row{
			{"mcp-server-time", "2026.10.19", "filesystemAccess", true},
			{"mcp", "2.3.0", "envVars", false},
			{"mcp", "2.3.0", "networkAccess", false},
			{"mcp", "2.3.0", "shellAccess", false},
			{"uvicorn", "0.54.0", "networkAccess", false},
		}
		if d := resultDiff(want, rows); d != "" {
			t.Errorf("alerts (-want +got):%s", d)
		}
		r := api.Seen()[0]
		if r.Purls[0] != "pkg:pypi/mcp-server-time@2026.10.19" || len(r.Purls) != 31 {
			t.Errorf("sent %d purls starting %q, want 31 with the target first", len(r.Purls), r.Purls[0])
		}
	})

	t.Run("malware_in_the_tree", func(t *testing.T) {
		s := socketServe(t, newSocketAPI(t), supplychain.SocketOptions{APIKey: socketKey})
		got, _, err := s.Scan(ctx, "mcp-server-time", append(slices.Clone(tree), pypiEco.Purl("mcp_tiime.helpers", "0.0.3")))
		if err != nil {
			t.Fatal(err)
		}
		if !got.Malware {
			t.Fatal("Malware = false with a malware alert on mcp-tiime-helpers")
		}
		for _, a := range got.Alerts {
			if a.Type == "malware" && (a.Package != "mcp-tiime-helpers" || a.Target) {
				t.Errorf("malware alert %+v, want on mcp-tiime-helpers, not the target", a)
			}
		}
	})

	t.Run("target_spelled_otherwise_is_found_once", func(t *testing.T) {
		api := newSocketAPI(t)
		s := socketServe(t, api, supplychain.SocketOptions{APIKey: socketKey})
		// The same release twice in two spellings: one purl is sent.
		got, _, err := s.Scan(ctx, "MCP_Server_Time", []string{"pkg:pypi/MCP_Server_Time@2026.10.19", target})
		if err != nil {
			t.Fatal(err)
		}
		if len(api.Seen()[0].Purls) != 1 {
			t.Errorf("sent %v, want the repeat dropped", api.Seen()[0].Purls)
		}
		if len(got.Alerts) != 1 || !got.Alerts[0].Target || got.Alerts[0].Package != "mcp-server-time" {
			t.Errorf("alerts = %+v, want the target's one alert under its PEP 503 name", got.Alerts)
		}
	})

	t.Run("unknown_pypi_target_is_unavailable", func(t *testing.T) {
		s := socketServe(t, newSocketAPI(t), supplychain.SocketOptions{APIKey: socketKey})
		_, _, err := s.Scan(ctx, "mcp-server-nowhere", []string{pypiEco.Purl("mcp-server-nowhere", "0.1.0"), target})
		if err == nil || !strings.Contains(err.Error(), "mcp-server-nowhere") {
			t.Fatalf("err = %v, want ErrUnavailable naming the package", err)
		}
	})
}

var pypiEco pypi.Ecosystem
