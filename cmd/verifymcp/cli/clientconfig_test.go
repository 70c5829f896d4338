package cli

import (
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/clientconfig"
	"github.com/verifymcp/verifymcp/pipeline"
)

// TestConfigTargetsParse: every target a client config's reader hands to
// config scan --scan-servers is one pipeline.ParseTarget takes, as the
// same package (scanConfigServers treats a refusal as the reader's bug).
func TestConfigTargetsParse(t *testing.T) {
	launches := []string{
		`"command": "uvx", "args": ["mcp-server-fetch"]`,
		`"command": "uvx", "args": ["mcp-server-fetch==2025.4.7", "--ignore-robots-txt"]`,
		`"command": "uvx", "args": ["mcp-server-git@2025.7.1"]`,
		`"command": "uvx", "args": ["mcp-server-git@latest"]`,
		`"command": "uvx", "args": ["pkg===1.0-custom"]`,
		`"command": "uvx", "args": ["pkg>=1.2, <2"]`,
		`"command": "uvx", "args": ["pkg==1.*"]`,
		`"command": "uvx", "args": ["pkg!=1.5,~=1.4"]`,
		`"command": "uvx", "args": ["--from", "awslabs.aws-documentation-mcp-server==1.1.2", "awslabs.aws-documentation-mcp-server"]`,
		`"command": "uv", "args": ["tool", "run", "--python", "3.12", "mcp-atlassian"]`,
		`"command": "pipx", "args": ["run", "--spec", "Mcp_Server.Time~=2025.1", "mcp-server-time"]`,
		`"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything@2026.1.26"]`,
	}
	for _, l := range launches {
		f, err := clientconfig.ParseFile("mcp.json", []byte(`{"mcpServers": {"s": {`+l+`}}}`), clientconfig.ClientGeneric)
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		tg := clientconfig.Targets(f)[0]
		if tg.NotScanned != "" || tg.Target == "" {
			t.Errorf("%s: not scanned: %q", l, tg.NotScanned)
			continue
		}
		pt, err := pipeline.ParseTarget(tg.Target)
		if err != nil {
			t.Errorf("%s: target %q: %v", l, tg.Target, err)
			continue
		}
		if pt.Ecosystem != tg.Ecosystem || pt.Name != tg.Name {
			t.Errorf("%s: target %q parses as %s:%s, the reader says %s:%s", l, tg.Target, pt.Ecosystem, pt.Name, tg.Ecosystem, tg.Name)
		}
		if tg.Pinned && tg.Ecosystem == "pypi" && !strings.HasPrefix(pt.Spec, "==") {
			t.Errorf("%s: pinned, but the target %q resolves %q", l, tg.Target, pt.Spec)
		}
	}
}
