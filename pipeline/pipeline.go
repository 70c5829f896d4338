package pipeline

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/supplychain"
)

// ErrSandbox wraps failures of the sandbox infrastructure (the engine),
// as opposed to failures of the package, which are evidence.
var ErrSandbox = errors.New("sandbox failure")

// Scanner is the sandbox as the pipeline uses it.
type Scanner interface {
	Scan(ctx context.Context, runID string, t sandbox.Target) (*sandbox.Result, error)
}

// Resolver resolves a name and spec to one exact registry version.
type Resolver interface {
	Resolve(ctx context.Context, name, spec string) (*supplychain.Version, error)
	Registry() string
}

// SandboxInfo describes the engine and image a Scanner uses, for the record.
type SandboxInfo struct {
	Image         string
	ImageDigest   string
	EngineVersion string
	APIVersion    string
	Limits        evidence.Limits
	CABundle      string // sha256 of the trusted CA bundle, or ""
}

// Pipeline scans targets. Its fields are set by the CLI.
type Pipeline struct {
	Scanner     Scanner
	Resolver    Resolver
	Sandbox     SandboxInfo
	ToolVersion string
	Logger      *slog.Logger
	// Supply holds the third-party clients (OSV, Socket, GitHub, DNSSEC).
	Supply Supply
	// Judge is the LLM judge (nil: not configured); RubricVersion the
	// rubric in force, part of every judgment's cache key.
	Judge         Judger
	RubricVersion string
	// Rubric scores what Run collects (nil: the rubric in force).
	Rubric *rubric.Rubric
	// Behavior says whether the Scanner was asked to watch behaviour; a
	// Scanner that watched returns the evidence either way.
	Behavior bool
	// Now returns the run date; tests fix it.
	Now func() time.Time
	// MCPRegistry resolves targets named by their MCP registry name (nil:
	// such targets are refused).
	MCPRegistry *supplychain.MCPRegistry
	// PyPI resolves pypi targets on the Python package index (nil: such
	// targets are refused).
	PyPI *supplychain.PyPI
	// Pins keeps the pins of server identities (nil: no run store, and
	// the drift signal is not assessed).
	Pins Pins
	// Secrets are the operator's third-party credentials (Socket, GitHub,
	// the judge). They never enter a container; the sandbox masks them,
	// like the --env values, in everything a scan returns.
	Secrets []sandbox.Secret
}

// Options are the per-scan inputs beyond the target.
type Options struct {
	// RunID, when set, is the run's id (see NewRunID); the caller may have
	// prepared the sandbox for it.
	RunID string
	Bin   string
	Args  []string
	Env   map[string]string
}

// Scanned is the outcome of one scan: the bundle, its stored JSON form, and
// the lockfile kept beside it.
type Scanned struct {
	Bundle     *evidence.Bundle
	BundleJSON []byte
	Lockfile   []byte
}

// NewRunID returns a sortable, unique run id usable in engine object names.
func NewRunID(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102t150405z") + "-" + hex.EncodeToString(b[:])
}

// Resolved is a target resolved to one exact artefact, ready to scan.
type Resolved struct {
	Target Target
	// Name, Version and Integrity identify the exact artefact.
	Name, Version, Integrity string
	// Source is "registry" or "file".
	Source      string
	Tarball     string
	Published   *time.Time
	Registry    string
	data        []byte
	manifest    []byte // package.json of a local tarball
	registrySig evidence.Signal
	version     *supplychain.Version
	resolvedAt  time.Time
	// mcpRegistry is the registry entry a target named by its MCP registry
	// name resolved through, and its package's arguments and environment.
	mcpRegistry *evidence.MCPRegistryEntry
	// RegistryArgs and RegistryEnv are the package arguments and the
	// environment names the registry entry declares: a scan uses them
	// when the operator gives none.
	RegistryArgs []string
	RegistryEnv  []string
	// pypi is the resolved PyPI release (registry targets); filename the
	// file name of a local wheel or sdist.
	pypi     *supplychain.PyPIRelease
	filename string
}

// Resolve turns a parsed target into one exact artefact: a registry lookup
// for npm targets, a read of package.json for a local tarball. It runs
// before anything touches the engine, so a typo fails fast.
func (p *Pipeline) Resolve(ctx context.Context, t Target) (*Resolved, error) {
	start := time.Now()
	if t.Ecosystem == "pypi" {
		if t.File != "" {
			return resolvePyPIFile(t)
		}
		return p.resolvePyPI(ctx, t)
	}
	if t.File != "" {
		tb, err := readTarball(t.File)
		if err != nil {
			return nil, err
		}
		return &Resolved{Target: t, Name: tb.name, Version: tb.version, Integrity: tb.integrity, Source: "file", data: tb.data, manifest: tb.manifest,
			registrySig: evidence.Signal{State: evidence.StateNotAssessed, Reason: "local tarball: no registry metadata"}}, nil
	}
	if t.MCPRegistryName != "" {
		return p.resolveRegistryName(ctx, t)
	}
	if p.Logger != nil {
		p.Logger.Info("resolving", "target", t.Raw, "registry", p.Resolver.Registry())
	}
	v, err := p.Resolver.Resolve(ctx, t.Name, t.Spec)
	if err != nil {
		return nil, err
	}
	if p.Logger != nil && v.Version != t.Spec {
		p.Logger.Info("resolved", "requested", t.Spec, "version", v.Version)
	}
	fetched := time.Now().UTC()
	return &Resolved{Target: t, Name: v.Name, Version: v.Version, Integrity: v.Integrity, Source: "registry",
		Tarball: v.Tarball, Published: v.Published, Registry: p.Resolver.Registry(), version: v, resolvedAt: fetched,
		registrySig: evidence.Signal{State: evidence.StateObserved, ThirdParty: true, DurationMS: time.Since(start).Milliseconds(),
			Endpoint: p.Resolver.Registry(), FetchedAt: &fetched}}, nil
}

