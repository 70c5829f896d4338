package checks

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/verifymcp/verifymcp/contract"
)

// Parameters that ask for credentials, and tools that hand back the
// environment or reach caller-chosen paths.
//
// Credential parameters. A parameter (or prompt argument) asks for a
// secret when its name has a secret word (password, passphrase, secret,
// credential(s), mnemonic, cookie, otp), a secret pair (api key, access
// key, private key, ssh key, client secret, access/auth/bearer/refresh/
// session token, seed/recovery phrase), is "token", "auth" or "bearer"
// alone, or ends in "token" after a service or qualifier word
// (githubToken, slack_bot_token); when its schema says format "password" or
// writeOnly; or when its description starts with or says "your" before
// such a noun. It does not when the name is about the secret rather than
// the secret itself (secret_name, api_key_id, password_policy, key_path,
// is_password_set), when the parameter is boolean or numeric, or when
// "token" counts or pages (max_tokens, token_count, next_page_token,
// progressToken). Negated mentions ("do not include API keys") do not
// count.
//
// Environment. A tool hands back the process environment when its
// description says it returns, lists or reads environment variables
// (process.env, os.environ, printenv), or when its name is about the
// environment (get_env, printenv) and it has no description to say
// otherwise; not when the description places the variables elsewhere (a
// project, deployment, repository, container, secret manager). MCP
// annotations cannot declare this: readOnlyHint and openWorldHint describe
// side effects and reach, not which data comes back, and an agent's
// credentials are in its servers' environment. So the finding is raised
// whatever the annotations say (server-everything's get-env is read-only
// and closed-world, and is reported).
//
// Arbitrary paths. A tool reaches a caller-chosen local path when a string
// parameter is named as a path, file, directory or folder, or described as
// a file or directory path, unless the parameter is a URL or the tool
// works on a remote store (a sibling parameter such as owner, repo,
// bucket, branch or host, or a description naming a repository, bucket,
// drive or remote). The finding is raised only when no confinement is
// stated: not in the tool's own texts, not in the server instructions,
// and not by a tool of the server without parameters that describes the
// confinement (list_allowed_directories). In a tool named for files or
// directories, source, destination, target, from and to are paths too. Each of
// server-filesystem's tools says "Only works within allowed directories"
// except its deprecated read_file, which its list_allowed_directories
// covers. Annotations again cannot state a confinement, so they neither
// raise nor clear this finding.

var credentialWords = map[string]bool{
	"password": true, "passwd": true, "passphrase": true, "secret": true, "secrets": true, "credential": true,
	"credentials": true, "mnemonic": true, "apikey": true, "privatekey": true, "cookie": true, "cookies": true,
	"otp": true, "totp": true, "seedphrase": true, "pat": true,
}

var credentialPairs = map[string]bool{
	"api key": true, "access key": true, "secret key": true, "private key": true, "ssh key": true, "signing key": true,
	"encryption key": true, "auth token": true, "access token": true, "refresh token": true, "bearer token": true,
	"id token": true, "session token": true, "api token": true, "oauth token": true, "seed phrase": true,
	"recovery phrase": true, "client secret": true, "auth key": true, "bot token": true, "session key": true,
}

// aboutWords make a name about a secret rather than the secret.
var aboutWords = map[string]bool{
	"name": true, "names": true, "id": true, "ids": true, "path": true, "file": true, "filename": true, "url": true,
	"uri": true, "ref": true, "arn": true, "type": true, "length": true, "count": true, "expiry": true, "expires": true,
	"expiration": true, "ttl": true, "policy": true, "label": true, "env": true, "var": true, "variable": true,
	"field": true, "hint": true, "format": true, "scope": true, "scopes": true, "header": true, "location": true,
	"hash": true, "is": true, "has": true, "set": true, "exists": true, "required": true, "enabled": true,
	"rotation": true, "version": true, "description": true, "prefix": true,
}

