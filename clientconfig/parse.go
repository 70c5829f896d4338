package clientconfig

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"sort"
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

func (r *reader) servers(v *hujson.Value, jpath, project string) error {
	obj, err := r.object(v, jpath, "an object of servers by name")
	if err != nil {
		return err
	}
	for i := range obj.Members {
		m := &obj.Members[i]
		name := memberName(*m)
		var s *Server
		if r.client == ClientZed {
			s, err = r.zedServer(m, jpath+"."+name)
		} else {
			s, err = r.server(m, jpath+"."+name)
		}
		if err != nil {
			return err
		}
		s.Project = project
		r.f.Servers = append(r.f.Servers, *s)
	}
	return nil
}

// clientFields are the server fields each client has beyond the shared
// ones (command, args, env, cwd, url, type, headers, disabled): understood
// and kept in Server.Extra, or (when marked) read as the URL or the type.
var clientFields = map[string][]string{
	ClientClaudeDesktop: {},
	ClientClaudeCode:    {},
	ClientCursor:        {"envFile"},
	ClientVSCode:        {"envFile", "dev", "gallery", "version"},
	ClientWindsurf:      {"serverUrl", "disabledTools"},
	ClientGemini:        {"httpUrl", "timeout", "trust", "description", "includeTools", "excludeTools", "extensionName", "authProviderType"},
	ClientCline:         {"autoApprove", "alwaysAllow", "timeout", "transportType"},
	ClientGeneric:       {},
}

func knownField(client, key string) bool {
	for _, k := range clientFields[client] {
		if k == key {
			return true
		}
	}
	return false
}

// server reads one server of the mcpServers family (and VS Code's
// servers).
func (r *reader) server(m *hujson.ObjectMember, jp string) (*Server, error) {
	name := memberName(*m)
	obj, err := r.object(&m.Value, jp, "an object")
	if err != nil {
		return nil, err
	}
	s := &Server{Name: name, Line: r.line(m.Name.StartOffset), Extra: map[string]string{}}
	var typ, typKey string
	var urlKey string
	var urlOff, typOff int
	hasCommand := false
	var argVals []string
	var argOffs []int
	for i := range obj.Members {
		f := &obj.Members[i]
		key := memberName(*f)
		fp := jp + "." + key
		val := &f.Value
		switch key {
		case "command":
			if s.Command, err = r.str(val, fp); err != nil {
				return nil, err
			}
			hasCommand = true
			if strings.TrimSpace(s.Command) == "" {
				return nil, r.errAt(val.StartOffset, "%s: the command is empty", fp)
			}
		case "args":
			if argVals, argOffs, err = r.strs(val, fp); err != nil {
				return nil, err
			}
		case "env":
			if s.Env, err = r.settings(val, fp); err != nil {
				return nil, err
			}
		case "headers":
			if s.Headers, err = r.settings(val, fp); err != nil {
				return nil, err
			}
		case "cwd":
			if s.Cwd, err = r.str(val, fp); err != nil {
				return nil, err
			}
		case "disabled":
			if s.Disabled, err = r.boolean(val, fp); err != nil {
				return nil, err
			}
		case "url", "serverUrl", "httpUrl":
			if key != "url" && !knownField(r.client, key) {
				r.unknown(f.Name.StartOffset, fp, "a server field this reader does not know for "+clientNames[r.client])
				continue
			}
			if urlKey != "" {
				return nil, r.errAt(f.Name.StartOffset, "%s: server %q has both %s and %s", jp, name, urlKey, key)
			}
			if s.rawURL, err = r.str(val, fp); err != nil {
				return nil, err
			}
			urlKey, urlOff = key, f.Name.StartOffset
		case "type", "transportType":
			if key == "transportType" && !knownField(r.client, key) {
				r.unknown(f.Name.StartOffset, fp, "a server field this reader does not know for "+clientNames[r.client])
				continue
			}
			t, err := r.str(val, fp)
			if err != nil {
				return nil, err
			}
			if typKey == "" || key == "type" {
				typ, typKey, typOff = t, key, val.StartOffset
			}
		case "oauth":
			r.unknown(f.Name.StartOffset, fp, "OAuth settings are not read: a client secret there is not checked")
		default:
			if knownField(r.client, key) {
				s.Extra[key] = string(bytes.TrimSpace(r.data[val.StartOffset:val.EndOffset]))
				continue
			}
			r.unknown(f.Name.StartOffset, fp, "a server field this reader does not know for "+clientNames[r.client])
		}
	}
	s.urlLine = r.line(urlOff)
	if err := r.transport(s, jp, hasCommand, urlKey, urlOff, typ, typKey, typOff, m.Name.StartOffset); err != nil {
		return nil, err
	}
	if s.Transport != TransportStdio && len(argVals) > 0 {
		r.unknown(argOffs[0], jp+".args", "args on a URL server: no client passes them")
	}
	r.setArgs(s, argVals, argOffs, jp)
	r.checkURL(s, jp)
	return s, nil
}

