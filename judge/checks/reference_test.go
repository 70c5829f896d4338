package checks

// This file is the implementation of Check as it was before it was made
// fast (check.go, hidden.go, injection.go and capability.go), kept as the
// reference the equivalence tests compare the current implementation
// against. It is the original code with every package-level name prefixed
// "ref" (the exported wrappers Escaped and ClipPlain became
// refPublicEscaped and refPublicClipPlain) and nothing else changed. Do
// not edit it: a difference between the two is a behaviour change.

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/verifymcp/verifymcp/contract"
)

// ---- check.go ----

// Severity ranks a finding. The values are those of the rubric's
// severities, so that a finding can be scored without translation.
type refSeverity string

// Severities, lowest first.
const (
	refSeverityInfo     refSeverity = "info"
	refSeverityLow      refSeverity = "low"
	refSeverityMedium   refSeverity = "medium"
	refSeverityHigh     refSeverity = "high"
	refSeverityCritical refSeverity = "critical"
)

// Reason codes of the deterministic contract checks.
const (
	refCodeUnicodeInvisible   = "pkg.contract.unicode.invisible"
	refCodeUnicodeBidi        = "pkg.contract.unicode.bidi"
	refCodeUnicodeTag         = "pkg.contract.unicode.tag"
	refCodeUnicodeVariation   = "pkg.contract.unicode.variation_selector"
	refCodeHiddenEncoded      = "pkg.contract.hidden.encoded"
	refCodeHiddenMarkup       = "pkg.contract.hidden.markup"
	refCodeHiddenWhitespace   = "pkg.contract.hidden.whitespace"
	refCodeInjectionOverride  = "pkg.contract.injection.override"
	refCodeInjectionConceal   = "pkg.contract.injection.concealment"
	refCodeInjectionSecret    = "pkg.contract.injection.secret_access"
	refCodeInjectionExfil     = "pkg.contract.injection.exfiltration"
	refCodeInjectionToolOrder = "pkg.contract.injection.tool_order"
	refCodeInjectionTag       = "pkg.contract.injection.tag"
	refCodeShadowing          = "pkg.contract.shadowing"
	refCodeParamCredential    = "pkg.contract.param.credential"
	refCodeCapabilityEnv      = "pkg.contract.capability.environment"
	refCodeCapabilityPath     = "pkg.contract.capability.arbitrary_path"
)

// CodeInfo describes one reason code of the contract checks.
type refCodeInfo struct {
	Code     string      `json:"code"`
	Severity refSeverity `json:"severity"`
	Meaning  string      `json:"meaning"`
}

// CheckCodes lists every code Check can emit, with its severity and
// meaning, in a stable order.
func refCheckCodes() []refCodeInfo {
	return []refCodeInfo{
		{refCodeUnicodeInvisible, refSeverityMedium, "zero-width or other invisible formatting characters in text shown to the model"},
		{refCodeUnicodeBidi, refSeverityHigh, "bidirectional overrides, embeddings or isolates that make text display differently from what the model reads"},
		{refCodeUnicodeTag, refSeverityCritical, "Unicode tag characters (U+E0000 block) smuggling invisible ASCII text"},
		{refCodeUnicodeVariation, refSeverityHigh, "variation selectors used as an invisible payload (runs, or on characters that have no variants)"},
		{refCodeHiddenEncoded, refSeverityHigh, "a long base64 or hex blob that decodes to readable text"},
		{refCodeHiddenMarkup, refSeverityMedium, "text hidden by markup: an HTML comment, a Markdown comment, or an element styled invisible"},
		{refCodeHiddenWhitespace, refSeverityMedium, "a long run of blank space that pushes further text out of a reviewer's view"},
		{refCodeInjectionOverride, refSeverityHigh, "tells the model to ignore or replace its previous instructions"},
		{refCodeInjectionConceal, refSeverityHigh, "tells the model to hide something from the user or not tell the user"},
		{refCodeInjectionSecret, refSeverityCritical, "tells the model to read or collect credential files or secrets (~/.ssh, id_rsa, .env, mcp.json, credentials)"},
		{refCodeInjectionExfil, refSeverityCritical, "tells the model to pass files, secrets or the conversation through a parameter or to an outside address"},
		{refCodeInjectionToolOrder, refSeverityMedium, "tells the model to call this tool before or instead of every other tool"},
		{refCodeInjectionTag, refSeverityMedium, "pseudo-authoritative markup aimed at the model (<IMPORTANT>, <SYSTEM>, chat-template tokens)"},
		{refCodeShadowing, refSeverityHigh, "tells the model how another server's or tool's behaviour must change"},
		{refCodeParamCredential, refSeverityMedium, "an input parameter or prompt argument asks for a password, key, token or other secret"},
		{refCodeCapabilityEnv, refSeverityHigh, "the tool hands back the process environment, where an agent's credentials live"},
		{refCodeCapabilityPath, refSeverityMedium, "the tool accesses a caller-chosen local path and no confinement is stated anywhere on the surface"},
	}
}

// EvidenceMaxChars bounds a finding's evidence, in characters; it is the
// rubric's evidence_max_chars.
const refEvidenceMaxChars = 240

// Subject kinds: what part of the contract a finding is about.
const (
	refKindServer   = "server"
	refKindTool     = "tool"
	refKindPrompt   = "prompt"
	refKindResource = "resource"
	refKindTemplate = "resource_template"
)

// Finding is one result of a contract check.
type refFinding struct {
	Code     string      `json:"code"`
	Severity refSeverity `json:"severity"`
	// Kind and Subject name what the finding is about: a tool, prompt,
	// resource (by URI) or resource template (by URI template) and its
	// name, or "server" with the server's name.
	Kind    string `json:"kind"`
	Subject string `json:"subject"`
	// Field is the path of the text within the subject: "description",
	// "input_schema/properties/sidenote/description", "instructions".
	Field string `json:"field"`
	// Evidence is a span of Visible(field text) of at most
	// EvidenceMaxChars characters: the text as written, with invisible
	// and direction-changing characters shown as <U+XXXX>.
	Evidence string `json:"evidence"`
	// Decoded is the hidden text a finding revealed (tag characters,
	// base64, hex), shown the same way; empty otherwise.
	Decoded string `json:"decoded,omitempty"`
	// Message is one sentence specific to this finding.
	Message string `json:"message"`
}

// unit is one piece of text an agent is shown.
type refUnit struct {
	kind, subject, field string
	text                 string
	// prose marks descriptive text (descriptions, titles, instructions),
	// which every check reads; names and schema values are only checked
	// for hidden characters.
	prose bool
	// params are the parameter names of the tool the unit belongs to.
	params map[string]bool
}

// param is one input parameter (or prompt argument) found on a surface.
type refParam struct {
	field     string // path of the parameter, e.g. input_schema/properties/path
	name      string
	types     []string
	title     string
	desc      string
	format    string
	writeOnly bool
}

// toolInfo is what the capability checks need of one tool.
type refToolInfo struct {
	tool   contract.Tool
	params []refParam
	// texts are the tool's prose units: description, titles and every
	// description inside its schemas.
	texts []string
}

// Check runs the deterministic contract checks over c and returns their
// findings, in the order of the contract (server, tools, prompts,
// resources, templates). It never fails and does no I/O; a nil contract
// has no findings. The result is never nil, so that "checked, nothing
// found" and "not checked" stay apart.
func refCheck(c *contract.Contract) []refFinding {
	out := &refFindings{list: []refFinding{}, seen: map[string]bool{}}
	if c == nil {
		return []refFinding{}
	}
	units, tools := refCollect(c)
	own := refOwnNames(c)
	for _, u := range units {
		refCheckHidden(out, u)
		if u.prose {
			refCheckInjection(out, u, own)
			refCheckShadowing(out, u, own)
		}
	}
	for _, ti := range tools {
		refCheckCredentialParams(out, refKindTool, ti.tool.Name, ti.params)
		refCheckEnvironment(out, ti)
	}
	for _, p := range c.Prompts {
		refCheckCredentialParams(out, refKindPrompt, p.Name, refPromptParams(p))
	}
	refCheckArbitraryPath(out, c, tools)
	// Contract order: by subject, in the order the units were listed;
	// within a subject, in the order the checks ran.
	order := map[string]int{}
	for _, u := range units {
		if _, ok := order[u.kind+"\x00"+u.subject]; !ok {
			order[u.kind+"\x00"+u.subject] = len(order)
		}
	}
	rank := func(f refFinding) int {
		if i, ok := order[f.Kind+"\x00"+f.Subject]; ok {
			return i
		}
		return len(order)
	}
	slices.SortStableFunc(out.list, func(a, b refFinding) int { return rank(a) - rank(b) })
	return out.list
}

// findings collects findings, one per (code, kind, subject, field), so that
// fifty zero-width spaces in one description make one finding.
type refFindings struct {
	list []refFinding
	seen map[string]bool
}

func (fs *refFindings) add(f refFinding) {
	k := f.Code + "\x00" + f.Kind + "\x00" + f.Subject + "\x00" + f.Field
	if fs.seen[k] {
		return
	}
	fs.seen[k] = true
	if f.Severity == "" {
		f.Severity = refSeverityOf(f.Code)
	}
	fs.list = append(fs.list, f)
}

func refSeverityOf(code string) refSeverity {
	for _, ci := range refCheckCodes() {
		if ci.Code == code {
			return ci.Severity
		}
	}
	return refSeverityMedium
}

