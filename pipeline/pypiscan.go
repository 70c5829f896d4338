package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/verifymcp/verifymcp/pkgspec"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/supplychain"
)

// resolvePyPI resolves a pypi target on the index: a specifier (or none)
// to one exact release, as uv and pip choose it (see
// supplychain.(*PyPI).Resolve).
func (p *Pipeline) resolvePyPI(ctx context.Context, t Target) (*Resolved, error) {
	if p.cfg.PyPI == nil {
		return nil, fmt.Errorf("%w: %s is a PyPI target, and no Python package index is configured", ErrUnsupported, t.Raw)
	}
	start := time.Now()
	if p.cfg.Logger != nil {
		p.cfg.Logger.Info("resolving", "target", t.Raw, "index", p.cfg.PyPI.Index())
	}
	rel, err := p.cfg.PyPI.Resolve(ctx, t.Name, t.Spec)
	if err != nil {
		if errors.Is(err, supplychain.ErrBadRequirement) {
			return nil, fmt.Errorf("%w: %w", ErrBadTarget, err)
		}
		return nil, err
	}
	if p.cfg.Logger != nil && rel.Version != t.Spec {
		p.cfg.Logger.Info("resolved", "requested", pypiSpecText(t.Spec), "version", rel.Version)
	}
	fetched := time.Now().UTC()
	return &Resolved{Target: t, Name: rel.Name, Version: rel.Version, Source: "registry", Published: rel.Published,
		Registry: p.cfg.PyPI.Index(), pypi: rel, resolvedAt: fetched,
		registrySig: evidence.Signal{State: evidence.StateObserved, ThirdParty: true, DurationMS: time.Since(start).Milliseconds(),
			Endpoint: p.cfg.PyPI.Index(), FetchedAt: &fetched}}, nil
}

func pypiSpecText(spec string) string {
	if spec == "" {
		return "latest"
	}
	return spec
}

// pypiMeta reduces the release's JSON API document to registry metadata,
// with its signal. An index that serves no document for this release (a
// mirror that keeps only the project document, which describes the latest
// release) leaves the metadata unavailable, never guessed from another
// release.
func (p *Pipeline) pypiMeta(ctx context.Context, rt *Resolved) (*evidence.RegistryMeta, evidence.Signal) {
	at := rt.resolvedAt
	m, err := supplychain.PyPIMetadata(rt.pypi.Document, rt.pypi.Version)
	if err == nil && p.cfg.PyPI != nil {
		// Trusted-publishing provenance (PEP 740) where the index serves
		// its Integrity API; a mirror that does not leaves it unserved.
		pctx, cancel := context.WithTimeout(ctx, p.timeout())
		provs, perr := p.cfg.PyPI.ReleaseProvenance(pctx, rt.pypi)
		cancel()
		if perr == nil {
			supplychain.ApplyPyPIProvenance(m, provs)
		} else if p.cfg.Logger != nil {
			p.cfg.Logger.Debug("PyPI provenance not available", "err", perr)
		}
	}
	switch {
	case errors.Is(err, supplychain.ErrVersionNotFound):
		return nil, evidence.Signal{State: evidence.StateUnavailable, ThirdParty: true, Endpoint: rt.Registry, FetchedAt: &at,
			Reason: "the index serves no JSON document for this release (/pypi/" + rt.Name + "/" + rt.Version + "/json): " + err.Error()}
	case err != nil:
		return nil, evidence.Signal{State: evidence.StateError, Reason: err.Error(), ThirdParty: true}
	}
	return m, evidence.Signal{State: evidence.StateObserved, ThirdParty: true, Endpoint: rt.Registry, FetchedAt: &at}
}

// Artefact reports whether integrity (an SRI digest a stored run
// recorded) is of the artefact r resolved to: its integrity, or, for a
// PyPI release resolved on the index, any of its files'.
func (r *Resolved) Artefact(integrity string) bool {
	if integrity == "" {
		return false
	}
	if r.Integrity != "" {
		return integrity == r.Integrity
	}
	return slices.Contains(r.FileIntegrities(), integrity)
}

// FileIntegrities returns, for a PyPI release resolved on the index, the
// SRI digests of its files (nil otherwise): the fetch step takes one of
// them, so a stored run of any is a run of this release.
func (r *Resolved) FileIntegrities() []string {
	if r == nil || r.pypi == nil {
		return nil
	}
	var out []string
	for _, f := range r.pypi.Files {
		if sri := sriFromHex(f.SHA256); sri != "" {
			out = append(out, sri)
		}
	}
	return out
}

// pypiSandboxTarget is what the sandbox installs for a PyPI target.
func pypiSandboxTarget(rt *Resolved) sandbox.Target {
	st := sandbox.Target{Ecosystem: "pypi", Name: rt.Name, Version: rt.Version, Integrity: rt.Integrity, Tarball: rt.data, Filename: rt.filename}
	if rt.pypi != nil {
		st.PyPIFiles = map[string]string{}
		for _, f := range rt.pypi.Files {
			st.PyPIFiles[f.Filename] = f.SHA256
		}
		st.RequiresPython = releaseRequiresPython(rt.pypi.Files)
	}
	return st
}

