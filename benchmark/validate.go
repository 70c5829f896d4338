package benchmark

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

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

func (f *flaw) Error() string { return f.err.Error() }

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
