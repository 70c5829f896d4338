package pipeline

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/verifymcp/verifymcp/ecosystem"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/internal/thirdparty"
	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/supplychain"
)

// The third-party clients, as the pipeline uses them. Each returns the
// evidence, where it came from, and an error the pipeline maps to a state
// (see stateOf); a nil client means the signal is not assessed.
type (
	// OSVScanner looks up the installed tree in OSV.
	OSVScanner interface {
		Scan(ctx context.Context, lockfile []byte, target string) (*evidence.OSVResult, supplychain.Fetch, error)
	}
	// OSVPackageScanner is an OSVScanner that also looks up a list of
	// packages (the OS packages and language trees an image holds; see
	// ecosystem.Inventory).
	OSVPackageScanner interface {
		ScanPackages(ctx context.Context, pkgs []supplychain.PackageRef, target string) (*evidence.OSVResult, supplychain.Fetch, error)
	}
	// SocketScanner asks Socket about the package and its tree.
	SocketScanner interface {
		Scan(ctx context.Context, target string, purls []string) (*evidence.SocketResult, supplychain.Fetch, error)
	}
	// RepoChecker asks GitHub about a repository.
	RepoChecker interface {
		Repo(ctx context.Context, owner, name string) (*evidence.GitHubResult, supplychain.Fetch, error)
	}
)

// Supply holds the supply-chain clients and what the operator chose.
type Supply struct {
	OSV    OSVScanner
	Socket SocketScanner
	GitHub RepoChecker
	// DNSSEC validates the domains the package leans on; DNSSECResolver
	// is its resolver's address, recorded as the signal's endpoint.
	DNSSEC         DomainValidator
	DNSSECResolver string
	// GitHubHost is the host whose repositories GitHub answers for
	// (github.com, or a GitHub Enterprise host).
	GitHubHost string
	// WellKnown fetches the HTTPS key document of an mcpName's domain for
	// the mcp_registry signal (nil: that key record is unavailable).
	WellKnown *supplychain.WellKnown
	// Skip names signals the operator turned off (not assessed).
	Skip map[string]bool
	// Timeout bounds each collector (30 s).
	Timeout time.Duration
}

// collect runs one collector under its own timeout and turns its outcome
// into a signal; it never fails the run.
func collect[T any](ctx context.Context, timeout time.Duration, third bool, f func(context.Context) (*T, supplychain.Fetch, error)) (*T, evidence.Signal) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	v, fetch, err := f(ctx)
	sig := stateOf(err)
	sig.ThirdParty = third
	sig.DurationMS = time.Since(start).Milliseconds()
	sig.Endpoint = fetch.Endpoint
	sig.Cached = fetch.Cached
	sig.Authenticated = fetch.Authenticated
	if !fetch.FetchedAt.IsZero() {
		t := fetch.FetchedAt.UTC()
		sig.FetchedAt = &t
	}
	if sig.State != evidence.StateObserved {
		return nil, sig
	}
	return v, sig
}

// stateOf maps a collector's error to a signal state, with a reason that
// never holds a credential.
func stateOf(err error) evidence.Signal {
	switch {
	case err == nil:
		return evidence.Signal{State: evidence.StateObserved}
	case errors.Is(err, supplychain.ErrNotApplicable):
		return evidence.Signal{State: evidence.StateNotAssessed, Reason: sandbox.Redact(err.Error(), nil)}
	case errors.Is(err, thirdparty.ErrNoCredential), errors.Is(err, thirdparty.ErrUnavailable),
		errors.Is(err, context.DeadlineExceeded):
		return evidence.Signal{State: evidence.StateUnavailable, Reason: sandbox.Redact(err.Error(), nil)}
	default:
		return evidence.Signal{State: evidence.StateError, Reason: sandbox.Redact(err.Error(), nil)}
	}
}

func skipped(name string) evidence.Signal {
	return evidence.Signal{State: evidence.StateNotAssessed, Reason: "disabled with --skip " + name, ThirdParty: true}
}

