// Package contract is the model of an MCP server's declared contract: server
// info, capabilities, instructions, tools, prompts, resources and resource
// templates. It provides the canonical JSON form and the schema hash that
// identifies a tool surface across runs. It does no network I/O.
package contract

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
)

// Contract is what a server declared over MCP during one session. It keeps
// everything the server sent: fields this model names are typed, any other
// field of an object is kept, as sent, in its Extra map, and a hint or
// field the server left out stays absent (the rubric applies the
// specification's defaults).
type Contract struct {
	ProtocolVersion string          `json:"protocol_version"`
	ServerInfo      Implementation  `json:"server_info"`
	Capabilities    json.RawMessage `json:"capabilities,omitempty"`
	Instructions    string          `json:"instructions,omitempty"`
	// Meta is the _meta of the initialize (or server/discover) result.
	Meta      json.RawMessage `json:"_meta,omitempty"`
	Tools     []Tool          `json:"tools"`
	Prompts   []Prompt        `json:"prompts"`
	Resources []Resource      `json:"resources"`
	Templates []Template      `json:"resource_templates"`
	// SchemaHash is Hash(c), stored so that readers need not recompute it.
	SchemaHash string `json:"schema_hash"`
}

// Extra holds the fields of an object that this model does not name, as
// the server sent them, keyed by their wire name.
type Extra map[string]json.RawMessage

// Implementation is the server's self-description.
type Implementation struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Version     string          `json:"version"`
	Description string          `json:"description,omitempty"`
	WebsiteURL  string          `json:"website_url,omitempty"`
	Icons       json.RawMessage `json:"icons,omitempty"`
	Extra       Extra           `json:"extra,omitempty"`
}

// Tool is one tool as listed by tools/list.
type Tool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema,omitempty"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	Annotations  *Annotations    `json:"annotations,omitempty"`
	Icons        json.RawMessage `json:"icons,omitempty"`
	// Execution is the tool's execution properties (taskSupport).
	Execution json.RawMessage `json:"execution,omitempty"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
	Extra     Extra           `json:"extra,omitempty"`
}

// Annotations are a tool's behaviour hints, each nil when the server left
// it out. The specification's defaults apply to an absent hint:
// readOnlyHint false, destructiveHint true, idempotentHint false,
// openWorldHint true; destructiveHint and idempotentHint are meaningful
// only when readOnlyHint is false. Bundles recorded before absent hints
// were kept hold false for an absent readOnlyHint or idempotentHint, which
// is the same hint by those defaults.
type Annotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"read_only_hint,omitempty"`
	DestructiveHint *bool  `json:"destructive_hint,omitempty"`
	IdempotentHint  *bool  `json:"idempotent_hint,omitempty"`
	OpenWorldHint   *bool  `json:"open_world_hint,omitempty"`
	Extra           Extra  `json:"extra,omitempty"`
}

// ReadOnly reports the effective read-only hint (spec default: false).
func (t Tool) ReadOnly() bool {
	return t.Annotations != nil && t.Annotations.ReadOnlyHint != nil && *t.Annotations.ReadOnlyHint
}

// Idempotent reports the effective idempotent hint (spec default: false).
func (t Tool) Idempotent() bool {
	return t.Annotations != nil && t.Annotations.IdempotentHint != nil && *t.Annotations.IdempotentHint
}

// Destructive reports the effective destructive hint: a tool with no
// annotations, or with destructiveHint absent and not read-only, may perform
// destructive updates by the spec's defaults.
func (t Tool) Destructive() bool {
	a := t.Annotations
	if a == nil {
		return true
	}
	if t.ReadOnly() {
		return false
	}
	if a.DestructiveHint == nil {
		return true
	}
	return *a.DestructiveHint
}

// OpenWorld reports the effective open-world hint (spec default: true).
func (t Tool) OpenWorld() bool {
	a := t.Annotations
	if a == nil || a.OpenWorldHint == nil {
		return true
	}
	return *a.OpenWorldHint
}

