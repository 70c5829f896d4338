package dnssec

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/miekg/dns"
)

// maxNSEC3Iterations is the most NSEC3 hash iterations a proof may use and
// still count as secure. RFC 9276 section 3.2 lets validators treat higher
// counts as insecure, which bounds the hashing work an attacker can cause;
// 150 is the limit Unbound and BIND use.
const maxNSEC3Iterations = 150

// typeNXNAME is the NXNAME pseudo-type of compact denial of existence (RFC
// 9824): an NSEC at the name whose bitmap holds it says the name does not
// exist, although the RCODE is NOERROR.
const typeNXNAME = 128

// denial is a proven negative answer.
type denial struct {
	proof Proof
	// insecure: the proof holds but does not authenticate the answer (an
	// opt-out span, or too many NSEC3 iterations).
	insecure bool
	// cut: for a DS question, the name is a delegation without DS, or may
	// be one (opt-out): everything below it is insecure.
	cut bool
	// nxname: a compact denial (RFC 9824) shows the name does not exist.
	nxname bool
}

// proofs are the validated NSEC and NSEC3 records of one zone from a
// response's authority section.
type proofs struct {
	zone   string
	nsec   []*dns.NSEC
	nsec3  []*dns.NSEC3
	hashes map[string]string // name -> NSEC3 hash, memoised
}

func hasType(bitmap []uint16, t uint16) bool { return slices.Contains(bitmap, t) }

// proveNoData checks that name exists but has no qtype RRset (RFC 4035
// section 5.4 and RFC 5155 sections 8.5 to 8.7).
func (p *proofs) proveNoData(name string, qtype uint16) (denial, error) {
	if len(p.nsec) > 0 {
		return p.nsecNoData(name, qtype)
	}
	if len(p.nsec3) > 0 {
		return p.nsec3NoData(name, qtype)
	}
	return denial{}, errors.New("no NSEC or NSEC3 records")
}

// proveNXDomain checks that name does not exist, and that no wildcard could
// have answered for it (RFC 4035 section 5.4, RFC 5155 section 8.4).
func (p *proofs) proveNXDomain(name string) (denial, error) {
	if len(p.nsec) > 0 {
		return p.nsecNXDomain(name)
	}
	if len(p.nsec3) > 0 {
		return p.nsec3NXDomain(name)
	}
	return denial{}, errors.New("no NSEC or NSEC3 records")
}

// proveWildcard checks that name itself does not exist, as a wildcard
// answer requires; ce is the wildcard's closest encloser (the source of
// synthesis minus its "*" label).
func (p *proofs) proveWildcard(name, ce string) (denial, error) {
	for _, n := range p.nsec {
		if nsecCovers(n, name) {
			return denial{proof: ProofNSEC}, nil
		}
	}
	if len(p.nsec3) > 0 {
		if err := p.nsec3Params(); err != nil {
			return denial{}, err
		}
		if c := p.nsec3Cover(nextCloser(name, ce)); c != nil {
			return p.nsec3Denial(c.Flags&1 == 1), nil
		}
	}
	return denial{}, fmt.Errorf("nothing proves that %s does not exist, as its wildcard answer requires", name)
}

// --- NSEC ---

func (p *proofs) nsecNoData(name string, qtype uint16) (denial, error) {
	for _, n := range p.nsec {
		if dns.CanonicalName(n.Hdr.Name) != name {
			continue
		}
		if hasType(n.TypeBitMap, typeNXNAME) {
			return denial{proof: ProofNSEC, nxname: true}, nil
		}
		if hasType(n.TypeBitMap, qtype) || hasType(n.TypeBitMap, dns.TypeCNAME) {
			return denial{}, fmt.Errorf("NSEC at %s lists %s or CNAME", name, dns.TypeToString[qtype])
		}
		delegation := hasType(n.TypeBitMap, dns.TypeNS) && !hasType(n.TypeBitMap, dns.TypeSOA)
		if qtype != dns.TypeDS && delegation {
			return denial{}, fmt.Errorf("NSEC at %s is from the parent side of a delegation", name)
		}
		return denial{proof: ProofNSEC, cut: qtype == dns.TypeDS && delegation}, nil
	}
	for _, n := range p.nsec {
		// An empty non-terminal: the next name is below it.
		next := dns.CanonicalName(n.NextDomain)
		if nsecCovers(n, name) && next != name && dns.IsSubDomain(name, next) {
			return denial{proof: ProofNSEC}, nil
		}
	}
	for _, n := range p.nsec {
		if !nsecCovers(n, name) {
			continue
		}
		// Wildcard NODATA: name does not exist, the wildcard does, and
		// has no qtype.
		wc := wildcardOf(nsecClosestEncloser(name, n))
		for _, w := range p.nsec {
			if dns.CanonicalName(w.Hdr.Name) == wc && !hasType(w.TypeBitMap, qtype) && !hasType(w.TypeBitMap, dns.TypeCNAME) {
				return denial{proof: ProofNSEC}, nil
			}
		}
	}
	return denial{}, fmt.Errorf("no NSEC proves that %s has no %s", name, dns.TypeToString[qtype])
}

