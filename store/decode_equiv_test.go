package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
)

// strs are awkward strings: ones json.Marshal escapes (HTML, quotes,
// control characters, U+2028), multi-byte and astral runes, and invalid
// UTF-8, which json.Marshal replaces.
var strs = []string{
	"", "x", "npm:@scope/pkg@latest", `quote " and \ backslash`, "<script>&amp;</script>",
	"line\nbreak\ttab\r", "\x00\x01\x1f", "\u2028\u2029", "ñandú 日本語 🚀", "\xff\xfe broken", "\ufffd",
	"sha512-" + strings.Repeat("A", 86) + "==", "observed", "not_assessed", "ok", "initialize_fallback",
}

// fill sets v to a random value of its type, reaching every field of every
// struct, so a field added to evidence or contract is exercised without a
// change here.
func fill(r *rand.Rand, v reflect.Value, depth int) {
	switch v.Type() {
	case reflect.TypeFor[time.Time]():
		zones := []*time.Location{time.UTC, time.FixedZone("", 5*3600+1800), time.FixedZone("", -7*3600)}
		t := time.Unix(r.Int64N(4e9), r.Int64N(1e9)).In(zones[r.IntN(len(zones))])
		v.Set(reflect.ValueOf(t))
		return
	case reflect.TypeFor[json.RawMessage]():
		if r.IntN(4) == 0 {
			return // omitted
		}
		doc := randomJSON(r, 3)
		raw, _ := json.Marshal(doc)
		v.SetBytes(raw)
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(r, v.Field(i), depth)
			}
		}
	case reflect.Pointer:
		if depth > 6 || r.IntN(4) == 0 {
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		fill(r, v.Elem(), depth+1)
	case reflect.Slice:
		switch r.IntN(5) {
		case 0:
			return // nil
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
			return
		}
		n := 1 + r.IntN(3)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fill(r, s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Map:
		if r.IntN(5) == 0 {
			return
		}
		m := reflect.MakeMap(v.Type())
		for range r.IntN(4) {
			k := reflect.New(v.Type().Key()).Elem()
			k.SetString(strs[r.IntN(len(strs))])
			e := reflect.New(v.Type().Elem()).Elem()
			fill(r, e, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.String:
		v.SetString(strs[r.IntN(len(strs))])
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		choices := []int64{0, 1, -1, 137, math.MaxInt32, math.MinInt32}
		if v.Type().Bits() == 64 {
			choices = append(choices, math.MaxInt64, math.MinInt64)
		}
		v.SetInt(choices[r.IntN(len(choices))])
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		choices := []uint64{0, 1, 8, 13, 20326, 38696, uint64(1)<<v.Type().Bits() - 1}
		v.SetUint(choices[r.IntN(len(choices))])
	case reflect.Float32, reflect.Float64:
		// The judge records a temperature of 0 as the smallest positive
		// float32, which only a correct denormal parse reproduces.
		floats := []float64{0, 0.1, -2.5e-7, 1e21, 100, float64(math.SmallestNonzeroFloat32)}
		v.SetFloat(floats[r.IntN(len(floats))])
	default:
		panic(fmt.Sprintf("fill: unhandled kind %s of %s", v.Kind(), v.Type()))
	}
}

func randomJSON(r *rand.Rand, depth int) any {
	switch n := r.IntN(7); {
	case depth == 0 || n == 0:
		return strs[r.IntN(len(strs))]
	case n == 1:
		return r.Float64() * 1e6
	case n == 2:
		return nil
	case n == 3:
		return r.IntN(2) == 0
	case n == 4:
		a := []any{}
		for range r.IntN(3) {
			a = append(a, randomJSON(r, depth-1))
		}
		return a
	default:
		m := map[string]any{}
		for range r.IntN(4) {
			m[strs[r.IntN(len(strs))]] = randomJSON(r, depth-1)
		}
		return m
	}
}

// TestFastDecodeMatchesEncodingJSON decodes random bundles, covering every
// field, both ways. json.Marshal output must always take the fast path, or
// rescoring silently loses its speed.
func TestFastDecodeMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	// withBehavior counts bundles whose behaviour holds events of every
	// kind, so that the test fails if behaviour stops being exercised.
	withBehavior, withSupply, withFetch, withDNSSEC, withJudge := 0, 0, 0, 0, 0
	for i := range 2000 {
		var src evidence.Bundle
		fill(r, reflect.ValueOf(&src).Elem(), 0)
		if bh := src.Behavior; bh != nil && len(bh.Watches) > 0 && len(bh.Network) > 0 && len(bh.Files) > 0 &&
			len(bh.Processes) > 0 && len(bh.Exfiltration) > 0 {
			withBehavior++
		}
		if sp := src.Supply; sp != nil && sp.Registry != nil && sp.OSV != nil && len(sp.OSV.Vulnerabilities) > 0 && sp.Socket != nil && sp.GitHub != nil {
			withSupply++
		}
		if sp := src.Supply; sp != nil && sp.DNSSEC != nil && len(sp.DNSSEC.Anchor.KeyTags) > 0 && slices.ContainsFunc(sp.DNSSEC.Domains, func(d evidence.DNSDomain) bool {
			return len(d.CNAMEs) > 0 && slices.ContainsFunc(d.Chain, func(z evidence.DNSZoneStep) bool {
				return len(z.DSKeyTags) > 0 && len(z.KeyTags) > 0 && len(z.Algorithms) > 0
			})
		}) {
			withDNSSEC++
		}
		if j := src.Judge; j != nil && len(j.Verdicts) > 0 && j.CacheHit && !j.FetchedAt.IsZero() && j.Temperature != 0 && j.Seed != 0 {
			withJudge++
		}
		for _, s := range src.Signals {
			if s.Endpoint != "" && s.FetchedAt != nil && s.Cached && s.Authenticated {
				withFetch++
				break
			}
		}
		data, err := json.Marshal(&src)
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			if data, err = json.MarshalIndent(&src, "  ", "\t"); err != nil {
				t.Fatal(err)
			}
		}
		var want, got evidence.Bundle
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("bundle %d: encoding/json: %v", i, err)
		}
		if err := fastUnmarshal(data, &got); err != nil {
			t.Fatalf("bundle %d: the fast path declined json.Marshal output:\n%s", i, data)
		}
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("bundle %d decodes differently (-want +got):\n%s", i, diff(want, got))
		}
	}
	if withBehavior < 50 {
		t.Errorf("only %d of 2000 random bundles carried behaviour events of every kind", withBehavior)
	}
	if withSupply < 50 {
		t.Errorf("only %d of 2000 random bundles carried every supply-chain signal", withSupply)
	}
	if withFetch < 50 {
		t.Errorf("only %d of 2000 random bundles carried a signal with every fetch field set", withFetch)
	}
	if withDNSSEC < 50 {
		t.Errorf("only %d of 2000 random bundles carried DNSSEC evidence with anchor key tags, CNAMEs and a keyed chain step", withDNSSEC)
	}
	if withJudge < 50 {
		t.Errorf("only %d of 2000 random bundles carried a cached judge result with verdicts, a fetch time, a temperature and a seed", withJudge)
	}
}