// collect lists every text unit of c in contract order, and the tools with
// their parameters.
func refCollect(c *contract.Contract) ([]refUnit, []refToolInfo) {
	var us []refUnit
	add := func(kind, subject, field, text string, prose bool) {
		if text != "" {
			us = append(us, refUnit{kind: kind, subject: subject, field: field, text: text, prose: prose})
		}
	}
	srv := c.ServerInfo.Name
	add(refKindServer, srv, "name", c.ServerInfo.Name, false)
	add(refKindServer, srv, "title", c.ServerInfo.Title, true)
	add(refKindServer, srv, "instructions", c.Instructions, true)

	var tools []refToolInfo
	for _, t := range c.Tools {
		ti := refToolInfo{tool: t}
		start := len(us)
		add(refKindTool, t.Name, "name", t.Name, false)
		add(refKindTool, t.Name, "title", t.Title, true)
		add(refKindTool, t.Name, "description", t.Description, true)
		if t.Annotations != nil {
			add(refKindTool, t.Name, "annotations/title", t.Annotations.Title, true)
		}
		for _, s := range refWalkSchema(t.InputSchema, "input_schema", &ti.params) {
			add(refKindTool, t.Name, s.field, s.text, s.prose)
		}
		for _, s := range refWalkSchema(t.OutputSchema, "output_schema", nil) {
			add(refKindTool, t.Name, s.field, s.text, s.prose)
		}
		names := map[string]bool{}
		for _, p := range ti.params {
			names[p.name] = true
		}
		for i := range us[start:] {
			us[start+i].params = names
			if us[start+i].prose {
				ti.texts = append(ti.texts, us[start+i].text)
			}
		}
		tools = append(tools, ti)
	}
	for _, p := range c.Prompts {
		add(refKindPrompt, p.Name, "name", p.Name, false)
		add(refKindPrompt, p.Name, "title", p.Title, true)
		add(refKindPrompt, p.Name, "description", p.Description, true)
		for _, a := range p.Arguments {
			base := "arguments/" + a.Name
			add(refKindPrompt, p.Name, base+"/name", a.Name, false)
			add(refKindPrompt, p.Name, base+"/title", a.Title, true)
			add(refKindPrompt, p.Name, base+"/description", a.Description, true)
		}
	}
	for _, r := range c.Resources {
		add(refKindResource, r.URI, "uri", r.URI, false)
		add(refKindResource, r.URI, "name", r.Name, false)
		add(refKindResource, r.URI, "title", r.Title, true)
		add(refKindResource, r.URI, "description", r.Description, true)
	}
	for _, r := range c.Templates {
		add(refKindTemplate, r.URITemplate, "uri_template", r.URITemplate, false)
		add(refKindTemplate, r.URITemplate, "name", r.Name, false)
		add(refKindTemplate, r.URITemplate, "title", r.Title, true)
		add(refKindTemplate, r.URITemplate, "description", r.Description, true)
	}
	return us, tools
}

func refPromptParams(p contract.Prompt) []refParam {
	ps := make([]refParam, 0, len(p.Arguments))
	for _, a := range p.Arguments {
		ps = append(ps, refParam{field: "arguments/" + a.Name, name: a.Name, title: a.Title, desc: a.Description})
	}
	return ps
}

type refSchemaText struct {
	field, text string
	prose       bool
}

// Schema keywords whose value is a map of subschemas, a subschema, or a
// list of subschemas.
var (
	refSchemaMaps  = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
	refSchemaOne   = []string{"items", "additionalProperties", "additionalItems", "unevaluatedProperties", "unevaluatedItems", "contains", "propertyNames", "not", "if", "then", "else"}
	refSchemaLists = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
)

// maxSchemaDepth bounds the walk of a hostile schema.
const refMaxSchemaDepth = 64

// walkSchema returns every text of a JSON Schema an agent is shown:
// descriptions and titles (prose), property names, and string values of
// enum, const, default and examples. When params is not nil, it appends
// every property (at any depth) as a parameter. Invalid JSON yields
// nothing: the schema checks of the rubric report it.
// SchemaTexts returns every text of a JSON Schema (descriptions, titles,
// enum values, defaults, examples...), walked recursively.
func refSchemaTexts(raw json.RawMessage) []string {
	var out []string
	for _, s := range refWalkSchema(raw, "", nil) {
		out = append(out, s.text)
	}
	return out
}

func refWalkSchema(raw json.RawMessage, root string, params *[]refParam) []refSchemaText {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil
	}
	var out []refSchemaText
	var walk func(v any, path string, depth int)
	walk = func(v any, path string, depth int) {
		m, ok := v.(map[string]any)
		if !ok || depth > refMaxSchemaDepth {
			return
		}
		for _, k := range []string{"title", "description"} {
			if s, ok := m[k].(string); ok && s != "" {
				out = append(out, refSchemaText{path + "/" + k, s, true})
			}
		}
		for _, k := range []string{"enum", "const", "default", "examples"} {
			for i, s := range refStringsIn(m[k]) {
				f := path + "/" + k
				if _, list := m[k].([]any); list {
					f += "/" + strconv.Itoa(i)
				}
				out = append(out, refSchemaText{f, s, false})
			}
		}
		for _, k := range refSchemaMaps {
			sub, ok := m[k].(map[string]any)
			if !ok {
				continue
			}
			for _, name := range refSortedKeys(sub) {
				p := path + "/" + k + "/" + name
				out = append(out, refSchemaText{p, name, false})
				if k == "properties" && params != nil {
					*params = append(*params, refParamOf(p, name, sub[name]))
				}
				walk(sub[name], p, depth+1)
			}
		}
		for _, k := range refSchemaOne {
			if _, ok := m[k].(map[string]any); ok {
				walk(m[k], path+"/"+k, depth+1)
			}
		}
		for _, k := range refSchemaLists {
			if l, ok := m[k].([]any); ok {
				for i, s := range l {
					walk(s, path+"/"+k+"/"+strconv.Itoa(i), depth+1)
				}
			}
		}
	}
	walk(v, root, 0)
	return out
}

func refParamOf(field, name string, v any) refParam {
	p := refParam{field: field, name: name}
	m, ok := v.(map[string]any)
	if !ok {
		return p
	}
	p.desc, _ = m["description"].(string)
	p.title, _ = m["title"].(string)
	p.format, _ = m["format"].(string)
	p.writeOnly, _ = m["writeOnly"].(bool)
	p.types = refStringsIn(m["type"])
	if len(p.types) == 0 {
		for _, k := range []string{"anyOf", "oneOf"} {
			if l, ok := m[k].([]any); ok {
				for _, s := range l {
					if sm, ok := s.(map[string]any); ok {
						p.types = append(p.types, refStringsIn(sm["type"])...)
					}
				}
			}
		}
	}
	if items, ok := m["items"].(map[string]any); ok && slices.Contains(p.types, "array") {
		for _, t := range refStringsIn(items["type"]) {
			p.types = append(p.types, "array:"+t)
		}
	}
	return p
}

func refStringsIn(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func refSortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// ownNames are the names a server may refer to without shadowing anyone:
// its own tools, prompts and resources (by name and title) and the words of
// its own name.
type refOwnSet struct {
	names  map[string]bool // normalised tool/prompt/resource names and titles
	server map[string]bool // words of the server's name and title
}

func refOwnNames(c *contract.Contract) refOwnSet {
	o := refOwnSet{names: map[string]bool{}, server: map[string]bool{}}
	addName := func(s string) {
		if s = refNormName(s); s != "" {
			o.names[s] = true
		}
	}
	for _, t := range c.Tools {
		addName(t.Name)
		addName(t.Title)
		if t.Annotations != nil {
			addName(t.Annotations.Title)
		}
	}
	for _, p := range c.Prompts {
		addName(p.Name)
		addName(p.Title)
	}
	for _, r := range c.Resources {
		addName(r.Name)
		addName(r.Title)
	}
	for _, w := range refWords(c.ServerInfo.Name + " " + c.ServerInfo.Title) {
		o.server[w] = true
	}
	return o
}

// normName lower-cases a tool reference and drops the prefixes clients put
// before a tool's name ("mcp_tool_send_email", "mcp__github__create_issue").
func refNormName(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.Trim(s, "`'\"“”‘’")
	for _, p := range []string{"mcp_tool_", "mcp__", "mcp_"} {
		s = strings.TrimPrefix(s, p)
	}
	return s
}

// isOwn reports whether a reference names one of the server's own tools,
// prompts or resources, allowing for a client's server prefix
// ("github__create_issue", "github.create_issue").
func (o refOwnSet) isOwn(ref string) bool {
	n := refNormName(ref)
	if o.names[n] {
		return true
	}
	for _, sep := range []string{"__", ".", "/"} {
		if i := strings.LastIndex(n, sep); i >= 0 && o.names[n[i+len(sep):]] {
			return true
		}
	}
	// Tool names differ from titles by case and separators only.
	flat := strings.NewReplacer("_", "", "-", "", " ", "", ".", "").Replace(n)
	for k := range o.names {
		if strings.NewReplacer("_", "", "-", "", " ", "", ".", "").Replace(k) == flat {
			return true
		}
	}
	return false
}

// words splits s into lower-case words, splitting camelCase, snake_case,
// kebab-case and dotted names.
func refWords(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case r >= 'A' && r <= 'Z':
			// A capital starts a word, unless it continues an acronym
			// ("APIKey" -> "api", "key").
			if len(cur) > 0 && (!refIsUpper(rs[i-1]) || (i+1 < len(rs) && refIsLower(rs[i+1]))) {
				flush()
			}
			cur = append(cur, r)
		case refIsLower(r) || (r >= '0' && r <= '9'):
			cur = append(cur, r)
		default:
			flush()
		}
	}
	flush()
	return out
}

func refIsUpper(r rune) bool { return r >= 'A' && r <= 'Z' }
func refIsLower(r rune) bool { return r >= 'a' && r <= 'z' }

// ---- hidden.go ----

// Hidden text: characters that render as nothing or change the display
// order, and text hidden by encoding or markup.
//
// Rules, and the legitimate uses they leave alone:
//   - invisible: format characters (Unicode category Cf, other than bidi
//     controls and tags), control characters other than tab and newlines,
//     the combining grapheme joiner and the blank fillers (Hangul fillers,
//     Khmer inherent vowels, braille blank). A zero-width joiner between
//     two pictographs (emoji sequences) and a zero-width (non-)joiner
//     between two letters of a non-Latin script (Persian, Indic) are
//     allowed.
//   - bidi: embeddings, overrides and isolates (U+202A-U+202E,
//     U+2066-U+2069) always; the marks (LRM, RLM, ALM) only in text with
//     no right-to-left letter, where they have no legitimate use.
//   - tag: the U+E0000 block, except a subdivision flag (U+1F3F4, tag
//     letters, cancel tag). The hidden ASCII is decoded into the finding.
//   - variation selectors: a run of two or more, any selector on an ASCII
//     letter, space or at the start, and an ideographic selector
//     (U+E0100-U+E01EF) on anything but a Han ideograph. VS15/VS16 after an
//     emoji or keycap base, and a single selector on a CJK or math
//     character, are the legitimate uses.
//   - encoded: base64 of at least 20 characters, hex of at least 24, or a
//     run of percent-escapes or HTML character references, that decodes
//     to readable text with a space in it (hashes and identifiers decode to
//     binary, and a JWT header has no space).
//   - markup: HTML comments, Markdown link-reference comments ("[//]: #"),
//     and elements styled display:none, visibility:hidden, font-size:0 or
//     opacity:0.
//   - whitespace: 40 blanks in a row, or 10 blank lines, before more text.

