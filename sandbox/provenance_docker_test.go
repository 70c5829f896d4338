//go:build docker

package sandbox_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/pipeline"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/sandbox"
)

// harmlessServer is a minimal MCP stdio server on the standard library
// alone: one read-only tool, nothing started, nothing dialled.
const harmlessServer = `import json
import sys


def reply(i, result=None, error=None):
    msg = {"jsonrpc": "2.0", "id": i}
    if error is None:
        msg["result"] = result
    else:
        msg["error"] = error
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


TOOL = {"name": "echo", "description": "Returns the text it is given.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string", "description": "Text to return."}}, "required": ["text"]},
        "annotations": {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}}


def main():
    for line in sys.stdin:
        try:
            req = json.loads(line)
        except ValueError:
            continue
        if "id" not in req:
            continue
        m, p = req.get("method"), req.get("params") or {}
        if m == "initialize":
            reply(req["id"], {"protocolVersion": p.get("protocolVersion", "2025-06-18"), "capabilities": {"tools": {}},
                              "serverInfo": {"name": "harmless-mcp", "version": "1.0.0"}})
        elif m == "tools/list":
            reply(req["id"], {"tools": [TOOL]})
        elif m == "tools/call":
            text = str((p.get("arguments") or {}).get("text", ""))
            reply(req["id"], {"content": [{"type": "text", "text": text}]})
        elif m == "ping":
            reply(req["id"], {})
        else:
            reply(req["id"], error={"code": -32601, "message": "method not found"})
`

// harmlessWheel builds harmless_mcp-1.0.0-py3-none-any.whl: a wheel is a
// zip with the module, and a dist-info holding METADATA, WHEEL,
// entry_points.txt (one console script) and RECORD.
func harmlessWheel(t *testing.T) string {
	t.Helper()
	path, _ := pyWheel(t, "harmless_mcp", "1.0.0", harmlessServer, "Summary: A harmless MCP server for tests\n", nil, "")
	return path
}

// TestHarmlessWheelNoBehaviourFinding scans a harmless local wheel (no
// build: uv venv and uv pip install are the build step's only processes,
// the sandbox's own) again and again, and fails on any behaviour finding
// or any process taken for the package's: the sandbox's own uv and Python
// were blamed on the package about one scan in twenty when the tracer's
// window missed the driver's exec. It scans 30 times or for one minute,
// whichever ends first (about ten scans, to keep the suite short);
// VERIFYMCP_PROV_SCANS sets the number of scans instead, with no time
// bound (VERIFYMCP_PROV_SCANS=30 for the figure docs/tests.md gives).
func TestHarmlessWheelNoBehaviourFinding(t *testing.T) {
	n, budget := 30, time.Minute
	if v, err := strconv.Atoi(os.Getenv("VERIFYMCP_PROV_SCANS")); err == nil && v > 0 {
		n, budget = v, 0
	}
	s := newSandbox(t, func(o *sandbox.Options) {
		o.Behavior = true
		o.HandshakeTimeout = 30 * time.Second
	})
	target, err := pipeline.ParseTarget(harmlessWheel(t))
	if err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.New(pipeline.Config{Scanner: s, ToolVersion: "test", Rubric: rubric.Current()})
	if err != nil {
		t.Fatal(err)
	}
	var findings, unknown int
	started := time.Now()
	scans := 0
	for i := range n {
		if budget > 0 && time.Since(started) > budget {
			break
		}
		scans++
		at := time.Now()
		rt, err := p.Resolve(context.Background(), target)
		if err != nil {
			t.Fatal(err)
		}
		scanned, err := p.Scan(context.Background(), rt, pipeline.Options{})
		if err != nil {
			t.Fatalf("scan %d: %v", i, err)
		}
		b := scanned.Bundle
		assertClean(t, b.Run.ID)
		if b.Sandbox.Outcome != evidence.OutcomeOK || b.Behavior == nil {
			t.Fatalf("scan %d: outcome %s, behaviour %v (%+v)", i, b.Sandbox.Outcome, b.Behavior != nil, b.Session)
		}
		for _, f := range rubric.Evaluate(b, rubric.Current()).Findings {
			if strings.HasPrefix(f.Code, "pkg.behavior.") {
				findings++
				t.Errorf("scan %d: %s: %s", i, f.Code, f.Message)
			}
		}
		for _, pr := range b.Behavior.Processes {
			switch pr.Provenance {
			case evidence.ProvenancePackage, evidence.ProvenanceDeclared:
				t.Errorf("scan %d: %s process taken for the package's (%s): %v", i, pr.Phase, pr.Provenance, pr.Argv)
			case "unknown": // the sandbox's provenanceUnknown
				unknown++
				t.Logf("scan %d: %s process of unknown provenance: %v", i, pr.Phase, pr.Argv)
			}
		}
		if i == 0 || t.Failed() {
			for _, pr := range b.Behavior.Processes {
				t.Logf("  %s %s pid %d ppid %d %s %.80s", pr.Time.Format("15:04:05.000000"), pr.Phase, pr.PID, pr.PPID, pr.Provenance, strings.Join(pr.Argv, " "))
			}
		}
		t.Logf("scan %d: %s, %d processes", i, time.Since(at).Round(100*time.Millisecond), len(b.Behavior.Processes))
	}
	t.Logf("%d scans in %s: %d behaviour findings, %d processes of unknown provenance", scans, time.Since(started).Round(time.Second), findings, unknown)
}