// TestDecodeBehaviorFixture decodes a bundle with rich behaviour evidence
// (canary-derived DNS lookups, a literal-IP beacon, shell and curl
// processes, canary hits) both ways, indented as written and compacted as
// the store holds it, and checks that the fast path takes it.
func TestDecodeBehaviorFixture(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "behavior.bundle.json"))
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, data); err != nil {
		t.Fatal(err)
	}
	for name, input := range map[string][]byte{"indented": data, "compact": compact.Bytes()} {
		t.Run(name, func(t *testing.T) {
			var fast evidence.Bundle
			if err := fastUnmarshal(input, &fast); err != nil {
				t.Fatalf("the fast path declined the behaviour fixture: %v", err)
			}
			want, err := evidence.Decode(input)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeBundle(input)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(want, got) {
				t.Fatalf("DecodeBundle differs from evidence.Decode (-want +got):\n%s", diff(want, got))
			}
			bh := got.Behavior
			if bh == nil || len(bh.Watches) != 2 || len(bh.Canaries) != 6 || len(bh.Network) != 8 || len(bh.Files) != 2 ||
				len(bh.Processes) != 5 || len(bh.Exfiltration) != 3 {
				t.Fatalf("behaviour not decoded in full: %+v", bh)
			}
			if e := bh.Network[5]; !e.LiteralIP || !e.AfterHandshake || e.DstPort != 8080 || e.Time.Nanosecond() != 118e6 {
				t.Errorf("network[5] = %+v", e)
			}
		})
	}
}

