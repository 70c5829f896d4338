package mcpb

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	// The JSON v2 prototype of the Go team (the basis of encoding/json/v2,
	// which Go 1.26 builds only under GOEXPERIMENT=jsonv2): it matches
	// keys by exact name and refuses repeated ones, where encoding/json
	// matches "Server" to server. A client's JSON.parse is exact, so with
	// encoding/json one manifest.json could name one command to us and
	// another to the client.
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Versions are the manifest versions the spec defines
// (src/shared/constants.ts, MANIFEST_SCHEMAS).
var Versions = []string{"0.1", "0.2", "0.3", "0.4"}

// Server types (src/schemas/0.4.ts, McpbManifestServerSchema); uv is
// new in manifest version 0.4.
const (
	TypeNode   = "node"
	TypePython = "python"
	TypeBinary = "binary"
	TypeUV     = "uv"
)

// User configuration option types (McpbUserConfigurationOptionSchema).
const (
	OptionString    = "string"
	OptionNumber    = "number"
	OptionBoolean   = "boolean"
	OptionDirectory = "directory"
	OptionFile      = "file"
)

// ErrManifest is a manifest.json that is not JSON or lacks what the spec
// requires.
var ErrManifest = errors.New("invalid manifest")

// Manifest is a bundle's manifest.json (MANIFEST.md). Fields the spec
// does not know are ignored, as the clients' loose schemas
// (src/schemas_loose) pass them through.
type Manifest struct {
	Schema          string   `json:"$schema,omitempty"`
	ManifestVersion string   `json:"manifest_version,omitempty"`
	DXTVersion      string   `json:"dxt_version,omitempty"` // deprecated spelling of manifest_version
	Name            string   `json:"name"`
	DisplayName     string   `json:"display_name,omitempty"`
	Version         string   `json:"version"`
	Description     string   `json:"description"`
	LongDescription string   `json:"long_description,omitempty"`
	Author          Author   `json:"author"`
	Repository      *Repo    `json:"repository,omitempty"`
	Homepage        string   `json:"homepage,omitempty"`
	Documentation   string   `json:"documentation,omitempty"`
	Support         string   `json:"support,omitempty"`
	Icon            string   `json:"icon,omitempty"`
	Icons           []Icon   `json:"icons,omitempty"`
	Screenshots     []string `json:"screenshots,omitempty"`
	Server          Server   `json:"server"`
	// Tools is nil when the manifest has no tools key, and empty when it
	// declares none: Compare tells the two apart.
	Tools            []Tool                `json:"tools"`
	ToolsGenerated   bool                  `json:"tools_generated,omitempty"`
	Prompts          []Prompt              `json:"prompts"`
	PromptsGenerated bool                  `json:"prompts_generated,omitempty"`
	Keywords         []string              `json:"keywords,omitempty"`
	License          string                `json:"license,omitempty"`
	PrivacyPolicies  []string              `json:"privacy_policies,omitempty"`
	Compatibility    *Compatibility        `json:"compatibility,omitempty"`
	UserConfig       map[string]UserOption `json:"user_config,omitempty"`
}

// Author is the manifest's author; name is required.
type Author struct {
	Name  string `json:"name"`
	Email string `json:"email,omitempty"`
	URL   string `json:"url,omitempty"`
}

// Repo is the manifest's source repository.
type Repo struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

// Icon is one entry of icons (manifest version 0.3 on).
type Icon struct {
	Src   string `json:"src"`
	Size  string `json:"size"`
	Theme string `json:"theme,omitempty"`
}

// Server is how a client runs the bundle's MCP server.
type Server struct {
	Type       string     `json:"type"`
	EntryPoint string     `json:"entry_point"`
	MCPConfig  *MCPConfig `json:"mcp_config,omitempty"`
}

// MCPConfig is the command a client runs, before substitution.
type MCPConfig struct {
	Command           string              `json:"command"`
	Args              []string            `json:"args,omitempty"`
	Env               map[string]string   `json:"env,omitempty"`
	PlatformOverrides map[string]Override `json:"platform_overrides,omitempty"`
}

// Override is a platform's part of an MCPConfig. An absent field keeps the
// base one; a present one replaces it whole, env too
// (src/shared/config.ts, getMcpConfigForManifest). Args and Env are nil
// when absent and non-nil when present but empty, as JavaScript's ||
// keeps an empty array or object.
type Override struct {
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
}

// Tool is a declared tool.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// Prompt is a declared prompt.
type Prompt struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Arguments   []string `json:"arguments,omitempty"`
	Text        string   `json:"text"`
}

// Compatibility is what the bundle says it runs on.
type Compatibility struct {
	ClaudeDesktop string    `json:"claude_desktop,omitempty"`
	Platforms     []string  `json:"platforms,omitempty"`
	Runtimes      *Runtimes `json:"runtimes,omitempty"`
}

