package rubric

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/verifymcp/verifymcp/contract"
)

// tools returns the listed tools, or a verdict when there are none to judge.
func (p *probe) tools() ([]contract.Tool, *verdict) {
	c := p.b.Contract
	if c == nil {
		v := zeroPoint("contract signal is observed but the bundle holds no contract")
		return nil, &v
	}
	if len(c.Tools) == 0 {
		v := dropped("not applicable: the server lists no tools")
		return nil, &v
	}
	return c.Tools, nil
}

func scoreSchemaCompleteness(p *probe) verdict {
	tools, v := p.tools()
	if v != nil {
		return *v
	}
	var sum float64
	missing := 0
	for _, t := range tools {
		sc := checkSchema(t.InputSchema)
		if !sc.object {
			missing++
			p.emit(CodeSchemaMissing, t.Name, fmt.Sprintf("tool %q has no object input schema", t.Name), p.clip(sc.problem))
			continue
		}
		if len(sc.lacking) > 0 {
			p.emit(CodeUndescribedParameter, t.Name,
				fmt.Sprintf("tool %q has %d of %s without a type or description", t.Name, len(sc.lacking), plural(sc.total, "parameter")),
				p.clip(strings.Join(sc.lacking, ", ")))
		}
		if sc.total == 0 {
			sum++
		} else {
			sum += float64(sc.complete) / float64(sc.total)
		}
	}
	pct := 100 * sum / float64(len(tools))
	p.measure(CodeSchemaCompleteness, "input schemas are "+formatScore(round1(pct))+"% complete over "+plural(len(tools), "tool"), pct)
	reason := "mean schema completeness over " + plural(len(tools), "tool")
	if missing > 0 {
		reason += fmt.Sprintf("; %d without an object schema", missing)
	}
	return scored(pct, reason)
}

// schemaCheck is what checkSchema learned about one input schema.
type schemaCheck struct {
	object          bool
	problem         string // why the schema is not an object schema
	total, complete int
	lacking         []string // "name (no description)", sorted by name
}

// checkSchema inspects an input schema. Keys are matched exactly, as JSON
// Schema keywords are case-sensitive; duplicate keys resolve as
// encoding/json resolves them, the last one winning.
func checkSchema(raw json.RawMessage) schemaCheck {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return schemaCheck{problem: "no input schema"}
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		if json.Valid(raw) {
			return schemaCheck{problem: "input schema is not a JSON object: " + string(raw)}
		}
		return schemaCheck{problem: "input schema is not valid JSON"}
	}
	typ, ok := top["type"]
	if !ok {
		return schemaCheck{problem: `input schema has no "type"`}
	}
	if s, ok := jsonString(typ); !ok || s != "object" {
		return schemaCheck{problem: `input schema "type" is ` + string(typ) + `, not "object"`}
	}
	sc := schemaCheck{object: true}
	props := top["properties"]
	if props == nil || string(props) == "null" {
		return sc
	}
	var list map[string]json.RawMessage
	if props[0] != '{' || json.Unmarshal(props, &list) != nil {
		return schemaCheck{problem: `input schema "properties" is not an object`}
	}
	for _, name := range slices.Sorted(maps.Keys(list)) {
		val := list[name]
		sc.total++
		var kw map[string]json.RawMessage
		if val[0] != '{' || json.Unmarshal(val, &kw) != nil {
			sc.lacking = append(sc.lacking, name+" (not a schema object)")
			continue
		}
		desc, _ := jsonString(kw["description"])
		described := strings.TrimSpace(desc) != ""
		typed := false
		for _, k := range []string{"type", "$ref", "anyOf", "oneOf", "allOf", "enum", "const"} {
			if _, ok := kw[k]; ok {
				typed = true
			}
		}
		var why string
		switch {
		case typed && described:
			sc.complete++
			continue
		case typed:
			why = " (no description)"
		case described:
			why = " (no type)"
		default:
			why = " (no type, no description)"
		}
		sc.lacking = append(sc.lacking, name+why)
	}
	return sc
}

