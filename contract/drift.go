package contract

import (
	"bytes"
	"encoding/json"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Kind is one kind of contract drift: a classified difference between two
// contracts of the same server identity, per tool, prompt, resource or
// template, never one hash over everything.
type Kind string

// The fourteen kinds, in the order reports list them. Two are recorded and
// counted but not surfaced; ten of the twelve surfaced carry the safety bit.
const (
	ToolAdded                   Kind = "tool_added"
	DescriptionChanged          Kind = "description_changed"
	ToolRemoved                 Kind = "tool_removed"
	TitleChanged                Kind = "title_changed"
	AnnotationTowardDestructive Kind = "annotation_toward_destructive"
	AnnotationTowardOpenWorld   Kind = "annotation_toward_open_world"
	AnnotationRemoved           Kind = "annotation_removed"
	ParameterAdded              Kind = "parameter_added"
	SchemaLoosened              Kind = "schema_loosened"
	InstructionsChanged         Kind = "instructions_changed"
	PromptChanged               Kind = "prompt_changed"
	ResourceChanged             Kind = "resource_changed"
	CapabilityAdded             Kind = "capability_added"
	ServerIdentityChanged       Kind = "server_identity_changed"
)

// Kinds lists every kind, in report order.
var Kinds = []Kind{
	ToolAdded, DescriptionChanged, ToolRemoved, TitleChanged,
	AnnotationTowardDestructive, AnnotationTowardOpenWorld, AnnotationRemoved,
	ParameterAdded, SchemaLoosened, InstructionsChanged, PromptChanged,
	ResourceChanged, CapabilityAdded, ServerIdentityChanged,
}

// Surfaced reports whether a change of kind k is reported as a finding;
// the others (a tool added, a description reworded) are recorded and
// counted only.
func (k Kind) Surfaced() bool { return k != ToolAdded && k != DescriptionChanged && k.Known() }

// Safety reports whether a change of kind k can widen what an agent is
// led or allowed to do.
func (k Kind) Safety() bool {
	return k.Surfaced() && k != ToolRemoved && k != TitleChanged
}

// Known reports whether k is one of Kinds.
func (k Kind) Known() bool {
	for _, c := range Kinds {
		if c == k {
			return true
		}
	}
	return false
}

// Change is one classified difference between a baseline contract and a
// later one.
type Change struct {
	Kind Kind `json:"kind"`
	// Subject names what changed: "tool:NAME", "prompt:NAME",
	// "resource:URI", "template:URI_TEMPLATE" or "server".
	Subject string `json:"subject"`
	// Detail names the part of the subject that moved: a parameter's
	// JSON pointer into the input schema and the keyword ("/properties/path
	// pattern"), a hint ("readOnlyHint"), a capability ("sampling").
	Detail string `json:"detail,omitempty"`
	// Before and After are the values on each side, as short text (a JSON
	// value in canonical form, a hint's value or "absent"); empty when the
	// subject did not exist on that side.
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
	// Safety and Surfaced are Kind.Safety and Kind.Surfaced, stored so
	// that a reader needs no table.
	Safety   bool `json:"safety"`
	Surfaced bool `json:"surfaced"`
}

// newChange returns a change of kind k with its bits set.
func newChange(k Kind, subject, detail, before, after string) Change {
	return Change{Kind: k, Subject: subject, Detail: detail, Before: before, After: after, Safety: k.Safety(), Surfaced: k.Surfaced()}
}

// Classify returns the classified changes from before to after, sorted
// by subject, kind and detail. Two contracts that differ only in JSON key
// order or whitespace have none. A nil contract is an empty one. The
// result is never nil.
func Classify(before, after *Contract) []Change {
	if before == nil {
		before = &Contract{}
	}
	if after == nil {
		after = &Contract{}
	}
	var out []Change
	out = append(out, classifyServer(before, after)...)
	out = append(out, classifyTools(before.Tools, after.Tools)...)
	out = append(out, classifyPrompts(before.Prompts, after.Prompts)...)
	out = append(out, classifyResources(before.Resources, after.Resources)...)
	out = append(out, classifyTemplates(before.Templates, after.Templates)...)
	return sortChanges(out)
}

// ClassifyRepository compares the repository URL a package declared on
// each side (its registry metadata) and returns a server_identity_changed
// change (subject "server", detail "repository") when both are set and
// differ after normalising, or when the repository was set and is now
// gone. An empty before is no change: there was nothing to hold to. The
// result is never nil.
func ClassifyRepository(before, after string) []Change {
	b, a := strings.TrimSpace(before), strings.TrimSpace(after)
	if b == "" {
		return []Change{}
	}
	if a != "" && normalizeRepository(b) == normalizeRepository(a) {
		return []Change{}
	}
	return []Change{newChange(ServerIdentityChanged, "server", "repository", clip(b), clip(a))}
}

// normalizeRepository reduces the spellings of one repository URL to one:
// "git+https://github.com/A/B.git", "git@github.com:a/b",
// "ssh://git@github.com/a/b", "git://github.com/a/b" and "github:a/b" all
// become "https://github.com/a/b".
func normalizeRepository(u string) string {
	u = strings.ToLower(strings.TrimSpace(u))
	u = strings.TrimPrefix(u, "git+")
	if i := strings.IndexAny(u, "#?"); i >= 0 {
		u = u[:i]
	}
	shorthands := map[string]string{"github:": "github.com", "gitlab:": "gitlab.com", "bitbucket:": "bitbucket.org"}
	for prefix, host := range shorthands {
		if strings.HasPrefix(u, prefix) {
			u = "https://" + host + "/" + strings.TrimPrefix(u, prefix)
		}
	}
	if i := strings.Index(u, "://"); i >= 0 {
		rest := u[i+3:]
		// Drop any user (git@, user:token@) before the host.
		host, path, _ := strings.Cut(rest, "/")
		if at := strings.LastIndex(host, "@"); at >= 0 {
			host = host[at+1:]
		}
		if u[:i] == "ssh" {
			// ssh://git@host:port/path: the port says nothing of the
			// repository.
			host, _, _ = strings.Cut(host, ":")
		}
		u = "https://" + host + "/" + path
	} else if at := strings.Index(u, "@"); at >= 0 && strings.Contains(u[at:], ":") {
		// scp-like syntax: git@host:path.
		host, path, _ := strings.Cut(u[at+1:], ":")
		u = "https://" + host + "/" + strings.TrimPrefix(path, "/")
	}
	for {
		t := strings.TrimSuffix(strings.TrimSuffix(u, "/"), ".git")
		if t == u {
			return u
		}
		u = t
	}
}

// maxText is the most bytes a change's Before or After holds.
const maxText = 200

// clip shortens s to at most maxText bytes, cut at a rune boundary and
// ending in "…" when it was cut.
func clip(s string) string {
	if len(s) <= maxText {
		return s
	}
	const ellipsis = "…"
	n := maxText - len(ellipsis)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + ellipsis
}

// sortChanges orders changes by subject, by the kind's place in Kinds and
// by detail, and returns an empty list for none.
func sortChanges(cs []Change) []Change {
	if cs == nil {
		return []Change{}
	}
	rank := make(map[Kind]int, len(Kinds))
	for i, k := range Kinds {
		rank[k] = i
	}
	sort.SliceStable(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if a.Subject != b.Subject {
			return a.Subject < b.Subject
		}
		if rank[a.Kind] != rank[b.Kind] {
			return rank[a.Kind] < rank[b.Kind]
		}
		if a.Detail != b.Detail {
			return a.Detail < b.Detail
		}
		if a.Before != b.Before {
			return a.Before < b.Before
		}
		return a.After < b.After
	})
	return cs
}