// TestDecodeSupplyFixture decodes a bundle with supply-chain evidence of
// every kind (registry metadata, OSV advisories, a Socket verdict with
// alerts and scores, GitHub's answer) and signals with their endpoint,
// fetch time, cache and authentication, both ways, and checks that the
// fast path takes it.
func TestDecodeSupplyFixture(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "supply.bundle.json"))
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, data); err != nil {
		t.Fatal(err)
	}
	for name, input := range map[string][]byte{"indented": data, "compact": compact.Bytes()} {
		t.Run(name, func(t *testing.T) {
			var fast evidence.Bundle
			if err := fastUnmarshal(input, &fast); err != nil {
				t.Fatalf("the fast path declined the supply fixture: %v", err)
			}
			want, err := evidence.Decode(input)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeBundle(input)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(want, got) {
				t.Fatalf("DecodeBundle differs from evidence.Decode (-want +got):\n%s", diff(want, got))
			}
			sp := got.Supply
			if sp == nil || sp.Registry == nil || sp.OSV == nil || sp.Socket == nil || sp.GitHub == nil ||
				len(sp.OSV.Vulnerabilities) != 3 || len(sp.Socket.Alerts) != 4 || len(sp.Socket.Scores) != 6 ||
				len(sp.Registry.Maintainers) != 2 || sp.Registry.Repository == nil {
				t.Fatalf("supply not decoded in full: %+v", sp)
			}
			if v := sp.OSV.Vulnerabilities[0]; v.Score != 7.5 || !v.Direct || v.Fixed[0] != "1.24.0" || v.Aliases[0] != "CVE-2025-66414" {
				t.Errorf("vulnerabilities[0] = %+v", v)
			}
			if p := sp.Registry.PreviousPublishedAt; p == nil || !p.Equal(time.Date(2025, 6, 10, 9, 5, 12, 0, time.UTC)) {
				t.Errorf("previous_published_at = %v", p)
			}
			s := got.Signals[evidence.SignalSocket]
			if s.Endpoint != "https://api.socket.dev" || !s.Cached || !s.Authenticated || s.FetchedAt == nil ||
				!s.FetchedAt.Equal(time.Date(2026, 11, 28, 7, 2, 11, 0, time.UTC)) {
				t.Errorf("signals[socket] = %+v", s)
			}
			if s := got.Signals[evidence.SignalContract]; s.FetchedAt != nil || s.Endpoint != "" || s.Cached || s.Authenticated {
				t.Errorf("signals[contract] = %+v, want no fetch fields", s)
			}
		})
	}
}

