package rubric

import (
	"slices"
	"strconv"
	"strings"

	"github.com/verifymcp/verifymcp/evidence"
)

// Releases that run as shipped (container images, MCPB bundles), from
// rubric v14: what the release declares of itself (evidence.Shipped)
// against what ran.
const shippedFrom = "14"

// Reason codes of shipped releases (rubric v14 on).
const (
	CodeSurfaceUndeclared = "pkg.artefact.surface.undeclared"
	CodeSurfaceUnserved   = "pkg.artefact.surface.unserved"
	CodeImageRootUser     = "pkg.artefact.image.root_user"
	CodeSignatureInvalid  = "pkg.artefact.signature.invalid"
	// CodeImageRequiresRoot is from rubric v15 (requiresRootFrom).
	CodeImageRequiresRoot = "pkg.artefact.image.requires_root"
)

// requiresRootFrom is the first rubric that reads an image's second start
// (evidence Shipped.FirstStart).
const requiresRootFrom = "15"

// surfaceDiff is one difference between a release's declared surface and
// the listing: a tool or prompt one of them names and the other does not.
type surfaceDiff struct {
	code, kind, name string
	// sev is the code's severity, set when it is emitted.
	sev Severity
}

// manifestDiffs compares the surface the release declares with the one
// the server listed, from v14; nil before, without a declaration or
// without a listing. A kind the release does not declare is not
// compared; of a kind it says it generates at run time (MCPB's
// tools_generated: these and more), only what it declares is looked for.
func (p *probe) manifestDiffs() []surfaceDiff {
	b := p.b
	if !p.atLeast(shippedFrom) || b.Shipped == nil || b.Shipped.Declared == nil || b.Contract == nil {
		return nil
	}
	d := b.Shipped.Declared
	var out []surfaceDiff
	compare := func(kind string, declared []string, generated bool, served []string) {
		if declared == nil {
			return
		}
		for _, n := range served {
			if !generated && !slices.Contains(declared, n) {
				out = append(out, surfaceDiff{code: CodeSurfaceUndeclared, kind: kind, name: n})
			}
		}
		for _, n := range declared {
			if !slices.Contains(served, n) {
				out = append(out, surfaceDiff{code: CodeSurfaceUnserved, kind: kind, name: n})
			}
		}
	}
	var tools, prompts []string
	for _, t := range b.Contract.Tools {
		tools = append(tools, t.Name)
	}
	for _, pr := range b.Contract.Prompts {
		prompts = append(prompts, pr.Name)
	}
	compare("tool", d.Tools, d.ToolsGenerated, tools)
	compare("prompt", d.Prompts, d.PromptsGenerated, prompts)
	return out
}

// emitManifestDiffs emits the differences manifestDiffs finds, each once,
// under the dimension being scored, and returns them with their
// severities.
func (p *probe) emitManifestDiffs() []surfaceDiff {
	var out []surfaceDiff
	for _, sd := range p.manifestDiffs() {
		def, ok := p.r.Code(sd.code)
		if !ok || def.Dimension != p.dimension {
			continue
		}
		msg, ev := p.diffMessage(sd)
		p.emit(sd.code, sd.kind+" "+sd.name, msg, ev)
		sd.sev = def.Severity
		out = append(out, sd)
	}
	return out
}

// diffMessage says what one difference means.
func (p *probe) diffMessage(sd surfaceDiff) (message, ev string) {
	src := p.b.Shipped.Declared.Source
	if src == "" {
		src = "the manifest"
	}
	if sd.code == CodeSurfaceUndeclared {
		return "the server lists the " + sd.kind + " " + sd.name + ", which " + src + " does not declare: the user approved another surface at install",
			p.clip(sd.kind + "s declared: " + strings.Join(p.declared(sd.kind), ", "))
	}
	return src + " declares the " + sd.kind + " " + sd.name + ", which the server does not list",
		p.clip(sd.kind + "s declared: " + strings.Join(p.declared(sd.kind), ", "))
}

func (p *probe) declared(kind string) []string {
	if kind == "tool" {
		return p.b.Shipped.Declared.Tools
	}
	return p.b.Shipped.Declared.Prompts
}

// emitRootUser reports, from v14, an image whose configuration runs it as
// root; it deducts nothing.
func (p *probe) emitRootUser() {
	sh := p.b.Shipped
	if !p.atLeast(shippedFrom) || sh == nil || !sh.RootUser {
		return
	}
	user := sh.User
	if user == "" {
		user = "(none: root)"
	}
	p.emit(CodeImageRootUser, p.b.Target.Name, "the image's configuration runs its server as root; the sandbox ran it as "+orUnknown(sh.RanAs),
		p.clip("User: "+user))
}

// emitRequiresRoot reports, from v15, an image whose server did not start
// as the sandbox's unprivileged user and then started as root, the user
// its configuration names, in a session that listed its contract; it
// returns whether it did, for execution_safety to deduct it. A second
// start as a user other than root is the image's own choice, not this;
// a second start that failed too is the session's failure.
func (p *probe) emitRequiresRoot() bool {
	b := p.b
	sh := b.Shipped
	if !p.atLeast(requiresRootFrom) || sh == nil || sh.FirstStart == nil || !sh.RootUser {
		return false
	}
	if b.Session == nil || b.Session.Outcome != evidence.OutcomeOK || b.Contract == nil {
		return false
	}
	fs := sh.FirstStart
	ended := orUnknown(string(fs.Outcome))
	if fs.ExitCode != nil {
		ended += " (exit " + strconv.Itoa(*fs.ExitCode) + ")"
	}
	ran := orUnknown(sh.RanAs)
	if ran != "root" {
		ran += " (root)"
	}
	p.emit(CodeImageRequiresRoot, b.Target.Name,
		"the server did not start as the unprivileged user "+orUnknown(fs.As)+": "+ended+"; it started as "+ran+", the user its image's configuration names",
		p.firstStartEvidence(fs))
	return true
}

// firstStartEvidence quotes how the first start ended: its error, clipped,
// and the end of its standard error (both masked when recorded).
func (p *probe) firstStartEvidence(fs *evidence.FirstStart) string {
	var parts []string
	if fs.Error != "" {
		parts = append(parts, "error: "+p.clip(fs.Error))
	}
	if fs.StderrTail != "" {
		parts = append(parts, "stderr: "+p.tail(fs.StderrTail))
	}
	if len(parts) == 0 {
		parts = append(parts, "first start as "+orUnknown(fs.As)+": "+orUnknown(string(fs.Outcome)))
	}
	return strings.Join(parts, "; ")
}

// signatureInvalid reports, from v14, a release whose signature does not
// verify over its content; it returns whether it did.
func (p *probe) signatureInvalid() bool {
	sh := p.b.Shipped
	if !p.atLeast(shippedFrom) || sh == nil || sh.Signature == nil {
		return false
	}
	sig := sh.Signature
	if !sig.Present || sig.Verified {
		return false
	}
	p.emit(CodeSignatureInvalid, p.b.Target.Name, "the "+sh.Kind+"'s signature does not verify over its content: "+orUnknown(sig.Reason),
		p.clip(signatureEvidence(sig)))
	return true
}

func signatureEvidence(sig *evidence.ReleaseSignature) string {
	parts := []string{"format " + orUnknown(sig.Format)}
	if sig.Signer != "" {
		parts = append(parts, "signer "+sig.Signer)
	}
	if sig.Issuer != "" {
		parts = append(parts, "issuer "+sig.Issuer)
	}
	return strings.Join(parts, "; ")
}
