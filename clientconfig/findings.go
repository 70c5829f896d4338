package clientconfig

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/verifymcp/verifymcp/internal/hostport"
)

// The cfg. codes: one-sided claims the file alone proves. Their absence
// proves nothing.
const (
	// CodeCredentialLiteral: a credential written in the file as a value
	// (env, headers, Zed settings, an argument, a URL's password or query).
	CodeCredentialLiteral = "cfg.credential.literal"
	// CodeCredentialReference: a credential-named setting given by
	// reference (${VAR}, $VAR, ${env:VAR}, ${input:id}): no value in the
	// file.
	CodeCredentialReference = "cfg.credential.reference"
	// CodeLaunchUnpinned: the command fetches a package or image that is
	// resolved again from a public registry at every start.
	CodeLaunchUnpinned = "cfg.launch.unpinned"
	// CodeLaunchPinned: the same launchers with an exact version or digest.
	CodeLaunchPinned = "cfg.launch.pinned"
	// CodeReachLocalProcess: a stdio server, a process on this machine.
	CodeReachLocalProcess = "cfg.reach.local_process"
	// CodeReachLoopback: a URL server on 127.0.0.0/8, ::1 or localhost.
	CodeReachLoopback = "cfg.reach.loopback"
	// CodeReachRemote: a URL server on any other host.
	CodeReachRemote = "cfg.reach.remote"
	// CodeFilesystemBroad: a path argument that is the filesystem root,
	// a drive root or a whole home directory.
	CodeFilesystemBroad = "cfg.filesystem.broad"
	// CodeTransportPlaintext: an http:// URL to a host that is not
	// loopback.
	CodeTransportPlaintext = "cfg.transport.plaintext"
)

// Findings are the cfg. findings of a file, server by server in file
// order: reach, launch, credentials (env, headers, settings, args, URL),
// broad filesystem paths, plaintext transport. A disabled server gets its
// findings too (its credentials are still in the file), each message
// saying it is disabled.
func Findings(f *File) []Finding {
	out := []Finding{}
	for i := range f.Servers {
		s := &f.Servers[i]
		add := func(code string, line int, key, evidence, msg string) {
			if s.Disabled {
				msg += " The server is disabled (disabled: true), but it is still in the file and one edit from running."
			}
			if line == 0 {
				line = s.Line
			}
			out = append(out, Finding{Code: code, File: f.Path, Line: line, Server: s.Name, Key: key, Evidence: evidence, Message: msg})
		}
		reachFindings(s, add)
		launchFindings(s, add)
		credentialFindings(s, add)
		filesystemFindings(s, add)
		if host, ok := urlHost(s.rawURL); ok && strings.HasPrefix(strings.ToLower(s.rawURL), "http://") && !hostport.Loopback(host) {
			add(CodeTransportPlaintext, s.urlLine, "url", "url: "+s.URL,
				"the server is reached over plain http:// on a host that is not loopback: requests, answers and any credential in headers cross the network unencrypted.")
		}
	}
	return out
}

type addFunc func(code string, line int, key, evidence, msg string)

func reachFindings(s *Server, add addFunc) {
	switch s.Transport {
	case TransportStdio:
		add(CodeReachLocalProcess, 0, "command", "command: "+commandLine(s),
			"the client starts this server as a local process with the user's privileges, files and network, and the environment the file gives it.")
	case TransportHTTP, TransportSSE:
		host, ok := urlHost(s.rawURL)
		if !ok {
			return
		}
		if hostport.Loopback(host) {
			add(CodeReachLoopback, s.urlLine, "url", "url: "+s.URL,
				"the server is reached on a loopback address: something on this machine must be listening there, and whatever listens gets the client's requests.")
			return
		}
		add(CodeReachRemote, s.urlLine, "url", "url: "+s.URL,
			"the server is reached on a remote host: tool calls and what they carry leave this machine for "+host+".")
	}
}

// commandLine is the command and its masked arguments, for evidence.
func commandLine(s *Server) string {
	parts := append([]string{s.Command}, s.Args...)
	line := strings.Join(parts, " ")
	if r := []rune(line); len(r) > 200 {
		line = string(r[:200]) + "..."
	}
	return line
}

