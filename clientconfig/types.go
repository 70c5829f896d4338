// Package clientconfig reads the MCP client configuration files people
// have (Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, Gemini CLI,
// Zed and others), finds what the file alone can prove about each server
// it names (one-sided cfg. findings: real when present, their absence
// proving nothing), and maps each stdio server whose command fetches a
// package to the exact target a scan takes. It never starts a server and
// never keeps, prints or returns a secret value it read.
package clientconfig

// Location is a place a client keeps its configuration.
type Location struct {
	// Client is the client's id ("claude-desktop", "cursor", ...) and
	// ClientName its name as people say it.
	Client     string `json:"client"`
	ClientName string `json:"client_name"`
	Path       string `json:"path"`
	// Scope is "user" or "project".
	Scope string `json:"scope"`
	// Found says whether the file exists.
	Found bool `json:"found"`
	// Also lists the other known locations that are this same file (run
	// from the home directory, ~/.cursor/mcp.json is Cursor's user file
	// and its project file too): the file is listed and read once.
	Also []Role `json:"also,omitempty"`
}

// Role is a known location that resolved to a file listed under another
// location.
type Role struct {
	Client     string `json:"client"`
	ClientName string `json:"client_name"`
	Path       string `json:"path"`
	Scope      string `json:"scope"`
}

// File is one configuration file, parsed.
type File struct {
	Path string `json:"path"`
	// Client is the client whose format the file was read as.
	Client string `json:"client"`
	// Servers are the servers the file names, in file order.
	Servers []Server `json:"servers"`
	// Inputs are VS Code's declared inputs (id and whether they are
	// passwords); their values are never in the file.
	Inputs []Input `json:"inputs"`
	// Unknown lists what the file holds that this reader does not
	// understand, reported rather than guessed.
	Unknown []Unknown `json:"unknown"`
}

// Input is a VS Code input (${input:ID}).
type Input struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Password bool   `json:"password"`
	Line     int    `json:"line"`
}

// Unknown is a part of a file this reader did not understand.
type Unknown struct {
	Line int    `json:"line"`
	Path string `json:"path"` // JSON path, e.g. mcpServers.foo.transport
	Why  string `json:"why"`
}

// Transport kinds of a server.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http" // streamable HTTP
	TransportSSE   = "sse"
	// TransportExtension is a Zed context server that an editor extension
	// provides: its command is in the extension, not in the file.
	TransportExtension = "extension"
	// TransportBundle is an MCP bundle a client installed unpacked
	// (Claude Desktop's extensions, see ReadExtensions): its command is
	// in the bundle's manifest.json, and the bundle is the scan target.
	TransportBundle = "bundle"
)

// Server is one server of a file. Values of its environment and headers
// are held only to classify them (Value never leaves this package: it is
// not serialised, and every output shows a Masked form).
type Server struct {
	Name string `json:"name"`
	// Project is the project directory of a Claude Code server kept under
	// projects.<dir>.mcpServers in ~/.claude.json; empty for the others.
	Project   string `json:"project,omitempty"`
	Line      int    `json:"line"`
	Transport string `json:"transport"`
	Command   string `json:"command,omitempty"`
	// Args are the arguments as any output may show them: an argument
	// that holds a credential is replaced by its masked form.
	Args []string `json:"args,omitempty"`
	Cwd  string   `json:"cwd,omitempty"`
	// URL is the server's URL with any password or credential-named
	// query value masked.
	URL     string    `json:"url,omitempty"`
	Env     []Setting `json:"env,omitempty"`
	Headers []Setting `json:"headers,omitempty"`
	// Settings are the string values of a Zed context server's
	// "settings" object (passed to the extension), keyed by their path
	// under it ("settings.github_personal_access_token").
	Settings []Setting `json:"settings,omitempty"`
	Disabled bool      `json:"disabled,omitempty"`
	// Extra holds, as raw JSON, the fields this reader knows for the
	// client but does not model (autoApprove, timeout, envFile, ...).
	Extra map[string]string `json:"-"`

	// args are the arguments as written, with their lines and what the
	// reader made of each; rawURL is the URL as written. Neither leaves
	// the package.
	args    []arg
	rawURL  string
	urlLine int
	// bundle is the installed bundle a TransportBundle server is.
	bundle *bundleRef
}

// Setting is one environment variable or header of a server.
type Setting struct {
	Key  string `json:"key"`
	Line int    `json:"line"`
	// Kind is "literal", "env_reference" (${VAR}, $VAR, ${env:VAR}),
	// "input_reference" (${input:id}) or "empty".
	Kind string `json:"kind"`
	// Masked is what any output may show of the value: never the value.
	Masked string `json:"masked"`
	// value is the value as written, for classification only.
	value string
}

// Finding is one cfg. finding: a claim the file alone proves.
type Finding struct {
	Code   string `json:"code"`
	File   string `json:"file"`
	Line   int    `json:"line"`
	Server string `json:"server"`
	// Key names the setting or argument the finding is about, if any.
	Key string `json:"key,omitempty"`
	// Evidence quotes what proves it, secrets masked.
	Evidence string `json:"evidence"`
	Message  string `json:"message"`
}

// Target is what a stdio server's command fetches and runs, when it is a
// package: the scan target (npm:NAME@SPEC), the spec as the client would
// resolve it at launch, the server arguments and the names of its
// environment. NotScanned says why a server is not a package target.
type Target struct {
	Server    string `json:"server"`
	File      string `json:"file"`
	Line      int    `json:"line"`
	Target    string `json:"target,omitempty"`
	Ecosystem string `json:"ecosystem,omitempty"`
	Name      string `json:"name,omitempty"`
	Spec      string `json:"spec,omitempty"`
	Pinned    bool   `json:"pinned"`
	// Bin is the command the file runs from the package when it names
	// one (npx -p PKG BIN, uvx --from PKG CMD); "" lets the scan's rule
	// pick it, as the launcher does (the bin named like the package).
	Bin string `json:"bin,omitempty"`
	// Args are the server's arguments as the scan passes them: masked,
	// with each client variable replaced by its sandbox stand-in.
	Args []string `json:"args"`
	// Substituted says which variables of Args were replaced, and by
	// what: "args[1] ${workspaceFolder} -> /tmp (...)".
	Substituted []string `json:"substituted,omitempty"`
	EnvNames    []string `json:"env_names"`
	NotScanned  string   `json:"not_scanned,omitempty"`
	// Disabled says the server is disabled in the file.
	Disabled bool `json:"disabled,omitempty"`
}
