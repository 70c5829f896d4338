package mcpb

import (
	"bytes"
	"crypto"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/big"
	"time"

	_ "crypto/sha512" // registers SHA-384 and SHA-512 for crypto.Hash.New
)

// The signature block mcpb sign appends to a bundle (src/node/sign.ts,
// createSignatureBlock): MCPB_SIG_V1, the length of the PKCS#7 data as a
// little-endian uint32, the PKCS#7 data (DER), MCPB_SIG_END. The PKCS#7
// data is a detached SignedData over every byte before the block, made by
// node-forge with SHA-256 and the contentType, messageDigest and
// signingTime signed attributes.
const (
	sigHeader = "MCPB_SIG_V1"
	sigFooter = "MCPB_SIG_END"
	// maxSigBlock bounds the block: a signature and its certificate chain.
	maxSigBlock = 1 << 20
)

// SignatureFormat is Signature.Format for an mcpb sign block.
const SignatureFormat = "MCPB_SIG_V1 PKCS#7 detached"

// Signature is what a bundle's signature block says and what of it holds.
type Signature struct {
	Present bool   // the bundle ends with a signature block
	Format  string // SignatureFormat
	// Verified is the signature over the bundle's content checked with
	// the signer's certificate: the content is the one that was signed.
	Verified bool
	// Trusted is the signer's certificate chained, for code signing, to
	// the roots Verify was given at its time.
	Trusted bool
	// SelfSigned is a signer certificate issued by itself: it can verify
	// the content but vouches for no one.
	SelfSigned  bool
	Signer      string    // the signer certificate's subject common name
	Issuer      string    // its issuer's common name
	NotAfter    time.Time // the end of its validity
	Fingerprint string    // sha256:HEX of its DER, as mcpb verify reports it
	// Reason says why Verified or Trusted is false.
	Reason string
}

// splitSignature is the length of the bundle's content and the PKCS#7 data
// of its signature block, nil without one. mcpb's extractSignatureBlock
// takes the last MCPB_SIG_END and the nearest MCPB_SIG_V1 before it; here
// the footer must end the file and the block's length must fit it exactly,
// so that no byte after the zip goes unexplained. A file that ends with
// the footer without such a block is ErrMalformed.
func splitSignature(r io.ReaderAt, size int64) (content int64, block []byte, err error) {
	if size < int64(len(sigHeader)+4+len(sigFooter)) {
		return size, nil, nil
	}
	tail := make([]byte, min(size, maxSigBlock+int64(len(sigHeader)+4+len(sigFooter))))
	if _, err := r.ReadAt(tail, size-int64(len(tail))); err != nil && !errors.Is(err, io.EOF) {
		return 0, nil, fmt.Errorf("mcpb: read signature block: %w", err)
	}
	if !bytes.HasSuffix(tail, []byte(sigFooter)) {
		return size, nil, nil
	}
	body := tail[:len(tail)-len(sigFooter)]
	for i := bytes.LastIndex(body, []byte(sigHeader)); i >= 0; i = bytes.LastIndex(body[:i], []byte(sigHeader)) {
		start := i + len(sigHeader) + 4
		if start > len(body) {
			continue
		}
		if n := binary.LittleEndian.Uint32(body[start-4 : start]); int64(start)+int64(n) == int64(len(body)) {
			return size - int64(len(tail)) + int64(i), bytes.Clone(body[start:]), nil
		}
	}
	return 0, nil, fmt.Errorf("%w: ends with %s without a signature block that fits", ErrMalformed, sigFooter)
}