func refIsBidi(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}

func refIsBidiMark(r rune) bool { return r == 0x200E || r == 0x200F || r == 0x061C }

func refIsTag(r rune) bool { return r >= 0xE0000 && r <= 0xE007F }

func refIsVS(r rune) bool {
	return (r >= 0xFE00 && r <= 0xFE0F) || (r >= 0xE0100 && r <= 0xE01EF)
}

func refIsInvisible(r rune) bool {
	if refIsBidi(r) || refIsBidiMark(r) || refIsTag(r) || refIsVS(r) {
		return false
	}
	switch r {
	case '\t', '\n', '\r':
		return false
	case 0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x2800, 0x3164, 0xFFA0:
		return true
	}
	return unicode.Is(unicode.Cf, r) || unicode.IsControl(r)
}

// escaped reports whether Visible shows r as an escape.
// Escaped reports whether Visible would write r as an escape: a hidden or
// direction-changing character.
func refPublicEscaped(r rune) bool { return refEscaped(r) }

func refEscaped(r rune) bool {
	return refIsBidi(r) || refIsBidiMark(r) || refIsTag(r) || refIsVS(r) || refIsInvisible(r)
}

func refEscape(r rune) string {
	return fmt.Sprintf("<U+%04X>", r)
}

// Visible returns s with every invisible, direction-changing, tag and
// variation-selector character replaced by <U+XXXX>, so that evidence
// quoting it can be read and cannot reorder the report it appears in.
func refVisible(s string) string {
	if !strings.ContainsFunc(s, refEscaped) && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if refEscaped(r) {
			b.WriteString(refEscape(r))
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// evidence returns a span of Visible(text) of at most EvidenceMaxChars
// characters around text[start:end]: the match first, then context on
// both sides.
func refEvidence(text string, start, end int) string {
	pre, mid, post := refTokens(text[:start]), refTokens(text[start:end]), refTokens(text[end:])
	budget := refEvidenceMaxChars
	width := func(ts []string) int {
		n := 0
		for _, t := range ts {
			n += utf8.RuneCountInString(t)
		}
		return n
	}
	var out []string
	if width(mid) >= budget {
		for _, t := range mid {
			n := utf8.RuneCountInString(t)
			if n > budget {
				break
			}
			out = append(out, t)
			budget -= n
		}
		return strings.TrimSpace(strings.Join(out, ""))
	}
	rest := budget - width(mid)
	// Up to a third of the rest goes before the match, the remainder after.
	used, i := 0, len(pre)
	for i > 0 {
		n := utf8.RuneCountInString(pre[i-1])
		if used+n > rest/3 {
			break
		}
		used += n
		i--
	}
	after := rest - used
	out = append(out, pre[i:]...)
	out = append(out, mid...)
	for _, t := range post {
		n := utf8.RuneCountInString(t)
		if n > after {
			break
		}
		out = append(out, t)
		after -= n
	}
	return strings.TrimSpace(strings.Join(out, ""))
}

// tokens splits s into runes as Visible shows them.
func refTokens(s string) []string {
	out := make([]string, 0, len(s))
	for _, r := range s {
		if refEscaped(r) {
			out = append(out, refEscape(r))
		} else {
			out = append(out, string(r))
		}
	}
	return out
}

// clip bounds revealed text for a finding.
func refClip(s string) string {
	v := refVisible(s)
	if utf8.RuneCountInString(v) <= refEvidenceMaxChars {
		return v
	}
	rs := []rune(v)
	return string(rs[:refEvidenceMaxChars])
}

// payload is hidden text revealed by a check, with where it was hidden.
type refPayload struct {
	text       string
	start, end int
}

// checkHidden runs the hidden-text checks over one unit and then the
// injection checks over whatever hidden text it decoded.
func refCheckHidden(out *refFindings, u refUnit) {
	var payloads []refPayload
	payloads = append(payloads, refCheckChars(out, u)...)
	if u.prose {
		payloads = append(payloads, refCheckEncoded(out, u)...)
		refCheckMarkup(out, u)
		refCheckWhitespace(out, u)
	}
	for _, p := range payloads {
		refCheckInjectionPayload(out, u, p)
	}
}

func refCheckChars(out *refFindings, u refUnit) []refPayload {
	s := u.text
	if !strings.ContainsFunc(s, refEscaped) {
		return nil
	}
	rtl := strings.ContainsFunc(s, func(r rune) bool {
		return unicode.In(r, unicode.Arabic, unicode.Hebrew, unicode.Syriac, unicode.Thaana, unicode.Nko)
	})
	type hit struct {
		n          int
		start, end int
	}
	var invisible, bidi, marks hit
	mark := func(h *hit, i, size int) {
		if h.n == 0 {
			h.start, h.end = i, i+size
		}
		h.n++
	}
	var payloads []refPayload
	rs := []rune(s)
	offs := make([]int, 0, len(rs)+1)
	for i := range s {
		offs = append(offs, i)
	}
	offs = append(offs, len(s))
	prev := func(k int) rune {
		if k > 0 {
			return rs[k-1]
		}
		return 0
	}
	next := func(k int) rune {
		if k+1 < len(rs) {
			return rs[k+1]
		}
		return 0
	}
	for k := 0; k < len(rs); k++ {
		r, i := rs[k], offs[k]
		size := offs[k+1] - i
		switch {
		case refIsBidi(r):
			mark(&bidi, i, size)
		case refIsBidiMark(r):
			if !rtl {
				mark(&marks, i, size)
			}
		case refIsTag(r):
			j := k
			for j < len(rs) && refIsTag(rs[j]) {
				j++
			}
			if !refFlagSequence(rs, k, j) {
				hidden := refDecodeTags(rs[k:j])
				out.add(refFinding{Code: refCodeUnicodeTag, Kind: u.kind, Subject: u.subject, Field: u.field,
					Evidence: refEvidence(s, i, offs[j]), Decoded: refClip(hidden),
					Message: fmt.Sprintf("%d Unicode tag characters hide text that renders as nothing: %q.", j-k, refClipPlain(hidden, 80))})
				payloads = append(payloads, refPayload{text: hidden, start: i, end: offs[j]})
			}
			k = j - 1
		case refIsVS(r):
			j := k
			for j < len(rs) && refIsVS(rs[j]) {
				j++
			}
			if refSmuggledVS(rs, k, j) {
				hidden := refDecodeVS(rs[k:j])
				f := refFinding{Code: refCodeUnicodeVariation, Kind: u.kind, Subject: u.subject, Field: u.field,
					Evidence: refEvidence(s, i, offs[j]),
					Message:  fmt.Sprintf("%d variation selector(s) after %s, where they select no variant and can carry hidden bytes.", j-k, refDescribeBase(prev(k)))}
				if refPrintable(hidden) {
					f.Decoded = refClip(hidden)
					payloads = append(payloads, refPayload{text: hidden, start: i, end: offs[j]})
				}
				out.add(f)
			}
			k = j - 1
		case refIsInvisible(r):
			if !refAllowedJoiner(r, prev(k), next(k)) {
				mark(&invisible, i, size)
			}
		}
	}
	if bidi.n > 0 {
		out.add(refFinding{Code: refCodeUnicodeBidi, Kind: u.kind, Subject: u.subject, Field: u.field,
			Evidence: refEvidence(s, bidi.start, bidi.end),
			Message:  fmt.Sprintf("%d bidirectional embedding, override or isolate character(s) make the text display in a different order than the model reads it.", bidi.n)})
	}
	if marks.n > 0 {
		out.add(refFinding{Code: refCodeUnicodeBidi, Kind: u.kind, Subject: u.subject, Field: u.field,
			Evidence: refEvidence(s, marks.start, marks.end),
			Message:  fmt.Sprintf("%d direction mark(s) in text with no right-to-left letters.", marks.n)})
	}
	if invisible.n > 0 {
		out.add(refFinding{Code: refCodeUnicodeInvisible, Kind: u.kind, Subject: u.subject, Field: u.field,
			Evidence: refEvidence(s, invisible.start, invisible.end),
			Message:  fmt.Sprintf("%d invisible character(s), first %s.", invisible.n, refEscape([]rune(s[invisible.start:])[0]))})
	}
	return payloads
}

// flagSequence reports whether rs[k:j] are the tags of a subdivision flag:
// U+1F3F4, tag digits or letters, then CANCEL TAG.
func refFlagSequence(rs []rune, k, j int) bool {
	if k == 0 || rs[k-1] != 0x1F3F4 || j-k < 3 || rs[j-1] != 0xE007F {
		return false
	}
	for _, r := range rs[k : j-1] {
		if !(r >= 0xE0030 && r <= 0xE0039) && !(r >= 0xE0061 && r <= 0xE007A) {
			return false
		}
	}
	return true
}

func refDecodeTags(rs []rune) string {
	var b strings.Builder
	for _, r := range rs {
		if c := r - 0xE0000; c >= 0x20 && c < 0x7F {
			b.WriteRune(c)
		}
	}
	return b.String()
}

// smuggledVS applies the variation-selector rule to the run rs[k:j].
func refSmuggledVS(rs []rune, k, j int) bool {
	if j-k >= 2 {
		return true
	}
	r := rs[k]
	var base rune
	if k > 0 {
		base = rs[k-1]
	}
	switch {
	case base == 0 || unicode.IsSpace(base) || refIsLower(base) || refIsUpper(base):
		return true
	case r >= 0xE0100:
		return !unicode.Is(unicode.Han, base)
	case r == 0xFE0E || r == 0xFE0F:
		return false
	case base < 0x80:
		return true
	}
	return false
}

// decodeVS reads a run of variation selectors as bytes, the encoding
// published for hiding data in emoji: VS1-VS16 are 0-15, VS17-VS256 are
// 16-255.
func refDecodeVS(rs []rune) string {
	b := make([]byte, 0, len(rs))
	for _, r := range rs {
		switch {
		case r >= 0xFE00 && r <= 0xFE0F:
			b = append(b, byte(r-0xFE00))
		case r >= 0xE0100 && r <= 0xE01EF:
			b = append(b, byte(r-0xE0100+16))
		}
	}
	return string(b)
}

func refDescribeBase(r rune) string {
	if r == 0 {
		return "the start of the text"
	}
	return fmt.Sprintf("%q", string(r))
}

// allowedJoiner is the legitimate use of zero-width joiners: inside emoji
// sequences, and between letters of scripts that use them for shaping.
func refAllowedJoiner(r, prev, next rune) bool {
	if r != 0x200C && r != 0x200D {
		return false
	}
	if r == 0x200D && (refIsPictograph(prev) || prev == 0xFE0F) && refIsPictograph(next) {
		return true
	}
	return unicode.IsLetter(prev) && unicode.IsLetter(next) && prev >= 0x0370 && next >= 0x0370
}

func refIsPictograph(r rune) bool {
	return (r >= 0x1F000 && r <= 0x1FAFF) || (r >= 0x2600 && r <= 0x27BF) || (r >= 0x2190 && r <= 0x21FF) || (r >= 0x2B00 && r <= 0x2BFF)
}

var (
	refReBase64   = regexp.MustCompile(`[A-Za-z0-9+/_\-]{20,}={0,2}`)
	refReHex      = regexp.MustCompile(`\b(?:0x)?[0-9A-Fa-f]{24,}\b`)
	refRePercent  = regexp.MustCompile(`(?:%[0-9A-Fa-f]{2}){8,}`)
	refReEntities = regexp.MustCompile(`(?:&#(?:[0-9]{2,7}|[xX][0-9A-Fa-f]{2,6});){8,}`)
)

func refCheckEncoded(out *refFindings, u refUnit) []refPayload {
	var payloads []refPayload
	report := func(kind string, s, e int, decoded string) {
		out.add(refFinding{Code: refCodeHiddenEncoded, Kind: u.kind, Subject: u.subject, Field: u.field,
			Evidence: refEvidence(u.text, s, e), Decoded: refClip(decoded),
			Message: fmt.Sprintf("A %s blob of %d characters decodes to text: %q.", kind, e-s, refClipPlain(decoded, 80))})
		payloads = append(payloads, refPayload{text: decoded, start: s, end: e})
	}
	for _, m := range refReBase64.FindAllStringIndex(u.text, -1) {
		if d, ok := refDecodeBase64(u.text[m[0]:m[1]]); ok && refReadable(d) {
			report("base64", m[0], m[1], d)
		}
	}
	for _, m := range refReHex.FindAllStringIndex(u.text, -1) {
		h := strings.TrimPrefix(strings.TrimPrefix(u.text[m[0]:m[1]], "0x"), "0X")
		if len(h)%2 != 0 {
			continue
		}
		if d, err := hex.DecodeString(h); err == nil && refReadable(string(d)) {
			report("hex", m[0], m[1], string(d))
		}
	}
	if !strings.Contains(u.text, "%") && !strings.Contains(u.text, "&#") {
		return payloads
	}
	for _, m := range refRePercent.FindAllStringIndex(u.text, -1) {
		if d, err := url.PathUnescape(u.text[m[0]:m[1]]); err == nil && refReadable(d) {
			report("percent-encoded", m[0], m[1], d)
		}
	}
	for _, m := range refReEntities.FindAllStringIndex(u.text, -1) {
		if d := html.UnescapeString(u.text[m[0]:m[1]]); refReadable(d) {
			report("HTML character reference", m[0], m[1], d)
		}
	}
	return payloads
}

func refDecodeBase64(s string) (string, bool) {
	// A blob must mix cases or digits: long plain words and identifiers
	// ("maintainer_can_modify_pull_requests") are not base64.
	var upper, lower, digit bool
	for _, r := range s {
		upper = upper || refIsUpper(r)
		lower = lower || refIsLower(r)
		digit = digit || (r >= '0' && r <= '9')
	}
	if !(upper && lower) && !(digit && (upper || lower)) {
		return "", false
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return string(b), true
		}
	}
	return "", false
}

// readable reports whether decoded bytes are text a model would read as
// an instruction: valid UTF-8, at least 12 characters, nearly all
// printable, half of them letters, with a space.
func refReadable(s string) bool {
	if len(s) < 12 || !utf8.ValidString(s) || !strings.Contains(s, " ") {
		return false
	}
	var n, printableN, letters int
	for _, r := range s {
		n++
		if unicode.IsPrint(r) || r == '\n' || r == '\t' {
			printableN++
		}
		if unicode.IsLetter(r) {
			letters++
		}
	}
	return printableN*10 >= n*9 && letters*2 >= n
}

// printable reports whether decoded bytes are text at all.
func refPrintable(s string) bool {
	if len(s) < 4 || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) && r != '\n' && r != '\t' {
			return false
		}
	}
	return true
}