// TestDecodeDNSSECFixture decodes a bundle with DNSSEC evidence (an
// insecure delegation with its NSEC3 denial, a nonexistent maintainer email
// domain, a dangling CNAME, a bogus zone with its reason and error, key
// tags and algorithms on every secure step) both ways, and checks that the
// fast path takes it.
func TestDecodeDNSSECFixture(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "dnssec.bundle.json"))
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, data); err != nil {
		t.Fatal(err)
	}
	for name, input := range map[string][]byte{"indented": data, "compact": compact.Bytes()} {
		t.Run(name, func(t *testing.T) {
			var fast evidence.Bundle
			if err := fastUnmarshal(input, &fast); err != nil {
				t.Fatalf("the fast path declined the dnssec fixture: %v", err)
			}
			want, err := evidence.Decode(input)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeBundle(input)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(want, got) {
				t.Fatalf("DecodeBundle differs from evidence.Decode (-want +got):\n%s", diff(want, got))
			}
			if got.Supply == nil || got.Supply.DNSSEC == nil {
				t.Fatal("supply.dnssec not decoded")
			}
			ds := got.Supply.DNSSEC
			if ds.Resolver != "127.0.0.1:5353" || !ds.CheckedAt.Equal(time.Date(2026, 11, 28, 10, 15, 2, 0, time.UTC)) ||
				ds.Anchor.Zone != "." || ds.Anchor.Source != "embedded:iana-root-anchors" || !slices.Equal(ds.Anchor.KeyTags, []uint16{20326, 38696}) ||
				len(ds.Domains) != 5 {
				t.Fatalf("dnssec not decoded in full: %+v", ds)
			}
			if d := ds.Domains[0]; d.Status != evidence.DNSInsecure || d.Exists != "yes" || len(d.Chain) != 3 ||
				d.Chain[2].Status != evidence.DNSInsecure || d.Chain[2].DSDenial != "nsec3" || d.Chain[2].KeyTags != nil {
				t.Errorf("domains[0] = %+v", d)
			}
			if d := ds.Domains[2]; d.Exists != "no" || d.NXDomainProof != "nsec3" || !d.HasSource("maintainer_email") {
				t.Errorf("domains[2] = %+v", d)
			}
			if d := ds.Domains[3]; !d.DanglingCNAME || !slices.Equal(d.CNAMEs, []string{"pgtools-site.pages.dev"}) || d.NXDomainProof != "nsec" {
				t.Errorf("domains[3] = %+v", d)
			}
			d := ds.Domains[4]
			z := d.Chain[3]
			if d.Status != evidence.DNSBogus || d.BogusReason != "no_dnskey_matching_ds" || d.Error == "" ||
				z.BogusReason != "no_dnskey_matching_ds" || !slices.Equal(z.DSKeyTags, []uint16{48213}) ||
				!slices.Equal(z.KeyTags, []uint16{6104, 39822}) || !slices.Equal(z.Algorithms, []int{13}) || z.Error != d.Error {
				t.Errorf("domains[4] = %+v", d)
			}
			if s := got.Signals[evidence.SignalDNSSEC]; s.State != evidence.StateObserved || s.Endpoint != "127.0.0.1:5353" || s.FetchedAt == nil {
				t.Errorf("signals[dnssec] = %+v", s)
			}
		})
	}
}

// TestDecodeJudgeFixture decodes a bundle with the LLM judge's verdicts
// (a cached answer with its model, endpoint, pins, a temperature of 0 as
// sent, the smallest positive float32, and two verdicts) and the judge
// signal with its fetch fields, both ways, and checks that the fast path
// takes it.
func TestDecodeJudgeFixture(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "judge.bundle.json"))
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, data); err != nil {
		t.Fatal(err)
	}
	for name, input := range map[string][]byte{"indented": data, "compact": compact.Bytes()} {
		t.Run(name, func(t *testing.T) {
			var fast evidence.Bundle
			if err := fastUnmarshal(input, &fast); err != nil {
				t.Fatalf("the fast path declined the judge fixture: %v", err)
			}
			want, err := evidence.Decode(input)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeBundle(input)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(want, got) {
				t.Fatalf("DecodeBundle differs from evidence.Decode (-want +got):\n%s", diff(want, got))
			}
			j := got.Judge
			if j == nil {
				t.Fatal("judge not decoded")
			}
			if j.Model != "gpt-4o-2024-08-06" || j.Endpoint != "https://api.openai.com/v1" || j.Temperature != float64(math.SmallestNonzeroFloat32) ||
				j.Seed != 42 || j.SpecVersion != "1" || j.PromptVersion != "1" || j.RubricVersion != "5" || !j.CacheHit ||
				j.SpecDigest != "sha256:426caad92c1770f20b06b194c53b738fd7c9eef3ba85fcb32e7e5578d7bbe01a" ||
				j.SchemaHash != got.Contract.SchemaHash || len(j.CacheKey) != 64 ||
				!j.FetchedAt.Equal(time.Date(2026, 4, 21, 16, 2, 47, 0, time.UTC)) || len(j.Verdicts) != 2 {
				t.Fatalf("judge not decoded in full: %+v", j)
			}
			if v := j.Verdicts[1]; v.Tool != "zip" || v.Code != "pkg.judge.sensitive_access" ||
				v.Evidence != "mapping of name to URI, which can be a data URI" || !strings.HasPrefix(v.Rationale, "The tool fetches") {
				t.Errorf("verdicts[1] = %+v", v)
			}
			if s := got.Signals[evidence.SignalJudge]; s.State != evidence.StateObserved || s.Endpoint != j.Endpoint || !s.Cached ||
				s.Authenticated || s.FetchedAt == nil || !s.FetchedAt.Equal(j.FetchedAt) {
				t.Errorf("signals[judge] = %+v", s)
			}
		})
	}
}