func launchFindings(s *Server, add addFunc) {
	if s.Transport != TransportStdio {
		return
	}
	l := readLaunch(s)
	if l == nil || l.local || l.notScanned != "" || l.unknown != "" || l.token == "" {
		return
	}
	line := s.Line
	if l.tokenIdx >= 0 && l.tokenIdx < len(s.args) {
		line = s.args[l.tokenIdx].line
	}
	ev := l.launcher + " " + l.token
	if l.pinned {
		what := "version " + l.spec
		if l.eco == "oci" {
			what = "digest " + l.spec
		}
		add(CodeLaunchPinned, line, "args", ev+" (exact "+what+")",
			"the launcher fetches an exact "+what+" at start: pinned, so it changes only when someone edits this file. Pinned says who must act to change it, not that its bytes or its contract hold still.")
		return
	}
	var why string
	switch {
	case l.eco == "oci" && l.spec == "":
		why = "untagged: the registry's latest"
	case l.eco == "oci" && l.spec == "latest":
		why = "tag latest"
	case l.eco == "oci":
		why = "tag " + l.spec + " with no @sha256: digest: a tag can be moved"
	case l.spec == "":
		why = "no version: the registry's latest"
	default:
		why = "spec " + strconv.Quote(l.spec) + " is a dist-tag or range, not an exact version"
	}
	add(CodeLaunchUnpinned, line, "args", ev+" ("+why+")",
		"the command resolves "+l.name+" again from a public registry at every start: whoever publishes the next version runs it here with this server's credentials, without any edit to this file.")
}

const (
	literalMsg   = "a credential held as a literal value in the file: client config files sync to cloud storage and land in dotfiles repositories, and whoever reads the file holds the credential."
	referenceMsg = "a credential given by reference (%s): the file holds no value; it comes from the environment or a prompt at launch."
)

func credentialFindings(s *Server, add addFunc) {
	check := func(where string, st Setting, header bool) {
		named := credentialName(st.Key) || (header && credentialHeader(st.Key))
		switch st.Kind {
		case "literal":
			shape := valueShape(st.value)
			if shape == "" && !(named && !nonSecretValue(st.value)) {
				return
			}
			ev := where + " " + st.Key + " = " + st.Masked
			if shape != "" {
				ev += " (shape: " + shape + ")"
			}
			add(CodeCredentialLiteral, st.Line, st.Key, ev, literalMsg)
		case "env_reference", "input_reference":
			if named {
				add(CodeCredentialReference, st.Line, st.Key, where+" "+st.Key+" = "+st.Masked, fmt.Sprintf(referenceMsg, st.Masked))
			}
		}
	}
	for _, e := range s.Env {
		check("env", e, false)
	}
	for _, h := range s.Headers {
		check("header", h, true)
	}
	for _, st := range s.Settings {
		check("setting", st, false)
	}
	for i, a := range s.args {
		key := "args[" + strconv.Itoa(i) + "]"
		switch {
		case a.literal:
			ev := key + " " + a.masked
			if a.credKey != "" && !strings.Contains(a.masked, a.credKey) {
				ev = key + " (value of " + a.credKey + ") " + a.masked
			}
			if a.shape != "" {
				ev += " (shape: " + a.shape + ")"
			}
			add(CodeCredentialLiteral, a.line, key, ev, literalMsg)
		case a.reference:
			ev := key + " " + a.masked
			if a.credKey != "" && !strings.Contains(a.masked, a.credKey) {
				ev = key + " (value of " + a.credKey + ") " + a.masked
			}
			add(CodeCredentialReference, a.line, key, ev, fmt.Sprintf(referenceMsg, a.masked))
		}
	}
	if s.rawURL != "" {
		_, parts := urlCredentials(s.rawURL)
		for _, p := range parts {
			if p.literal {
				ev := "url " + p.what + " = " + p.masked
				if p.shape != "" {
					ev += " (shape: " + p.shape + ")"
				}
				add(CodeCredentialLiteral, s.urlLine, "url", ev, literalMsg)
			} else {
				add(CodeCredentialReference, s.urlLine, "url", "url "+p.what+" = "+p.masked, fmt.Sprintf(referenceMsg, p.masked))
			}
		}
	}
}