var (
	refReHTMLComment = regexp.MustCompile(`(?s)<!--(.*?)(?:-->|$)`)
	refReMDComment   = regexp.MustCompile(`(?m)^[ \t]*\[(?://|comment|_)\]:\s*(?:#|<>)\s*(.*)$`)
	refReHiddenStyle = regexp.MustCompile(`(?is)<([a-z][a-z0-9]*)\b[^>]*\bstyle\s*=\s*["'][^"']*(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?:\.0*)?(?:px|em|rem|pt|%)?\s*[;"']|opacity\s*:\s*0(?:\.0*)?\s*[;"'])[^>]*>(.*?)(?:</[a-z][a-z0-9]*\s*>|$)`)
	refReHiddenAttr  = regexp.MustCompile(`(?is)<([a-z][a-z0-9]*)\b[^>]*?\s(?:hidden|aria-hidden\s*=\s*["']true["'])(?:\s[^>]*)?>(.*?)(?:</[a-z][a-z0-9]*\s*>|$)`)
)

func refCheckMarkup(out *refFindings, u refUnit) {
	if !strings.Contains(u.text, "<") && !strings.Contains(u.text, "]:") {
		return
	}
	type rule struct {
		re   *regexp.Regexp
		what string
		body int // submatch holding the hidden text
	}
	for _, r := range []rule{
		{refReHTMLComment, "An HTML comment hides text from a rendered view", 1},
		{refReMDComment, "A Markdown comment hides text from a rendered view", 1},
		{refReHiddenStyle, "An element styled invisible hides text from a rendered view", 2},
		{refReHiddenAttr, "An element marked hidden hides text from a rendered view", 2},
	} {
		m := r.re.FindStringSubmatchIndex(u.text)
		if m == nil {
			continue
		}
		body := ""
		if m[2*r.body] >= 0 {
			body = strings.TrimSpace(u.text[m[2*r.body]:m[2*r.body+1]])
		}
		out.add(refFinding{Code: refCodeHiddenMarkup, Kind: u.kind, Subject: u.subject, Field: u.field,
			Evidence: refEvidence(u.text, m[0], m[1]), Decoded: refClip(body),
			Message: fmt.Sprintf("%s: %q.", r.what, refClipPlain(body, 80))})
	}
}

var refReWhitespace = regexp.MustCompile(`(?:[ \t\x{00A0}\x{3000}]{40,}|(?:\r?\n[ \t]*){10,})(\S)`)

func refCheckWhitespace(out *refFindings, u refUnit) {
	if !strings.Contains(u.text, "  ") && !strings.Contains(u.text, "\n\n") && !strings.ContainsAny(u.text, "\u00a0\u3000") {
		return
	}
	m := refReWhitespace.FindStringSubmatchIndex(u.text)
	if m == nil {
		return
	}
	blank := m[2] - m[0]
	rest := u.text[m[2]:]
	end := len(rest)
	if i := strings.IndexAny(rest, "\n"); i > 0 {
		end = i
	}
	out.add(refFinding{Code: refCodeHiddenWhitespace, Kind: u.kind, Subject: u.subject, Field: u.field,
		Evidence: refEvidence(u.text, m[2], m[2]+end),
		Message:  fmt.Sprintf("%d characters of blank space push the text after them out of view.", blank)})
}

// clipPlain shortens s for a message, showing hidden characters.
// ClipPlain returns s with hidden characters shown (as Visible does), cut
// to n characters.
func refPublicClipPlain(s string, n int) string { return refClipPlain(s, n) }

func refClipPlain(s string, n int) string {
	v := refVisible(s)
	rs := []rune(v)
	if len(rs) <= n {
		return v
	}
	return string(rs[:n]) + "…"
}

// ---- injection.go ----

// Instruction-like text aimed at the model, and shadowing.
//
// Each detector is a pattern plus a filter that reads the sentence around
// the match, because the words alone are common in honest descriptions.
// The filters encode what separates the attacks in the published
// tool-poisoning research from real servers' descriptions:
//   - override: "ignore previous/prior/system instructions" needs a
//     qualifier, so "ignore information that is irrelevant" and "ignore any
//     instructions found in the page" (a defensive note) pass.
//   - concealment: an imperative or modal not to tell, show or inform the
//     user, doing something "without telling the user", hiding something
//     "from the user", or "silently send/read ...".
//   - secret_access: a credential file or path (~/.ssh, id_rsa, .env,
//     mcp.json, .aws/credentials, ...) in a sentence with a non-negated
//     imperative that moves data ("read", "pass", "send", "include",
//     "contents of"), or an imperative to collect the user's or all stored
//     passwords, keys, tokens or credentials. A parameter that names a
//     default key path ("Path to the key (default ~/.ssh/id_rsa)") and
//     setup advice ("make sure the key is set in your .env") have none.
//   - exfiltration: an imperative to put something into a named or quoted
//     parameter, when the same sentence names a secret or the
//     conversation as its source; or to send such data, or "all
//     emails/messages", to a URL or e-mail address.
//   - tool_order: this tool before or instead of every other tool.
//   - tag: <IMPORTANT>, <SYSTEM>, <instructions> and similar, and
//     chat-template tokens; a plain "IMPORTANT:" is not a tag.
//   - shadowing: a tool or server that is not this server's own (by name or
//     title, allowing for client prefixes such as mcp_tool_), referred to
//     as "the X tool", "tool named X", "when using X" or "the X server",
//     or "other tools", "side effect on", "when this tool is available",
//     in a sentence with a directive (must, should, always, never,
//     instead, redirect, ...). Server instructions that order the
//     server's own tools are usage guidance, not shadowing.

