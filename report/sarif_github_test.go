package report

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/Masterminds/semver/v3"
)

// githubLimits checks a SARIF log against what GitHub code scanning
// documents (docs.github.com, code-security/reference/code-scanning/
// sarif-files/sarif-support and troubleshoot-sarif-uploads/
// results-exceed-limit, file-too-large): at most 10 MB gzip-compressed, at
// most 20 runs, 25,000 results and 25,000 rules per run, 100 tool
// extensions; tool.driver.name set; each rule with an id, a name of at
// most 255 characters, short and full descriptions of at most 1,024, help
// text, a default level of note, warning or error and at most 20 tags;
// each result with a ruleId of a rule, a level of SARIF's four, a message,
// 1 to 10 locations, at most 1,000 related locations, and
// partialFingerprints with primaryLocationLineHash, the only key GitHub
// reads, once per rule in a run (two results of a rule with one
// fingerprint are one alert). Every location of a result has a physical
// location with an artifactLocation.uri (without one GitHub refuses the
// file: "expected artifact location"), relative to the repository's root:
// no scheme ("unrecognized SARIF location URI scheme"), not absolute, no
// .. segment, no backslash, no uriBaseId (GitHub reads the uri from the
// checkout's root) and a region.startLine of 1 or more. Related and
// suppression locations that have a uri meet the same bar, except that
// a uriBaseId declared in originalUriBaseIds is allowed. Rule ids are kept
// to 255 characters too, and messages to sarifMessageMax: GitHub documents
// no bound for either.
func githubLimits(t *testing.T, data []byte) []string {
	t.Helper()
	type artifact struct {
		URI  *string `json:"uri"`
		Base *string `json:"uriBaseId"`
	}
	type physical struct {
		Artifact *artifact                `json:"artifactLocation"`
		Region   *struct{ StartLine int } `json:"region"`
	}
	type location struct {
		Physical *physical `json:"physicalLocation"`
	}
	var log struct {
		Runs []struct {
			Tool struct {
				Driver struct {
					Name            string  `json:"name"`
					SemanticVersion *string `json:"semanticVersion"`
					Rules           []struct {
						ID               string                           `json:"id"`
						Name             *string                          `json:"name"`
						ShortDescription *struct{ Text string }           `json:"shortDescription"`
						FullDescription  *struct{ Text string }           `json:"fullDescription"`
						Help             *struct{ Text, Markdown string } `json:"help"`
						Default          *struct{ Level string }          `json:"defaultConfiguration"`
						Props            struct{ Tags []string }          `json:"properties"`
					} `json:"rules"`
				} `json:"driver"`
				Extensions []any `json:"extensions"`
			} `json:"tool"`
			OriginalURIBaseIDs map[string]any       `json:"originalUriBaseIds"`
			AutomationDetails  *struct{ ID string } `json:"automationDetails"`
			Results            []struct {
				RuleID       *string               `json:"ruleId"`
				RuleIndex    *int                  `json:"ruleIndex"`
				Level        *string               `json:"level"`
				Message      struct{ Text string } `json:"message"`
				Locations    []location            `json:"locations"`
				Related      []location            `json:"relatedLocations"`
				Suppressions []struct {
					Location *location `json:"location"`
				} `json:"suppressions"`
				Fingerprints map[string]string `json:"partialFingerprints"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(data, &log); err != nil {
		t.Fatal(err)
	}
	var p []string
	bad := func(format string, a ...any) { p = append(p, fmt.Sprintf(format, a...)) }
	n := utf8.RuneCountInString
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if gz.Len() > githubMaxGzip {
		bad("%d bytes gzip-compressed, GitHub takes %d", gz.Len(), githubMaxGzip)
	}
	if len(log.Runs) == 0 || len(log.Runs) > 20 {
		bad("%d runs, GitHub takes 1 to 20", len(log.Runs))
	}
	// checkURI checks the artifact location of a physical location; a
	// result's own (primary) may not lean on a uriBaseId.
	checkURI := func(where string, ph *physical, bases map[string]any, primary bool) {
		if ph == nil {
			bad("%s: no physicalLocation", where)
			return
		}
		if ph.Artifact == nil || ph.Artifact.URI == nil || *ph.Artifact.URI == "" {
			bad("%s: a physical location without artifactLocation.uri", where)
			return
		}
		raw := *ph.Artifact.URI
		u, err := url.Parse(raw)
		switch {
		case err != nil:
			bad("%s: uri %q is no URI reference: %v", where, raw, err)
		case u.Scheme != "" || u.Host != "" || u.Opaque != "":
			bad("%s: uri %q has a scheme or a host; GitHub takes a path relative to the repository", where, raw)
		case strings.HasPrefix(u.Path, "/"):
			bad("%s: uri %q is absolute; GitHub takes a path relative to the repository", where, raw)
		case strings.Contains(raw, `\`) || u.RawQuery != "" || u.Fragment != "":
			bad("%s: uri %q has a backslash, a query or a fragment", where, raw)
		case slices.Contains(strings.Split(u.Path, "/"), ".."):
			bad("%s: uri %q leaves its root (..)", where, raw)
		}
		if b := ph.Artifact.Base; b != nil {
			if primary {
				bad("%s: uriBaseId %s on a result's location; GitHub reads its uri from the repository's root", where, *b)
			} else if bases[*b] == nil {
				bad("%s: uriBaseId %s is not in originalUriBaseIds", where, *b)
			}
		}
		if primary && (ph.Region == nil || ph.Region.StartLine < 1) {
			bad("%s: no region.startLine of 1 or more", where)
		} else if ph.Region != nil && ph.Region.StartLine < 1 {
			bad("%s: region.startLine %d", where, ph.Region.StartLine)
		}
	}
	for ri, run := range log.Runs {
		d := run.Tool.Driver
		if d.Name == "" {
			bad("run %d: tool.driver.name is not set", ri)
		}
		if d.SemanticVersion != nil {
			if _, err := semver.StrictNewVersion(*d.SemanticVersion); err != nil {
				bad("run %d: semanticVersion %q is not SemVer 2.0", ri, *d.SemanticVersion)
			}
		}
		if len(run.Results) > 25000 || len(d.Rules) > 25000 || len(run.Tool.Extensions) > 100 {
			bad("run %d: %d results, %d rules, %d extensions (GitHub: 25,000, 25,000, 100)", ri, len(run.Results), len(d.Rules), len(run.Tool.Extensions))
		}
		if a := run.AutomationDetails; a != nil && a.ID == "" {
			bad("run %d: automationDetails.id is empty", ri)
		}
		ids := map[string]bool{}
		for _, rule := range d.Rules {
			switch {
			case rule.ID == "" || n(rule.ID) > 255 || ids[rule.ID]:
				bad("rule %q: id empty, longer than 255 characters or repeated", rule.ID)
			case rule.Name != nil && (*rule.Name == "" || n(*rule.Name) > 255):
				bad("rule %s: name %q", rule.ID, *rule.Name)
			case rule.ShortDescription == nil || rule.ShortDescription.Text == "" || n(rule.ShortDescription.Text) > 1024:
				bad("rule %s: shortDescription.text missing or longer than 1,024 characters", rule.ID)
			case rule.FullDescription == nil || rule.FullDescription.Text == "" || n(rule.FullDescription.Text) > 1024:
				bad("rule %s: fullDescription.text missing or longer than 1,024 characters", rule.ID)
			case rule.Help == nil || rule.Help.Text == "":
				bad("rule %s: help.text missing", rule.ID)
			case rule.Default != nil && rule.Default.Level != "note" && rule.Default.Level != "warning" && rule.Default.Level != "error":
				bad("rule %s: defaultConfiguration.level %q (GitHub: note, warning or error)", rule.ID, rule.Default.Level)
			case len(rule.Props.Tags) > 20:
				bad("rule %s: %d tags", rule.ID, len(rule.Props.Tags))
			}
			ids[rule.ID] = true
		}
		fingerprints := map[string]int{}
		for i, res := range run.Results {
			where := fmt.Sprintf("run %d result %d", ri, i)
			switch {
			case res.RuleID == nil || !ids[*res.RuleID]:
				bad("%s: ruleId %v is no rule's", where, res.RuleID)
			case res.RuleIndex != nil && (*res.RuleIndex < 0 || *res.RuleIndex >= len(d.Rules) || d.Rules[*res.RuleIndex].ID != *res.RuleID):
				bad("%s: ruleIndex %d is not rule %s", where, *res.RuleIndex, *res.RuleID)
			case res.Level != nil && !slices.Contains([]string{"none", "note", "warning", "error"}, *res.Level):
				bad("%s: level %q (SARIF: none, note, warning or error)", where, *res.Level)
			case res.Message.Text == "" || n(res.Message.Text) > sarifMessageMax:
				bad("%s: message.text empty or longer than %d characters", where, sarifMessageMax)
			case len(res.Locations) == 0 || len(res.Locations) > 10:
				bad("%s: %d locations (GitHub: 1 to 10)", where, len(res.Locations))
			case len(res.Related) > 1000:
				bad("%s: %d related locations (GitHub: 1,000)", where, len(res.Related))
			case res.Fingerprints[FingerprintKeyGitHub] == "":
				bad("%s: no partialFingerprints.%s", where, FingerprintKeyGitHub)
			}
			if res.RuleID != nil && res.Fingerprints[FingerprintKeyGitHub] != "" {
				key := *res.RuleID + "\x00" + res.Fingerprints[FingerprintKeyGitHub]
				if j, dup := fingerprints[key]; dup {
					bad("%s: rule %s and partialFingerprints.%s as result %d", where, *res.RuleID, FingerprintKeyGitHub, j)
				}
				fingerprints[key] = i
			}
			for li, l := range res.Locations {
				checkURI(fmt.Sprintf("%s location %d", where, li), l.Physical, run.OriginalURIBaseIDs, true)
			}
			for li, l := range res.Related {
				if l.Physical != nil {
					checkURI(fmt.Sprintf("%s related location %d", where, li), l.Physical, run.OriginalURIBaseIDs, false)
				}
			}
			for si, sup := range res.Suppressions {
				if sup.Location != nil && sup.Location.Physical != nil {
					checkURI(fmt.Sprintf("%s suppression %d", where, si), sup.Location.Physical, run.OriginalURIBaseIDs, false)
				}
			}
		}
	}
	return p
}

// githubMaxGzip is GitHub code scanning's bound on an uploaded SARIF file,
// gzip-compressed: 10 MB.
const githubMaxGzip = 10_000_000

// githubLimits is the test that says GitHub takes a file, so it must
// refuse each thing GitHub refuses: every case breaks one rule of a file
// it passes.
func TestGitHubLimitsRejects(t *testing.T) {
	base := writeSARIF(t, buildSARIF(t, "behavior"))
	if p := githubLimits(t, base); len(p) > 0 {
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
			p := githubLimits(t, data)
			if !slices.ContainsFunc(p, func(s string) bool { return strings.Contains(s, tc.want) }) {
				t.Errorf("githubLimits = %q, want a problem saying %q", p, tc.want)
			}
		})
	}
}
