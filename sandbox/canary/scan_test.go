package canary

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

func b64(p []byte) string { return base64.StdEncoding.EncodeToString(p) }

// encoded is one way of writing a secret into captured data, with where
// the encoded secret sits in it.
type encoded struct {
	data        string
	off, length int
	want        string // the encoding, when it depends on the secret
}

// around puts s between a prefix and a suffix of ordinary traffic.
func around(prefix, s, suffix string) encoded {
	return encoded{prefix + s + suffix, len(prefix), len(s), ""}
}

// b64At base64-encodes pre+secret+post and returns where the secret's
// characters are: from the one holding its first bit to the one holding
// its last.
func b64At(enc *base64.Encoding, pre, secret, post string) (string, int, int) {
	s := enc.EncodeToString([]byte(pre + secret + post))
	p, n := len(pre), len(secret)
	first, last := 8*p/6, (8*(p+n)-1)/6
	return s, first, last + 1 - first
}

// escapedSpan escapes e char by char and returns the result with where
// e[first:end] ended up.
func escapedSpan(e string, first, end int, esc func(c byte) string) (string, int, int) {
	var b strings.Builder
	off, stop := 0, 0
	for i := 0; i <= len(e); i++ {
		if i == first {
			off = b.Len()
		}
		if i == end {
			stop = b.Len()
		}
		if i < len(e) {
			b.WriteString(esc(e[i]))
		}
	}
	return b.String(), off, stop - off
}

func queryEscapeByte(c byte) string { return url.QueryEscape(string([]byte{c})) }

func percentAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, "%%%02X", s[i])
	}
	return b.String()
}

func jsonUnicodeAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, `\u%04x`, s[i])
	}
	return b.String()
}

func labels(s string, n int) string {
	var parts []string
	for len(s) > n {
		parts = append(parts, s[:n])
		s = s[n:]
	}
	return strings.Join(append(parts, s), ".")
}

func labelSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isLabelChar(s[i]) {
			return false
		}
	}
	return true
}

func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

type encCase struct {
	name string
	// applies says whether the encoding makes sense for a secret.
	applies func(secret string) bool
	enc     func(secret string) encoded
	want    string
	dnsName bool // scan with ScanDNSName
}

const httpPrefix = "POST /collect HTTP/1.1\r\nHost: c.example\r\nContent-Type: text/plain\r\n\r\nd="

