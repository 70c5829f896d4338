package clientconfig

import (
	"regexp"
	"strconv"
	"strings"
)

// The stand-ins a scan gives a server for what its client fills in at
// launch. None is a value of the operator's environment.
const (
	// Placeholder is the value of every environment variable a config
	// names, and of a credential its arguments take by reference.
	Placeholder = "verifymcp-placeholder"
	// SandboxHome is the sandbox user's home directory, which exists in
	// the sandbox image: the stand-in for the user's home.
	SandboxHome = "/home/sandbox"
	// SandboxWorkspace is the working directory of the sandboxed server,
	// a writable scratch directory: the stand-in for the folder open in
	// the editor.
	SandboxWorkspace = "/tmp"
)

var (
	// bracedVarRe is a ${...} variable; its body holds no brace.
	bracedVarRe = regexp.MustCompile(`\$\{([^{}]*)\}`)
	// bareVarRe is $NAME, which only Gemini CLI expands.
	bareVarRe = regexp.MustCompile(`\$([A-Za-z_][A-Za-z0-9_]*)`)
	identRe   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	// claudeVarRe is Claude Code's ${NAME} or ${NAME:-default}.
	claudeVarRe = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$`)
)

// standIn is what the scan puts where a variable was.
type standIn struct {
	value string
	what  string // for the report: "the sandbox user's home"
	path  bool   // a directory: nothing may be appended to it
}

var (
	homeStandIn      = standIn{SandboxHome, "the sandbox user's home", true}
	workspaceStandIn = standIn{SandboxWorkspace, "the sandbox's scratch working directory", true}
	credStandIn      = standIn{Placeholder, "a placeholder credential", false}
)

// expandArgs gives a server's arguments from index from on as the scan
// passes them: masked (a credential stays masked), each variable the
// file's client expands replaced by its sandbox stand-in, as the client
// would in the sandbox. why is set when an argument holds a variable the
// scan has no honest stand-in for, or one the client may not expand at
// all: the server is then not scanned, rather than started on a value
// the scanner made up and then blamed for failing on it.
//
// What each client expands in args (their documentation):
//
//	VS Code   ${userHome} ${workspaceFolder} ${workspaceFolderBasename} ${pathSeparator} ${/} ${env:NAME} ${input:ID}
//	Cursor    ${userHome} ${workspaceFolder} ${workspaceFolderBasename} ${pathSeparator} ${/} ${env:NAME}
//	Windsurf  ${env:NAME}
//	Claude Code  ${NAME} ${NAME:-default} (not $NAME)
//	Gemini CLI   $NAME ${NAME}
//
// The stand-ins: the home and HOME are the sandbox user's home, the
// workspace folder the server's scratch working directory (a path under
// either is not in the sandbox: not scanned), the path separator "/", a
// Claude Code default the default as written. An environment variable or
// an input is a placeholder where it is a credential (the value of a
// credential-named flag, NAME= or header, as env values are); any other
// is not scanned, since a made-up path, URL or name is the kind of value
// a server rightly fails on.
func expandArgs(client string, s *Server, from int) (args, notes []string, why string) {
	args = []string{}
	for i := from; i >= 0 && i < len(s.args); i++ {
		a := s.args[i]
		out, n, w := expandArg(client, a.masked, a.credKey != "")
		if w != "" {
			return restArgs(s, from), nil, "args[" + strconv.Itoa(i) + "] " + w
		}
		for _, x := range n {
			notes = append(notes, "args["+strconv.Itoa(i)+"] "+x)
		}
		args = append(args, out)
	}
	return args, notes, ""
}

// expandArg expands the variables of one argument (see expandArgs); cred
// says the argument holds a credential.
func expandArg(client, v string, cred bool) (out string, notes []string, why string) {
	if client == ClientGemini {
		// Gemini CLI's $NAME: brace it, so that one grammar follows.
		v = bareVarRe.ReplaceAllString(v, "$${$1}")
	}
	if !strings.Contains(v, "${") {
		return v, nil, ""
	}
	var b strings.Builder
	rest := v
	for {
		loc := bracedVarRe.FindStringSubmatchIndex(rest)
		end := len(rest)
		if loc != nil {
			end = loc[0]
		}
		if strings.Contains(rest[:end], "${") {
			// Unterminated, or nested (${A:-${B}}).
			return "", nil, "holds a variable this reader cannot delimit (" + strconv.Quote(v) + "): what the server gets is not in the file"
		}
		if loc == nil {
			b.WriteString(rest)
			return b.String(), notes, ""
		}
		b.WriteString(rest[:loc[0]])
		whole, body := rest[loc[0]:loc[1]], rest[loc[2]:loc[3]]
		rest = rest[loc[1]:]
		si, w := resolveVar(client, body, cred)
		if w != "" {
			return "", nil, "is " + strconv.Quote(v) + ": " + w
		}
		if si.path && pathBelow(rest) {
			return "", nil, "is " + strconv.Quote(v) + ", a path under " + whole + ": the sandbox has no copy of it, and a server failing on a path the scanner made up would be blamed for it"
		}
		b.WriteString(si.value)
		notes = append(notes, whole+" -> "+si.value+" ("+si.what+")")
	}
}

// pathBelow says whether what follows a directory's variable goes below
// it ("/src", "${/}src"); a lone trailing separator does not.
func pathBelow(rest string) bool {
	for _, sep := range []string{"/", `\`, "${/}", "${pathSeparator}"} {
		if strings.HasPrefix(rest, sep) {
			return strings.TrimPrefix(rest, sep) != ""
		}
	}
	return false
}

// resolveVar is the stand-in of the variable ${body} in a file of client,
// or why there is none.
func resolveVar(client, body string, cred bool) (standIn, string) {
	name := ClientName(client)
	env := func(n string) (standIn, string) {
		switch {
		case n == "HOME":
			return homeStandIn, ""
		case cred:
			return credStandIn, ""
		}
		return standIn{}, "the value of environment variable " + n + " at launch is not in the file, and the scan gives no made-up value to what is not a credential"
	}
	switch client {
	case ClientVSCode, ClientCursor:
		switch {
		case body == "userHome":
			return homeStandIn, ""
		case body == "workspaceFolder":
			return workspaceStandIn, ""
		case body == "workspaceFolderBasename":
			return standIn{"tmp", "the name of the sandbox's scratch working directory", false}, ""
		case body == "pathSeparator" || body == "/":
			return standIn{"/", "the sandbox's path separator", false}, ""
		case strings.HasPrefix(body, "env:") && identRe.MatchString(body[4:]):
			return env(body[4:])
		case strings.HasPrefix(body, "input:") && client == ClientVSCode:
			if cred {
				return credStandIn, ""
			}
			return standIn{}, "an input is typed at launch, and the scan gives no made-up value to what is not a credential"
		}
		return standIn{}, "${" + body + "} is not a " + name + " variable the scan has a stand-in for"
	case ClientWindsurf:
		if strings.HasPrefix(body, "env:") && identRe.MatchString(body[4:]) {
			return env(body[4:])
		}
		return standIn{}, "${" + body + "} is not a Windsurf variable the scan has a stand-in for"
	case ClientClaudeCode:
		m := claudeVarRe.FindStringSubmatch(body)
		if m == nil {
			return standIn{}, "${" + body + "} is not a Claude Code variable (${NAME} or ${NAME:-default})"
		}
		if m[1] != "HOME" && strings.Contains(body, ":-") {
			// NAME is not set in the sandbox: Claude Code gives the default.
			return standIn{m[2], "its default, as written in the file (" + m[1] + " is not set in the sandbox)", false}, ""
		}
		return env(m[1])
	case ClientGemini:
		if identRe.MatchString(body) {
			return env(body)
		}
		return standIn{}, "${" + body + "} is not a Gemini CLI variable ($NAME or ${NAME})"
	}
	return standIn{}, "whether " + name + " expands ${" + body + "} is not known to this reader, so what the server gets is not in the file"
}
