// Package rubric holds the versioned rubric files, the reason-code catalog
// and the pure Evaluate function that turns an evidence bundle into
// findings, dimension scores and a composite score.
//
// A rubric file is embedded at build time and identified by its version and
// the SHA-256 of its bytes. Probes are Go functions over the bundle; their
// parameters (thresholds, penalties, verb lists) come from the file, so a
// rubric version fixes both what is checked and how it is weighed.
package rubric

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/verifymcp/verifymcp/ecosystem"

	"go.yaml.in/yaml/v3"
)

// CurrentVersion is the rubric version in force.
const CurrentVersion = "15"

//go:embed versions/*.yaml
var files embed.FS

// ErrUnknownVersion is returned by Load for a version with no embedded file.
var ErrUnknownVersion = errors.New("rubric: unknown version")

// Kind says whether a code is a claim or a measurement.
type Kind string

const (
	// KindFinding is a claim about the package that can be right or wrong.
	KindFinding Kind = "finding"
	// KindMeasurement is a number; it fires whatever its value.
	KindMeasurement Kind = "measurement"
)

// Severity ranks findings. Measurements are always SeverityInfo.
type Severity string

// Severities, lowest first.
const (
	SeverityInfo     Severity = "info"
	SeverityLow      Severity = "low"
	SeverityMedium   Severity = "medium"
	SeverityHigh     Severity = "high"
	SeverityCritical Severity = "critical"
)

// Severities lists every severity, highest first, the order reports use.
func Severities() []Severity {
	return []Severity{SeverityCritical, SeverityHigh, SeverityMedium, SeverityLow, SeverityInfo}
}

// Rank orders severities: info is 0, critical is 4, anything else -1.
func (s Severity) Rank() int {
	switch s {
	case SeverityInfo:
		return 0
	case SeverityLow:
		return 1
	case SeverityMedium:
		return 2
	case SeverityHigh:
		return 3
	case SeverityCritical:
		return 4
	default:
		return -1
	}
}

// Rubric is one parsed, validated rubric file. A Rubric returned by Current
// is shared; treat every Rubric as read-only.
type Rubric struct {
	Version     string
	Hash        string // "sha256:" and the hex SHA-256 of the file bytes
	Description string
	Dimensions  []Dimension
	Codes       []CodeDef // sorted by code
	Params      Parameters

	byCode map[string]CodeDef
	verbs  map[string]bool // Params.ActionSafety.WriteVerbs as a set
	action *actionReader   // the v11 reading of a tool's action; nil before
}

// Dimension is one weighted part of the composite score.
type Dimension struct {
	ID     string  `yaml:"id" json:"id"`
	Weight float64 `yaml:"weight" json:"weight"`
	// Signals are the evidence signals the dimension needs; see Evaluate.
	Signals []string `yaml:"signals" json:"signals"`
	// ZeroPoint is the score given when a needed signal is unavailable,
	// error or missing. Non-zero only with a written ZeroPointReason.
	ZeroPoint       float64 `yaml:"zero_point" json:"zero_point"`
	ZeroPointReason string  `yaml:"zero_point_reason" json:"zero_point_reason"`
	Description     string  `yaml:"description" json:"description"`
	// Ecosystems says, per ecosystem ("pypi"), how the dimension reads
	// its evidence there when that evidence differs from what the
	// description (written for npm) names: a field that does not exist in
	// that ecosystem, or exists with another meaning. From rubric v10.
	Ecosystems map[string]string `yaml:"ecosystems" json:"ecosystems,omitempty"`
}

// CodeDef is one entry of the reason-code catalog.
type CodeDef struct {
	Code        string   `yaml:"code" json:"code"`
	Kind        Kind     `yaml:"kind" json:"kind"`
	Severity    Severity `yaml:"severity" json:"severity"`
	Dimension   string   `yaml:"dimension" json:"dimension"`
	Description string   `yaml:"description" json:"description"`
	Remediation string   `yaml:"remediation" json:"remediation"`
	// Graded codes take each finding's severity from the evidence (an
	// advisory's CVSS score, an alert's severity); Severity is then the
	// highest a finding of the code can have. Only the probes that grade a
	// code may mark it graded, which validation checks.
	Graded bool `yaml:"graded" json:"graded,omitempty"`
}

