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
	"io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/verifymcp/verifymcp/rubric"
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

// Directories of the corpus, relative to its root.
const (
	casesDir    = "cases"
	fixturesDir = "fixtures"
)

// LoadCorpus reads every case under dir/cases/synthetic and
// dir/cases/reviewed against the catalog of the rubric in force, and
// returns them sorted by kind and id. It is strict: if any case is refused,
// it returns no case and an error that reports every problem in every file
// at once, each as a *CaseError with its file and line. The harness itself
// reads the corpus with ReadCorpus, which refuses a case without refusing
// the others.
func LoadCorpus(dir string) ([]Case, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("benchmark corpus: %w", err)
	}
	return LoadCorpusFS(os.DirFS(dir))
}

// LoadCorpusFS is LoadCorpus over a file system whose root is the corpus.
func LoadCorpusFS(fsys fs.FS) ([]Case, error) {
	cases, err := ReadCorpusFS(fsys, rubric.Current())
	if err != nil {
		return nil, err
	}
	if err := Refusals(cases); err != nil {
		return nil, err
	}
	return cases, nil
}

// Refusals joins the refusals of every refused case, or returns nil when
// none was refused.
func Refusals(cases []Case) error {
	var errs []error
	for _, c := range cases {
		errs = append(errs, c.Refused...)
	}
	return errors.Join(errs...)
}

// ReadCorpus reads every case under dir/cases/synthetic and
// dir/cases/reviewed, checks each on its own and against the catalog of r
// (the rubric the run scores under), and returns them all sorted by kind
// and id. A case that cannot be scored as written is returned with Refused
// set, every problem of its file located by file and line; it does not
// refuse the others. Anything in cases/ that is not a case is returned as
// a refused case too, so that nothing in the corpus is silently skipped.
// The error is for a corpus that cannot be read at all.
func ReadCorpus(dir string, r *rubric.Rubric) ([]Case, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("benchmark corpus: %w", err)
	}
	return ReadCorpusFS(os.DirFS(dir), r)
}

// ReadCorpusFS is ReadCorpus over a file system whose root is the corpus.
func ReadCorpusFS(fsys fs.FS, r *rubric.Rubric) ([]Case, error) {
	if r == nil {
		return nil, errors.New("benchmark corpus: no rubric to read the cases against")
	}
	var cases []Case
	entries, err := fs.ReadDir(fsys, casesDir)
	if err != nil {
		return nil, fmt.Errorf("benchmark corpus: %w", err)
	}
	for _, e := range entries {
		name := path.Join(casesDir, e.Name())
		switch {
		case e.IsDir() && slices.Contains(Kinds(), Kind(e.Name())):
		case !e.IsDir() && e.Name() == "README.md":
			continue
		default:
			cases = append(cases, refusedFile(name, "", invalid("cases/ holds only synthetic/ and reviewed/ (and README.md)")))
			continue
		}
		kind := Kind(e.Name())
		files, err := fs.ReadDir(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("benchmark corpus: %w", err)
		}
		for _, f := range files {
			file := path.Join(name, f.Name())
			switch {
			case f.Name() == "README.md":
				continue
			case f.IsDir() || !strings.HasSuffix(f.Name(), ".yaml"):
				cases = append(cases, refusedFile(file, kind, invalid("a case is one file named ID.yaml; nothing else belongs in %s", name)))
				continue
			}
			data, err := fs.ReadFile(fsys, file)
			if err != nil {
				return nil, fmt.Errorf("benchmark corpus: %w", err)
			}
			c, decoded, err := parseCase(file, data)
			c.Refused = append(c.Refused, flatten(err)...)
			if decoded {
				c.Refused = append(c.Refused, c.checkLoaded(fsys, kind, strings.TrimSuffix(f.Name(), ".yaml"), r)...)
			}
			if len(c.Refused) > 0 {
				// Reported under its file's name and its directory's
				// kind: what the file says of itself may be what is wrong.
				c.ID, c.Kind = strings.TrimSuffix(f.Name(), ".yaml"), kind
			}
			cases = append(cases, c)
		}
	}
	files := map[string][]int{}
	for i, c := range cases {
		files[c.ID] = append(files[c.ID], i)
	}
	for _, idx := range files {
		if len(idx) < 2 {
			continue
		}
		// Neither file is the case of that id: both are refused, each
		// naming the others.
		for _, i := range idx {
			var others []string
			for _, j := range idx {
				if j != i {
					others = append(others, cases[j].File)
				}
			}
			cases[i].Refused = append(cases[i].Refused, cases[i].errorf("id", invalid("id %q is also the id of %s", cases[i].ID, strings.Join(others, ", "))))
		}
	}
	SortCases(cases)
	return cases, nil
}

