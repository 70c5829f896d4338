// Package sariftest is the tests' one check of a SARIF output: valid
// against the vendored SARIF 2.1.0 schema (report/schema) and within what
// GitHub code scanning documents it takes. The package report's SARIF and
// the config report's (report/configreport) are checked by it.
package sariftest

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/Masterminds/semver/v3"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// MessageMax is the bound a result's message is kept to: GitHub documents
// none, and the writers keep to it (the report's sarifMessageMax, which a
// test of the report holds equal).
const MessageMax = 4096

// fingerprintKeyGitHub is the only partialFingerprints key GitHub reads
// (report.FingerprintKeyGitHub).
const fingerprintKeyGitHub = "primaryLocationLineHash"

// Check validates data, the output name, against the SARIF 2.1.0 schema at
// schemaPath (the vendored report/schema/sarif-2.1.0.json, relative to the
// test's package) and GitHub code scanning's documented limits
// (GitHubLimits), reporting every problem as a test error.
func Check(t testing.TB, schemaPath, name string, data []byte) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s is not JSON: %v", name, err)
	}
	if err := compile(t, schemaPath).Validate(inst); err != nil {
		t.Errorf("%s does not validate against the SARIF 2.1.0 schema: %v", name, err)
	}
	for _, p := range GitHubLimits(t, data) {
		t.Errorf("%s: %s", name, p)
	}
}

var (
	schemasMu sync.Mutex
	schemas   = map[string]*jsonschema.Schema{}
)