func filesystemFindings(s *Server, add addFunc) {
	for i, a := range s.args {
		if a.literal || a.reference {
			continue
		}
		cands := []string{a.raw}
		if strings.HasPrefix(a.raw, "-") {
			if j := strings.IndexByte(a.raw, '='); j > 0 {
				cands = append(cands, a.raw[j+1:])
			}
		}
		for _, c := range cands {
			if what := broadPath(c); what != "" {
				add(CodeFilesystemBroad, a.line, "args["+strconv.Itoa(i)+"]", "args["+strconv.Itoa(i)+"] = "+a.raw,
					"a path argument names "+what+": a server that honours it reaches every file under it (SSH keys, cloud credentials, other clients' configs).")
				break
			}
		}
	}
	if l := readLaunch(s); l != nil {
		for _, m := range l.mounts {
			if what := broadPath(m.src); what != "" {
				add(CodeFilesystemBroad, s.args[m.idx].line, "args["+strconv.Itoa(m.idx)+"]", "args["+strconv.Itoa(m.idx)+"] = "+s.args[m.idx].raw,
					"a container mount's source names "+what+": the container reaches every file under it (SSH keys, cloud credentials, other clients' configs).")
			}
		}
	}
}

var (
	homeRe      = regexp.MustCompile(`^(?:/home/[^/]+|/Users/[^/]+|/root|[A-Za-z]:[\\/]Users[\\/][^\\/]+)[\\/]?$`)
	driveRootRe = regexp.MustCompile(`^[A-Za-z]:[\\/]$`)
	// drivePrefixRe: a Windows absolute path (C:\ or C:/).
	drivePrefixRe = regexp.MustCompile(`^[A-Za-z]:[\\/]`)
)

// broadPath says what a path argument names when it is the whole
// filesystem, a drive root, all users' homes or one user's whole home, and
// "" for anything else (a path under a home is not broad).
func broadPath(p string) string {
	switch p {
	case "/":
		return "the filesystem root (/)"
	case "~", "~/", "$HOME", "$HOME/", "${HOME}", "${HOME}/", "%USERPROFILE%", `%USERPROFILE%\`, "${userHome}", "${userHome}/", "${env:HOME}", "${env:USERPROFILE}":
		return "the user's whole home directory (" + p + ")"
	case "/home", "/home/", "/Users", "/Users/":
		return "every user's home directory (" + p + ")"
	}
	if driveRootRe.MatchString(p) {
		return "a drive root (" + p + ")"
	}
	if homeRe.MatchString(p) {
		return "a user's whole home directory (" + p + ")"
	}
	return ""
}

// --- classification of values -----------------------------------------

var refRe = regexp.MustCompile(`^(?:(?i:bearer|basic|token)\s+)?\$(?:\{(input|env):([^}]+)\}|\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))$`)

// classify gives a value's kind and the form any output may show: a
// reference as written (it is no secret), a literal as its length only.
func classify(v string) (kind, masked string) {
	if strings.TrimSpace(v) == "" {
		return "empty", "<empty>"
	}
	if m := refRe.FindStringSubmatch(v); m != nil {
		switch {
		case m[1] == "input":
			return "input_reference", v
		case m[4] != "":
			// ${VAR:-default}: the default is a value written in the file.
			i := strings.Index(v, ":-")
			return "literal", v[:i+2] + literalMask(m[4]) + "}"
		default:
			return "env_reference", v
		}
	}
	return "literal", literalMask(v)
}

func literalMask(v string) string {
	n := len([]rune(v))
	if n == 1 {
		return "<literal, 1 character>"
	}
	return "<literal, " + strconv.Itoa(n) + " characters>"
}

// shapes are credential formats recognised by value alone.
var shapes = []struct {
	name string
	re   *regexp.Regexp
}{
	{"GitHub token", regexp.MustCompile(`(?:^|[^A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{20,})`)},
	{"Anthropic API key", regexp.MustCompile(`(?:^|[^A-Za-z0-9_])sk-ant-[A-Za-z0-9_-]{20,}`)},
	{"OpenAI-style API key", regexp.MustCompile(`(?:^|[^A-Za-z0-9_])sk-[A-Za-z0-9_-]{20,}`)},
	{"Slack token", regexp.MustCompile(`(?:^|[^A-Za-z0-9_])xox[abposr]-[A-Za-z0-9-]{10,}`)},
	{"AWS access key id", regexp.MustCompile(`(?:^|[^A-Za-z0-9_])(?:AKIA|ASIA)[0-9A-Z]{16}(?:$|[^0-9A-Z])`)},
	{"GitLab token", regexp.MustCompile(`(?:^|[^A-Za-z0-9_])glpat-[A-Za-z0-9_-]{20,}`)},
	{"npm token", regexp.MustCompile(`(?:^|[^A-Za-z0-9_])npm_[A-Za-z0-9]{36}`)},
	{"Google API key", regexp.MustCompile(`(?:^|[^A-Za-z0-9_])AIza[0-9A-Za-z_-]{35}`)},
	{"Stripe key", regexp.MustCompile(`(?:^|[^A-Za-z0-9_])[sr]k_live_[0-9A-Za-z]{16,}`)},
	{"JWT", regexp.MustCompile(`(?:^|[^A-Za-z0-9_])eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`)},
	{"private key", regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----`)},
}

