package checks

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/verifymcp/verifymcp/contract"
)

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
	"uuid": true, "guid": true, "identifier": true, "handle": true, "entry": true,
}

// switchVerbs, first in a name, make it a switch about secrets
// (check_secrets, include_tokens, redact_passwords), not a secret.
var switchVerbs = map[string]bool{
	"check": true, "scan": true, "audit": true, "detect": true, "include": true, "exclude": true,
	"redact": true, "mask": true, "skip": true, "show": true, "list": true, "find": true,
}

// issuedQualifiers make "...token" a value this server issued to the model
// (a one-use confirmation, an approval, a nonce) rather than a secret the
// user supplies from outside.
var issuedQualifiers = map[string]bool{
	"approval": true, "approve": true, "confirmation": true, "confirm": true, "nonce": true, "challenge": true,
	"preview": true, "undo": true, "commit": true, "plan": true, "operation": true, "job": true, "task": true,
}

var (
	// reIssued: the description says the value comes from this server: a
	// previous call, a preview, a response, another of its tools.
	reIssued = regexp.MustCompile(`(?i)\b(?:returned|issued|generated|provided|given|produced|created|obtained|received)\s+(?:by|from|in)\s+(?:the\s+|a\s+|an\s+)?(?:previous|prior|preceding|earlier|first|preview|initial|last|dry[\s-]run|server|response|result|output|` + "`" + `?[a-z][\w-]*` + "`" + `?\s+(?:tool|call|step|response)|` + "`" + `?[a-z]+_[a-z_]+` + "`" + `?)\b|\b(?:pass|send|give|echo|return|supply)\s+(?:it|this|that|the\s+(?:same\s+)?(?:token|value|code))\s+back\b|\bto\s+confirm\b|\bone[\s-](?:time|use)\b|\b(?:appeared|appears|was\s+shown|was\s+listed)\s+in\s+(?:the\s+)?(?:previous\s+|earlier\s+)?(?:[\w-]+\s+)?(?:results?|response|output|listing)\b`)
	// reIdentifierAfter: a credential noun that names identifiers ("SSH
	// key IDs", "API key names") or what describes one rather than holds
	// it ("credential description", "credential plugins", "secret manager
	// type").
	reIdentifierAfter = regexp.MustCompile(`(?i)^s?\s+(?:ids?|identifiers?|names?|fingerprints?|uuids?|labels?|references?|descriptions?|plugins?|managers?|types?|kinds?|providers?|stores?|backends?|policy|policies|metadata|expiry|expiration)\b`)
	// reIdentifies: the parameter names the key or token a tool acts on
	// ("Access Key of the Spaces key to retrieve"), not its secret.
	reIdentifies = regexp.MustCompile(`(?i)\bof\s+the\s+(?:[\w-]+\s+){0,3}?(?:key|token|secret|credential|password)s?\s+to\s+(?:retrieve|get|delete|update|remove|revoke|rotate|look\s+up|fetch|read|describe|disable|enable)\b`)
	// reNotTheSecret: the description says the parameter is not the
	// secret itself ("never the password itself", "not the secret value").
	reNotTheSecret = regexp.MustCompile(`(?i)\b(?:never|not)\s+(?:the|a|an|your)\s+(?:actual\s+|raw\s+)?(?:password|passphrase|secret|token|key|credential|api\s+key)s?(?:\s+(?:itself|value|values))?\b`)
)

// issuedToken reports whether a token-named parameter holds a value the
// server issued to the model, by its name or its own description.
func issuedToken(p param) bool {
	ws := words(p.name)
	if len(ws) == 0 || ws[len(ws)-1] != "token" {
		// approval_password is the user's password, however named.
		return false
	}
	for _, w := range ws {
		if issuedQualifiers[w] {
			return true
		}
	}
	return reIssued.MatchString(p.desc + " " + p.title)
}