// Verify checks the signature block against the bundle's content, and
// the signer's chain against roots (nil: the system's) at now. An
// unsigned bundle is Present false; what does not hold is in Reason,
// never an error.
//
// mcpb's own verifyMcpbFile calls node-forge's PKCS#7 verify, which throws
// "not yet implemented", so mcpb reports every bundle unsigned; this is
// the check that code means to make. It parses the CMS itself with
// encoding/asn1 rather than with go.mozilla.org/pkcs7 or its maintained
// fork github.com/smallstep/pkcs7: both re-encode the signed attributes
// before checking the signature over them, and Go's encoding/asn1 sorts a
// SET OF, while node-forge signs them in the order given (contentType,
// messageDigest, signingTime), so they reject every bundle mcpb signs
// (tested with one made by mcpb's code: crypto/rsa: verification error).
func (b *Bundle) Verify(roots *x509.CertPool, now time.Time) *Signature {
	if b.block == nil {
		return &Signature{}
	}
	s := &Signature{Present: true, Format: SignatureFormat}
	sd, err := parseSignedData(b.block)
	if err != nil {
		s.Reason = "PKCS#7: " + err.Error()
		return s
	}
	leaf := sd.signer()
	if leaf == nil {
		s.Reason = "PKCS#7: no certificate for the signer"
		return s
	}
	s.Signer, s.Issuer, s.NotAfter = name(leaf.Subject), name(leaf.Issuer), leaf.NotAfter
	fp := sha256.Sum256(leaf.Raw)
	s.Fingerprint = "sha256:" + hex.EncodeToString(fp[:])
	s.SelfSigned = bytes.Equal(leaf.RawSubject, leaf.RawIssuer) &&
		leaf.CheckSignature(leaf.SignatureAlgorithm, leaf.RawTBSCertificate, leaf.Signature) == nil
	if err := sd.verify(leaf, io.NewSectionReader(b.r, 0, b.content)); err != nil {
		s.Reason = err.Error()
		return s
	}
	s.Verified = true
	inter := x509.NewCertPool()
	for _, c := range sd.certs {
		if c != leaf {
			inter.AddCert(c)
		}
	}
	_, err = leaf.Verify(x509.VerifyOptions{
		Roots: roots, Intermediates: inter, CurrentTime: now,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning},
	})
	switch {
	case err == nil:
		s.Trusted = true
	case s.SelfSigned:
		s.Reason = "self-signed signer, not among the trusted roots"
	default:
		s.Reason = "signer not trusted: " + err.Error()
	}
	return s
}

func name(n pkix.Name) string {
	if n.CommonName != "" {
		return n.CommonName
	}
	return n.String()
}

var (
	oidSignedData    = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 2}
	oidData          = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 1}
	oidContentType   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 3}
	oidMessageDigest = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 4}
	oidSigningTime   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 5}
)

// signedData is the part of a CMS SignedData (RFC 5652, 5.1) a detached
// signature with one signer needs.
type signedData struct {
	certs     []*x509.Certificate
	issuer    []byte   // the signer's issuer, DER, with serial
	serial    *big.Int // or, instead,
	ski       []byte   // the signer's subject key identifier
	digestAlg asn1.ObjectIdentifier
	sigAlg    asn1.ObjectIdentifier
	attrs     []byte // the signed attributes, DER with the SET tag they are signed with
	sig       []byte
}

// parseSignedData reads ContentInfo{signedData, SignedData} from der.
func parseSignedData(der []byte) (*signedData, error) {
	ci, err := seq(der, true)
	if err != nil || len(ci) != 2 || !ctx(ci[1], 0) {
		return nil, errors.New("not a ContentInfo")
	}
	var oid asn1.ObjectIdentifier
	if _, err := asn1.Unmarshal(ci[0].FullBytes, &oid); err != nil || !oid.Equal(oidSignedData) {
		return nil, errors.New("not SignedData")
	}
	items, err := seq(ci[1].Bytes, false)
	if err != nil || len(items) != 1 {
		return nil, errors.New("not SignedData")
	}
	fields, err := seq(items[0].FullBytes, true)
	if err != nil || len(fields) < 4 {
		return nil, errors.New("not SignedData")
	}
	encap, err := seq(fields[2].FullBytes, true)
	if err != nil || len(encap) == 0 {
		return nil, errors.New("bad encapsulated content")
	}
	if len(encap) > 1 {
		return nil, errors.New("not detached: it carries its own content")
	}
	sd := &signedData{}
	i := 3
	if ctx(fields[i], 0) {
		if sd.certs, err = x509.ParseCertificates(fields[i].Bytes); err != nil {
			return nil, fmt.Errorf("certificates: %w", err)
		}
		i++
	}
	if i < len(fields) && ctx(fields[i], 1) {
		i++ // CRLs
	}
	if i != len(fields)-1 || fields[i].Tag != asn1.TagSet {
		return nil, errors.New("bad signerInfos")
	}
	signers, err := seq(fields[i].Bytes, false)
	if err != nil || len(signers) != 1 {
		return nil, fmt.Errorf("%d signers, not one", len(signers))
	}
	return sd, sd.parseSigner(signers[0].FullBytes)
}