// TestFastDecodeDeclines checks inputs whose encoding/json semantics the
// fast path leaves to encoding/json, a few it takes, and that DecodeBundle still matches
// evidence.Decode on them.
func TestFastDecodeDeclines(t *testing.T) {
	base, err := os.ReadFile(filepath.Join("testdata", "everything.bundle.json"))
	if err != nil {
		t.Fatal(err)
	}
	b := string(base)
	bdata, err := os.ReadFile(filepath.Join("testdata", "behavior.bundle.json"))
	if err != nil {
		t.Fatal(err)
	}
	bb := string(bdata)
	sdata, err := os.ReadFile(filepath.Join("testdata", "supply.bundle.json"))
	if err != nil {
		t.Fatal(err)
	}
	sb := string(sdata)
	ddata, err := os.ReadFile(filepath.Join("testdata", "dnssec.bundle.json"))
	if err != nil {
		t.Fatal(err)
	}
	db := string(ddata)
	jdata, err := os.ReadFile(filepath.Join("testdata", "judge.bundle.json"))
	if err != nil {
		t.Fatal(err)
	}
	jb := string(jdata)
	tests := []struct {
		name string
		data string
		fast bool // the fast path takes it
	}{
		{"behavior_null", strings.Replace(b, `"schema_version": "verifymcp.evidence/v1",`, `"schema_version": "verifymcp.evidence/v1", "behavior": null,`, 1), true},
		{"behavior_wrong_type", strings.Replace(b, `"schema_version": "verifymcp.evidence/v1",`, `"schema_version": "verifymcp.evidence/v1", "behavior": [],`, 1), false},
		{"behavior_duplicate_key", strings.Replace(bb, `"sink": "ok",`, `"sink": "died", "sink": "ok",`, 1), false},
		{"behavior_key_in_other_case", strings.Replace(bb, `"literal_ip": true`, `"Literal_IP": true`, 1), false},
		{"behavior_bad_time", strings.Replace(bb, `"2026-11-28T10:15:21.412Z"`, `"yesterday"`, 1), false},
		{"behavior_time_offset", strings.Replace(bb, `"2026-11-28T10:15:21.412Z"`, `"2026-11-28T11:15:21.412+01:00"`, 1), true},
		{"behavior_bool_as_string", strings.Replace(bb, `"after_handshake": true`, `"after_handshake": "true"`, 1), false},
		{"behavior_port_as_float", strings.Replace(bb, `"dst_port": 8080`, `"dst_port": 8080.0`, 1), false},
		{"behavior_argv_null", strings.Replace(bb, `"argv": [
          "node",
          "scripts/setup.js"
        ]`, `"argv": null`, 1), true},
		{"behavior_escaped_masked_value", strings.Replace(bb, `"masked": "ghp_Zk…"`, `"masked": "ghp_Zk\u2026\ud83d\ude80"`, 1), true},
		{"supply_null", strings.Replace(b, `"schema_version": "verifymcp.evidence/v1",`, `"schema_version": "verifymcp.evidence/v1", "supply": null,`, 1), true},
		{"supply_wrong_type", strings.Replace(b, `"schema_version": "verifymcp.evidence/v1",`, `"schema_version": "verifymcp.evidence/v1", "supply": [],`, 1), false},
		{"supply_parts_null", strings.Replace(sb, `"supply": {`, `"supply": {"osv": null, "socket": null,`, 1), false},
		{"supply_duplicate_key", strings.Replace(sb, `"archived": true,`, `"archived": false, "archived": true,`, 1), false},
		{"supply_key_in_other_case", strings.Replace(sb, `"provenance": false`, `"Provenance": false`, 1), false},
		{"supply_score_as_string", strings.Replace(sb, `"score": 7.5,`, `"score": "7.5",`, 1), false},
		{"supply_score_exponent", strings.Replace(sb, `"score": 7.5,`, `"score": 75e-1,`, 1), true},
		{"supply_scores_null", strings.Replace(sb, `"scores": {`, `"scores": null, "x": {`, 1), true},
		{"supply_time_null", strings.Replace(sb, `"first_published_at": "2024-12-03T18:40:09Z",`, `"first_published_at": null,`, 1), true},
		{"supply_time_offset", strings.Replace(sb, `"pushed_at": "2025-06-10T14:01:55Z"`, `"pushed_at": "2025-06-10T16:01:55+02:00"`, 1), true},
		{"supply_bad_time", strings.Replace(sb, `"pushed_at": "2025-06-10T14:01:55Z"`, `"pushed_at": "last year"`, 1), false},
		{"supply_escaped_summary", strings.Replace(sb, `DNS rebinding protection by default`, `DNS rebinding \u201cprotection\u201d by default`, 1), true},
		{"signal_fetched_at_null", strings.Replace(sb, `"fetched_at": "2026-11-28T07:02:11Z",`, `"fetched_at": null,`, 1), true},
		{"signal_fetched_at_bad", strings.Replace(sb, `"fetched_at": "2026-11-28T07:02:11Z",`, `"fetched_at": 1764313331,`, 1), false},
		{"signal_cached_as_string", strings.Replace(sb, `"cached": true,`, `"cached": "true",`, 1), false},
		{"signal_endpoint_duplicate", strings.Replace(sb, `"endpoint": "https://api.osv.dev",`, `"endpoint": "x", "endpoint": "https://api.osv.dev",`, 1), false},
		{"dnssec_null", strings.Replace(sb, `"supply": {`, `"supply": {"dnssec": null,`, 1), true},
		{"dnssec_wrong_type", strings.Replace(sb, `"supply": {`, `"supply": {"dnssec": "secure",`, 1), false},
		{"dnssec_key_tag_too_big", strings.Replace(db, `48213`, `65536`, 1), false},
		{"dnssec_key_tag_negative", strings.Replace(db, `48213`, `-1`, 1), false},
		{"dnssec_key_tag_float", strings.Replace(db, `48213`, `48213.0`, 1), false},
		{"dnssec_key_tag_exponent", strings.Replace(db, `48213`, `4.8213e4`, 1), false},
		{"dnssec_key_tag_as_string", strings.Replace(db, `48213`, `"48213"`, 1), false},
		{"dnssec_key_tag_max", strings.Replace(db, `48213`, `65535`, 1), true},
		{"dnssec_algorithm_negative", strings.Replace(db, `"algorithms": [
                13
              ],
              "error"`, `"algorithms": [-13],
              "error"`, 1), true},
		{"dnssec_key_tags_null", strings.Replace(db, `"key_tags": [
          20326,
          38696
        ],`, `"key_tags": null,`, 1), true},
		{"dnssec_chain_empty", strings.Replace(db, `"chain": [`, `"chain": [], "x": [`, 1), true},
		{"dnssec_dangling_as_string", strings.Replace(db, `"dangling_cname": true`, `"dangling_cname": "true"`, 1), false},
		{"dnssec_duplicate_status", strings.Replace(db, `"status": "bogus",`, `"status": "secure", "status": "bogus",`, 1), false},
		{"dnssec_key_in_other_case", strings.Replace(db, `"nxdomain_proof": "nsec3"`, `"NXDomain_Proof": "nsec3"`, 1), false},
		{"dnssec_checked_at_offset", strings.Replace(db, `"checked_at": "2026-11-28T10:15:02Z"`, `"checked_at": "2026-11-28T11:15:02+01:00"`, 1), true},
		{"dnssec_checked_at_null", strings.Replace(db, `"checked_at": "2026-11-28T10:15:02Z"`, `"checked_at": null`, 1), true},
		{"dnssec_checked_at_bad", strings.Replace(db, `"checked_at": "2026-11-28T10:15:02Z"`, `"checked_at": "now"`, 1), false},
		{"dnssec_escaped_error", strings.Replace(db, `match none of the DNSKEYs`, `match none of the \u201cDNSKEYs\u201d`, 1), true},
		{"judge_null", strings.Replace(b, `"schema_version": "verifymcp.evidence/v1",`, `"schema_version": "verifymcp.evidence/v1", "judge": null,`, 1), true},
		{"judge_wrong_type", strings.Replace(b, `"schema_version": "verifymcp.evidence/v1",`, `"schema_version": "verifymcp.evidence/v1", "judge": [],`, 1), false},
		{"judge_verdicts_null", strings.Replace(jb, `"verdicts": [`, `"verdicts": null, "x": [`, 1), true},
		{"judge_verdicts_empty", strings.Replace(jb, `"verdicts": [`, `"verdicts": [], "x": [`, 1), true},
		{"judge_temperature_zero", strings.Replace(jb, `"temperature": 1.401298464324817e-45,`, `"temperature": 0,`, 1), true},
		{"judge_temperature_decimal", strings.Replace(jb, `"temperature": 1.401298464324817e-45,`, `"temperature": 0.2,`, 1), true},
		{"judge_temperature_as_string", strings.Replace(jb, `"temperature": 1.401298464324817e-45,`, `"temperature": "0",`, 1), false},
		{"judge_temperature_overflow", strings.Replace(jb, `"temperature": 1.401298464324817e-45,`, `"temperature": 1e999,`, 1), false},
		{"judge_seed_float", strings.Replace(jb, `"seed": 42,`, `"seed": 42.0,`, 1), false},
		{"judge_seed_negative", strings.Replace(jb, `"seed": 42,`, `"seed": -42,`, 1), true},
		{"judge_cache_hit_as_string", strings.Replace(jb, `"cache_hit": true,`, `"cache_hit": "true",`, 1), false},
		{"judge_fetched_at_offset", strings.Replace(jb, `"fetched_at": "2026-04-21T16:02:47Z",
    "verdicts"`, `"fetched_at": "2026-04-21T18:02:47+02:00",
    "verdicts"`, 1), true},
		{"judge_fetched_at_null", strings.Replace(jb, `"fetched_at": "2026-04-21T16:02:47Z",
    "verdicts"`, `"fetched_at": null,
    "verdicts"`, 1), true},
		{"judge_fetched_at_bad", strings.Replace(jb, `"fetched_at": "2026-04-21T16:02:47Z",
    "verdicts"`, `"fetched_at": "a week ago",
    "verdicts"`, 1), false},
		{"judge_duplicate_code", strings.Replace(jb, `"code": "pkg.judge.sensitive_access",`, `"code": "pkg.judge.injection", "code": "pkg.judge.sensitive_access",`, 1), false},
		{"judge_key_in_other_case", strings.Replace(jb, `"cache_hit": true,`, `"Cache_Hit": true,`, 1), false},
		{"judge_escaped_evidence", strings.Replace(jb, `"evidence": "Prints all environment variables"`, `"evidence": "Prints all \u201cenvironment\u201d variables\u200b\udb40\udc41"`, 1), true},
		{"judge_rationale_omitted", strings.Replace(jb, `"code": "pkg.judge.sensitive_access",
        "evidence": "Prints all environment variables",`, `"code": "pkg.judge.sensitive_access",
        "evidence": "Prints all environment variables"}, {"tool": "x",`, 1), true},
		{"duplicate_key", strings.Replace(b, `"schema_version": "verifymcp.evidence/v1",`, `"schema_version": "x", "schema_version": "verifymcp.evidence/v1",`, 1), false},
		{"key_in_other_case", strings.Replace(b, `"packages": 112`, `"Packages": 112`, 1), false},
		{"escaped_key", strings.Replace(b, `"packages": 112`, `"p\u0061ckages": 112`, 1), false},
		{"invalid_utf8", strings.Replace(b, `Starting default`, "Starting \xff default", 1), false},
		{"lone_surrogate", strings.Replace(b, `Starting default`, `Starting \ud800 default`, 1), false},
		{"float_into_int", strings.Replace(b, `"packages": 112`, `"packages": 112.0`, 1), false},
		{"null_raw_message", strings.Replace(b, `"capabilities": {`, `"capabilities": null, "x": {`, 1), true},
		{"trailing_data", b + "{}", false},
		{"deep_nesting", strings.Replace(b, `"packages": 112`, `"packages": 112, "x": `+strings.Repeat("[", 2000)+strings.Repeat("]", 2000), 1), false},
		{"syntax_error", strings.Replace(b, `"packages": 112`, `"packages": 112,,`, 1), false},
		{"invalid_state", strings.Replace(b, `"state": "observed"`, `"state": "clean"`, 1), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.data == b || tt.data == bb || tt.data == sb || tt.data == db || tt.data == jb {
				t.Fatal("the mutation changed nothing")
			}
			var fb evidence.Bundle
			if err := fastUnmarshal([]byte(tt.data), &fb); (err == nil) != tt.fast {
				t.Errorf("fast path error %v, want it to take the input: %v", err, tt.fast)
			}
			want, wantErr := evidence.Decode([]byte(tt.data))
			got, gotErr := DecodeBundle([]byte(tt.data))
			if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
				t.Fatalf("DecodeBundle error %v, evidence.Decode error %v", gotErr, wantErr)
			}
			if !reflect.DeepEqual(want, got) {
				t.Errorf("DecodeBundle differs from evidence.Decode (-want +got):\n%s", diff(want, got))
			}
		})
	}
}

