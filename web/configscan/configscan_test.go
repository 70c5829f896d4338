package configscan

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/clientconfig"
)

func read(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestScan(t *testing.T) {
	vscode := read(t, "../../clientconfig/testdata/vscode/.vscode/mcp.json")
	cursor := read(t, "../../clientconfig/testdata/cursor/.cursor/mcp.json")
	bad := read(t, "../../clientconfig/testdata/bad/missing-comma.json")
	now := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	res, err := Scan([]File{
		{Name: "mcp.json", Data: vscode, Client: clientconfig.ClientVSCode},
		{Name: "mcp.json", Data: cursor, Client: clientconfig.ClientCursor},
		{Name: "missing-comma.json", Data: bad},
	}, "1.2.3", now)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) != 1 || !strings.HasPrefix(res.Errors[0], "missing-comma.json:3:28: ") {
		t.Errorf("errors: %q", res.Errors)
	}
	var rep struct {
		Tool  struct{ Version string }
		Run   struct{ Date string }
		Files []struct{ Path, Client string }
	}
	if err := json.Unmarshal([]byte(res.Report), &rep); err != nil {
		t.Fatal(err)
	}
	// Two files of one name are told apart, in the order given.
	if len(rep.Files) != 2 || rep.Files[0].Path != "mcp.json" || rep.Files[1].Path != "mcp.json (2)" ||
		rep.Files[0].Client != clientconfig.ClientVSCode || rep.Files[1].Client != clientconfig.ClientCursor {
		t.Errorf("files: %+v", rep.Files)
	}
	if rep.Tool.Version != "1.2.3" || rep.Run.Date != "2026-12-06T10:00:00Z" {
		t.Errorf("tool %q, date %q", rep.Tool.Version, rep.Run.Date)
	}
	if !strings.Contains(res.SARIF, `"version": "2.1.0"`) {
		t.Errorf("sarif: %.200s", res.SARIF)
	}
	var memory, github *Server
	for i, s := range res.Servers {
		switch s.Server {
		case "memory":
			memory = &res.Servers[i]
		case "github":
			github = &res.Servers[i]
		}
	}
	if memory == nil || !strings.HasPrefix(memory.Command, "verifymcp scan npm:@modelcontextprotocol/server-memory@0.6.2 --env ") || memory.File != "mcp.json" {
		t.Errorf("memory: %+v", memory)
	}
	if github == nil || github.Command != "" || github.NotScanned == "" {
		t.Errorf("github: %+v", github)
	}
}

func TestScanNothingRead(t *testing.T) {
	if _, err := Scan(nil, "v", time.Now()); err == nil {
		t.Error("no file: no error")
	}
	res, err := Scan([]File{{Name: "", Data: []byte("{")}}, "v", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// Unnamed pasted text is called pasted.json; with no file read there is no report.
	if res.Report != "" || res.SARIF != "" || len(res.Errors) != 1 || !strings.HasPrefix(res.Errors[0], "pasted.json:1:2: ") {
		t.Errorf("%+v", res)
	}
}

func TestClientsAndCatalog(t *testing.T) {
	cs := Clients()
	if len(cs) != len(clientconfig.Clients()) || cs[0].ID != clientconfig.ClientClaudeDesktop || cs[0].Name != "Claude Desktop" {
		t.Errorf("clients: %+v", cs)
	}
	for _, c := range cs {
		if c.Name == "" {
			t.Errorf("client %s has no name", c.ID)
		}
	}
	if len(Catalog()) < 5 {
		t.Errorf("catalog: %d codes", len(Catalog()))
	}
}