// tokenQualifiers make "...token" something other than a credential.
var tokenQualifiers = map[string]bool{
	"page": true, "next": true, "continuation": true, "cursor": true, "sync": true, "pagination": true, "max": true,
	"min": true, "num": true, "count": true, "limit": true, "total": true, "input": true, "output": true,
	"prompt": true, "completion": true, "context": true, "stop": true, "start": true, "end": true, "special": true,
	"vocab": true, "cancellation": true, "cancel": true, "progress": true, "idempotency": true, "resume": true,
	"lock": true, "reasoning": true, "thinking": true, "response": true,
}

var (
	reCredentialDesc = regexp.MustCompile(`(?i)^(?:the\s+|your\s+|a\s+|an\s+|user'?s?\s+)?(?:[\w-]+\s+){0,2}?(?:password|passphrase|api[\s_-]?key|secret(?:\s+key)?|private\s+key|seed\s+phrase|recovery\s+phrase|mnemonic|(?:access|auth(?:entication)?|bearer|api|personal\s+access|session|refresh|bot)\s+token|credentials?|ssh\s+key)\b|\byour\s+(?:[\w-]+\s+){0,2}?(?:password|passphrase|api[\s_-]?key|secret\s+key|private\s+key|seed\s+phrase|recovery\s+phrase|mnemonic|(?:access|auth(?:entication)?|bearer|api|personal\s+access|session|refresh|bot)\s+token|credentials|ssh\s+key)\b`)
	rePaging         = regexp.MustCompile(`(?i)\b(?:page|pagination|paginate|cursor|next|continuation|count|number\s+of|limit|tokens\s+to)\b`)

	secretWords        = newWordSet(anySecret)
	gateCredentialDesc = regexGate(reCredentialDesc)
)

// joinWords appends strings.Join(ws, sep) to b: a map key built on the
// stack.
func joinWords(b []byte, ws []string, sep string) []byte {
	for i, w := range ws {
		if i > 0 {
			b = append(b, sep...)
		}
		b = append(b, w...)
	}
	return b
}

// credentialName reports whether a parameter name asks for a secret.
func credentialName(name string) bool {
	var buf [16]string
	ws := appendWords(buf[:0], name)
	if len(ws) == 0 {
		return false
	}
	for _, w := range ws {
		if aboutWords[w] {
			return false
		}
	}
	var key [64]byte
	if credentialWords[string(joinWords(key[:0], ws, ""))] {
		return true
	}
	for _, w := range ws {
		if credentialWords[w] {
			return true
		}
	}
	for i := 0; i+1 < len(ws); i++ {
		if credentialPairs[string(joinWords(key[:0], ws[i:i+2], " "))] {
			return true
		}
	}
	switch last := ws[len(ws)-1]; {
	case len(ws) == 1:
		return last == "token" || last == "auth" || last == "authorization" || last == "bearer"
	case last == "token":
		return !tokenQualifiers[ws[len(ws)-2]]
	}
	return false
}

func nonSecretType(types []string) bool {
	if len(types) == 0 {
		return false
	}
	for _, t := range types {
		switch t {
		case "boolean", "number", "integer", "null", "array:boolean", "array:number", "array:integer", "array":
		default:
			return false
		}
	}
	return true
}

