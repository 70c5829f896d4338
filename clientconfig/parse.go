package clientconfig

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/tailscale/hujson"
)

// Client ids, as File.Client and Location.Client give them.
const (
	ClientClaudeDesktop = "claude-desktop"
	ClientClaudeCode    = "claude-code"
	ClientCursor        = "cursor"
	ClientVSCode        = "vscode"
	ClientWindsurf      = "windsurf"
	ClientGemini        = "gemini-cli"
	ClientZed           = "zed"
	ClientCline         = "cline"
	// ClientGeneric is a file in the common mcpServers format whose client
	// is not known: only the fields every client shares are understood.
	ClientGeneric = "generic"
)

// clientNames are the clients' names as people say them.
var clientNames = map[string]string{
	ClientClaudeDesktop: "Claude Desktop",
	ClientClaudeCode:    "Claude Code",
	ClientCursor:        "Cursor",
	ClientVSCode:        "VS Code",
	ClientWindsurf:      "Windsurf",
	ClientGemini:        "Gemini CLI",
	ClientZed:           "Zed",
	ClientCline:         "Cline",
	ClientGeneric:       "an MCP client",
}

// ClientName is the name people use for a client id ("" if unknown).
func ClientName(client string) string { return clientNames[client] }

// ParseError is a malformed file: where, and what is wrong. Its Error is
// "path:line:col: message", line and column counted from 1, the column in
// bytes.
type ParseError struct {
	Path string
	Line int
	Col  int
	Msg  string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.Path, e.Line, e.Col, e.Msg)
}