// notACredential reports whether a parameter's own text says it is not a
// secret the user supplies: the name or identifier of one, a value the
// server issued, or expressly not the secret itself.
func notACredential(p param) bool {
	text := p.desc + " " + p.title
	return reAboutDesc.MatchString(p.desc) || issuedToken(p) || reNotTheSecret.MatchString(text) || reIdentifies.MatchString(text)
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
	reCredentialDesc = regexp.MustCompile(`(?i)^(?:the\s+|your\s+|a\s+|an\s+|user'?s?\s+)?(?:[\w-]+\s+){0,2}?(?:password|passphrase|api[\s_-]?key|secret(?:\s+key)?|private\s+key|seed\s+phrase|recovery\s+phrase|mnemonic|(?:access|auth(?:entication)?|bearer|api|personal\s+access|session|refresh|bot)\s+token|credentials?|ssh\s+key)\b|\byour\s+(?:[\w-]+\s+){0,2}?(?:password|passphrase|api[\s_-]?key|secret\s+key|private\s+key|seed\s+phrase|recovery\s+phrase|mnemonic|(?:access|auth(?:entication)?|bearer|api|personal\s+access|session|refresh|bot)\s+token|credentials|ssh\s+key)\b|\bvalue\s+(?:to\s+(?:set|store|save|use)\s+)?(?:of|for)\s+(?:the|a|an|this|your)\s+(?:new\s+)?(?:secret|password|passphrase|api[\s_-]?key|(?:access|auth|api)\s+token|credential)s?\b`)
	reAboutDesc      = regexp.MustCompile(`(?i)^\s*(?:the\s+|a\s+|an\s+)?(?:names?|ids?|identifiers?|labels?|arns?|uris?|urls?|paths?|versions?|types?|titles?|references?)\s+(?:of|for)\b`)
	rePaging         = regexp.MustCompile(`(?i)\b(?:page|pagination|paginate|cursor|next|continuation|count|number\s+of|limit|tokens\s+to)\b`)
)