// --- server ---------------------------------------------------------------

func classifyServer(before, after *Contract) []Change {
	var out []Change
	if before.ServerInfo.Name != after.ServerInfo.Name {
		out = append(out, newChange(ServerIdentityChanged, "server", "serverInfo.name",
			clip(before.ServerInfo.Name), clip(after.ServerInfo.Name)))
	}
	if before.Instructions != after.Instructions {
		out = append(out, newChange(InstructionsChanged, "server", "instructions",
			clip(before.Instructions), clip(after.Instructions)))
	}
	for _, k := range addedKeys("", decodeObject(before.Capabilities), decodeObject(after.Capabilities)) {
		if k.value == false {
			// A capability declared off ("listChanged": false) is none.
			continue
		}
		out = append(out, newChange(CapabilityAdded, "server", k.path, "absent", valueText(k.value, true)))
	}
	return out
}

// addedKeys returns the dotted paths of the keys of after that before
// lacks, descending into objects present on both sides; a new key's own
// keys are not listed.
// addedKey is a key of after that before lacks, by its dotted path,
// with its value.
type addedKey struct {
	path  string
	value any
}

func addedKeys(prefix string, before, after map[string]any) []addedKey {
	var out []addedKey
	for k, av := range after {
		path := k
		if prefix != "" {
			path = prefix + "." + k
		}
		bv, ok := before[k]
		if !ok {
			out = append(out, addedKey{path, av})
			continue
		}
		bm, bok := bv.(map[string]any)
		am, aok := av.(map[string]any)
		if bok && aok {
			out = append(out, addedKeys(path, bm, am)...)
		}
	}
	return out
}

