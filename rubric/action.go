package rubric

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/verifymcp/verifymcp/contract"
)

// The tool's own action, from rubric v11.
//
// readOnlyHint true is a claim that the tool does not modify its
// environment. Rubrics before v11 took any write verb anywhere in the
// tool's name or title as a contradiction, so "post" in read_post and
// list_post_types, "run" in a "Run Accessibility Scan" title, or "create"
// in a getter of the fields a create form needs were reported as
// read-only tools that write. A noun that is also a verb is not the
// tool's action. From v11 a contradiction needs the tool's own action:
//
//   - the verb its name starts with, after the prefix every tool of the
//     server shares when that prefix is not a verb (wp_, github-);
//   - else the verb its title or annotation title starts with;
//   - else the verb its description's first sentence starts with, as a
//     verb: followed by an article or determiner ("Creates a", "Deletes
//     the"), so that "Posts are returned" is not read as posting.
//
// The action is a write verb of the rubric (execution verbs are not: a
// tool that runs an audit or a read-only query changes nothing by
// running). The tool's own text answers it in two ways, and then there is
// no contradiction: its description starts with a verb of reading or
// computing ("Lists the post types", "Returns the fields"), or says it
// changes nothing ("Nothing is written"). And a name whose object is
// something the tool computes and hands back (create_composition_plan, a
// plan) is not put to a write by its verb.
type actionReader struct {
	write, read, computed map[string]bool
	denials               []*regexp.Regexp
}

func newActionReader(p ActionSafetyParams) *actionReader {
	if len(p.ReadVerbs) == 0 {
		return nil
	}
	a := &actionReader{write: map[string]bool{}, read: map[string]bool{}, computed: map[string]bool{}}
	for _, v := range p.Computed {
		a.computed[v] = true
	}
	for _, v := range p.WriteVerbs {
		a.write[v] = true
	}
	for _, v := range p.ReadVerbs {
		a.read[v] = true
	}
	for _, d := range p.Denials {
		a.denials = append(a.denials, regexp.MustCompile("(?i)"+d))
	}
	return a
}

// verb reports whether a lower-case token is a verb of either list.
func (a *actionReader) verb(tok string) bool { return a.write[tok] || a.read[tok] }

// base returns the lexicon's form of a lower-case word in the third
// person ("deletes", "pushes", "modifies"), or the word itself.
func (a *actionReader) base(w string) string {
	if a.verb(w) {
		return w
	}
	for _, c := range []struct{ suffix, repl string }{{"ies", "y"}, {"es", ""}, {"s", ""}} {
		if b, ok := strings.CutSuffix(w, c.suffix); ok && a.verb(b+c.repl) {
			return b + c.repl
		}
	}
	return w
}

// sharedPrefix returns how many leading name tokens every tool shares
// (two tools at least), none of them a verb, leaving each tool a token.
func (a *actionReader) sharedPrefix(tools []contract.Tool) int {
	if len(tools) < 2 {
		return 0
	}
	first := tokens(tools[0].Name)
	n := len(first)
	for _, t := range tools[1:] {
		toks := tokens(t.Name)
		i := 0
		for i < n && i < len(toks) && toks[i] == first[i] {
			i++
		}
		n = i
		for n > 0 && n >= len(toks) {
			n--
		}
	}
	for i := 0; i < n; i++ {
		if a.verb(first[i]) {
			return i
		}
	}
	return n
}

// determiners follow a verb in a description's first words.
var determiners = map[string]bool{
	"a": true, "an": true, "the": true, "one": true, "new": true, "existing": true, "all": true, "any": true,
	"each": true, "every": true, "this": true, "that": true, "these": true, "those": true, "your": true,
	"multiple": true, "several": true, "some": true, "its": true, "their": true,
}

// leadWords returns the first two words of s in lower case (letters only).
func leadWords(s string) (string, string) {
	f := strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' })
	switch len(f) {
	case 0:
		return "", ""
	case 1:
		return strings.ToLower(f[0]), ""
	}
	return strings.ToLower(f[0]), strings.ToLower(f[1])
}

// lead returns the first token of a name or title in lower case.
func lead(s string, skip int) string {
	toks := tokens(s)
	if len(toks) <= skip {
		return ""
	}
	return toks[skip]
}

// contradiction returns the write verb of the tool's own action and the
// field it was read from, or "" when its action is not a write or its
// own text says it changes nothing. skip is the server's shared prefix.
func (a *actionReader) contradiction(t contract.Tool, skip int) (verb, field, text string) {
	w1, w2 := leadWords(t.Description)
	descVerb := a.base(w1)
	if a.read[descVerb] {
		return "", "", ""
	}
	for _, d := range a.denials {
		if d.MatchString(t.Description) {
			return "", "", ""
		}
	}
	if v := lead(t.Name, skip); a.write[v] {
		// create_composition_plan makes a plan and hands it back: its
		// object, the name's last word, is computed, not stored.
		if toks := tokens(t.Name); a.computed[toks[len(toks)-1]] {
			return "", "", ""
		}
		return v, "name", t.Name
	}
	if v := lead(t.Title, 0); a.write[v] {
		return v, "title", t.Title
	}
	if t.Annotations != nil {
		if v := lead(t.Annotations.Title, 0); a.write[v] {
			return v, "annotations title", t.Annotations.Title
		}
	}
	if a.write[descVerb] && determiners[w2] {
		return descVerb, "description", t.Description
	}
	return "", "", ""
}
