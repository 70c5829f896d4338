package cli

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/store"
)

// TestPinShipped names the identity of an image or a bundle by the target
// a scan of it takes, as its runs are stored (the image's repository, the
// bundle's manifest name), and gives an image pinned from a run by tag
// the digest that tag resolved to.
func TestPinShipped(t *testing.T) {
	dir, _ := seedStore(t)
	ctx := context.Background()
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	pin := func(target string) store.Identity {
		t.Helper()
		f, err := runsFilter(target)
		if err != nil {
			t.Fatal(err)
		}
		f.Limit = 1
		runs, err := st.Runs(ctx, f)
		if err != nil || len(runs) != 1 {
			t.Fatalf("runs of %s: %v %v", target, runs, err)
		}
		data, err := st.Bundle(ctx, runs[0].RunID)
		if err != nil {
			t.Fatal(err)
		}
		b, err := evidence.Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		id := store.IdentityOf(b.Target)
		if _, _, err := st.PinFirst(ctx, id, b.Run.ID, time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)); err != nil {
			t.Fatal(err)
		}
		return id
	}
	cases := []struct {
		target, version string
		id              store.Identity
	}{
		{target: "oci:ghcr.io/acme/time-mcp:1.4.2", version: "1.4.2@sha256:7d3f9a1c5e2b8d4f6a0c9e1b3d5f7a9c2e4b6d8f0a1c3e5b7d9f2a4c6e8b0d1f"},
		{target: "mcpb:https://downloads.example.com/time-tools-0.3.1.mcpb", version: "0.3.1"},
		{target: "npm:@modelcontextprotocol/server-everything@2025.9.25", version: "2025.9.25"},
	}
	for i := range cases {
		cases[i].id = pin(cases[i].target)
	}
	st.Close()
	for _, c := range cases {
		for _, arg := range []string{c.target, "oci:ghcr.io/acme/time-mcp"} {
			if arg != c.target && c.id.Ecosystem != "oci" {
				continue
			}
			for _, sub := range []string{"show", "history"} {
				code, out, errOut := runRescore(t, "pin", sub, "--data-dir", dir, "--format", "json", arg)
				if code != ExitOK {
					t.Errorf("pin %s %s: exit %d: %s", sub, arg, code, errOut)
					continue
				}
				var v struct {
					Identity struct {
						Key string `json:"key"`
					} `json:"identity"`
					Current *struct {
						Version string `json:"version"`
					} `json:"current"`
				}
				if err := json.Unmarshal([]byte(out), &v); err != nil {
					t.Fatal(err)
				}
				if v.Identity.Key != store.IdentityKey(c.id) {
					t.Errorf("pin %s %s: identity %s, want that of %+v", sub, arg, v.Identity.Key, c.id)
				}
				if v.Current == nil || v.Current.Version != c.version {
					t.Errorf("pin %s %s: current %+v, want version %s", sub, arg, v.Current, c.version)
				}
			}
		}
	}
}