// --- tools ----------------------------------------------------------------

func classifyTools(before, after []Tool) []Change {
	var out []Change
	bt := indexBy(before, func(t Tool) string { return t.Name })
	at := indexBy(after, func(t Tool) string { return t.Name })
	for name := range at {
		if _, ok := bt[name]; !ok {
			out = append(out, newChange(ToolAdded, "tool:"+name, "", "", ""))
		}
	}
	for name, b := range bt {
		a, ok := at[name]
		if !ok {
			out = append(out, newChange(ToolRemoved, "tool:"+name, "", "", ""))
			continue
		}
		out = append(out, classifyTool("tool:"+name, b, a)...)
	}
	return out
}

// indexBy maps each item to its key, the first of several with one key
// winning.
func indexBy[T any](items []T, key func(T) string) map[string]T {
	m := make(map[string]T, len(items))
	for _, it := range items {
		k := key(it)
		if _, dup := m[k]; !dup {
			m[k] = it
		}
	}
	return m
}

// hints names the four behaviour hints as the specification spells them.
var hints = []struct {
	name string
	get  func(*Annotations) *bool
}{
	{"readOnlyHint", func(a *Annotations) *bool { return a.ReadOnlyHint }},
	{"destructiveHint", func(a *Annotations) *bool { return a.DestructiveHint }},
	{"idempotentHint", func(a *Annotations) *bool { return a.IdempotentHint }},
	{"openWorldHint", func(a *Annotations) *bool { return a.OpenWorldHint }},
}

// hint returns the declared value of the named hint of t, nil when absent.
func hint(t Tool, name string) *bool {
	if t.Annotations == nil {
		return nil
	}
	for _, h := range hints {
		if h.name == name {
			return h.get(t.Annotations)
		}
	}
	return nil
}

// hintText is a declared hint as Before or After text.
func hintText(p *bool) string {
	if p == nil {
		return "absent"
	}
	return strconv.FormatBool(*p)
}

func annotationTitle(t Tool) string {
	if t.Annotations == nil {
		return ""
	}
	return t.Annotations.Title
}

func classifyTool(subject string, b, a Tool) []Change {
	var out []Change
	add := func(k Kind, detail, before, after string) {
		out = append(out, newChange(k, subject, detail, before, after))
	}
	if b.Title != a.Title {
		add(TitleChanged, "title", clip(b.Title), clip(a.Title))
	}
	if bt, at := annotationTitle(b), annotationTitle(a); bt != at {
		add(TitleChanged, "annotations.title", clip(bt), clip(at))
	}

	if b.ReadOnly() && !a.ReadOnly() {
		add(AnnotationTowardDestructive, "readOnlyHint", hintText(hint(b, "readOnlyHint")), hintText(hint(a, "readOnlyHint")))
	}
	// A tool that stopped being read-only is destructive by the
	// specification's defaults: that is the readOnlyHint change above,
	// not a second one.
	if !b.Destructive() && a.Destructive() && !(b.ReadOnly() && !a.ReadOnly()) {
		add(AnnotationTowardDestructive, "destructiveHint", hintText(hint(b, "destructiveHint")), hintText(hint(a, "destructiveHint")))
	}
	if !b.OpenWorld() && a.OpenWorld() {
		add(AnnotationTowardOpenWorld, "openWorldHint", hintText(hint(b, "openWorldHint")), hintText(hint(a, "openWorldHint")))
	}
	for _, h := range hints {
		if bv, av := hint(b, h.name), hint(a, h.name); bv != nil && av == nil {
			add(AnnotationRemoved, h.name, hintText(bv), "absent")
		}
	}

	bs, as := decodeSchema(b.InputSchema), decodeSchema(a.InputSchema)
	for _, p := range addedParameters("", bs, as) {
		v, ok := pointerValue(as, p)
		add(ParameterAdded, p, "", valueText(v, ok))
	}
	for _, l := range loosenings("", bs, as) {
		add(SchemaLoosened, l.detail, l.before, l.after)
	}

	if len(out) == 0 {
		if b.Description != a.Description {
			add(DescriptionChanged, "description", clip(b.Description), clip(a.Description))
		} else if ds := descriptionChanges("", bs, as); len(ds) > 0 {
			sort.Slice(ds, func(i, j int) bool { return ds[i].detail < ds[j].detail })
			add(DescriptionChanged, ds[0].detail, ds[0].before, ds[0].after)
		}
	}
	return out
}