func checkCredentialParams(out *findings, kind, subject string, ps []param) {
	for _, p := range ps {
		if nonSecretType(p.types) {
			continue
		}
		nameField := p.field
		if kind == KindPrompt {
			nameField = p.field + "/name"
		}
		switch {
		case p.format == "password" || p.writeOnly:
			out.add(Finding{Code: CodeParamCredential, Kind: kind, Subject: subject, Field: nameField,
				Evidence: evidence(p.name, 0, len(p.name)),
				Message:  fmt.Sprintf("Parameter %q is declared as a secret (format password or writeOnly): the model is asked to supply it.", p.name)})
		case credentialName(p.name):
			if ws := words(p.name); ws[len(ws)-1] == "token" && len(ws) == 1 && rePaging.MatchString(p.desc) {
				continue
			}
			out.add(Finding{Code: CodeParamCredential, Kind: kind, Subject: subject, Field: nameField,
				Evidence: evidence(p.name, 0, len(p.name)),
				Message:  fmt.Sprintf("Parameter %q asks for a credential by name: the secret passes through the model's context.", p.name)})
		default:
			// The words hold no space, so they are found in p.desc + " " +
			// p.title exactly when one of the two holds one.
			inDesc, exoticDesc := secretWords.find(p.desc)
			inTitle, exoticTitle := secretWords.find(p.title)
			if exoticDesc || exoticTitle {
				if !(&detector{any: anySecret}).mayMatch(strings.ToLower(p.desc + " " + p.title)) {
					continue
				}
			} else if !inDesc && !inTitle {
				continue
			}
			for _, t := range [...]struct{ field, text string }{{"/description", p.desc}, {"/title", p.title}} {
				if !gateMay(gateCredentialDesc, t.text) {
					continue
				}
				m := reCredentialDesc.FindStringIndex(t.text)
				if m == nil || aboutName(p.name) {
					continue
				}
				d := &doc{text: t.text}
				if d.negated(m[0]) {
					continue
				}
				out.add(Finding{Code: CodeParamCredential, Kind: kind, Subject: subject, Field: p.field + t.field,
					Evidence: evidence(t.text, m[0], m[1]),
					Message:  fmt.Sprintf("Parameter %q asks for a credential in its description: the secret passes through the model's context.", p.name)})
				break
			}
		}
	}
}

func aboutName(name string) bool {
	for w, i := nextWord(name, 0); i >= 0; w, i = nextWord(name, i) {
		if aboutWords[w] {
			return true
		}
	}
	return false
}

var (
	reEnvDesc     = regexp.MustCompile(`(?i)\b(?:returns?|prints?|lists?|dumps?|shows?|displays?|exposes?|reads?|gets?|retrieves?|outputs?|reveals?|fetch(?:es)?|provides?|echo(?:es)?)\s+(?:all\s+|the\s+|every\s+|any\s+|an\s+|a\s+)?(?:of\s+the\s+)?(?:[\w-]+\s+){0,2}?(?:environment\s+variables?|env\s+vars?|env\s+variables?)\b|\bprocess\.env\b|\bos\.environ\b|\bprintenv\b`)
	reRemoteScope = regexp.MustCompile(`(?i)\b(?:project|projects|deployment|deployments|repository|repo|site|app|application|service|workspace|cluster|container|pod|function|lambda|secret\s+manager|vault|vercel|netlify|heroku|railway|render|github\s+actions|codespace|pipeline|job|runner)\b`)
	envNameWords  = map[string]bool{"env": true, "environ": true, "environment": true, "envs": true, "dotenv": true, "printenv": true, "envvars": true}

	gateEnvDesc     = regexGate(reEnvDesc)
	litEnv          = litGate("env").lit
	gateRemoteScope = regexGate(reRemoteScope)
)

// containsFoldASCII reports whether s holds sub, lower-case ASCII
// letters, with ASCII letters of s folded to lower case. (Setting bit 0x20
// folds a capital to its lower case, and maps nothing else to a lower-case
// letter.)
func containsFoldASCII(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i]|0x20 != sub[0] {
			continue
		}
		j := 1
		for j < len(sub) && s[i+j]|0x20 == sub[j] {
			j++
		}
		if j == len(sub) {
			return true
		}
	}
	return false
}

// findGated is re.FindStringIndex(s), skipped when the gate of re rules a
// match out.
func findGated(re *regexp.Regexp, g *gate, s string) []int {
	if !gateMay(g, s) {
		return nil
	}
	return re.FindStringIndex(s)
}