// flatten lists the problems an error joins, one located problem each.
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	j, joined := err.(interface{ Unwrap() []error })
	// The error's own type decides, not what it wraps: a join of located
	// problems is flattened into them.
	if _, located := err.(*CaseError); located || !joined { //nolint:errorlint // see above
		return []error{err}
	}
	var out []error
	for _, e := range j.Unwrap() {
		out = append(out, flatten(e)...)
	}
	return out
}

// refusedFile is a refused case for a file that is no case.
func refusedFile(file string, kind Kind, err error) Case {
	return Case{ID: strings.TrimSuffix(path.Base(file), ".yaml"), Kind: kind, File: file, Refused: []error{&CaseError{File: file, Err: err}}}
}

// checkLoaded checks what a decoded case must agree with in the corpus:
// the directory of its kind, its file name, its fixture, and the catalog
// of the rubric the run scores under.
func (c Case) checkLoaded(fsys fs.FS, dir Kind, stem string, r *rubric.Rubric) []error {
	var errs []error
	if c.Kind != dir {
		errs = append(errs, c.errorf("kind", invalid("kind %q, but the file is in %s", c.Kind, path.Join(casesDir, string(dir)))))
	}
	if c.ID != stem {
		errs = append(errs, c.errorf("id", invalid("id %q, but the file is named %s.yaml; they must agree", c.ID, stem)))
	}
	if c.Kind == KindSynthetic {
		if err := c.checkFixture(fsys); err != nil {
			errs = append(errs, err)
		}
		if err := c.checkCapture(fsys); err != nil {
			errs = append(errs, err)
		}
	}
	return append(errs, c.CheckCatalog(r)...)
}

// CheckCatalog checks a case against the reason-code catalog of r, the
// rubric the run scores under. Every expected code must be in the catalog:
// the scanner cannot emit any other, so a typo would be charged to it as a
// false negative. Every scope entry must cover at least one code of the
// catalog: one that covers none makes the case read 0/0/0 whatever the
// scanner does. And every measurement the scope covers must be expected: a
// measurement fires whenever it was made, whatever its value, so it is
// matched as "the measurement was made", and a case that left it out would
// read it as a false positive. Entries that are not codes or prefixes at
// all are Validate's to report.
func (c Case) CheckCatalog(r *rubric.Rubric) []error {
	var errs []error
	add := func(field, format string, args ...any) {
		errs = append(errs, c.errorf(field, invalid(format, args...)))
	}
	measured := map[string]bool{}
	for i, s := range c.Scope {
		if !prefixPattern.MatchString(s) && !codePattern.MatchString(s) {
			continue
		}
		field := fmt.Sprintf("scope[%d]", i)
		covered := 0
		for _, def := range r.Codes {
			if !scopeCovers(s, def.Code) {
				continue
			}
			covered++
			if def.Kind == rubric.KindMeasurement && !slices.Contains(c.Expected, def.Code) && !measured[def.Code] {
				measured[def.Code] = true
				add(field, "%q covers %s, and %s is a measurement: it fires whenever the measurement was made, whatever its value, so it is matched as \"the measurement was made\". Expect it, or narrow the scope to leave it out",
					s, def.Code, def.Code)
			}
		}
		if covered > 0 {
			continue
		}
		if !strings.HasSuffix(s, ".") && slices.ContainsFunc(r.Codes, func(d rubric.CodeDef) bool { return strings.HasPrefix(d.Code, s+".") }) {
			add(field, "%q covers no code of rubric %s; as a prefix it needs its trailing dot: %q", s, r.Version, s+".")
		} else {
			add(field, "%q covers no code of rubric %s (verifymcp rubric show lists them)", s, r.Version)
		}
	}
	for i, code := range c.Expected {
		if !codePattern.MatchString(code) {
			continue
		}
		if _, ok := r.Code(code); !ok {
			add(fmt.Sprintf("expected[%d]", i), "%s is not in the catalog of rubric %s, so the scanner cannot emit it (verifymcp rubric explain CODE says what a code claims)", code, r.Version)
		}
	}
	return errs
}