// pointerValue returns the value at a JSON pointer into a decoded schema.
func pointerValue(v any, ptr string) (any, bool) {
	if ptr == "" {
		return v, true
	}
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := v.(type) {
		case map[string]any:
			next, ok := c[tok]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			v = c[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// --- prompts --------------------------------------------------------------

func classifyPrompts(before, after []Prompt) []Change {
	var out []Change
	bp := indexBy(before, func(p Prompt) string { return p.Name })
	ap := indexBy(after, func(p Prompt) string { return p.Name })
	for name := range ap {
		if _, ok := bp[name]; !ok {
			out = append(out, newChange(PromptChanged, "prompt:"+name, "added", "", ""))
		}
	}
	for name, b := range bp {
		a, ok := ap[name]
		if !ok {
			out = append(out, newChange(PromptChanged, "prompt:"+name, "removed", "", ""))
			continue
		}
		type part struct{ name, before, after string }
		var parts []part
		if b.Title != a.Title {
			parts = append(parts, part{"title", b.Title, a.Title})
		}
		if b.Description != a.Description {
			parts = append(parts, part{"description", b.Description, a.Description})
		}
		if bs, as := argumentsText(b.Arguments), argumentsText(a.Arguments); bs != as {
			parts = append(parts, part{"arguments", bs, as})
		}
		switch len(parts) {
		case 0:
		case 1:
			out = append(out, newChange(PromptChanged, "prompt:"+name, parts[0].name, clip(parts[0].before), clip(parts[0].after)))
		default:
			names := make([]string, len(parts))
			for i, p := range parts {
				names[i] = p.name
			}
			out = append(out, newChange(PromptChanged, "prompt:"+name, strings.Join(names, ","), "", ""))
		}
	}
	return out
}

// argumentsText is the part of a prompt's arguments that drift compares
// (each argument's name, description and required flag, in name order),
// as canonical JSON.
func argumentsText(args []PromptArgument) string {
	type arg struct {
		Name        string `json:"name"`
		Description string `json:"description,omitempty"`
		Required    bool   `json:"required,omitempty"`
	}
	byName := indexBy(args, func(a PromptArgument) string { return a.Name })
	list := make([]arg, 0, len(byName))
	for _, a := range byName {
		list = append(list, arg{a.Name, a.Description, a.Required})
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	b, err := Canonical(list)
	if err != nil {
		return ""
	}
	return string(b)
}

// --- resources and templates ---------------------------------------------

// listed is what drift compares of a resource or a template.
type listed struct {
	key, name, description string
}

func classifyResources(before, after []Resource) []Change {
	conv := func(rs []Resource) []listed {
		out := make([]listed, len(rs))
		for i, r := range rs {
			out[i] = listed{r.URI, r.Name, r.Description}
		}
		return out
	}
	return classifyListed("resource:", "uri", conv(before), conv(after))
}

func classifyTemplates(before, after []Template) []Change {
	conv := func(ts []Template) []listed {
		out := make([]listed, len(ts))
		for i, t := range ts {
			out[i] = listed{t.URITemplate, t.Name, t.Description}
		}
		return out
	}
	return classifyListed("template:", "uri_template", conv(before), conv(after))
}

// classifyListed compares resources (or templates) by key. One removed
// and one added that share a name, the only ones of that name on each
// side, are one item whose key moved, not a removal and an addition.
func classifyListed(prefix, keyDetail string, before, after []listed) []Change {
	var out []Change
	bm := indexBy(before, func(l listed) string { return l.key })
	am := indexBy(after, func(l listed) string { return l.key })
	removed := map[string][]listed{}
	added := map[string][]listed{}
	for k, b := range bm {
		a, ok := am[k]
		if !ok {
			removed[b.name] = append(removed[b.name], b)
			continue
		}
		if b.description != a.description {
			out = append(out, newChange(DescriptionChanged, prefix+k, "description", clip(b.description), clip(a.description)))
		}
	}
	for k, a := range am {
		if _, ok := bm[k]; !ok {
			added[a.name] = append(added[a.name], a)
		}
	}
	for name, rs := range removed {
		as := added[name]
		if name != "" && len(rs) == 1 && len(as) == 1 {
			out = append(out, newChange(ResourceChanged, prefix+as[0].key, keyDetail, clip(rs[0].key), clip(as[0].key)))
			delete(added, name)
			continue
		}
		for _, r := range rs {
			out = append(out, newChange(ResourceChanged, prefix+r.key, "removed", "", ""))
		}
	}
	for _, as := range added {
		for _, a := range as {
			out = append(out, newChange(ResourceChanged, prefix+a.key, "added", "", ""))
		}
	}
	return out
}

// --- JSON values ------------------------------------------------------------

// decodeJSON decodes raw with numbers kept as json.Number; ok is false for
// empty or malformed input.
func decodeJSON(raw json.RawMessage) (v any, ok bool) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	return v, true
}

// decodeObject decodes a raw JSON object; anything else is an empty one.
func decodeObject(raw json.RawMessage) map[string]any {
	v, _ := decodeJSON(raw)
	if m, ok := v.(map[string]any); ok {
		return m
	}
	return map[string]any{}
}

// decodeSchema decodes an input schema. An absent or malformed schema is
// the empty schema, which accepts anything; a boolean schema stays a bool.
func decodeSchema(raw json.RawMessage) any {
	v, ok := decodeJSON(raw)
	if !ok || v == nil {
		return map[string]any{}
	}
	return v
}

// number parses a JSON number; ok is false for anything else.
func number(v any) (*big.Float, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, false
	}
	f, _, err := big.ParseFloat(string(n), 10, 512, big.ToNearestEven)
	if err != nil {
		return nil, false
	}
	return f, true
}

// jsonEqual reports whether two decoded JSON values are the same value:
// numbers compare numerically, objects regardless of key order.
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		fx, okx := number(x)
		fy, oky := number(b)
		if !okx || !oky {
			return false
		}
		return fx.Cmp(fy) == 0
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !jsonEqual(xv, yv) {
				return false
			}
		}
		return true
	default:
		// string, bool, nil
		return a == b
	}
}

