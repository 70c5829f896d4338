package clientconfig

import (
	"fmt"
	"strings"

	"github.com/tailscale/hujson"
)

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
				c, err := r.zedCommandObject(s, val, fp)
				if err != nil {
					return nil, err
				}
				if c.hasArgs {
					innerArgs, innerOffs, hasInnerArgs = c.args, c.offs, true
				}
				if c.hasEnv {
					innerEnv, hasInnerEnv = c.env, true
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

// zedCommand is what a Zed context server's command object holds besides
// its path: args and env, with whether each was given.
type zedCommand struct {
	args    []string
	offs    []int // the offset of each of args
	env     []Setting
	hasArgs bool
	hasEnv  bool
}

// zedCommandObject reads the command object {path, args, env} at val (whose
// JSON path is fp) of a Zed context server: the path into s.Command, args
// and env into the zedCommand it returns.
func (r *reader) zedCommandObject(s *Server, val *hujson.Value, fp string) (zedCommand, error) {
	var c zedCommand
	cobj, err := r.object(val, fp, "a string or an object {path, args, env}")
	if err != nil {
		return c, err
	}
	for j := range cobj.Members {
		cm := &cobj.Members[j]
		ck := memberName(*cm)
		cp := fp + "." + ck
		switch ck {
		case "path":
			if s.Command, err = r.str(&cm.Value, cp); err != nil {
				return c, err
			}
		case "args":
			if c.args, c.offs, err = r.strs(&cm.Value, cp); err != nil {
				return c, err
			}
			c.hasArgs = true
		case "env":
			if c.env, err = r.settings(&cm.Value, cp); err != nil {
				return c, err
			}
			c.hasEnv = true
		default:
			r.unknown(cm.Name.StartOffset, cp, "a command field this reader does not know for Zed")
		}
	}
	if strings.TrimSpace(s.Command) == "" {
		return c, r.errAt(val.StartOffset, "%s: the command object has no path", fp)
	}
	return c, nil
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
