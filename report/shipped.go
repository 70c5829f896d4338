package report

import (
	"maps"
	"slices"

	"github.com/verifymcp/verifymcp/ecosystem"
	"github.com/verifymcp/verifymcp/evidence"
)

// Shipped is a release that ran as shipped (a container image, an MCPB
// bundle): what preparing it found in place of an install phase, what it
// declares of itself and how the sandbox started it. Lists are never nil
// except Declared's, where null is a kind the release does not declare.
type Shipped struct {
	// Kind is "image" or "bundle".
	Kind string `json:"kind"`
	// Digest is the content digest the release was verified against.
	Digest string `json:"digest"`
	// Reference is the release as fetched (by digest where it has one);
	// Resolved the release as a target of its ecosystem when that says
	// more than the target's name and version, else "".
	Reference string `json:"reference"`
	Resolved  string `json:"resolved"`
	// Source is registry, daemon, layout, file or url.
	Source string `json:"source"`
	// ImageID and Layers are an image's configuration digest and its
	// layer digests, in order.
	ImageID string   `json:"image_id"`
	Layers  []string `json:"layers"`
	// Entrypoint, Cmd, WorkingDir and User are what the release declares
	// it starts with (a bundle's command is in Cmd); RootUser is set when
	// that runs it as root, RanAs is the user the sandbox ran it as.
	Entrypoint []string `json:"entrypoint"`
	Cmd        []string `json:"cmd"`
	WorkingDir string   `json:"working_dir"`
	User       string   `json:"user"`
	RootUser   bool     `json:"root_user"`
	RanAs      string   `json:"ran_as"`
	// FirstStart is the start as the sandbox's unprivileged user that
	// failed before the server answered, when the sandbox then started it
	// as the user its configuration names (RanAs); nil when the first
	// start was the only one.
	FirstStart *FirstStart `json:"first_start"`
	// EnvNames are the names of the variables the release sets (never
	// their values); Ports the ports it exposes.
	EnvNames []string `json:"env_names"`
	Ports    []string `json:"ports"`
	// LabelNames are the names of an image's labels, sorted. Their values
	// are left out as env values are: a label is free text a build may
	// fill with anything. The one a reader needs is MCPName.
	LabelNames []string `json:"label_names"`
	// MCPName is the MCP registry name the release claims for itself (an
	// image's io.modelcontextprotocol.server.name label); "" for none.
	MCPName string `json:"mcp_name"`
	// OS is the operating system an image holds; Packages counts the
	// packages found in it.
	OS       string `json:"os"`
	Packages int    `json:"packages"`
	// Manifest is a bundle's manifest.json; nil for an image.
	Manifest *BundleManifest `json:"manifest"`
	// Declared is the surface the release declares before it runs; nil
	// when it declares none.
	Declared *DeclaredSurface `json:"declared"`
	// Signature is the release's signature; nil when its kind has none.
	Signature *ReleaseSignature `json:"signature"`
	// Unwatched says why behaviour capture could not watch the server;
	// "" when it could.
	Unwatched string   `json:"unwatched"`
	Notes     []string `json:"notes"`
}

// FirstStart is a failed start as the sandbox's unprivileged user: as
// whom, how it ended, its exit status (null when it did not exit), what
// the session saw and the end of its standard error, masked.
type FirstStart struct {
	As         string `json:"as"`
	Outcome    string `json:"outcome"`
	ExitCode   *int   `json:"exit_code"`
	Error      string `json:"error"`
	StderrTail string `json:"stderr_tail"`
}

// BundleManifest is what a bundle's manifest.json says of the bundle.
type BundleManifest struct {
	ManifestVersion string `json:"manifest_version"`
	Name            string `json:"name"`
	Version         string `json:"version"`
	Author          string `json:"author"`
	ServerType      string `json:"server_type"`
	EntryPoint      string `json:"entry_point"`
	// UserConfig are the names of the settings the user fills at
	// install, Sensitive those marked sensitive: names, never values.
	UserConfig    []string          `json:"user_config"`
	Sensitive     []string          `json:"sensitive"`
	Platforms     []string          `json:"platforms"`
	Runtimes      map[string]string `json:"runtimes"`
	Files         int               `json:"files"`
	UnpackedBytes int64             `json:"unpacked_bytes"`
}

// DeclaredSurface is the surface a release declares of itself before it
// runs: a list is null when the release does not declare that kind.
type DeclaredSurface struct {
	Source           string   `json:"source"`
	Tools            []string `json:"tools"`
	Prompts          []string `json:"prompts"`
	ToolsGenerated   bool     `json:"tools_generated"`
	PromptsGenerated bool     `json:"prompts_generated"`
}