// valueText is a keyword's value as Before or After text: canonical JSON,
// or "absent".
func valueText(v any, present bool) string {
	if !present {
		return "absent"
	}
	b, err := Canonical(v)
	if err != nil {
		return "?"
	}
	return clip(string(b))
}

// --- input schemas ----------------------------------------------------------

// escapePointer escapes a property name for a JSON pointer (RFC 6901).
func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// schemaObject returns a schema as an object; the boolean schema true and
// anything that is not an object are the empty schema, false is reported
// by ok false.
func schemaObject(v any) (m map[string]any, ok bool) {
	switch s := v.(type) {
	case map[string]any:
		return s, true
	case bool:
		return map[string]any{}, s
	default:
		return map[string]any{}, true
	}
}

func properties(s map[string]any) map[string]any {
	p, _ := s["properties"].(map[string]any)
	return p
}

// pairs pairs the subschemas of two schemas that drift descends into:
// the properties named on both sides and the items (a list schema, or a
// tuple position present on both sides).
func pairs(ptr string, b, a map[string]any) [][3]any {
	var out [][3]any
	bp := properties(b)
	for name, av := range properties(a) {
		if bv, ok := bp[name]; ok {
			out = append(out, [3]any{ptr + "/properties/" + escapePointer(name), bv, av})
		}
	}
	bv, bok := b["items"]
	av, aok := a["items"]
	if !bok || !aok {
		return out
	}
	bl, bIsList := bv.([]any)
	al, aIsList := av.([]any)
	switch {
	case bIsList && aIsList:
		for i := 0; i < len(al) && i < len(bl); i++ {
			out = append(out, [3]any{ptr + "/items/" + strconv.Itoa(i), bl[i], al[i]})
		}
	case !bIsList && !aIsList:
		out = append(out, [3]any{ptr + "/items", bv, av})
	}
	// A tuple that became a list schema, or the reverse: no pairing.
	return out
}