func (p *proofs) nsecNXDomain(name string) (denial, error) {
	for _, n := range p.nsec {
		if !nsecCovers(n, name) {
			continue
		}
		next := dns.CanonicalName(n.NextDomain)
		if next != name && dns.IsSubDomain(name, next) {
			return denial{}, fmt.Errorf("NSEC %s -> %s shows %s is an empty non-terminal", n.Hdr.Name, next, name)
		}
		owner := dns.CanonicalName(n.Hdr.Name)
		if dns.IsSubDomain(owner, name) && owner != p.zone &&
			((hasType(n.TypeBitMap, dns.TypeNS) && !hasType(n.TypeBitMap, dns.TypeSOA)) || hasType(n.TypeBitMap, dns.TypeDNAME)) {
			return denial{}, fmt.Errorf("NSEC at %s is a delegation or DNAME above %s", owner, name)
		}
		wc := wildcardOf(nsecClosestEncloser(name, n))
		for _, w := range p.nsec {
			if dns.CanonicalName(w.Hdr.Name) == wc {
				return denial{}, fmt.Errorf("wildcard %s exists", wc)
			}
		}
		for _, w := range p.nsec {
			if nsecCovers(w, wc) {
				return denial{proof: ProofNSEC}, nil
			}
		}
		return denial{}, fmt.Errorf("no NSEC proves that wildcard %s does not exist", wc)
	}
	return denial{}, fmt.Errorf("no NSEC covers %s", name)
}

// nsecCovers reports whether name falls strictly between an NSEC's owner and
// next name in canonical order; the last NSEC of a zone wraps to the apex.
func nsecCovers(n *dns.NSEC, name string) bool {
	owner, next := n.Hdr.Name, n.NextDomain
	if canonicalCompare(owner, name) >= 0 {
		return false
	}
	if canonicalCompare(next, owner) <= 0 {
		return true
	}
	return canonicalCompare(name, next) < 0
}

// nsecClosestEncloser is the closest encloser of a nonexistent name as a
// covering NSEC shows it: the longest ancestor shared with the NSEC's owner
// or next name.
func nsecClosestEncloser(name string, n *dns.NSEC) string {
	a := dns.CompareDomainName(name, n.Hdr.Name)
	b := dns.CompareDomainName(name, n.NextDomain)
	return ancestor(name, max(a, b))
}

// --- NSEC3 ---

func (p *proofs) nsec3Params() error {
	first := p.nsec3[0]
	for _, n := range p.nsec3 {
		if n.Hash != dns.SHA1 {
			return fmt.Errorf("NSEC3 hash algorithm %d is not supported", n.Hash)
		}
		if n.Iterations != first.Iterations || !strings.EqualFold(n.Salt, first.Salt) {
			return errors.New("NSEC3 records with different parameters")
		}
	}
	return nil
}

func (p *proofs) hash(name string) string {
	if h, ok := p.hashes[name]; ok {
		return h
	}
	n := p.nsec3[0]
	h := dns.HashName(name, n.Hash, n.Iterations, n.Salt)
	if p.hashes == nil {
		p.hashes = map[string]string{}
	}
	p.hashes[name] = h
	return h
}

func nsec3OwnerHash(n *dns.NSEC3) string {
	owner := n.Hdr.Name
	idx := dns.Split(owner)
	if len(idx) < 2 {
		return ""
	}
	return strings.ToUpper(owner[:idx[1]-1])
}

func (p *proofs) nsec3Match(name string) *dns.NSEC3 {
	h := p.hash(name)
	for _, n := range p.nsec3 {
		if nsec3OwnerHash(n) == h {
			return n
		}
	}
	return nil
}

// nsec3Cover returns the NSEC3 whose hash interval strictly contains the
// hash of name.
func (p *proofs) nsec3Cover(name string) *dns.NSEC3 {
	h := p.hash(name)
	for _, n := range p.nsec3 {
		owner, next := nsec3OwnerHash(n), strings.ToUpper(n.NextDomain)
		switch {
		case owner == next: // a single record covers everything else
			if h != owner {
				return n
			}
		case owner < next:
			if owner < h && h < next {
				return n
			}
		default: // the last record wraps around
			if h > owner || h < next {
				return n
			}
		}
	}
	return nil
}

func (p *proofs) nsec3Denial(optOut bool) denial {
	d := denial{proof: ProofNSEC3}
	if optOut {
		d.proof, d.insecure = ProofNSEC3OptOut, true
	}
	if p.nsec3[0].Iterations > maxNSEC3Iterations {
		d.insecure = true
	}
	return d
}

