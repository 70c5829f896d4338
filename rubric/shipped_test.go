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

// rootOnlyImage is the everything bundle as an image whose configuration
// runs it as root, which exited as the sandbox's unprivileged user and
// then started as root and listed its contract.
func rootOnlyImage(t *testing.T) *evidence.Bundle {
	t.Helper()
	b := shippedBundle(t)
	b.Target.Ecosystem, b.Target.Name = "oci", "ghcr.io/example/server"
	exit := 1
	b.Shipped.Kind, b.Shipped.Declared, b.Shipped.RootUser, b.Shipped.RanAs = "image", nil, true, "0:0"
	b.Shipped.FirstStart = &evidence.FirstStart{
		As: "65534:65534", Outcome: evidence.OutcomeStartCrashed, ExitCode: &exit,
		Error:      "the server exited before answering initialize",
		StderrTail: strings.Repeat("npm warn config ignored\n", 20) + "Error: EACCES: permission denied, mkdir '/root/.cache'",
	}
	return b
}

func TestRequiresRoot(t *testing.T) {
	r14, r15 := mustLoad(t, shippedFrom), mustLoad(t, requiresRootFrom)
	const rootUser, requiresRoot = "pkg.artefact.image.root_user ghcr.io/example/server", "pkg.artefact.image.requires_root ghcr.io/example/server"
	spawn := r15.Params.Behavior.ExecutionSafety.SpawnPenalty
	cases := []struct {
		name   string
		r      *Rubric
		modify func(b *evidence.Bundle)
		want   []string
		fall   float64 // execution_safety's fall from the same bundle without a first start
	}{
		{"v15: started only as root", r15, func(*evidence.Bundle) {}, []string{requiresRoot, rootUser}, spawn},
		{"v15: ran as root named by name", r15, func(b *evidence.Bundle) { b.Shipped.RanAs = "root" }, []string{requiresRoot, rootUser}, spawn},
		{"v14 does not read the first start", r14, func(*evidence.Bundle) {}, []string{rootUser}, 0},
		{"v15: the image runs as its own non-root user", r15, func(b *evidence.Bundle) {
			b.Shipped.RootUser, b.Shipped.User, b.Shipped.RanAs = false, "node", "node"
		}, nil, 0},
		{"v15: the second start failed too", r15, func(b *evidence.Bundle) {
			exit := 1
			b.Session.Outcome, b.Session.ExitCode = evidence.OutcomeStartCrashed, &exit
		}, []string{rootUser}, 0},
		{"v15: the second start listed no contract", r15, func(b *evidence.Bundle) { b.Contract = nil }, []string{rootUser}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := rootOnlyImage(t)
			tc.modify(b)
			res := Evaluate(b, tc.r)
			if got := shippedCodes(res, "pkg.artefact."); !slices.Equal(got, tc.want) {
				t.Fatalf("codes = %q, want %q", got, tc.want)
			}
			without := rootOnlyImage(t)
			tc.modify(without)
			without.Shipped.FirstStart = nil
			base := Evaluate(without, tc.r)
			if got := shippedCodes(base, "pkg.artefact.image.requires_root"); len(got) != 0 {
				t.Errorf("without a first start: %q", got)
			}
			d, d0 := dimensionOf(res, DimensionExecutionSafety), dimensionOf(base, DimensionExecutionSafety)
			if d.State != d0.State || d0.Score-d.Score != tc.fall {
				t.Errorf("execution_safety %v %s (%s), want %v less than %v", d.Score, d.State, d.Reason, tc.fall, d0.Score)
			}
			if tc.fall > 0 && !strings.Contains(d.Reason, "started only as root") {
				t.Errorf("execution_safety reason %q does not say the image started only as root", d.Reason)
			}
		})
	}

	res := Evaluate(rootOnlyImage(t), r15)
	var f Finding
	for _, x := range res.Findings {
		if x.Code == CodeImageRequiresRoot {
			f = x
		}
	}
	if f.Severity != SeverityMedium || f.Dimension != DimensionExecutionSafety {
		t.Errorf("finding %+v, want medium under execution_safety", f)
	}
	for _, want := range []string{"65534:65534", "start_crashed (exit 1)", "0:0 (root)"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message %q does not say %q", f.Message, want)
		}
	}
	if !strings.Contains(f.Evidence, "error: the server exited before answering initialize") ||
		!strings.HasSuffix(f.Evidence, "mkdir '/root/.cache'") {
		t.Errorf("evidence %q does not quote the first start's error and the end of its stderr", f.Evidence)
	}
	if max := len("error: ; stderr: ") + 2*r15.Params.EvidenceMaxChars; len([]rune(f.Evidence)) > max {
		t.Errorf("evidence is %d characters, more than %d", len([]rune(f.Evidence)), max)
	}
}
