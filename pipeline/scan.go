package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/verifymcp/verifymcp/ecosystem"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/supplychain"
)

// Scan runs a resolved target in the sandbox and returns the evidence.
// Errors are returned only when there is nothing to report: bad input or an
// engine that failed us; everything the package does is evidence. A
// pipeline without a Scanner returns ErrNoScanner.
func (p *Pipeline) Scan(ctx context.Context, rt *Resolved, o Options) (*Scanned, error) {
	if p.cfg.Scanner == nil {
		return nil, ErrNoScanner
	}
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
	classify(res, p.cfg.Sandbox.Behavior).record(b)
	// The judge needs only the contract, the tree scans only the lockfile:
	// both started as soon as the sandbox had them, unless it never said.
	judgeC := early.judgeFor(b.Contract)
	early.treeFor(res.Lockfile, b.Sandbox.Outcome, b.Shipped != nil).apply(b)
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
	if p.cfg.Now != nil {
		now = p.cfg.Now
	}
	date := now().UTC()
	b := &evidence.Bundle{
		SchemaVersion: evidence.SchemaVersion,
		Run:           evidence.Run{ID: o.RunID, Date: date, Tool: evidence.Tool{Name: "verifymcp", Version: p.cfg.ToolVersion}},
		Signals:       map[string]evidence.Signal{evidence.SignalRegistry: rt.registrySig},
		Sandbox: evidence.Sandbox{
			Image: p.cfg.Sandbox.Image, ImageDigest: p.cfg.Sandbox.ImageDigest,
			EngineVersion: p.cfg.Sandbox.EngineVersion, APIVersion: p.cfg.Sandbox.APIVersion,
			Limits: p.cfg.Sandbox.Limits, CABundle: p.cfg.Sandbox.CABundle,
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
	case rt.release != nil:
		b.Signals[evidence.SignalRegistryMeta] = evidence.Signal{State: evidence.StateNotAssessed, Reason: "a shipped " + rt.release.Kind + " has no package registry metadata"}
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
	st := resolverOf(b.Target.Ecosystem).sandboxTarget(rt)
	b.Target.Purl = ecosystem.MustOf(b.Target.Ecosystem).Purl(b.Target.Name, b.Target.Version)
	st.Bin, st.Args, st.Env, st.Secrets = o.Bin, o.Args, o.Env, p.cfg.Secrets
	if rt.release != nil {
		st.Secrets = append(append([]sandbox.Secret(nil), st.Secrets...), rt.release.Secrets...)
	}
	return st
}

// runSandbox installs, starts and lists st in the sandbox under the run id
// runID. Its error is for a bad bin, a cancelled scan or an engine or
// environment that failed: then there is no evidence about the package.
func (p *Pipeline) runSandbox(ctx context.Context, rt *Resolved, runID string, st sandbox.Target) (*sandbox.Result, error) {
	res, err := p.cfg.Scanner.Scan(ctx, runID, st)
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
		if errors.Is(err, sandbox.ErrShipped) {
			return nil, errShipped(err)
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
	resolverOf(b.Target.Ecosystem).installed(b, rt, res.Install)
	recordShipped(b, res.Shipped)
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

// classified is what classify makes of a sandbox result: the states of
// the session, contract and behaviour signals, and the behaviour to keep.
type classified struct {
	session, contract, behavior, exercise evidence.Signal
	watched                               *evidence.Behavior
	calls                                 *evidence.Exercise
}

// classify reads what the sandbox reported (res) into signal states, a
// pure function of res and whether behaviour capture was on: a phase that
// did not run is an error of its signal with the scan's outcome as the
// reason, capture turned off is not assessed, and behaviour is kept only
// when some package code was watched.
func classify(res *sandbox.Result, behaviorOn bool) classified {
	var c classified
	if res.Session != nil {
		c.session = evidence.Signal{State: evidence.StateObserved, DurationMS: res.Session.HandshakeMS + res.Session.ListMS}
	} else {
		c.session = evidence.Signal{State: evidence.StateError, Reason: "not run: the install phase ended with " + string(res.Outcome)}
	}
	if res.Contract != nil {
		c.contract = evidence.Signal{State: evidence.StateObserved}
	} else {
		c.contract = evidence.Signal{State: evidence.StateError, Reason: "not captured: the scan ended with " + string(res.Outcome)}
	}
	switch {
	case res.Shipped != nil && res.Shipped.Unwatched != "" && behaviorOn:
		c.behavior = evidence.Signal{State: evidence.StateNotAssessed, Reason: "behaviour capture could not watch this release: " + res.Shipped.Unwatched}
	case res.Behavior != nil && len(res.Behavior.Watches) > 0:
		var ms int64
		for _, w := range res.Behavior.Watches {
			ms += w.WatchedMS
		}
		c.watched = res.Behavior
		c.behavior = evidence.Signal{State: evidence.StateObserved, DurationMS: ms}
	case res.Behavior != nil:
		c.behavior = evidence.Signal{State: evidence.StateError, Reason: "not watched: no package code ran (the scan ended with " + string(res.Outcome) + ")"}
	case behaviorOn:
		c.behavior = evidence.Signal{State: evidence.StateError, Reason: "behaviour capture was on but returned nothing"}
	default:
		c.behavior = evidence.Signal{State: evidence.StateNotAssessed, Reason: "behaviour capture disabled (--no-behavior)"}
	}
	switch {
	case res.Exercise != nil:
		c.calls = res.Exercise
		c.exercise = evidence.Signal{State: evidence.StateObserved, DurationMS: res.Exercise.ElapsedMS}
	case res.ExerciseNote != "":
		c.exercise = evidence.Signal{State: evidence.StateNotAssessed, Reason: res.ExerciseNote}
	case !behaviorOn:
		c.exercise = evidence.Signal{State: evidence.StateNotAssessed, Reason: "behaviour capture is off (--no-behavior): no tool is called unwatched"}
	default:
		c.exercise = evidence.Signal{State: evidence.StateNotAssessed, Reason: "no tool was called: the scan ended with " + string(res.Outcome)}
	}
	return c
}

// record puts the classification into b.
func (c classified) record(b *evidence.Bundle) {
	b.Signals[evidence.SignalSession] = c.session
	b.Signals[evidence.SignalContract] = c.contract
	b.Signals[evidence.SignalBehavior] = c.behavior
	b.Signals[evidence.SignalExercise] = c.exercise
	b.Behavior = c.watched
	b.Exercise = c.calls
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