func FuzzFastDecode(f *testing.F) {
	base, err := os.ReadFile(filepath.Join("testdata", "everything.bundle.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(base)
	f.Add([]byte(`{"signals":{"a":{"state":"observed"},"a":{"reason":"x"}},"install":{"scripts":[{"exit_code":-0}]}}`))
	f.Add([]byte(`{"session":{"exit_code":null,"list_errors":{}},"contract":{"tools":[{"input_schema":{"type":"object"}}]}}`))
	f.Add([]byte(`{"run":{"date":"2026-05-04T09:30:12.5+05:30"},"target":{"published_at":null,"args":[]}}`))
	f.Add([]byte(`{"target":{"name":"\u00e9\ud83d\ude80\n"}} `))
	if bdata, err := os.ReadFile(filepath.Join("testdata", "behavior.bundle.json")); err != nil {
		f.Fatal(err)
	} else {
		f.Add(bdata)
	}
	f.Add([]byte(`{"behavior":{"watches":[{"phase":"run","watched_ms":45300,"sink":"ok","sink":"died"}],"network":[{"time":"2026-11-28T10:15:39.118Z","after_handshake":true,"dst_port":8080,"literal_ip":true}]}}`))
	f.Add([]byte(`{"behavior":{"processes":[{"argv":null,"pid":-1,"time":null}],"exfiltration":[{"canary":{"kind":"x"},"masked":"\u0077J…"}],"files":[]}}`))
	f.Add([]byte(`{"behavior":null,"Behavior":{"canaries":[{"Kind":"a","kind":"b"}]}}`))
	if sdata, err := os.ReadFile(filepath.Join("testdata", "supply.bundle.json")); err != nil {
		f.Fatal(err)
	} else {
		f.Add(sdata)
	}
	f.Add([]byte(`{"signals":{"socket":{"state":"observed","endpoint":"https://api.socket.dev","fetched_at":null,"cached":true,"authenticated":true}},"supply":{"osv":{"vulnerabilities":[{"score":9.8,"fixed":null,"aliases":[]}]}}}`))
	f.Add([]byte(`{"supply":{"registry":{"published_at":"2025-06-10T14:22:31.5+02:00","repository":null,"lifecycle_scripts":{"postinstall":"node x"}},"socket":{"scores":{"overall":0.25},"alerts":null},"github":{"pushed_at":null,"stars":-1}}}`))
	f.Add([]byte(`{"supply":{"github":{"archived":true,"Archived":false}},"Supply":null}`))
	if ddata, err := os.ReadFile(filepath.Join("testdata", "dnssec.bundle.json")); err != nil {
		f.Fatal(err)
	} else {
		f.Add(ddata)
	}
	f.Add([]byte(`{"supply":{"dnssec":{"anchor":{"key_tags":[65535,0]},"checked_at":null,"domains":[{"chain":[{"ds_key_tags":[65536],"algorithms":[-1]}]}]}}}`))
	f.Add([]byte(`{"supply":{"dnssec":{"domains":[{"cnames":null,"dangling_cname":true,"chain":[{"key_tags":null,"status":"bogus","Status":"secure"}]}]}}}`))
	if jdata, err := os.ReadFile(filepath.Join("testdata", "judge.bundle.json")); err != nil {
		f.Fatal(err)
	} else {
		f.Add(jdata)
	}
	f.Add([]byte(`{"judge":{"temperature":1.401298464324817e-45,"seed":-1,"cache_hit":true,"fetched_at":null,"verdicts":[{"tool":"","code":"pkg.judge.injection","evidence":"\udb40\udc41"}]}}`))
	f.Add([]byte(`{"judge":{"verdicts":null,"Verdicts":[],"temperature":4.9e-324,"seed":9007199254740993}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var got, want evidence.Bundle
		if fastUnmarshal(data, &got) != nil {
			return
		}
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("fast path accepted what encoding/json rejects (%v): %q", err, data)
		}
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("decodes differently for %q (-want +got):\n%s", data, diff(want, got))
		}
	})
}
