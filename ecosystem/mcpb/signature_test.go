package mcpb_test

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/binary"
	"encoding/pem"
	"math/big"
	"os"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/ecosystem/mcpb"
)

// signer is a key and its certificate.
type signer struct {
	key  crypto.Signer
	cert *x509.Certificate
}

// newSigner makes a certificate for cn, issued by parent (nil: by
// itself).
func newSigner(t *testing.T, cn string, parent *signer, ca bool, eku []x509.ExtKeyUsage, notAfter time.Time) *signer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: notAfter,
		IsCA: ca, BasicConstraintsValid: true, ExtKeyUsage: eku,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
	}
	issuer, issuerKey := tmpl, crypto.Signer(key)
	if parent != nil {
		issuer, issuerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, issuer, key.Public(), issuerKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &signer{key, cert}
}

// sign appends the signature block mcpb sign writes (src/node/sign.ts):
// a detached PKCS#7 SignedData made the way node-forge makes it, with the
// signed attributes in forge's order (contentType, messageDigest,
// signingTime), which is not DER's sorted order, and RSA PKCS #1 v1.5
// (rsaEncryption) over SHA-256.
func sign(t *testing.T, content []byte, s *signer, chain ...*x509.Certificate) []byte {
	t.Helper()
	der := func(v any) []byte {
		b, err := asn1.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	raw := func(class, tag int, compound bool, parts ...[]byte) []byte {
		return der(asn1.RawValue{Class: class, Tag: tag, IsCompound: compound, Bytes: bytes.Join(parts, nil)})
	}
	seq := func(parts ...[]byte) []byte { return raw(0, asn1.TagSequence, true, parts...) }
	set := func(parts ...[]byte) []byte { return raw(0, asn1.TagSet, true, parts...) }
	oid := func(o ...int) []byte { return der(asn1.ObjectIdentifier(o)) }
	sha256OID := seq(oid(2, 16, 840, 1, 101, 3, 4, 2, 1), der(asn1.NullRawValue))
	digest := sha256.Sum256(content)
	attrs := [][]byte{
		seq(oid(1, 2, 840, 113549, 1, 9, 3), set(oid(1, 2, 840, 113549, 1, 7, 1))),
		seq(oid(1, 2, 840, 113549, 1, 9, 4), set(der(digest[:]))),
		seq(oid(1, 2, 840, 113549, 1, 9, 5), set(der(time.Now().UTC()))),
	}
	signedAttrs := set(attrs...)
	h := sha256.Sum256(signedAttrs)
	var sig []byte
	var sigAlg []byte
	var err error
	switch k := s.key.(type) {
	case *rsa.PrivateKey:
		sig, err = rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, h[:])
		sigAlg = seq(oid(1, 2, 840, 113549, 1, 1, 1), der(asn1.NullRawValue))
	case *ecdsa.PrivateKey:
		sig, err = ecdsa.SignASN1(rand.Reader, k, h[:])
		sigAlg = seq(oid(1, 2, 840, 10045, 4, 3, 2))
	}
	if err != nil {
		t.Fatal(err)
	}
	certs := [][]byte{s.cert.Raw}
	for _, c := range chain {
		certs = append(certs, c.Raw)
	}
	signerInfo := seq(
		der(1),
		seq(s.cert.RawIssuer, der(s.cert.SerialNumber)),
		sha256OID,
		raw(asn1.ClassContextSpecific, 0, true, attrs...),
		sigAlg,
		der(sig),
	)
	signedData := seq(
		der(1),
		set(sha256OID),
		seq(oid(1, 2, 840, 113549, 1, 7, 1)),
		raw(asn1.ClassContextSpecific, 0, true, certs...),
		set(signerInfo),
	)
	p7 := seq(oid(1, 2, 840, 113549, 1, 7, 2), raw(asn1.ClassContextSpecific, 0, true, signedData))
	n := binary.LittleEndian.AppendUint32(nil, uint32(len(p7)))
	return bytes.Join([][]byte{content, []byte("MCPB_SIG_V1"), n, p7, []byte("MCPB_SIG_END")}, nil)
}

// tamper changes the modification time in the zip's first central
// directory record: the zip stays valid, its bytes are not the signed ones.
func tamper(t *testing.T, data []byte) []byte {
	t.Helper()
	out := bytes.Clone(data)
	i := bytes.Index(out, []byte("PK\x01\x02"))
	if i < 0 {
		t.Fatal("no central directory")
	}
	out[i+12] ^= 0x01
	return out
}

