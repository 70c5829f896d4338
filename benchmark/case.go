// Package benchmark holds the case corpus and the harness that scores the
// scanner against it: for a package whose defects a person has established,
// does the scanner report the reason codes that person expected, and does
// it report anything they did not.
//
// A case (a YAML file under cases/) names one exact package version, the
// reason-code prefixes it asserts ground truth over (its scope) and the codes
// it expects. The harness does not scan: the caller runs the production
// pipeline on each case's target (see Case.ResolveTarget), or reads a stored
// run, and hands the emitted findings to Compare. Matching is by code within
// the scope, never by value; findings outside the scope are shown and counted
// in nothing. Synthetic fixtures and reviewed real packages are two kinds of
// case and are summarised separately, never in one figure.
//
// Cases are read against the reason-code catalog of the rubric in force: a
// case that expects a code the catalog does not hold, scopes an entry that
// covers no code of it, or scopes a measurement without expecting it cannot
// be scored as written, and is refused with the file and line at fault. A
// refused case is reported as refused and counted in nothing; the others are
// scored (ReadCorpus). LoadCorpus is the strict form, for tests: any refusal
// is its error.
package benchmark

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Kind is the kind of a case. The two kinds are reported apart.
type Kind string

const (
	// KindSynthetic is a fixture built by the project with one flaw and a
	// statement of what would change the answer.
	KindSynthetic Kind = "synthetic"
	// KindReviewed is a real published package whose defects a person
	// established by review.
	KindReviewed Kind = "reviewed"
)

// Kinds lists the kinds in report order.
func Kinds() []Kind { return []Kind{KindSynthetic, KindReviewed} }

// TrackPackage is the only track this harness scores.
const TrackPackage = "package"

// ReviewerPending is the reviewer of a case no person has signed yet. Such a
// case runs, but its results are never publishable.
const ReviewerPending = "pending"

// SelectedUnknown is the selection date of a reviewed case for which no
// record of when it was selected exists: whether it was selected before it
// was scored cannot be checked, so its results are never publishable.
const SelectedUnknown = "unknown"

// Sentinel errors; every error LoadCorpus and Validate return wraps one.
var (
	// ErrInvalidCase is a malformed or incomplete case file.
	ErrInvalidCase = errors.New("invalid case")
	// ErrTrack is a case of another track than package.
	ErrTrack = errors.New("unsupported track")
	// ErrTarget is a target that does not pin one exact package version
	// (registry-only, a range, a tag, no version) or that is of another
	// ecosystem or track.
	ErrTarget = errors.New("unpinned or unsupported target")
)

// CaseError is a problem with one case file, located by file and line.
type CaseError struct {
	File  string // path of the file within the corpus
	Line  int    // 0 when the problem has no single line
	Field string // the YAML field at fault, or ""
	Err   error
}

func (e *CaseError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *CaseError) Unwrap() error { return e.Err }

// Case is one benchmark case as written in its YAML file.
type Case struct {
	ID string `yaml:"id" json:"id"`
	// Kind must agree with the directory the file is in
	// (cases/synthetic or cases/reviewed).
	Kind  Kind   `yaml:"kind" json:"kind"`
	Track string `yaml:"track" json:"track"`
	// Target pins one exact version: npm:NAME@VERSION for a reviewed
	// package, fixture:ID@VERSION for a synthetic fixture under fixtures/.
	Target string `yaml:"target" json:"target"`
	// Reviewer is the name of the person who established the expected
	// codes, or ReviewerPending.
	Reviewer string `yaml:"reviewer" json:"reviewer"`
	// Provenance says how this package came to be reviewed; it is written
	// before the case is first scored.
	Provenance string `yaml:"provenance" json:"provenance"`
	// Selected is the date (YYYY-MM-DD) the package was selected for
	// review, required for a reviewed case: a case whose target was
	// scanned before it is "selected after scoring" and not publishable.
	Selected string `yaml:"selected" json:"selected,omitempty"`
	// RubricVersion is the rubric version the case was reviewed under.
	RubricVersion string `yaml:"rubric_version" json:"rubric_version"`
	// Scope lists the reason-code prefixes (ending in ".") or exact codes
	// the case asserts ground truth over.
	Scope []string `yaml:"scope" json:"scope"`
	// Expected are the codes the reviewer expects, each within Scope. An
	// empty list asserts that nothing in scope is wrong with the package.
	Expected []string `yaml:"expected" json:"expected"`
	// Statement says, for a synthetic fixture, what would change the
	// answer.
	Statement string `yaml:"statement" json:"statement,omitempty"`
	// Bin, Args and Env are what the server needs to start. Env values are
	// placeholders: the file is public.
	Bin   string            `yaml:"bin" json:"bin,omitempty"`
	Args  []string          `yaml:"args" json:"args"`
	Env   map[string]string `yaml:"env" json:"-"`
	Notes string            `yaml:"notes" json:"notes,omitempty"`
	// Findings justify, one by one, the findings the reviewer saw the
	// scanner raise within the scope: each names its code and subject and
	// says in a line why the claim is true of this package. A finding the
	// scanner raises in scope that is not listed here is unjustified.
	Findings []Justified `yaml:"findings" json:"findings,omitempty"`
	Disputes []Dispute   `yaml:"disputes" json:"disputes"`

	// File is the path of the case file within the corpus.
	File string `yaml:"-" json:"file"`
	// Refused, when not empty, says why the case was refused when the
	// corpus was read: every problem, each a *CaseError with its file and
	// line. A refused case is reported, never scanned, and counted in
	// nothing. It is reported under the id its file name gives and the
	// kind of its directory, whatever the file says.
	Refused []error `yaml:"-" json:"-"`
	// lines maps a top-level field, and each entry of scope, expected and
	// disputes (scope[0]), to its line in File.
	lines map[string]int
}

