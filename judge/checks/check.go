package checks

import (
	"slices"
	"strings"
	"sync"

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
		{CodeHiddenEncoded, SeverityHigh, "a long base64 or hex blob that decodes to readable text"},
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
	// params are the parameters of the tool the unit belongs to.
	params []param
	// scan is what one pass over a prose text found, for the prefilters.
	scan *textScan
}

// hasParam reports whether the unit's tool has a parameter named name.
func (u *unit) hasParam(name string) bool {
	for i := range u.params {
		if u.params[i].name == name {
			return true
		}
	}
	return false
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
	// texts are the tool's prose units: description, titles and every
	// description inside its schemas; desc is its description's, if any.
	texts []*unit
	desc  *unit
}

// Check runs the deterministic contract checks over c and returns their
// findings, in the order of the contract (server, tools, prompts,
// resources, templates). It never fails and does no I/O; a nil contract
// has no findings. The result is never nil, so that "checked, nothing
// found" and "not checked" stay apart.
func Check(c *contract.Contract) []Finding {
	out := &findings{list: []Finding{}}
	if c == nil {
		return []Finding{}
	}
	sc := scratchPool.Get().(*scratch)
	defer sc.release()
	units, tools := sc.collect(c, false)
	own := ownNames(c)
	nprose := 0
	for i := range units {
		if units[i].prose {
			nprose++
		}
	}
	sc.scans = slices.Grow(sc.scans[:0], nprose)[:nprose]
	scans := sc.scans
	for i := range units {
		u := &units[i]
		var st proseStats
		if u.prose {
			u.scan = &scans[0]
			scans = scans[1:]
			st = u.scan.readProse(u.text, &sc.hits)
		}
		checkHidden(out, u, &st)
		if u.prose {
			checkInjection(out, u, own)
			checkShadowing(out, u, own)
		}
	}
	for i := range tools {
		ti := &tools[i]
		checkCredentialParams(out, KindTool, ti.tool.Name, ti.params)
		checkEnvironment(out, ti)
	}
	for _, p := range c.Prompts {
		checkCredentialParams(out, KindPrompt, p.Name, promptParams(p))
	}
	checkArbitraryPath(out, c, units, tools)
	if len(out.list) < 2 {
		return out.list
	}
	// Contract order: by subject, in the order the units were listed;
	// within a subject, in the order the checks ran.
	order := map[subjectKey]int{}
	for _, k := range sc.subjects {
		if _, ok := order[k]; !ok {
			order[k] = len(order)
		}
	}
	rank := func(f Finding) int {
		if i, ok := order[subjectKey{f.Kind, f.Subject}]; ok {
			return i
		}
		return len(order)
	}
	slices.SortStableFunc(out.list, func(a, b Finding) int { return rank(a) - rank(b) })
	return out.list
}

// subjectKey is what a finding is about: a kind and a subject.
type subjectKey struct{ kind, name string }