// jsonString decodes a raw JSON value that is a string.
func jsonString(v json.RawMessage) (string, bool) {
	var s string
	if len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

func scoreDescriptionCoverage(p *probe) verdict {
	tools, v := p.tools()
	if v != nil {
		return *v
	}
	minChars := p.p.DescriptionCoverage.MinChars
	described := 0
	for _, t := range tools {
		d := strings.TrimSpace(t.Description)
		n := utf8.RuneCountInString(d)
		if n >= minChars {
			described++
			continue
		}
		p.emit(CodeDescriptionMissing, t.Name,
			fmt.Sprintf("tool %q has no description of at least %d characters", t.Name, minChars),
			p.clip(fmt.Sprintf("description (%d characters): %q", n, d)))
	}
	pct := 100 * float64(described) / float64(len(tools))
	p.measure(CodeDescriptionCoverage, strconv.Itoa(described)+" of "+plural(len(tools), "tool")+" described", pct)
	return scored(pct, strconv.Itoa(described)+" of "+plural(len(tools), "tool")+" with a description of at least "+strconv.Itoa(minChars)+" characters")
}

func scoreActionSafety(p *probe) verdict {
	tools, v := p.tools()
	if v != nil {
		return *v
	}
	ap := p.p.ActionSafety
	absent, contradictions := 0, 0
	skip := 0
	if p.r.action != nil {
		skip = p.r.action.sharedPrefix(tools)
	}
	for _, t := range tools {
		a := t.Annotations
		if a == nil {
			absent++
			p.emit(CodeAnnotationAbsent, t.Name,
				"tool "+strconv.Quote(t.Name)+" declares no annotations, so by the specification's defaults it is destructive and open-world",
				"annotations: none")
		}
		if t.ReadOnly() {
			if p.r.action != nil {
				if verb, field, text := p.r.action.contradiction(t, skip); verb != "" {
					contradictions++
					p.emit(CodeAnnotationContradiction, t.Name,
						fmt.Sprintf("tool %q claims readOnlyHint true, but its %s puts it to %q, which changes its environment, and its description does not say it writes nothing", t.Name, field, verb),
						p.clip(fmt.Sprintf("%s %q; readOnlyHint: true", field, text)))
				}
			} else if verb, field, text := p.writeVerb(t); verb != "" {
				contradictions++
				p.emit(CodeAnnotationContradiction, t.Name,
					fmt.Sprintf("tool %q claims readOnlyHint true, but its %s says %q", t.Name, field, verb),
					p.clip(fmt.Sprintf("%s %q; readOnlyHint: true", field, text)))
			}
		}
		if t.Destructive() {
			p.emit(CodeToolDestructive, t.Name, "tool "+strconv.Quote(t.Name)+" is destructive by its effective annotations", destructiveBasis(a))
		}
	}
	// From v13 a read-only tool that wrote when called is a contradiction
	// too (behavior_tool.go).
	called, _, note := p.emitToolActionSafety()
	contradictions += called
	score := 100 - ap.ContradictionPenalty*float64(contradictions) - ap.AbsentSharePenalty*float64(absent)/float64(len(tools))
	return scored(score, strconv.Itoa(absent)+" of "+plural(len(tools), "tool")+" without annotations; "+plural(contradictions, "read-only contradiction")+note)
}

// writeVerb returns the first write verb among the tokens of the tool's
// name, title and annotation title, and where it was found.
func (p *probe) writeVerb(t contract.Tool) (verb, field, text string) {
	if verb = p.firstVerb(t.Name); verb != "" {
		return verb, "name", t.Name
	}
	if verb = p.firstVerb(t.Title); verb != "" {
		return verb, "title", t.Title
	}
	if t.Annotations != nil {
		if verb = p.firstVerb(t.Annotations.Title); verb != "" {
			return verb, "annotations title", t.Annotations.Title
		}
	}
	return "", "", ""
}

// firstVerb returns the first token of s that is a write verb, in lower
// case.
func (p *probe) firstVerb(s string) string {
	var found string
	var buf [32]byte
	eachToken(s, func(tok string) bool {
		if p.r.verbs == nil || len(tok) > len(buf) || !isASCII(tok) {
			// A rubric not built by Load, or a token no verb can match
			// without folding: compare one by one.
			for _, v := range p.p.ActionSafety.WriteVerbs {
				if strings.EqualFold(tok, v) {
					found = v
					return false
				}
			}
			return true
		}
		lower := buf[:len(tok)]
		for i := 0; i < len(tok); i++ {
			c := tok[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			lower[i] = c
		}
		if p.r.verbs[string(lower)] {
			found = string(lower)
			return false
		}
		return true
	})
	return found
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func destructiveBasis(a *contract.Annotations) string {
	readOnly := "readOnlyHint: false"
	if a != nil && a.ReadOnlyHint == nil {
		readOnly = "readOnlyHint: absent (specification default false)"
	}
	switch {
	case a == nil:
		return "annotations: none (specification default destructiveHint: true)"
	case a.DestructiveHint == nil:
		return readOnly + "; destructiveHint: absent (specification default true)"
	default:
		return readOnly + "; destructiveHint: true"
	}
}

// tokens splits an identifier or title into lower-case words.
func tokens(s string) []string {
	var out []string
	eachToken(s, func(tok string) bool {
		out = append(out, strings.ToLower(tok))
		return true
	})
	return out
}

// eachToken calls fn with each word of s, as a substring of s, until fn
// returns false: snake_case, kebab-case, camelCase, PascalCase, dotted and
// spaced names all split, and an acronym run stays one word ("HTTPRequest"
// is "HTTP", "Request"). It allocates nothing, as Evaluate runs it on
// every read-only tool.
func eachToken(s string, fn func(tok string) bool) {
	start := -1
	var prev rune
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		i += w
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			if start >= 0 && !fn(s[start:i-w]) {
				return
			}
			start, prev = -1, r
			continue
		}
		if start >= 0 && unicode.IsUpper(r) {
			next, _ := utf8.DecodeRuneInString(s[i:])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && unicode.IsLower(next)) {
				if !fn(s[start : i-w]) {
					return
				}
				start = i - w
			}
		}
		if start < 0 {
			start = i - w
		}
		prev = r
	}
	if start >= 0 {
		fn(s[start:])
	}
}
