// Package dnssec validates DNSSEC chains of trust for the domains a package
// leans on (its homepage, repository and author URL hosts, its maintainers'
// email domains, its MCP registry namespace), from configured trust anchors,
// without trusting any resolver's AD bit.
//
// # Model
//
// A Validator asks one configured recursive resolver (never the system
// resolver) for raw DNSSEC data: every query carries the DO bit, so the
// resolver returns RRSIG, NSEC and NSEC3 records, and the CD bit, so that a
// validating resolver hands over data it considers bogus for us to judge
// rather than a SERVFAIL. Truncated UDP answers are asked again over TCP;
// each query attempt has a timeout.
//
// Validation is top down. The trust anchor (by default the embedded IANA
// root KSK-2017 and KSK-2024 DS records; any zone's DS or DNSKEY records
// from a file instead) authenticates the anchor zone's DNSKEY RRset. Then,
// for each label between the anchor and the domain, the current zone is
// asked for the next name's DS RRset:
//
//   - a signed DS RRset is a secure delegation: the child's DNSKEY RRset
//     must contain a key matching one of the DS digests and be signed by
//     it, and the child's keys become the current keys;
//   - a signed NSEC or NSEC3 proof that the name is a delegation without DS
//     (or an NSEC3 opt-out span that covers it) is an insecure delegation:
//     everything below is insecure;
//   - a proof that the name has no DS and is no delegation means it is in
//     the current zone; the walk goes on;
//   - a proven NXDOMAIN ends the walk: the domain does not exist.
//
// Finally the domain's A RRset is asked for, to learn whether the name
// exists: an answer or a proven NODATA (the name exists with other types,
// or is an empty non-terminal) means it exists; a proven NXDOMAIN means it
// does not, which for an email domain means anyone may register it. A CNAME
// is validated in its zone and its target judged the same way from the
// anchor (into other zones, up to 8 names); the domain's status is the
// weakest link.
//
// A name below a DNAME (RFC 6672) is judged as BIND, Unbound and delv
// judge it: the DNAME RRset is validated in its zone, and the unsigned CNAME
// a server synthesizes from it is accepted only when it is exactly the one
// the DNAME synthesizes (owner the name, target the name with the DNAME's
// owner suffix replaced by its target, section 5.3.1); any other CNAME
// beside a validated DNAME is bogus (dname_synthesis_mismatch), since anyone
// on the path can write an unsigned record. When the answer has the DNAME
// without the CNAME the validator synthesizes it. The target is then
// followed as a CNAME's, and listed among the CNAMEs. A DNAME's owner
// itself is not redirected.
//
// A key with the REVOKE bit set (RFC 5011) authenticates nothing. When no
// DS matches a key that is not revoked but one matches a revoked key (as
// published, or as the key was before the bit was set, which is what a
// parent that has not caught up with a key roll still holds), the zone is
// bogus with the reason dnskey_revoked rather than no_dnskey_matching_ds,
// and the error names the DS's key tag and the revoked key's.
//
// Every signature is checked cryptographically (RSA/SHA-1, RSA/SHA-256,
// RSA/SHA-512, ECDSA P-256 and P-384, Ed25519) and against its validity
// period at the configured clock, which miekg/dns's RRSIG.Verify leaves to
// the caller. Denials follow RFC 4035 section 5.4 (NSEC) and RFC 5155
// section 8 (NSEC3, including opt-out, which only ever yields insecure);
// wildcard answers must come with a proof that the name itself does not
// exist.
//
// Each domain ends in one of four states: secure, insecure, bogus (with a
// BogusReason) or indeterminate (the resolver failed). When the anchor
// zone's own keys cannot be fetched and validated, because no resolver
// answered or because it filters or strips DNSSEC data, nothing below can
// be judged: the Result is RunUnavailable with a reason, and no domain is
// reported as insecure or bogus.
//
// A Validator caches validated zone keys, delegations and per-name answers
// in memory, for no longer than their TTLs, signature expirations and
// Config.MaxCacheTTL allow, bounded in entries; bogus outcomes are kept for
// a minute, resolver failures not at all. It is safe for concurrent use, and
// Validate checks domains concurrently up to Config.Concurrency.
//
// Not supported: Ed448 and GOST (treated as unsupported algorithms, so such
// zones are insecure, as RFC 4035 section 5.2 says), and internationalised
// names (Domains skips them).
//
// The types are plain JSON-tagged structs meant to be copied into an
// evidence bundle; the package does no scoring.
package dnssec