// resolveRegistryName asks the MCP registry for the server.json of t's
// name and version, takes its npm (else PyPI) stdio package and resolves
// that exact package; the entry, its arguments and its environment names
// go with the result.
func (p *Pipeline) resolveRegistryName(ctx context.Context, t Target) (*Resolved, error) {
	if p.MCPRegistry == nil {
		return nil, fmt.Errorf("%w: %s is an MCP registry name, and no MCP registry is configured", ErrUnsupported, t.MCPRegistryName)
	}
	if p.Logger != nil {
		p.Logger.Info("resolving", "target", t.Raw, "mcp_registry", p.MCPRegistry.Base())
	}
	srv, err := p.MCPRegistry.Server(ctx, t.MCPRegistryName, t.Spec)
	if err != nil {
		return nil, err
	}
	pkg, notes, err := srv.Choose()
	if err != nil {
		return nil, err
	}
	if pkg.RegistryType == "pypi" {
		return p.resolveRegistryPyPI(ctx, t, srv, pkg, notes)
	}
	if pkg.RegistryBaseURL != "" && strings.TrimSuffix(pkg.RegistryBaseURL, "/") != strings.TrimSuffix(p.Resolver.Registry(), "/") {
		notes = append(notes, "the entry names the npm registry "+pkg.RegistryBaseURL+"; the package was resolved on "+p.Resolver.Registry())
	}
	npm := Target{Raw: t.Raw, Ecosystem: "npm", Name: pkg.Identifier, Spec: pkg.Version}
	if npm.Spec == "" {
		npm.Spec = "latest"
	}
	rt, err := p.Resolve(ctx, npm)
	if err != nil {
		return nil, fmt.Errorf("MCP registry entry %s@%s names npm:%s@%s: %w", srv.Name, srv.Version, pkg.Identifier, npm.Spec, err)
	}
	entry := &evidence.MCPRegistryEntry{Name: srv.Name, Version: srv.Version, Registry: p.MCPRegistry.Base(), Status: srv.Status,
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

// resolveRegistryPyPI resolves the PyPI package a registry entry names
// (pkg, exactly its version when it states one) on the configured index;
// the release's description carries the mcp-name marker that claims the
// entry's name, as the registry checks it.
func (p *Pipeline) resolveRegistryPyPI(ctx context.Context, t Target, srv *supplychain.RegistryServer, pkg supplychain.RegistryPackage, notes []string) (*Resolved, error) {
	if p.PyPI != nil && pkg.RegistryBaseURL != "" && strings.TrimSuffix(pkg.RegistryBaseURL, "/") != strings.TrimSuffix(p.PyPI.Index(), "/") {
		notes = append(notes, "the entry names the package index "+pkg.RegistryBaseURL+"; the package was resolved on "+p.PyPI.Index())
	}
	req := pkg.Identifier
	if pkg.Version != "" {
		req += "==" + pkg.Version
	}
	py, err := parsePyPIRequirement(Target{Raw: t.Raw}, "pypi", req)
	if err != nil {
		return nil, fmt.Errorf("MCP registry entry %s@%s names pypi:%s: %w", srv.Name, srv.Version, req, err)
	}
	rt, err := p.Resolve(ctx, py)
	if err != nil {
		return nil, fmt.Errorf("MCP registry entry %s@%s names pypi:%s: %w", srv.Name, srv.Version, req, err)
	}
	entry := &evidence.MCPRegistryEntry{Name: srv.Name, Version: srv.Version, Registry: p.MCPRegistry.Base(), Status: srv.Status,
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

// registryResolved attaches a registry entry, and the arguments and
// environment names its package declares, to the resolved package.
func registryResolved(rt *Resolved, entry *evidence.MCPRegistryEntry, name string, pkg supplychain.RegistryPackage) *Resolved {
	entry.MCPNameMatches = entry.MCPName == name
	rt.mcpRegistry = entry
	rt.RegistryArgs = append([]string{}, pkg.PackageArgs...)
	rt.RegistryEnv = pkg.EnvNames
	return rt
}

// ResolveLater starts resolving t (see Resolve) and returns what waits
// for the answer; it may be called any number of times. Resolution then
// runs while the caller opens the store, the caches and the engine.
func (p *Pipeline) ResolveLater(ctx context.Context, t Target) func() (*Resolved, error) {
	type resolution struct {
		rt  *Resolved
		err error
	}
	c := make(chan resolution, 1)
	go func() {
		rt, err := p.Resolve(ctx, t)
		c <- resolution{rt, err}
	}()
	return sync.OnceValues(func() (*Resolved, error) {
		r := <-c
		return r.rt, r.err
	})
}

// ecosystemOf names the ecosystem of a resolved target.
func ecosystemOf(rt *Resolved) string {
	if rt.Target.Ecosystem == "pypi" {
		return "pypi"
	}
	return "npm"
}

// localKind names a local target's file for messages.
func localKind(rt *Resolved) string {
	if rt.Target.Ecosystem == "pypi" {
		return "distribution file"
	}
	return "tarball"
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func envNames(env map[string]string) []string {
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