// Prompt is one prompt as listed by prompts/list.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description"`
	Arguments   []PromptArgument `json:"arguments"`
	Icons       json.RawMessage  `json:"icons,omitempty"`
	Meta        json.RawMessage  `json:"_meta,omitempty"`
	Extra       Extra            `json:"extra,omitempty"`
}

// PromptArgument is one argument of a prompt.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description"`
	Required    bool   `json:"required"`
	Extra       Extra  `json:"extra,omitempty"`
}

// Resource is one resource as listed by resources/list.
type Resource struct {
	URI         string          `json:"uri"`
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description"`
	MIMEType    string          `json:"mime_type,omitempty"`
	Size        *int64          `json:"size,omitempty"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
	Icons       json.RawMessage `json:"icons,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
	Extra       Extra           `json:"extra,omitempty"`
}

// Template is one resource template as listed by resources/templates/list.
type Template struct {
	URITemplate string          `json:"uri_template"`
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description"`
	MIMEType    string          `json:"mime_type,omitempty"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
	Icons       json.RawMessage `json:"icons,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
	Extra       Extra           `json:"extra,omitempty"`
}

// surface is the part of a contract the schema hash covers: everything an
// agent reads and acts on. Server name, version and protocol version are left
// out, so that a release that changes nothing the agent sees keeps its hash.
type surface struct {
	Instructions string     `json:"instructions"`
	Tools        []Tool     `json:"tools"`
	Prompts      []Prompt   `json:"prompts"`
	Resources    []Resource `json:"resources"`
	Templates    []Template `json:"resource_templates"`
}

// Hash returns the schema hash of c: "sha256:" and the hex SHA-256 of the
// canonical JSON of its surface, with every list sorted by its key.
func Hash(c *Contract) (string, error) {
	s := surface{
		Instructions: c.Instructions,
		Tools:        append([]Tool(nil), c.Tools...),
		Prompts:      append([]Prompt(nil), c.Prompts...),
		Resources:    append([]Resource(nil), c.Resources...),
		Templates:    append([]Template(nil), c.Templates...),
	}
	sort.SliceStable(s.Tools, func(i, j int) bool { return s.Tools[i].Name < s.Tools[j].Name })
	sort.SliceStable(s.Prompts, func(i, j int) bool { return s.Prompts[i].Name < s.Prompts[j].Name })
	sort.SliceStable(s.Resources, func(i, j int) bool { return s.Resources[i].URI < s.Resources[j].URI })
	sort.SliceStable(s.Templates, func(i, j int) bool { return s.Templates[i].URITemplate < s.Templates[j].URITemplate })
	for i := range s.Prompts {
		args := append([]PromptArgument(nil), s.Prompts[i].Arguments...)
		sort.SliceStable(args, func(a, b int) bool { return args[a].Name < args[b].Name })
		s.Prompts[i].Arguments = args
	}
	b, err := Canonical(s)
	if err != nil {
		return "", fmt.Errorf("contract hash: %w", err)
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// Canonical returns the canonical JSON of v: object keys sorted, no
// insignificant whitespace, no HTML escaping, numbers kept as written.
func Canonical(v any) ([]byte, error) {
	raw, err := marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return nil, err
	}
	return marshal(generic)
}

func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Normalize sorts nothing and changes nothing the server said; it fills
// SchemaHash and replaces nil lists with empty ones, so that "listed nothing"
// and "not listed" stay distinguishable only through the session evidence,
// never through a missing field.
func Normalize(c *Contract) error {
	if c.Tools == nil {
		c.Tools = []Tool{}
	}
	if c.Prompts == nil {
		c.Prompts = []Prompt{}
	}
	if c.Resources == nil {
		c.Resources = []Resource{}
	}
	if c.Templates == nil {
		c.Templates = []Template{}
	}
	for i := range c.Prompts {
		if c.Prompts[i].Arguments == nil {
			c.Prompts[i].Arguments = []PromptArgument{}
		}
	}
	h, err := Hash(c)
	if err != nil {
		return err
	}
	c.SchemaHash = h
	return nil
}