// Parameters are the probes' tunable values. Every field is required by the
// file; the YAML documents each one.
type Parameters struct {
	EvidenceMaxChars    int                       `yaml:"evidence_max_chars"`
	Session             SessionParams             `yaml:"session"`
	ProtocolHygiene     ProtocolHygieneParams     `yaml:"protocol_hygiene"`
	SpecRecency         SpecRecencyParams         `yaml:"spec_recency"`
	DescriptionCoverage DescriptionCoverageParams `yaml:"description_coverage"`
	ActionSafety        ActionSafetyParams        `yaml:"action_safety"`
	// Behavior parameterises the behaviour dimensions. It is required by a
	// rubric that has any of them, and absent from rubric v1.
	Behavior *BehaviorParams `yaml:"behavior"`
	// Supply parameterises the supply-chain dimensions. It is required by
	// a rubric that has any of them, and absent from rubrics v1 and v2.
	Supply *SupplyParams `yaml:"supply"`
	// PromptIntegrity parameterises the prompt_contract_integrity
	// dimension, CapabilityClarity the tool_capability_clarity dimension,
	// and Judge pins the judge specification whose verdicts the latter
	// scores. Each is required by a rubric that reads it (v5 on) and
	// absent from the others.
	PromptIntegrity   *PromptIntegrityParams   `yaml:"prompt_contract_integrity"`
	CapabilityClarity *CapabilityClarityParams `yaml:"tool_capability_clarity"`
	Judge             *JudgePin                `yaml:"judge"`
	// Drift parameterises the contract_drift dimension; required by a
	// rubric that has it (v8 on) and absent from the others.
	Drift *DriftParams `yaml:"contract_drift"`
	// Composite holds the critical cap of the composite score; required
	// from rubric v9 on and absent before (see validateCap).
	Composite *CompositeParams `yaml:"composite"`
	// Aggregate bounds floods of findings; required from rubric v12 on and
	// absent before (aggregate.go).
	Aggregate *AggregateParams `yaml:"aggregate"`
}

// AggregateParams fold a flood of findings (rubric v12 on): files of one
// directory fold into one finding; past MaxPerSubject findings of one code
// and subject, the rest fold into one. Examples is how many items a folded
// finding names.
type AggregateParams struct {
	MaxPerSubject int `yaml:"max_per_subject"`
	Examples      int `yaml:"examples"`
}

// SessionParams parameterise the session dimension.
type SessionParams struct {
	DiscoverUnansweredScore float64 `yaml:"discover_unanswered_score"`
}

// ProtocolHygieneParams are the penalties of the protocol_hygiene dimension.
type ProtocolHygieneParams struct {
	NonJSONPenalty    float64 `yaml:"non_json_penalty"`
	ListFailedPenalty float64 `yaml:"list_failed_penalty"`
	TruncatedPenalty  float64 `yaml:"truncated_penalty"`
	// ListUnsupportedPenalty, from rubric v11, is deducted for a list
	// method of a declared capability that the server answered with
	// "Method not found" (pkg.protocol.list.unsupported); before v11 such
	// an answer was a failed list (pkg.protocol.list.failed). Nil when the
	// rubric does not tell them apart.
	ListUnsupportedPenalty *float64 `yaml:"list_unsupported_penalty"`
}

// SpecRecencyParams score negotiated protocol versions.
type SpecRecencyParams struct {
	Scores        map[string]float64 `yaml:"scores"`
	UnlistedScore float64            `yaml:"unlisted_score"`
}

// DescriptionCoverageParams parameterise the description_coverage dimension.
type DescriptionCoverageParams struct {
	MinChars int `yaml:"min_chars"`
}

// ActionSafetyParams parameterise the action_safety dimension.
type ActionSafetyParams struct {
	ContradictionPenalty float64  `yaml:"contradiction_penalty"`
	AbsentSharePenalty   float64  `yaml:"absent_share_penalty"`
	WriteVerbs           []string `yaml:"write_verbs"`
	// ReadVerbs, from rubric v11, are the verbs of a tool that reads or
	// computes without changing anything. When set, a read-only claim is
	// contradicted only by the tool's own action (the verb its name,
	// title or first sentence starts with; see action.go), never by a
	// write verb anywhere in its name.
	ReadVerbs []string `yaml:"read_verbs"`
	// Denials, from rubric v11, are phrases (regular expressions, matched
	// without case) by which a tool's description says it changes nothing
	// ("Nothing is written"); such a tool's own text answers the verb.
	Denials []string `yaml:"denials"`
	// Computed, from rubric v11, are objects a tool makes and hands back
	// rather than stores (a plan, a summary): "create" in
	// create_composition_plan computes one, which changes nothing.
	Computed []string `yaml:"computed"`
}

