package contract

import (
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
