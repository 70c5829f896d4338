package mcpb_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verifymcp/verifymcp/ecosystem/mcpb"
)

func TestCompare(t *testing.T) {
	withTools := func(extra string) *mcpb.Manifest {
		return manifest(t, `{"manifest_version": "0.3", "name": "x", "version": "1.0.0", "description": "d",
		"author": {"name": "a"}, "server": {"type": "node", "entry_point": "i.js"}`+extra+`}`)
	}
	for _, tc := range []struct {
		name           string
		m              *mcpb.Manifest
		tools, prompts []string
		want           mcpb.Comparison
	}{
		{
			name:  "nothing declared is not compared",
			m:     withTools(""),
			tools: []string{"a"},
			want: mcpb.Comparison{
				Tools:   mcpb.Checked{Reason: "the manifest has no tools key"},
				Prompts: mcpb.Checked{Reason: "the manifest has no prompts key"},
			},
		},
		{
			name:    "both directions, exact names",
			m:       withTools(`, "tools": [{"name": "read"}, {"name": "write"}, {"name": "Search"}], "prompts": [{"name": "p", "text": "t"}]`),
			tools:   []string{"search", "read", "delete", "delete"},
			prompts: []string{"p"},
			want: mcpb.Comparison{
				DeclaredNotServed: mcpb.Names{Tools: []string{"Search", "write"}},
				ServedNotDeclared: mcpb.Names{Tools: []string{"delete", "search"}},
				Tools:             mcpb.Checked{Declared: true, Served: true},
				Prompts:           mcpb.Checked{Declared: true, Served: true},
			},
		},
		{
			name:  "an empty list declares none",
			m:     withTools(`, "tools": []`),
			tools: []string{"a"},
			want: mcpb.Comparison{
				ServedNotDeclared: mcpb.Names{Tools: []string{"a"}},
				Tools:             mcpb.Checked{Declared: true, Served: true},
				Prompts:           mcpb.Checked{Reason: "the manifest has no prompts key"},
			},
		},
		{
			name:    "generated: declared ones must still be served",
			m:       withTools(`, "tools": [{"name": "search"}], "tools_generated": true, "prompts": [], "prompts_generated": true`),
			tools:   []string{"other"},
			prompts: []string{"q"},
			want: mcpb.Comparison{
				DeclaredNotServed: mcpb.Names{Tools: []string{"search"}},
				Tools:             mcpb.Checked{Declared: true, Reason: "tools_generated: the server adds tools at run time"},
				Prompts:           mcpb.Checked{Declared: true, Reason: "prompts_generated: the server adds prompts at run time"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mcpb.Compare(tc.m, tc.tools, tc.prompts)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Compare (-want +got):\n%s", diff)
			}
		})
	}
}