// BehaviorParams parameterise the behaviour dimensions (rubric v2 on).
type BehaviorParams struct {
	Egress          EgressParams          `yaml:"egress"`
	ExecutionSafety ExecutionSafetyParams `yaml:"execution_safety"`
}

// EgressParams parameterise the egress_resilience dimension.
type EgressParams struct {
	DNSOnlyScore float64 `yaml:"dns_only_score"`
	AttemptScore float64 `yaml:"attempt_score"`
	// BeaconBurstGapMS: run-phase network events after the listing that
	// follow the previous one by less than this belong to one attempt.
	BeaconBurstGapMS int64 `yaml:"beacon_burst_gap_ms"`
}

// ExecutionSafetyParams parameterise the execution_safety dimension.
type ExecutionSafetyParams struct {
	SpawnPenalty     float64 `yaml:"spawn_penalty"`
	FileWritePenalty float64 `yaml:"file_write_penalty"`
	// Program names, matched against the base name of a process's
	// executable and of its argv[0].
	Shells          []string `yaml:"shells"`
	NetworkTools    []string `yaml:"network_tools"`
	PackageManagers []string `yaml:"package_managers"`
	// MultiCall names binaries (busybox) that run the applet named by
	// their first argument.
	MultiCall []string `yaml:"multi_call"`
	// CommandWords, from rubric v13, are the words by which a tool's
	// name, title or description says it runs commands: a shell run with
	// -c during a call of a tool that says none of them (nor names the
	// program) is pkg.behavior.tool.undeclared_shell. Absent before v13.
	CommandWords []string `yaml:"command_words"`
}

// file is the YAML layout of a rubric file.
type file struct {
	Version     string      `yaml:"version"`
	Description string      `yaml:"description"`
	Parameters  *Parameters `yaml:"parameters"`
	Dimensions  []Dimension `yaml:"dimensions"`
	Codes       []CodeDef   `yaml:"codes"`
}

// Versions lists the embedded rubric versions in ascending order.
func Versions() []string {
	entries, err := files.ReadDir("versions")
	if err != nil {
		// The directory is embedded; failing to read it is a build defect.
		panic(fmt.Sprintf("rubric: read embedded versions: %v", err))
	}
	var vs []string
	for _, e := range entries {
		name := e.Name()
		if v, ok := strings.CutPrefix(strings.TrimSuffix(name, ".yaml"), "v"); ok && strings.HasSuffix(name, ".yaml") {
			vs = append(vs, v)
		}
	}
	slices.SortFunc(vs, compareVersions)
	return vs
}

// compareVersions orders "2" before "10".
func compareVersions(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

// Load parses and validates the embedded rubric of the given version ("1";
// a leading "v" is accepted). Each call returns a new Rubric.
func Load(version string) (*Rubric, error) {
	v := strings.TrimPrefix(version, "v")
	data, err := files.ReadFile("versions/v" + v + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("%w %q (have %s)", ErrUnknownVersion, version, strings.Join(Versions(), ", "))
	}
	r, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("rubric v%s: %w", v, err)
	}
	if r.Version != v {
		return nil, fmt.Errorf("rubric v%s: file declares version %q", v, r.Version)
	}
	return r, nil
}

var current = sync.OnceValue(func() *Rubric {
	r, err := Load(CurrentVersion)
	if err != nil {
		// The embedded current rubric is validated by the tests; a failure
		// here is a build defect, not a runtime condition.
		panic(err)
	}
	return r
})

// Current returns the rubric version in force. The value is shared and must
// not be modified.
func Current() *Rubric { return current() }

// Code returns the catalog entry of code.
func (r *Rubric) Code(code string) (CodeDef, bool) {
	if r.byCode != nil {
		d, ok := r.byCode[code]
		return d, ok
	}
	for _, d := range r.Codes {
		if d.Code == code {
			return d, true
		}
	}
	return CodeDef{}, false
}

// Dimension returns the dimension with the given id.
func (r *Rubric) Dimension(id string) (Dimension, bool) {
	for _, d := range r.Dimensions {
		if d.ID == id {
			return d, true
		}
	}
	return Dimension{}, false
}