// valueShape names the credential format v holds, or "".
func valueShape(v string) string {
	for _, s := range shapes {
		if s.re.MatchString(v) {
			return s.name
		}
	}
	return ""
}

// credentialWords are key-name words that name a credential; a word that
// ends with one of credentialSuffixes does too (GITHUBTOKEN, clientSecret
// split or not).
var (
	credentialWords = map[string]bool{
		"TOKEN": true, "SECRET": true, "SECRETS": true,
		"PASSWORD": true, "PASSWORDS": true, "PASSWD": true,
		"APIKEY": true, "ACCESSKEY": true, "PRIVATEKEY": true,
		"CREDENTIAL": true, "CREDENTIALS": true,
		"AUTH": true, "AUTHORIZATION": true, "BEARER": true,
	}
	credentialPairs = map[[2]string]bool{
		{"API", "KEY"}: true, {"ACCESS", "KEY"}: true, {"PRIVATE", "KEY"}: true,
	}
	credentialSuffixes = []string{"TOKEN", "SECRET", "PASSWORD", "APIKEY"}
	// notCredentialLast: a key whose last word is one of these names
	// something about a credential (where it is, its type, its lifetime),
	// not the credential: TOKEN_URL, AUTH_TYPE, PASSWORD_FILE, AUTH_CLIENT_ID.
	notCredentialLast = map[string]bool{
		"URL": true, "URI": true, "ENDPOINT": true, "HOST": true, "PORT": true,
		"TYPE": true, "MODE": true, "PATH": true, "FILE": true, "DIR": true,
		"DIRECTORY": true, "ENABLED": true, "DISABLED": true, "ENABLE": true,
		"METHOD": true, "PROVIDER": true, "SCOPE": true, "SCOPES": true,
		"HEADER": true, "EXPIRY": true, "EXPIRES": true, "TTL": true,
		"TIMEOUT": true, "LENGTH": true, "ID": true, "NAME": true, "USER": true,
		"USERNAME": true, "EMAIL": true, "REQUIRED": true, "DOMAIN": true,
		"SERVER": true, "ISSUER": true, "REALM": true, "AUDIENCE": true,
		"STRATEGY": true, "LOCATION": true, "MAX": true, "LIMIT": true,
		"COUNT": true, "SIZE": true, "BUDGET": true,
	}
)

// keyWords splits a key into upper-cased words at non-alphanumerics and
// camelCase boundaries: "X-API-Key" -> X API KEY, "apiKey" -> API KEY,
// "APIKey" -> API KEY.
func keyWords(key string) []string {
	var words []string
	var cur []rune
	rs := []rune(key)
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToUpper(string(cur)))
			cur = nil
		}
	}
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		if i > 0 && unicode.IsUpper(r) && len(cur) > 0 {
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return words
}

// credentialName says whether a key (env name, header, flag, query
// parameter) names a credential: one of TOKEN, SECRET, PASSWORD, API_KEY,
// APIKEY, ACCESS_KEY, PRIVATE_KEY, CREDENTIALS, AUTH, BEARER as a word of
// it, case-insensitive, unless its last word says it is about the
// credential rather than the credential (notCredentialLast).
func credentialName(key string) bool {
	words := keyWords(key)
	if len(words) == 0 || notCredentialLast[words[len(words)-1]] {
		return false
	}
	for i, w := range words {
		if credentialWords[w] {
			return true
		}
		if i+1 < len(words) && credentialPairs[[2]string{w, words[i+1]}] {
			return true
		}
		for _, suf := range credentialSuffixes {
			if len(w) > len(suf) && strings.HasSuffix(w, suf) {
				return true
			}
		}
	}
	return false
}