// credentialName reports whether a parameter name asks for a secret.
func credentialName(name string) bool {
	ws := words(name)
	if len(ws) == 0 {
		return false
	}
	for _, w := range ws {
		if aboutWords[w] {
			return false
		}
	}
	if len(ws) > 1 && switchVerbs[ws[0]] {
		// check_secrets, include_tokens: whether to act on secrets.
		return false
	}
	if credentialWords[strings.Join(ws, "")] || secretWords(ws) {
		return true
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

// exempt is the server-wide set of parameter names (with their type)
// whose own text, on any tool, says they are not a credential: the same
// parameter is judged the same on every tool of a server, whatever the
// incidental wording of each description.
type exempt map[string]bool

func paramKey(p param) string { return strings.ToLower(p.name) + "\x00" + strings.Join(p.types, ",") }

// credentialExemptions are what a server's surface says of its parameters
// as a whole: the names its text says are no credential, and whether a
// token is one of its assets (a crypto-currency server's quoteToken).
type credentialExemptions struct {
	names exempt
	// assetTokens: the server's own tools are named for tokens as things
	// it works on (get_token_balances, filter_tokens), not for access
	// tokens, so "...Token" names an asset there.
	assetTokens bool
}

// authWords make a tool named for tokens a tool about access tokens.
var authWords = map[string]bool{"access": true, "auth": true, "authorization": true, "refresh": true, "api": true, "bearer": true,
	"session": true, "oauth": true, "jwt": true, "personal": true, "id": true, "login": true, "credential": true, "credentials": true,
	"secret": true, "revoke": true}

func assetTokenServer(tools []toolInfo) bool {
	for _, ti := range tools {
		ws := words(ti.tool.Name)
		token, auth := false, false
		for _, w := range ws {
			token = token || w == "token" || w == "tokens"
			auth = auth || authWords[w]
		}
		if token && !auth {
			return true
		}
	}
	return false
}

// reAssetToken: a token-named parameter's text places it among assets.
var reAssetToken = regexp.MustCompile(`(?i)\b(?:addresse?s?|contract|erc-?20|spl|swaps?|liquidity|pairs?|price|token[01]|base\s+token|quote\s+token|mint|chain|network\s*id|networkid|symbol|coins?|currenc(?:y|ies)|assets?|dex|pools?|amount)\b`)

// tokenOnly reports whether a name asks for a credential only by ending
// in "token" (quoteToken), not by a secret word or pair (apiToken is a
// pair; "token" alone is left to its text).
func tokenOnly(name string) bool {
	ws := words(name)
	return len(ws) >= 2 && ws[len(ws)-1] == "token" && !secretWords(ws)
}

// secretWords reports whether words hold a secret word (password) or a
// secret pair (api key, access token).
func secretWords(ws []string) bool {
	for _, w := range ws {
		if credentialWords[w] {
			return true
		}
	}
	for i := 0; i+1 < len(ws); i++ {
		if credentialPairs[ws[i]+" "+ws[i+1]] {
			return true
		}
	}
	return false
}

func exemptions(tools []toolInfo, prompts [][]param) credentialExemptions {
	ex := credentialExemptions{names: exempt{}, assetTokens: assetTokenServer(tools)}
	note := func(ps []param) {
		for _, p := range ps {
			if notACredential(p) {
				ex.names[paramKey(p)] = true
			}
		}
	}
	for _, ti := range tools {
		note(ti.params)
		// A parameter the schema leaves undescribed may be described in
		// the tool's docstring ("Args: token: A ref://<id> token exactly
		// as it appeared in search results").
		for _, p := range ti.params {
			if p.desc == "" && path.Dir(p.field) == "input_schema/properties" {
				if p.desc = docLine(ti.tool.Description, p.name); p.desc != "" && notACredential(p) {
					ex.names[paramKey(p)] = true
				}
			}
		}
	}
	for _, ps := range prompts {
		note(ps)
	}
	return ex
}

// docLine returns what a docstring's argument list says of a parameter:
// the text after "name:" (or "name (type):") at the start of a line, up
// to the line's end.
func docLine(desc, name string) string {
	if !strings.Contains(desc, name+":") && !strings.Contains(desc, name+" (") {
		return ""
	}
	for _, l := range strings.Split(desc, "\n") {
		l = strings.TrimSpace(l)
		rest, ok := strings.CutPrefix(l, name)
		if !ok {
			continue
		}
		rest = strings.TrimSpace(rest)
		if strings.HasPrefix(rest, "(") {
			if i := strings.IndexByte(rest, ')'); i > 0 {
				rest = strings.TrimSpace(rest[i+1:])
			}
		}
		if after, ok := strings.CutPrefix(rest, ":"); ok {
			return strings.TrimSpace(after)
		}
	}
	return ""
}

func checkCredentialParams(out *findings, kind, subject string, ps []param, ex credentialExemptions) {
	for _, p := range ps {
		if nonSecretType(p.types) || ex.names[paramKey(p)] || keyIDHalf(p, ps) {
			continue
		}
		if tokenOnly(p.name) && (ex.assetTokens || reAssetToken.MatchString(p.desc+" "+p.title)) {
			// quoteToken, priceBaseToken: a currency's token.
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
		case credentialName(p.name) && reAboutDesc.MatchString(p.desc):
			// "secret": "The name of the secret." names it.
			continue
		case credentialName(p.name):
			if words(p.name)[len(words(p.name))-1] == "token" && len(words(p.name)) == 1 && rePaging.MatchString(p.desc) {
				continue
			}
			out.add(Finding{Code: CodeParamCredential, Kind: kind, Subject: subject, Field: nameField,
				Evidence: evidence(p.name, 0, len(p.name)),
				Message:  fmt.Sprintf("Parameter %q asks for a credential by name: the secret passes through the model's context.", p.name)})
		default:
			if !(&detector{any: anySecret}).mayMatch(strings.ToLower(p.desc + " " + p.title)) {
				continue
			}
			for _, t := range []struct{ field, text string }{{"/description", p.desc}, {"/title", p.title}} {
				m := reCredentialDesc.FindStringIndex(t.text)
				if m == nil || aboutName(p.name) || reIdentifierAfter.MatchString(t.text[m[1]:]) {
					// "Array of SSH key IDs or fingerprints": identifiers.
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

// keyIDHalf reports whether p is the access key of a key pair whose
// secret half is a sibling (accessKey beside secretKey, access_key_id
// beside secret_access_key): the access key identifies the pair, and the
// secret half is the one reported.
func keyIDHalf(p param, ps []param) bool {
	ws := words(p.name)
	if len(ws) < 2 || ws[0] != "access" || ws[1] != "key" {
		return false
	}
	parent := path.Dir(p.field)
	for _, q := range ps {
		if q.field == p.field || path.Dir(q.field) != parent {
			continue
		}
		if qs := words(q.name); len(qs) >= 2 && qs[0] == "secret" && (qs[len(qs)-1] == "key" || qs[len(qs)-1] == "secret") {
			return true
		}
	}
	return false
}

func aboutName(name string) bool {
	for _, w := range words(name) {
		if aboutWords[w] {
			return true
		}
	}
	return false
}

// remoteScope names places environment variables live other than the
// server's own process.
const remoteScope = `\b(?:project|projects|deployment|deployments|repository|repo|site|app|application|service|workspace|cluster|container|pod|function|lambda|secret\s+manager|vault|vercel|netlify|heroku|railway|render|github\s+actions|codespace|pipeline|job|runner|database|db|instance|resource|stack)s?\b`

var (
	reEnvDesc    = regexp.MustCompile(`(?i)\b(?:returns?|prints?|lists?|dumps?|shows?|displays?|exposes?|reads?|gets?|retrieves?|outputs?|reveals?|fetch(?:es)?|provides?|echo(?:es)?)\s+(?:all\s+|the\s+|every\s+|any\s+|an\s+|a\s+)?(?:of\s+the\s+)?(?:[\w-]+\s+){0,2}?(?:environment\s+variables?|env\s+vars?|env\s+variables?)\b|\bprocess\.env\b|\bos\.environ\b|\bprintenv\b`)
	reLocalEnv   = regexp.MustCompile(`(?i)\b(?:server|current|running|this|its\s+own|the\s+mcp\s+server'?s?)\s+process(?:'s)?\b|\bprocess\s+environment\b|\bprocess\.env\b|\bos\.environ\b|\bprintenv\b|\bthe\s+server'?s\s+environment\b`)
	reRemoteEnv  = regexp.MustCompile(`(?i)\b(?:environment\s+variables?|env\s+vars?|env\s+variables?)\s+(?:(?:of|for|in|from|on|set\s+(?:on|for|in)|configured\s+(?:on|for|in)|stored\s+in|defined\s+(?:on|for|in))\s+)(?:(?:a|an|the|your|this|that|each|every|all|its|their)\s+)?(?:[\w.-]+\s+){0,2}?` + remoteScope + `|` + remoteScope + `(?:'s)?\s+(?:[\w-]+\s+)?(?:environment\s+variables?|env\s+vars?|env\s+variables?)`)
	envNameWords = map[string]bool{"env": true, "environ": true, "environment": true, "envs": true, "dotenv": true, "printenv": true, "envvars": true}
)

func checkEnvironment(out *findings, ti toolInfo) {
	t := ti.tool
	if !strings.Contains(strings.ToLower(t.Name+" "+t.Description), "env") {
		return
	}
	if m := reEnvDesc.FindStringIndex(t.Description); m != nil {
		// "the environment variables of a Vercel project" are elsewhere;
		// "every environment variable of the server process, for
		// debugging a deployment" are not: a scope word cancels only when
		// it is where the variables are, and never against a plain
		// statement that they are the process's own.
		if !reLocalEnv.MatchString(t.Description) && reRemoteEnv.MatchString(t.Description) {
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
	for _, w := range words(t.Name) {
		if envNameWords[w] {
			out.add(Finding{Code: CodeCapabilityEnv, Kind: KindTool, Subject: t.Name, Field: "name",
				Evidence: evidence(t.Name, 0, len(t.Name)),
				Message:  fmt.Sprintf("Tool %q is named for the environment and has no description to say it returns anything else; %s.", t.Name, annotationsSay(t))})
			return
		}
	}
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
	rePathDesc   = regexp.MustCompile(`(?i)\b(?:file|directory|folder)\s+paths?\b|\bpaths?\s+(?:to|of)\s+(?:a|an|the)?\s*(?:local\s+)?(?:file|directory|folder)s?\b|\babsolute\s+paths?\b|\b(?:local\s+)?file\s*system\s+paths?\b`)
	reRemoteDesc = regexp.MustCompile(`(?i)\b(?:repository|repositories|repo|github|gitlab|bitbucket|bucket|s3|gcs|google\s+drive|dropbox|onedrive|sharepoint|remote|ftp|sftp|container|pod|cloud\s+storage|blob|gist|wiki|cdn)\b`)
	// serverConfinedWords: one of them is in every match of reServerConfined.
	serverConfinedWords = []string{"allowed", "permitted", "authori", "approved", "whitelisted", "allowlisted", "client"}
	reServerConfined    = regexp.MustCompile(`(?i)\b(?:allowed|permitted|authori[sz]ed|approved|whitelisted|allowlisted)\s+(?:director(?:y|ies)|folders|paths|roots|locations)\b|\ballowedDirectories\b|\bclient\s+roots\b`)
	reConfined          = regexp.MustCompile(`(?i)\b(?:allowed|permitted|authori[sz]ed|configured|approved|whitelisted|allowlisted)\s+(?:director(?:y|ies)|folders?|paths?|roots?|locations?)\b|\b(?:only|must\s+be|restricted|limited|confined|sandboxed|scoped)\b[^.\n]{0,40}?\b(?:within|inside|under|to)\b[^.\n]{0,40}?\b(?:director(?:y|ies)|folders?|paths?|roots?|workspace|project|sandbox)\b|\ballowed\s+to\s+access\b|\bworkspace\s+roots?\b|\bclient\s+roots\b`)
	// reRelativeRoot: a path its text resolves against the server's root
	// ("File path (relative to root)", "relative to your vault root"): a
	// bound, when the root is the server's and not another argument of the
	// tool; the file system's root is none.
	reRelativeRoot = regexp.MustCompile(`(?i)\brelative\s+to\s+(?:the\s+|your\s+|its\s+)?(?:(?:project|workspace|repo(?:sitory)?|vault|notebook|site|docs?|documentation|app|server)\s+)?root\b`)
)

// endpointWords name the two ends of a copy or move; in a tool named for
// files or directories they are paths.
var endpointWords = map[string]bool{"source": true, "src": true, "destination": true, "dest": true, "target": true, "from": true, "to": true}

// transferWords name a tool that moves a file between the host and
// elsewhere: its input or output is a host path when its text says the
// file is local.
var transferWords = map[string]bool{"upload": true, "download": true, "attach": true, "import": true, "export": true, "save": true}

// outputWords, in a tool named for a transfer, name where its result goes
// or what it reads.
var outputWords = map[string]bool{"output": true, "out": true, "save": true, "input": true, "local": true, "destination": true,
	"dest": true, "source": true, "src": true, "target": true}

var (
	// reFileWords: a description that speaks of things on a filesystem.
	reFileWords = regexp.MustCompile(`(?i)\b(?:files?|director(?:y|ies)|folders?|dirs?|disk|file\s*system|local|absolute|relative|working\s+directory)\b`)
	// reNotHostPath: text that places a path-named parameter elsewhere.
	reNotHostPath = regexp.MustCompile(`(?i)\b(?:from|in)\s+(?:the\s+)?(?:cdn|cache)\b|\bglob\s+patterns?\b|\bpatterns?\s+to\s+(?:limit|match|filter|exclude|include|select)\b|\bcommits?\b|\bdot\s+notation\b|\bfields?\b|\bjson\s*(?:path|pointer)\b|\bx\s*path\b|\bnamespaces?\b|\b(?:key|property|object|attribute|api|url|uri|http|request|endpoint|route|resource|document)\s+paths?\b|\broutes?\b|\bcontents?\s+of\s+(?:the|a|an)\s+files?\b|\bnot\s+(?:the|a|its)\s+path\b|\b(?:within|inside|in|from)\s+(?:the|a|an|this|that|its|your)\s+(?:\w+\s+){0,2}(?:topic|bundle|archive|zip|tarball|repository|repo|bucket|upload|deployment|container|image|docs|documentation|collection|database|index|notebook|wiki|site|vault)s?\b|\bentry\s*point\b`)
	reRelative    = regexp.MustCompile(`(?i)\brelative\s+to\s+(?:the\s+)?(?:project|workspace|root|repo|repository)`)
	// reProductFolder: a folder of a product, not of the host's file
	// system (a dashboard folder, a mail folder, a drive folder).
	reProductFolder = regexp.MustCompile(`(?i)\b(?:dashboard|mail|e-?mail|inbox|mailbox|message|bookmark|note|album|photo|playlist|board|channel|drive|cloud|team|organi[sz]ation|org|library|collection|feed|label|category|grafana|outlook|gmail|imap|onedrive|sharepoint|confluence|notion|jira)s?\s+folders?\b|\bfolders?\s+(?:in|of|within|inside|on)\s+(?:the\s+|a\s+|your\s+)?(?:\w+\s+){0,2}?(?:dashboard|mailbox|inbox|account|grafana|outlook|gmail|drive|organi[sz]ation|site|library)s?\b|\bfolder\s+(?:uid|id|name|title)\b`)
	// reHostFileWords: a description that puts a path on a file system,
	// other than by the word folder, which products use too.
	reHostFileWords = regexp.MustCompile(`(?i)\b(?:files?|director(?:y|ies)|dirs?|disk|file\s*system|local|absolute|relative|working\s+directory|on\s+(?:the|this|your)\s+(?:machine|computer|host|server))\b|\b(?:full|absolute)\s+path\b`)
	// reLocal: the parameter's own text says the file is on the host.
	// reOtherMachine: the text puts the path on another machine the tool
	// manages (a registered server, a VM, a node), not the MCP server's.
	reOtherMachine = regexp.MustCompile(`(?i)\bon\s+the\s+(?:registered\s+|remote\s+|target\s+|managed\s+)?(?:server|vm|virtual\s+machine|node|instance|device)\b`)
	reMCPHost      = regexp.MustCompile(`(?i)\bmcp\s+server\b|\bmachine\s+running\b`)
	reLocal        = regexp.MustCompile(`(?i)\blocal\s+(?:file|path|director(?:y|ies)|folder|disk|file\s*system)|\b(?:on|to|from)\s+(?:the\s+)?(?:local\s+)?(?:disk|file\s*system)\b|\bon\s+(?:the|this|your)\s+(?:machine|computer|host)\b|\babsolute\s+paths?\b`)
	reCombinator   = regexp.MustCompile(`^(?:(?:anyOf|oneOf|allOf)/\d+/)*properties/[^/]+$`)
)

// topLevel reports whether a parameter's field is an argument of the tool
// itself, not a property of an object inside one.
func topLevel(field string) bool {
	rest, ok := strings.CutPrefix(field, "input_schema/")
	return ok && reCombinator.MatchString(rest)
}

// hostPath reports whether p is a caller-chosen path on the host of tool t.
func hostPath(t contract.Tool, p param) bool {
	if !topLevel(p.field) {
		return false
	}
	if p.format != "" && strings.Contains(strings.ToLower(p.format), "ur") {
		return false
	}
	str := len(p.types) == 0
	for _, ty := range p.types {
		if ty == "string" || ty == "array:string" {
			str = true
		}
	}
	if !str {
		return false
	}
	ws := words(p.name)
	for _, w := range ws {
		if urlWords[w] {
			return false
		}
	}
	text := strings.TrimSpace(p.desc + " " + p.title)
	named := len(ws) > 0 && pathWords[ws[len(ws)-1]]
	if !named && len(ws) == 1 && endpointWords[ws[0]] {
		for _, w := range words(t.Name) {
			if pathWords[w] {
				named = true
			}
		}
	}
	// In a tool that uploads, downloads, imports, exports or saves, an
	// input or output its own text calls a local file is a host path,
	// however it is named (save_to, output, source).
	if !named && localText(text) && transferTool(t) {
		for _, w := range ws {
			if outputWords[w] || endpointWords[w] {
				named = true
			}
		}
	}
	if lower := strings.ToLower(text); !named && !strings.Contains(lower, "path") {
		// Neither the name nor the text says path.
		return false
	}
	if reNotHostPath.MatchString(text) || reProductFolder.MatchString(text) {
		return false
	}
	if rePathDesc.MatchString(text) {
		return true
	}
	if named && folderOnly(ws) {
		// "folder" alone is a product's as often as the host's: the text
		// must put it on a file system.
		return reHostFileWords.MatchString(text)
	}
	return named && (text == "" || reFileWords.MatchString(text))
}

// localText reports whether a parameter's text puts its path on the MCP
// server's own host: "local", "on disk", "on the machine running the MCP
// server"; not "the local folder path on the server", a server the tool
// manages.
func localText(text string) bool {
	return reLocal.MatchString(text) && (!reOtherMachine.MatchString(text) || reMCPHost.MatchString(text))
}

// rootArgument reports whether a tool takes its root as an argument
// (projectRoot, rootPath): a path relative to it is as free as the root.
func rootArgument(ti toolInfo) bool {
	for _, p := range ti.params {
		for _, w := range words(p.name) {
			if w == "root" {
				return true
			}
		}
	}
	return false
}

// pathCandidate reports whether hostPath could take p for a path at all:
// its name is a path's, an end of a copy or a transfer's input or output,
// or its text says path. Only those need the expressions that place a
// path elsewhere.
func pathCandidate(p param) bool {
	for _, w := range words(p.name) {
		if pathWords[w] || endpointWords[w] || outputWords[w] {
			return true
		}
	}
	return strings.Contains(strings.ToLower(p.desc+" "+p.title), "path")
}

// transferTool reports whether a tool is named for moving files between
// the host and elsewhere.
func transferTool(t contract.Tool) bool {
	for _, w := range words(t.Name) {
		if transferWords[w] {
			return true
		}
	}
	return false
}

// folderOnly reports whether a path-named parameter is named only as a
// folder (folder, folders, folder_path's path excepted).
func folderOnly(ws []string) bool {
	last := ws[len(ws)-1]
	return last == "folder" || last == "folders" || len(ws) >= 2 && (last == "path" || last == "paths") && strings.HasPrefix(ws[len(ws)-2], "folder")
}

// containsAny reports whether s holds one of the words.
func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// pathRank orders the host paths of a tool for the evidence: one its text
// calls a path over one only named as one, and either over one relative to
// another parameter.
func pathRank(p param) int {
	r := 1
	if rePathDesc.MatchString(p.desc + " " + p.title) {
		r = 2
	}
	if reRelative.MatchString(p.desc) {
		r -= 2
	}
	return r
}

func checkArbitraryPath(out *findings, c *contract.Contract, tools []toolInfo) {
	type hit struct {
		ti *toolInfo
		p  param
	}
	var hits []hit
	// A parameter whose text places it elsewhere on one tool (a field in
	// dot notation, a dashboard folder) is the same parameter on every
	// tool of the server that has it, whatever each description's wording.
	elsewhere := exempt{}
	for _, ti := range tools {
		for _, p := range ti.params {
			if text := p.desc + " " + p.title; topLevel(p.field) && pathCandidate(p) && (reNotHostPath.MatchString(text) || reProductFolder.MatchString(text)) {
				elsewhere[paramKey(p)] = true
			}
		}
	}
	for i := range tools {
		ti := &tools[i]
		var found *param
		remote := false
		for j, p := range ti.params {
			if !topLevel(p.field) {
				continue
			}
			for _, w := range words(p.name) {
				if remoteWords[w] {
					remote = true
				}
			}
			// The first host path, preferring one its description calls a
			// path, then one that is not relative to another parameter (a
			// project root).
			if !elsewhere[paramKey(p)] && hostPath(ti.tool, p) && (found == nil || pathRank(p) > pathRank(*found)) {
				found = &ti.params[j]
			}
		}
		if found == nil {
			continue
		}
		// A tool on a remote store (a bucket, a drive, a repository) takes
		// paths in that store, unless the path's own text puts it on the
		// host (an upload's local file, a download's save path).
		if (remote || reRemoteDesc.MatchString(ti.tool.Description+" "+ti.tool.Title)) && !localText(found.desc+" "+found.title) {
			continue
		}
		hits = append(hits, hit{ti, *found})
	}
	if len(hits) == 0 {
		return
	}
	// A confinement stated by the server's instructions is the server's,
	// and so is a server-wide mechanism named by any of its tools
	// (server-filesystem's "Only works within allowed directories", its
	// list_allowed_directories, Desktop Commander's allowedDirectories).
	// A bound one tool states for its own parameter ("relative to the
	// workspace root") is that tool's.
	if reConfined.MatchString(c.Instructions) {
		return
	}
	for _, ti := range tools {
		text := strings.Join(ti.texts, "\n")
		if lower := strings.ToLower(text); containsAny(lower, serverConfinedWords) && reServerConfined.MatchString(text) ||
			len(ti.params) == 0 && reConfined.MatchString(text) {
			return
		}
	}
	for _, h := range hits {
		// A bound the tool's own texts state, or the parameter's own text:
		// a path resolved against the server's root, when the root is not
		// an argument of the tool (typescript-mcp's tools take root as
		// one, so their paths are as free as it is).
		if reConfined.MatchString(strings.Join(h.ti.texts, "\n")) ||
			reRelativeRoot.MatchString(h.p.desc+" "+h.p.title) && !rootArgument(*h.ti) {
			continue
		}
		p, name := h.p, h.ti.tool.Name
		f := Finding{Code: CodeCapabilityPath, Kind: KindTool, Subject: name, Field: p.field,
			Evidence: evidence(p.name, 0, len(p.name)),
			Message: fmt.Sprintf("Tool %q takes a path on the server's host in parameter %q, and the surface states no confinement "+
				"(allowed directories, workspace roots) on the tool or the server; whether the server enforces one is not visible in the contract.", name, p.name)}
		if p.desc != "" {
			f.Field, f.Evidence = p.field+"/description", evidence(p.desc, 0, len(p.desc))
		}
		out.add(f)
	}
}

// The server's own configuration.
//
// A resource or tool that hands the model the server's own configuration
// gives it what the operator configured the server with: options the
// operator chose, and, where the server takes them as configuration,
// connection strings and keys. It is reported when the surface says so:
// a resource under the config: scheme, or a resource or tool whose text
// says it returns the server's configuration ("Server configuration,
// supplied by the user either as environment variables or as startup
// arguments"; "Get the complete server configuration as JSON"), and a
// tool named for nothing but getting its configuration (get_config).
// Not the configuration of something the server manages (a PostgreSQL
// server, a Supabase project, an App Service), which is its data.
var (
	reOwnConfig   = regexp.MustCompile(`(?i)\b(?:the\s+)?(?:complete\s+|current\s+|full\s+|active\s+|effective\s+|running\s+)?(?:mcp\s+)?server'?s?\s+(?:own\s+)?(?:configuration|config|settings)\b|\b(?:its|this\s+(?:mcp\s+)?server'?s)\s+(?:own\s+)?(?:current\s+)?(?:configuration|config|settings)\b|\b(?:configuration|config|settings)\s+of\s+(?:this|the)\s+mcp\s+server\b`)
	reOtherConfig = regexp.MustCompile(`(?i)\b(?:of|for)\s+(?:a|an|the|this|that|each|your)\s+(?:[\w-]+\s+){0,3}?(?:server|instance|database|project|app|application|service|cluster|site|store|vault|account|resource|deployment|repository|workspace)\b|\b(?:sql|mysql|postgres(?:ql)?|mongo(?:db)?|redis|flexible|database|db|web|app|application|api|game|minecraft|media|build|proxy|dns|mail|smtp|ftp|ssh|file|git|lsp|language)\s+server'?s?\s+(?:configuration|config|settings)\b`)
	configWords   = map[string]bool{"config": true, "configuration": true, "settings": true, "conf": true}
	getWords      = map[string]bool{"get": true, "read": true, "show": true, "dump": true, "view": true, "print": true, "fetch": true, "current": true}
)

// ownConfigName reports whether a tool is named for nothing but getting
// its configuration: get_config, getConfig, show-settings.
func ownConfigName(name string) bool {
	ws := words(name)
	return len(ws) == 2 && getWords[ws[0]] && configWords[ws[1]] || len(ws) == 1 && configWords[ws[0]]
}

func ownConfigText(text string) (int, int, bool) {
	m := reOwnConfig.FindStringIndex(text)
	if m == nil || reOtherConfig.MatchString(text) {
		return 0, 0, false
	}
	return m[0], m[1], true
}

func checkConfiguration(out *findings, c *contract.Contract, tools []toolInfo) {
	report := func(kind, subject, field, text string, start, end int, what string) {
		out.add(Finding{Code: CodeCapabilityConfig, Kind: kind, Subject: subject, Field: field,
			Evidence: evidence(text, start, end),
			Message: fmt.Sprintf("%s returns the server's own configuration, which holds what the operator started it with; "+
				"whether credentials in it are redacted is not visible in the contract.", what)})
	}
	for _, r := range c.Resources {
		what := fmt.Sprintf("Resource %q", r.URI)
		if s, e, ok := ownConfigText(r.Description); ok {
			report(KindResource, r.URI, "description", r.Description, s, e, what)
			continue
		}
		if scheme, _, ok := strings.Cut(r.URI, "://"); ok && strings.EqualFold(scheme, "config") && !reOtherConfig.MatchString(r.Description) {
			report(KindResource, r.URI, "uri", r.URI, 0, len(r.URI), what)
		}
	}
	for _, ti := range tools {
		t := ti.tool
		what := fmt.Sprintf("Tool %q", t.Name)
		if !ownConfigName(t.Name) {
			continue
		}
		if s, e, ok := ownConfigText(t.Description); ok {
			report(KindTool, t.Name, "description", t.Description, s, e, what)
		} else if strings.TrimSpace(t.Description) == "" {
			report(KindTool, t.Name, "name", t.Name, 0, len(t.Name), what)
		}
	}
}