var codePattern = regexp.MustCompile(`^pkg\.[a-z0-9_]+(\.[a-z0-9_]+)+$`)

// knownSignals are the signal names a rubric may depend on.
var knownSignals = map[string]bool{
	"registry": true, "registry.metadata": true, "sandbox.install": true, "sandbox.session": true, "contract": true,
	"osv": true, "socket": true, "github": true, "dnssec": true, "judge": true, "sandbox.behavior": true, "drift": true,
	"mcp_registry": true, // from v11: the MCP registry's entry of the package's mcpName
}

// parse decodes and validates a rubric file. Unknown fields are errors, so a
// misspelt parameter cannot silently fall back to zero.
func parse(data []byte) (*Rubric, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f file
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty rubric file")
		}
		return nil, fmt.Errorf("decode: %w", err)
	}
	if f.Parameters == nil {
		return nil, errors.New("parameters: missing")
	}
	sum := sha256.Sum256(data)
	r := &Rubric{
		Version:     f.Version,
		Hash:        "sha256:" + hex.EncodeToString(sum[:]),
		Description: strings.TrimSpace(f.Description),
		Dimensions:  f.Dimensions,
		Codes:       f.Codes,
		Params:      *f.Parameters,
		byCode:      make(map[string]CodeDef, len(f.Codes)),
	}
	if err := r.validate(); err != nil {
		return nil, err
	}
	r.verbs = make(map[string]bool, len(r.Params.ActionSafety.WriteVerbs))
	for _, v := range r.Params.ActionSafety.WriteVerbs {
		r.verbs[v] = true
	}
	r.action = newActionReader(r.Params.ActionSafety)
	sort.Slice(r.Codes, func(i, j int) bool { return r.Codes[i].Code < r.Codes[j].Code })
	return r, nil
}

func (r *Rubric) validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if r.Version == "" {
		add("version: missing")
	}
	if len(r.Dimensions) == 0 {
		add("dimensions: none")
	}
	dims, dimErrs := r.validateDimensions()
	errs = append(errs, dimErrs...)
	errs = append(errs, r.validateCodes(dims)...)
	errs = append(errs, r.validateEmitted(dims)...)

	errs = append(errs, r.Params.validate()...)
	if r.usesBehavior() {
		errs = append(errs, r.Params.Behavior.validate()...)
		errs = append(errs, r.validateCommandWords()...)
	}
	if r.usesSupply() {
		errs = append(errs, r.Params.Supply.validate()...)
		errs = append(errs, r.validateDNSSEC()...)
	}
	errs = append(errs, r.validatePromptIntegrity()...)
	errs = append(errs, r.validateCapabilityClarity()...)
	errs = append(errs, r.validateDrift()...)
	errs = append(errs, r.validateCap()...)
	errs = append(errs, r.validateAggregate()...)
	return errors.Join(errs...)
}

// validateDimensions checks each dimension of r and returns the set of
// dimension ids it declares.
func (r *Rubric) validateDimensions() (map[string]bool, []error) {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	dims := map[string]bool{}
	for i, d := range r.Dimensions {
		where := fmt.Sprintf("dimensions[%d] %q", i, d.ID)
		switch {
		case d.ID == "":
			add("dimensions[%d]: id missing", i)
		case dims[d.ID]:
			add("%s: duplicate id", where)
		case scorers[d.ID].score == nil && scorers[d.ID].observe == nil:
			add("%s: no probe implements this dimension", where)
		}
		// A probe that reads signals of its own accord (the supply-chain
		// probes) needs the gate to have seen them.
		for _, s := range scorers[d.ID].needs {
			if !slices.Contains(d.Signals, s) {
				add("%s: the probe reads signal %q, which the dimension does not name", where, s)
			}
		}
		dims[d.ID] = true
		if !(d.Weight > 0) || math.IsInf(d.Weight, 0) {
			add("%s: weight %v must be greater than 0", where, d.Weight)
		}
		if len(d.Signals) == 0 {
			add("%s: names no signals", where)
		}
		for _, s := range d.Signals {
			if !knownSignals[s] {
				add("%s: unknown signal %q", where, s)
			}
		}
		if d.ZeroPoint < 0 || d.ZeroPoint > 100 || math.IsNaN(d.ZeroPoint) {
			add("%s: zero_point %v outside 0..100", where, d.ZeroPoint)
		}
		if d.ZeroPoint != 0 && strings.TrimSpace(d.ZeroPointReason) == "" {
			add("%s: zero_point %v needs a written zero_point_reason", where, d.ZeroPoint)
		}
		if strings.TrimSpace(d.Description) == "" {
			add("%s: description missing", where)
		}
		for _, eco := range slices.Sorted(maps.Keys(d.Ecosystems)) {
			switch {
			case !knownEcosystem(eco):
				add("%s: ecosystems: unknown ecosystem %q", where, eco)
			case strings.TrimSpace(d.Ecosystems[eco]) == "":
				add("%s: ecosystems.%s: empty", where, eco)
			}
		}
	}
	return dims, errs
}

