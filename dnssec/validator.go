package dnssec

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// Defaults for the zero values of Config.
const (
	DefaultTimeout      = 2 * time.Second
	DefaultAttempts     = 2
	DefaultConcurrency  = 8
	DefaultCacheEntries = 10000
	DefaultMaxCacheTTL  = time.Hour
)

// bogusCacheTTL is how long a bogus judgement is kept: long enough that a
// list of domains sharing a broken zone asks once, short enough that a
// repaired zone is seen again soon (RFC 9520 suggests at most 5 minutes).
const bogusCacheTTL = time.Minute

// maxCNAMEs bounds the CNAME chain followed from one domain.
const maxCNAMEs = 8

// Config configures a Validator.
type Config struct {
	// Resolver is the recursive resolver's "host:port". It is required:
	// the system resolver is never used by surprise.
	Resolver string
	// Anchor is the trust anchor; the zero value means RootAnchor().
	Anchor Anchor
	// Timeout bounds each attempt of each query; Attempts is how many
	// times a query is sent over UDP before it counts as failed.
	Timeout  time.Duration
	Attempts int
	// Concurrency is how many domains Validate checks at once.
	Concurrency int
	// CacheEntries bounds the cache; MaxCacheTTL caps how long anything
	// stays in it, whatever the records' TTLs say.
	CacheEntries int
	MaxCacheTTL  time.Duration
	// Now is the clock signatures' validity periods and cache lifetimes
	// are checked against; nil means time.Now.
	Now func() time.Time
}

// Validator validates domains' chains of trust through one resolver from
// one trust anchor. It caches validated zone keys, delegations and answers,
// and is safe for concurrent use.
type Validator struct {
	cfg    Config
	anchor Anchor
	client *client
	cache  *cache
}