// DetectClient says which client's format a file is, from its path first
// (claude_desktop_config.json, .claude.json, .mcp.json, .cursor/mcp.json,
// .vscode/mcp.json, Code/User/mcp.json, windsurf/mcp_config.json,
// .gemini/settings.json, zed/settings.json, cline_mcp_settings.json), then
// from its top-level keys (servers: vscode; context_servers: zed;
// projects: claude-code; mcpServers with a serverUrl: windsurf; any other
// mcpServers: generic). It returns "" when neither tells.
func DetectClient(p string, data []byte) string {
	slash := strings.ReplaceAll(p, `\`, "/")
	base := path.Base(slash)
	dir := "/" + path.Dir(slash) + "/"
	switch {
	case base == "claude_desktop_config.json":
		return ClientClaudeDesktop
	case base == ".claude.json" || base == ".mcp.json":
		return ClientClaudeCode
	case base == "cline_mcp_settings.json":
		return ClientCline
	case base == "mcp.json" && strings.HasSuffix(dir, "/.cursor/"):
		return ClientCursor
	case base == "mcp.json" && (strings.HasSuffix(dir, "/.vscode/") || strings.HasSuffix(dir, "/User/")):
		return ClientVSCode
	case base == "mcp_config.json" && strings.Contains(dir, "/windsurf"):
		return ClientWindsurf
	case base == "settings.json" && strings.HasSuffix(dir, "/.gemini/"):
		return ClientGemini
	case base == "settings.json" && (strings.HasSuffix(dir, "/zed/") || strings.HasSuffix(dir, "/.zed/")):
		return ClientZed
	}
	v, err := hujson.Parse(blankBOM(data))
	if err != nil {
		return ""
	}
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		return ""
	}
	keys := map[string]*hujson.Value{}
	for i := range obj.Members {
		keys[memberName(obj.Members[i])] = &obj.Members[i].Value
	}
	switch {
	case keys["servers"] != nil:
		return ClientVSCode
	case keys["context_servers"] != nil:
		return ClientZed
	case keys["projects"] != nil:
		return ClientClaudeCode
	case keys["mcpServers"] != nil:
		if servers, ok := keys["mcpServers"].Value.(*hujson.Object); ok {
			for _, m := range servers.Members {
				if s, ok := m.Value.Value.(*hujson.Object); ok {
					for _, f := range s.Members {
						if memberName(f) == "serverUrl" {
							return ClientWindsurf
						}
					}
				}
			}
		}
		return ClientGeneric
	}
	return ""
}

// blankBOM replaces a leading UTF-8 byte order mark by spaces, keeping
// every offset where it was.
func blankBOM(data []byte) []byte {
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		d := append([]byte(nil), data...)
		copy(d, "   ")
		return d
	}
	return data
}

func memberName(m hujson.ObjectMember) string {
	if lit, ok := m.Name.Value.(hujson.Literal); ok {
		return lit.String()
	}
	return ""
}

// ParseFile reads one client configuration file, JSON or JSONC (comments
// and trailing commas), as the format of client (DetectClient's answer
// when client is ""). A malformed file is a *ParseError: bad syntax or
// trailing garbage, a value of the wrong type ("args": "x", mcpServers as
// an array), a server with neither a command nor a URL, a server with
// both, a transport type that is not known. What the reader does not
// understand is listed in File.Unknown, not guessed at.
//
// A settings file that holds more than MCP (claude_desktop_config.json,
// ~/.claude.json, Gemini CLI's and Zed's settings.json) has its other
// top-level keys ignored as not MCP configuration; a file that is only MCP
// configuration (.mcp.json, Cursor, VS Code, Windsurf, Cline, generic)
// has them listed as Unknown.
func ParseFile(p string, data []byte, client string) (*File, error) {
	data = blankBOM(data)
	if client == "" {
		client = DetectClient(p, data)
		if client == "" {
			// A syntax error says more than "not a known client": the
			// keys that name the client could not be read.
			if _, err := hujson.Parse(data); err != nil {
				return nil, (&reader{path: p}).syntaxError(err)
			}
			return nil, &ParseError{Path: p, Line: 1, Col: 1, Msg: "not a known MCP client configuration (no mcpServers, servers or context_servers key) and no client given"}
		}
	}
	if _, ok := clientNames[client]; !ok {
		return nil, fmt.Errorf("%s: unknown client %q", p, client)
	}
	r := &reader{path: p, data: data, client: client, f: &File{Path: p, Client: client, Servers: []Server{}, Inputs: []Input{}, Unknown: []Unknown{}}}
	root, err := hujson.Parse(data)
	if err != nil {
		return nil, r.syntaxError(err)
	}
	if err := r.file(&root); err != nil {
		return nil, err
	}
	return r.f, nil
}

var hujsonErrRe = regexp.MustCompile(`^hujson: line (\d+), column (\d+): (.*)$`)

// syntaxError turns hujson's "hujson: line L, column C: msg" into a
// ParseError.
func (r *reader) syntaxError(err error) error {
	m := hujsonErrRe.FindStringSubmatch(err.Error())
	if m == nil {
		return &ParseError{Path: r.path, Line: 1, Col: 1, Msg: err.Error()}
	}
	line, _ := strconv.Atoi(m[1])
	col, _ := strconv.Atoi(m[2])
	msg := m[3]
	msg = strings.Replace(msg, "after top-level value", "after the top-level value (trailing garbage)", 1)
	return &ParseError{Path: r.path, Line: line, Col: col, Msg: msg}
}

// reader walks one parsed file.
type reader struct {
	path   string
	data   []byte
	client string
	f      *File
}

// lineCol is the 1-based line and byte column of offset.
func (r *reader) lineCol(off int) (int, int) {
	if off > len(r.data) {
		off = len(r.data)
	}
	line := 1 + bytes.Count(r.data[:off], []byte("\n"))
	col := 1 + off - (bytes.LastIndexByte(r.data[:off], '\n') + 1)
	return line, col
}

func (r *reader) line(off int) int {
	l, _ := r.lineCol(off)
	return l
}

func (r *reader) errAt(off int, format string, a ...any) error {
	line, col := r.lineCol(off)
	return &ParseError{Path: r.path, Line: line, Col: col, Msg: fmt.Sprintf(format, a...)}
}

func (r *reader) unknown(off int, jpath, why string) {
	r.f.Unknown = append(r.f.Unknown, Unknown{Line: r.line(off), Path: jpath, Why: why})
}

// kindName says what a JSON value is, for error messages.
func kindName(v *hujson.Value) string {
	switch v.Value.Kind() {
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return "an unknown value"
}

func (r *reader) object(v *hujson.Value, jpath, want string) (*hujson.Object, error) {
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil, r.errAt(v.StartOffset, "%s: want %s, got %s", jpath, want, kindName(v))
	}
	// Duplicate keys: clients differ on which one wins, so the file does
	// not say what runs.
	seen := map[string]bool{}
	for _, m := range obj.Members {
		n := memberName(m)
		if seen[n] {
			return nil, r.errAt(m.Name.StartOffset, "%s: duplicate key %q", jpath, n)
		}
		seen[n] = true
	}
	return obj, nil
}

func (r *reader) str(v *hujson.Value, jpath string) (string, error) {
	lit, ok := v.Value.(hujson.Literal)
	if !ok || lit.Kind() != '"' {
		return "", r.errAt(v.StartOffset, "%s: want a string, got %s", jpath, kindName(v))
	}
	return lit.String(), nil
}

func (r *reader) boolean(v *hujson.Value, jpath string) (bool, error) {
	lit, ok := v.Value.(hujson.Literal)
	if !ok || (lit.Kind() != 't' && lit.Kind() != 'f') {
		return false, r.errAt(v.StartOffset, "%s: want true or false, got %s", jpath, kindName(v))
	}
	return lit.Bool(), nil
}

// strings reads an array of strings with each element's offset.
func (r *reader) strs(v *hujson.Value, jpath string) ([]string, []int, error) {
	arr, ok := v.Value.(*hujson.Array)
	if !ok {
		return nil, nil, r.errAt(v.StartOffset, "%s: want an array of strings, got %s", jpath, kindName(v))
	}
	var out []string
	var offs []int
	for i := range arr.Elements {
		e := &arr.Elements[i]
		s, err := r.str(e, fmt.Sprintf("%s[%d]", jpath, i))
		if err != nil {
			return nil, nil, err
		}
		out = append(out, s)
		offs = append(offs, e.StartOffset)
	}
	return out, offs, nil
}

// settings reads an object of strings (env, headers) as Settings.
func (r *reader) settings(v *hujson.Value, jpath string) ([]Setting, error) {
	obj, err := r.object(v, jpath, "an object of strings")
	if err != nil {
		return nil, err
	}
	var out []Setting
	for i := range obj.Members {
		m := &obj.Members[i]
		key := memberName(*m)
		val, err := r.str(&m.Value, jpath+"."+key)
		if err != nil {
			return nil, err
		}
		out = append(out, newSetting(key, r.line(m.Name.StartOffset), val))
	}
	return out, nil
}

// newSetting classifies a value and keeps it only unexported.
func newSetting(key string, line int, val string) Setting {
	kind, masked := classify(val)
	return Setting{Key: key, Line: line, Kind: kind, Masked: masked, value: val}
}

// isSettingsFile says whether the file holds more than MCP configuration,
// so that its other top-level keys are none of this reader's business.
func (r *reader) isSettingsFile() bool {
	switch r.client {
	case ClientClaudeDesktop, ClientGemini, ClientZed:
		return true
	case ClientClaudeCode:
		return path.Base(strings.ReplaceAll(r.path, `\`, "/")) != ".mcp.json"
	}
	return false
}

func (r *reader) file(root *hujson.Value) error {
	obj, err := r.object(root, "(top level)", "an object")
	if err != nil {
		return err
	}
	serversKey := "mcpServers"
	switch r.client {
	case ClientVSCode:
		serversKey = "servers"
	case ClientZed:
		serversKey = "context_servers"
	}
	for i := range obj.Members {
		m := &obj.Members[i]
		key := memberName(*m)
		switch {
		case key == serversKey:
			if err := r.servers(&m.Value, key, ""); err != nil {
				return err
			}
		case key == "inputs" && r.client == ClientVSCode:
			if err := r.inputs(&m.Value); err != nil {
				return err
			}
		case key == "projects" && r.client == ClientClaudeCode:
			if err := r.projects(&m.Value); err != nil {
				return err
			}
		case r.isSettingsFile():
			// The client's other settings: not MCP configuration.
		default:
			r.unknown(m.Name.StartOffset, key, "a top-level key this reader does not know for "+clientNames[r.client])
		}
	}
	return nil
}

// projects reads ~/.claude.json's projects.<dir>.mcpServers; the other
// per-project keys (allowedTools, history, ...) are Claude Code's state,
// not MCP configuration.
func (r *reader) projects(v *hujson.Value) error {
	obj, err := r.object(v, "projects", "an object of project directories")
	if err != nil {
		return err
	}
	for i := range obj.Members {
		m := &obj.Members[i]
		dir := memberName(*m)
		jp := "projects." + dir
		proj, err := r.object(&m.Value, jp, "an object")
		if err != nil {
			return err
		}
		for j := range proj.Members {
			pm := &proj.Members[j]
			if memberName(*pm) == "mcpServers" {
				if err := r.servers(&pm.Value, jp+".mcpServers", dir); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (r *reader) inputs(v *hujson.Value) error {
	arr, ok := v.Value.(*hujson.Array)
	if !ok {
		return r.errAt(v.StartOffset, "inputs: want an array of inputs, got %s", kindName(v))
	}
	for i := range arr.Elements {
		e := &arr.Elements[i]
		jp := fmt.Sprintf("inputs[%d]", i)
		obj, err := r.object(e, jp, "an object")
		if err != nil {
			return err
		}
		in := Input{Line: r.line(e.StartOffset)}
		for j := range obj.Members {
			m := &obj.Members[j]
			key := memberName(*m)
			switch key {
			case "id":
				if in.ID, err = r.str(&m.Value, jp+".id"); err != nil {
					return err
				}
			case "type":
				if in.Type, err = r.str(&m.Value, jp+".type"); err != nil {
					return err
				}
			case "password":
				if in.Password, err = r.boolean(&m.Value, jp+".password"); err != nil {
					return err
				}
			case "description", "default", "options", "command", "args":
				// Prompt text and choices: nothing this reader decides on.
				// A default is never kept.
			default:
				r.unknown(m.Name.StartOffset, jp+"."+key, "an input field this reader does not know")
			}
		}
		if in.ID == "" {
			return r.errAt(e.StartOffset, "%s: an input with no id", jp)
		}
		r.f.Inputs = append(r.f.Inputs, in)
	}
	return nil
}