// validateCodes checks each code of r's catalog against dims, the
// rubric's dimension ids, and indexes it in r.byCode.
func (r *Rubric) validateCodes(dims map[string]bool) []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	for i, c := range r.Codes {
		where := fmt.Sprintf("codes[%d] %q", i, c.Code)
		if !codePattern.MatchString(c.Code) {
			add("%s: code does not match %s", where, codePattern)
		}
		if _, dup := r.byCode[c.Code]; dup {
			add("%s: duplicate code", where)
		}
		r.byCode[c.Code] = c
		switch c.Kind {
		case KindFinding:
			if strings.TrimSpace(c.Remediation) == "" {
				add("%s: a finding needs a remediation", where)
			}
		case KindMeasurement:
			if c.Severity != SeverityInfo {
				add("%s: a measurement has severity info, not %q", where, c.Severity)
			}
			if c.Graded {
				add("%s: a measurement cannot be graded", where)
			}
		default:
			add("%s: kind %q is neither finding nor measurement", where, c.Kind)
		}
		if c.Severity.Rank() < 0 {
			add("%s: unknown severity %q", where, c.Severity)
		}
		if !dims[c.Dimension] {
			add("%s: dimension %q is not in this rubric", where, c.Dimension)
		}
		if strings.TrimSpace(c.Description) == "" {
			add("%s: description missing", where)
		}
	}
	return errs
}

// validateEmitted checks the catalog against the probes of r's
// dimensions (dims holds their ids).
func (r *Rubric) validateEmitted(dims map[string]bool) []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	// Every code a probe of this rubric can emit must be catalogued under
	// that probe's dimension, and the catalog must hold no code that no
	// probe emits: a benchmark case expecting it would never match.
	emitted := map[string]bool{}
	for _, d := range r.Dimensions {
		emits := scorers[d.ID].emitsFor(d, r.Version)
		codes := make([]string, 0, len(emits))
		for code := range emits {
			codes = append(codes, code)
		}
		sort.Strings(codes)
		for _, code := range codes {
			emitted[code] = true
			def, ok := r.byCode[code]
			switch {
			case !ok:
				add("dimension %q: probe emits %s, which is not in the catalog", d.ID, code)
			case def.Dimension != d.ID:
				add("code %s: catalogued under %q, but emitted by dimension %q", code, def.Dimension, d.ID)
			case def.Kind != emits[code]:
				add("code %s: catalogued as a %s, but the probe emits a %s", code, def.Kind, emits[code])
			case def.Graded != scorers[d.ID].graded[code]:
				if def.Graded {
					add("code %s: catalogued as graded, but its probe gives it the catalog severity", code)
				} else {
					add("code %s: its probe grades each finding's severity, so the catalog must mark it graded", code)
				}
			}
		}
	}
	for _, c := range r.Codes {
		if !emitted[c.Code] && dims[c.Dimension] {
			add("code %s: no probe emits it", c.Code)
		}
	}
	return errs
}

// usesBehavior reports whether any dimension of r is a behaviour dimension,
// whose probe reads parameters.behavior.
func (r *Rubric) usesBehavior() bool {
	for _, d := range r.Dimensions {
		if behaviorDimensions[d.ID] {
			return true
		}
	}
	return false
}

