package report

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/internal/sariftest"
)

// sariftest.GitHubLimits is the test that says GitHub takes a file, so it
// must refuse each thing GitHub refuses: every case breaks one rule of a
// file it passes.
func TestGitHubLimitsRejects(t *testing.T) {
	if sariftest.MessageMax != sarifMessageMax || FingerprintKeyGitHub != "primaryLocationLineHash" {
		t.Fatalf("sariftest checks messages to %d characters and primaryLocationLineHash; the writers keep them to %d and write %s",
			sariftest.MessageMax, sarifMessageMax, FingerprintKeyGitHub)
	}
	base := writeSARIF(t, buildSARIF(t, "behavior"))
	if p := sariftest.GitHubLimits(t, base); len(p) > 0 {
		t.Fatalf("the base file fails: %v", p)
	}
	type doc = map[string]any
	run0 := func(d doc) doc { return d["runs"].([]any)[0].(doc) }
	result0 := func(d doc) doc { return run0(d)["results"].([]any)[0].(doc) }
	loc0 := func(d doc) doc { return result0(d)["locations"].([]any)[0].(doc) }
	artifact0 := func(d doc) doc { return loc0(d)["physicalLocation"].(doc)["artifactLocation"].(doc) }
	related := func(d doc) doc {
		for _, r := range run0(d)["results"].([]any) {
			if rel, ok := r.(doc)["relatedLocations"].([]any); ok {
				return rel[0].(doc)["physicalLocation"].(doc)["artifactLocation"].(doc)
			}
		}
		t.Fatal("no result has a related location")
		return nil
	}
	long := strings.Repeat("x", 256)
	for _, tc := range []struct {
		name, want string
		breakIt    func(d doc)
	}{
		{"no locations", "0 locations", func(d doc) { delete(result0(d), "locations") }},
		{"eleven locations", "11 locations", func(d doc) {
			r := result0(d)
			for range 10 {
				r["locations"] = append(r["locations"].([]any), loc0(d))
			}
		}},
		{"a logical location only", "no physicalLocation", func(d doc) { delete(loc0(d), "physicalLocation") }},
		{"no artifact location", "without artifactLocation.uri", func(d doc) { delete(loc0(d)["physicalLocation"].(doc), "artifactLocation") }},
		{"an empty uri", "without artifactLocation.uri", func(d doc) { artifact0(d)["uri"] = "" }},
		{"an absolute path", "is absolute", func(d doc) { artifact0(d)["uri"] = "/home/dev/repo/package.json" }},
		{"a file URI", "has a scheme", func(d doc) { artifact0(d)["uri"] = "file:///home/dev/repo/package.json" }},
		{"a purl", "has a scheme", func(d doc) { artifact0(d)["uri"] = "pkg:npm/left-pad@1.3.0" }},
		{"a drive", "has a scheme", func(d doc) { artifact0(d)["uri"] = "C:/repo/package.json" }},
		{"a host", "has a scheme or a host", func(d doc) { artifact0(d)["uri"] = "//host/package.json" }},
		{"a climbing path", "leaves its root", func(d doc) { artifact0(d)["uri"] = "a/../../package.json" }},
		{"an escaped climbing path", "leaves its root", func(d doc) { artifact0(d)["uri"] = "a/%2E%2E/%2e%2e/package.json" }},
		{"a backslash", "backslash", func(d doc) { artifact0(d)["uri"] = `a\package.json` }},
		{"a fragment", "fragment", func(d doc) { artifact0(d)["uri"] = "package.json#L3" }},
		{"a uriBaseId on the result's location", "uriBaseId PACKAGE_ROOT on a result's location", func(d doc) { artifact0(d)["uriBaseId"] = BasePackageRoot }},
		{"no region", "no region.startLine", func(d doc) { delete(loc0(d)["physicalLocation"].(doc), "region") }},
		{"line 0", "no region.startLine", func(d doc) { loc0(d)["physicalLocation"].(doc)["region"] = doc{"startLine": 0} }},
		{"a related file URI", "related location 0: uri \"file:///etc/x\" has a scheme", func(d doc) { related(d)["uri"] = "file:///etc/x" }},
		{"a related absolute path", "related location 0: uri \"/etc/x\" is absolute", func(d doc) { related(d)["uri"] = "/etc/x" }},
		{"an undeclared uriBaseId", "uriBaseId ELSEWHERE is not in originalUriBaseIds", func(d doc) { related(d)["uriBaseId"] = "ELSEWHERE" }},
		{"a suppression at an absolute path", "suppression 0: uri \"file:///home/dev/.verifymcp-ignore.yaml\" has a scheme", func(d doc) {
			result0(d)["suppressions"] = []any{doc{"kind": "external", "location": doc{"physicalLocation": doc{
				"artifactLocation": doc{"uri": "file:///home/dev/.verifymcp-ignore.yaml"}}}}}
		}},
		{"no primaryLocationLineHash", "no partialFingerprints.primaryLocationLineHash", func(d doc) {
			delete(result0(d)["partialFingerprints"].(doc), FingerprintKeyGitHub)
		}},
		{"no partialFingerprints", "no partialFingerprints.primaryLocationLineHash", func(d doc) { delete(result0(d), "partialFingerprints") }},
		{"a fingerprint twice", "as result 0", func(d doc) {
			rs := run0(d)["results"].([]any)
			dup, _ := json.Marshal(rs[0])
			var again doc
			if err := json.Unmarshal(dup, &again); err != nil {
				t.Fatal(err)
			}
			run0(d)["results"] = append(rs, again)
		}},
		{"a level GitHub does not know", `level "fatal"`, func(d doc) { result0(d)["level"] = "fatal" }},
		{"a default level of none", `defaultConfiguration.level "none"`, func(d doc) {
			run0(d)["tool"].(doc)["driver"].(doc)["rules"].([]any)[0].(doc)["defaultConfiguration"] = doc{"level": "none"}
		}},
		{"a rule id of 256 characters", "longer than 255", func(d doc) {
			rule := run0(d)["tool"].(doc)["driver"].(doc)["rules"].([]any)[0].(doc)
			rule["id"] = long
		}},
		{"a ruleId of no rule", "is no rule's", func(d doc) { result0(d)["ruleId"] = "pkg.no.such.code" }},
		{"no message", "message.text empty", func(d doc) { result0(d)["message"] = doc{"text": ""} }},
		{"twenty-one runs", "21 runs", func(d doc) {
			runs := d["runs"].([]any)
			for range 20 {
				runs = append(runs, runs[0])
			}
			d["runs"] = runs
		}},
		{"no run", "0 runs", func(d doc) { d["runs"] = []any{} }},
		{"25,001 results", "25001 results", func(d doc) {
			r := result0(d)
			rs := make([]any, 25001)
			for i := range rs {
				// Small results, each its own fingerprint, so that only
				// their number is wrong.
				rs[i] = doc{"ruleId": r["ruleId"], "message": doc{"text": "x"}, "locations": r["locations"],
					"partialFingerprints": doc{FingerprintKeyGitHub: fmt.Sprintf("%016x:1", i)}}
			}
			run0(d)["results"] = rs
		}},
		{"over 10 MB gzip-compressed", "bytes gzip-compressed", func(d doc) {
			// Random bytes, base64-encoded: gzip cannot bring 16 MiB of
			// them under 10 MB.
			noise := make([]byte, 12<<20)
			rng := rand.New(rand.NewPCG(34, 1))
			for i := range noise {
				noise[i] = byte(rng.Uint32())
			}
			run0(d)["properties"].(doc)["noise"] = base64.StdEncoding.EncodeToString(noise)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d doc
			if err := json.Unmarshal(base, &d); err != nil {
				t.Fatal(err)
			}
			tc.breakIt(d)
			data, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			p := sariftest.GitHubLimits(t, data)
			if !slices.ContainsFunc(p, func(s string) bool { return strings.Contains(s, tc.want) }) {
				t.Errorf("githubLimits = %q, want a problem saying %q", p, tc.want)
			}
		})
	}
}