var encCases = []encCase{
	{name: "raw", enc: func(s string) encoded { return around(httpPrefix, s, "&x=1") }, want: EncodingRaw},
	{name: "raw_in_json_env_dump", applies: func(s string) bool { return printable(s) && !strings.ContainsAny(s, `"\`) },
		enc: func(s string) encoded {
			return around(`{"PATH":"/usr/bin","HOME":"/home/sandbox","X":"`, s, `","NODE_ENV":"production"}`)
		}, want: EncodingRaw},
	{name: "hex_lower", enc: func(s string) encoded { return around("id=", hex.EncodeToString([]byte(s)), ";") }, want: EncodingHex},
	{name: "hex_upper", enc: func(s string) encoded { return around("id=", strings.ToUpper(hex.EncodeToString([]byte(s))), ";") }, want: EncodingHex},
	{name: "hex_after_odd_hex_prefix", enc: func(s string) encoded {
		return around("id=abc", hex.EncodeToString([]byte(s)), "")
	}, want: EncodingHex},
	{name: "base64_std_padded_align0", enc: func(s string) encoded {
		e, off, n := b64At(base64.StdEncoding, "", s, "")
		return encoded{"data=" + e + "&", len("data=") + off, n, ""}
	}, want: EncodingBase64},
	{name: "base64_std_in_longer_align1", enc: func(s string) encoded {
		e, off, n := b64At(base64.StdEncoding, `{"k":"`, s, `","more":"stuff here"}`)
		return encoded{"data=" + e, len("data=") + off, n, ""}
	}, want: EncodingBase64},
	{name: "base64_std_in_longer_align2", enc: func(s string) encoded {
		e, off, n := b64At(base64.StdEncoding, "ab", s, "tail")
		return encoded{"data=" + e, len("data=") + off, n, ""}
	}, want: EncodingBase64},
	{name: "base64_std_in_longer_align0", enc: func(s string) encoded {
		e, off, n := b64At(base64.StdEncoding, "abc", s, "tail")
		return encoded{"data=" + e, len("data=") + off, n, ""}
	}, want: EncodingBase64},
	{name: "base64_url_unpadded_align1", enc: func(s string) encoded {
		e, off, n := b64At(base64.RawURLEncoding, "x", s, "")
		return encoded{"/u/" + e + "/p", len("/u/") + off, n, ""}
	}, want: EncodingBase64},
	{name: "base64_url_unpadded_align2", enc: func(s string) encoded {
		e, off, n := b64At(base64.RawURLEncoding, "xy", s, "zz")
		return encoded{"/u/" + e + "/p", len("/u/") + off, n, ""}
	}, want: EncodingBase64},
	{name: "base64_after_base64_chars", enc: func(s string) encoded {
		// The run starts with letters that are not part of the encoding.
		e, off, n := b64At(base64.StdEncoding, "", s, "")
		return encoded{"token" + e, len("token") + off, n, ""}
	}, want: EncodingBase64},
	{name: "base64_mime_wrapped", applies: func(s string) bool { return len(s) >= 60 }, enc: func(s string) encoded {
		e, first, n := b64At(base64.StdEncoding, "", s, "")
		var w strings.Builder
		off, length := 0, 0
		for i := 0; i < len(e); i++ {
			if i > 0 && i%76 == 0 {
				w.WriteString("\r\n")
			}
			if i == first {
				off = w.Len()
			}
			w.WriteByte(e[i])
			if i == first+n-1 {
				length = w.Len() - off
			}
		}
		const pre = "Content-Transfer-Encoding: base64\r\n\r\n"
		return encoded{pre + w.String() + "\r\n", len(pre) + off, length, ""}
	}, want: EncodingBase64},
	{name: "base64_of_base64", enc: func(s string) encoded {
		inner := base64.StdEncoding.EncodeToString([]byte(s))
		k := base64.RawStdEncoding.EncodedLen(len(s)) // the characters that carry s
		e, first, n := b64At(base64.StdEncoding, "", inner[:k], inner[k:])
		return encoded{"z=" + e, 2 + first, n, ""}
	}, want: "base64+base64"},
	{name: "url_every_byte", enc: func(s string) encoded { return around("GET /?q=", percentAll(s), " HTTP/1.1") }, want: EncodingURL},
	{name: "url_query_escape", applies: func(s string) bool { return url.QueryEscape(s) != s && !strings.Contains(s, " ") },
		enc: func(s string) encoded { return around("GET /?q=", url.QueryEscape(s), " HTTP/1.1") }, want: EncodingURL},
	{name: "url_of_base64", enc: func(s string) encoded {
		e, first, n := b64At(base64.StdEncoding, "", s, "")
		q, off, length := escapedSpan(e, first, first+n, queryEscapeByte)
		want := EncodingBase64 // a percent-escape only in the padding changes nothing
		if strings.ContainsAny(e[first:first+n], "+/") {
			want = "url+base64"
		}
		return encoded{"GET /?q=" + q + " HTTP/1.1", len("GET /?q=") + off, length, want}
	}},
	{name: "json_unicode_escapes", enc: func(s string) encoded { return around(`{"v":"`, jsonUnicodeAll(s), `"}`) }, want: EncodingJSON},
	{name: "json_marshal_multiline", applies: func(s string) bool { return strings.Contains(s, "\n") && utf8.ValidString(s) }, enc: func(s string) encoded {
		js, _ := json.Marshal(s)
		return around(`{"key":`, string(js[1:len(js)-1]), `}`)
	}, want: EncodingJSON},
	{name: "dns_labels_lowercased", applies: labelSafe, enc: func(s string) encoded {
		l := labels(strings.ToLower(s), 20)
		return encoded{l + ".x1.exfil.example.", 0, len(l), ""}
	}, want: EncodingDNSLabels, dnsName: true},
	{name: "dns_labels_63", applies: labelSafe, enc: func(s string) encoded {
		l := labels(s, 63)
		return encoded{"a1." + l + ".exfil.example", 3, len(l), ""}
	}, want: EncodingDNSLabels, dnsName: true},
	{name: "dns_labels_of_hex", enc: func(s string) encoded {
		l := labels(hex.EncodeToString([]byte(s)), 63)
		return encoded{l + ".exfil.example", 0, len(l), ""}
	}, want: "dns_labels+hex", dnsName: true},
	{name: "dns_name_in_text", applies: labelSafe, enc: func(s string) encoded {
		l := labels(strings.ToLower(s), 30)
		return encoded{"GET http://" + l + ".exfil.example/ HTTP/1.1", len("GET http://"), len(l), ""}
	}, want: EncodingDNSLabels},
}

// every secret kind, and which other kinds may be found with it (the seed
// is inside the key file, so sending the file sends the seed too).
var kinds = map[string][]string{
	KindAWSAccessKeyID:     nil,
	KindAWSSecretAccessKey: nil,
	KindGitHubToken:        nil,
	KindOpenAIAPIKey:       nil,
	KindNPMToken:           nil,
	KindAnthropicAPIKey:    nil,
	KindSSHPrivateKey:      {KindSSHPrivateKeySeed},
	// The seed's base64, at the alignment it has in the key file, is a piece
	// of the file's text.
	KindSSHPrivateKeySeed: {KindSSHPrivateKey},
}

func TestScan_encodings(t *testing.T) {
	s := seeded(t, 3)
	for _, tc := range encCases {
		for kind, also := range kinds {
			v := secretOf(t, s, kind)
			if tc.applies != nil && !tc.applies(v.Secret) {
				continue
			}
			t.Run(tc.name+"/"+kind, func(t *testing.T) {
				e := tc.enc(v.Secret)
				if e.data[e.off:e.off+e.length] == "" {
					t.Fatalf("bad case: empty span")
				}
				hits := s.Scan([]byte(e.data))
				if tc.dnsName {
					hits = s.ScanDNSName(e.data)
				}
				var got []Hit
				for _, h := range hits {
					switch {
					case h.Value.Kind == kind:
						got = append(got, h)
					case !containsStr(also, h.Value.Kind):
						t.Errorf("unexpected hit %+v", h)
					}
				}
				enc := tc.want
				if e.want != "" {
					enc = e.want
				}
				want := Hit{Value: v, Encoding: enc, Offset: e.off, Length: e.length}
				if len(got) != 1 || got[0] != want {
					t.Errorf("in %q\n got %+v\nwant [%+v]", trim(e.data), got, want)
				}
			})
		}
	}
}

func containsStr(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func trim(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

func TestScan_formEncodedKeyFile(t *testing.T) {
	// Form encoding writes spaces as "+", which Scan leaves alone (it would
	// break base64 in URLs): the armour lines are not recognised, the key
	// material is, so the hit is partial.
	s := seeded(t, 14)
	key := secretOf(t, s, KindSSHPrivateKey)
	var got []Hit
	for _, h := range s.Scan([]byte("key=" + url.QueryEscape(key.Secret))) {
		if h.Value.Kind == KindSSHPrivateKey {
			got = append(got, h)
		}
	}
	if len(got) != 1 || got[0].Encoding != EncodingURL || !got[0].Partial {
		t.Errorf("got %+v, want one partial url hit", got)
	}
}

func TestScan_secretInTwoPlacesReportsTheFirst(t *testing.T) {
	s := seeded(t, 4)
	v := secretOf(t, s, KindNPMToken)
	hits := s.Scan([]byte("//registry.npmjs.org/:_authToken=" + v.Secret))
	if len(hits) != 1 || hits[0].Value.Where != "env:NPM_TOKEN" {
		t.Errorf("hits = %+v, want one under env:NPM_TOKEN", hits)
	}
}

func TestScan_wholeFileAsSentByMalware(t *testing.T) {
	s := seeded(t, 5)
	for _, f := range s.Files() {
		var wantKinds []string
		switch f.Path {
		case ".aws/credentials":
			wantKinds = []string{KindAWSAccessKeyID, KindAWSSecretAccessKey}
		case ".npmrc":
			wantKinds = []string{KindNPMToken}
		case ".ssh/id_ed25519":
			wantKinds = []string{KindSSHPrivateKey, KindSSHPrivateKeySeed}
		}
		for _, form := range []struct{ name, data string }{
			{"raw", string(f.Data)},
			{"base64", b64(f.Data)},
			{"json", func() string {
				js, _ := json.Marshal(map[string]string{"path": f.Path, "content": string(f.Data)})
				return string(js)
			}()},
		} {
			var got []string
			for _, h := range s.Scan([]byte(form.data)) {
				if !containsStr(got, h.Value.Kind) {
					got = append(got, h.Value.Kind)
				}
			}
			for _, k := range wantKinds {
				if !containsStr(got, k) {
					t.Errorf("%s sent %s: %s not found (found %v)", f.Path, form.name, k, got)
				}
			}
			if len(wantKinds) == 0 && len(got) > 0 {
				t.Errorf("%s sent %s holds no canary, found %v", f.Path, form.name, got)
			}
		}
	}
}

func TestScan_nothingInOrdinaryTraffic(t *testing.T) {
	ordinary, err := os.ReadFile("testdata/ordinary.txt")
	if err != nil {
		t.Fatal(err)
	}
	s := seeded(t, 6)
	other := seeded(t, 7)
	// A different set, in every encoding: nothing of it is ours.
	var foreign []string
	for _, v := range other.Values() {
		for _, tc := range encCases {
			if tc.applies == nil || tc.applies(v.Secret) {
				foreign = append(foreign, tc.enc(v.Secret).data)
			}
		}
	}
	// An OpenSSH key with the same comment as ours but another seed: the
	// format's constant framing must not match.
	comment := strings.Fields(string(fileData(s, ".ssh/id_ed25519.pub")))[2]
	seed := make([]byte, ed25519.SeedSize)
	seed[0] = 99
	otherKey, _, _ := openSSHPrivateKey(ed25519.NewKeyFromSeed(seed), 0x01020304, comment)
	v := secretOf(t, s, KindOpenAIAPIKey).Secret
	aws := secretOf(t, s, KindAWSAccessKeyID).Secret
	gh := secretOf(t, s, KindGitHubToken).Secret
	pemKey := secretOf(t, s, KindSSHPrivateKey).Secret
	for _, tc := range []struct{ name, data string }{
		{"ordinary_traffic", string(ordinary)},
		{"empty", ""},
		{"short", "AKIA"},
		{"format_prefixes", "AKIA ghp_ npm_ sk-proj- T3BlbkFJ sk-ant-api03- AA -----BEGIN OPENSSH PRIVATE KEY-----"},
		{"format_prefixes_hex", hex.EncodeToString([]byte("AKIA ghp_ npm_ sk-proj-T3BlbkFJ sk-ant-api03-"))},
		// One character short of MinChunk, with the fixed parts next to it,
		// which never count.
		{"aws_id_prefix_and_first_11", aws[:4+MinChunk-1]},
		{"aws_id_prefix_and_last_11", "AKIA" + aws[20-(MinChunk-1):]},
		{"github_prefix_and_11", gh[:4+MinChunk-1]},
		{"openai_marker_and_11_after", v[82 : 90+MinChunk-1]},
		{"openai_11_and_marker_before", v[82-(MinChunk-1) : 90]},
		{"openssh_framing", pemKey[:36+71] + pemKey[len(pemKey)-40:]},
		{"other_openssh_key_same_comment", otherKey},
		{"other_set_all_encodings", strings.Join(foreign, "\n")},
		{"other_set_files", string(bytes.Join(filesData(other), []byte("\n")))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if hits := s.Scan([]byte(tc.data)); len(hits) != 0 {
				t.Errorf("Scan found %+v", hits)
			}
			if hits := s.ScanDNSName(tc.data); len(hits) != 0 {
				t.Errorf("ScanDNSName found %+v", hits)
			}
		})
	}
}

func filesData(s *Set) [][]byte {
	var out [][]byte
	for _, f := range s.Files() {
		out = append(out, f.Data)
	}
	return out
}

// TestScan_threshold pins MinChunk: 15 random characters of a secret are
// not enough, 16 are, and the hit is partial.
func TestScan_threshold(t *testing.T) {
	s := seeded(t, 8)
	for kind := range kinds {
		v := secretOf(t, s, kind)
		// A run of MinChunk random characters, from the middle of the secret
		// if there is one there.
		r := s.m.random[s.m.index(v.Secret)]
		start := -1
		for _, from := range []int{len(r) / 2, 0} {
			for i := from; start < 0 && i+MinChunk <= len(r); i++ {
				if !bytesContainsFalse(r[i : i+MinChunk]) {
					start = i
				}
			}
		}
		if start < 0 {
			t.Fatalf("%s has no random run of %d characters", kind, MinChunk)
		}
		t.Run(kind, func(t *testing.T) {
			part := v.Secret[start : start+MinChunk]
			// Delimiters that differ from the secret's neighbouring bytes,
			// so that the match cannot extend into them.
			before, after := byte('<'), byte('>')
			if start > 0 && v.Secret[start-1] == before {
				before = '['
			}
			if start+MinChunk < len(v.Secret) && v.Secret[start+MinChunk] == after {
				after = ']'
			}
			if hits := s.Scan([]byte(string(before) + part[:MinChunk-1] + string(after))); len(hits) != 0 {
				t.Errorf("%d characters matched: %+v", MinChunk-1, hits)
			}
			hits := s.Scan([]byte(string(before) + part + string(after)))
			want := Hit{Value: v, Encoding: EncodingRaw, Offset: 1, Length: MinChunk, Partial: true}
			if len(hits) != 1 || hits[0] != want {
				t.Errorf("%d characters: got %+v, want [%+v]", MinChunk, hits, want)
			}
		})
	}
}

func bytesContainsFalse(b []bool) bool {
	for _, x := range b {
		if !x {
			return true
		}
	}
	return false
}

func (m *matcher) index(secret string) int {
	for i, t := range m.texts {
		if t == secret {
			return i
		}
	}
	return -1
}

func TestScan_severalSecretsInOneBody(t *testing.T) {
	s := seeded(t, 10)
	env := s.Env()
	js, _ := json.Marshal(env)
	data := "payload=" + base64.StdEncoding.EncodeToString(js) + "&k=" + hex.EncodeToString([]byte(env["GITHUB_TOKEN"]))
	got := map[string][]string{}
	for _, h := range s.Scan([]byte(data)) {
		got[h.Value.Kind] = append(got[h.Value.Kind], h.Encoding)
	}
	want := map[string][]string{
		KindAWSAccessKeyID: {"base64"}, KindAWSSecretAccessKey: {"base64"}, KindGitHubToken: {"base64", "hex"},
		KindOpenAIAPIKey: {"base64"}, KindNPMToken: {"base64"}, KindAnthropicAPIKey: {"base64"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestMaskAll(t *testing.T) {
	s := seeded(t, 11)
	for _, tc := range encCases {
		for kind := range kinds {
			v := secretOf(t, s, kind)
			if tc.applies != nil && !tc.applies(v.Secret) {
				continue
			}
			t.Run(tc.name+"/"+kind, func(t *testing.T) {
				e := tc.enc(v.Secret)
				data := []byte(e.data)
				masked := s.MaskAll(data)
				if string(data) != e.data {
					t.Fatalf("MaskAll changed its input")
				}
				if hits := s.Scan(masked); len(hits) != 0 {
					t.Errorf("after masking, Scan finds %+v in %q", hits, trim(string(masked)))
				}
				if hits := s.ScanDNSName(string(masked)); len(hits) != 0 {
					t.Errorf("after masking, ScanDNSName finds %+v in %q", hits, trim(string(masked)))
				}
				marker := "[canary:" + kind + "]"
				if kind == KindSSHPrivateKeySeed || kind == KindSSHPrivateKey {
					marker = "[canary:ssh_private_key"
				}
				if !bytes.Contains(masked, []byte(marker)) {
					t.Errorf("no marker %q in %q", marker, trim(string(masked)))
				}
				if !bytes.HasPrefix(masked, data[:e.off]) {
					t.Errorf("the text before the canary changed: %q", trim(string(masked)))
				}
			})
		}
	}
	t.Run("no_canary_is_unchanged", func(t *testing.T) {
		ordinary, err := os.ReadFile("testdata/ordinary.txt")
		if err != nil {
			t.Fatal(err)
		}
		if got := s.MaskAll(ordinary); !bytes.Equal(got, ordinary) {
			t.Errorf("MaskAll changed ordinary traffic")
		}
	})
}

func FuzzScan(f *testing.F) {
	s := seeded(f, 12)
	ordinary, err := os.ReadFile("testdata/ordinary.txt")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(ordinary)
	f.Add([]byte{})
	f.Add([]byte("%4\\u00"))
	for _, tc := range encCases {
		for _, v := range s.Values()[:6] {
			if tc.applies == nil || tc.applies(v.Secret) {
				f.Add([]byte(tc.enc(v.Secret).data))
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, hits := range [][]Hit{s.Scan(data), s.ScanDNSName(string(data))} {
			for _, h := range hits {
				if h.Offset < 0 || h.Length <= 0 || h.Offset+h.Length > len(data) {
					t.Fatalf("hit %+v outside %d bytes", h, len(data))
				}
			}
		}
		masked := s.MaskAll(data)
		if hits := s.Scan(masked); len(hits) != 0 {
			t.Fatalf("after masking, Scan finds %+v", hits)
		}
	})
}

// BenchmarkScan scans 64 KiB of captured traffic of several shapes; -bench
// prints MB/s.
func BenchmarkScan(b *testing.B) {
	s := seeded(b, 13)
	ordinary, err := os.ReadFile("testdata/ordinary.txt")
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewChaCha8([32]byte{1}))
	random := make([]byte, 48<<10)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	fill := func(unit []byte) []byte {
		out := make([]byte, 0, 64<<10)
		for len(out) < 64<<10 {
			out = append(out, unit...)
		}
		return out[:64<<10]
	}
	// Traffic with a canary near the end, so a whole scan is needed.
	withHit := fill(ordinary)
	copy(withHit[len(withHit)-200:], "&t="+hex.EncodeToString([]byte(secretOf(b, s, KindGitHubToken).Secret)))
	for _, bc := range []struct {
		name string
		data []byte
	}{
		{"http_json_text", fill(ordinary)},
		{"http_json_text_with_hit", withHit},
		{"base64_blob", []byte(base64.StdEncoding.EncodeToString(random))[:64<<10]},
		{"hex_blob", []byte(hex.EncodeToString(random))[:64<<10]},
		{"binary", fill(random)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.data)))
			b.ReportAllocs()
			cpu0 := cpuTime(b)
			for b.Loop() {
				s.Scan(bc.data)
			}
			// Wall-clock MB/s suffers when the machine is shared; the
			// process's CPU time per byte does not (much).
			cpu := cpuTime(b) - cpu0
			b.ReportMetric(float64(len(bc.data))*float64(b.N)/cpu.Seconds()/1e6, "MB/cpu-s")
		})
	}
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestScan_concurrent runs scans of different data at once: working
// buffers are reused between scans and must never be shared by two.
func TestScan_concurrent(t *testing.T) {
	s := seeded(t, 15)
	var inputs [][]byte
	var want [][]Hit
	for _, tc := range encCases {
		if tc.dnsName {
			continue
		}
		for _, v := range s.Values()[:6] {
			if tc.applies == nil || tc.applies(v.Secret) {
				d := []byte(tc.enc(v.Secret).data)
				inputs = append(inputs, d)
				want = append(want, s.Scan(d))
			}
		}
	}
	done := make(chan error)
	for g := range 8 {
		go func() {
			for r := range 20 {
				i := (g*7 + r*13) % len(inputs)
				if got := s.Scan(inputs[i]); fmt.Sprint(got) != fmt.Sprint(want[i]) {
					done <- fmt.Errorf("input %d: got %+v, want %+v", i, got, want[i])
					return
				}
			}
			done <- nil
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