func checkEnvironment(out *findings, ti *toolInfo) {
	t := ti.tool
	// strings.ToLower turns no character but ASCII letters into e, n or v,
	// and "env" holds no space: this is
	// strings.Contains(strings.ToLower(t.Name+" "+t.Description), "env"),
	// the description's part read from its scan.
	inDesc := ti.desc != nil && ti.desc.scan.bits.has(litEnv)
	if !containsFoldASCII(t.Name, "env") && !inDesc {
		return
	}
	// The description's scan decides the gates (an empty description has
	// no scan, and no match).
	if m := descMatch(ti, reEnvDesc, gateEnvDesc); m != nil {
		if descMatch(ti, reRemoteScope, gateRemoteScope) != nil {
			return
		}
		out.add(Finding{Code: CodeCapabilityEnv, Kind: KindTool, Subject: t.Name, Field: "description",
			Evidence: evidence(t.Description, m[0], m[1]),
			Message:  fmt.Sprintf("Tool %q returns environment variables, where an agent's credentials live; %s.", t.Name, annotationsSay(t))})
		return
	}
	if strings.TrimSpace(t.Description) != "" {
		return
	}
	for w, i := nextWord(t.Name, 0); i >= 0; w, i = nextWord(t.Name, i) {
		if envNameWords[w] {
			out.add(Finding{Code: CodeCapabilityEnv, Kind: KindTool, Subject: t.Name, Field: "name",
				Evidence: evidence(t.Name, 0, len(t.Name)),
				Message:  fmt.Sprintf("Tool %q is named for the environment and has no description to say it returns anything else; %s.", t.Name, annotationsSay(t))})
			return
		}
	}
}

// descMatch is re.FindStringIndex(ti.tool.Description), skipped when the
// gate of re rules a match out in the description's scan.
func descMatch(ti *toolInfo, re *regexp.Regexp, g *gate) []int {
	if ti.desc == nil || !ti.desc.scan.may(g) {
		return nil
	}
	return re.FindStringIndex(ti.desc.text)
}

func annotationsSay(t contract.Tool) string {
	a := t.Annotations
	if a == nil {
		return "it has no annotations, and none could declare this"
	}
	return fmt.Sprintf("its annotations (readOnlyHint=%v, openWorldHint=%v) describe side effects, not the data returned", t.ReadOnly(), t.OpenWorld())
}

var (
	pathWords = map[string]bool{"path": true, "paths": true, "filepath": true, "filepaths": true, "filename": true,
		"filenames": true, "file": true, "files": true, "dir": true, "dirs": true, "directory": true, "directories": true,
		"folder": true, "folders": true}
	urlWords    = map[string]bool{"url": true, "uri": true, "urls": true, "uris": true, "link": true, "href": true}
	remoteWords = map[string]bool{"owner": true, "repo": true, "repository": true, "bucket": true, "branch": true, "ref": true,
		"commit": true, "sha": true, "drive": true, "site": true, "host": true, "hostname": true, "container": true,
		"pod": true, "namespace": true, "url": true, "endpoint": true, "server": true, "gist": true}
	gatePathDesc   = regexGate(rePathDesc)
	gateRemoteDesc = joinedGate(regexGate(reRemoteDesc))
	wConfined      = newWindowedMatch(reConfined)
	gateConfined   = joinedGate(wConfined.gate)

	rePathDesc   = regexp.MustCompile(`(?i)\b(?:file|directory|folder)\s+paths?\b|\bpaths?\s+(?:to|of)\s+(?:a|an|the)?\s*(?:local\s+)?(?:file|directory|folder)s?\b|\babsolute\s+paths?\b|\b(?:local\s+)?file\s*system\s+paths?\b`)
	reRemoteDesc = regexp.MustCompile(`(?i)\b(?:repository|repositories|repo|github|gitlab|bitbucket|bucket|s3|gcs|google\s+drive|dropbox|onedrive|sharepoint|remote|ftp|sftp|container|pod|cloud\s+storage|blob|gist|wiki)\b`)
	reConfined   = regexp.MustCompile(`(?i)\b(?:allowed|permitted|authori[sz]ed|configured|approved|whitelisted|allowlisted)\s+(?:director(?:y|ies)|folders?|paths?|roots?|locations?)\b|\b(?:only|must\s+be|restricted|limited|confined|sandboxed|scoped)\b[^.\n]{0,40}?\b(?:within|inside|under|to)\b[^.\n]{0,40}?\b(?:director(?:y|ies)|folders?|paths?|roots?|workspace|project|sandbox)\b|\ballowed\s+to\s+access\b|\bworkspace\s+roots?\b|\bclient\s+roots\b`)
)

// endpointWords name the two ends of a copy or move; in a tool named for
// files or directories they are paths.
var endpointWords = map[string]bool{"source": true, "src": true, "destination": true, "dest": true, "target": true, "from": true, "to": true}