func TestSignature(t *testing.T) {
	zipped := buildZip(t, []file{{name: "manifest.json", body: validManifest}, {name: "server/index.js", body: "1"}})
	far := time.Now().AddDate(1, 0, 0)
	codeSigning := []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning}
	self := newSigner(t, "Self Signer", nil, false, nil, far)
	root := newSigner(t, "Test Root", nil, true, nil, far)
	inter := newSigner(t, "Test Intermediate", root, true, nil, far)
	leaf := newSigner(t, "Example Publisher", inter, false, codeSigning, far)
	tlsLeaf := newSigner(t, "TLS Only", inter, false, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, far)
	expired := newSigner(t, "Expired", root, false, codeSigning, time.Now().Add(-time.Minute))
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ec := &signer{key: ecKey}
	{
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "EC Publisher"},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: far, ExtKeyUsage: codeSigning}
		der, _ := x509.CreateCertificate(rand.Reader, tmpl, root.cert, ecKey.Public(), root.key)
		ec.cert, _ = x509.ParseCertificate(der)
	}
	roots := x509.NewCertPool()
	roots.AddCert(root.cert)

	for _, tc := range []struct {
		name                           string
		data                           []byte
		roots                          *x509.CertPool
		present, verified, trusted, ss bool
		signer                         string
	}{
		{name: "unsigned", data: zipped, roots: roots},
		{name: "chained to a trusted root", data: sign(t, zipped, leaf, inter.cert), roots: roots,
			present: true, verified: true, trusted: true, signer: "Example Publisher"},
		{name: "ECDSA signer", data: sign(t, zipped, ec), roots: roots,
			present: true, verified: true, trusted: true, signer: "EC Publisher"},
		{name: "chain not given", data: sign(t, zipped, leaf), roots: roots,
			present: true, verified: true, signer: "Example Publisher"},
		{name: "root not trusted", data: sign(t, zipped, leaf, inter.cert), roots: x509.NewCertPool(),
			present: true, verified: true, signer: "Example Publisher"},
		{name: "not for code signing", data: sign(t, zipped, tlsLeaf, inter.cert), roots: roots,
			present: true, verified: true, signer: "TLS Only"},
		{name: "expired signer", data: sign(t, zipped, expired), roots: roots,
			present: true, signer: "Expired"},
		{name: "self-signed", data: sign(t, zipped, self), roots: roots,
			present: true, verified: true, ss: true, signer: "Self Signer"},
		{name: "tampered", data: tamper(t, sign(t, zipped, leaf, inter.cert)), roots: roots,
			present: true, signer: "Example Publisher"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := open(tc.data, mcpb.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if b.Manifest.Name != "x" || b.Files != 2 {
				t.Errorf("the zip before the block was not read: %+v", b)
			}
			s := b.Verify(tc.roots, time.Now())
			if s.Present != tc.present || s.Verified != tc.verified || s.Trusted != tc.trusted ||
				s.SelfSigned != tc.ss || s.Signer != tc.signer {
				t.Errorf("Verify = %+v; want present %v verified %v trusted %v self-signed %v signer %q",
					*s, tc.present, tc.verified, tc.trusted, tc.ss, tc.signer)
			}
			if tc.present && (s.Format != mcpb.SignatureFormat || s.NotAfter.IsZero() || s.Fingerprint == "") {
				t.Errorf("Verify = %+v, want format, validity and fingerprint", *s)
			}
			if tc.present && !s.Trusted && s.Reason == "" {
				t.Errorf("Verify = %+v, want a reason", *s)
			}
			if b.Signature.Present != tc.present {
				t.Errorf("Open's Signature = %+v", *b.Signature)
			}
		})
	}
}

// TestSignatureByMCPB verifies a bundle signed by mcpb's own signing code
// with node-forge (testdata/README.md).
func TestSignatureByMCPB(t *testing.T) {
	data, err := os.ReadFile("testdata/hello-signed.mcpb")
	if err != nil {
		t.Fatal(err)
	}
	certPEM, err := os.ReadFile("testdata/hello-signed.cert.pem")
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(certPEM)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	b, err := open(data, mcpb.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Manifest.Name != "hello-world-uv" || b.Manifest.Server.Type != mcpb.TypeUV || b.Files != 3 {
		t.Errorf("Manifest = %+v, Files %d", b.Manifest, b.Files)
	}
	if s := b.Signature; !s.Present || !s.Verified || s.Trusted || !s.SelfSigned || s.Signer != "verifymcp test signer" {
		t.Errorf("Open's Signature = %+v; want verified, self-signed, not trusted", *s)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	if s := b.Verify(pool, time.Now()); !s.Verified || !s.Trusted {
		t.Errorf("Verify with the signer as a root = %+v; want trusted", *s)
	}
	if s := b.Verify(pool, cert.NotAfter.Add(time.Hour)); !s.Verified || s.Trusted {
		t.Errorf("Verify after the certificate expired = %+v; want verified, not trusted", *s)
	}
	b, err = open(tamper(t, data), mcpb.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if s := b.Verify(pool, time.Now()); !s.Present || s.Verified || s.Trusted {
		t.Errorf("Verify of a tampered bundle = %+v; want not verified", *s)
	}
}
