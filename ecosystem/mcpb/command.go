package mcpb

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
)

// The sandbox's stand-ins for the user directories a client substitutes
// for ${HOME}, ${DESKTOP}, ${DOCUMENTS} and ${DOWNLOADS} (MANIFEST.md,
// Variable Substitution).
const (
	Home      = "/home/sandbox"
	Desktop   = Home + "/Desktop"
	Documents = Home + "/Documents"
	Downloads = Home + "/Downloads"
)

// ErrMissingConfig is a required user_config option without a value: a
// client then does not start the server (src/shared/config.ts,
// hasRequiredConfigMissing).
var ErrMissingConfig = errors.New("required user configuration missing")

// UnresolvedError names the ${...} variables Command left as written: no
// such variable, or a list in a place that takes one string. A client
// leaves them as written too (replaceVariables), so Command returns the
// command along with this error.
type UnresolvedError struct{ Vars []string }

func (e *UnresolvedError) Error() string {
	return "unresolved variables: ${" + strings.Join(e.Vars, "}, ${") + "}"
}

// Command is the command and environment a client runs for the bundle
// unpacked at dir on platform (linux, darwin, win32), following
// src/shared/config.ts: mcp_config with the platform's override, its
// variables substituted once, left to right (a substituted value is not
// read again). values are the user_config values by key, a key's default
// where values has none; an argument that is exactly ${user_config.KEY}
// of a list (a multiple option, an array default, or other than one
// value) becomes one argument per value. Without mcp_config, the server
// type's default (defaultConfig) is run.
//
// A required option without a value is ErrMissingConfig. Variables left
// as written are an *UnresolvedError returned with cmd and env.
func (m *Manifest) Command(dir string, values map[string][]string, platform string) (cmd []string, env map[string]string, err error) {
	c := m.config(platform)
	if missing := m.missing(values); len(missing) > 0 {
		return nil, nil, fmt.Errorf("%w: %s", ErrMissingConfig, strings.Join(missing, ", "))
	}
	s := &substitution{vars: systemVars(dir, platform), lists: map[string][]string{}}
	keys := slices.Collect(maps.Keys(m.UserConfig))
	for k := range values {
		if _, declared := m.UserConfig[k]; !declared {
			keys = append(keys, k) // a client substitutes these too.
		}
	}
	for _, k := range keys {
		o := m.UserConfig[k]
		vs, ok := values[k]
		list := o.Multiple || len(vs) != 1
		if !ok {
			var isList bool
			if vs, isList, ok = o.Defaults(); !ok {
				continue
			}
			vs, list = s.all(vs), isList // as JavaScript's Array.isArray on the default.
		}
		if list {
			s.lists["user_config."+k] = vs
		} else {
			s.vars["user_config."+k] = vs[0]
		}
	}
	cmd = append(cmd, s.one(c.Command))
	for _, a := range c.Args {
		cmd = append(cmd, s.arg(a)...)
	}
	if c.Env != nil {
		env = make(map[string]string, len(c.Env))
		for k, v := range c.Env {
			env[k] = s.one(v)
		}
	}
	if len(s.unresolved) > 0 {
		return cmd, env, &UnresolvedError{Vars: slices.Sorted(maps.Keys(s.unresolved))}
	}
	return cmd, env, nil
}

// config is mcp_config, or the server type's default, with platform's
// override applied: each field the override has replaces the base one.
func (m *Manifest) config(platform string) MCPConfig {
	if m.Server.MCPConfig == nil {
		return defaultConfig(m.Server)
	}
	c := *m.Server.MCPConfig
	if o, ok := c.PlatformOverrides[platform]; ok {
		if o.Command != "" {
			c.Command = o.Command
		}
		if o.Args != nil {
			c.Args = o.Args
		}
		if o.Env != nil {
			c.Env = o.Env
		}
	}
	return c
}

// defaultConfig is the command for a server without mcp_config. The spec
// names none: only uv may leave mcp_config out ("host manages execution",
// MANIFEST.md, UV Runtime), and its example runs "uv run src/server.py" in
// the bundle's directory. For the other types the spec's own examples are
// followed (node and python run the entry point under ${__dirname}; a
// binary is the entry point), python as python3, the name Linux
// distributions give it.
func defaultConfig(s Server) MCPConfig {
	entry := "${__dirname}/" + s.EntryPoint
	switch s.Type {
	case TypeNode:
		return MCPConfig{Command: "node", Args: []string{entry}}
	case TypePython:
		return MCPConfig{Command: "python3", Args: []string{entry}}
	case TypeUV:
		return MCPConfig{Command: "uv", Args: []string{"run", "--directory", "${__dirname}", s.EntryPoint}}
	default:
		return MCPConfig{Command: entry}
	}
}

