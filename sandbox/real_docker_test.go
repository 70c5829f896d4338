//go:build docker

package sandbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/supplychain"
)

// scanReal resolves a pinned package on the npm registry and scans it.
func scanReal(t *testing.T, name, version string, args ...string) *sandbox.Result {
	t.Helper()
	v, err := supplychain.NewNPM(nil, "").Resolve(context.Background(), name, version)
	if err != nil {
		t.Fatalf("resolve %s@%s: %v", name, version, err)
	}
	s := newSandbox(t, func(o *sandbox.Options) { o.Memory = 512 << 20; o.HandshakeTimeout = 30e9; o.TreeCacheDir = treeCache })
	id := runID(t)
	res, err := s.Scan(context.Background(), id, sandbox.Target{Name: v.Name, Version: v.Version, Integrity: v.Integrity, Args: args})
	if err != nil {
		t.Fatalf("scan: %v", err)
	}
	assertClean(t, id)
	if res.Session != nil {
		t.Logf("phases: fetch %dms scripts %dms start %dms handshake %dms list %dms", res.Install.FetchMS, res.Install.ScriptsMS, res.Session.StartMS, res.Session.HandshakeMS, res.Session.ListMS)
	}
	if res.Outcome != evidence.OutcomeOK {
		t.Fatalf("outcome %s: install %+v session %+v", res.Outcome, res.Install, res.Session)
	}
	if !res.Install.Integrity.Match {
		t.Errorf("integrity %+v", res.Install.Integrity)
	}
	return res
}

func toolsByName(c *contract.Contract) map[string]contract.Tool {
	m := map[string]contract.Tool{}
	for _, tl := range c.Tools {
		m[tl.Name] = tl
	}
	return m
}

// annot is the expected effective annotations of one real tool.
type annot struct {
	readOnly    bool
	destructive *bool // nil: absent
	openWorld   *bool
}

func bp(b bool) *bool { return &b }

func checkTools(t *testing.T, c *contract.Contract, names []string, want map[string]annot) {
	t.Helper()
	var got []string
	for _, tl := range c.Tools {
		got = append(got, tl.Name)
	}
	sort.Strings(got)
	sort.Strings(names)
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("tools (-want +got):\n- %s\n+ %s", strings.Join(names, ","), strings.Join(got, ","))
	}
	byName := toolsByName(c)
	eq := func(a, b *bool) bool { return (a == nil && b == nil) || (a != nil && b != nil && *a == *b) }
	for name, w := range want {
		tl, ok := byName[name]
		if !ok || tl.Annotations == nil {
			t.Errorf("%s: no annotations", name)
			continue
		}
		a := tl.Annotations
		if tl.ReadOnly() != w.readOnly || !eq(a.DestructiveHint, w.destructive) || !eq(a.OpenWorldHint, w.openWorld) {
			b, _ := json.Marshal(a)
			t.Errorf("%s: annotations %s, want readOnly=%v destructive=%v openWorld=%v", name, b, w.readOnly, ptrStr(w.destructive), ptrStr(w.openWorld))
		}
	}
}

func ptrStr(b *bool) string {
	if b == nil {
		return "absent"
	}
	return fmt.Sprint(*b)
}

func TestRealServerEverything(t *testing.T) {
	res := scanReal(t, "@modelcontextprotocol/server-everything", "2026.8.31")
	c := res.Contract
	if res.Bin.Name != "mcp-server-everything" || res.Bin.Rule != "single bin entry" {
		t.Errorf("bin %+v", res.Bin)
	}
	if c.ServerInfo.Name != "mcp-servers/everything" || c.ProtocolVersion != "2025-11-25" {
		t.Errorf("server %+v protocol %s", c.ServerInfo, c.ProtocolVersion)
	}
	if len(c.Prompts) == 0 || len(c.Resources) == 0 || len(c.Templates) == 0 {
		t.Errorf("prompts/resources/templates %d/%d/%d", len(c.Prompts), len(c.Resources), len(c.Templates))
	}
	checkTools(t, c, []string{
		"echo", "get-annotated-message", "get-env", "get-resource-links", "get-resource-reference",
		"get-roots-list", "get-structured-content", "get-sum", "get-tiny-image", "gzip-file-as-resource",
		"simulate-research-query", "toggle-simulated-logging", "toggle-subscriber-updates", "trigger-long-running-operation",
	}, map[string]annot{
		"echo":                     {readOnly: true, destructive: bp(false), openWorld: bp(false)},
		"get-env":                  {readOnly: true, destructive: bp(false), openWorld: bp(false)},
		"gzip-file-as-resource":    {readOnly: false, destructive: bp(false), openWorld: bp(true)},
		"toggle-simulated-logging": {readOnly: false, destructive: bp(false), openWorld: bp(false)},
	})
	if res.Install.Packages < 50 || res.Install.LockfileSHA256 == "" || len(res.Lockfile) == 0 {
		t.Errorf("install tree: %d packages, lockfile %q", res.Install.Packages, res.Install.LockfileSHA256)
	}
}

func TestRealServerFilesystem(t *testing.T) {
	// server-filesystem refuses to start without an allowed directory.
	res := scanReal(t, "@modelcontextprotocol/server-filesystem", "2026.8.31", "/tmp")
	c := res.Contract
	if c.ServerInfo.Name != "secure-filesystem-server" {
		t.Errorf("server %+v", c.ServerInfo)
	}
	checkTools(t, c, []string{
		"create_directory", "directory_tree", "edit_file", "get_file_info", "list_allowed_directories",
		"list_directory", "list_directory_with_sizes", "move_file", "read_file", "read_media_file",
		"read_multiple_files", "read_text_file", "search_files", "write_file",
	}, map[string]annot{
		"read_file":        {readOnly: true, destructive: nil, openWorld: bp(false)},
		"write_file":       {readOnly: false, destructive: bp(true), openWorld: bp(false)},
		"move_file":        {readOnly: false, destructive: bp(true), openWorld: bp(false)},
		"create_directory": {readOnly: false, destructive: bp(false), openWorld: bp(false)},
	})
}