// addedParameters returns the JSON pointers of the properties declared in
// the after schema and not in the before, at any depth of properties and
// items; a new property's own properties are not listed.
func addedParameters(ptr string, before, after any) []string {
	a, ok := after.(map[string]any)
	if !ok {
		return nil
	}
	b, _ := before.(map[string]any)
	if undeclared(b) {
		// A baseline that said nothing of its shape (no type, no
		// properties: the empty schema some releases published by
		// mistake) enumerated no parameters, so none is new against it.
		return nil
	}
	var out []string
	bp := properties(b)
	for name, av := range properties(a) {
		p := ptr + "/properties/" + escapePointer(name)
		bv, ok := bp[name]
		if !ok {
			out = append(out, p)
			continue
		}
		out = append(out, addedParameters(p, bv, av)...)
	}
	bi, bok := b["items"]
	switch ai := a["items"].(type) {
	case []any:
		bl, bIsList := bi.([]any)
		if bok && !bIsList {
			break
		}
		for i, av := range ai {
			var bv any
			if i < len(bl) {
				bv = bl[i]
			}
			out = append(out, addedParameters(ptr+"/items/"+strconv.Itoa(i), bv, av)...)
		}
	case map[string]any:
		if _, bIsList := bi.([]any); bIsList {
			break
		}
		out = append(out, addedParameters(ptr+"/items", bi, ai)...)
	}
	return out
}

// undeclared reports whether a schema says nothing of its shape: no
// type and no properties (annotations such as $schema aside).
func undeclared(s map[string]any) bool {
	_, typed := s["type"]
	_, props := s["properties"]
	return !typed && !props
}

// loosening is one schema keyword that accepts more after than before.
type loosening struct {
	detail, before, after string
}

// lowerBounds and upperBounds are the numeric bounds: a lower bound
// loosens when it drops, an upper bound when it rises.
var (
	lowerBounds = []string{"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties"}
	upperBounds = []string{"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties"}
)

// loosenings compares two schemas keyword by keyword, at the root and
// recursively over the properties present on both sides and the items.
func loosenings(ptr string, before, after any) []loosening {
	a, aok := schemaObject(after)
	b, bok := schemaObject(before)
	if !aok || !bok {
		// After accepts nothing (tighter than anything), or before
		// accepted nothing: no keyword to name.
		return nil
	}
	var out []loosening
	add := func(kw string, bv any, bp bool, av any, ap bool) {
		out = append(out, loosening{strings.TrimSpace(ptr + " " + kw), valueText(bv, bp), valueText(av, ap)})
	}
	get := func(m map[string]any, kw string) (any, bool) {
		v, ok := m[kw]
		return v, ok
	}

	if bv, bp := get(b, "type"); bp {
		av, ap := get(a, "type")
		bt, bvalid := typeSet(bv)
		at, avalid := typeSet(av)
		if !ap || (bvalid && avalid && widens(bt, at)) {
			add("type", bv, bp, av, ap)
		}
	}
	if bv, bp := get(b, "enum"); bp {
		av, ap := get(a, "enum")
		be, bvalid := bv.([]any)
		ae, avalid := av.([]any)
		if !ap || (bvalid && avalid && !subset(ae, be)) {
			add("enum", bv, bp, av, ap)
		}
	}
	if bv, bp := get(b, "const"); bp {
		if av, ap := get(a, "const"); !ap || !jsonEqual(bv, av) {
			add("const", bv, bp, av, ap)
		}
	}
	for _, kw := range []string{"pattern", "format"} {
		if bv, bp := get(b, kw); bp {
			if av, ap := get(a, kw); !ap {
				add(kw, bv, bp, av, ap)
			}
		}
	}
	for _, kw := range lowerBounds {
		if bv, bp := get(b, kw); bp {
			if av, ap := get(a, kw); !ap || relaxed(bv, av, -1) {
				add(kw, bv, bp, av, ap)
			}
		}
	}
	for _, kw := range upperBounds {
		if bv, bp := get(b, kw); bp {
			if av, ap := get(a, kw); !ap || relaxed(bv, av, 1) {
				add(kw, bv, bp, av, ap)
			}
		}
	}
	if bv, bp := get(b, "additionalProperties"); bp && bv == false {
		if av, ap := get(a, "additionalProperties"); av != false {
			add("additionalProperties", bv, bp, av, ap)
		}
	}
	if bv, bp := get(b, "required"); bp {
		av, ap := get(a, "required")
		if leftRequired(b, a, bv, av) {
			add("required", bv, bp, av, ap)
		}
	}

	for _, c := range pairs(ptr, b, a) {
		out = append(out, loosenings(c[0].(string), c[1], c[2])...)
	}
	return out
}