// compile compiles the vendored official SARIF 2.1.0 schema (draft-04)
// at path, with its formats (uri, uri-reference, date-time) asserted,
// once per path.
func compile(t testing.TB, path string) *jsonschema.Schema {
	t.Helper()
	schemasMu.Lock()
	defer schemasMu.Unlock()
	if s := schemas[path]; s != nil {
		return s
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("SARIF schema: %v", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("SARIF schema: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("sarif-2.1.0.json", doc); err != nil {
		t.Fatalf("SARIF schema: %v", err)
	}
	s, err := c.Compile("sarif-2.1.0.json")
	if err != nil {
		t.Fatalf("SARIF schema: %v", err)
	}
	schemas[path] = s
	return s
}

// GitHubLimits checks a SARIF log against what GitHub code scanning
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
// to 255 characters too, and messages to MessageMax: GitHub documents
// no bound for either. It returns what GitHub would refuse, nothing when
// it takes the file.
func GitHubLimits(t testing.TB, data []byte) []string {
	t.Helper()
	var log struct {
		Runs []sarifRun `json:"runs"`
	}
	if err := json.Unmarshal(data, &log); err != nil {
		t.Fatal(err)
	}
	var p problems
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if gz.Len() > githubMaxGzip {
		p.bad("%d bytes gzip-compressed, GitHub takes %d", gz.Len(), githubMaxGzip)
	}
	if len(log.Runs) == 0 || len(log.Runs) > 20 {
		p.bad("%d runs, GitHub takes 1 to 20", len(log.Runs))
	}
	for ri, run := range log.Runs {
		p.run(ri, run)
	}
	return p
}

// The parts of a SARIF log GitHubLimits reads.
type (
	sarifArtifact struct {
		URI  *string `json:"uri"`
		Base *string `json:"uriBaseId"`
	}
	sarifPhysical struct {
		Artifact *sarifArtifact           `json:"artifactLocation"`
		Region   *struct{ StartLine int } `json:"region"`
	}
	sarifLocation struct {
		Physical *sarifPhysical `json:"physicalLocation"`
	}
	sarifRule struct {
		ID               string                           `json:"id"`
		Name             *string                          `json:"name"`
		ShortDescription *struct{ Text string }           `json:"shortDescription"`
		FullDescription  *struct{ Text string }           `json:"fullDescription"`
		Help             *struct{ Text, Markdown string } `json:"help"`
		Default          *struct{ Level string }          `json:"defaultConfiguration"`
		Props            struct{ Tags []string }          `json:"properties"`
	}
	sarifResult struct {
		RuleID       *string               `json:"ruleId"`
		RuleIndex    *int                  `json:"ruleIndex"`
		Level        *string               `json:"level"`
		Message      struct{ Text string } `json:"message"`
		Locations    []sarifLocation       `json:"locations"`
		Related      []sarifLocation       `json:"relatedLocations"`
		Suppressions []struct {
			Location *sarifLocation `json:"location"`
		} `json:"suppressions"`
		Fingerprints map[string]string `json:"partialFingerprints"`
	}
	sarifRun struct {
		Tool struct {
			Driver struct {
				Name            string      `json:"name"`
				SemanticVersion *string     `json:"semanticVersion"`
				Rules           []sarifRule `json:"rules"`
			} `json:"driver"`
			Extensions []any `json:"extensions"`
		} `json:"tool"`
		OriginalURIBaseIDs map[string]any       `json:"originalUriBaseIds"`
		AutomationDetails  *struct{ ID string } `json:"automationDetails"`
		Results            []sarifResult        `json:"results"`
	}
)

// problems are what GitHubLimits found.
type problems []string

func (p *problems) bad(format string, a ...any) { *p = append(*p, fmt.Sprintf(format, a...)) }

// n counts the characters of s, as GitHub's limits do.
var n = utf8.RuneCountInString

// run checks run ri: its driver, rules and results.
func (p *problems) run(ri int, run sarifRun) {
	d := run.Tool.Driver
	if d.Name == "" {
		p.bad("run %d: tool.driver.name is not set", ri)
	}
	if d.SemanticVersion != nil {
		if _, err := semver.StrictNewVersion(*d.SemanticVersion); err != nil {
			p.bad("run %d: semanticVersion %q is not SemVer 2.0", ri, *d.SemanticVersion)
		}
	}
	if len(run.Results) > 25000 || len(d.Rules) > 25000 || len(run.Tool.Extensions) > 100 {
		p.bad("run %d: %d results, %d rules, %d extensions (GitHub: 25,000, 25,000, 100)", ri, len(run.Results), len(d.Rules), len(run.Tool.Extensions))
	}
	if a := run.AutomationDetails; a != nil && a.ID == "" {
		p.bad("run %d: automationDetails.id is empty", ri)
	}
	ids := map[string]bool{}
	for _, rule := range d.Rules {
		p.rule(rule, ids)
		ids[rule.ID] = true
	}
	fingerprints := map[string]int{}
	for i, res := range run.Results {
		where := fmt.Sprintf("run %d result %d", ri, i)
		p.result(where, res, d.Rules, ids)
		if res.RuleID != nil && res.Fingerprints[fingerprintKeyGitHub] != "" {
			key := *res.RuleID + "\x00" + res.Fingerprints[fingerprintKeyGitHub]
			if j, dup := fingerprints[key]; dup {
				p.bad("%s: rule %s and partialFingerprints.%s as result %d", where, *res.RuleID, fingerprintKeyGitHub, j)
			}
			fingerprints[key] = i
		}
		for li, l := range res.Locations {
			p.uri(fmt.Sprintf("%s location %d", where, li), l.Physical, run.OriginalURIBaseIDs, true)
		}
		for li, l := range res.Related {
			if l.Physical != nil {
				p.uri(fmt.Sprintf("%s related location %d", where, li), l.Physical, run.OriginalURIBaseIDs, false)
			}
		}
		for si, sup := range res.Suppressions {
			if sup.Location != nil && sup.Location.Physical != nil {
				p.uri(fmt.Sprintf("%s suppression %d", where, si), sup.Location.Physical, run.OriginalURIBaseIDs, false)
			}
		}
	}
}

// rule checks one rule, ids the rules before it.
func (p *problems) rule(rule sarifRule, ids map[string]bool) {
	switch {
	case rule.ID == "" || n(rule.ID) > 255 || ids[rule.ID]:
		p.bad("rule %q: id empty, longer than 255 characters or repeated", rule.ID)
	case rule.Name != nil && (*rule.Name == "" || n(*rule.Name) > 255):
		p.bad("rule %s: name %q", rule.ID, *rule.Name)
	case rule.ShortDescription == nil || rule.ShortDescription.Text == "" || n(rule.ShortDescription.Text) > 1024:
		p.bad("rule %s: shortDescription.text missing or longer than 1,024 characters", rule.ID)
	case rule.FullDescription == nil || rule.FullDescription.Text == "" || n(rule.FullDescription.Text) > 1024:
		p.bad("rule %s: fullDescription.text missing or longer than 1,024 characters", rule.ID)
	case rule.Help == nil || rule.Help.Text == "":
		p.bad("rule %s: help.text missing", rule.ID)
	case rule.Default != nil && rule.Default.Level != "note" && rule.Default.Level != "warning" && rule.Default.Level != "error":
		p.bad("rule %s: defaultConfiguration.level %q (GitHub: note, warning or error)", rule.ID, rule.Default.Level)
	case len(rule.Props.Tags) > 20:
		p.bad("rule %s: %d tags", rule.ID, len(rule.Props.Tags))
	}
}

// result checks one result's rule, level, message and counts.
func (p *problems) result(where string, res sarifResult, rules []sarifRule, ids map[string]bool) {
	switch {
	case res.RuleID == nil || !ids[*res.RuleID]:
		p.bad("%s: ruleId %v is no rule's", where, res.RuleID)
	case res.RuleIndex != nil && (*res.RuleIndex < 0 || *res.RuleIndex >= len(rules) || rules[*res.RuleIndex].ID != *res.RuleID):
		p.bad("%s: ruleIndex %d is not rule %s", where, *res.RuleIndex, *res.RuleID)
	case res.Level != nil && !slices.Contains([]string{"none", "note", "warning", "error"}, *res.Level):
		p.bad("%s: level %q (SARIF: none, note, warning or error)", where, *res.Level)
	case res.Message.Text == "" || n(res.Message.Text) > MessageMax:
		p.bad("%s: message.text empty or longer than %d characters", where, MessageMax)
	case len(res.Locations) == 0 || len(res.Locations) > 10:
		p.bad("%s: %d locations (GitHub: 1 to 10)", where, len(res.Locations))
	case len(res.Related) > 1000:
		p.bad("%s: %d related locations (GitHub: 1,000)", where, len(res.Related))
	case res.Fingerprints[fingerprintKeyGitHub] == "":
		p.bad("%s: no partialFingerprints.%s", where, fingerprintKeyGitHub)
	}
}

// uri checks the artifact location of a physical location; a result's
// own (primary) may not lean on a uriBaseId.
func (p *problems) uri(where string, ph *sarifPhysical, bases map[string]any, primary bool) {
	if ph == nil {
		p.bad("%s: no physicalLocation", where)
		return
	}
	if ph.Artifact == nil || ph.Artifact.URI == nil || *ph.Artifact.URI == "" {
		p.bad("%s: a physical location without artifactLocation.uri", where)
		return
	}
	raw := *ph.Artifact.URI
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		p.bad("%s: uri %q is no URI reference: %v", where, raw, err)
	case u.Scheme != "" || u.Host != "" || u.Opaque != "":
		p.bad("%s: uri %q has a scheme or a host; GitHub takes a path relative to the repository", where, raw)
	case strings.HasPrefix(u.Path, "/"):
		p.bad("%s: uri %q is absolute; GitHub takes a path relative to the repository", where, raw)
	case strings.Contains(raw, `\`) || u.RawQuery != "" || u.Fragment != "":
		p.bad("%s: uri %q has a backslash, a query or a fragment", where, raw)
	case slices.Contains(strings.Split(u.Path, "/"), ".."):
		p.bad("%s: uri %q leaves its root (..)", where, raw)
	}
	if b := ph.Artifact.Base; b != nil {
		if primary {
			p.bad("%s: uriBaseId %s on a result's location; GitHub reads its uri from the repository's root", where, *b)
		} else if bases[*b] == nil {
			p.bad("%s: uriBaseId %s is not in originalUriBaseIds", where, *b)
		}
	}
	if primary && (ph.Region == nil || ph.Region.StartLine < 1) {
		p.bad("%s: no region.startLine of 1 or more", where)
	} else if ph.Region != nil && ph.Region.StartLine < 1 {
		p.bad("%s: region.startLine %d", where, ph.Region.StartLine)
	}
}

// githubMaxGzip is GitHub code scanning's bound on an uploaded SARIF file,
// gzip-compressed: 10 MB.
const githubMaxGzip = 10_000_000