// pypiFileURL is the index URL of the release file whose sha256 (as SRI)
// the fetch step computed.
func pypiFileURL(rt *Resolved, sri string) string {
	if rt.pypi == nil || sri == "" {
		return ""
	}
	for _, f := range rt.pypi.Files {
		if sriFromHex(f.SHA256) == sri {
			return f.URL
		}
	}
	return ""
}

// sriFromHex writes a hex sha256 as an SRI string ("" when it is not one).
func sriFromHex(h string) string {
	sum, err := hex.DecodeString(h)
	if err != nil || len(sum) != sha256.Size {
		return ""
	}
	return "sha256-" + base64.StdEncoding.EncodeToString(sum)
}

// resolvePyPIFile reads a local wheel or sdist: its name and version from
// its metadata, its sha256, its bytes for the sandbox.
func resolvePyPIFile(t Target) (*Resolved, error) {
	d, err := readLocalDist(t.File)
	if err != nil {
		return nil, err
	}
	return &Resolved{Target: t, Name: pkgspec.NormalizePyPIName(d.name), Version: d.version, Integrity: sriFromHex(d.sha256),
		Source: "file", data: d.data, filename: filepath.Base(t.File),
		registrySig: evidence.Signal{State: evidence.StateNotAssessed, Reason: "local " + d.kind + ": no registry metadata"}}, nil
}

// releaseRequiresPython is the Requires-Python of a release as the index
// lists it per file: that of its first wheel that declares one, else of
// any file ("" when none does). The files of a release carry the same
// metadata but for rare uploads; the fetch step prefers a wheel.
func releaseRequiresPython(files []supplychain.PyPIFile) string {
	any := ""
	for _, f := range files {
		if rp := strings.TrimSpace(f.RequiresPython); rp != "" {
			if f.PackageType == "bdist_wheel" {
				return rp
			}
			if any == "" {
				any = rp
			}
		}
	}
	return any
}

// pypiResolver is the pipeline's part of the PyPI ecosystem (see
// resolver).
type pypiResolver struct{}

// resolve resolves a PyPI target on the index, or reads a local wheel or
// sdist.
func (pypiResolver) resolve(ctx context.Context, p *Pipeline, t Target) (*Resolved, error) {
	if t.File != "" {
		return resolvePyPIFile(t)
	}
	return p.resolvePyPI(ctx, t)
}

// resolveRegistryPyPI resolves the PyPI package a registry entry names
// (pkg, exactly its version when it states one) on the configured index;
// the release's description carries the mcp-name marker that claims the
// entry's name, as the registry checks it.
func (pypiResolver) resolveEntry(ctx context.Context, p *Pipeline, t Target, srv *supplychain.RegistryServer, pkg supplychain.RegistryPackage, notes []string) (*Resolved, error) {
	if p.cfg.PyPI != nil && pkg.RegistryBaseURL != "" && strings.TrimSuffix(pkg.RegistryBaseURL, "/") != strings.TrimSuffix(p.cfg.PyPI.Index(), "/") {
		notes = append(notes, "the entry names the package index "+pkg.RegistryBaseURL+"; the package was resolved on "+p.cfg.PyPI.Index())
	}
	req := pkg.Identifier
	if pkg.Version != "" {
		req += "==" + pkg.Version
	}
	py, err := Target{Raw: t.Raw}.withPackage(pkgspec.ParseRequirement(t.Raw, "pypi", req))
	if err != nil {
		return nil, fmt.Errorf("MCP registry entry %s@%s names pypi:%s: %w", srv.Name, srv.Version, req, err)
	}
	rt, err := p.Resolve(ctx, py)
	if err != nil {
		return nil, fmt.Errorf("MCP registry entry %s@%s names pypi:%s: %w", srv.Name, srv.Version, req, err)
	}
	entry := &evidence.MCPRegistryEntry{Name: srv.Name, Version: srv.Version, Registry: p.cfg.MCPRegistry.Base(), Status: srv.Status,
		Package: "pypi:" + rt.Name + "@" + rt.Version, Notes: notes, Unfixed: pkg.Unfixed}
	if rt.pypi != nil {
		if m, err := supplychain.PyPIMetadata(rt.pypi.Document, rt.pypi.Version); err == nil {
			entry.MCPName = m.MCPName
		} else {
			entry.Notes = append(entry.Notes, evidence.NoteMCPNameUnknown+": "+err.Error())
		}
	}
	return registryResolved(rt, entry, srv.Name, pkg), nil
}

func (pypiResolver) sandboxTarget(rt *Resolved) sandbox.Target { return pypiSandboxTarget(rt) }

// installed records the artefact: the file the fetch step chose (a wheel
// when one fits, else the sdist), known only once it ran.
func (pypiResolver) installed(b *evidence.Bundle, rt *Resolved, in *evidence.Install) {
	if in != nil && rt.pypi != nil {
		b.Target.Integrity = in.Integrity.Expected
		b.Target.Tarball = pypiFileURL(rt, in.Integrity.Expected)
	}
}

func (pypiResolver) localKind() string { return "distribution file" }
