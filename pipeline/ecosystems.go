package pipeline

import (
	"context"

	"github.com/verifymcp/verifymcp/ecosystem/mcpb/mcpbrun"
	"github.com/verifymcp/verifymcp/ecosystem/oci/ocirun"

	"github.com/verifymcp/verifymcp/ecosystem"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/supplychain"
)

// resolver is the pipeline's part of one package ecosystem: resolving a
// target of it to one exact artefact, and what the sandbox is given for
// it. npmscan.go and pypiscan.go hold the two; resolvers is the one table
// that names them. Everything else of an ecosystem (its names, pins,
// package URLs, lockfile) is asked of package ecosystem.
type resolver interface {
	// resolve resolves a parsed target of the ecosystem: on its registry,
	// or a local file.
	resolve(ctx context.Context, p *Pipeline, t Target) (*Resolved, error)
	// resolveEntry resolves the package an MCP registry entry names.
	resolveEntry(ctx context.Context, p *Pipeline, t Target, srv *supplychain.RegistryServer, pkg supplychain.RegistryPackage, notes []string) (*Resolved, error)
	// sandboxTarget is what the sandbox installs for rt (the options are
	// set by the caller).
	sandboxTarget(rt *Resolved) sandbox.Target
	// installed records in b what only the install tells of the artefact.
	installed(b *evidence.Bundle, rt *Resolved, in *evidence.Install)
	// localKind names a local file of the ecosystem in messages.
	localKind() string
}

var resolvers = map[string]resolver{"npm": npmResolver{}, "pypi": pypiResolver{},
	"oci": shippedResolver{ocirun.Ecosystem{}}, "mcpb": shippedResolver{mcpbrun.Ecosystem{}}}

// resolverOf is the resolver of the ecosystem named eco (npm's for a name
// no ecosystem has, as ecosystem.MustOf).
func resolverOf(eco string) resolver {
	return resolvers[ecosystem.MustOf(eco).Name()]
}

// ecosystemOf names the ecosystem of a resolved target.
func ecosystemOf(rt *Resolved) string { return ecosystem.MustOf(rt.Target.Ecosystem).Name() }

// localKind names a local target's file for messages.
func localKind(rt *Resolved) string { return resolverOf(rt.Target.Ecosystem).localKind() }
