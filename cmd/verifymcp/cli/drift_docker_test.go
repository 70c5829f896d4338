//go:build docker

package cli_test

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// driftServer is a plain-Node MCP stdio server whose surface comes from
// fixture.json: its tools, instructions, server name and extra
// capabilities, and, for fixtures whose surface depends on the
// environment, the tools to serve when an environment variable has a
// value (toolsWhen: {"var": "MODE", "value": "b", "tools": [...]}).
const driftServer = `#!/usr/bin/env node
'use strict';
const fs = require('fs');
const path = require('path');
const cfg = JSON.parse(fs.readFileSync(path.join(__dirname, 'fixture.json'), 'utf8'));
let tools = cfg.tools;
const w = cfg.toolsWhen;
if (w && process.env[w.var] === w.value) tools = w.tools;
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
let buf = '';
process.stdin.on('data', (d) => {
  buf += d;
  let i;
  while ((i = buf.indexOf('\n')) >= 0) {
    const line = buf.slice(0, i); buf = buf.slice(i + 1);
    if (!line.trim()) continue;
    const msg = JSON.parse(line);
    if (msg.id === undefined) continue;
    switch (msg.method) {
      case 'initialize':
        send({ jsonrpc: '2.0', id: msg.id, result: { protocolVersion: msg.params.protocolVersion,
          capabilities: Object.assign({ tools: {} }, cfg.capabilities || {}),
          serverInfo: { name: cfg.name, version: cfg.version }, instructions: cfg.instructions } });
        break;
      case 'tools/list':
        send({ jsonrpc: '2.0', id: msg.id, result: { tools } });
        break;
      case 'ping':
        send({ jsonrpc: '2.0', id: msg.id, result: {} });
        break;
      default:
        send({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'Method not found' } });
    }
  }
});
process.stdin.on('end', () => process.exit(0));
`