// githubRepo starts the GitHub lookup of the repository the metadata names
// (it needs nothing from the sandbox, so it runs alongside it): the one
// its repository field declares, else the one a link names where
// publishers put it (homepage, bugs URL, project URLs; see
// evidence.RegistryMeta.FindRepository).
func (p *Pipeline) githubRepo(ctx context.Context, meta *evidence.RegistryMeta) func() (*evidence.GitHubResult, evidence.Signal) {
	sp := p.cfg.Supply
	var repo *evidence.Repository
	if meta != nil {
		repo = meta.Repository
		if f, ok := meta.FindRepository(); repo == nil && ok {
			repo = &f.Repository
		}
	}
	switch {
	case sp.Skip["github"]:
		return func() (*evidence.GitHubResult, evidence.Signal) { return nil, skipped("github") }
	case sp.GitHub == nil:
		return func() (*evidence.GitHubResult, evidence.Signal) {
			return nil, evidence.Signal{State: evidence.StateNotAssessed, Reason: "no GitHub client configured", ThirdParty: true}
		}
	case meta == nil:
		return func() (*evidence.GitHubResult, evidence.Signal) {
			return nil, evidence.Signal{State: evidence.StateNotAssessed, Reason: "no registry metadata to take a repository from", ThirdParty: true}
		}
	case repo == nil:
		return func() (*evidence.GitHubResult, evidence.Signal) {
			return nil, evidence.Signal{State: evidence.StateNotAssessed, Reason: "the package declares no parseable repository", ThirdParty: true}
		}
	case !strings.EqualFold(repo.Host, githubHost(sp.GitHubHost)):
		return func() (*evidence.GitHubResult, evidence.Signal) {
			return nil, evidence.Signal{State: evidence.StateNotAssessed, Reason: "the repository is not on " + githubHost(sp.GitHubHost) + " (" + repo.Host + ")", ThirdParty: true}
		}
	}
	var res *evidence.GitHubResult
	var sig evidence.Signal
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		res, sig = collect(ctx, p.timeout(), true, func(ctx context.Context) (*evidence.GitHubResult, supplychain.Fetch, error) {
			return sp.GitHub.Repo(ctx, repo.Owner, repo.Name)
		})
	}()
	return func() (*evidence.GitHubResult, evidence.Signal) {
		wg.Wait()
		return res, sig
	}
}

func githubHost(h string) string {
	if h == "" {
		return "github.com"
	}
	if u, err := url.Parse(h); err == nil && u.Host != "" {
		return u.Host
	}
	return h
}

func (p *Pipeline) timeout() time.Duration {
	if p.cfg.Supply.Timeout > 0 {
		return p.cfg.Supply.Timeout
	}
	return 30 * time.Second
}

// treeScansOf runs OSV, Socket or both over the installed tree, and sets
// only their signals and results.
func (p *Pipeline) treeScansOf(ctx context.Context, b *evidence.Bundle, lockfile []byte, doOSV, doSocket bool) {
	p.collectTree(ctx, treeInput{name: b.Target.Name, purl: b.Target.Purl, ecosystem: b.Target.Ecosystem, outcome: b.Sandbox.Outcome, shipped: b.Shipped != nil},
		lockfile, doOSV, doSocket).apply(b)
}

// treeInput is what the tree scans read of the target besides the
// lockfile: all of it known before the scan (the outcome only matters
// when there is no lockfile).
type treeInput struct {
	name, purl, ecosystem string
	outcome               evidence.Outcome
	// shipped: the target is a release that runs as shipped, whose
	// lockfile is what it ships (a bundle may ship none).
	shipped bool
}

// treeAnswers are the tree scans' results, applied to a bundle once the
// sandbox is done with it.
type treeAnswers struct {
	doOSV, doSocket bool
	osvRes          *evidence.OSVResult
	osvSig          evidence.Signal
	sockRes         *evidence.SocketResult
	sockSig         evidence.Signal
}

