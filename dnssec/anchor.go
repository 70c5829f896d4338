package dnssec

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/miekg/dns"
)

// ErrBadAnchor is wrapped by the errors of ParseAnchor, LoadAnchor and New
// when a trust anchor is unusable.
var ErrBadAnchor = errors.New("bad trust anchor")

// Anchor is a trust anchor: the DS records that vouch for the keys of one
// zone, from which every chain of trust starts.
type Anchor struct {
	// Zone is the anchored zone, a fully qualified name ("." for the root).
	Zone string
	// DS are the anchor's digests. DNSKEY anchors are held as their
	// SHA-256 DS, which matches exactly the same key.
	DS []*dns.DS
	// Source says where the anchor came from, for the report.
	Source string
}

// rootAnchorText is the IANA root zone trust anchor, as published in
// https://data.iana.org/root-anchors/root-anchors.xml: KSK-2017 (key tag
// 20326) and KSK-2024 (key tag 38696), both RSA/SHA-256 with SHA-256
// digests.
const rootAnchorText = `
. IN DS 20326 8 2 E06D44B80B8F1D39A95C0B0D7C65D08458E880409BBC683457104237C7F8EC8D
. IN DS 38696 8 2 683D2D0ACB8C9B712A1948B27F741219298D0A450D612C483AF444A4C0FB2B16
`

// RootSource is the Source of RootAnchor.
const RootSource = "embedded:iana-root-anchors"

// RootAnchor returns the embedded IANA root trust anchor.
func RootAnchor() Anchor {
	a, err := ParseAnchor(strings.NewReader(rootAnchorText), RootSource)
	if err != nil {
		panic("dnssec: embedded root anchor: " + err.Error())
	}
	return a
}

// LoadAnchor reads a trust anchor from a zone file of DS or DNSKEY records
// (see ParseAnchor).
func LoadAnchor(path string) (Anchor, error) {
	f, err := os.Open(path)
	if err != nil {
		return Anchor{}, fmt.Errorf("load trust anchor: %w", err)
	}
	defer f.Close()
	return ParseAnchor(f, path)
}

// ParseAnchor reads a trust anchor in zone-file syntax: DS records, DNSKEY
// records, or both, all owned by the one zone they anchor. Relative names
// are relative to the root. DNSKEY records must be zone keys; they are
// converted to SHA-256 DS records. Source is kept for the report.
func ParseAnchor(r io.Reader, source string) (Anchor, error) {
	a := Anchor{Source: source}
	zp := dns.NewZoneParser(r, ".", source)
	for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
		owner := dns.CanonicalName(rr.Header().Name)
		if a.Zone == "" {
			a.Zone = owner
		} else if owner != a.Zone {
			return Anchor{}, fmt.Errorf("%w: %s: records for both %s and %s", ErrBadAnchor, source, a.Zone, owner)
		}
		switch rr := rr.(type) {
		case *dns.DS:
			a.DS = append(a.DS, rr)
		case *dns.DNSKEY:
			if rr.Flags&dns.ZONE == 0 {
				return Anchor{}, fmt.Errorf("%w: %s: DNSKEY %d is not a zone key", ErrBadAnchor, source, rr.KeyTag())
			}
			ds := rr.ToDS(dns.SHA256)
			if ds == nil {
				return Anchor{}, fmt.Errorf("%w: %s: DNSKEY %d cannot be digested", ErrBadAnchor, source, rr.KeyTag())
			}
			a.DS = append(a.DS, ds)
		default:
			return Anchor{}, fmt.Errorf("%w: %s: %s record, want DS or DNSKEY", ErrBadAnchor, source, dns.TypeToString[rr.Header().Rrtype])
		}
	}
	if err := zp.Err(); err != nil {
		return Anchor{}, fmt.Errorf("%w: %s: %w", ErrBadAnchor, source, err)
	}
	if len(a.DS) == 0 {
		return Anchor{}, fmt.Errorf("%w: %s: no DS or DNSKEY records", ErrBadAnchor, source)
	}
	return a, nil
}

// check reports whether an anchor can be used.
func (a Anchor) check() error {
	if a.Zone == "" || len(a.DS) == 0 {
		return fmt.Errorf("%w: no zone or no DS records", ErrBadAnchor)
	}
	if _, ok := dns.IsDomainName(a.Zone); !ok {
		return fmt.Errorf("%w: zone %q is not a domain name", ErrBadAnchor, a.Zone)
	}
	for _, ds := range a.DS {
		if dns.CanonicalName(ds.Hdr.Name) != dns.CanonicalName(a.Zone) {
			return fmt.Errorf("%w: DS owned by %s, anchor zone is %s", ErrBadAnchor, ds.Hdr.Name, a.Zone)
		}
	}
	return nil
}

func (a Anchor) keyTags() []uint16 {
	tags := make([]uint16, 0, len(a.DS))
	for _, ds := range a.DS {
		tags = append(tags, ds.KeyTag)
	}
	return tags
}
