package dnssec

import (
	"context"
	"errors"
	"fmt"
	"slices"
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

// anchorKeys validates the anchor zone's DNSKEY RRset against the anchor.
// Only a success is cached, so a resolver that comes back is used at once.
func (v *Validator) anchorKeys(ctx context.Context) *zoneState {
	return v.cache.do("anchor|"+v.anchor.Zone, v.cfg.Now(), func() (any, time.Duration) {
		zs, ttl := v.fetchKeys(ctx, v.anchor.Zone, v.anchor.DS)
		if zs.step.Status != StatusSecure {
			ttl = 0
		}
		zs.expires = v.cfg.Now().Add(min(ttl, v.cfg.MaxCacheTTL))
		return zs, min(ttl, v.cfg.MaxCacheTTL)
	}).(*zoneState)
}

// zoneKeys validates a zone's DNSKEY RRset against the DS records its
// parent published.
func (v *Validator) zoneKeys(ctx context.Context, zone string, ds []*dns.DS) *zoneState {
	key := "keys|" + zone
	for _, d := range ds {
		key += fmt.Sprintf("|%d/%d/%d/%s", d.KeyTag, d.Algorithm, d.DigestType, strings.ToLower(d.Digest))
	}
	return v.cache.do(key, v.cfg.Now(), func() (any, time.Duration) {
		zs, ttl := v.fetchKeys(ctx, zone, ds)
		ttl = v.cacheTTL(zs.step.Status, ttl)
		zs.expires = v.cfg.Now().Add(ttl)
		return zs, ttl
	}).(*zoneState)
}

func (v *Validator) fetchKeys(ctx context.Context, zone string, ds []*dns.DS) (*zoneState, time.Duration) {
	zs := &zoneState{step: ZoneStep{Zone: zone}}
	fail := func(s Status, err error) (*zoneState, time.Duration) {
		zs.step.Status, zs.err, zs.step.Error = s, err, err.Error()
		var be *bogusError
		if errors.As(err, &be) {
			zs.step.BogusReason = be.reason
		}
		return zs, 0
	}
	// RFC 4509 section 3: when a SHA-256 (or stronger) digest is there, a
	// SHA-1 one must not be what lets a key in.
	strong := slices.ContainsFunc(ds, func(d *dns.DS) bool {
		return supportedAlgorithm(d.Algorithm) && (d.DigestType == dns.SHA256 || d.DigestType == dns.SHA384)
	})
	var usable []*dns.DS
	for _, d := range ds {
		zs.step.DSKeyTags = append(zs.step.DSKeyTags, d.KeyTag)
		if supportedAlgorithm(d.Algorithm) && supportedDigest(d.DigestType) && !(strong && d.DigestType == dns.SHA1) {
			usable = append(usable, d)
		}
	}
	if len(usable) == 0 {
		// RFC 4035 section 5.2: no supported algorithm means no
		// authentication path, which is treated as insecure.
		zs.step.Status = StatusInsecure
		zs.step.Error = "no DS record with a supported algorithm and digest type"
		return zs, v.cfg.MaxCacheTTL
	}

	msg, err := v.client.query(ctx, zone, dns.TypeDNSKEY)
	if err != nil {
		return fail(StatusIndeterminate, err)
	}
	switch msg.Rcode {
	case dns.RcodeSuccess:
	case dns.RcodeNameError:
		return fail(StatusBogus, bogus(BogusMissingDNSKEY, "DNSKEY %s answered NXDOMAIN, but the parent has a DS", zone))
	default:
		return fail(StatusIndeterminate, fmt.Errorf("%w: DNSKEY %s answered %s", ErrResolver, zone, dns.RcodeToString[msg.Rcode]))
	}
	set := findSet(collect(msg.Answer), zone, dns.TypeDNSKEY)
	if set == nil {
		return fail(StatusBogus, bogus(BogusMissingDNSKEY, "no DNSKEY RRset for %s, but the parent has a DS", zone))
	}
	var keys, matched []*dns.DNSKEY
	for _, rr := range set.rrs {
		k := rr.(*dns.DNSKEY)
		zs.step.KeyTags = append(zs.step.KeyTags, k.KeyTag())
		if !slices.Contains(zs.step.Algorithms, int(k.Algorithm)) {
			zs.step.Algorithms = append(zs.step.Algorithms, int(k.Algorithm))
		}
		if k.Protocol != 3 || k.Flags&dns.ZONE == 0 || k.Flags&dns.REVOKE != 0 {
			continue
		}
		keys = append(keys, k)
		tag := k.KeyTag()
		for _, d := range usable {
			if d.KeyTag != tag || d.Algorithm != k.Algorithm {
				continue
			}
			if kd := k.ToDS(d.DigestType); kd != nil && strings.EqualFold(kd.Digest, d.Digest) {
				matched = append(matched, k)
				break
			}
		}
	}
	if len(matched) == 0 {
		if why := revokedMatches(zone, set, usable); why != "" {
			return fail(StatusBogus, bogus(BogusRevokedDNSKEY, "%s; no DS matches a key that is not revoked, and a revoked key authenticates nothing (RFC 5011 section 2.1)", why))
		}
		return fail(StatusBogus, bogus(BogusNoMatchingDNSKEY, "DS key tags %v match none of the DNSKEYs of %s (key tags %v)", zs.step.DSKeyTags, zone, zs.step.KeyTags))
	}
	_, ttl, err := verify(set, newKeySet(zone, matched), v.cfg.Now())
	if err != nil {
		return fail(StatusBogus, err)
	}
	zs.step.Status = StatusSecure
	zs.keys = newKeySet(zone, keys)
	return zs, ttl
}

// revokedMatches says which of the DS records point at a key of the
// DNSKEY RRset that has the REVOKE bit set, either as published or as it was
// before the bit was set (setting it changes the key tag and the digest, so
// a parent that has not caught up with a key roll still has the old DS).
// It returns "" when none does.
func revokedMatches(zone string, set *rrset, ds []*dns.DS) string {
	var out []string
	for _, rr := range set.rrs {
		k := rr.(*dns.DNSKEY)
		if k.Protocol != 3 || k.Flags&dns.ZONE == 0 || k.Flags&dns.REVOKE == 0 {
			continue
		}
		was := dns.Copy(k).(*dns.DNSKEY)
		was.Flags &^= dns.REVOKE
		for _, d := range ds {
			switch {
			case dsMatches(d, k):
				out = append(out, fmt.Sprintf("the DS %d for %s points at DNSKEY %d, which is revoked (its REVOKE bit is set)", d.KeyTag, zone, k.KeyTag()))
			case dsMatches(d, was):
				out = append(out, fmt.Sprintf("the DS %d for %s points at a key the zone has revoked: DNSKEY %d is that key with its REVOKE bit set", d.KeyTag, zone, k.KeyTag()))
			}
		}
	}
	return strings.Join(out, "; ")
}

// dsMatches reports whether a DS record is the digest of a DNSKEY.
func dsMatches(d *dns.DS, k *dns.DNSKEY) bool {
	if d.KeyTag != k.KeyTag() || d.Algorithm != k.Algorithm {
		return false
	}
	kd := k.ToDS(d.DigestType)
	return kd != nil && strings.EqualFold(kd.Digest, d.Digest)
}

type delegationKind int

const (
	notACut     delegationKind = iota // cand is a name inside the parent zone
	secureCut                         // signed DS: a signed child zone
	insecureCut                       // proven no DS: an unsigned child
	nonexistent                       // cand (and everything below) does not exist
	redirected                        // a signed DNAME above cand redirects it (and everything below)
	failed                            // bogus or indeterminate
)

// delegation is what the parent zone says about a name below it.
type delegation struct {
	kind    delegationKind
	ds      []*dns.DS
	denial  denial
	status  Status // for failed: bogus or indeterminate
	err     error
	expires time.Time
}

// delegation asks for cand's DS RRset and judges the answer with the
// parent zone's keys.
func (v *Validator) delegation(ctx context.Context, parent *zoneState, cand string) *delegation {
	return v.cache.do("ds|"+cand, v.cfg.Now(), func() (any, time.Duration) {
		d, ttl := v.fetchDelegation(ctx, parent, cand)
		st := d.status
		if st == "" {
			st = StatusSecure
		}
		ttl = v.cacheTTL(st, ttl)
		d.expires = v.cfg.Now().Add(ttl)
		return d, ttl
	}).(*delegation)
}

func (v *Validator) fetchDelegation(ctx context.Context, parent *zoneState, cand string) (*delegation, time.Duration) {
	fail := func(s Status, err error) (*delegation, time.Duration) {
		return &delegation{kind: failed, status: s, err: err}, 0
	}
	msg, err := v.client.query(ctx, cand, dns.TypeDS)
	if err != nil {
		return fail(StatusIndeterminate, err)
	}
	now := v.cfg.Now()
	answers := collect(msg.Answer)
	switch msg.Rcode {
	case dns.RcodeSuccess, dns.RcodeNameError:
	default:
		return fail(StatusIndeterminate, fmt.Errorf("%w: DS %s answered %s", ErrResolver, cand, dns.RcodeToString[msg.Rcode]))
	}
	if set := findSet(answers, cand, dns.TypeDS); set != nil && msg.Rcode == dns.RcodeSuccess {
		_, ttl, err := verify(set, parent.keys, now)
		if err != nil {
			return fail(StatusBogus, err)
		}
		d := &delegation{kind: secureCut}
		for _, rr := range set.rrs {
			d.ds = append(d.ds, rr.(*dns.DS))
		}
		return d, ttl
	}
	// A DNAME above cand in the parent zone redirects cand and every name
	// below it, so there is no zone cut to find there (RFC 6672 section
	// 2.3 forbids data below a DNAME's owner). The answer also holds the
	// unsigned CNAME the DNAME synthesizes; the question for the domain
	// itself judges it against the DNAME.
	if set := dnameFor(answers, parent.keys.zone, cand); set != nil {
		_, ttl, err := v.authenticate(msg, set, parent)
		if err != nil {
			return fail(StatusBogus, err)
		}
		return &delegation{kind: redirected}, ttl
	}
	// A CNAME at cand: an alias inside the parent zone, not a zone cut.
	// The question for the domain itself judges the alias.
	if set := findSet(answers, cand, dns.TypeCNAME); set != nil {
		_, ttl, err := verify(set, parent.keys, now)
		if err != nil {
			return fail(StatusBogus, err)
		}
		return &delegation{kind: notACut}, ttl
	}
	p, ttl, err := v.proofs(msg, parent)
	if err != nil {
		return fail(StatusBogus, err)
	}
	if msg.Rcode == dns.RcodeNameError {
		dn, err := p.proveNXDomain(cand)
		if err != nil {
			return fail(StatusBogus, bogus(BogusMissingDenial, "NXDOMAIN for %s: %v", cand, err))
		}
		return &delegation{kind: nonexistent, denial: dn}, ttl
	}
	dn, err := p.proveNoData(cand, dns.TypeDS)
	if err != nil {
		return fail(StatusBogus, bogus(BogusMissingDenial, "no DS for %s: %v", cand, err))
	}
	if dn.nxname {
		return &delegation{kind: nonexistent, denial: dn}, ttl
	}
	if dn.cut {
		return &delegation{kind: insecureCut, denial: dn}, ttl
	}
	return &delegation{kind: notACut, denial: dn}, ttl
}

// authenticate verifies a positive RRset of the zone zs and, when a
// wildcard synthesized it, the proof in the response's authority section
// that its owner does not exist itself. insecure says that proof was an
// NSEC3 opt-out span, which proves less.
func (v *Validator) authenticate(msg *dns.Msg, set *rrset, zs *zoneState) (insecure bool, ttl time.Duration, err error) {
	sig, ttl, err := verify(set, zs.keys, v.cfg.Now())
	if err != nil {
		return false, 0, err
	}
	if int(sig.Labels) >= dns.CountLabel(set.name) {
		return false, ttl, nil
	}
	p, pttl, err := v.proofs(msg, zs)
	if err != nil {
		return false, 0, err
	}
	dn, err := p.proveWildcard(set.name, ancestor(set.name, int(sig.Labels)))
	if err != nil {
		return false, 0, bogus(BogusMissingDenial, "%v", err)
	}
	return dn.insecure, min(ttl, pttl), nil
}

// dnameFor finds the DNAME RRset in a response that redirects name: one
// owned by a proper ancestor of name inside zone, the closest if there
// are several.
func dnameFor(sets []*rrset, zone, name string) *rrset {
	var best *rrset
	for _, s := range sets {
		if s.rtype != dns.TypeDNAME || s.name == name || !dns.IsSubDomain(s.name, name) || !dns.IsSubDomain(zone, s.name) {
			continue
		}
		if best == nil || dns.CountLabel(s.name) > dns.CountLabel(best.name) {
			best = s
		}
	}
	return best
}

// dnameTarget is the name a DNAME RRset redirects name to (RFC 6672
// section 2.2): name with the DNAME's owner suffix replaced by its target.
func dnameTarget(set *rrset, name string) (string, error) {
	if len(set.rrs) != 1 {
		return "", fmt.Errorf("%d DNAME records at %s, where RFC 6672 section 2.4 allows one", len(set.rrs), set.name)
	}
	target := dns.CanonicalName(set.rrs[0].(*dns.DNAME).Target)
	// Label offsets from dns.Split, so that an escaped dot is no boundary.
	prefix := name
	if set.name != "." {
		idx := dns.Split(name)
		prefix = name[:idx[len(idx)-dns.CountLabel(set.name)]]
	}
	out := prefix + target
	if target == "." {
		out = prefix
	}
	buf := make([]byte, 2*dns.DefaultMsgSize)
	if n, err := dns.PackDomainName(out, buf, 0, nil, false); err != nil || n > 255 {
		return "", fmt.Errorf("DNAME %s -> %s makes %s longer than 255 octets", set.name, target, name)
	}
	return out, nil
}

// proofs validates the NSEC and NSEC3 RRsets of a zone in a response's
// authority section.
func (v *Validator) proofs(msg *dns.Msg, zs *zoneState) (*proofs, time.Duration, error) {
	p := &proofs{zone: zs.keys.zone}
	ttl := v.cfg.MaxCacheTTL
	now := v.cfg.Now()
	for _, s := range collect(msg.Ns) {
		switch s.rtype {
		case dns.TypeNSEC:
			if !dns.IsSubDomain(p.zone, s.name) {
				continue
			}
		case dns.TypeNSEC3:
			if parentName(s.name) != p.zone {
				continue
			}
		default:
			continue
		}
		_, t, err := verify(s, zs.keys, now)
		if err != nil {
			return nil, 0, err
		}
		ttl = min(ttl, t)
		for _, rr := range s.rrs {
			switch rr := rr.(type) {
			case *dns.NSEC:
				p.nsec = append(p.nsec, rr)
			case *dns.NSEC3:
				p.nsec3 = append(p.nsec3, rr)
			}
		}
	}
	return p, ttl, nil
}

// nameAnswer is the judgement on one name, without following its CNAME.
type nameAnswer struct {
	chain  []ZoneStep
	status Status
	reason BogusReason
	err    string
	exists Existence
	proof  Proof
	cname  string // the CNAME target, when the name is an alias
	// rrs is the RRset of the type asked for when the name has one
	// (authenticated, or below an unsigned delegation); judge asks for A,
	// judgeType for any type.
	rrs []dns.RR
}

func (a *nameAnswer) fail(s Status, err error) {
	a.status, a.err, a.exists = s, err.Error(), ExistsUnknown
	var be *bogusError
	if errors.As(err, &be) {
		a.reason = be.reason
	}
}

// answer judges one name: it walks the chain of trust down to the zone
// holding it, then asks for its A RRset to learn whether it exists.
func (v *Validator) answer(ctx context.Context, anchor *zoneState, name string) *nameAnswer {
	return v.cache.do("name|"+name, v.cfg.Now(), func() (any, time.Duration) {
		a, ttl := v.judge(ctx, anchor, name)
		return a, v.cacheTTL(a.status, ttl)
	}).(*nameAnswer)
}

func (v *Validator) judge(ctx context.Context, anchor *zoneState, name string) (*nameAnswer, time.Duration) {
	return v.judgeType(ctx, anchor, name, dns.TypeA)
}

// judgeType judges one name as judge does, asking for its qtype RRset.
func (v *Validator) judgeType(ctx context.Context, anchor *zoneState, name string, qtype uint16) (*nameAnswer, time.Duration) {
	a := &nameAnswer{chain: []ZoneStep{anchor.step}, exists: ExistsUnknown}
	now := v.cfg.Now()
	ttl := anchor.expires.Sub(now)
	if !dns.IsSubDomain(anchor.keys.zone, name) {
		a.fail(StatusIndeterminate, fmt.Errorf("%s is outside the trust anchor's zone %s", name, anchor.keys.zone))
		return a, 0
	}

	// Walk down one label at a time, asking the current zone for each
	// name's DS, until the name itself or an unsigned delegation.
	cur := anchor
	insecure, redirect := false, false
	insecureZone := "" // the unsigned delegation, when insecure
	for i := dns.CountLabel(anchor.keys.zone) + 1; i <= dns.CountLabel(name) && !insecure && !redirect; i++ {
		cand := ancestor(name, i)
		d := v.delegation(ctx, cur, cand)
		ttl = min(ttl, d.expires.Sub(now))
		switch d.kind {
		case notACut:
		case redirected:
			redirect = true
		case failed:
			if d.status == StatusBogus {
				step := ZoneStep{Zone: cand, Status: StatusBogus, Error: d.err.Error()}
				var be *bogusError
				if errors.As(d.err, &be) {
					step.BogusReason = be.reason
				}
				a.chain = append(a.chain, step)
			}
			a.fail(d.status, d.err)
			return a, ttl
		case nonexistent:
			a.status, a.exists, a.proof = StatusSecure, ExistsNo, d.denial.proof
			if d.denial.insecure {
				a.status = StatusInsecure
			}
			return a, ttl
		case insecureCut:
			a.chain = append(a.chain, ZoneStep{Zone: cand, Status: StatusInsecure, Denial: d.denial.proof})
			insecure, insecureZone = true, cand
		case secureCut:
			zs := v.zoneKeys(ctx, cand, d.ds)
			ttl = min(ttl, zs.expires.Sub(now))
			a.chain = append(a.chain, zs.step)
			switch zs.step.Status {
			case StatusSecure:
				cur = zs
			case StatusInsecure:
				insecure, insecureZone = true, cand
			default:
				a.fail(zs.step.Status, zs.err)
				return a, ttl
			}
		}
	}

	msg, err := v.client.query(ctx, name, qtype)
	if err != nil {
		a.fail(StatusIndeterminate, err)
		return a, 0
	}
	if msg.Rcode != dns.RcodeSuccess && msg.Rcode != dns.RcodeNameError {
		a.fail(StatusIndeterminate, fmt.Errorf("%w: %s %s answered %s", ErrResolver, dns.TypeToString[qtype], name, dns.RcodeToString[msg.Rcode]))
		return a, 0
	}
	answers := collect(msg.Answer)
	zone := cur.keys.zone
	if insecure {
		zone = insecureZone
	}
	if dn := dnameFor(answers, zone, name); dn != nil {
		return v.judgeDNAME(msg, answers, dn, cur, insecure, a, name, ttl)
	}
	set := findSet(answers, name, qtype)
	if cn := findSet(answers, name, dns.TypeCNAME); set == nil && cn != nil {
		set = cn
		a.cname = dns.CanonicalName(cn.rrs[0].(*dns.CNAME).Target)
	}

	if insecure {
		a.status = StatusInsecure
		if set != nil && a.cname == "" {
			a.rrs = set.rrs
		}
		switch {
		case set != nil || msg.Rcode == dns.RcodeSuccess:
			a.exists = ExistsYes
		default:
			a.exists, a.proof = ExistsNo, ProofNone
		}
		return a, ttl
	}

	if set != nil {
		// A wildcard answer needs the proof that the name itself does not
		// exist; authenticate asks for it.
		ins, sttl, err := v.authenticate(msg, set, cur)
		if err != nil {
			a.cname = ""
			a.fail(StatusBogus, err)
			return a, ttl
		}
		ttl = min(ttl, sttl)
		a.status, a.exists = StatusSecure, ExistsYes
		if ins {
			a.status = StatusInsecure
		}
		if a.cname == "" {
			a.rrs = set.rrs
		}
		return a, ttl
	}

	p, pttl, err := v.proofs(msg, cur)
	if err != nil {
		a.fail(StatusBogus, err)
		return a, ttl
	}
	ttl = min(ttl, pttl)
	if msg.Rcode == dns.RcodeNameError {
		dn, err := p.proveNXDomain(name)
		if err != nil {
			a.fail(StatusBogus, bogus(BogusMissingDenial, "NXDOMAIN for %s: %v", name, err))
			return a, ttl
		}
		a.status, a.exists, a.proof = StatusSecure, ExistsNo, dn.proof
		if dn.insecure {
			a.status = StatusInsecure
		}
		return a, ttl
	}
	dn, err := p.proveNoData(name, qtype)
	if err != nil {
		a.fail(StatusBogus, bogus(BogusMissingDenial, "no %s for %s: %v", dns.TypeToString[qtype], name, err))
		return a, ttl
	}
	a.status, a.exists = StatusSecure, ExistsYes
	if dn.nxname {
		a.exists, a.proof = ExistsNo, dn.proof
	}
	if dn.insecure {
		a.status = StatusInsecure
	}
	return a, ttl
}

// judgeDNAME judges a name below a DNAME (RFC 6672 section 5.3.1): the
// DNAME RRset is validated like any other, the CNAME synthesized from it
// is unsigned and accepted only when it is exactly the one the DNAME
// synthesizes (owner the name, target the name with the DNAME's owner
// suffix replaced by its target), and the target is then followed as a
// CNAME's is. An answer that carries the DNAME without the CNAME is
// followed the same way. Below an unsigned delegation nothing can be
// authenticated, so the DNAME's target is followed and the name is
// insecure.
func (v *Validator) judgeDNAME(msg *dns.Msg, answers []*rrset, dn *rrset, cur *zoneState, insecure bool, a *nameAnswer, name string, ttl time.Duration) (*nameAnswer, time.Duration) {
	a.status = StatusSecure
	if insecure {
		a.status = StatusInsecure
	} else {
		ins, dttl, err := v.authenticate(msg, dn, cur)
		if err != nil {
			a.fail(StatusBogus, err)
			return a, ttl
		}
		ttl = min(ttl, dttl)
		if ins {
			a.status = StatusInsecure
		}
	}
	target, err := dnameTarget(dn, name)
	if err != nil {
		if insecure {
			a.fail(StatusIndeterminate, err)
		} else {
			a.fail(StatusBogus, bogus(BogusDNAMESynthesis, "%v", err))
		}
		return a, ttl
	}
	if cn := findSet(answers, name, dns.TypeCNAME); cn != nil && !insecure {
		for _, rr := range cn.rrs {
			if got := dns.CanonicalName(rr.(*dns.CNAME).Target); len(cn.rrs) != 1 || got != target {
				a.fail(StatusBogus, bogus(BogusDNAMESynthesis, "the CNAME %s -> %s is not the one DNAME %s -> %s synthesizes (%s -> %s)",
					strings.TrimSuffix(name, "."), strings.TrimSuffix(got, "."), strings.TrimSuffix(dn.name, "."),
					strings.TrimSuffix(dns.CanonicalName(dn.rrs[0].(*dns.DNAME).Target), "."),
					strings.TrimSuffix(name, "."), strings.TrimSuffix(target, ".")))
				return a, ttl
			}
		}
	}
	a.exists, a.cname = ExistsYes, target
	return a, ttl
}
