package sandbox

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// FetchCheck is what CheckFetch found: the fetch step reached the registry
// and installed the package, with these figures.
type FetchCheck struct {
	// Host is the registry's host:port, the only one the egress proxy let
	// the fetch step reach.
	Host string
	// PreflightStatus and PreflightMS are the registry's answer to the
	// fetch driver's preflight (the packument) and how long it took.
	PreflightStatus int
	PreflightMS     int64
	// Packages is how many packages npm installed; FetchMS how long the
	// whole step took, container start and removal included.
	Packages int
	FetchMS  int64
	// Integrity is the sha512 the sandbox computed over the tarball's bytes.
	Integrity string
}

// ErrFetchCheck is returned by CheckFetch when the fetch step reached the
// registry but did not install the package as the registry describes it.
var ErrFetchCheck = errors.New("fetch check failed")

// CheckFetch runs the real fetch step for t, an exact registry version,
// under run id runID: the run's internal network, the egress proxy, the
// CA bundle of the options, and an empty npm cache of its own, so that the
// packument and the tarball come through the registry and not from the
// shared cache. It removes everything it created. An environment fault is
// returned as an *EnvironmentError, as Scan returns it.
func (s *Sandbox) CheckFetch(ctx context.Context, runID string, t Target) (fc *FetchCheck, err error) {
	r := newRun(s.cli, runID, nil)
	defer func() {
		if cerr := r.cleanup(ctx); cerr != nil && err == nil {
			err = fmt.Errorf("clean up run %s: %w", runID, cerr)
		}
	}()
	tree, err := r.createVolume(ctx, "tree")
	if err != nil {
		return nil, err
	}
	started := time.Now()
	fr, timedOut, err := s.fetchStep(ctx, r, tree, t, s.opts.InstallTimeout, true)
	if err != nil {
		return nil, err
	}
	spec := t.Name + "@" + t.Version
	switch {
	case timedOut:
		return nil, fmt.Errorf("%w: fetching %s took longer than %s", ErrFetchCheck, spec, s.opts.InstallTimeout)
	case !fr.OK || fr.Target == nil:
		return nil, fmt.Errorf("%w: %s: %s", ErrFetchCheck, spec, fetchFailure(fr, s.opts.Registry))
	case t.Integrity != "" && fr.Integrity.Computed != t.Integrity:
		// A proxy that changes what it relays would show here.
		return nil, fmt.Errorf("%w: %s: the bytes fetched hash to %q, the registry says %q", ErrFetchCheck, spec, fr.Integrity.Computed, t.Integrity)
	}
	host, _ := registryHostPort(s.opts.Registry)
	fc = &FetchCheck{Host: host, Packages: fr.Packages, FetchMS: time.Since(started).Milliseconds(), Integrity: fr.Integrity.Computed}
	if p := fr.Preflight; p != nil {
		fc.PreflightStatus, fc.PreflightMS = p.Status, p.MS
	}
	return fc, nil
}