// SortCases orders cases by kind (synthetic first), then id.
func SortCases(cs []Case) {
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].Kind != cs[j].Kind {
			return kindRank(cs[i].Kind) < kindRank(cs[j].Kind)
		}
		return cs[i].ID < cs[j].ID
	})
}

func kindRank(k Kind) int {
	if i := slices.Index(Kinds(), k); i >= 0 {
		return i
	}
	return len(Kinds())
}

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

// errorf returns a CaseError about field, located at its line (a
// dispute's own line, else the top-level field's).
func (c Case) errorf(field string, err error) error {
	line, ok := c.lines[field]
	if !ok {
		top, _, _ := strings.Cut(field, "[")
		line = c.lines[top]
	}
	return &CaseError{File: c.File, Line: line, Field: field, Err: err}
}

// flaw is an error that matches its sentinel with errors.Is without
// repeating the sentinel's text.
type flaw struct{ sentinel, err error }

func (f *flaw) Error() string   { return f.err.Error() }
func (f *flaw) Unwrap() []error { return []error{f.sentinel, f.err} }

// invalid returns an ErrInvalidCase with the given message.
func invalid(format string, args ...any) error {
	return &flaw{ErrInvalidCase, fmt.Errorf(format, args...)}
}

// Validate checks a case: every required field, the package track, a
// pinned target of the right form for the case's kind, a person as
// reviewer, a scope of code prefixes, expected codes within it, and
// answered or open disputes written in full. It returns every problem.
func (c Case) Validate() error {
	var errs []error
	add := func(field, format string, args ...any) {
		errs = append(errs, c.errorf(field, invalid(format, args...)))
	}
	if !idPattern.MatchString(c.ID) {
		add("id", "%q: want lower-case letters, digits and dashes, like crash-at-start", c.ID)
	}
	if !slices.Contains(Kinds(), c.Kind) {
		add("kind", "%q: want synthetic or reviewed", c.Kind)
	}
	switch c.Track {
	case TrackPackage:
	case "":
		add("track", "missing (want %q)", TrackPackage)
	default:
		errs = append(errs, c.errorf("track", &flaw{ErrTrack, fmt.Errorf("%q: this harness scores the %s track only; remote endpoints are another track with another rubric, and their results are never pooled with packages",
			c.Track, TrackPackage)}))
	}
	if t, err := ParseTarget(c.Target); err != nil {
		errs = append(errs, c.errorf("target", err))
	} else {
		switch {
		case c.Kind == KindSynthetic && t.Scheme != SchemeFixture && t.Scheme != SchemeCapture:
			add("target", "a synthetic case targets a fixture of this corpus (fixture:ID@VERSION, or capture:ID@VERSION for a static capture), not %q", c.Target)
		case c.Kind == KindReviewed && t.Scheme == SchemeCapture:
			add("target", "a reviewed case targets a published package (npm:NAME@VERSION); static captures are synthetic cases")
		case c.Kind == KindReviewed && t.Scheme == SchemeFixture:
			add("target", "a reviewed case targets a published package (npm:NAME@VERSION); fixtures are synthetic cases")
		}
	}
	if err := checkReviewer(c.Reviewer); err != nil {
		add("reviewer", "%v", err)
	}
	if err := checkProvenance(c.Provenance); err != nil {
		add("provenance", "%v", err)
	}
	switch {
	case c.Selected == SelectedUnknown:
	case c.Selected != "" && !validDate(c.Selected):
		add("selected", "%q: want the date the package was selected for review, YYYY-MM-DD (or unknown, which no result of the case may be published under)", c.Selected)
	case c.Selected == "" && c.Kind == KindReviewed:
		add("selected", "missing: the date (YYYY-MM-DD) the package was selected for review, before it was scored; unknown when no record of it exists")
	}
	if v := strings.TrimSpace(c.RubricVersion); v == "" {
		add("rubric_version", "missing: the rubric version the case was reviewed under")
	} else if !rubricPattern.MatchString(v) {
		add("rubric_version", "%q: want a rubric version like 5", v)
	}
	if len(c.Scope) == 0 {
		add("scope", "empty: a case asserts ground truth over at least one code prefix, such as pkg.session.")
	}
	c.validateScope(add)
	c.validateExpected(add)
	if c.Kind == KindSynthetic && strings.TrimSpace(c.Statement) == "" {
		add("statement", "missing: a synthetic fixture states what would change the answer")
	}
	c.validateFindings(add)
	for name := range c.Env {
		if !envPattern.MatchString(name) {
			add("env", "%q is not an environment variable name", name)
		}
	}
	c.validateDisputes(add)
	return errors.Join(errs...)
}

