package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/verifymcp/verifymcp/ecosystem"
	"github.com/verifymcp/verifymcp/evidence"
)

// The install phase of every ecosystem has the same frame: a fetch step
// with egress, into the tree cache or the run's own volume; then, when
// package code must run (npm's lifecycle scripts, PyPI's sdist builds),
// a step without egress in a bounded copy of the fetched tree. The
// functions below are that frame; each installer fills it in.

// fetchStep runs an ecosystem's fetch step (fetch into a volume) for t:
// into the tree cache when there is one (reusing a complete cached tree),
// else into the run's own volume tree. It returns the fetch result,
// whether the step timed out and the volume that holds the fetched tree,
// and records the cache's use in inst.
func fetchStep[R any](ctx context.Context, s *Sandbox, r *run, tree string, t Target, inst *evidence.Install,
	fetch func(vol string) (*R, bool, error), cacheable func(*R) bool) (fr *R, timedOut bool, fetched string, err error) {
	if s.opts.TreeCacheDir == "" {
		fr, timedOut, err = fetch(tree)
		return fr, timedOut, tree, err
	}
	c, err := cachedFetch(ctx, s, r, tree, t, fetchFunc[R]{run: fetch, cacheable: cacheable})
	inst.TreeCache = c.info
	return c.fr, c.timedOut, c.volume, err
}

// fetchTimedOut records a fetch step that exceeded the install timeout.
func (s *Sandbox) fetchTimedOut(inst *evidence.Install) {
	inst.Outcome, inst.FailedStep = evidence.InstallTimeout, evidence.StepFetch
	inst.Error = fmt.Sprintf("fetch step exceeded the install timeout of %s", s.opts.InstallTimeout)
}

// fetchedOther records a fetch step that fetched (verb) another release
// than the one asked for, both written as the ecosystem pins a release.
func fetchedOther(inst *evidence.Install, t Target, verb, name, version string) {
	pin := ecosystem.MustOf(t.Ecosystem).Pin
	inst.Outcome, inst.FailedStep = evidence.InstallFailed, evidence.StepFetch
	inst.Error = fmt.Sprintf("%s %s, asked for %s", verb, pin(name, version), pin(t.Name, t.Version))
}

// recordLockfile records the lockfile's digest in inst and returns it.
func recordLockfile(inst *evidence.Install, lockfile string) []byte {
	lock := []byte(lockfile)
	if len(lock) > 0 {
		sum := sha256.Sum256(lock)
		inst.LockfileSHA256 = hex.EncodeToString(sum[:])
	}
	return lock
}

// codeStep readies the step that runs package code (named step in
// messages: "script", "build") by the install's deadline: it waits for
// the behaviour watch and copies the fetched tree into a bounded work
// volume. ok is false, with the timeout recorded in inst, when no time is
// left before or after the copy.
func (s *Sandbox) codeStep(ctx context.Context, r *run, fetched, step string, deadline time.Time, inst *evidence.Install,
	watchReady func() (observer, error)) (work string, w observer, ok bool, err error) {
	if time.Until(deadline) <= 0 {
		inst.Outcome, inst.FailedStep = evidence.InstallTimeout, evidence.StepScripts
		inst.Error = "no time left for the " + step + " step"
		return "", nil, false, nil
	}
	if w, err = watchReady(); err != nil {
		return "", nil, false, err
	}
	if work, err = s.workTree(ctx, r, fetched, w); err != nil {
		return "", nil, false, err
	}
	if time.Until(deadline) <= 0 {
		inst.Outcome, inst.FailedStep = evidence.InstallTimeout, evidence.StepScripts
		inst.Error = "no time left for the " + step + " step after copying the installed tree"
		return "", nil, false, nil
	}
	return work, w, true, nil
}

// egress gives a fetch step (the container part names) its way out: an
// internal network whose one route out is the sandbox's egress proxy,
// which lets through only the hosts allowed. It returns the proxy's URL
// for the step's environment and what stops the proxy.
func (s *Sandbox) egress(ctx context.Context, r *run, part string, allow ...string) (proxy string, stop func(), err error) {
	netID, err := r.createInternalNetwork(ctx, part)
	if err != nil {
		return "", nil, err
	}
	stop, err = s.startEgressProxy(ctx, r, netID, allow...)
	if err != nil {
		return "", nil, err
	}
	return "http://" + egressAlias + ":" + egressPort, stop, nil
}