// Justified is one finding of a case, with why it is true.
type Justified struct {
	Code    string `yaml:"code" json:"code"`
	Subject string `yaml:"subject" json:"subject"`
	// Match, when set, is text the finding's message or evidence holds,
	// which tells it from the case's other findings of the same code and
	// subject (the name looked up, the file written).
	Match string `yaml:"match" json:"match,omitempty"`
	Why   string `yaml:"why" json:"why"`
}

// Justifies returns the justification of a finding, given its code,
// subject and text (message and evidence), if the case gives one.
func (c Case) Justifies(code, subject, text string) (string, bool) {
	for _, j := range c.Findings {
		if j.Code == code && j.Subject == subject && strings.Contains(text, j.Match) {
			return j.Why, true
		}
	}
	return "", false
}

// Dispute is a challenge to a case's expected codes or scope, and its
// answer (the method: anyone may dispute a case, the server's author needs
// no standing; the reviewer answers in the open). Its status is open until
// the reviewer answers: upheld (the case stays, the disagreement on
// record), corrected (the case was changed) or withdrawn (the case is out
// of every total). A case with an open dispute is not publishable, and one
// whose open dispute asks for withdrawal is out of every total while it is
// open.
type Dispute struct {
	// Code is the code in dispute, when the dispute is about one.
	Code string `yaml:"code" json:"code,omitempty"`
	// RaisedBy names who raised it: a person, or the server's author
	// (which may be an organisation).
	RaisedBy string `yaml:"raised_by" json:"raised_by"`
	Date     string `yaml:"date" json:"date"` // YYYY-MM-DD
	// Claim is the claim of the case that is disputed, and why, in terms
	// of the artefact. Question is its older name, still read.
	Claim    string `yaml:"claim" json:"claim"`
	Question string `yaml:"question" json:"-"`
	// WithdrawalRequested is set when the dispute asks for the case to be
	// withdrawn: while the dispute is open the case counts in nothing.
	WithdrawalRequested bool `yaml:"withdrawal_requested" json:"withdrawal_requested,omitempty"`
	// Status is open, upheld, corrected or withdrawn; empty reads as open
	// when there is no answer.
	Status string `yaml:"status" json:"status"`
	Answer string `yaml:"answer" json:"answer"`
	// AnsweredBy is required with an answer; AnsweredOn is YYYY-MM-DD.
	AnsweredBy string `yaml:"answered_by" json:"answered_by,omitempty"`
	AnsweredOn string `yaml:"answered_on" json:"answered_on,omitempty"`
}

// Dispute statuses.
const (
	DisputeOpen      = "open"
	DisputeUpheld    = "upheld"
	DisputeCorrected = "corrected"
	DisputeWithdrawn = "withdrawn"
)

// State returns the dispute's status: Status, or open when it is empty and
// there is no answer.
func (d Dispute) State() string {
	if st := strings.ToLower(strings.TrimSpace(d.Status)); st != "" {
		return st
	}
	if strings.TrimSpace(d.Answer) == "" {
		return DisputeOpen
	}
	return ""
}

// Open reports whether the dispute still waits for an answer.
func (d Dispute) Open() bool { return d.State() == DisputeOpen }

// ClaimText is the disputed claim (Claim, or the older Question).
func (d Dispute) ClaimText() string {
	if strings.TrimSpace(d.Claim) != "" {
		return d.Claim
	}
	return d.Question
}

// Withdrawn says whether the case counts in no total, and why: a dispute
// withdrew it, or an open dispute asks for its withdrawal (the method
// withdraws a case about a real server on request while a dispute is
// open).
func (c Case) Withdrawn() (string, bool) {
	for i, d := range c.Disputes {
		switch {
		case d.State() == DisputeWithdrawn:
			return fmt.Sprintf("withdrawn on %s after dispute %d (raised by %s on %s)", d.AnsweredOn, i+1, d.RaisedBy, d.Date), true
		case d.Open() && d.WithdrawalRequested:
			return fmt.Sprintf("withdrawn while dispute %d is open: %s asked for its withdrawal on %s", i+1, d.RaisedBy, d.Date), true
		}
	}
	return "", false
}