// closestEncloserProof finds the closest provable encloser of name (RFC
// 5155 section 8.3): the longest ancestor with a matching NSEC3 whose next
// closer name is covered.
func (p *proofs) closestEncloserProof(name string) (ce string, cover *dns.NSEC3, err error) {
	for ce = parentName(name); dns.IsSubDomain(p.zone, ce); ce = parentName(ce) {
		m := p.nsec3Match(ce)
		if m != nil {
			if ce != p.zone && ((hasType(m.TypeBitMap, dns.TypeNS) && !hasType(m.TypeBitMap, dns.TypeSOA)) || hasType(m.TypeBitMap, dns.TypeDNAME)) {
				return "", nil, fmt.Errorf("closest encloser %s is a delegation or DNAME", ce)
			}
			c := p.nsec3Cover(nextCloser(name, ce))
			if c == nil {
				return "", nil, fmt.Errorf("no NSEC3 covers next closer name %s", nextCloser(name, ce))
			}
			return ce, c, nil
		}
		if ce == p.zone || ce == "." {
			break
		}
	}
	return "", nil, fmt.Errorf("no NSEC3 proves a closest encloser of %s", name)
}

func (p *proofs) nsec3NoData(name string, qtype uint16) (denial, error) {
	if err := p.nsec3Params(); err != nil {
		return denial{}, err
	}
	if m := p.nsec3Match(name); m != nil {
		if hasType(m.TypeBitMap, qtype) || hasType(m.TypeBitMap, dns.TypeCNAME) {
			return denial{}, fmt.Errorf("NSEC3 for %s lists %s or CNAME", name, dns.TypeToString[qtype])
		}
		delegation := hasType(m.TypeBitMap, dns.TypeNS) && !hasType(m.TypeBitMap, dns.TypeSOA)
		if qtype != dns.TypeDS && delegation {
			return denial{}, fmt.Errorf("NSEC3 for %s is from the parent side of a delegation", name)
		}
		d := p.nsec3Denial(false)
		d.cut = qtype == dns.TypeDS && delegation
		return d, nil
	}
	ce, cover, err := p.closestEncloserProof(name)
	if err != nil {
		return denial{}, err
	}
	// RFC 5155 section 8.6: no DS, and an opt-out span covers the name, so
	// an unsigned delegation may be there.
	if qtype == dns.TypeDS && cover.Flags&1 == 1 {
		d := p.nsec3Denial(true)
		d.cut = true
		return d, nil
	}
	// Section 8.7: the wildcard answers, without qtype.
	if w := p.nsec3Match(wildcardOf(ce)); w != nil && !hasType(w.TypeBitMap, qtype) && !hasType(w.TypeBitMap, dns.TypeCNAME) {
		return p.nsec3Denial(cover.Flags&1 == 1), nil
	}
	return denial{}, fmt.Errorf("no NSEC3 proves that %s has no %s", name, dns.TypeToString[qtype])
}

func (p *proofs) nsec3NXDomain(name string) (denial, error) {
	if err := p.nsec3Params(); err != nil {
		return denial{}, err
	}
	if p.nsec3Match(name) != nil {
		return denial{}, fmt.Errorf("NSEC3 shows %s exists", name)
	}
	ce, cover, err := p.closestEncloserProof(name)
	if err != nil {
		return denial{}, err
	}
	wc := wildcardOf(ce)
	if p.nsec3Match(wc) != nil {
		return denial{}, fmt.Errorf("wildcard %s exists", wc)
	}
	if p.nsec3Cover(wc) == nil {
		return denial{}, fmt.Errorf("no NSEC3 proves that wildcard %s does not exist", wc)
	}
	return p.nsec3Denial(cover.Flags&1 == 1), nil
}

// --- names ---

// parentName returns the name one label up; the root's parent is the root.
func parentName(n string) string {
	idx := dns.Split(n)
	if len(idx) <= 1 {
		return "."
	}
	return n[idx[1]:]
}

// ancestor returns the ancestor of name with k labels.
func ancestor(name string, k int) string {
	idx := dns.Split(name)
	if k <= 0 {
		return "."
	}
	if k >= len(idx) {
		return name
	}
	return name[idx[len(idx)-k]:]
}

// nextCloser is the ancestor of name one label longer than ce.
func nextCloser(name, ce string) string {
	return ancestor(name, dns.CountLabel(ce)+1)
}

func wildcardOf(ce string) string {
	if ce == "." {
		return "*."
	}
	return "*." + ce
}

// canonicalCompare orders names as RFC 4034 section 6.1 does: label by
// label from the right, each compared as lower-cased octets.
func canonicalCompare(a, b string) int {
	la, lb := wireLabels(a), wireLabels(b)
	for i := 0; i < len(la) && i < len(lb); i++ {
		if c := strings.Compare(la[len(la)-1-i], lb[len(lb)-1-i]); c != 0 {
			return c
		}
	}
	return len(la) - len(lb)
}

// wireLabels returns a name's labels as octets (escapes resolved), with
// ASCII letters lower-cased.
func wireLabels(n string) []string {
	var buf [256]byte
	off, err := dns.PackDomainName(dns.Fqdn(n), buf[:], 0, nil, false)
	if err != nil {
		return []string{n}
	}
	var out []string
	for i := 0; i < off && buf[i] != 0; {
		l := int(buf[i])
		b := buf[i+1 : i+1+l]
		for j, c := range b {
			if c >= 'A' && c <= 'Z' {
				b[j] = c + 'a' - 'A'
			}
		}
		out = append(out, string(b))
		i += 1 + l
	}
	return out
}