// pathParamOf reports whether p is a local path of tool t.
func pathParamOf(t contract.Tool, p param) bool {
	if pathParam(p) {
		return true
	}
	var buf [16]string
	ws := appendWords(buf[:0], p.name)
	if len(ws) != 1 || !endpointWords[ws[0]] || nonSecretType(p.types) {
		return false
	}
	for w, i := nextWord(t.Name, 0); i >= 0; w, i = nextWord(t.Name, i) {
		if pathWords[w] {
			return true
		}
	}
	return false
}

// pathParam reports whether p is a local path, file or directory.
func pathParam(p param) bool {
	if p.format != "" && strings.Contains(strings.ToLower(p.format), "ur") {
		return false
	}
	ok := false
	for _, t := range p.types {
		if t == "string" || t == "array:string" {
			ok = true
		}
	}
	if !ok && len(p.types) > 0 {
		return false
	}
	var buf [16]string
	ws := appendWords(buf[:0], p.name)
	for _, w := range ws {
		if urlWords[w] {
			return false
		}
	}
	if len(ws) > 0 && pathWords[ws[len(ws)-1]] {
		return true
	}
	// Every match of rePathDesc holds "path", whose letters (?i) folds to
	// ASCII only.
	return containsFoldASCII(p.desc, "path") && findGated(rePathDesc, gatePathDesc, p.desc) != nil
}

func checkArbitraryPath(out *findings, c *contract.Contract, units []unit, tools []toolInfo) {
	instructions := &textScan{}
	for i := range units {
		if units[i].kind == KindServer && units[i].field == "instructions" {
			instructions = units[i].scan
		}
	}
	serverConfined := instructions.text == c.Instructions && wConfined.match(instructions) // reConfined.MatchString(c.Instructions)
	// confined reports whether a tool's texts state the confinement,
	// asking at most once per tool.
	confined := make([]int8, len(tools)) // 0 unknown, 1 yes, -1 no
	toolConfined := func(i int) bool {
		if confined[i] == 0 {
			confined[i] = -1
			ti := &tools[i]
			scans := make([]*textScan, len(ti.texts))
			for j, u := range ti.texts {
				scans[j] = u.scan
			}
			if mayJoined(gateConfined, scans...) {
				texts := make([]string, len(ti.texts))
				for j, u := range ti.texts {
					texts[j] = u.text
				}
				if wConfined.match(scanText(strings.Join(texts, "\n"))) {
					confined[i] = 1
				}
			}
		}
		return confined[i] == 1
	}
	for i, ti := range tools {
		if serverConfined {
			break
		}
		// A tool without parameters that states the confinement declares
		// it for the server (list_allowed_directories).
		if len(ti.params) == 0 && toolConfined(i) {
			serverConfined = true
		}
	}
	if serverConfined {
		return
	}
	for i, ti := range tools {
		var found *param
		remote := false
		for i, p := range ti.params {
			eachWord(p.name, func(w string) {
				if remoteWords[w] {
					remote = true
				}
			})
			if found == nil && pathParamOf(ti.tool, p) {
				found = &ti.params[i]
			}
		}
		if found == nil || remote || remoteDesc(ti.tool) || toolConfined(i) {
			continue
		}
		p := *found
		f := Finding{Code: CodeCapabilityPath, Kind: KindTool, Subject: ti.tool.Name, Field: p.field,
			Evidence: evidence(p.name, 0, len(p.name)),
			Message:  fmt.Sprintf("Tool %q takes a local path in parameter %q and no confinement (allowed directories, workspace roots) is stated on the tool or the server.", ti.tool.Name, p.name)}
		if p.desc != "" {
			f.Field, f.Evidence = p.field+"/description", evidence(p.desc, 0, len(p.desc))
		}
		out.add(f)
	}
}

// remoteDesc reports whether a tool's description or title names a
// remote store.
func remoteDesc(t contract.Tool) bool {
	var desc, title textScan
	desc.read(t.Description)
	title.read(t.Title)
	return mayJoined(gateRemoteDesc, &desc, &title) && reRemoteDesc.MatchString(t.Description+" "+t.Title)
}
