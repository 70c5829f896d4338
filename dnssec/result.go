package dnssec

import "time"

// RunStatus says whether a validation run could judge anything at all.
type RunStatus string

const (
	// RunObserved means the trust anchor's keys were fetched and validated,
	// so every domain result is a judgement (which may itself be
	// indeterminate for one domain).
	RunObserved RunStatus = "observed"
	// RunUnavailable means the anchor's keys could not be fetched and
	// validated (no resolver answered, or it filtered or stripped the
	// DNSSEC data), so no domain was judged. It is never a finding about a
	// domain.
	RunUnavailable RunStatus = "unavailable"
)

// Status is the DNSSEC state of one domain or one zone, as RFC 4035
// section 4.3 defines the four states.
type Status string

const (
	// StatusSecure means an unbroken chain of signatures from the trust
	// anchor authenticates the answer (including a denial of existence).
	StatusSecure Status = "secure"
	// StatusInsecure means the chain proves that the name lies below an
	// unsigned delegation (or an NSEC3 opt-out span): the answer cannot be
	// authenticated and is not claimed to be.
	StatusInsecure Status = "insecure"
	// StatusBogus means the data should be signed but the signatures or
	// proofs do not check out; BogusReason says how.
	StatusBogus Status = "bogus"
	// StatusIndeterminate means the resolver failed (timeout, SERVFAIL,
	// refused) before the chain could be judged.
	StatusIndeterminate Status = "indeterminate"
)

// BogusReason says why data is bogus.
type BogusReason string

const (
	// BogusBadSignature: a signature by the right key does not verify
	// (the data or the signature was altered).
	BogusBadSignature BogusReason = "bad_signature"
	// BogusSignatureExpired and BogusSignatureNotYetValid: the only
	// signatures by the right key are outside their validity period at
	// the validator's clock.
	BogusSignatureExpired     BogusReason = "signature_expired"
	BogusSignatureNotYetValid BogusReason = "signature_not_yet_valid"
	// BogusNoMatchingDNSKEY: the parent's DS (or the anchor) matches none
	// of the zone's DNSKEYs.
	BogusNoMatchingDNSKEY BogusReason = "no_dnskey_matching_ds"
	// BogusMissingRRSIG: an RRset that must be signed came without a
	// signature by a key of its zone.
	BogusMissingRRSIG BogusReason = "missing_rrsig"
	// BogusMissingDNSKEY: the parent has a DS but the zone answers with no
	// DNSKEY RRset.
	BogusMissingDNSKEY BogusReason = "missing_dnskey"
	// BogusMissingDenial: a negative answer (NXDOMAIN, NODATA, no DS) from
	// a signed zone without a valid NSEC or NSEC3 proof.
	BogusMissingDenial BogusReason = "missing_denial_proof"
	// BogusRevokedDNSKEY: the only DNSKEYs the parent's DS (or the anchor)
	// points at are published with the REVOKE bit set (RFC 5011 section
	// 2.1), so they authenticate nothing.
	BogusRevokedDNSKEY BogusReason = "dnskey_revoked"
	// BogusDNAMESynthesis: a name below a validated DNAME came with a
	// CNAME that is not the one the DNAME synthesizes (RFC 6672 section
	// 5.3.1). That CNAME is unsigned, so anyone on the path can write it.
	BogusDNAMESynthesis BogusReason = "dname_synthesis_mismatch"
)

// Existence says whether a name exists.
type Existence string

const (
	// ExistsYes: the name has data or is an empty non-terminal (NOERROR).
	ExistsYes Existence = "yes"
	// ExistsNo: NXDOMAIN. When Status is secure the denial was proven by
	// NSEC or NSEC3; when insecure it was not (or could not be)
	// authenticated. For an email domain anyone may register it.
	ExistsNo Existence = "no"
	// ExistsUnknown: the answer was bogus or the resolver failed.
	ExistsUnknown Existence = "unknown"
)

// Proof is how a negative answer was proven.
type Proof string

const (
	// ProofNSEC and ProofNSEC3: a signed NSEC or NSEC3 proof.
	ProofNSEC  Proof = "nsec"
	ProofNSEC3 Proof = "nsec3"
	// ProofNSEC3OptOut: an NSEC3 opt-out span covers the name, which
	// proves only that no signed delegation exists there, so the denial is
	// insecure.
	ProofNSEC3OptOut Proof = "nsec3_optout"
	// ProofNone: the zone is unsigned, so there is nothing to prove with.
	ProofNone Proof = "none"
)

// Result is one validation run over a list of domains.
type Result struct {
	Status RunStatus `json:"status"`
	// Reason says why a run is unavailable.
	Reason    string         `json:"reason,omitempty"`
	Resolver  string         `json:"resolver"`
	Anchor    AnchorInfo     `json:"anchor"`
	CheckedAt time.Time      `json:"checked_at"`
	Domains   []DomainResult `json:"domains"`
}

// AnchorInfo describes the trust anchor a run started from.
type AnchorInfo struct {
	Zone    string   `json:"zone"`
	KeyTags []uint16 `json:"key_tags"`
	Source  string   `json:"source"`
}

// DomainResult is the judgement on one domain.
type DomainResult struct {
	Name    string   `json:"name"`
	Sources []Source `json:"sources"`
	Status  Status   `json:"status"`
	// BogusReason is set when Status is bogus.
	BogusReason BogusReason `json:"bogus_reason,omitempty"`
	Exists      Existence   `json:"exists"`
	// NXDomainProof says how nonexistence was proven when Exists is "no",
	// or when the name's CNAME chain ends at a name that does not exist
	// (DanglingCNAME).
	NXDomainProof Proof `json:"nxdomain_proof,omitempty"`
	// CNAMEs are the targets followed from Name, in order, including the
	// CNAMEs a DNAME synthesized.
	CNAMEs []string `json:"cnames,omitempty"`
	// DanglingCNAME: Name is a CNAME whose chain ends at a name that does
	// not exist.
	DanglingCNAME bool `json:"dangling_cname,omitempty"`
	// Chain lists the zones from the anchor down to the zone that holds
	// Name (and then those of the CNAME targets), each with its state.
	Chain []ZoneStep `json:"chain"`
	// Error explains a bogus or indeterminate result.
	Error string `json:"error,omitempty"`
}

// ZoneStep is one zone on a chain of trust.
type ZoneStep struct {
	// Zone is the zone's name, fully qualified.
	Zone        string      `json:"zone"`
	Status      Status      `json:"status"`
	BogusReason BogusReason `json:"bogus_reason,omitempty"`
	// DSKeyTags are the key tags of the DS records (or the anchor) the
	// parent published for this zone.
	DSKeyTags []uint16 `json:"ds_key_tags,omitempty"`
	// KeyTags and Algorithms (DNSSEC algorithm numbers: 8 RSA/SHA-256,
	// 13 ECDSA P-256, 15 Ed25519, ...) describe the zone's DNSKEY RRset.
	// Algorithms are ints so that JSON shows numbers, not base64.
	KeyTags    []uint16 `json:"key_tags,omitempty"`
	Algorithms []int    `json:"algorithms,omitempty"`
	// Denial says how the absence of a DS was proven for an insecure
	// delegation.
	Denial Proof  `json:"ds_denial,omitempty"`
	Error  string `json:"error,omitempty"`
}