// scratch holds the working memory of a Check, for the next one to reuse:
// nothing of it outlives the Check (findings hold only strings).
type scratch struct {
	// subjects are the subjects of the units, in order (a subject repeated
	// by the next unit is listed once).
	subjects []subjectKey
	units    []unit
	tools    []toolInfo
	starts   []int
	texts    []*unit
	scans    []textScan
	hits     []hit
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// release clears sc, so that it holds on to no contract, and returns it
// to the pool.
func (sc *scratch) release() {
	clear(sc.units)
	clear(sc.tools)
	clear(sc.texts)
	clear(sc.scans)
	clear(sc.subjects)
	sc.units, sc.tools, sc.starts, sc.texts, sc.scans, sc.hits = sc.units[:0], sc.tools[:0], sc.starts[:0], sc.texts[:0], sc.scans[:0], sc.hits[:0]
	sc.subjects = sc.subjects[:0]
	scratchPool.Put(sc)
}

// findings collects findings, one per (code, kind, subject, field), so that
// fifty zero-width spaces in one description make one finding.
type findings struct {
	list []Finding
	seen map[findingKey]bool
}

type findingKey struct{ code, kind, subject, field string }

func (fs *findings) add(f Finding) {
	k := findingKey{f.Code, f.Kind, f.Subject, f.Field}
	if fs.seen[k] {
		return
	}
	if fs.seen == nil {
		fs.seen = map[findingKey]bool{}
	}
	fs.seen[k] = true
	if f.Severity == "" {
		f.Severity = severityOf(f.Code)
	}
	fs.list = append(fs.list, f)
}

// severities maps each code to its severity.
var severities = func() map[string]Severity {
	m := map[string]Severity{}
	for _, ci := range CheckCodes() {
		if _, ok := m[ci.Code]; !ok {
			m[ci.Code] = ci.Severity
		}
	}
	return m
}()

func severityOf(code string) Severity {
	if s, ok := severities[code]; ok {
		return s
	}
	return SeverityMedium
}

// collect lists every text unit of c in contract order, and the tools with
// their parameters.
func collect(c *contract.Contract) ([]unit, []toolInfo) { return new(scratch).collect(c, true) }

// collect is collect, in the memory of sc. Unless all, it leaves out the
// units the checks have nothing to say about, texts that are not prose
// and hold no character Visible escapes; sc.subjects keeps the order of
// the subjects of all units.
func (sc *scratch) collect(c *contract.Contract, all bool) ([]unit, []toolInfo) {
	us := slices.Grow(sc.units[:0], 8+8*len(c.Tools)+6*len(c.Prompts)+4*len(c.Resources)+4*len(c.Templates))
	subjects := sc.subjects[:0]
	add := func(kind, subject, field, text string, prose bool) {
		if text == "" {
			return
		}
		if n := len(subjects); n == 0 || subjects[n-1] != (subjectKey{kind, subject}) {
			subjects = append(subjects, subjectKey{kind, subject})
		}
		if all || prose || containsEscaped(text) {
			us = append(us, unit{kind: kind, subject: subject, field: field, text: text, prose: prose})
		}
	}
	srv := c.ServerInfo.Name
	add(KindServer, srv, "name", c.ServerInfo.Name, false)
	add(KindServer, srv, "title", c.ServerInfo.Title, true)
	add(KindServer, srv, "instructions", c.Instructions, true)

	tools := slices.Grow(sc.tools[:0], len(c.Tools))
	// Where each tool's units start; the pointers of toolInfo.texts are
	// taken once us no longer grows.
	starts := sc.starts[:0]
	for _, t := range c.Tools {
		ti := toolInfo{tool: t}
		starts = append(starts, len(us))
		add(KindTool, t.Name, "name", t.Name, false)
		add(KindTool, t.Name, "title", t.Title, true)
		add(KindTool, t.Name, "description", t.Description, true)
		if t.Annotations != nil {
			add(KindTool, t.Name, "annotations/title", t.Annotations.Title, true)
		}
		emit := func(field, text string, prose bool) { add(KindTool, t.Name, field, text, prose) }
		ti.params = walkSchema(t.InputSchema, "input_schema", nil, true, emit)
		walkSchema(t.OutputSchema, "output_schema", nil, false, emit)
		tools = append(tools, ti)
	}
	starts = append(starts, len(us))
	for _, p := range c.Prompts {
		add(KindPrompt, p.Name, "name", p.Name, false)
		add(KindPrompt, p.Name, "title", p.Title, true)
		add(KindPrompt, p.Name, "description", p.Description, true)
		for _, a := range p.Arguments {
			// The fields are built only for texts there are.
			if a.Name != "" {
				add(KindPrompt, p.Name, "arguments/"+a.Name+"/name", a.Name, false)
			}
			if a.Title != "" {
				add(KindPrompt, p.Name, "arguments/"+a.Name+"/title", a.Title, true)
			}
			if a.Description != "" {
				add(KindPrompt, p.Name, "arguments/"+a.Name+"/description", a.Description, true)
			}
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
	sc.units, sc.tools, sc.starts, sc.subjects = us, tools, starts, subjects
	texts := sc.texts[:0]
	for i := range tools {
		from := len(texts)
		for j := starts[i]; j < starts[i+1]; j++ {
			us[j].params = tools[i].params
			if us[j].prose {
				texts = append(texts, &us[j])
				if us[j].field == "description" {
					tools[i].desc = &us[j]
				}
			}
		}
		tools[i].texts = texts[from:len(texts):len(texts)]
	}
	sc.texts = texts
	return us, tools
}

func promptParams(p contract.Prompt) []param {
	ps := make([]param, 0, len(p.Arguments))
	for _, a := range p.Arguments {
		ps = append(ps, param{field: "arguments/" + a.Name, name: a.Name, title: a.Title, desc: a.Description})
	}
	return ps
}

// ownNames are the names a server may refer to without shadowing anyone:
// its own tools, prompts and resources (by name and title) and the words of
// its own name. They are gathered on first use, as most texts never name
// a tool or server to compare with them.
type ownSet struct {
	c     *contract.Contract
	built bool
	names []string // normalised tool/prompt/resource names and titles
}

func ownNames(c *contract.Contract) *ownSet { return &ownSet{c: c} }

func (o *ownSet) build() {
	if o.built {
		return
	}
	o.built = true
	c := o.c
	addName := func(s string) {
		if s = normName(s); s != "" && !slices.Contains(o.names, s) {
			o.names = append(o.names, s)
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
}

// isServerWord reports whether w is a word of the server's name or title.
func (o *ownSet) isServerWord(w string) bool {
	// The words of Name+" "+Title are those of the two.
	return hasWord(o.c.ServerInfo.Name, w) || hasWord(o.c.ServerInfo.Title, w)
}

// isNameWord reports whether w is a word of one of the names.
func (o *ownSet) isNameWord(w string) bool {
	o.build()
	for _, n := range o.names {
		if hasWord(n, w) {
			return true
		}
	}
	return false
}

// hasWord reports whether w is one of words(s).
func hasWord(s, w string) bool {
	found := false
	eachWord(s, func(x string) { found = found || x == w })
	return found
}

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
func (o *ownSet) isOwn(ref string) bool {
	o.build()
	n := normName(ref)
	if slices.Contains(o.names, n) {
		return true
	}
	for _, sep := range []string{"__", ".", "/"} {
		if i := strings.LastIndex(n, sep); i >= 0 && slices.Contains(o.names, n[i+len(sep):]) {
			return true
		}
	}
	// Tool names differ from titles by case and separators only.
	for _, k := range o.names {
		if equalFlat(k, n) {
			return true
		}
	}
	return false
}

// equalFlat reports whether flatten(a) == flatten(b).
func equalFlat(a, b string) bool {
	i, j := 0, 0
	for {
		for i < len(a) && isFlatSep(a[i]) {
			i++
		}
		for j < len(b) && isFlatSep(b[j]) {
			j++
		}
		if i == len(a) || j == len(b) {
			return i == len(a) && j == len(b)
		}
		if a[i] != b[j] {
			return false
		}
		i++
		j++
	}
}

func isFlatSep(c byte) bool { return c == '_' || c == '-' || c == ' ' || c == '.' }

// words splits s into lower-case words, splitting camelCase, snake_case,
// kebab-case and dotted names.
func words(s string) []string { return appendWords(nil, s) }

// appendWords appends the words of s to ws.
func appendWords(ws []string, s string) []string {
	for w, i := nextWord(s, 0); i >= 0; w, i = nextWord(s, i) {
		ws = append(ws, w)
	}
	return ws
}

// eachWord calls f with each word of s, as words returns them.
func eachWord(s string, f func(string)) {
	for w, i := nextWord(s, 0); i >= 0; w, i = nextWord(s, i) {
		f(w)
	}
}

// nextWord returns the first word of s from offset i on, lower-cased, and
// the offset after it, or -1 if there is none. Words are runs of ASCII
// letters and digits; a byte outside them (including every byte of a
// non-ASCII character) ends a word, and so does a capital that starts a
// new one.
func nextWord(s string, i int) (string, int) {
	for i < len(s) && !isUpper(rune(s[i])) && !isLower(rune(s[i])) && !(s[i] >= '0' && s[i] <= '9') {
		i++
	}
	if i == len(s) {
		return "", -1
	}
	start, upper := i, isUpper(rune(s[i]))
	for i++; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			// A capital starts a word, unless it continues an acronym
			// ("APIKey" -> "api", "key").
			if !isUpper(rune(s[i-1])) || (i+1 < len(s) && isLower(rune(s[i+1]))) {
				break
			}
			upper = true
			continue
		}
		if !isLower(rune(c)) && !(c >= '0' && c <= '9') {
			break
		}
	}
	w := s[start:i]
	if upper {
		w = strings.ToLower(w)
	}
	return w, i
}

func isUpper(r rune) bool { return r >= 'A' && r <= 'Z' }
func isLower(r rune) bool { return r >= 'a' && r <= 'z' }