// parseSigner reads a SignerInfo (RFC 5652, 5.3).
func (sd *signedData) parseSigner(der []byte) error {
	f, err := seq(der, true)
	if err != nil || len(f) < 5 {
		return errors.New("bad SignerInfo")
	}
	switch sid := f[1]; {
	case ctx(sid, 0):
		sd.ski = sid.Bytes
	case sid.Tag == asn1.TagSequence:
		ias, err := seq(sid.FullBytes, true)
		if err != nil || len(ias) != 2 {
			return errors.New("bad signer identifier")
		}
		sd.issuer, sd.serial = ias[0].FullBytes, new(big.Int)
		if _, err := asn1.Unmarshal(ias[1].FullBytes, &sd.serial); err != nil {
			return errors.New("bad signer serial number")
		}
	default:
		return errors.New("bad signer identifier")
	}
	var alg pkix.AlgorithmIdentifier
	if _, err := asn1.Unmarshal(f[2].FullBytes, &alg); err != nil {
		return errors.New("bad digest algorithm")
	}
	sd.digestAlg = alg.Algorithm
	i := 3
	if ctx(f[i], 0) {
		sd.attrs = bytes.Clone(f[i].FullBytes)
		sd.attrs[0] = 0x31 // signed as a SET OF (RFC 5652, 5.4)
		i++
	}
	if i+1 >= len(f) {
		return errors.New("bad SignerInfo")
	}
	if _, err := asn1.Unmarshal(f[i].FullBytes, &alg); err != nil {
		return errors.New("bad signature algorithm")
	}
	sd.sigAlg = alg.Algorithm
	if _, err := asn1.Unmarshal(f[i+1].FullBytes, &sd.sig); err != nil {
		return errors.New("bad signature")
	}
	return nil
}

// signer is the certificate of the signer, nil when none matches.
func (sd *signedData) signer() *x509.Certificate {
	for _, c := range sd.certs {
		if sd.ski != nil && bytes.Equal(c.SubjectKeyId, sd.ski) ||
			sd.serial != nil && bytes.Equal(c.RawIssuer, sd.issuer) && c.SerialNumber.Cmp(sd.serial) == 0 {
			return c
		}
	}
	return nil
}