// ReleaseSignature is a release's signature and what checking it gave.
type ReleaseSignature struct {
	Present    bool   `json:"present"`
	Format     string `json:"format"`
	Verified   bool   `json:"verified"`
	SelfSigned bool   `json:"self_signed"`
	Trusted    bool   `json:"trusted"`
	Signer     string `json:"signer"`
	Issuer     string `json:"issuer"`
	Reason     string `json:"reason"`
}

// buildShipped is the report's release, from the bundle's; nil when the
// release did not run as shipped.
func buildShipped(sh *evidence.Shipped) *Shipped {
	if sh == nil {
		return nil
	}
	out := &Shipped{
		Kind: sh.Kind, Digest: sh.Digest, Reference: sh.Reference, Resolved: sh.Resolved, Source: sh.Source,
		ImageID: sh.ImageID, Layers: nonNil(sh.Layers), Entrypoint: nonNil(sh.Entrypoint), Cmd: nonNil(sh.Cmd),
		WorkingDir: sh.WorkingDir, User: sh.User, RootUser: sh.RootUser, RanAs: sh.RanAs,
		EnvNames: nonNil(sh.EnvNames), Ports: nonNil(sh.Ports), LabelNames: slices.Sorted(maps.Keys(sh.Labels)),
		MCPName: sh.MCPName, OS: sh.OS, Packages: sh.Packages, Unwatched: sh.Unwatched, Notes: nonNil(sh.Notes),
	}
	if out.LabelNames == nil {
		out.LabelNames = []string{}
	}
	if m := sh.Manifest; m != nil {
		out.Manifest = &BundleManifest{
			ManifestVersion: m.ManifestVersion, Name: m.Name, Version: m.Version, Author: m.Author,
			ServerType: m.ServerType, EntryPoint: m.EntryPoint, UserConfig: nonNil(m.UserConfig), Sensitive: nonNil(m.Sensitive),
			Platforms: nonNil(m.Platforms), Runtimes: map[string]string{}, Files: m.Files, UnpackedBytes: m.UnpackedBytes,
		}
		maps.Copy(out.Manifest.Runtimes, m.Runtimes)
	}
	if d := sh.Declared; d != nil {
		out.Declared = &DeclaredSurface{Source: d.Source, Tools: slices.Clone(d.Tools), Prompts: slices.Clone(d.Prompts),
			ToolsGenerated: d.ToolsGenerated, PromptsGenerated: d.PromptsGenerated}
	}
	if f := sh.FirstStart; f != nil {
		out.FirstStart = &FirstStart{As: f.As, Outcome: string(f.Outcome), Error: f.Error, StderrTail: f.StderrTail}
		if f.ExitCode != nil {
			code := *f.ExitCode
			out.FirstStart.ExitCode = &code
		}
	}
	if s := sh.Signature; s != nil {
		out.Signature = &ReleaseSignature{Present: s.Present, Format: s.Format, Verified: s.Verified, SelfSigned: s.SelfSigned,
			Trusted: s.Trusted, Signer: s.Signer, Issuer: s.Issuer, Reason: s.Reason}
	}
	return out
}

// releaseName is the release a report is about, as a target of its
// ecosystem: a shipped release's resolved form when it has one
// ("oci:registry/name@sha256:..."), else its name pinned the way its
// ecosystem pins (an image's tag after ':', not '@'), else
// ecosystem:name@version.
func releaseName(rep Report) string {
	resolved := ""
	if rep.Shipped != nil {
		resolved = rep.Shipped.Resolved
	}
	return nameRelease(rep.Target, rep.Shipped != nil, resolved)
}

// ReleaseName is the release a bundle is about, named as its report names
// it (the title, the table's target line): for an image scanned by tag,
// the digest it resolved to.
func ReleaseName(b *evidence.Bundle) string {
	resolved := ""
	if b.Shipped != nil {
		resolved = b.Shipped.Resolved
	}
	return nameRelease(Target{Ecosystem: b.Target.Ecosystem, Name: b.Target.Name, Version: b.Target.Version}, b.Shipped != nil, resolved)
}

// nameRelease is releaseName of a target, shipped or not, and a shipped
// release's resolved form.
func nameRelease(tg Target, shipped bool, resolved string) string {
	if shipped {
		if resolved != "" {
			return resolved
		}
		if tg.Ecosystem != "" && tg.Version != "" {
			return tg.Ecosystem + ":" + ecosystem.MustOf(tg.Ecosystem).Pin(tg.Name, tg.Version)
		}
	}
	return targetName(tg)
}