// typeSet reads a type keyword (a name or a list of names).
func typeSet(v any) (map[string]bool, bool) {
	set := map[string]bool{}
	switch t := v.(type) {
	case string:
		set[t] = true
	case []any:
		for _, e := range t {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			set[s] = true
		}
	default:
		return nil, false
	}
	return set, true
}

// widens reports whether the after types admit a type the before did
// not; "number" admits "integer".
func widens(before, after map[string]bool) bool {
	for t := range after {
		if before[t] || (t == "integer" && before["number"]) {
			continue
		}
		return true
	}
	return false
}

// subset reports whether every value of xs is one of ys.
func subset(xs, ys []any) bool {
	for _, x := range xs {
		found := false
		for _, y := range ys {
			if jsonEqual(x, y) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// relaxed reports whether a bound moved the loosening way: down for a
// lower bound (dir -1), up for an upper one (dir 1). A draft-04 boolean
// exclusiveMinimum/exclusiveMaximum loosens when it goes from true to
// false. Values that are not comparable make no claim.
func relaxed(before, after any, dir int) bool {
	if bb, ok := before.(bool); ok {
		ab, ok := after.(bool)
		return ok && bb && !ab
	}
	bn, bok := number(before)
	an, aok := number(after)
	if !bok || !aok {
		return false
	}
	return an.Cmp(bn) == dir
}

// leftRequired reports whether a name required before is not required
// after, leaving out names whose property was removed (a removed
// property is a tightening, not a loosening).
func leftRequired(b, a map[string]any, bv, av any) bool {
	breq, ok := bv.([]any)
	if !ok {
		return false
	}
	areq, _ := av.([]any)
	bp, ap := properties(b), properties(a)
	for _, n := range breq {
		name, ok := n.(string)
		if !ok {
			continue
		}
		if _, was := bp[name]; was {
			if _, is := ap[name]; !is {
				continue
			}
		}
		still := false
		for _, m := range areq {
			if m == name {
				still = true
				break
			}
		}
		if !still {
			return true
		}
	}
	return false
}

// descriptionChanges returns the descriptions that differ between two
// schemas, at subschemas present on both sides, with the pointer of each
// description keyword.
func descriptionChanges(ptr string, before, after any) []loosening {
	a, aok := after.(map[string]any)
	b, bok := before.(map[string]any)
	if !aok || !bok {
		return nil
	}
	var out []loosening
	bd, _ := b["description"].(string)
	ad, _ := a["description"].(string)
	if bd != ad {
		out = append(out, loosening{ptr + "/description", clip(bd), clip(ad)})
	}
	// Schemas keyed by name.
	for _, kw := range []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"} {
		bm, _ := b[kw].(map[string]any)
		am, _ := a[kw].(map[string]any)
		for name, av := range am {
			if bv, ok := bm[name]; ok {
				out = append(out, descriptionChanges(ptr+"/"+kw+"/"+escapePointer(name), bv, av)...)
			}
		}
	}
	// Schemas and lists of schemas.
	for _, kw := range []string{"items", "prefixItems", "anyOf", "oneOf", "allOf", "additionalProperties",
		"additionalItems", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedProperties", "unevaluatedItems"} {
		bv, av := b[kw], a[kw]
		bl, bIsList := bv.([]any)
		al, aIsList := av.([]any)
		switch {
		case bIsList && aIsList:
			for i := 0; i < len(al) && i < len(bl); i++ {
				out = append(out, descriptionChanges(ptr+"/"+kw+"/"+strconv.Itoa(i), bl[i], al[i])...)
			}
		case !bIsList && !aIsList:
			out = append(out, descriptionChanges(ptr+"/"+kw, bv, av)...)
		}
	}
	return out
}
