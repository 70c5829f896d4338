package benchmark

import (
	"errors"
	"fmt"
	"net/mail"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// Who may sign a case. The method: "Every case names its reviewer, and the
// reviewer is a person rather than a team or a tool. Whoever it names is
// willing to be named in anything published from the case." A reviewer is
// written as a name and a way to reach them:
//
//	reviewer: Ada Lovelace <ada@lovelace.example>
//	reviewer: Ada Lovelace (github:adalovelace)
//
// How a name is told from a role, a team, an organisation or a tool: no
// list of people exists to check against, so the rule refuses what is
// plainly not one person and accepts the rest, and says which word decided.
// A name is refused when any of its words (case folded, split at spaces,
// hyphens, dots, brackets) is one that names a group ("group", "team",
// "committee", "maintainers"...), an organisation or its legal form
// ("foundation", "inc", "gmbh", "corp"...), a tool, a model or a bot
// ("bot", "copilot", "gpt", "claude", "dependabot"...), a role ("admin",
// "reviewer", "security"...) or a placeholder ("tbd", "unknown"...); or
// when it is written in capitals only, as an acronym is (CISA, OWASP). A
// person's name that happens to contain such a word is refused too; the
// message says which word, and the method's remedy is a name as the person
// signs their work. The contact is an email address (RFC 5322, as
// net/mail reads it) or a code-host handle (github:, gitlab:, codeberg:,
// sourcehut:).

// notPersonWords are the words that make a name a group, an organisation,
// a tool, a role or a placeholder rather than a person.
var notPersonWords = []string{
	// groups
	"group", "team", "teams", "committee", "board", "council", "panel", "department", "dept", "division",
	"working", "wg", "taskforce", "squad", "crew", "staff", "office", "community", "contributors",
	"maintainers", "maintainer", "members", "everyone", "all", "people", "users", "collective", "consortium",
	// organisations and legal forms
	"foundation", "project", "organisation", "organization", "org", "company", "co", "corp", "corporation",
	"inc", "incorporated", "ltd", "limited", "llc", "llp", "plc", "gmbh", "ag", "sa", "sas", "bv", "nv", "oy",
	"ab", "pty", "kk", "labs", "lab", "institute", "university", "agency", "association", "society",
	"enterprises", "holdings", "partners", "solutions", "systems", "technologies", "services",
	// tools, models, bots
	"bot", "bots", "copilot", "gpt", "chatgpt", "openai", "claude", "anthropic", "gemini", "bard", "llama",
	"mistral", "llm", "ai", "assistant", "agent", "model", "dependabot", "renovate", "snyk", "github",
	"gitlab", "actions", "ci", "cd", "pipeline", "scanner", "verifymcp", "automated", "automation", "script",
	"tool", "system",
	// roles
	"admin", "administrator", "reviewer", "reviewers", "review", "security", "support", "root", "owner",
	"author", "editor", "benchmark",
	// placeholders
	"tbd", "todo", "fixme", "unknown", "anonymous", "anon", "nobody", "none", "na", "n/a", "pending",
	"example", "test", "placeholder", "someone", "somebody",
}

// handlePattern is a code-host handle: host:name.
var handlePattern = regexp.MustCompile(`^(github|gitlab|codeberg|sourcehut|bitbucket):[A-Za-z0-9](?:[A-Za-z0-9._-]{0,62}[A-Za-z0-9])?$`)

// Reviewer is a case's signer, read from "Name <email>" or "Name
// (host:handle)".
type Reviewer struct {
	Name    string `json:"name"`
	Contact string `json:"contact"`
}

// ParseReviewer reads a reviewer as written in a case; ReviewerPending
// gives the zero Reviewer and no error.
func ParseReviewer(s string) (Reviewer, error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, ReviewerPending) {
		return Reviewer{}, nil
	}
	if s == "" {
		return Reviewer{}, errors.New("missing: the name of the person who reviewed the case and a way to reach them, as Ada Lovelace <ada@example.org> or Ada Lovelace (github:ada); pending until a person signs")
	}
	var name, contact string
	switch {
	case strings.HasSuffix(s, ">") && strings.Contains(s, "<"):
		i := strings.LastIndex(s, "<")
		name, contact = strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1:len(s)-1])
		a, err := mail.ParseAddress(contact)
		if err != nil || a.Address != contact {
			return Reviewer{}, fmt.Errorf("%q: %q is not an email address", s, contact)
		}
	case strings.HasSuffix(s, ")") && strings.Contains(s, "("):
		i := strings.LastIndex(s, "(")
		name, contact = strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1:len(s)-1])
		if !handlePattern.MatchString(contact) {
			return Reviewer{}, fmt.Errorf("%q: %q is not a code-host handle like github:ada", s, contact)
		}
	default:
		return Reviewer{}, fmt.Errorf("%q: a reviewer is a name and a way to reach them, as Ada Lovelace <ada@example.org> or Ada Lovelace (github:ada)", s)
	}
	if err := checkName(name); err != nil {
		return Reviewer{}, fmt.Errorf("%q: %w", s, err)
	}
	return Reviewer{Name: name, Contact: contact}, nil
}

// checkReviewer checks a case's reviewer field.
func checkReviewer(s string) error {
	_, err := ParseReviewer(s)
	return err
}

// checkName checks that a name is one person's, by the rule above.
func checkName(name string) error {
	if name == "" {
		return errors.New("no name before the contact")
	}
	if strings.ContainsAny(name, "@<>/\n") {
		return fmt.Errorf("%q is not a name", name)
	}
	letters, upper := 0, 0
	for _, r := range name {
		if unicode.IsLetter(r) {
			letters++
			if unicode.IsUpper(r) {
				upper++
			}
		}
	}
	switch {
	case letters == 0:
		return fmt.Errorf("%q is not a name", name)
	case letters > 1 && upper == letters:
		return fmt.Errorf("%q is written as an acronym; a case is signed by a person, as they sign their work", name)
	}
	for _, w := range strings.FieldsFunc(strings.ToLower(name), func(r rune) bool {
		return r == ' ' || r == '-' || r == '_' || r == '.' || r == ',' || r == '[' || r == ']' || r == '(' || r == ')' || r == '&' || r == '+'
	}) {
		if slices.Contains(notPersonWords, w) {
			return fmt.Errorf("%q names a role, team, organisation or tool (%q), not a person: a case is signed by a person willing to be named", name, w)
		}
	}
	return nil
}

// placeholderProvenance are first words that mark a provenance nobody wrote.
var placeholderProvenance = []string{"tbd", "todo", "fixme", "xxx", "n/a", "na", "unknown", "none", "placeholder", "?", "-", "..."}

// checkProvenance checks that a provenance is a record: a sentence of at
// least three words, not a placeholder.
func checkProvenance(s string) error {
	s = strings.TrimSpace(s)
	if s == "" {
		return errors.New("missing: say how this package came to be reviewed, before it is scored")
	}
	words := strings.Fields(s)
	first := strings.Trim(strings.ToLower(words[0]), ".,:;!")
	if slices.Contains(placeholderProvenance, first) || slices.Contains(placeholderProvenance, strings.ToLower(s)) {
		return fmt.Errorf("%q is a placeholder: the method requires the record of how this package came to be reviewed", s)
	}
	n := 0
	for _, w := range words {
		if letterPattern.MatchString(w) {
			n++
		}
	}
	if n < 3 {
		return fmt.Errorf("%q: write a sentence of how this package came to be reviewed (who proposed it, from what list, when)", s)
	}
	return nil
}
