package clientconfig

import (
	"bytes"
	"sort"
	"strings"

	"github.com/tailscale/hujson"
)

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