func (p *BehaviorParams) validate() []error {
	if p == nil {
		return []error{errors.New("parameters.behavior: missing, and the rubric has behaviour dimensions")}
	}
	var errs []error
	add := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("parameters.behavior."+format, args...))
	}
	score := func(name string, v float64) {
		if v < 0 || v > 100 || math.IsNaN(v) {
			add("%s: %v outside 0..100", name, v)
		}
	}
	penalty := func(name string, v float64) {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			add("%s: %v must be 0 or more", name, v)
		}
	}
	programs := func(name string, names []string) {
		if len(names) == 0 {
			add("%s: empty", name)
		}
		for _, n := range names {
			if n == "" || n == "." || n == ".." || strings.ContainsAny(n, "/ \t\n") {
				add("%s: %q is not a program's base name", name, n)
			}
		}
	}
	score("egress.dns_only_score", p.Egress.DNSOnlyScore)
	score("egress.attempt_score", p.Egress.AttemptScore)
	if p.Egress.BeaconBurstGapMS < 0 {
		add("egress.beacon_burst_gap_ms: %d must be 0 or more", p.Egress.BeaconBurstGapMS)
	}
	es := p.ExecutionSafety
	penalty("execution_safety.spawn_penalty", es.SpawnPenalty)
	penalty("execution_safety.file_write_penalty", es.FileWritePenalty)
	programs("execution_safety.shells", es.Shells)
	programs("execution_safety.network_tools", es.NetworkTools)
	programs("execution_safety.package_managers", es.PackageManagers)
	programs("execution_safety.multi_call", es.MultiCall)
	for _, w := range es.CommandWords {
		if toks := tokens(w); len(toks) != 1 || toks[0] != w {
			add("execution_safety.command_words: %q is not one lower-case token", w)
		}
	}
	return errs
}

func (p Parameters) validate() []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf("parameters."+format, args...)) }
	score := func(name string, v float64) {
		if v < 0 || v > 100 || math.IsNaN(v) {
			add("%s: %v outside 0..100", name, v)
		}
	}
	penalty := func(name string, v float64) {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			add("%s: %v must be 0 or more", name, v)
		}
	}
	if p.EvidenceMaxChars < 16 {
		add("evidence_max_chars: %d is under 16", p.EvidenceMaxChars)
	}
	score("session.discover_unanswered_score", p.Session.DiscoverUnansweredScore)
	penalty("protocol_hygiene.non_json_penalty", p.ProtocolHygiene.NonJSONPenalty)
	penalty("protocol_hygiene.list_failed_penalty", p.ProtocolHygiene.ListFailedPenalty)
	penalty("protocol_hygiene.truncated_penalty", p.ProtocolHygiene.TruncatedPenalty)
	if len(p.SpecRecency.Scores) == 0 {
		add("spec_recency.scores: empty")
	}
	for v, s := range p.SpecRecency.Scores {
		score("spec_recency.scores."+v, s)
	}
	score("spec_recency.unlisted_score", p.SpecRecency.UnlistedScore)
	if p.DescriptionCoverage.MinChars < 1 {
		add("description_coverage.min_chars: %d must be at least 1", p.DescriptionCoverage.MinChars)
	}
	penalty("action_safety.contradiction_penalty", p.ActionSafety.ContradictionPenalty)
	penalty("action_safety.absent_share_penalty", p.ActionSafety.AbsentSharePenalty)
	if len(p.ActionSafety.WriteVerbs) == 0 {
		add("action_safety.write_verbs: empty")
	}
	for _, v := range p.ActionSafety.WriteVerbs {
		if toks := tokens(v); len(toks) != 1 || toks[0] != v {
			add("action_safety.write_verbs: %q is not one lower-case token", v)
		}
	}
	for _, v := range p.ActionSafety.ReadVerbs {
		if toks := tokens(v); len(toks) != 1 || toks[0] != v {
			add("action_safety.read_verbs: %q is not one lower-case token", v)
		}
		if slices.Contains(p.ActionSafety.WriteVerbs, v) {
			add("action_safety.read_verbs: %q is also a write verb", v)
		}
	}
	for _, d := range p.ActionSafety.Denials {
		if _, err := regexp.Compile("(?i)" + d); err != nil {
			add("action_safety.denials: %q: %v", d, err)
		}
	}
	if len(p.ActionSafety.Denials) > 0 && len(p.ActionSafety.ReadVerbs) == 0 {
		add("action_safety.denials: set without read_verbs")
	}
	for _, v := range p.ActionSafety.Computed {
		if toks := tokens(v); len(toks) != 1 || toks[0] != v {
			add("action_safety.computed: %q is not one lower-case token", v)
		}
	}
	return errs
}

// knownEcosystem reports whether a dimension's ecosystems may name eco:
// the name of an ecosystem of package ecosystem.
func knownEcosystem(eco string) bool {
	_, ok := ecosystem.Of(eco)
	return ok && eco != ""
}