// New returns a Validator for cfg, filling in defaults.
func New(cfg Config) (*Validator, error) {
	if cfg.Resolver == "" {
		return nil, errors.New("dnssec: no resolver configured")
	}
	if cfg.Anchor.Zone == "" && len(cfg.Anchor.DS) == 0 {
		cfg.Anchor = RootAnchor()
	}
	if err := cfg.Anchor.check(); err != nil {
		return nil, fmt.Errorf("dnssec: %w", err)
	}
	cfg.Anchor.Zone = dns.CanonicalName(cfg.Anchor.Zone)
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Attempts <= 0 {
		cfg.Attempts = DefaultAttempts
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.CacheEntries <= 0 {
		cfg.CacheEntries = DefaultCacheEntries
	}
	if cfg.MaxCacheTTL <= 0 {
		cfg.MaxCacheTTL = DefaultMaxCacheTTL
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Validator{
		cfg:    cfg,
		anchor: cfg.Anchor,
		client: newClient(cfg.Resolver, cfg.Timeout, cfg.Attempts),
		cache:  newCache(cfg.CacheEntries),
	}, nil
}

// Validate checks every domain, at most Config.Concurrency at a time, and
// returns one result per domain in the order given. It starts by
// validating the trust anchor zone's keys; when that fails (no resolver
// answered, or the resolver filters or strips DNSSEC data) nothing below
// can be judged and the Result is RunUnavailable with a reason, its domains
// indeterminate. The error is not nil only when ctx ended first; the
// Result then holds what was judged before.
func (v *Validator) Validate(ctx context.Context, domains []Domain) (Result, error) {
	res := Result{
		Status:   RunObserved,
		Resolver: v.cfg.Resolver,
		Anchor: AnchorInfo{
			Zone:    v.anchor.Zone,
			KeyTags: v.anchor.keyTags(),
			Source:  v.anchor.Source,
		},
		CheckedAt: v.cfg.Now().UTC(),
		Domains:   make([]DomainResult, len(domains)),
	}
	anchor := v.anchorKeys(ctx)
	if anchor.step.Status != StatusSecure {
		res.Status = RunUnavailable
		if anchor.step.Status == StatusIndeterminate {
			res.Reason = fmt.Sprintf("no usable answer for the trust anchor zone %s: %v", v.anchor.Zone, anchor.err)
		} else {
			res.Reason = fmt.Sprintf("the resolver's DNSKEY answer for the trust anchor zone %s does not validate (a filtering or DNSSEC-stripping resolver, or the wrong anchor): %v", v.anchor.Zone, anchor.err)
		}
		for i, d := range domains {
			res.Domains[i] = DomainResult{
				Name: d.Name, Sources: nonNil(d.Sources), Status: StatusIndeterminate,
				Exists: ExistsUnknown, Chain: []ZoneStep{anchor.step}, Error: "trust anchor unavailable",
			}
		}
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("dnssec validate: %w", err)
		}
		return res, nil
	}

	sem := make(chan struct{}, v.cfg.Concurrency)
	var wg sync.WaitGroup
	for i, d := range domains {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			res.Domains[i] = v.check(ctx, anchor, d)
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("dnssec validate: %w", err)
	}
	return res, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// rank orders statuses from best to worst, for the weakest link of a
// CNAME chain.
func rank(s Status) int {
	switch s {
	case StatusSecure:
		return 1
	case StatusInsecure:
		return 2
	case StatusIndeterminate:
		return 3
	case StatusBogus:
		return 4
	}
	return 0
}

// check judges one domain, following its CNAME chain.
func (v *Validator) check(ctx context.Context, anchor *zoneState, d Domain) DomainResult {
	r := DomainResult{Name: d.Name, Sources: nonNil(d.Sources), Exists: ExistsUnknown, Chain: []ZoneStep{}}
	host, _, ok := hostName(d.Name)
	if !ok {
		r.Status, r.Error = StatusIndeterminate, fmt.Sprintf("%q is not a host name", d.Name)
		return r
	}
	w := follow(host, func(name string) *nameAnswer { return v.answer(ctx, anchor, name) })
	r.Status, r.BogusReason, r.Error, r.Exists, r.CNAMEs, r.Chain = w.status, w.bogusReason, w.err, w.exists, w.cnames, append(r.Chain, w.chain...)
	if a := w.last; a != nil && a.exists == ExistsNo {
		r.NXDomainProof = a.proof
		r.DanglingCNAME = len(w.cnames) > 0
	}
	return r
}

// walk is what following a name's CNAME chain found: the zones of the
// chain, the weakest status of its links (with the bogus reason and the
// error that came with it), whether the first name exists, the CNAMEs
// followed, and the last answer, nil when the chain looped or ran past
// maxCNAMEs.
type walk struct {
	status      Status
	bogusReason BogusReason
	err         string
	exists      Existence
	chain       []ZoneStep
	cnames      []string
	last        *nameAnswer
}

// follow asks ask about host and each CNAME target in turn, until a name
// has no CNAME or its answer is bogus or indeterminate. A chain that loops
// or runs past maxCNAMEs is indeterminate. Validate's domains and
// LookupTXT's names are judged by this one walk.
func follow(host string, ask func(name string) *nameAnswer) walk {
	w := walk{exists: ExistsUnknown}
	name := dns.Fqdn(host)
	zones := map[string]bool{}
	visited := map[string]bool{name: true}
	for hop := 0; ; hop++ {
		a := ask(name)
		for _, s := range a.chain {
			if !zones[s.Zone] {
				zones[s.Zone] = true
				w.chain = append(w.chain, s)
			}
		}
		if rank(a.status) > rank(w.status) {
			w.status = a.status
			if a.status == StatusBogus {
				w.bogusReason = a.reason
			}
			if a.err != "" {
				w.err = a.err
			}
		}
		if hop == 0 {
			w.exists = a.exists
		}
		if a.cname == "" || a.status == StatusBogus || a.status == StatusIndeterminate {
			w.last = a
			return w
		}
		name = a.cname
		w.cnames = append(w.cnames, strings.TrimSuffix(name, "."))
		if visited[name] || hop+1 >= maxCNAMEs {
			if rank(w.status) < rank(StatusIndeterminate) {
				w.status = StatusIndeterminate
			}
			w.err = fmt.Sprintf("CNAME chain loops or is longer than %d names", maxCNAMEs)
			return w
		}
		visited[name] = true
	}
}

// zoneState is the outcome of establishing one zone's keys.
type zoneState struct {
	step    ZoneStep
	keys    keySet // the zone's keys when step.Status is secure
	err     error
	expires time.Time
}

// cacheTTL says how long an outcome may be cached: indeterminate outcomes
// not at all, bogus ones briefly, the rest for their TTL, capped.
func (v *Validator) cacheTTL(s Status, ttl time.Duration) time.Duration {
	switch s {
	case StatusIndeterminate:
		return 0
	case StatusBogus:
		ttl = bogusCacheTTL
	}
	return min(ttl, v.cfg.MaxCacheTTL)
}