// credentialHeader: headers that carry credentials whatever their words.
func credentialHeader(key string) bool {
	switch strings.ToLower(key) {
	case "authorization", "proxy-authorization", "cookie", "x-api-key", "api-key", "x-auth-token":
		return true
	}
	return false
}

var placeholderRe = regexp.MustCompile(`(?i)^(?:<[^>]*>|\[[^\]]*\]|x+|\*+|\.\.\.|.*\byour[-_ ].*|.*[-_ ]here)$`)

// nonSecretValue: a literal under a credential name that is not itself a
// credential: a boolean or "none", a path, a URL without a password, a
// placeholder ("<your-token>", "YOUR_API_KEY", "xxxx").
func nonSecretValue(v string) bool {
	t := strings.TrimSpace(v)
	switch strings.ToLower(t) {
	case "true", "false", "yes", "no", "on", "off", "null", "none", "0", "1", "required", "optional":
		return true
	}
	if strings.HasPrefix(t, "/") || strings.HasPrefix(t, "./") || strings.HasPrefix(t, "../") || strings.HasPrefix(t, "~/") || drivePrefixRe.MatchString(t) {
		return true
	}
	if u, err := url.Parse(t); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		_, hasPw := u.User.Password()
		return !hasPw && u.RawQuery == ""
	}
	if placeholderRe.MatchString(t) || strings.HasPrefix(strings.ToUpper(t), "YOUR_") {
		return true
	}
	return false
}

// --- arguments -----------------------------------------------------------

// arg is one argument as written and what the reader made of it.
type arg struct {
	raw    string
	masked string
	line   int
	// credKey is the flag, NAME= or header whose credential value this
	// argument holds; shape the credential format recognised in it.
	credKey   string
	shape     string
	literal   bool
	reference bool
}

var (
	nameValueRe = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)=(.*)$`)
	headerArgRe = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9-]+):\s*(.*)$`)
)

// readArgs classifies the arguments: the value of a credential-named flag
// (--api-key VALUE, --token=VALUE), of NAME=VALUE (docker -e), of a header
// argument ("Authorization: Bearer ..."), a URL with a password, or any
// argument of a credential shape is masked and marked.
func readArgs(vals []string) []arg {
	out := make([]arg, len(vals))
	pending := ""
	for i, v := range vals {
		a := arg{raw: v, masked: v}
		// mark classifies val, the credential part of the argument
		// starting at prefix.
		mark := func(key, prefix, val string) {
			kind, masked := classify(val)
			shape := valueShape(val)
			switch kind {
			case "env_reference", "input_reference":
				a.credKey, a.reference = key, true
			case "literal":
				if shape != "" || !nonSecretValue(val) {
					a.credKey, a.literal, a.shape = key, true, shape
					a.masked = prefix + masked
				}
			}
		}
		switch {
		case pending != "" && !strings.HasPrefix(v, "-"):
			mark(pending, "", v)
			pending = ""
		case strings.HasPrefix(v, "-"):
			pending = ""
			flag := v
			if j := strings.IndexByte(v, '='); j > 0 {
				flag = v[:j]
				if credentialName(strings.TrimLeft(flag, "-")) {
					mark(flag, v[:j+1], v[j+1:])
				}
			} else if credentialName(strings.TrimLeft(flag, "-")) {
				pending = flag
			}
		default:
			pending = ""
			if m := nameValueRe.FindStringSubmatch(v); m != nil && credentialName(m[1]) {
				mark(m[1], m[1]+"=", m[2])
			} else if m := headerArgRe.FindStringSubmatch(v); m != nil && (credentialName(m[1]) || credentialHeader(m[1])) {
				mark(m[1], v[:len(v)-len(m[2])], m[2])
			}
		}
		if !a.literal && !a.reference {
			if masked, parts := urlCredentials(v); len(parts) > 0 {
				for _, p := range parts {
					if p.literal {
						a.literal, a.shape, a.credKey = true, p.shape, "url "+p.what
					} else if !a.literal {
						a.reference, a.credKey = true, "url "+p.what
					}
				}
				a.masked = masked
			}
		}
		if !a.literal {
			if shape := valueShape(v); shape != "" {
				a.literal, a.reference, a.shape, a.masked = true, false, shape, literalMask(v)
				// Keep the flag or NAME of --flag=VALUE and NAME=VALUE.
				if j := strings.IndexByte(v, '='); j > 0 && valueShape(v[:j]) == "" &&
					(strings.HasPrefix(v, "-") || nameValueRe.MatchString(v)) {
					a.masked = v[:j+1] + literalMask(v[j+1:])
				}
			}
		}
		out[i] = a
	}
	return out
}

