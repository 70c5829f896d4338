package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/verifymcp/verifymcp/ecosystem"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/supplychain"
)

// ShippedEcosystem is the pipeline's part of an ecosystem whose releases
// run as shipped: a container image, an MCPB bundle. The sandbox installs
// nothing for them; the release's Shipped prepares it on the engine. Each
// lives in its ecosystem's own folder and is registered in resolvers; the
// pipeline asks it to read targets before its own grammar does.
type ShippedEcosystem interface {
	// Name is the ecosystem's name, as ecosystem.Of knows it.
	Name() string
	// Parse reads raw when it is a target of the ecosystem: ok is false
	// when it is not one; err (wrapping ErrBadTarget's pkgspec.ErrBadTarget)
	// when it is, malformed. ref is what Resolve takes (the target itself,
	// or a form of it the ecosystem prefers), with a local path in it made
	// absolute: a ref names the same release from any directory (a fleet
	// worker's, a stored run's).
	Parse(raw string) (ref string, ok bool, err error)
	// Resolve resolves ref to one release as far as can be before the
	// engine is used: a bundle file is read and checked, an image
	// reference is read. Errors about the target wrap pkgspec.ErrBadTarget.
	Resolve(ctx context.Context, ref string) (*sandbox.Release, error)
	// Entry is the target an MCP registry package of the ecosystem names,
	// in the form Parse reads and Resolve takes, and what the entry says
	// that the scan should note.
	Entry(pkg supplychain.RegistryPackage) (ref string, notes []string, err error)
}

// shippedResolver is the resolver of a ShippedEcosystem.
type shippedResolver struct{ e ShippedEcosystem }

func (r shippedResolver) resolve(ctx context.Context, p *Pipeline, t Target) (*Resolved, error) {
	if p.cfg.Logger != nil {
		p.cfg.Logger.Info("resolving", "target", t.Raw)
	}
	rel, err := r.e.Resolve(ctx, t.Name)
	if err != nil {
		return nil, err
	}
	return &Resolved{Target: t, Name: rel.Name, Version: rel.Version, Integrity: rel.Integrity, Source: rel.Source, Registry: rel.Registry,
		release: rel, resolvedAt: time.Now().UTC(),
		registrySig: evidence.Signal{State: evidence.StateNotAssessed, Reason: "a shipped " + rel.Kind + " is resolved when the sandbox prepares it"}}, nil
}

func (r shippedResolver) resolveEntry(ctx context.Context, p *Pipeline, t Target, srv *supplychain.RegistryServer, pkg supplychain.RegistryPackage, notes []string) (*Resolved, error) {
	ref, more, err := r.e.Entry(pkg)
	if err != nil {
		return nil, fmt.Errorf("MCP registry entry %s@%s: %w", srv.Name, srv.Version, err)
	}
	rt, err := r.resolve(ctx, p, Target{Raw: t.Raw, Ecosystem: r.e.Name(), Name: ref})
	if err != nil {
		return nil, fmt.Errorf("MCP registry entry %s@%s names %s %s: %w", srv.Name, srv.Version, r.e.Name(), ref, err)
	}
	entry := &evidence.MCPRegistryEntry{Name: srv.Name, Version: srv.Version, Registry: p.cfg.MCPRegistry.Base(), Status: srv.Status,
		Package: ref, Notes: append(notes, more...), Unfixed: pkg.Unfixed}
	return registryResolved(rt, entry, srv.Name, pkg), nil
}

func (shippedResolver) sandboxTarget(rt *Resolved) sandbox.Target {
	return sandbox.Target{Name: rt.Name, Version: rt.Version, Shipped: rt.release.Shipped}
}

// installed: what preparing a release found is the sandbox's result,
// recorded by recordShipped for every shipped ecosystem.
func (shippedResolver) installed(b *evidence.Bundle, _ *Resolved, _ *evidence.Install) {}

func (r shippedResolver) localKind() string { return r.e.Name() + " release" }

// RefPinner is a ShippedEcosystem that can write a ref pinned to the
// digest its release was resolved to (a bundle's file digest), so that a
// job scanned later, elsewhere, scans that release or fails.
type RefPinner interface {
	PinRef(ref, digest string) string
}

// QueueTarget is the target a queue job names for rt when it runs as
// shipped: its ecosystem's ref (local paths absolute, see Parse), pinned
// to its digest where the ecosystem can (RefPinner); ok is false for a
// package.
func QueueTarget(rt *Resolved) (string, bool) {
	if rt == nil || rt.release == nil {
		return "", false
	}
	ref := rt.Target.Name
	if e, _ := shippedOf(rt.Target.Ecosystem); e != nil {
		if p, ok := e.(RefPinner); ok && rt.Integrity != "" {
			ref = p.PinRef(ref, rt.Integrity)
		}
	}
	return ref, true
}

// Shipped reports whether eco names an ecosystem whose releases run as
// shipped (images, bundles): stored under the name and version the
// ecosystem resolved, not the target as written.
func Shipped(eco string) bool {
	_, ok := shippedOf(eco)
	return ok
}

// shippedOf is the shipped ecosystem named eco, when eco is one.
func shippedOf(eco string) (ShippedEcosystem, bool) {
	for _, r := range resolvers {
		if sr, ok := r.(shippedResolver); ok && sr.e.Name() == eco {
			return sr.e, true
		}
	}
	return nil, false
}

// shippedTarget is the target of raw when a shipped ecosystem reads it.
func shippedTarget(t Target, raw string) (Target, bool, error) {
	for _, r := range resolvers {
		sr, ok := r.(shippedResolver)
		if !ok {
			continue
		}
		ref, ok, err := sr.e.Parse(raw)
		if err != nil {
			return t, true, err
		}
		if ok {
			t.Ecosystem, t.Name = sr.e.Name(), ref
			return t, true, nil
		}
	}
	return t, false, nil
}

// recordShipped records in b what the sandbox found preparing a shipped
// release (res.Shipped), and the release's identity it fixed: an image
// named by tag is the digest the engine resolved.
func recordShipped(b *evidence.Bundle, sh *evidence.Shipped) {
	if sh == nil {
		return
	}
	b.Shipped = sh
	if entry := b.Target.MCPRegistry; entry != nil && sh.MCPName != "" {
		// The release's own claim to the registry name (an image's
		// ownership label), as a package's mcpName is.
		entry.MCPName, entry.MCPNameMatches = sh.MCPName, sh.MCPName == entry.Name
	}
	if b.Target.Integrity == "" {
		b.Target.Integrity = sh.Digest
	}
	e := ecosystem.MustOf(b.Target.Ecosystem)
	if _, exact := e.Exact(b.Target.Version); !exact && sh.Digest != "" {
		b.Target.Purl = e.Purl(b.Target.Name, sh.Digest)
	}
}

// errShipped is the error of a release the sandbox could not prepare: a
// target error, since the release is what is wrong.
func errShipped(err error) error {
	if errors.Is(err, sandbox.ErrShipped) {
		return fmt.Errorf("%w: %w", ErrBadTarget, err)
	}
	return err
}
