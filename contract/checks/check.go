package checks

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/verifymcp/verifymcp/contract"
)

// Severity ranks a finding. The values are those of the rubric's
// severities, so that a finding can be scored without translation.
type Severity string

// Severities, lowest first.
const (
	SeverityInfo     Severity = "info"
	SeverityLow      Severity = "low"
	SeverityMedium   Severity = "medium"
	SeverityHigh     Severity = "high"
	SeverityCritical Severity = "critical"
)

// Reason codes of the deterministic contract checks.
const (
	CodeUnicodeInvisible   = "pkg.contract.unicode.invisible"
	CodeUnicodeBidi        = "pkg.contract.unicode.bidi"
	CodeUnicodeTag         = "pkg.contract.unicode.tag"
	CodeUnicodeVariation   = "pkg.contract.unicode.variation_selector"
	CodeHiddenEncoded      = "pkg.contract.hidden.encoded"
	CodeHiddenMarkup       = "pkg.contract.hidden.markup"
	CodeHiddenWhitespace   = "pkg.contract.hidden.whitespace"
	CodeInjectionOverride  = "pkg.contract.injection.override"
	CodeInjectionConceal   = "pkg.contract.injection.concealment"
	CodeInjectionSecret    = "pkg.contract.injection.secret_access"
	CodeInjectionExfil     = "pkg.contract.injection.exfiltration"
	CodeInjectionToolOrder = "pkg.contract.injection.tool_order"
	CodeInjectionTag       = "pkg.contract.injection.tag"
	CodeShadowing          = "pkg.contract.shadowing"
	CodeParamCredential    = "pkg.contract.param.credential"
	CodeCapabilityEnv      = "pkg.contract.capability.environment"
	CodeCapabilityPath     = "pkg.contract.capability.arbitrary_path"
	CodeCapabilityConfig   = "pkg.contract.capability.configuration"
)

// CodeInfo describes one reason code of the contract checks.
type CodeInfo struct {
	Code     string   `json:"code"`
	Severity Severity `json:"severity"`
	Meaning  string   `json:"meaning"`
}

// CheckCodes lists every code Check can emit, with its severity and
// meaning, in a stable order.
func CheckCodes() []CodeInfo {
	return []CodeInfo{
		{CodeUnicodeInvisible, SeverityMedium, "zero-width or other invisible formatting characters in text shown to the model"},
		{CodeUnicodeBidi, SeverityHigh, "bidirectional overrides, embeddings or isolates that make text display differently from what the model reads"},
		{CodeUnicodeTag, SeverityCritical, "Unicode tag characters (U+E0000 block) smuggling invisible ASCII text"},
		{CodeUnicodeVariation, SeverityHigh, "variation selectors used as an invisible payload (runs, or on characters that have no variants)"},
		{CodeHiddenEncoded, SeverityMedium, "a long base64 or hex blob that decodes to readable text"},
		{CodeHiddenMarkup, SeverityMedium, "text hidden by markup: an HTML comment, a Markdown comment, or an element styled invisible"},
		{CodeHiddenWhitespace, SeverityMedium, "a long run of blank space that pushes further text out of a reviewer's view"},
		{CodeInjectionOverride, SeverityHigh, "tells the model to ignore or replace its previous instructions"},
		{CodeInjectionConceal, SeverityHigh, "tells the model to hide something from the user or not tell the user"},
		{CodeInjectionSecret, SeverityCritical, "tells the model to read or collect credential files or secrets (~/.ssh, id_rsa, .env, mcp.json, credentials)"},
		{CodeInjectionExfil, SeverityCritical, "tells the model to pass files, secrets or the conversation through a parameter or to an outside address"},
		{CodeInjectionToolOrder, SeverityMedium, "tells the model to call this tool before or instead of every other tool"},
		{CodeInjectionTag, SeverityMedium, "pseudo-authoritative markup aimed at the model (<IMPORTANT>, <SYSTEM>, chat-template tokens)"},
		{CodeShadowing, SeverityHigh, "tells the model how another server's or tool's behaviour must change"},
		{CodeParamCredential, SeverityMedium, "an input parameter or prompt argument asks for a password, key, token or other secret"},
		{CodeCapabilityEnv, SeverityHigh, "the tool hands back the process environment, where an agent's credentials live"},
		{CodeCapabilityPath, SeverityMedium, "the tool accesses a caller-chosen local path and no confinement is stated anywhere on the surface"},
		{CodeCapabilityConfig, SeverityMedium, "a resource or tool returns the server's own configuration, which holds what the operator started it with"},
	}
}