// addFunc records a problem with a case's field, as Validate's add does.
type addFunc func(field, format string, args ...any)

// validateScope checks c.Scope: code prefixes or codes, each once.
func (c Case) validateScope(add addFunc) {
	for i, s := range c.Scope {
		switch {
		case strings.HasSuffix(s, "."):
			if !prefixPattern.MatchString(s) || s == "pkg." {
				if s == "pkg." {
					add(fmt.Sprintf("scope[%d]", i), "%q covers every code; name the areas the review covered", s)
				} else {
					add(fmt.Sprintf("scope[%d]", i), "%q is not a code prefix like pkg.session.", s)
				}
			}
		case !codePattern.MatchString(s):
			add(fmt.Sprintf("scope[%d]", i), "%q is neither a code prefix ending in a dot (pkg.session.) nor a reason code", s)
		}
		if slices.Index(c.Scope, s) != i {
			add(fmt.Sprintf("scope[%d]", i), "%q is listed twice", s)
		}
	}
}

// validateExpected checks c.Expected: reason codes within the scope, each
// once.
func (c Case) validateExpected(add addFunc) {
	for i, code := range c.Expected {
		field := fmt.Sprintf("expected[%d]", i)
		switch {
		case !codePattern.MatchString(code):
			add(field, "%q is not a reason code like pkg.session.start_crashed", code)
		case !c.InScope(code):
			add(field, "%s is outside the case's scope (%s): a case expects only what it asserts ground truth over", code, strings.Join(c.Scope, ", "))
		}
		if slices.Index(c.Expected, code) != i {
			add(field, "%s is listed twice; a code counts once per case", code)
		}
	}
}

// validateFindings checks c.Findings: expected codes, each with why it
// holds, each once.
func (c Case) validateFindings(add addFunc) {
	for i, j := range c.Findings {
		field := fmt.Sprintf("findings[%d]", i)
		switch {
		case !codePattern.MatchString(j.Code):
			add(field, "%q is not a reason code", j.Code)
		case !slices.Contains(c.Expected, j.Code):
			add(field, "%s is justified but not expected: list it under expected", j.Code)
		case strings.TrimSpace(j.Why) == "":
			add(field, "%s %s: why is missing: say in a line why the claim is true of this package", j.Code, j.Subject)
		}
		if slices.IndexFunc(c.Findings, func(o Justified) bool { return o.Code == j.Code && o.Subject == j.Subject && o.Match == j.Match }) != i {
			add(field, "%s %s %q is listed twice", j.Code, j.Subject, j.Match)
		}
	}
}