// verify checks that the signed attributes say content, by its digest,
// and that leaf's key signed them (RFC 5652, 5.4 and 5.6).
func (sd *signedData) verify(leaf *x509.Certificate, content io.Reader) error {
	if sd.attrs == nil {
		return errors.New("PKCS#7: no signed attributes, which mcpb always writes")
	}
	hash, algo, err := algorithms(sd.digestAlg, sd.sigAlg)
	if err != nil {
		return err
	}
	var digest []byte
	var ctype asn1.ObjectIdentifier
	var signed time.Time
	attrs, err := seq(sd.attrs, true)
	if err != nil {
		return errors.New("PKCS#7: bad signed attributes")
	}
	for _, a := range attrs {
		kv, err := seq(a.FullBytes, true)
		if err != nil || len(kv) != 2 {
			return errors.New("PKCS#7: bad signed attribute")
		}
		var oid asn1.ObjectIdentifier
		if _, err := asn1.Unmarshal(kv[0].FullBytes, &oid); err != nil {
			return errors.New("PKCS#7: bad signed attribute")
		}
		values, err := seq(kv[1].Bytes, false)
		if err != nil || len(values) != 1 {
			return errors.New("PKCS#7: bad signed attribute value")
		}
		switch v := values[0].FullBytes; {
		case oid.Equal(oidMessageDigest):
			_, err = asn1.Unmarshal(v, &digest)
		case oid.Equal(oidContentType):
			_, err = asn1.Unmarshal(v, &ctype)
		case oid.Equal(oidSigningTime):
			_, err = asn1.Unmarshal(v, &signed)
		}
		if err != nil {
			return fmt.Errorf("PKCS#7: signed attribute %v: %w", oid, err)
		}
	}
	if !ctype.Equal(oidData) {
		return errors.New("PKCS#7: signed content type is not data")
	}
	h := hash.New()
	if _, err := io.Copy(h, content); err != nil {
		return fmt.Errorf("read bundle content: %w", err)
	}
	if !bytes.Equal(digest, h.Sum(nil)) {
		return errors.New("the bundle's content does not match the signed digest")
	}
	if err := leaf.CheckSignature(algo, sd.attrs, sd.sig); err != nil {
		return fmt.Errorf("PKCS#7: signature: %w", err)
	}
	if !signed.IsZero() && (signed.Before(leaf.NotBefore) || signed.After(leaf.NotAfter)) {
		return fmt.Errorf("signed at %s, outside the signer certificate's validity", signed.Format(time.RFC3339))
	}
	return nil
}

// algorithms maps a SignerInfo's digest and signature algorithms to Go's:
// RSA PKCS #1 v1.5 (node-forge's only) and ECDSA, with SHA-2.
func algorithms(digest, sig asn1.ObjectIdentifier) (crypto.Hash, x509.SignatureAlgorithm, error) {
	hashes := map[string]crypto.Hash{
		"2.16.840.1.101.3.4.2.1": crypto.SHA256,
		"2.16.840.1.101.3.4.2.2": crypto.SHA384,
		"2.16.840.1.101.3.4.2.3": crypto.SHA512,
	}
	h, ok := hashes[digest.String()]
	if !ok {
		return 0, 0, fmt.Errorf("PKCS#7: digest algorithm %v not supported", digest)
	}
	rsa := map[crypto.Hash]x509.SignatureAlgorithm{crypto.SHA256: x509.SHA256WithRSA, crypto.SHA384: x509.SHA384WithRSA, crypto.SHA512: x509.SHA512WithRSA}
	ec := map[crypto.Hash]x509.SignatureAlgorithm{crypto.SHA256: x509.ECDSAWithSHA256, crypto.SHA384: x509.ECDSAWithSHA384, crypto.SHA512: x509.ECDSAWithSHA512}
	switch sig.String() {
	case "1.2.840.113549.1.1.1", "1.2.840.113549.1.1.11", "1.2.840.113549.1.1.12", "1.2.840.113549.1.1.13":
		return h, rsa[h], nil
	case "1.2.840.10045.2.1", "1.2.840.10045.4.3.2", "1.2.840.10045.4.3.3", "1.2.840.10045.4.3.4":
		return h, ec[h], nil
	}
	return 0, 0, fmt.Errorf("PKCS#7: signature algorithm %v not supported", sig)
}

// seq is the elements of a DER SEQUENCE or SET (outer) or of content
// bytes (!outer), all of it.
func seq(der []byte, outer bool) ([]asn1.RawValue, error) {
	if outer {
		var v asn1.RawValue
		rest, err := asn1.Unmarshal(der, &v)
		if err != nil {
			return nil, err
		}
		if len(rest) > 0 || !v.IsCompound {
			return nil, errors.New("not a constructed value")
		}
		der = v.Bytes
	}
	var out []asn1.RawValue
	for len(der) > 0 {
		var v asn1.RawValue
		rest, err := asn1.Unmarshal(der, &v)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		der = rest
	}
	return out, nil
}

// ctx is whether v is the context-specific [tag].
func ctx(v asn1.RawValue, tag int) bool {
	return v.Class == asn1.ClassContextSpecific && v.Tag == tag
}