// transport decides the server's transport from command, the URL field and
// the type.
func (r *reader) transport(s *Server, jp string, hasCommand bool, urlKey string, urlOff int, typ, typKey string, typOff, nameOff int) error {
	switch {
	case hasCommand && urlKey != "":
		return r.errAt(urlOff, "%s: server %q has both a command and %s: which one the client uses is not known", jp, s.Name, urlKey)
	case hasCommand:
		if typ != "" && typ != "stdio" {
			return r.errAt(typOff, "%s.%s: %q with a command (want \"stdio\")", jp, typKey, typ)
		}
		s.Transport = TransportStdio
	case urlKey != "":
		switch typ {
		case "http", "streamable-http", "streamableHttp", "streamable_http":
			s.Transport = TransportHTTP
		case "sse":
			s.Transport = TransportSSE
		case "":
			// No type: Gemini CLI's url is SSE and its httpUrl streamable
			// HTTP; Cline reads a bare url as SSE; Cursor, Windsurf, VS
			// Code and Claude Code try streamable HTTP first.
			switch {
			case r.client == ClientGemini && urlKey == "url", r.client == ClientCline:
				s.Transport = TransportSSE
			default:
				s.Transport = TransportHTTP
			}
		case "stdio":
			return r.errAt(typOff, "%s.%s: \"stdio\" with no command", jp, typKey)
		default:
			return r.errAt(typOff, "%s.%s: transport type %q is not known (want \"http\", \"streamable-http\" or \"sse\")", jp, typKey, typ)
		}
		s.URL = s.rawURL
	default:
		return r.errAt(nameOff, "%s: server %q has neither a command nor a url", jp, s.Name)
	}
	return nil
}

// zedServer reads one of Zed's context_servers: a command string with
// args and env beside it, or a command object {path, args, env}; or a url
// with headers; or an extension's server, which has only source
// "extension" and/or settings.
func (r *reader) zedServer(m *hujson.ObjectMember, jp string) (*Server, error) {
	name := memberName(*m)
	obj, err := r.object(&m.Value, jp, "an object")
	if err != nil {
		return nil, err
	}
	s := &Server{Name: name, Line: r.line(m.Name.StartOffset), Extra: map[string]string{}}
	var argVals, innerArgs []string
	var argOffs, innerOffs []int
	var innerEnv []Setting
	hasCommand, hasURL, hasSettings, hasInnerArgs, hasInnerEnv := false, false, false, false, false
	hasOuterArgs, hasOuterEnv := false, false
	var source string
	var argsOff, envOff, urlOff int
	for i := range obj.Members {
		f := &obj.Members[i]
		key := memberName(*f)
		fp := jp + "." + key
		val := &f.Value
		switch key {
		case "command":
			hasCommand = true
			if _, isObj := val.Value.(*hujson.Object); isObj {
				cobj, err := r.object(val, fp, "a string or an object {path, args, env}")
				if err != nil {
					return nil, err
				}
				for j := range cobj.Members {
					cm := &cobj.Members[j]
					ck := memberName(*cm)
					cp := fp + "." + ck
					switch ck {
					case "path":
						if s.Command, err = r.str(&cm.Value, cp); err != nil {
							return nil, err
						}
					case "args":
						if innerArgs, innerOffs, err = r.strs(&cm.Value, cp); err != nil {
							return nil, err
						}
						hasInnerArgs = true
					case "env":
						if innerEnv, err = r.settings(&cm.Value, cp); err != nil {
							return nil, err
						}
						hasInnerEnv = true
					default:
						r.unknown(cm.Name.StartOffset, cp, "a command field this reader does not know for Zed")
					}
				}
				if strings.TrimSpace(s.Command) == "" {
					return nil, r.errAt(val.StartOffset, "%s: the command object has no path", fp)
				}
				continue
			}
			if s.Command, err = r.str(val, fp); err != nil {
				return nil, r.errAt(val.StartOffset, "%s: want a string or an object {path, args, env}, got %s", fp, kindName(val))
			}
			if strings.TrimSpace(s.Command) == "" {
				return nil, r.errAt(val.StartOffset, "%s: the command is empty", fp)
			}
		case "args":
			if argVals, argOffs, err = r.strs(val, fp); err != nil {
				return nil, err
			}
			hasOuterArgs, argsOff = true, f.Name.StartOffset
		case "env":
			if s.Env, err = r.settings(val, fp); err != nil {
				return nil, err
			}
			hasOuterEnv, envOff = true, f.Name.StartOffset
		case "url":
			if s.rawURL, err = r.str(val, fp); err != nil {
				return nil, err
			}
			hasURL, urlOff = true, f.Name.StartOffset
		case "headers":
			if s.Headers, err = r.settings(val, fp); err != nil {
				return nil, err
			}
		case "source":
			if source, err = r.str(val, fp); err != nil {
				return nil, err
			}
			if source != "custom" && source != "extension" {
				r.unknown(val.StartOffset, fp, fmt.Sprintf("source %q is not known", source))
			}
		case "settings":
			if _, err := r.object(val, fp, "an object"); err != nil {
				return nil, err
			}
			hasSettings = true
			r.zedSettings(s, val, "settings")
		case "enabled":
			enabled, err := r.boolean(val, fp)
			if err != nil {
				return nil, err
			}
			s.Disabled = !enabled
		default:
			r.unknown(f.Name.StartOffset, fp, "a context server field this reader does not know for Zed")
		}
	}
	if hasInnerArgs {
		if hasOuterArgs {
			return nil, r.errAt(argsOff, "%s: args both in the command object and beside it", jp)
		}
		argVals, argOffs = innerArgs, innerOffs
	}
	if hasInnerEnv {
		if hasOuterEnv {
			return nil, r.errAt(envOff, "%s: env both in the command object and beside it", jp)
		}
		s.Env = innerEnv
	}
	s.urlLine = r.line(urlOff)
	switch {
	case hasCommand && hasURL:
		return nil, r.errAt(urlOff, "%s: server %q has both a command and url: which one Zed uses is not known", jp, name)
	case hasCommand:
		s.Transport = TransportStdio
	case hasURL:
		s.Transport = TransportHTTP
		s.URL = s.rawURL
	case source == "extension" || hasSettings:
		s.Transport = TransportExtension
	default:
		return nil, r.errAt(m.Name.StartOffset, "%s: server %q has neither a command nor a url", jp, name)
	}
	r.setArgs(s, argVals, argOffs, jp)
	r.checkURL(s, jp)
	return s, nil
}

