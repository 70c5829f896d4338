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

// Scan runs a resolved target in the sandbox and returns the evidence.
// Errors are returned only when there is nothing to report: bad input or an
// engine that failed us; everything the package does is evidence.
func (p *Pipeline) Scan(ctx context.Context, rt *Resolved, o Options) (*Scanned, error) {
	b := p.newBundle(rt, o)
	// Registry metadata comes from the document the resolution fetched; the
	// GitHub lookup needs nothing else, so it runs alongside the sandbox.
	meta := p.registryMeta(ctx, rt, b)
	lookups := p.startLookups(ctx, rt, meta)

	st := p.sandboxTarget(rt, o, b)
	early := p.earlyCollection(ctx, b)
	defer early.cancel()
	st.Hooks = early.hooks()

	started := time.Now()
	res, err := p.runSandbox(ctx, rt, b.Run.ID, st)
	if err != nil {
		return nil, err
	}
	recordSandbox(b, rt, res, started)
	p.classify(b, res)
	// The judge needs only the contract, the tree scans only the lockfile:
	// both started as soon as the sandbox had them, unless it never said.
	judgeC := early.judgeFor(b.Contract)
	early.treeFor(res.Lockfile, b.Sandbox.Outcome).apply(b)
	lookups.apply(b)
	j := <-judgeC
	b.Judge, b.Signals[evidence.SignalJudge] = j.r, j.sig
	if err := p.drift(ctx, b); err != nil {
		return nil, err
	}
	return seal(b, res.Lockfile)
}

// newBundle starts the evidence bundle of a scan of rt: the run, the
// sandbox's configuration, the target as resolved and the registry
// signal.
func (p *Pipeline) newBundle(rt *Resolved, o Options) *evidence.Bundle {
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	date := now().UTC()
	b := &evidence.Bundle{
		SchemaVersion: evidence.SchemaVersion,
		Run:           evidence.Run{ID: o.RunID, Date: date, Tool: evidence.Tool{Name: "verifymcp", Version: p.ToolVersion}},
		Signals:       map[string]evidence.Signal{evidence.SignalRegistry: rt.registrySig},
		Sandbox: evidence.Sandbox{
			Image: p.Sandbox.Image, ImageDigest: p.Sandbox.ImageDigest,
			EngineVersion: p.Sandbox.EngineVersion, APIVersion: p.Sandbox.APIVersion,
			Limits: p.Sandbox.Limits, CABundle: p.Sandbox.CABundle,
		},
		Target: evidence.Target{
			Ecosystem: ecosystemOf(rt), Requested: rt.Target.Raw, Args: nonNil(o.Args), EnvNames: envNames(o.Env),
			Name: rt.Name, Version: rt.Version, Integrity: rt.Integrity, Source: rt.Source,
			Tarball: rt.Tarball, PublishedAt: rt.Published, Registry: rt.Registry, MCPRegistry: rt.mcpRegistry,
		},
	}
	if b.Run.ID == "" {
		b.Run.ID = NewRunID(date)
	}
	return b
}

// registryMeta reads the registry metadata of rt from the document its
// resolution fetched, records its signal in b (and the metadata, when
// there is some) and returns it; nil when there is none.
func (p *Pipeline) registryMeta(ctx context.Context, rt *Resolved, b *evidence.Bundle) *evidence.RegistryMeta {
	var meta *evidence.RegistryMeta
	switch {
	case rt.pypi != nil:
		var sig evidence.Signal
		meta, sig = p.pypiMeta(ctx, rt)
		b.Signals[evidence.SignalRegistryMeta] = sig
		if meta != nil {
			b.Supply = &evidence.Supply{Registry: meta}
		}
	case rt.version == nil:
		b.Signals[evidence.SignalRegistryMeta] = evidence.Signal{State: evidence.StateNotAssessed, Reason: "local " + localKind(rt) + ": no registry metadata"}
	default:
		m, err := supplychain.NPMMetadata(rt.version)
		if err != nil {
			b.Signals[evidence.SignalRegistryMeta] = evidence.Signal{State: evidence.StateError, Reason: err.Error(), ThirdParty: true}
		} else {
			meta = m
			at := rt.resolvedAt
			b.Signals[evidence.SignalRegistryMeta] = evidence.Signal{State: evidence.StateObserved, ThirdParty: true, Endpoint: rt.Registry, FetchedAt: &at}
			b.Supply = &evidence.Supply{Registry: meta}
		}
	}
	return meta
}