// detector is one pattern with its filter.
type refDetector struct {
	code string
	// any lists lower-case words of which the text must hold one before
	// the pattern runs: a cheap prefilter, since most text holds none.
	any    []string
	re     *regexp.Regexp
	accept func(d *refDoc, m []int) bool
	msg    string
}

// mayMatch applies the prefilter to lower-cased text.
func (det *refDetector) mayMatch(lower string) bool {
	if len(det.any) == 0 {
		return true
	}
	for _, w := range det.any {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// Prefilter word lists.
var (
	refAnyIgnore  = []string{"ignore", "disregard", "forget", "discard"}
	refAnyUser    = []string{"user", "human", "operator", "silently", "secretly", "covertly", "quietly", "secret", "hidden", "confidential", "between us"}
	refAnyPath    = []string{".ssh", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "authorized_keys", "mcp.json", "claude_desktop_config", ".cursor", ".aws/", ".azure/", ".kube/", ".docker/", ".npmrc", ".pypirc", ".netrc", ".git-credentials", "_history", "/etc/", ".env", "credentials.json", ".gnupg", "wallet.dat"}
	refAnySecret  = []string{"password", "passphrase", "credential", "api", "key", "token", "secret", "seed", "mnemonic", "cookie", "env"}
	refAnyOrder   = []string{"before", "always", "must", "first", "instead", "every"}
	refAnyToolRef = []string{"tool", "function"}
	refAnyUsing   = []string{"using", "calling", "invoking", "running", "executing", "uses", "calls", "invokes", "runs"}
	refAnyOther   = []string{"other", "side effect", "also present", "when this tool"}
)

// doc is a text under check and what the filters need to know about it.
type refDoc struct {
	text   string
	own    refOwnSet
	params map[string]bool // the subject tool's parameter names
}

var refReBoundary = regexp.MustCompile(`[.!?](?:\s+|$)|\n[ \t]*\n|\n[ \t]*(?:[-*•]|\d+[.)])\s`)

// sentenceSpan returns the bounds of the sentence of d.text around byte
// offset pos.
func (d *refDoc) sentenceSpan(pos int) (int, int) {
	start, end := 0, len(d.text)
	for _, b := range refReBoundary.FindAllStringIndex(d.text, -1) {
		if b[1] <= pos {
			start = b[1]
		} else if b[0] >= pos {
			end = b[1]
			break
		}
	}
	return start, end
}

// sentence returns the sentence of d.text around byte offset pos.
func (d *refDoc) sentence(pos int) string {
	s, e := d.sentenceSpan(pos)
	return d.text[s:e]
}

// group returns submatch g of m, or "".
func (d *refDoc) group(m []int, g int) string {
	if 2*g+1 >= len(m) || m[2*g] < 0 {
		return ""
	}
	return d.text[m[2*g]:m[2*g+1]]
}

func refAlways(*refDoc, []int) bool { return true }

var refReNegation = regexp.MustCompile(`(?i)\b(?:not|never|don't|dont|do\s+not|doesn't|does\s+not|must\s+not|mustn't|should\s+not|shouldn't|cannot|can't|no|avoid|without)\s+(?:\w+\s+){0,2}$`)

// negated reports whether the text just before pos negates what follows.
func (d *refDoc) negated(pos int) bool {
	from := max(0, pos-40)
	return refReNegation.MatchString(d.text[from:pos])
}

// hasCue reports whether the sentence around pos has a match of re that is
// not negated.
func (d *refDoc) hasCue(re *regexp.Regexp, pos int) bool {
	s, e := d.sentenceSpan(pos)
	for _, c := range re.FindAllStringIndex(d.text[s:e], -1) {
		if !d.negated(s + c[0]) {
			return true
		}
	}
	return false
}

const (
	refReSensitivePath = `(?:~|\$HOME|%USERPROFILE%)?/\.ssh\b|\.ssh/|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\bauthorized_keys\b|\bmcp\.json\b|\bclaude_desktop_config\.json\b|~/\.cursor\b|\.cursor/|\.aws/(?:credentials|config)\b|\.azure/|\.kube/config\b|\.docker/config\.json\b|\.npmrc\b|\.pypirc\b|\.netrc\b|\.git-credentials\b|\.(?:bash|zsh)_history\b|/etc/(?:passwd|shadow)\b|(?:^|[\s'"` + "`" + `(/])\.env(?:\.[a-z]+)?\b|\bcredentials\.json\b|\.gnupg\b|\bwallet\.dat\b`
	refReSecretNoun    = `(?:passwords?|passphrases?|credentials|api[\s_-]?keys?|(?:access|auth|bearer|session|refresh|api)\s+tokens?|private\s+keys?|ssh\s+keys?|secrets|seed\s+phrases?|mnemonics?|cookies|environment\s+variables|env\s+vars)`
)

var (
	refReCueImperative = regexp.MustCompile(`(?i)\b(?:read|open|cat|include|send|pass|attach|upload|copy|extract|collect|gather|print|output|dump|post|forward|share|paste|append|insert|grab|exfiltrate|contents?\s+of)\b`)
	refReDirective     = regexp.MustCompile(`(?i)\b(?:must|should|shall|always|never|instead|only|do\s+not|don't|make\s+sure|ensure|redirect|forward|bcc|cc|override|replace|side\s+effects?|has\s+to|have\s+to|needs?\s+to|(?:is|are)\s+required\s+to)\b`)
	refReDefensive     = regexp.MustCompile(`(?i)^\s+(?:in|from|within|inside|contained|embedded|found|returned)\b`)
	refReAllData       = regexp.MustCompile(`(?i)\ball\s+(?:e-?mails|messages|data|files|documents|requests)\b`)
	refReSource        = regexp.MustCompile(`(?i)` + refReSensitivePath + `|~/|\b` + refReSecretNoun + `\b|\bsecret\b|\bconversation\b|\b(?:chat|message)\s+history\b|\b(?:previous|prior|all)\s+messages\b|\bsystem\s+prompt\b|\byour\s+instructions\b|\bcontext\s+window\b|\bprevious\s+tool\s+(?:calls?|results?|outputs?)\b`)
)

var refInjectionDetectors = []refDetector{
	{code: refCodeInjectionOverride, any: refAnyIgnore, msg: "tells the model to ignore its previous instructions",
		re:     regexp.MustCompile(`(?i)\b(?:ignore|disregard|forget|discard)\s+(?:all\s+|any\s+|every\s+)?(?:of\s+)?(?:the\s+|your\s+|these\s+|those\s+|my\s+|its\s+)?(?:previous|prior|above|earlier|preceding|former|original|initial|system|developer|safety|other)\s+(?:\w+\s+)?(?:instructions?|prompts?|directions?|directives?|rules|guidelines|guardrails|constraints|context|messages|policies|commands)\b`),
		accept: refAlways},
	{code: refCodeInjectionOverride, any: refAnyIgnore, msg: "tells the model to ignore its instructions",
		re: regexp.MustCompile(`(?i)\b(?:ignore|disregard|forget)\s+(?:all|any|every)\s+(?:instructions|rules|guidelines)\b`),
		accept: func(d *refDoc, m []int) bool {
			rest := d.text[m[1]:min(len(d.text), m[1]+40)]
			return !refReDefensive.MatchString(rest)
		}},
	{code: refCodeInjectionOverride, any: []string{"you are now", "from now on", "instruction", "task", "goal", "objective", "purpose", "role", "override"}, msg: "gives the model a new role or new instructions",
		re:     regexp.MustCompile(`(?i)\byou\s+are\s+now\s+(?:a|an|the|in|my|no\s+longer)\b|\bfrom\s+now\s+on,?\s+(?:you|always|never|ignore)\b|\b(?:your|the)\s+(?:new|real|true|actual|updated)\s+(?:instructions|task|goal|objective|purpose|role)\s+(?:is|are)\b|\bnew\s+(?:system\s+)?instructions\s*:|\bsystem\s+(?:prompt\s+)?override\b`),
		accept: refAlways},
	{code: refCodeInjectionConceal, any: refAnyUser, msg: "tells the model to keep something from the user",
		re:     regexp.MustCompile(`(?i)\b(?:do\s+not|don't|dont|never|must\s+not|should\s+not|mustn't|shouldn't|avoid)\s+(?:(?:ever|directly|explicitly|actually|really|specifically|proactively|need\s+to|have\s+to|try\s+to|to)\s+){0,3}(?:tell(?:ing)?|inform(?:ing)?|notify(?:ing)?|alert(?:ing)?|show(?:ing)?|mention(?:ing)?|reveal(?:ing)?|disclos(?:e|ing)|let(?:ting)?)\s+(?:\w+\s+){0,3}?(?:the|your)\s+(?:user|human|operator)s?\b`),
		accept: refAlways},
	{code: refCodeInjectionConceal, any: refAnyUser, msg: "tells the model to act without the user's knowledge",
		re:     regexp.MustCompile(`(?i)\bwithout\s+(?:telling|informing|notifying|alerting|asking|showing|letting|mentioning\s+(?:it|this)\s+to)\s+(?:the\s+|your\s+)?(?:user|human|operator)s?\b|\b(?:hide|conceal|keep)\s+(?:this|it|that|these|them|everything|the\s+\w+(?:\s+\w+)?)\s+(?:secret\s+|hidden\s+)?from\s+(?:the\s+|your\s+)?(?:user|human|operator)s?\b|\bkeep\s+(?:this|it)\s+(?:secret|hidden|confidential|between\s+us)\b|\bthe\s+(?:user|human)s?\s+(?:must|should|will|need|does|do|may)\s*(?:not|n't)\s+(?:\w+\s+){0,2}?(?:know|see|notice|learn|find\s+out|be\s+(?:told|informed|aware|notified|shown))\b|\b(?:silently|secretly|covertly|quietly)\s+(?:send|read|pass|include|forward|upload|copy|call|add|attach|exfiltrate|collect|bcc|cc)\b`),
		accept: refAlways},
	{code: refCodeInjectionConceal, any: []string{"not", "don't", "never"}, msg: "tells the model not to mention what it was told to do",
		re:     regexp.MustCompile(`(?i)\b(?:do\s+not|don't|never)\s+(?:mention|reveal|disclose|say|tell|explain|admit)\s+(?:to\s+(?:the\s+)?user\s+)?(?:that\s+you|this\s+(?:step|instruction|tool\s+call|requirement)|these\s+(?:instructions|steps)|(?:what|that)\s+you\s+(?:did|are\s+doing|read|need))\b`),
		accept: refAlways},
	{code: refCodeInjectionSecret, any: refAnyPath, msg: "tells the model to read a credential file",
		re: regexp.MustCompile(`(?i)` + refReSensitivePath),
		accept: func(d *refDoc, m []int) bool {
			return d.hasCue(refReCueImperative, m[0])
		}},
	{code: refCodeInjectionSecret, any: refAnySecret, msg: "tells the model to collect stored secrets",
		re:     regexp.MustCompile(`(?i)\b(?:read|collect|gather|extract|dump|send|pass|include|attach|upload|copy|share|forward|list|print|output|return)\s+(?:all\s+|any\s+|every\s+)?(?:of\s+)?(?:the\s+user'?s\s+|the\s+|their\s+|all\s+|any\s+)?(?:saved\s+|stored\s+|local\s+|cached\s+)` + refReSecretNoun + `\b|\b(?:read|collect|gather|extract|dump|send|pass|include|attach|upload|copy|share|forward)\s+(?:all|any|every|the\s+user'?s|their)\s+(?:\w+\s+)?` + refReSecretNoun + `\b`),
		accept: func(d *refDoc, m []int) bool { return !d.negated(m[0]) }},
	{code: refCodeInjectionExfil, any: append(append(append([]string{"~/", "conversation", "history", "messages", "system prompt", "your instructions", "context window", "previous tool"}, refAnyPath...), refAnySecret...), "secret"), msg: "tells the model to pass secrets or the conversation through a parameter",
		re: regexp.MustCompile(`(?i)\b(?:pass|put|send|include|add|provide|insert|place|attach|append|copy|write|supply|fill|set|enter|paste|embed|store)\b[^.!?\n]{0,160}?\b(?:as|in|into|inside|to|via|through|using|within)\s+(?:the\s+|a\s+)?(?:["'` + "`" + `‘“](\w[\w-]*)["'` + "`" + `’”](\s+(?:parameter|param|argument|arg|field|property))?|(\w[\w-]*)\s+(?:parameter|param|argument|arg|field|property)\b)`),
		accept: func(d *refDoc, m []int) bool {
			if d.negated(m[0]) {
				return false
			}
			if quoted := d.group(m, 1); quoted != "" && d.group(m, 2) == "" && !d.params[quoted] {
				return false
			}
			return refReSource.MatchString(d.sentence(m[0]))
		}},
	{code: refCodeInjectionExfil, any: []string{"http://", "https://", "@"}, msg: "tells the model to send data to an outside address",
		re: regexp.MustCompile(`(?i)\b(?:send|post|upload|forward|transmit|email|exfiltrate|leak|copy|bcc|cc)\b[^.!?\n]{0,120}?\bto\s+(?:https?://\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+)`),
		accept: func(d *refDoc, m []int) bool {
			if d.negated(m[0]) {
				return false
			}
			s := d.sentence(m[0])
			return refReSource.MatchString(s) || refReAllData.MatchString(s)
		}},
	{code: refCodeInjectionToolOrder, any: refAnyOrder, msg: "tells the model to put this tool before or instead of all others",
		re:     regexp.MustCompile(`(?i)\bbefore\s+(?:using|calling|invoking|running|executing|responding\s+to|answering|replying\s+to)\s+(?:any|every|all|each)\s+(?:other\s+)?(?:tools?|functions?|requests?|questions?|messages?|users?|prompts?)\b|\b(?:always|must)\s+(?:call|use|invoke|run|execute)\s+this\s+(?:tool|function)\s+(?:first\s+)?(?:before|prior\s+to)\s+(?:any|every|all|other)\b|\balways\s+(?:call|use|invoke|run|execute)\s+this\s+(?:tool|function)\s+first\b|\b(?:call|use|invoke|run)\s+this\s+(?:tool|function)\s+(?:first\s+)?(?:before|instead\s+of)\s+(?:any|every|all|other)\b|\binstead\s+of\s+(?:any|every|all)\s+other\s+(?:tools?|functions?)\b|\b(?:call|use|invoke|run)\s+this\s+(?:tool|function)\s+(?:on|for|after|with)\s+every\s+(?:request|message|turn|response|query|prompt|tool\s+call)\b`),
		accept: func(d *refDoc, m []int) bool { return !d.negated(m[0]) }},
	{code: refCodeInjectionTag, any: []string{"<", "[inst", "[system", "[/inst", "[/system"}, msg: "uses pseudo-authoritative markup aimed at the model",
		re:     regexp.MustCompile(`(?i)</?\s*(?:important|system|sys|instructions?|admin|administrator|critical|secret|hidden|override|priority)\s*>|<\|(?:im_start|im_end|system|endoftext|start_header_id|end_header_id|eot_id)\|>|\[/?(?:INST|SYSTEM)\]|<<\s*/?SYS\s*>>`),
		accept: refAlways},
}

var (
	refReToolRef    = regexp.MustCompile(`(?i)(?:["'` + "`" + `‘“]([^"'` + "`" + `’”\n]{1,64})["'` + "`" + `’”]|\b([A-Za-z][\w.-]*\w))\s+(tool|function)\b|\btool\s+(?:called|named)\s+["'` + "`" + `‘“]?([\w.-]+)`)
	refReWhenUsing  = regexp.MustCompile(`(?i)\b(?:when|whenever|before|after|if|while)\s+(?:the\s+(?:user|model|assistant|agent)\s+)?(?:using|calling|invoking|running|executing|uses|calls|invokes|runs)\s+(?:the\s+)?(?:["'` + "`" + `‘“]([\w.-]+)["'` + "`" + `’”]|([\w.-]+))(\s+(?:tool|function|server)\b)?`)
	refReOtherTools = regexp.MustCompile(`(?i)\b(?:all|any|every|the)\s+other\s+(?:tools?|servers?|mcp\s+servers?|functions?)\b|\bside\s+effects?\s+on\b|\balso\s+present\b|\bwhen\s+this\s+tool\s+is\s+(?:available|present|installed|loaded|enabled)\b`)
	refReOrdering   = regexp.MustCompile(`(?i)\b(?:before|instead\s+of|prior\s+to|rather\s+than)\s+(?:using\s+|calling\s+|invoking\s+|running\s+)?$`)
	refReServerRef  = regexp.MustCompile(`(?i)\b(?:the\s+)?["'` + "`" + `]?([A-Za-z][\w.-]*)["'` + "`" + `]?\s+(?:mcp\s+)?server\b`)
)

// genericServerWords precede "server" without naming another MCP server.
var refGenericServerWords = map[string]bool{
	"this": true, "that": true, "the": true, "a": true, "an": true, "mcp": true, "our": true, "your": true, "its": true,
	"same": true, "local": true, "remote": true, "web": true, "http": true, "https": true, "api": true, "sql": true,
	"database": true, "db": true, "language": true, "lsp": true, "file": true, "dev": true, "development": true,
	"production": true, "staging": true, "test": true, "proxy": true, "smtp": true, "imap": true, "mail": true,
	"email": true, "dns": true, "ssh": true, "ftp": true, "sftp": true, "git": true, "origin": true, "upstream": true,
	"backend": true, "application": true, "app": true, "authorization": true, "auth": true, "resource": true,
	"media": true, "game": true, "build": true, "content": true, "each": true, "every": true, "any": true, "other": true,
}

// genericToolWords are words that precede "tool" in honest prose.
var refGenericToolWords = map[string]bool{
	"this": true, "that": true, "the": true, "a": true, "an": true, "any": true, "each": true, "every": true, "other": true,
	"another": true, "same": true, "which": true, "what": true, "it": true, "its": true, "your": true, "one": true,
}

// identifierLike reports whether an unquoted word reads as a tool
// identifier rather than an English word: snake_case, kebab-case, dotted
// or camelCase.
func refIdentifierLike(s string) bool {
	if strings.ContainsAny(strings.TrimRight(s, ".-_"), "_.-") {
		return true
	}
	for i := 1; i < len(s); i++ {
		if refIsUpper(rune(s[i])) && refIsLower(rune(s[i-1])) {
			return true
		}
	}
	return false
}

func (o refOwnSet) foreign(name string) bool {
	n := refNormName(name)
	if n == "" || refGenericToolWords[n] || o.isOwn(n) {
		return false
	}
	// A single word that is a word of one of the server's own names ("the
	// search tool" on a server with search_repositories) is its own.
	if !strings.ContainsAny(n, "_.- ") {
		for k := range o.names {
			for _, w := range refWords(k) {
				if w == n {
					return false
				}
			}
		}
		if o.server[n] {
			return false
		}
	}
	return true
}

func refCheckInjection(out *refFindings, u refUnit, own refOwnSet) {
	d := &refDoc{text: u.text, own: own, params: refParamsOf(u)}
	lower := strings.ToLower(u.text)
	for _, det := range refInjectionDetectors {
		if !det.mayMatch(lower) {
			continue
		}
		for _, m := range det.re.FindAllStringSubmatchIndex(u.text, -1) {
			if det.accept(d, m) {
				out.add(refFinding{Code: det.code, Kind: u.kind, Subject: u.subject, Field: u.field,
					Evidence: refEvidence(u.text, m[0], m[1]),
					Message:  fmt.Sprintf("The %s %s.", refDescribeField(u), det.msg)})
				break
			}
		}
	}
}

func refCheckShadowing(out *refFindings, u refUnit, own refOwnSet) {
	d := &refDoc{text: u.text, own: own}
	if s, e, ref, ok := refFindShadowing(d); ok {
		out.add(refFinding{Code: refCodeShadowing, Kind: u.kind, Subject: u.subject, Field: u.field,
			Evidence: refEvidence(u.text, s, e),
			Message:  fmt.Sprintf("The %s tells the model how %s must behave.", refDescribeField(u), ref)})
	}
}

// findShadowing returns the first reference to another tool or server in a
// directive sentence.
func refFindShadowing(d *refDoc) (start, end int, ref string, ok bool) {
	directive := func(pos int) bool { return refReDirective.MatchString(d.sentence(pos)) }
	lower := strings.ToLower(d.text)
	has := func(ws []string) bool { return (&refDetector{any: ws}).mayMatch(lower) }
	if !has(refAnyToolRef) && !has(refAnyUsing) && !has(refAnyOther) && !strings.Contains(lower, "server") {
		return 0, 0, "", false
	}
	for _, m := range refReToolRef.FindAllStringSubmatchIndex(d.text, -1) {
		name, quoted := d.group(m, 1), true
		if name == "" {
			name, quoted = d.group(m, 2), false
		}
		if name == "" {
			name, quoted = d.group(m, 4), true
		}
		if !quoted && !refIdentifierLike(name) {
			continue
		}
		if d.own.foreign(name) && directive(m[0]) {
			return m[0], m[1], fmt.Sprintf("the tool %q", name), true
		}
	}
	for _, m := range refReWhenUsing.FindAllStringSubmatchIndex(d.text, -1) {
		name, quoted := d.group(m, 1), true
		if name == "" {
			name, quoted = d.group(m, 2), false
		}
		kind := strings.ToLower(strings.TrimSpace(d.group(m, 3)))
		if !quoted && !refIdentifierLike(name) && kind == "" {
			continue
		}
		if kind == "server" {
			if !d.own.server[strings.ToLower(name)] && !refGenericServerWords[strings.ToLower(name)] {
				return m[0], m[1], fmt.Sprintf("the server %q", name), true
			}
			continue
		}
		if d.own.foreign(name) {
			return m[0], m[1], fmt.Sprintf("the tool %q", name), true
		}
	}
	for _, m := range refReOtherTools.FindAllStringIndex(d.text, -1) {
		// "before any other tool" orders the calls (tool_order); it does not
		// say how the other tools behave.
		if refReOrdering.MatchString(d.text[max(0, m[0]-40):m[0]]) {
			continue
		}
		if directive(m[0]) {
			return m[0], m[1], "other tools", true
		}
	}
	for _, m := range refReServerRef.FindAllStringSubmatchIndex(d.text, -1) {
		name := strings.ToLower(d.group(m, 1))
		if refGenericServerWords[name] || d.own.server[name] || d.own.isOwn(name) {
			continue
		}
		if directive(m[0]) {
			return m[0], m[1], fmt.Sprintf("the server %q", d.group(m, 1)), true
		}
	}
	return 0, 0, "", false
}

// checkInjectionPayload runs the injection and shadowing checks over text
// revealed by a hidden-text check: the evidence is where it was hidden,
// Decoded what it says.
func refCheckInjectionPayload(out *refFindings, u refUnit, p refPayload) {
	d := &refDoc{text: p.text, params: refParamsOf(u)}
	lower := strings.ToLower(p.text)
	for _, det := range refInjectionDetectors {
		if !det.mayMatch(lower) {
			continue
		}
		for _, m := range det.re.FindAllStringSubmatchIndex(p.text, -1) {
			if det.accept(d, m) {
				out.add(refFinding{Code: det.code, Kind: u.kind, Subject: u.subject, Field: u.field,
					Evidence: refEvidence(u.text, p.start, p.end), Decoded: refClip(p.text),
					Message: fmt.Sprintf("Text hidden in the %s %s.", refDescribeField(u), det.msg)})
				break
			}
		}
	}
}

// noParams is the parameter set of a unit that is not a tool's.
var refNoParams = map[string]bool{}

func refParamsOf(u refUnit) map[string]bool {
	if u.params == nil {
		return refNoParams
	}
	return u.params
}

func refDescribeField(u refUnit) string {
	switch u.kind {
	case refKindServer:
		return "server's " + strings.ReplaceAll(u.field, "/", " ")
	default:
		return u.kind + " " + fmt.Sprintf("%q", u.subject) + " " + strings.ReplaceAll(u.field, "/", " ")
	}
}

// ---- capability.go ----

// Parameters that ask for credentials, and tools that hand back the
// environment or reach caller-chosen paths.
//
// Credential parameters. A parameter (or prompt argument) asks for a
// secret when its name has a secret word (password, passphrase, secret,
// credential(s), mnemonic, cookie, otp), a secret pair (api key, access
// key, private key, ssh key, client secret, access/auth/bearer/refresh/
// session token, seed/recovery phrase), is "token", "auth" or "bearer"
// alone, or ends in "token" after a service or qualifier word
// (githubToken, slack_bot_token); when its schema says format "password" or
// writeOnly; or when its description starts with or says "your" before
// such a noun. It does not when the name is about the secret rather than
// the secret itself (secret_name, api_key_id, password_policy, key_path,
// is_password_set), when the parameter is boolean or numeric, or when
// "token" counts or pages (max_tokens, token_count, next_page_token,
// progressToken). Negated mentions ("do not include API keys") do not
// count.
//
// Environment. A tool hands back the process environment when its
// description says it returns, lists or reads environment variables
// (process.env, os.environ, printenv), or when its name is about the
// environment (get_env, printenv) and it has no description to say
// otherwise; not when the description places the variables elsewhere (a
// project, deployment, repository, container, secret manager). MCP
// annotations cannot declare this: readOnlyHint and openWorldHint describe
// side effects and reach, not which data comes back, and an agent's
// credentials are in its servers' environment. So the finding is raised
// whatever the annotations say (server-everything's get-env is read-only
// and closed-world, and is reported).
//
// Arbitrary paths. A tool reaches a caller-chosen local path when a string
// parameter is named as a path, file, directory or folder, or described as
// a file or directory path, unless the parameter is a URL or the tool
// works on a remote store (a sibling parameter such as owner, repo,
// bucket, branch or host, or a description naming a repository, bucket,
// drive or remote). The finding is raised only when no confinement is
// stated: not in the tool's own texts, not in the server instructions,
// and not by a tool of the server without parameters that describes the
// confinement (list_allowed_directories). In a tool named for files or
// directories, source, destination, target, from and to are paths too. Each of
// server-filesystem's tools says "Only works within allowed directories"
// except its deprecated read_file, which its list_allowed_directories
// covers. Annotations again cannot state a confinement, so they neither
// raise nor clear this finding.

var refCredentialWords = map[string]bool{
	"password": true, "passwd": true, "passphrase": true, "secret": true, "secrets": true, "credential": true,
	"credentials": true, "mnemonic": true, "apikey": true, "privatekey": true, "cookie": true, "cookies": true,
	"otp": true, "totp": true, "seedphrase": true, "pat": true,
}

var refCredentialPairs = map[string]bool{
	"api key": true, "access key": true, "secret key": true, "private key": true, "ssh key": true, "signing key": true,
	"encryption key": true, "auth token": true, "access token": true, "refresh token": true, "bearer token": true,
	"id token": true, "session token": true, "api token": true, "oauth token": true, "seed phrase": true,
	"recovery phrase": true, "client secret": true, "auth key": true, "bot token": true, "session key": true,
}

// aboutWords make a name about a secret rather than the secret.
var refAboutWords = map[string]bool{
	"name": true, "names": true, "id": true, "ids": true, "path": true, "file": true, "filename": true, "url": true,
	"uri": true, "ref": true, "arn": true, "type": true, "length": true, "count": true, "expiry": true, "expires": true,
	"expiration": true, "ttl": true, "policy": true, "label": true, "env": true, "var": true, "variable": true,
	"field": true, "hint": true, "format": true, "scope": true, "scopes": true, "header": true, "location": true,
	"hash": true, "is": true, "has": true, "set": true, "exists": true, "required": true, "enabled": true,
	"rotation": true, "version": true, "description": true, "prefix": true,
}

// tokenQualifiers make "...token" something other than a credential.
var refTokenQualifiers = map[string]bool{
	"page": true, "next": true, "continuation": true, "cursor": true, "sync": true, "pagination": true, "max": true,
	"min": true, "num": true, "count": true, "limit": true, "total": true, "input": true, "output": true,
	"prompt": true, "completion": true, "context": true, "stop": true, "start": true, "end": true, "special": true,
	"vocab": true, "cancellation": true, "cancel": true, "progress": true, "idempotency": true, "resume": true,
	"lock": true, "reasoning": true, "thinking": true, "response": true,
}

var (
	refReCredentialDesc = regexp.MustCompile(`(?i)^(?:the\s+|your\s+|a\s+|an\s+|user'?s?\s+)?(?:[\w-]+\s+){0,2}?(?:password|passphrase|api[\s_-]?key|secret(?:\s+key)?|private\s+key|seed\s+phrase|recovery\s+phrase|mnemonic|(?:access|auth(?:entication)?|bearer|api|personal\s+access|session|refresh|bot)\s+token|credentials?|ssh\s+key)\b|\byour\s+(?:[\w-]+\s+){0,2}?(?:password|passphrase|api[\s_-]?key|secret\s+key|private\s+key|seed\s+phrase|recovery\s+phrase|mnemonic|(?:access|auth(?:entication)?|bearer|api|personal\s+access|session|refresh|bot)\s+token|credentials|ssh\s+key)\b`)
	refRePaging         = regexp.MustCompile(`(?i)\b(?:page|pagination|paginate|cursor|next|continuation|count|number\s+of|limit|tokens\s+to)\b`)
)

// credentialName reports whether a parameter name asks for a secret.
func refCredentialName(name string) bool {
	ws := refWords(name)
	if len(ws) == 0 {
		return false
	}
	for _, w := range ws {
		if refAboutWords[w] {
			return false
		}
	}
	joined := strings.Join(ws, "")
	if refCredentialWords[joined] {
		return true
	}
	for _, w := range ws {
		if refCredentialWords[w] {
			return true
		}
	}
	for i := 0; i+1 < len(ws); i++ {
		if refCredentialPairs[ws[i]+" "+ws[i+1]] {
			return true
		}
	}
	switch last := ws[len(ws)-1]; {
	case len(ws) == 1:
		return last == "token" || last == "auth" || last == "authorization" || last == "bearer"
	case last == "token":
		return !refTokenQualifiers[ws[len(ws)-2]]
	}
	return false
}

func refNonSecretType(types []string) bool {
	if len(types) == 0 {
		return false
	}
	for _, t := range types {
		switch t {
		case "boolean", "number", "integer", "null", "array:boolean", "array:number", "array:integer", "array":
		default:
			return false
		}
	}
	return true
}

func refCheckCredentialParams(out *refFindings, kind, subject string, ps []refParam) {
	for _, p := range ps {
		if refNonSecretType(p.types) {
			continue
		}
		nameField := p.field
		if kind == refKindPrompt {
			nameField = p.field + "/name"
		}
		switch {
		case p.format == "password" || p.writeOnly:
			out.add(refFinding{Code: refCodeParamCredential, Kind: kind, Subject: subject, Field: nameField,
				Evidence: refEvidence(p.name, 0, len(p.name)),
				Message:  fmt.Sprintf("Parameter %q is declared as a secret (format password or writeOnly): the model is asked to supply it.", p.name)})
		case refCredentialName(p.name):
			if refWords(p.name)[len(refWords(p.name))-1] == "token" && len(refWords(p.name)) == 1 && refRePaging.MatchString(p.desc) {
				continue
			}
			out.add(refFinding{Code: refCodeParamCredential, Kind: kind, Subject: subject, Field: nameField,
				Evidence: refEvidence(p.name, 0, len(p.name)),
				Message:  fmt.Sprintf("Parameter %q asks for a credential by name: the secret passes through the model's context.", p.name)})
		default:
			if !(&refDetector{any: refAnySecret}).mayMatch(strings.ToLower(p.desc + " " + p.title)) {
				continue
			}
			for _, t := range []struct{ field, text string }{{"/description", p.desc}, {"/title", p.title}} {
				m := refReCredentialDesc.FindStringIndex(t.text)
				if m == nil || refAboutName(p.name) {
					continue
				}
				d := &refDoc{text: t.text}
				if d.negated(m[0]) {
					continue
				}
				out.add(refFinding{Code: refCodeParamCredential, Kind: kind, Subject: subject, Field: p.field + t.field,
					Evidence: refEvidence(t.text, m[0], m[1]),
					Message:  fmt.Sprintf("Parameter %q asks for a credential in its description: the secret passes through the model's context.", p.name)})
				break
			}
		}
	}
}

func refAboutName(name string) bool {
	for _, w := range refWords(name) {
		if refAboutWords[w] {
			return true
		}
	}
	return false
}

var (
	refReEnvDesc     = regexp.MustCompile(`(?i)\b(?:returns?|prints?|lists?|dumps?|shows?|displays?|exposes?|reads?|gets?|retrieves?|outputs?|reveals?|fetch(?:es)?|provides?|echo(?:es)?)\s+(?:all\s+|the\s+|every\s+|any\s+|an\s+|a\s+)?(?:of\s+the\s+)?(?:[\w-]+\s+){0,2}?(?:environment\s+variables?|env\s+vars?|env\s+variables?)\b|\bprocess\.env\b|\bos\.environ\b|\bprintenv\b`)
	refReRemoteScope = regexp.MustCompile(`(?i)\b(?:project|projects|deployment|deployments|repository|repo|site|app|application|service|workspace|cluster|container|pod|function|lambda|secret\s+manager|vault|vercel|netlify|heroku|railway|render|github\s+actions|codespace|pipeline|job|runner)\b`)
	refEnvNameWords  = map[string]bool{"env": true, "environ": true, "environment": true, "envs": true, "dotenv": true, "printenv": true, "envvars": true}
)

func refCheckEnvironment(out *refFindings, ti refToolInfo) {
	t := ti.tool
	if !strings.Contains(strings.ToLower(t.Name+" "+t.Description), "env") {
		return
	}
	if m := refReEnvDesc.FindStringIndex(t.Description); m != nil {
		if refReRemoteScope.MatchString(t.Description) {
			return
		}
		out.add(refFinding{Code: refCodeCapabilityEnv, Kind: refKindTool, Subject: t.Name, Field: "description",
			Evidence: refEvidence(t.Description, m[0], m[1]),
			Message:  fmt.Sprintf("Tool %q returns environment variables, where an agent's credentials live; %s.", t.Name, refAnnotationsSay(t))})
		return
	}
	if strings.TrimSpace(t.Description) != "" {
		return
	}
	for _, w := range refWords(t.Name) {
		if refEnvNameWords[w] {
			out.add(refFinding{Code: refCodeCapabilityEnv, Kind: refKindTool, Subject: t.Name, Field: "name",
				Evidence: refEvidence(t.Name, 0, len(t.Name)),
				Message:  fmt.Sprintf("Tool %q is named for the environment and has no description to say it returns anything else; %s.", t.Name, refAnnotationsSay(t))})
			return
		}
	}
}

func refAnnotationsSay(t contract.Tool) string {
	a := t.Annotations
	if a == nil {
		return "it has no annotations, and none could declare this"
	}
	return fmt.Sprintf("its annotations (readOnlyHint=%v, openWorldHint=%v) describe side effects, not the data returned", t.ReadOnly(), t.OpenWorld())
}

var (
	refPathWords = map[string]bool{"path": true, "paths": true, "filepath": true, "filepaths": true, "filename": true,
		"filenames": true, "file": true, "files": true, "dir": true, "dirs": true, "directory": true, "directories": true,
		"folder": true, "folders": true}
	refUrlWords    = map[string]bool{"url": true, "uri": true, "urls": true, "uris": true, "link": true, "href": true}
	refRemoteWords = map[string]bool{"owner": true, "repo": true, "repository": true, "bucket": true, "branch": true, "ref": true,
		"commit": true, "sha": true, "drive": true, "site": true, "host": true, "hostname": true, "container": true,
		"pod": true, "namespace": true, "url": true, "endpoint": true, "server": true, "gist": true}
	refRePathDesc   = regexp.MustCompile(`(?i)\b(?:file|directory|folder)\s+paths?\b|\bpaths?\s+(?:to|of)\s+(?:a|an|the)?\s*(?:local\s+)?(?:file|directory|folder)s?\b|\babsolute\s+paths?\b|\b(?:local\s+)?file\s*system\s+paths?\b`)
	refReRemoteDesc = regexp.MustCompile(`(?i)\b(?:repository|repositories|repo|github|gitlab|bitbucket|bucket|s3|gcs|google\s+drive|dropbox|onedrive|sharepoint|remote|ftp|sftp|container|pod|cloud\s+storage|blob|gist|wiki)\b`)
	refReConfined   = regexp.MustCompile(`(?i)\b(?:allowed|permitted|authori[sz]ed|configured|approved|whitelisted|allowlisted)\s+(?:director(?:y|ies)|folders?|paths?|roots?|locations?)\b|\b(?:only|must\s+be|restricted|limited|confined|sandboxed|scoped)\b[^.\n]{0,40}?\b(?:within|inside|under|to)\b[^.\n]{0,40}?\b(?:director(?:y|ies)|folders?|paths?|roots?|workspace|project|sandbox)\b|\ballowed\s+to\s+access\b|\bworkspace\s+roots?\b|\bclient\s+roots\b`)
)

// endpointWords name the two ends of a copy or move; in a tool named for
// files or directories they are paths.
var refEndpointWords = map[string]bool{"source": true, "src": true, "destination": true, "dest": true, "target": true, "from": true, "to": true}

// pathParamOf reports whether p is a local path of tool t.
func refPathParamOf(t contract.Tool, p refParam) bool {
	if refPathParam(p) {
		return true
	}
	ws := refWords(p.name)
	if len(ws) != 1 || !refEndpointWords[ws[0]] || refNonSecretType(p.types) {
		return false
	}
	for _, w := range refWords(t.Name) {
		if refPathWords[w] {
			return true
		}
	}
	return false
}

// pathParam reports whether p is a local path, file or directory.
func refPathParam(p refParam) bool {
	if p.format != "" && strings.Contains(strings.ToLower(p.format), "ur") {
		return false
	}
	ok := false
	for _, t := range p.types {
		if t == "string" || t == "array:string" {
			ok = true
		}
	}
	if !ok && len(p.types) > 0 {
		return false
	}
	ws := refWords(p.name)
	for _, w := range ws {
		if refUrlWords[w] {
			return false
		}
	}
	if len(ws) > 0 && refPathWords[ws[len(ws)-1]] {
		return true
	}
	return refRePathDesc.MatchString(p.desc)
}

func refCheckArbitraryPath(out *refFindings, c *contract.Contract, tools []refToolInfo) {
	serverConfined := refReConfined.MatchString(c.Instructions)
	for _, ti := range tools {
		if serverConfined {
			break
		}
		// A tool without parameters that states the confinement declares
		// it for the server (list_allowed_directories).
		if len(ti.params) == 0 && refReConfined.MatchString(strings.Join(ti.texts, "\n")) {
			serverConfined = true
		}
	}
	if serverConfined {
		return
	}
	for _, ti := range tools {
		var found *refParam
		remote := false
		for i, p := range ti.params {
			for _, w := range refWords(p.name) {
				if refRemoteWords[w] {
					remote = true
				}
			}
			if found == nil && refPathParamOf(ti.tool, p) {
				found = &ti.params[i]
			}
		}
		if found == nil || remote || refReRemoteDesc.MatchString(ti.tool.Description+" "+ti.tool.Title) ||
			refReConfined.MatchString(strings.Join(ti.texts, "\n")) {
			continue
		}
		p := *found
		f := refFinding{Code: refCodeCapabilityPath, Kind: refKindTool, Subject: ti.tool.Name, Field: p.field,
			Evidence: refEvidence(p.name, 0, len(p.name)),
			Message:  fmt.Sprintf("Tool %q takes a local path in parameter %q and no confinement (allowed directories, workspace roots) is stated on the tool or the server.", ti.tool.Name, p.name)}
		if p.desc != "" {
			f.Field, f.Evidence = p.field+"/description", refEvidence(p.desc, 0, len(p.desc))
		}
		out.add(f)
	}
}