// zedSettings collects the string leaves of a Zed server's settings.
func (r *reader) zedSettings(s *Server, v *hujson.Value, jp string) {
	switch t := v.Value.(type) {
	case *hujson.Object:
		for i := range t.Members {
			m := &t.Members[i]
			key := jp + "." + memberName(*m)
			if lit, ok := m.Value.Value.(hujson.Literal); ok {
				if lit.Kind() == '"' {
					s.Settings = append(s.Settings, newSetting(key, r.line(m.Name.StartOffset), lit.String()))
				}
				continue
			}
			r.zedSettings(s, &m.Value, key)
		}
	case *hujson.Array:
		for i := range t.Elements {
			e := &t.Elements[i]
			key := fmt.Sprintf("%s[%d]", jp, i)
			if lit, ok := e.Value.(hujson.Literal); ok {
				if lit.Kind() == '"' {
					s.Settings = append(s.Settings, newSetting(key, r.line(e.StartOffset), lit.String()))
				}
				continue
			}
			r.zedSettings(s, e, key)
		}
	}
}

// setArgs records the arguments with what each holds, and the masked form
// outputs show.
func (r *reader) setArgs(s *Server, vals []string, offs []int, jp string) {
	s.args = readArgs(vals)
	for i := range s.args {
		s.args[i].line = r.line(offs[i])
	}
	s.Args = nil
	for _, a := range s.args {
		s.Args = append(s.Args, a.masked)
	}
	if s.Transport == TransportStdio {
		if l := readLaunch(s); l != nil && l.unknown != "" {
			line := s.Line
			if len(s.args) > 0 {
				line = s.args[0].line
			}
			r.f.Unknown = append(r.f.Unknown, Unknown{Line: line, Path: jp + ".args", Why: l.unknown})
		}
	}
	if s.Command != "" {
		if shape := valueShape(s.Command); shape != "" {
			s.Command = literalMask(s.Command)
		}
	}
}

// checkURL masks credentials in the URL and lists a URL whose host cannot
// be told (a reference, no host, a scheme that is not http or https).
func (r *reader) checkURL(s *Server, jp string) {
	if s.rawURL == "" {
		if s.Transport == TransportHTTP || s.Transport == TransportSSE {
			r.f.Unknown = append(r.f.Unknown, Unknown{Line: s.urlLine, Path: jp + ".url", Why: "an empty url"})
		}
		return
	}
	s.URL = maskURL(s.rawURL)
	if _, ok := urlHost(s.rawURL); !ok {
		r.f.Unknown = append(r.f.Unknown, Unknown{Line: s.urlLine, Path: jp + ".url", Why: "a URL whose host cannot be told (not http or https, or a reference): its reach is not assessed"})
	}
}

// sortedEnvNames are the server's environment keys, sorted.
func sortedEnvNames(s *Server) []string {
	out := []string{}
	for _, e := range s.Env {
		out = append(out, e.Key)
	}
	sort.Strings(out)
	return out
}
