package rubric

import (
	"slices"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/evidence"
)

// shippedBundle is the everything bundle as an MCPB bundle whose manifest
// declares exactly the tools and prompts the server lists.
func shippedBundle(t *testing.T) *evidence.Bundle {
	t.Helper()
	b := loadBundle(t, "everything.bundle.json")
	watched(nil)(b)
	firstScan()(b)
	b.Target.Ecosystem = "mcpb"
	d := &evidence.DeclaredSurface{Source: "manifest.json", Tools: []string{}, Prompts: []string{}}
	for _, tl := range b.Contract.Tools {
		d.Tools = append(d.Tools, tl.Name)
	}
	for _, p := range b.Contract.Prompts {
		d.Prompts = append(d.Prompts, p.Name)
	}
	b.Shipped = &evidence.Shipped{Kind: "bundle", Digest: "sha256:" + strings.Repeat("a", 64), Source: "file", RanAs: "65534:65534", Declared: d}
	return b
}

func shippedCodes(res Result, prefix string) []string {
	var out []string
	for _, f := range res.Findings {
		if strings.HasPrefix(f.Code, prefix) {
			out = append(out, f.Code+" "+f.Subject)
		}
	}
	slices.Sort(out)
	return out
}

func TestShippedFindings(t *testing.T) {
	r14 := mustLoad(t, shippedFrom)
	base := Evaluate(shippedBundle(t), r14)
	if got := shippedCodes(base, "pkg.artefact."); len(got) != 0 {
		t.Fatalf("a bundle whose manifest matches its listing gave %q", got)
	}
	baseDrift := dimensionOf(base, DimensionContractDrift)
	cases := []struct {
		name   string
		modify func(b *evidence.Bundle)
		want   []string
		drift  float64 // the drift score's fall
	}{
		{"served, not declared", func(b *evidence.Bundle) {
			b.Shipped.Declared.Tools = slices.DeleteFunc(b.Shipped.Declared.Tools, func(n string) bool { return n == "echo" })
		}, []string{"pkg.artefact.surface.undeclared tool echo"}, r14.Params.Drift.SeverityPenalties[SeverityMedium]},
		{"declared, not served", func(b *evidence.Bundle) {
			b.Shipped.Declared.Tools = append(b.Shipped.Declared.Tools, "delete_everything")
			b.Shipped.Declared.Prompts = append(b.Shipped.Declared.Prompts, "summarise")
		}, []string{"pkg.artefact.surface.unserved prompt summarise", "pkg.artefact.surface.unserved tool delete_everything"},
			2 * r14.Params.Drift.SeverityPenalties[SeverityLow]},
		{"tools generated at run time: what is declared is looked for", func(b *evidence.Bundle) {
			b.Shipped.Declared.Tools, b.Shipped.Declared.ToolsGenerated = []string{"echo", "other"}, true
		}, []string{"pkg.artefact.surface.unserved tool other"}, r14.Params.Drift.SeverityPenalties[SeverityLow]},
		{"no tool list declared", func(b *evidence.Bundle) { b.Shipped.Declared.Tools = nil }, nil, 0},
		{"an image that runs as root", func(b *evidence.Bundle) {
			b.Shipped.Kind, b.Shipped.RootUser, b.Shipped.Declared = "image", true, nil
		}, []string{"pkg.artefact.image.root_user " + "@modelcontextprotocol/server-everything"}, 0},
		{"a signature that does not verify", func(b *evidence.Bundle) {
			b.Shipped.Signature = &evidence.ReleaseSignature{Present: true, Format: "pkcs7", Reason: "the content digest does not match"}
		}, []string{"pkg.artefact.signature.invalid @modelcontextprotocol/server-everything"}, 0},
		{"a self-signed signature that verifies", func(b *evidence.Bundle) {
			b.Shipped.Signature = &evidence.ReleaseSignature{Present: true, Verified: true, SelfSigned: true, Format: "pkcs7"}
		}, nil, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := shippedBundle(t)
			b.Target.Name = "@modelcontextprotocol/server-everything"
			tc.modify(b)
			res := Evaluate(b, r14)
			if got := shippedCodes(res, "pkg.artefact."); !slices.Equal(got, tc.want) {
				t.Errorf("codes = %q, want %q", got, tc.want)
			}
			if d := dimensionOf(res, DimensionContractDrift); baseDrift.Score-d.Score != tc.drift {
				t.Errorf("contract_drift %v (%s), want %v less than %v", d.Score, d.Reason, tc.drift, baseDrift.Score)
			}
			if strings.Contains(tc.name, "signature that does not") {
				if d := dimensionOf(res, "installability"); d.Score != 0 {
					t.Errorf("installability = %v, want 0", d.Score)
				}
			}
			// Under v13 none of this is read.
			if got := shippedCodes(Evaluate(b, rubric13(t)), "pkg.artefact."); len(got) != 0 {
				t.Errorf("v13 gave %q", got)
			}
		})
	}
}