// supplyLookups are the third-party lookups that run alongside the
// sandbox; each call waits for its answer.
type supplyLookups struct {
	github  func() (*evidence.GitHubResult, evidence.Signal)
	dnssec  func() (*evidence.DNSSECResult, evidence.Signal)
	mcpName func() (*evidence.MCPNameCheck, evidence.Signal)
}

// startLookups starts the GitHub, DNSSEC and MCP-name lookups of rt,
// which need only its registry metadata, meta.
func (p *Pipeline) startLookups(ctx context.Context, rt *Resolved, meta *evidence.RegistryMeta) supplyLookups {
	github := p.githubRepo(ctx, meta)
	domains := p.dnssecDomains(ctx, rt, meta)
	mcpName := p.mcpNameCheck(ctx, rt, meta)
	return supplyLookups{github: github, dnssec: domains, mcpName: mcpName}
}

// apply waits for each lookup in turn and records its signal, and its
// result when there is one, in b.
func (l supplyLookups) apply(b *evidence.Bundle) {
	gh, ghSig := l.github()
	b.Signals[evidence.SignalGitHub] = ghSig
	if gh != nil {
		supplyOf(b).GitHub = gh
	}
	dv, dvSig := l.dnssec()
	b.Signals[evidence.SignalDNSSEC] = dvSig
	if dv != nil {
		supplyOf(b).DNSSEC = dv
	}
	mn, mnSig := l.mcpName()
	b.Signals[evidence.SignalMCPRegistry] = mnSig
	if mn != nil {
		supplyOf(b).MCPRegistry = mn
	}
}

// supplyOf returns b's supply-chain evidence, made when b has none yet.
func supplyOf(b *evidence.Bundle) *evidence.Supply {
	if b.Supply == nil {
		b.Supply = &evidence.Supply{}
	}
	return b.Supply
}

// sandboxTarget is what the sandbox installs and runs for rt with the
// options o; it records the target's purl in b.
func (p *Pipeline) sandboxTarget(rt *Resolved, o Options, b *evidence.Bundle) sandbox.Target {
	st := sandbox.Target{Name: rt.Name, Version: rt.Version, Integrity: rt.Integrity, Tarball: rt.data}
	b.Target.Purl = Purl(b.Target.Name, b.Target.Version)
	if b.Target.Ecosystem == "pypi" {
		st = pypiSandboxTarget(rt)
		b.Target.Purl = supplychain.PyPIPurl(b.Target.Name, b.Target.Version)
	}
	st.Bin, st.Args, st.Env, st.Secrets = o.Bin, o.Args, o.Env, p.Secrets
	return st
}

// runSandbox installs, starts and lists st in the sandbox under the run id
// runID. Its error is for a bad bin, a cancelled scan or an engine or
// environment that failed: then there is no evidence about the package.
func (p *Pipeline) runSandbox(ctx context.Context, rt *Resolved, runID string, st sandbox.Target) (*sandbox.Result, error) {
	res, err := p.Scanner.Scan(ctx, runID, st)
	if err != nil {
		var env *sandbox.EnvironmentError
		switch {
		case errors.Is(err, sandbox.ErrBadBin) || ctx.Err() != nil:
			return nil, err
		case errors.As(err, &env):
			// The environment failed, not the package: there is no
			// evidence about it, so there is no bundle to save.
			return nil, fmt.Errorf("install %s@%s: %w", rt.Name, rt.Version, err)
		}
		return nil, fmt.Errorf("%w: %w", ErrSandbox, err)
	}
	return res, nil
}

