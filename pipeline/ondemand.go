package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/store"
)

// OnDemand runs targets one at a time through Run, preparing the sandbox
// (engine, images, observer) once, when the first target resolved, so that
// a list whose targets do not resolve touches nothing on the engine. It is
// not safe for concurrent use.
type OnDemand struct {
	Pipeline *Pipeline
	Save     Saver
	// Prepare prepares the sandbox (see PrepareSandbox).
	Prepare func(ctx context.Context) (Session, error)

	session  Session
	prepared bool
	prepErr  error
	first    error
}

// Run parses raw, resolves it, prepares the sandbox if it is the first
// target to resolve, and runs it end to end.
func (o *OnDemand) Run(ctx context.Context, raw string, opts Options) (*Ran, error) {
	tg, err := ParseTarget(raw)
	if err != nil {
		return nil, err
	}
	rt, err := o.Pipeline.Resolve(ctx, tg)
	if err != nil {
		return nil, err
	}
	if !o.prepared {
		o.prepared = true
		o.session, o.prepErr = o.Prepare(ctx)
		o.first = o.prepErr
	}
	if o.prepErr != nil {
		return nil, o.prepErr
	}
	opts.RunID = o.session.NextRunID()
	ran, err := o.Pipeline.Run(ctx, Job{Target: rt, Options: opts}, o.Save)
	if err != nil {
		var env *sandbox.EnvironmentError
		if o.first == nil && (errors.As(err, &env) || errors.Is(err, ErrSandbox)) {
			o.first = err
		}
		return nil, err
	}
	return ran, nil
}

// Infra returns the first failure that was not a target's package's own
// (the engine, the image, the environment), or nil.
func (o *OnDemand) Infra() error { return o.first }

// Close closes the session: the engine, and what was prepared and not
// used.
func (o *OnDemand) Close() {
	if o.session != nil {
		o.session.Close()
		o.session = nil
	}
}

// RunLister is the part of the run store LatestRun reads (a *store.Store
// is one).
type RunLister interface {
	Runs(ctx context.Context, f store.Filter) ([]store.RunSummary, error)
	Bundle(ctx context.Context, runID string) ([]byte, error)
}

// LatestRun returns the newest stored bundle of ecosystem's name@version,
// of the artefact integrity names when it is not empty.
func LatestRun(ctx context.Context, st RunLister, ecosystem, name, version, integrity string) (*evidence.Bundle, error) {
	runs, err := st.Runs(ctx, store.Filter{Ecosystem: ecosystem, Name: name, Version: version})
	if err != nil {
		return nil, err
	}
	for _, r := range runs {
		data, err := st.Bundle(ctx, r.RunID)
		if err != nil {
			return nil, err
		}
		b, err := evidence.Decode(data)
		if err != nil {
			return nil, fmt.Errorf("stored run %s: %w", r.RunID, err)
		}
		if integrity == "" || b.Target.Integrity == integrity {
			return b, nil
		}
	}
	return nil, fmt.Errorf("no stored run of %s:%s@%s%s", ecosystem, name, version, map[bool]string{true: " with this artefact", false: ""}[integrity != ""])
}