// EvidenceMaxChars bounds a finding's evidence, in characters; it is the
// rubric's evidence_max_chars.
const EvidenceMaxChars = 240

// Subject kinds: what part of the contract a finding is about.
const (
	KindServer   = "server"
	KindTool     = "tool"
	KindPrompt   = "prompt"
	KindResource = "resource"
	KindTemplate = "resource_template"
)

// Finding is one result of a contract check.
type Finding struct {
	Code     string   `json:"code"`
	Severity Severity `json:"severity"`
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
type unit struct {
	kind, subject, field string
	text                 string
	// prose marks descriptive text (descriptions, titles, instructions),
	// which every check reads; names and schema values are only checked
	// for hidden characters.
	prose bool
	// params are the parameter names of the tool the unit belongs to.
	params map[string]bool
	// outputs are the top-level fields of that tool's output schema, with
	// their descriptions.
	outputs map[string]string
}

// param is one input parameter (or prompt argument) found on a surface.
type param struct {
	field     string // path of the parameter, e.g. input_schema/properties/path
	name      string
	types     []string
	title     string
	desc      string
	format    string
	writeOnly bool
}

// toolInfo is what the capability checks need of one tool.
type toolInfo struct {
	tool   contract.Tool
	params []param
	// outputs are the properties of its output schema.
	outputs []param
	// texts are the tool's prose units: description, titles and every
	// description inside its schemas.
	texts []string
	// values are the enum and const strings of its input schema.
	values []string
}

// Check runs the deterministic contract checks over c and returns their
// findings, in the order of the contract (server, tools, prompts,
// resources, templates). It never fails and does no I/O; a nil contract
// has no findings. The result is never nil, so that "checked, nothing
// found" and "not checked" stay apart.
func Check(c *contract.Contract) []Finding {
	out := &findings{list: []Finding{}, seen: map[string]bool{}}
	if c == nil {
		return []Finding{}
	}
	units, tools := collect(c)
	own := ownNames(c, tools)
	for _, u := range units {
		checkHidden(out, u)
		if u.prose {
			checkInjection(out, u, own)
			checkShadowing(out, u, own)
		}
	}
	var prompts [][]param
	for _, p := range c.Prompts {
		prompts = append(prompts, promptParams(p))
	}
	ex := exemptions(tools, prompts)
	for _, ti := range tools {
		checkCredentialParams(out, KindTool, ti.tool.Name, ti.params, ex)
		checkEnvironment(out, ti)
	}
	for i, p := range c.Prompts {
		checkCredentialParams(out, KindPrompt, p.Name, prompts[i], ex)
	}
	checkArbitraryPath(out, c, tools)
	checkConfiguration(out, c, tools)
	// Contract order: by subject, in the order the units were listed;
	// within a subject, in the order the checks ran.
	order := map[string]int{}
	for _, u := range units {
		if _, ok := order[u.kind+"\x00"+u.subject]; !ok {
			order[u.kind+"\x00"+u.subject] = len(order)
		}
	}
	rank := func(f Finding) int {
		if i, ok := order[f.Kind+"\x00"+f.Subject]; ok {
			return i
		}
		return len(order)
	}
	slices.SortStableFunc(out.list, func(a, b Finding) int { return rank(a) - rank(b) })
	return out.list
}

// findings collects findings, one per (code, kind, subject, field), so that
// fifty zero-width spaces in one description make one finding.
type findings struct {
	list []Finding
	seen map[string]bool
}

func (fs *findings) add(f Finding) {
	k := f.Code + "\x00" + f.Kind + "\x00" + f.Subject + "\x00" + f.Field
	if fs.seen[k] {
		return
	}
	fs.seen[k] = true
	if f.Severity == "" {
		f.Severity = severityOf(f.Code)
	}
	fs.list = append(fs.list, f)
}

func severityOf(code string) Severity {
	for _, ci := range CheckCodes() {
		if ci.Code == code {
			return ci.Severity
		}
	}
	return SeverityMedium
}

// collect lists every text unit of c in contract order, and the tools with
// their parameters.
func collect(c *contract.Contract) ([]unit, []toolInfo) {
	var us []unit
	add := func(kind, subject, field, text string, prose bool) {
		if text != "" {
			us = append(us, unit{kind: kind, subject: subject, field: field, text: text, prose: prose})
		}
	}
	srv := c.ServerInfo.Name
	add(KindServer, srv, "name", c.ServerInfo.Name, false)
	add(KindServer, srv, "title", c.ServerInfo.Title, true)
	add(KindServer, srv, "instructions", c.Instructions, true)

	var tools []toolInfo
	for _, t := range c.Tools {
		ti := toolInfo{tool: t}
		start := len(us)
		add(KindTool, t.Name, "name", t.Name, false)
		add(KindTool, t.Name, "title", t.Title, true)
		add(KindTool, t.Name, "description", t.Description, true)
		if t.Annotations != nil {
			add(KindTool, t.Name, "annotations/title", t.Annotations.Title, true)
		}
		for _, s := range walkSchema(t.InputSchema, "input_schema", &ti.params) {
			add(KindTool, t.Name, s.field, s.text, s.prose)
			if !s.prose && reValueField.MatchString(s.field) {
				ti.values = append(ti.values, s.text)
			}
		}
		for _, s := range walkSchema(t.OutputSchema, "output_schema", &ti.outputs) {
			add(KindTool, t.Name, s.field, s.text, s.prose)
		}
		names := map[string]bool{}
		for _, p := range ti.params {
			names[p.name] = true
		}
		var outputs map[string]string
		for _, p := range ti.outputs {
			if p.field == "output_schema/properties/"+p.name {
				if outputs == nil {
					outputs = map[string]string{}
				}
				outputs[p.name] = p.desc
			}
		}
		for i := range us[start:] {
			us[start+i].params = names
			us[start+i].outputs = outputs
			if us[start+i].prose {
				ti.texts = append(ti.texts, us[start+i].text)
			}
		}
		tools = append(tools, ti)
	}
	for _, p := range c.Prompts {
		add(KindPrompt, p.Name, "name", p.Name, false)
		add(KindPrompt, p.Name, "title", p.Title, true)
		add(KindPrompt, p.Name, "description", p.Description, true)
		for _, a := range p.Arguments {
			base := "arguments/" + a.Name
			add(KindPrompt, p.Name, base+"/name", a.Name, false)
			add(KindPrompt, p.Name, base+"/title", a.Title, true)
			add(KindPrompt, p.Name, base+"/description", a.Description, true)
		}
	}
	for _, r := range c.Resources {
		add(KindResource, r.URI, "uri", r.URI, false)
		add(KindResource, r.URI, "name", r.Name, false)
		add(KindResource, r.URI, "title", r.Title, true)
		add(KindResource, r.URI, "description", r.Description, true)
	}
	for _, r := range c.Templates {
		add(KindTemplate, r.URITemplate, "uri_template", r.URITemplate, false)
		add(KindTemplate, r.URITemplate, "name", r.Name, false)
		add(KindTemplate, r.URITemplate, "title", r.Title, true)
		add(KindTemplate, r.URITemplate, "description", r.Description, true)
	}
	return us, tools
}

func promptParams(p contract.Prompt) []param {
	ps := make([]param, 0, len(p.Arguments))
	for _, a := range p.Arguments {
		ps = append(ps, param{field: "arguments/" + a.Name, name: a.Name, title: a.Title, desc: a.Description})
	}
	return ps
}

type schemaText struct {
	field, text string
	prose       bool
}

// Schema keywords whose value is a map of subschemas, a subschema, or a
// list of subschemas.
var (
	schemaMaps  = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
	schemaOne   = []string{"items", "additionalProperties", "additionalItems", "unevaluatedProperties", "unevaluatedItems", "contains", "propertyNames", "not", "if", "then", "else"}
	schemaLists = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
)

// maxSchemaDepth bounds the walk of a hostile schema.
const maxSchemaDepth = 64

// walkSchema returns every text of a JSON Schema an agent is shown:
// descriptions and titles (prose), property names, and string values of
// enum, const, default and examples. When params is not nil, it appends
// every property (at any depth) as a parameter. Invalid JSON yields
// nothing: the schema checks of the rubric report it.
// SchemaTexts returns every text of a JSON Schema (descriptions, titles,
// enum values, defaults, examples...), walked recursively.
func SchemaTexts(raw json.RawMessage) []string {
	var out []string
	for _, s := range walkSchema(raw, "", nil) {
		out = append(out, s.text)
	}
	return out
}

func walkSchema(raw json.RawMessage, root string, params *[]param) []schemaText {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil
	}
	var out []schemaText
	var walk func(v any, path string, depth int)
	walk = func(v any, path string, depth int) {
		m, ok := v.(map[string]any)
		if !ok || depth > maxSchemaDepth {
			return
		}
		for _, k := range []string{"title", "description"} {
			if s, ok := m[k].(string); ok && s != "" {
				out = append(out, schemaText{path + "/" + k, s, true})
			}
		}
		for _, k := range []string{"enum", "const", "default", "examples"} {
			for i, s := range stringsIn(m[k]) {
				f := path + "/" + k
				if _, list := m[k].([]any); list {
					f += "/" + strconv.Itoa(i)
				}
				out = append(out, schemaText{f, s, false})
			}
		}
		for _, k := range schemaMaps {
			sub, ok := m[k].(map[string]any)
			if !ok {
				continue
			}
			for _, name := range sortedKeys(sub) {
				p := path + "/" + k + "/" + name
				out = append(out, schemaText{p, name, false})
				if k == "properties" && params != nil {
					*params = append(*params, paramOf(p, name, sub[name]))
				}
				walk(sub[name], p, depth+1)
			}
		}
		for _, k := range schemaOne {
			if _, ok := m[k].(map[string]any); ok {
				walk(m[k], path+"/"+k, depth+1)
			}
		}
		for _, k := range schemaLists {
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

func paramOf(field, name string, v any) param {
	p := param{field: field, name: name}
	m, ok := v.(map[string]any)
	if !ok {
		return p
	}
	p.desc, _ = m["description"].(string)
	p.title, _ = m["title"].(string)
	p.format, _ = m["format"].(string)
	p.writeOnly, _ = m["writeOnly"].(bool)
	p.types = stringsIn(m["type"])
	if len(p.types) == 0 {
		for _, k := range []string{"anyOf", "oneOf"} {
			if l, ok := m[k].([]any); ok {
				for _, s := range l {
					if sm, ok := s.(map[string]any); ok {
						p.types = append(p.types, stringsIn(sm["type"])...)
					}
				}
			}
		}
	}
	if items, ok := m["items"].(map[string]any); ok && slices.Contains(p.types, "array") {
		for _, t := range stringsIn(items["type"]) {
			p.types = append(p.types, "array:"+t)
		}
	}
	return p
}

func stringsIn(v any) []string {
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

func sortedKeys(m map[string]any) []string {
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
type ownSet struct {
	names  map[string]bool // normalised tool/prompt/resource names and titles
	server map[string]bool // words of the server's name and title
	params map[string]bool // lower-cased parameter and property names of every schema
	// values are lower-cased values of those parameters: a schema's enum
	// and const values, and what the surface's text sets one to
	// (optimization_type="DEGREES_OF_FREEDOM"). Read only when a reference
	// would otherwise be foreign, which few surfaces have, so they are
	// gathered then.
	values *ownValues
}

// ownValues gathers the values of a surface's parameters on first use.
type ownValues struct {
	c     *contract.Contract
	tools []toolInfo
	set   map[string]bool
}

func (v *ownValues) has(name string, params map[string]bool) bool {
	if v == nil {
		return false
	}
	if v.set == nil {
		v.set = map[string]bool{}
		texts := []string{v.c.Instructions}
		for _, ti := range v.tools {
			for _, x := range ti.values {
				v.set[strings.ToLower(x)] = true
			}
			texts = append(texts, ti.texts...)
		}
		for _, t := range texts {
			if !strings.ContainsAny(t, "\"'`") {
				continue
			}
			for _, m := range reSetsParam.FindAllStringSubmatch(t, -1) {
				if params[strings.ToLower(m[1])] {
					v.set[strings.ToLower(m[2])] = true
				}
			}
		}
	}
	return v.set[name]
}

// reSetsParam: a parameter set to a quoted value in prose.
var reSetsParam = regexp.MustCompile("\\b([A-Za-z_][\\w]*)\\s*(?:==?|:|\\bis\\b)\\s*[\"'`]([A-Za-z][\\w.-]*)[\"'`]")

// reValueField: the field of an enum or const string in a schema.
var reValueField = regexp.MustCompile(`/(?:enum/\d+|enum|const)$`)

func ownNames(c *contract.Contract, tools []toolInfo) ownSet {
	o := ownSet{names: map[string]bool{}, server: map[string]bool{}, params: map[string]bool{}, values: &ownValues{c: c, tools: tools}}
	for _, ti := range tools {
		for _, ps := range [][]param{ti.params, ti.outputs} {
			for _, p := range ps {
				o.params[strings.ToLower(p.name)] = true
			}
		}
	}
	addName := func(s string) {
		if s = normName(s); s != "" {
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
	for _, w := range words(c.ServerInfo.Name + " " + c.ServerInfo.Title) {
		o.server[w] = true
	}
	return o
}

// flatten drops the separators by which a tool's name and title differ.
var flatten = strings.NewReplacer("_", "", "-", "", " ", "", ".", "")

// normName lower-cases a tool reference and drops the prefixes clients put
// before a tool's name ("mcp_tool_send_email", "mcp__github__create_issue").
func normName(s string) string {
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
func (o ownSet) isOwn(ref string) bool {
	n := normName(ref)
	if o.names[n] {
		return true
	}
	for _, sep := range []string{"__", ".", "/"} {
		if i := strings.LastIndex(n, sep); i >= 0 && o.names[n[i+len(sep):]] {
			return true
		}
	}
	// Tool names differ from titles by case and separators only.
	flat := flatten.Replace(n)
	for k := range o.names {
		if flatten.Replace(k) == flat {
			return true
		}
	}
	return false
}

// words splits s into lower-case words, splitting camelCase, snake_case,
// kebab-case and dotted names.
func words(s string) []string {
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
			if len(cur) > 0 && (!isUpper(rs[i-1]) || (i+1 < len(rs) && isLower(rs[i+1]))) {
				flush()
			}
			cur = append(cur, r)
		case isLower(r) || (r >= '0' && r <= '9'):
			cur = append(cur, r)
		default:
			flush()
		}
	}
	flush()
	return out
}

func isUpper(r rune) bool { return r >= 'A' && r <= 'Z' }
func isLower(r rune) bool { return r >= 'a' && r <= 'z' }