// caseFields are the keys a case file may hold, in the order they are
// documented.
var caseFields = []string{"id", "kind", "track", "target", "reviewer", "provenance", "selected", "rubric_version",
	"scope", "expected", "statement", "bin", "args", "env", "notes", "findings", "disputes"}

var disputeFields = []string{"code", "raised_by", "date", "claim", "question", "withdrawal_requested", "status", "answer", "answered_by", "answered_on"}

var (
	idPattern   = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*[a-z0-9]$`)
	codePattern = regexp.MustCompile(`^pkg\.[a-z0-9_]+(\.[a-z0-9_]+)+$`)
	// prefixPattern is a dotted code prefix ending in a dot: pkg.session.
	prefixPattern = regexp.MustCompile(`^pkg\.([a-z0-9_]+\.)*$`)
	envPattern    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	rubricPattern = regexp.MustCompile(`^v?[0-9]+$`)
	letterPattern = regexp.MustCompile(`\pL`)
)

// ParseCase decodes and validates one case file; file names it in errors.
// It does not read the catalog; ReadCorpus does (Case.CheckCatalog).
func ParseCase(file string, data []byte) (Case, error) {
	c, _, err := parseCase(file, data)
	return c, err
}

// parseCase is ParseCase, and says whether the file decoded into a case
// (so that what it holds can be checked further).
func parseCase(file string, data []byte) (c Case, decoded bool, err error) {
	c, err = decodeCase(file, data)
	if err != nil {
		return c, false, err
	}
	return c, true, c.Validate()
}

func decodeCase(file string, data []byte) (Case, error) {
	c := Case{File: file, lines: map[string]int{}}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return c, &CaseError{File: file, Err: invalid("empty file")}
		}
		return c, &CaseError{File: file, Err: invalid("%v", err)}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return c, &CaseError{File: file, Line: extra.Line, Err: invalid("one case per file (a second YAML document starts here)")}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return c, &CaseError{File: file, Line: root.Line, Err: invalid("a case is a mapping of fields (%s)", strings.Join(caseFields, ", "))}
	}
	var errs []error
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := root.Content[i]
		if !slices.Contains(caseFields, k.Value) {
			errs = append(errs, &CaseError{File: file, Line: k.Line, Err: invalid("unknown field %q (known: %s)", k.Value, strings.Join(caseFields, ", "))})
			continue
		}
		c.lines[k.Value] = k.Line
		v := root.Content[i+1]
		if (k.Value == "disputes" || k.Value == "scope" || k.Value == "expected") && v.Kind == yaml.SequenceNode {
			for j, d := range v.Content {
				c.lines[fmt.Sprintf("%s[%d]", k.Value, j)] = d.Line
			}
		}
		if k.Value == "disputes" && v.Kind == yaml.SequenceNode {
			errs = append(errs, checkDisputeFields(file, v)...)
		}
	}
	if len(errs) > 0 {
		return c, errors.Join(errs...)
	}
	if err := root.Decode(&c); err != nil {
		// yaml's type errors carry "line N:" themselves.
		return c, &CaseError{File: file, Err: invalid("%v", err)}
	}
	return c, nil
}

func checkDisputeFields(file string, n *yaml.Node) []error {
	var errs []error
	for i, d := range n.Content {
		if d.Kind != yaml.MappingNode {
			continue
		}
		for j := 0; j+1 < len(d.Content); j += 2 {
			if k := d.Content[j]; !slices.Contains(disputeFields, k.Value) {
				errs = append(errs, &CaseError{File: file, Line: k.Line, Field: fmt.Sprintf("disputes[%d]", i),
					Err: invalid("unknown field %q (known: %s)", k.Value, strings.Join(disputeFields, ", "))})
			}
		}
	}
	return errs
}

// InScope reports whether code is within the case's scope: it starts with
// a scope prefix, or equals a scope entry that is a whole code.
func (c Case) InScope(code string) bool {
	return slices.ContainsFunc(c.Scope, func(s string) bool { return scopeCovers(s, code) })
}

// scopeCovers reports whether one scope entry covers code: a prefix
// (ending in a dot) covers the codes that start with it, a whole code
// covers itself.
func scopeCovers(entry, code string) bool {
	return strings.HasSuffix(entry, ".") && strings.HasPrefix(code, entry) || code == entry
}

// OpenDisputes counts the disputes that wait for an answer.
func (c Case) OpenDisputes() int {
	n := 0
	for _, d := range c.Disputes {
		if d.Open() {
			n++
		}
	}
	return n
}

// EnvNames lists the names of the variables the case sets, sorted; values
// are never reported.
func (c Case) EnvNames() []string {
	names := make([]string, 0, len(c.Env))
	for k := range c.Env {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
