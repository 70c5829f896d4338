package pipeline

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sort"
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

// SandboxInfo describes the engine, image and options a Scanner uses,
// for the record.
type SandboxInfo struct {
	Image         string
	ImageDigest   string
	EngineVersion string
	APIVersion    string
	Limits        evidence.Limits
	CABundle      string // sha256 of the trusted CA bundle, or ""
	// Behavior says whether the Scanner was asked to watch behaviour; a
	// Scanner that watched returns the evidence either way.
	Behavior bool
}

// Config is what a Pipeline is made of (see New). Only Rubric is
// required; a scan also needs a Scanner, which PrepareSandbox sets.
type Config struct {
	// Scanner is the sandbox (nil: none yet; PrepareSandbox sets it, and
	// a scan without one fails). Sandbox describes it: set it only with
	// a Scanner.
	Scanner Scanner
	Sandbox SandboxInfo
	// Resolver resolves npm targets on the registry.
	Resolver    Resolver
	ToolVersion string
	Logger      *slog.Logger
	// Supply holds the third-party clients (OSV, Socket, GitHub, DNSSEC).
	Supply Supply
	// Judge is the LLM judge (nil: not configured).
	Judge Judger
	// Rubric scores what Run collects; its version is part of every
	// judgment's cache key. Required.
	Rubric *rubric.Rubric
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

// Pipeline scans targets. New makes one from a Config.
type Pipeline struct {
	cfg Config
}

// ErrNoScanner is a scan asked of a pipeline whose sandbox was not
// prepared (see PrepareSandbox).
var ErrNoScanner = errors.New("pipeline: no scanner: the sandbox was not prepared (see PrepareSandbox)")

// New checks c and returns the pipeline it describes.
func New(c Config) (*Pipeline, error) {
	if c.Rubric == nil {
		return nil, errors.New("pipeline: no rubric (Config.Rubric scores the runs and keys the judgments)")
	}
	if c.Scanner == nil && c.Sandbox != (SandboxInfo{}) {
		return nil, errors.New("pipeline: a sandbox is described (Config.Sandbox) but there is no Scanner")
	}
	return &Pipeline{cfg: c}, nil
}

// Resolver is the npm registry client p resolves npm targets with.
func (p *Pipeline) Resolver() Resolver { return p.cfg.Resolver }

// Scanner is p's sandbox (nil: not prepared).
func (p *Pipeline) Scanner() Scanner { return p.cfg.Scanner }

// PyPI is the Python package index client p resolves pypi targets with
// (nil: none).
func (p *Pipeline) PyPI() *supplychain.PyPI { return p.cfg.PyPI }

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
	// release is the resolved release of a shipped ecosystem (an image, a
	// bundle; see shipped.go).
	release *sandbox.Release
}

// Resolve turns a parsed target into one exact artefact: a registry lookup
// for npm targets, a read of package.json for a local tarball. It runs
// before anything touches the engine, so a typo fails fast.
func (p *Pipeline) Resolve(ctx context.Context, t Target) (*Resolved, error) {
	if t.MCPRegistryName != "" {
		return p.resolveRegistryName(ctx, t)
	}
	return resolverOf(t.Ecosystem).resolve(ctx, p, t)
}

// resolveRegistryName asks the MCP registry for the server.json of t's
// name and version, takes its npm (else PyPI) stdio package and resolves
// that exact package; the entry, its arguments and its environment names
// go with the result.
func (p *Pipeline) resolveRegistryName(ctx context.Context, t Target) (*Resolved, error) {
	if p.cfg.MCPRegistry == nil {
		return nil, fmt.Errorf("%w: %s is an MCP registry name, and no MCP registry is configured", ErrUnsupported, t.MCPRegistryName)
	}
	if p.cfg.Logger != nil {
		p.cfg.Logger.Info("resolving", "target", t.Raw, "mcp_registry", p.cfg.MCPRegistry.Base())
	}
	srv, err := p.cfg.MCPRegistry.Server(ctx, t.MCPRegistryName, t.Spec)
	if err != nil {
		return nil, err
	}
	pkg, notes, err := srv.Choose()
	if err != nil {
		return nil, err
	}
	return resolverOf(pkg.RegistryType).resolveEntry(ctx, p, t, srv, pkg, notes)
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
