package clientconfig

import (
	"os"
	"strings"
	"testing"
)

func TestReadAddsFileByFile(t *testing.T) {
	var d Disclosed
	for _, p := range []string{"testdata/vscode/.vscode/mcp.json", "testdata/cursor/.cursor/mcp.json"} {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Read(Source{Path: p, Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	if len(d.Files) != 2 || d.Files[0].Client != ClientVSCode || d.Files[1].Client != ClientCursor {
		t.Fatalf("files: %+v", d.Files)
	}
	if len(d.Findings) == 0 || d.Findings[0].File != "testdata/vscode/.vscode/mcp.json" || d.Findings[len(d.Findings)-1].File != "testdata/cursor/.cursor/mcp.json" {
		t.Errorf("findings are not file by file: first %+v, last %+v", d.Findings[0], d.Findings[len(d.Findings)-1])
	}
	// The client given wins over the one the name says.
	data, _ := os.ReadFile("testdata/cursor/.cursor/mcp.json")
	var named Disclosed
	if err := named.Read(Source{Path: "mcp.json", Data: data, Client: ClientCursor}); err != nil || named.Files[0].Client != ClientCursor {
		t.Errorf("client given: %v %+v", err, named.Files)
	}
	// A file that does not parse leaves what was read as it was.
	before := len(d.Files)
	err := d.Read(Source{Path: "bad.json", Data: []byte("{\n  \"mcpServers\": {\"a\": {\"command\": \"x\" \"args\": []}}\n}\n")})
	if err == nil || !strings.HasPrefix(err.Error(), "bad.json:2:") || len(d.Files) != before {
		t.Errorf("bad file: %v, %d files", err, len(d.Files))
	}
}

func TestScanCommand(t *testing.T) {
	for _, tt := range []struct {
		t    Target
		want string
	}{
		{Target{Target: "npm:@modelcontextprotocol/server-memory@0.6.2", EnvNames: []string{"MEMORY_FILE_PATH", "OPENAI_API_KEY"}, Args: []string{}},
			"verifymcp scan npm:@modelcontextprotocol/server-memory@0.6.2 --env MEMORY_FILE_PATH=verifymcp-placeholder --env OPENAI_API_KEY=verifymcp-placeholder"},
		{Target{Target: "pypi:mcp-server-git==2025.1.14", Bin: "mcp-server-git", Args: []string{"--repository", "/tmp/work dir", "it's"}},
			`verifymcp scan pypi:mcp-server-git==2025.1.14 --bin mcp-server-git --arg --repository --arg '/tmp/work dir' --arg 'it'"'"'s'`},
		{Target{Target: "npm:x", NotScanned: "a variable with no stand-in"}, ""},
		{Target{NotScanned: "a URL server: nothing to install"}, ""},
	} {
		if got := ScanCommand(tt.t); got != tt.want {
			t.Errorf("ScanCommand(%+v)\n got %s\nwant %s", tt.t, got, tt.want)
		}
	}
}