// collectTree runs OSV, Socket or both over lockfile; it touches no
// bundle, so that it can run while the scan goes on.
func (p *Pipeline) collectTree(ctx context.Context, in treeInput, lockfile []byte, doOSV, doSocket bool) treeAnswers {
	sp := p.cfg.Supply
	a := treeAnswers{doOSV: doOSV, doSocket: doSocket}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		switch {
		case !doOSV:
		case sp.Skip["osv"]:
			a.osvSig = skipped("osv")
		case sp.OSV == nil:
			a.osvSig = evidence.Signal{State: evidence.StateNotAssessed, Reason: "no OSV client configured", ThirdParty: true}
		case len(lockfile) == 0 && in.shipped && in.outcome == evidence.OutcomeOK:
			a.osvSig = evidence.Signal{State: evidence.StateNotAssessed, Reason: "the release ships no lockfile of its dependencies to query", ThirdParty: true}
		case len(lockfile) == 0:
			a.osvSig = evidence.Signal{State: evidence.StateError, Reason: "no installed tree to query: the install phase ended with " + string(in.outcome), ThirdParty: true}
		default:
			a.osvRes, a.osvSig = collect(ctx, p.timeout(), true, func(ctx context.Context) (*evidence.OSVResult, supplychain.Fetch, error) {
				return osvScan(ctx, sp.OSV, in, lockfile)
			})
		}
	}()
	go func() {
		defer wg.Done()
		switch {
		case !doSocket:
		case sp.Skip["socket"]:
			a.sockSig = skipped("socket")
		case sp.Socket == nil:
			a.sockSig = evidence.Signal{State: evidence.StateNotAssessed, Reason: "no Socket client configured", ThirdParty: true}
		default:
			tree := ecosystem.MustOf(in.ecosystem).TreePurls(lockfile, in.purl)
			purls := append([]string{in.purl}, tree...)
			a.sockRes, a.sockSig = collect(ctx, p.timeout(), true, func(ctx context.Context) (*evidence.SocketResult, supplychain.Fetch, error) {
				return sp.Socket.Scan(ctx, in.name, purls)
			})
		}
	}()
	wg.Wait()
	return a
}

// apply sets the signals and results the scans were asked for.
func (a treeAnswers) apply(b *evidence.Bundle) {
	if (a.osvRes != nil || a.sockRes != nil) && b.Supply == nil {
		b.Supply = &evidence.Supply{}
	}
	if a.doOSV {
		b.Signals[evidence.SignalOSV] = a.osvSig
		if b.Supply != nil {
			b.Supply.OSV = a.osvRes
		}
	}
	if a.doSocket {
		b.Signals[evidence.SignalSocket] = a.sockSig
		if b.Supply != nil {
			b.Supply.Socket = a.sockRes
		}
	}
}

// osvScan asks OSV about the tree of in: its lockfile as its installer
// wrote it, or, for an ecosystem whose lockfile is an inventory of other
// ecosystems' packages, those packages.
func osvScan(ctx context.Context, o OSVScanner, in treeInput, lockfile []byte) (*evidence.OSVResult, supplychain.Fetch, error) {
	inv, ok := ecosystem.MustOf(in.ecosystem).(ecosystem.Inventory)
	if !ok {
		return o.Scan(ctx, lockfile, in.name)
	}
	po, ok := o.(OSVPackageScanner)
	if !ok {
		return nil, supplychain.Fetch{}, fmt.Errorf("%w: this OSV client cannot look up an inventory of packages", supplychain.ErrNotApplicable)
	}
	pkgs := inv.OSVPackages(lockfile)
	refs := make([]supplychain.PackageRef, 0, len(pkgs))
	for _, p := range pkgs {
		refs = append(refs, supplychain.PackageRef{Ecosystem: p.Ecosystem, Name: p.Name, Version: p.Version, Purl: p.Purl})
	}
	return po.ScanPackages(ctx, refs, in.name)
}
