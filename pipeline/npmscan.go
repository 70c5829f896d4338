package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/supplychain"
)

// npmResolver is the pipeline's part of the npm ecosystem (see resolver).
type npmResolver struct{}

// resolve resolves an npm target on the registry, or reads a local
// tarball's package.json.
func (npmResolver) resolve(ctx context.Context, p *Pipeline, t Target) (*Resolved, error) {
	start := time.Now()
	if t.File != "" {
		tb, err := readTarball(t.File)
		if err != nil {
			return nil, err
		}
		return &Resolved{Target: t, Name: tb.name, Version: tb.version, Integrity: tb.integrity, Source: "file", data: tb.data, manifest: tb.manifest,
			registrySig: evidence.Signal{State: evidence.StateNotAssessed, Reason: "local tarball: no registry metadata"}}, nil
	}
	if p.cfg.Logger != nil {
		p.cfg.Logger.Info("resolving", "target", t.Raw, "registry", p.cfg.Resolver.Registry())
	}
	v, err := p.cfg.Resolver.Resolve(ctx, t.Name, t.Spec)
	if err != nil {
		return nil, err
	}
	if p.cfg.Logger != nil && v.Version != t.Spec {
		p.cfg.Logger.Info("resolved", "requested", t.Spec, "version", v.Version)
	}
	fetched := time.Now().UTC()
	return &Resolved{Target: t, Name: v.Name, Version: v.Version, Integrity: v.Integrity, Source: "registry",
		Tarball: v.Tarball, Published: v.Published, Registry: p.cfg.Resolver.Registry(), version: v, resolvedAt: fetched,
		registrySig: evidence.Signal{State: evidence.StateObserved, ThirdParty: true, DurationMS: time.Since(start).Milliseconds(),
			Endpoint: p.cfg.Resolver.Registry(), FetchedAt: &fetched}}, nil
}

// resolveEntry resolves the npm package an MCP registry entry names.
func (npmResolver) resolveEntry(ctx context.Context, p *Pipeline, t Target, srv *supplychain.RegistryServer, pkg supplychain.RegistryPackage, notes []string) (*Resolved, error) {
	if pkg.RegistryBaseURL != "" && strings.TrimSuffix(pkg.RegistryBaseURL, "/") != strings.TrimSuffix(p.cfg.Resolver.Registry(), "/") {
		notes = append(notes, "the entry names the npm registry "+pkg.RegistryBaseURL+"; the package was resolved on "+p.cfg.Resolver.Registry())
	}
	npm := Target{Raw: t.Raw, Ecosystem: "npm", Name: pkg.Identifier, Spec: pkg.Version}
	if npm.Spec == "" {
		npm.Spec = "latest"
	}
	rt, err := p.Resolve(ctx, npm)
	if err != nil {
		return nil, fmt.Errorf("MCP registry entry %s@%s names npm:%s@%s: %w", srv.Name, srv.Version, pkg.Identifier, npm.Spec, err)
	}
	entry := &evidence.MCPRegistryEntry{Name: srv.Name, Version: srv.Version, Registry: p.cfg.MCPRegistry.Base(), Status: srv.Status,
		Package: "npm:" + pkg.Identifier + "@" + pkg.Version, Notes: notes, Unfixed: pkg.Unfixed}
	if rt.version != nil {
		var m struct {
			MCPName string `json:"mcpName"`
		}
		if json.Unmarshal(rt.version.Manifest, &m) == nil {
			entry.MCPName = m.MCPName
		}
	}
	return registryResolved(rt, entry, srv.Name, pkg), nil
}

func (npmResolver) sandboxTarget(rt *Resolved) sandbox.Target {
	return sandbox.Target{Name: rt.Name, Version: rt.Version, Integrity: rt.Integrity, Tarball: rt.data}
}

// installed: an npm artefact is known before the install.
func (npmResolver) installed(*evidence.Bundle, *Resolved, *evidence.Install) {}

func (npmResolver) localKind() string { return "tarball" }