// missing are the required options without a value, or with an empty one,
// in values or as a default, sorted.
func (m *Manifest) missing(values map[string][]string) []string {
	var out []string
	for k, o := range m.UserConfig {
		if !o.Required {
			continue
		}
		vs, ok := values[k]
		if !ok {
			vs, _, _ = o.Defaults()
		}
		if len(vs) == 0 || slices.Contains(vs, "") {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// systemVars are the variables a client sets besides user_config's.
func systemVars(dir, platform string) map[string]string {
	sep := "/"
	if platform == "win32" {
		sep = `\`
	}
	return map[string]string{
		"__dirname": dir, "pathSeparator": sep, "/": sep,
		"HOME": Home, "DESKTOP": Desktop, "DOCUMENTS": Documents, "DOWNLOADS": Downloads,
	}
}

// substitution replaces ${NAME} by vars[NAME]; lists are the values that
// expand into several arguments, and unresolved collects the names left
// as written.
type substitution struct {
	vars       map[string]string
	lists      map[string][]string
	unresolved map[string]bool
}

// arg is one argument, expanded to a list's values when it is exactly a
// list variable.
func (s *substitution) arg(a string) []string {
	if name, ok := strings.CutPrefix(a, "${"); ok && strings.HasSuffix(name, "}") && strings.Count(a, "${") == 1 {
		if vs, isList := s.lists[strings.TrimSuffix(name, "}")]; isList {
			return slices.Clone(vs)
		}
	}
	return []string{s.one(a)}
}

// one substitutes the variables of a string, left to right.
func (s *substitution) one(in string) string {
	var b strings.Builder
	for {
		i := strings.Index(in, "${")
		if i < 0 {
			break
		}
		j := strings.IndexByte(in[i+2:], '}')
		if j <= 0 {
			// "${}" or no closing brace: not a variable.
			b.WriteString(in[:i+2])
			in = in[i+2:]
			continue
		}
		name := in[i+2 : i+2+j]
		b.WriteString(in[:i])
		if v, ok := s.vars[name]; ok {
			b.WriteString(v)
		} else {
			if s.unresolved == nil {
				s.unresolved = map[string]bool{}
			}
			s.unresolved[name] = true
			b.WriteString(in[i : i+3+j])
		}
		in = in[i+3+j:]
	}
	b.WriteString(in)
	return b.String()
}

// all substitutes each of vs.
func (s *substitution) all(vs []string) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = s.one(v)
	}
	return out
}

// Placeholders are a value for every user_config option, for running a
// bundle without a user: the default where there is one (its variables
// substituted) and it is not empty for a required option, else by type a string "placeholder-KEY", a sensitive
// string a fresh fake credential "mcpb-KEY-<16 hex>", a number min or 1, a
// boolean false, a directory scratch and a file scratch/notes.txt.
// sensitive are the sensitive options' keys, sorted: their values are to
// be masked wherever they show.
func Placeholders(m *Manifest, scratch string) (values map[string][]string, sensitive []string) {
	s := &substitution{vars: systemVars("", "linux")}
	values = make(map[string][]string, len(m.UserConfig))
	for k, o := range m.UserConfig {
		if o.Sensitive {
			sensitive = append(sensitive, k)
		}
		// A required option's empty default is no value (hasRequiredConfigMissing).
		if vs, _, ok := o.Defaults(); ok && (!o.Required || len(vs) > 0 && !slices.Contains(vs, "")) {
			values[k] = s.all(vs)
			continue
		}
		values[k] = []string{placeholder(k, o, scratch)}
	}
	slices.Sort(sensitive)
	return values, sensitive
}

func placeholder(key string, o UserOption, scratch string) string {
	switch o.Type {
	case OptionNumber:
		switch {
		case o.Min != nil:
			return strconv.FormatFloat(*o.Min, 'f', -1, 64)
		case o.Max != nil && *o.Max < 1:
			return strconv.FormatFloat(*o.Max, 'f', -1, 64)
		}
		return "1"
	case OptionBoolean:
		return "false"
	case OptionDirectory:
		return scratch
	case OptionFile:
		return path.Join(scratch, "notes.txt")
	}
	if o.Sensitive {
		return "mcpb-" + key + "-" + token()
	}
	return "placeholder-" + key
}

// token is 16 random hex digits: a fake credential that differs on every
// call, so a leak of one is told apart from any other.
func token() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+).
	return hex.EncodeToString(b[:])
}
