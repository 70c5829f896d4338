package checks

import (
	"testing"

	"github.com/verifymcp/verifymcp/contract"
)

// BenchmarkCheck measures the deterministic checks over the largest real
// surface in testdata (server-github, 26 tools).
func BenchmarkCheck(b *testing.B) {
	c := loadSurface(b, "github")
	b.ReportAllocs()
	for b.Loop() {
		Check(c)
	}
}

// BenchmarkCheckEverything measures the checks over a typical surface:
// server-everything, 13 tools, 4 prompts, 7 resources, 2 templates and
// server instructions; the rubric's BenchmarkEvaluate scores the same
// server.
func BenchmarkCheckEverything(b *testing.B) {
	c := loadSurface(b, "everything")
	b.ReportAllocs()
	for b.Loop() {
		Check(c)
	}
}

// BenchmarkCheck120Tools measures the checks over a 120-tool surface made
// of three real ones from the corpus: @azure/mcp (61 tools, long router
// descriptions), chrome-devtools-mcp (32) and mongodb-mcp-server (27,
// deeply nested schemas). A scan runs Check once; the target is under
// 50 ms.
func BenchmarkCheck120Tools(b *testing.B) {
	c := &contract.Contract{}
	for _, s := range loadCorpus(b, nil) {
		switch s.ID {
		case "azure-mcp", "chrome-devtools-mcp", "mongodb-mcp-server":
			c.Tools = append(c.Tools, s.C.Tools...)
		}
	}
	if len(c.Tools) != 120 {
		b.Fatalf("%d tools, want 120", len(c.Tools))
	}
	b.ReportAllocs()
	for b.Loop() {
		Check(c)
	}
}