// recordSandbox records in b what the sandbox reported for rt (res): the
// outcome, the install, session, contract (with the contract checks'
// findings) and masking, and the install signal; started is when the
// sandbox was started.
func recordSandbox(b *evidence.Bundle, rt *Resolved, res *sandbox.Result, started time.Time) {
	b.Sandbox.Outcome = res.Outcome
	if res.Image != nil {
		// A PyPI target ran on another Python's image (sandbox/pyinterp.go).
		b.Sandbox.Image, b.Sandbox.ImageDigest = res.Image.Ref, res.Image.ID
	}
	if b.Target.Ecosystem == "pypi" && res.Install != nil && rt.pypi != nil {
		// The artefact is the file the fetch step chose (a wheel when one
		// fits, else the sdist), known only once it ran.
		b.Target.Integrity = res.Install.Integrity.Expected
		b.Target.Tarball = pypiFileURL(rt, res.Install.Integrity.Expected)
	}
	b.Install = res.Install
	b.Session = res.Session
	b.Contract = res.Contract
	b.ContractChecks = contractChecks(res.Contract)
	relistChecks(b)
	b.Target.Bin = res.Bin
	b.Masking = res.Masking
	installMS := time.Since(started).Milliseconds()
	if res.Install != nil {
		installMS = res.Install.FetchMS + res.Install.ScriptsMS
	}
	b.Signals[evidence.SignalInstall] = evidence.Signal{State: evidence.StateObserved, DurationMS: installMS}
}

// classify records in b the state of the session, contract and behaviour
// signals from what the sandbox reported (res), and the behaviour it
// watched.
func (p *Pipeline) classify(b *evidence.Bundle, res *sandbox.Result) {
	switch {
	case res.Session != nil:
		b.Signals[evidence.SignalSession] = evidence.Signal{State: evidence.StateObserved, DurationMS: res.Session.HandshakeMS + res.Session.ListMS}
	default:
		b.Signals[evidence.SignalSession] = evidence.Signal{State: evidence.StateError, Reason: "not run: the install phase ended with " + string(res.Outcome)}
	}
	switch {
	case res.Contract != nil:
		b.Signals[evidence.SignalContract] = evidence.Signal{State: evidence.StateObserved}
	default:
		b.Signals[evidence.SignalContract] = evidence.Signal{State: evidence.StateError, Reason: "not captured: the scan ended with " + string(res.Outcome)}
	}
	b.Behavior = res.Behavior
	switch {
	case res.Behavior != nil && len(res.Behavior.Watches) > 0:
		var ms int64
		for _, w := range res.Behavior.Watches {
			ms += w.WatchedMS
		}
		b.Signals[evidence.SignalBehavior] = evidence.Signal{State: evidence.StateObserved, DurationMS: ms}
	case res.Behavior != nil:
		b.Behavior = nil
		b.Signals[evidence.SignalBehavior] = evidence.Signal{State: evidence.StateError, Reason: "not watched: no package code ran (the scan ended with " + string(res.Outcome) + ")"}
	case p.Behavior:
		b.Signals[evidence.SignalBehavior] = evidence.Signal{State: evidence.StateError, Reason: "behaviour capture was on but returned nothing"}
	default:
		b.Signals[evidence.SignalBehavior] = evidence.Signal{State: evidence.StateNotAssessed, Reason: "behaviour capture disabled (--no-behavior)"}
	}
}

// seal applies the limits to b, checks it and encodes it; the scan's
// result is the bundle as stored, with lockfile, the package's lockfile.
func seal(b *evidence.Bundle, lockfile []byte) (*Scanned, error) {
	applyLimits(b)
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("assemble bundle: %w", err)
	}
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode bundle: %w", err)
	}
	// Everything downstream reads the bundle as stored, so that a rescore of
	// the stored JSON gives exactly what the scan gave.
	stored, err := evidence.Decode(data)
	if err != nil {
		return nil, err
	}
	return &Scanned{Bundle: stored, BundleJSON: data, Lockfile: lockfile}, nil
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