// writeDriftFixture writes an npm tarball of verifymcp-fixture-drift at
// version with the given fixture configuration.
func writeDriftFixture(t *testing.T, path, version string, cfg map[string]any) {
	t.Helper()
	cfg["name"], cfg["version"] = "drift-fixture", version
	if _, ok := cfg["instructions"]; !ok {
		cfg["instructions"] = "Notes for tests."
	}
	fixture, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	for _, fl := range []struct {
		name, body string
		mode       int64
	}{
		{"package/package.json", `{"name":"verifymcp-fixture-drift","version":"` + version + `","bin":{"drift":"server.js"}}`, 0o644},
		{"package/server.js", driftServer, 0o755},
		{"package/fixture.json", string(fixture), 0o644},
	} {
		if err := tw.WriteHeader(&tar.Header{Name: fl.name, Mode: fl.mode, Size: int64(len(fl.body)), ModTime: time.Unix(1e9, 0)}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(fl.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

// driftV1 and driftV2 are two versions whose contracts differ in ten
// kinds, eight of them surfaced.
var (
	driftV1 = map[string]any{"tools": []any{
		map[string]any{"name": "read_note", "description": "Read a note by its id.", "title": "Read note",
			"inputSchema": raw(`{"type":"object","properties":{"id":{"type":"string","pattern":"^[a-z0-9]+$"}},"required":["id"],"additionalProperties":false}`),
			"annotations": raw(`{"readOnlyHint":true,"openWorldHint":false}`)},
		map[string]any{"name": "list_notes", "description": "List the notes.", "inputSchema": raw(`{"type":"object","properties":{}}`),
			"annotations": raw(`{"readOnlyHint":true,"openWorldHint":false}`)},
		map[string]any{"name": "old_export", "description": "Export the notes as text.", "inputSchema": raw(`{"type":"object"}`)},
	}}
	driftV2 = map[string]any{"name": "drift-fixture", "tools": []any{
		// readOnlyHint true -> false, openWorldHint false -> absent, a
		// new parameter, the pattern and additionalProperties: false
		// dropped, a new title.
		map[string]any{"name": "read_note", "description": "Read a note by its id.", "title": "Read or fetch note",
			"inputSchema": raw(`{"type":"object","properties":{"id":{"type":"string"},"url":{"type":"string"}},"required":["id"]}`),
			"annotations": raw(`{"readOnlyHint":false}`)},
		// Reworded only.
		map[string]any{"name": "list_notes", "description": "List all of the notes.", "inputSchema": raw(`{"type":"object","properties":{}}`),
			"annotations": raw(`{"readOnlyHint":true,"openWorldHint":false}`)},
		// Added; old_export removed.
		map[string]any{"name": "delete_note", "description": "Delete a note.", "inputSchema": raw(`{"type":"object","properties":{"id":{"type":"string"}}}`)},
	}, "instructions": "Notes for tests. Always call read_note first.", "capabilities": raw(`{"experimental":{"notes.sync":{}}}`)}
)

type driftReport struct {
	Run struct {
		ID string `json:"id"`
	} `json:"run"`
	Drift *struct {
		State     string `json:"state"`
		FirstScan bool   `json:"first_scan"`
		Statement string `json:"statement"`
		Baseline  *struct {
			RunID    string `json:"run_id"`
			PinnedBy string `json:"pinned_by"`
		} `json:"baseline"`
		Changes []struct {
			Kind     string `json:"kind"`
			Subject  string `json:"subject"`
			Detail   string `json:"detail"`
			Safety   bool   `json:"safety"`
			Surfaced bool   `json:"surfaced"`
		} `json:"changes"`
		Session *struct {
			Changes []json.RawMessage `json:"changes"`
		} `json:"session"`
	} `json:"drift"`
	Findings []struct {
		Code    string `json:"code"`
		Subject string `json:"subject"`
	} `json:"findings"`
	Dimensions []struct {
		ID     string   `json:"id"`
		State  string   `json:"state"`
		Score  *float64 `json:"score"`
		Reason string   `json:"reason"`
	} `json:"dimensions"`
}

func (r driftReport) kinds() []string {
	var out []string
	for _, c := range r.Drift.Changes {
		out = append(out, c.Kind+" "+c.Subject+" "+c.Detail)
	}
	slices.Sort(out)
	return out
}

func (r driftReport) dimension(id string) (state string, score float64, reason string) {
	for _, d := range r.Dimensions {
		if d.ID == id {
			if d.Score != nil {
				score = *d.Score
			}
			return d.State, score, d.Reason
		}
	}
	return "", 0, ""
}

// scanDrift scans a target in its own process (so that each scan opens the
// store afresh) and decodes the JSON report.
func scanDrift(t *testing.T, data, target string, extra ...string) driftReport {
	t.Helper()
	args := append([]string{"scan", target, "--data-dir", data, "--format", "json", "--no-behavior", "--skip", "osv,socket,github,dnssec,judge", "--idle", "1s"}, extra...)
	res := verifymcp(t, nil, args...)
	if res.code != 0 {
		t.Fatalf("scan %s: exit %d\n%s", target, res.code, res.stderr)
	}
	var r driftReport
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil || r.Drift == nil {
		t.Fatalf("scan %s: report %v, drift %v", target, err, r.Drift)
	}
	return r
}

// TestDriftAcrossVersions: the first scan pins the identity; a later
// version's scan, in another process, is compared with the pin and its
// changes classified; accepting it makes it the baseline, which survives
// the program's restarts; diff classifies the two stored runs alike.
func TestDriftAcrossVersions(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	v1, v2 := filepath.Join(dir, "drift-1.0.0.tgz"), filepath.Join(dir, "drift-1.1.0.tgz")
	writeDriftFixture(t, v1, "1.0.0", driftV1)
	writeDriftFixture(t, v2, "1.1.0", driftV2)

	first := scanDrift(t, data, v1)
	if !first.Drift.FirstScan || first.Drift.State != "unavailable" || !strings.Contains(first.Drift.Statement, "trust on first use") ||
		!strings.Contains(first.Drift.Statement, "not a statement that the server was honest") {
		t.Errorf("first scan: drift %+v", first.Drift)
	}
	if st, score, reason := first.dimension("contract_drift"); st != "zero_point" || score != 100 || !strings.Contains(reason, "no prior snapshot to churn from") {
		t.Errorf("first scan: contract_drift %s %v %q", st, score, reason)
	}

	second := scanDrift(t, data, v2)
	if second.Drift.State != "observed" || second.Drift.Baseline == nil || second.Drift.Baseline.RunID != first.Run.ID ||
		second.Drift.Baseline.PinnedBy != "first scan (trust on first use)" {
		t.Fatalf("second scan: drift %+v", second.Drift)
	}
	want := []string{
		"annotation_removed tool:read_note openWorldHint",
		"annotation_toward_destructive tool:read_note readOnlyHint",
		"annotation_toward_open_world tool:read_note openWorldHint",
		"capability_added server experimental",
		"description_changed tool:list_notes description",
		"instructions_changed server instructions",
		"parameter_added tool:read_note /properties/url",
		"schema_loosened tool:read_note /properties/id pattern",
		"schema_loosened tool:read_note additionalProperties",
		"title_changed tool:read_note title",
		"tool_added tool:delete_note ",
		"tool_removed tool:old_export ",
	}
	if got := second.kinds(); !slices.Equal(got, want) {
		t.Errorf("changes since the pin:\n got %q\nwant %q", got, want)
	}
	codes := map[string]bool{}
	for _, f := range second.Findings {
		if strings.HasPrefix(f.Code, "pkg.drift.") {
			codes[f.Code] = true
		}
	}
	for _, c := range []string{"annotation_removed", "annotation_toward_destructive", "annotation_toward_open_world", "capability_added",
		"instructions_changed", "parameter_added", "schema_loosened", "title_changed", "tool_removed"} {
		if !codes["pkg.drift."+c] {
			t.Errorf("no finding pkg.drift.%s", c)
		}
	}
	if codes["pkg.drift.tool_added"] || codes["pkg.drift.description_changed"] {
		t.Errorf("recorded kinds reported as findings: %v", codes)
	}
	if st, score, _ := second.dimension("contract_drift"); st != "scored" || score != 0 {
		t.Errorf("second scan: contract_drift %s %v, want scored 0 (nine surfaced changes)", st, score)
	}

	// The pin, read by a new process: still the first scan's.
	show := verifymcp(t, nil, "pin", "show", "npm:verifymcp-fixture-drift", "--data-dir", data, "--format", "json")
	var pv struct {
		Current struct {
			Seq      int    `json:"seq"`
			RunID    string `json:"run_id"`
			PinnedBy string `json:"pinned_by"`
		} `json:"current"`
		History []json.RawMessage `json:"history"`
	}
	if err := json.Unmarshal([]byte(show.stdout), &pv); err != nil || pv.Current.RunID != first.Run.ID || pv.Current.Seq != 1 {
		t.Fatalf("pin show: %v %+v\n%s%s", err, pv, show.stdout, show.stderr)
	}
	acc := verifymcp(t, nil, "pin", "accept", "npm:verifymcp-fixture-drift", "--data-dir", data, "--by", "tester", "--reason", "1.1.0 reviewed")
	if acc.code != 0 || !strings.Contains(acc.stdout, "pinned by tester") || !strings.Contains(acc.stdout, "annotation_toward_destructive") {
		t.Fatalf("pin accept: exit %d\n%s%s", acc.code, acc.stdout, acc.stderr)
	}
	hist := verifymcp(t, nil, "pin", "history", "npm:verifymcp-fixture-drift", "--data-dir", data, "--format", "json")
	if err := json.Unmarshal([]byte(hist.stdout), &pv); err != nil || len(pv.History) != 2 || pv.Current.RunID != second.Run.ID || pv.Current.PinnedBy != "tester" {
		t.Fatalf("pin history: %v %+v\n%s", err, pv, hist.stdout)
	}

	third := scanDrift(t, data, v2)
	if third.Drift.Baseline == nil || third.Drift.Baseline.RunID != second.Run.ID || len(third.Drift.Changes) != 0 {
		t.Errorf("scan after accept: drift %+v", third.Drift)
	}
	if st, score, reason := third.dimension("contract_drift"); st != "scored" || score != 100 || !strings.Contains(reason, "not from honest") {
		t.Errorf("scan after accept: contract_drift %s %v %q", st, score, reason)
	}

	diff := verifymcp(t, nil, "diff", first.Run.ID, second.Run.ID, "--data-dir", data, "--format", "json")
	var dv struct {
		Changes []struct {
			Kind string `json:"kind"`
		} `json:"changes"`
		Surfaced int `json:"surfaced"`
		Safety   int `json:"safety"`
	}
	if err := json.Unmarshal([]byte(diff.stdout), &dv); err != nil || len(dv.Changes) != len(want) || dv.Surfaced != 10 || dv.Safety != 8 {
		t.Errorf("diff: %v %+v\n%s%s", err, dv, diff.stdout, diff.stderr)
	}
}

// TestDriftSameVersion: the same version, scanned twice, changes its
// contract with an environment value (its identity names the variable,
// not the value): the second scan says so though the version did not move.
func TestDriftSameVersion(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	tgz := filepath.Join(dir, "drift-1.0.0.tgz")
	cfg := map[string]any{"tools": driftV1["tools"], "toolsWhen": map[string]any{"var": "MODE", "value": "b", "tools": driftV2["tools"]}}
	writeDriftFixture(t, tgz, "1.0.0", cfg)
	first := scanDrift(t, data, tgz, "--env", "MODE=a")
	if !first.Drift.FirstScan {
		t.Fatalf("first scan: %+v", first.Drift)
	}
	second := scanDrift(t, data, tgz, "--env", "MODE=b")
	if second.Drift.Baseline == nil || second.Drift.Baseline.RunID != first.Run.ID {
		t.Fatalf("second scan of the same version: %+v", second.Drift)
	}
	got := second.kinds()
	for _, w := range []string{"annotation_toward_destructive tool:read_note readOnlyHint", "parameter_added tool:read_note /properties/url", "tool_removed tool:old_export "} {
		if !slices.Contains(got, w) {
			t.Errorf("same version, other contract: changes %q lack %q", got, w)
		}
	}
	// Another identity (no MODE at all) has a pin of its own.
	other := scanDrift(t, data, tgz)
	if !other.Drift.FirstScan {
		t.Errorf("a scan without --env MODE is another identity, pinned now: %+v", other.Drift)
	}
}

// TestDriftRealServer: two pinned versions of a real server, the first
// scan pinning the identity and the second compared with it. Between
// server-memory 2025.4.25 and 2026.8.31 the server gave its nine tools
// titles, added the memory://knowledge-graph resource and declared the
// resources capability and tools.listChanged; nothing else moved.
func TestDriftRealServer(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	first := scanDrift(t, data, "npm:@modelcontextprotocol/server-memory@2025.4.25")
	if !first.Drift.FirstScan {
		t.Fatalf("first scan: %+v", first.Drift)
	}
	second := scanDrift(t, data, "npm:@modelcontextprotocol/server-memory@2026.8.31")
	if second.Drift.Baseline == nil || second.Drift.Baseline.RunID != first.Run.ID {
		t.Fatalf("second scan: %+v", second.Drift)
	}
	want := []string{"capability_added server resources", "capability_added server tools.listChanged", "resource_changed resource:memory://knowledge-graph added"}
	for _, tool := range []string{"add_observations", "create_entities", "create_relations", "delete_entities", "delete_observations", "delete_relations", "open_nodes", "read_graph", "search_nodes"} {
		want = append(want, "title_changed tool:"+tool+" title")
	}
	slices.Sort(want)
	if got := second.kinds(); !slices.Equal(got, want) {
		t.Errorf("server-memory 2025.4.25 -> 2026.8.31:\n got %q\nwant %q", got, want)
	}
	t.Logf("server-memory 2025.4.25 -> 2026.8.31: %d changes: %q", len(second.Drift.Changes), second.kinds())
}