// validateDisputes checks c.Disputes: each open, or answered in full.
func (c Case) validateDisputes(add addFunc) {
	for i, d := range c.Disputes {
		field := fmt.Sprintf("disputes[%d]", i)
		if d.Code != "" && !codePattern.MatchString(d.Code) {
			add(field, "code %q is not a reason code", d.Code)
		}
		if strings.TrimSpace(d.RaisedBy) == "" || !letterPattern.MatchString(d.RaisedBy) {
			add(field, "raised_by: missing: who raised the dispute (a person, or the server's author)")
		}
		if !validDate(d.Date) {
			add(field, "date %q: want YYYY-MM-DD", d.Date)
		}
		switch {
		case strings.TrimSpace(d.Claim) != "" && strings.TrimSpace(d.Question) != "":
			add(field, "claim and question both given: question is the older name of claim; keep one")
		case strings.TrimSpace(d.ClaimText()) == "":
			add(field, "claim: missing: which claim of the case is disputed, and why")
		}
		st := d.State()
		switch st {
		case DisputeOpen:
			if strings.TrimSpace(d.Answer) != "" || d.AnsweredBy != "" || d.AnsweredOn != "" {
				add(field, "status open, but an answer is given: say upheld, corrected or withdrawn")
			}
			continue
		case DisputeUpheld, DisputeCorrected, DisputeWithdrawn:
		case "":
			add(field, "status: missing: an answered dispute is upheld, corrected or withdrawn")
		default:
			add(field, "status %q: want open, upheld, corrected or withdrawn", d.Status)
		}
		if strings.TrimSpace(d.Answer) == "" {
			add(field, "answer: missing: a dispute that is %s has the reviewer's answer", st)
		}
		if err := checkPerson(d.AnsweredBy, false); err != nil {
			add(field, "answered_by: %v", err)
		}
		if !validDate(d.AnsweredOn) {
			add(field, "answered_on %q: want YYYY-MM-DD", d.AnsweredOn)
		}
	}
}

// notPeople are values that name a role, a team or a placeholder rather
// than a person.
var notPeople = []string{"anonymous", "automated", "automation", "bot", "ci", "maintainers", "n/a", "na", "none",
	"nobody", "system", "tbd", "team", "todo", "unknown", "verifymcp"}

// checkPerson checks that s names a person. pendingOK accepts
// ReviewerPending.
func checkPerson(s string, pendingOK bool) error {
	s = strings.TrimSpace(s)
	lower := strings.ToLower(s)
	switch {
	case s == "":
		return errors.New("missing: the name of the person, as they sign their work")
	case lower == ReviewerPending && pendingOK:
		return nil
	case lower == ReviewerPending:
		return errors.New("pending is only for a case's reviewer")
	case strings.ContainsAny(s, "@<>/\n"):
		return fmt.Errorf("%q: a person's name, not an address, handle or URL", s)
	case !letterPattern.MatchString(s):
		return fmt.Errorf("%q is not a name", s)
	}
	for _, w := range strings.FieldsFunc(lower, func(r rune) bool {
		return r == ' ' || r == '-' || r == '_' || r == '[' || r == ']' || r == '(' || r == ')'
	}) {
		if slices.Contains(notPeople, w) {
			return fmt.Errorf("%q names a role, team or placeholder; a case is signed by a person", s)
		}
	}
	return nil
}

func validDate(s string) bool {
	_, err := time.Parse(time.DateOnly, s)
	return err == nil
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