// --- URLs --------------------------------------------------------------

// urlPart is a credential found in a URL.
type urlPart struct {
	what    string // "password", "query api_key"
	masked  string
	shape   string
	literal bool
}

// urlCredentials masks a URL's password and the values of its
// credential-named query parameters, and lists them. A URL that still has
// a credential shape after that is masked whole.
func urlCredentials(raw string) (string, []urlPart) {
	i := strings.Index(raw, "://")
	if i <= 0 {
		return raw, nil
	}
	var parts []urlPart
	scheme, rest := raw[:i+3], raw[i+3:]
	authEnd := strings.IndexAny(rest, "/?#")
	if authEnd < 0 {
		authEnd = len(rest)
	}
	auth, tail := rest[:authEnd], rest[authEnd:]
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		user := auth[:at]
		if c := strings.IndexByte(user, ':'); c >= 0 && c+1 < len(user) {
			pw := user[c+1:]
			if dec, err := url.PathUnescape(pw); err == nil {
				pw = dec
			}
			kind, masked := classify(pw)
			if kind != "empty" {
				parts = append(parts, urlPart{what: "password", masked: masked, shape: valueShape(pw), literal: kind == "literal"})
				auth = user[:c+1] + masked + auth[at:]
			}
		} else if valueShape(user) != "" {
			parts = append(parts, urlPart{what: "user", masked: literalMask(user), shape: valueShape(user), literal: true})
			auth = literalMask(user) + auth[at:]
		}
	}
	if q := strings.IndexByte(tail, '?'); q >= 0 {
		pathPart, query := tail[:q+1], tail[q+1:]
		frag := ""
		if h := strings.IndexByte(query, '#'); h >= 0 {
			query, frag = query[:h], query[h:]
		}
		pairs := strings.Split(query, "&")
		for j, p := range pairs {
			k, v, ok := strings.Cut(p, "=")
			if !ok {
				continue
			}
			dk, err := url.QueryUnescape(k)
			if err != nil {
				dk = k
			}
			dv, err := url.QueryUnescape(v)
			if err != nil {
				dv = v
			}
			shape := valueShape(dv)
			if !credentialName(dk) && !strings.EqualFold(dk, "key") && shape == "" {
				continue
			}
			kind, masked := classify(dv)
			if kind == "empty" || (kind == "literal" && shape == "" && nonSecretValue(dv)) {
				continue
			}
			parts = append(parts, urlPart{what: "query " + dk, masked: masked, shape: shape, literal: kind == "literal"})
			pairs[j] = k + "=" + masked
		}
		tail = pathPart + strings.Join(pairs, "&") + frag
	}
	out := scheme + auth + tail
	if shape := valueShape(out); shape != "" {
		parts = append(parts, urlPart{what: "text", masked: literalMask(raw), shape: shape, literal: true})
		out = literalMask(raw)
	}
	return out, parts
}

// maskURL is the URL as outputs may show it.
func maskURL(raw string) string {
	m, _ := urlCredentials(raw)
	return m
}

// urlHost is an http(s) URL's host, when it can be told: not when the
// URL is a reference or has another scheme, and not for an unspecified
// address (0.0.0.0, ::), whose reach depends on the system.
func urlHost(raw string) (string, bool) {
	if raw == "" || strings.Contains(raw, "${") || strings.Contains(raw, "$") {
		return "", false
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return "", false
	}
	h := strings.ToLower(u.Hostname())
	if ip := net.ParseIP(h); ip != nil && ip.IsUnspecified() {
		return "", false
	}
	return h, true
}