// Runtimes are version ranges of the runtimes a bundle needs.
type Runtimes struct {
	Node   string `json:"node,omitempty"`
	Python string `json:"python,omitempty"`
}

// UserOption is one user_config entry: a value the client asks the user
// for and substitutes as ${user_config.KEY}.
type UserOption struct {
	Type        string `json:"type"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Required    bool   `json:"required,omitempty"`
	// Default is a string, number, boolean or array of strings, as written.
	Default   jsontext.Value `json:"default,omitempty"`
	Multiple  bool           `json:"multiple,omitempty"`
	Sensitive bool           `json:"sensitive,omitempty"`
	Min       *float64       `json:"min,omitempty"`
	Max       *float64       `json:"max,omitempty"`
}

// Defaults is the option's default as the values a client substitutes
// (booleans as "true" and "false", numbers as JavaScript's String writes
// them), and whether it is a list (an array default), which args expand
// (src/shared/config.ts). ok is false without a usable default.
func (o UserOption) Defaults() (values []string, list, ok bool) {
	if len(o.Default) == 0 {
		return nil, false, false
	}
	var v any
	if json.Unmarshal(o.Default, &v) != nil {
		return nil, false, false
	}
	switch d := v.(type) {
	case string:
		return []string{d}, false, true
	case bool:
		return []string{strconv.FormatBool(d)}, false, true
	case float64:
		return []string{strconv.FormatFloat(d, 'f', -1, 64)}, false, true
	case []any:
		out := make([]string, 0, len(d))
		for _, e := range d {
			s, isString := e.(string)
			if !isString {
				return nil, false, false
			}
			out = append(out, s)
		}
		return out, true, true
	}
	return nil, false, false
}

// Spec is the manifest version: manifest_version, else the deprecated
// dxt_version (src/shared/manifestVersionResolve.ts).
func (m *Manifest) Spec() string {
	if m.ManifestVersion != "" {
		return m.ManifestVersion
	}
	return m.DXTVersion
}

// ParseManifest reads a manifest.json, its keys matched by exact name and
// none repeated, and checks what every manifest
// version's schema requires: a known manifest_version (or dxt_version),
// name, version, description, author.name, server.type (uv only from 0.4),
// server.entry_point, mcp_config.command when mcp_config is given, and
// each tool's and prompt's name and each user option's type. mcp_config
// itself may be absent, as the clients' loose schemas allow
// (src/schemas_loose/0.4.ts); Command then runs the server type's default.
func ParseManifest(data []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrManifest, err)
	}
	if err := m.validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrManifest, err)
	}
	return &m, nil
}

func (m *Manifest) validate() error {
	v := m.Spec()
	switch {
	case v == "":
		return errors.New("manifest_version: missing (nor dxt_version)")
	case !slices.Contains(Versions, v):
		return fmt.Errorf("manifest_version: %q is not one of %v", v, Versions)
	case m.ManifestVersion != "" && m.DXTVersion != "" && m.ManifestVersion != m.DXTVersion:
		return fmt.Errorf("dxt_version: %q differs from manifest_version %q", m.DXTVersion, m.ManifestVersion)
	case m.Name == "":
		return errors.New("name: missing")
	case m.Version == "":
		return errors.New("version: missing")
	case m.Description == "":
		return errors.New("description: missing")
	case m.Author.Name == "":
		return errors.New("author.name: missing")
	case m.Server.EntryPoint == "":
		return errors.New("server.entry_point: missing")
	case m.Server.MCPConfig != nil && m.Server.MCPConfig.Command == "":
		return errors.New("server.mcp_config.command: missing")
	}
	switch m.Server.Type {
	case TypeNode, TypePython, TypeBinary:
	case TypeUV:
		if v < "0.4" {
			return fmt.Errorf("server.type: uv needs manifest_version 0.4, not %s", v)
		}
	case "":
		return errors.New("server.type: missing")
	default:
		return fmt.Errorf("server.type: %q is not node, python, binary or uv", m.Server.Type)
	}
	for i, t := range m.Tools {
		if t.Name == "" {
			return fmt.Errorf("tools[%d].name: missing", i)
		}
	}
	for i, p := range m.Prompts {
		if p.Name == "" {
			return fmt.Errorf("prompts[%d].name: missing", i)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m.UserConfig)) {
		switch o := m.UserConfig[k]; o.Type {
		case OptionString, OptionNumber, OptionBoolean, OptionDirectory, OptionFile:
		default:
			return fmt.Errorf("user_config.%s.type: %q is not string, number, boolean, directory or file", k, o.Type)
		}
	}
	return nil
}
