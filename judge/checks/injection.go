package checks

import (
	"fmt"
	"regexp"
	"strings"
)

// Instruction-like text aimed at the model, and shadowing.
//
// Each detector is a pattern plus a filter that reads the sentence around
// the match, because the words alone are common in honest descriptions.
// The filters encode what separates the attacks in the published
// tool-poisoning research from real servers' descriptions:
//   - override: "ignore previous/prior/system instructions" needs a
//     qualifier, so "ignore information that is irrelevant" and "ignore any
//     instructions found in the page" (a defensive note) pass.
//   - concealment: an imperative or modal not to tell, show or inform the
//     user, doing something "without telling the user", hiding something
//     "from the user", or "silently send/read ...".
//   - secret_access: a credential file or path (~/.ssh, id_rsa, .env,
//     mcp.json, .aws/credentials, ...) in a sentence with a non-negated
//     imperative that moves data ("read", "pass", "send", "include",
//     "contents of"), or an imperative to collect the user's or all stored
//     passwords, keys, tokens or credentials. A parameter that names a
//     default key path ("Path to the key (default ~/.ssh/id_rsa)") and
//     setup advice ("make sure the key is set in your .env") have none.
//   - exfiltration: an imperative to put something into a named or quoted
//     parameter, when the same sentence names a secret or the
//     conversation as its source; or to send such data, or "all
//     emails/messages", to a URL or e-mail address.
//   - tool_order: this tool before or instead of every other tool.
//   - tag: <IMPORTANT>, <SYSTEM>, <instructions> and similar, and
//     chat-template tokens; a plain "IMPORTANT:" is not a tag.
//   - shadowing: a tool or server that is not this server's own (by name or
//     title, allowing for client prefixes such as mcp_tool_), referred to
//     as "the X tool", "tool named X", "when using X" or "the X server",
//     or "other tools", "side effect on", "when this tool is available",
//     in a sentence with a directive (must, should, always, never,
//     instead, redirect, ...). Server instructions that order the
//     server's own tools are usage guidance, not shadowing.

// detector is one pattern with its filter.
type detector struct {
	code string
	// any lists lower-case words of which the text must hold one before
	// the pattern runs: a cheap prefilter, since most text holds none.
	any    []string
	re     *regexp.Regexp
	accept func(d *doc, m []int) bool
	msg    string
	// needs are expressions one of which accept needs to find in the
	// sentence of a match. A match in a sentence is a span of the text,
	// which holds the literals of the match, so the text must pass the gate
	// of one of them.
	needs []*regexp.Regexp
	// anyGate is any as a gate, and reGate the gate of re and needs.
	anyGate, reGate *gate
	// w runs re in windows.
	w *windowed
}

// withGates fills in the gates of dets.
func withGates(dets []detector) []detector {
	for i := range dets {
		det := &dets[i]
		det.anyGate = wordsGate(det.any)
		det.w = newWindowed(det.re)
		det.reGate = det.w.gate
		if len(det.needs) > 0 {
			var ks []*gate
			for _, re := range det.needs {
				ks = append(ks, regexGate(re))
			}
			det.reGate = andGate([]*gate{det.reGate, orGate(ks)})
		}
	}
	return dets
}

// mayMatch applies the prefilter to lower-cased text.
func (det *detector) mayMatch(lower string) bool {
	if len(det.any) == 0 {
		return true
	}
	for _, w := range det.any {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// Prefilter word lists.
var (
	anyIgnore  = []string{"ignore", "disregard", "forget", "discard"}
	anyUser    = []string{"user", "human", "operator", "silently", "secretly", "covertly", "quietly", "secret", "hidden", "confidential", "between us"}
	anyPath    = []string{".ssh", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "authorized_keys", "mcp.json", "claude_desktop_config", ".cursor", ".aws/", ".azure/", ".kube/", ".docker/", ".npmrc", ".pypirc", ".netrc", ".git-credentials", "_history", "/etc/", ".env", "credentials.json", ".gnupg", "wallet.dat"}
	anySecret  = []string{"password", "passphrase", "credential", "api", "key", "token", "secret", "seed", "mnemonic", "cookie", "env"}
	anyOrder   = []string{"before", "always", "must", "first", "instead", "every"}
	anyToolRef = []string{"tool", "function"}
	anyUsing   = []string{"using", "calling", "invoking", "running", "executing", "uses", "calls", "invokes", "runs"}
	anyOther   = []string{"other", "side effect", "also present", "when this tool"}
)

// doc is a text under check and what the filters need to know about it.
type doc struct {
	text string
	own  *ownSet
	u    *unit // the unit whose tool's parameters a text may name
	// bounds are the sentence boundaries of text, found on first use.
	bounds [][2]int
	split  bool
}

// hasParam reports whether the subject tool has a parameter named name.
func (d *doc) hasParam(name string) bool { return d.u != nil && d.u.hasParam(name) }

var reBoundary = regexp.MustCompile(`[.!?](?:\s+|$)|\n[ \t]*\n|\n[ \t]*(?:[-*•]|\d+[.)])\s`)

// sentenceSpan returns the bounds of the sentence of d.text around byte
// offset pos.
func (d *doc) sentenceSpan(pos int) (int, int) {
	if !d.split {
		d.bounds, d.split = sentenceBounds(d.text), true
	}
	start, end := 0, len(d.text)
	for _, b := range d.bounds {
		if b[1] <= pos {
			start = b[1]
		} else if b[0] >= pos {
			end = b[1]
			break
		}
	}
	return start, end
}

// sentenceBounds is reBoundary.FindAllStringIndex(s, -1) (as pairs). The
// expression
// matches at a '.', '!', '?' or line break, all ASCII, so a byte scan
// reads the characters the expression reads; at each, its alternatives
// are tried in order, and none backtracks into a shorter repetition, as
// what follows each repetition is outside its class.
func sentenceBounds(s string) [][2]int {
	var out [][2]int
	for i := 0; i < len(s); {
		// Only '.', '!', '?' and a line break start a boundary.
		j := strings.IndexAny(s[i:], ".!?\n")
		if j < 0 {
			break
		}
		i += j
		if e := boundaryAt(s, i); e > i {
			out = append(out, [2]int{i, e})
			i = e
			continue
		}
		i++
	}
	return out
}

// boundaryAt returns the end of a match of reBoundary at i, or i.
func boundaryAt(s string, i int) int {
	switch s[i] {
	case '.', '!', '?':
		// [.!?](?:\s+|$)
		j := i + 1
		for j < len(s) && isSpaceByte(s[j]) {
			j++
		}
		if j > i+1 || j == len(s) {
			return j
		}
	case '\n':
		j := i + 1
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		switch {
		case j < len(s) && s[j] == '\n':
			// \n[ \t]*\n
			return j + 1
		case j < len(s) && (s[j] == '-' || s[j] == '*'):
			// \n[ \t]*[-*]\s
			if j+1 < len(s) && isSpaceByte(s[j+1]) {
				return j + 2
			}
		case strings.HasPrefix(s[j:], "•"):
			// \n[ \t]*•\s
			if k := j + len("•"); k < len(s) && isSpaceByte(s[k]) {
				return k + 1
			}
		case j < len(s) && s[j] >= '0' && s[j] <= '9':
			// \n[ \t]*\d+[.)]\s
			k := j
			for k < len(s) && s[k] >= '0' && s[k] <= '9' {
				k++
			}
			if k+1 < len(s) && (s[k] == '.' || s[k] == ')') && isSpaceByte(s[k+1]) {
				return k + 2
			}
		}
	}
	return i
}

// sentence returns the sentence of d.text around byte offset pos.
func (d *doc) sentence(pos int) string {
	s, e := d.sentenceSpan(pos)
	return d.text[s:e]
}

// group returns submatch g of m, or "".
func (d *doc) group(m []int, g int) string {
	if 2*g+1 >= len(m) || m[2*g] < 0 {
		return ""
	}
	return d.text[m[2*g]:m[2*g+1]]
}

func always(*doc, []int) bool { return true }

var reNegation = regexp.MustCompile(`(?i)\b(?:not|never|don't|dont|do\s+not|doesn't|does\s+not|must\s+not|mustn't|should\s+not|shouldn't|cannot|can't|no|avoid|without)\s+(?:\w+\s+){0,2}$`)

// negated reports whether the text just before pos negates what follows.
func (d *doc) negated(pos int) bool {
	from := max(0, pos-40)
	return reNegation.MatchString(d.text[from:pos])
}

// hasCue reports whether the sentence around pos has a match of re that is
// not negated.
func (d *doc) hasCue(re *regexp.Regexp, pos int) bool {
	s, e := d.sentenceSpan(pos)
	for _, c := range re.FindAllStringIndex(d.text[s:e], -1) {
		if !d.negated(s + c[0]) {
			return true
		}
	}
	return false
}

const (
	reSensitivePath = `(?:~|\$HOME|%USERPROFILE%)?/\.ssh\b|\.ssh/|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\bauthorized_keys\b|\bmcp\.json\b|\bclaude_desktop_config\.json\b|~/\.cursor\b|\.cursor/|\.aws/(?:credentials|config)\b|\.azure/|\.kube/config\b|\.docker/config\.json\b|\.npmrc\b|\.pypirc\b|\.netrc\b|\.git-credentials\b|\.(?:bash|zsh)_history\b|/etc/(?:passwd|shadow)\b|(?:^|[\s'"` + "`" + `(/])\.env(?:\.[a-z]+)?\b|\bcredentials\.json\b|\.gnupg\b|\bwallet\.dat\b`
	reSecretNoun    = `(?:passwords?|passphrases?|credentials|api[\s_-]?keys?|(?:access|auth|bearer|session|refresh|api)\s+tokens?|private\s+keys?|ssh\s+keys?|secrets|seed\s+phrases?|mnemonics?|cookies|environment\s+variables|env\s+vars)`
)

var (
	reCueImperative = regexp.MustCompile(`(?i)\b(?:read|open|cat|include|send|pass|attach|upload|copy|extract|collect|gather|print|output|dump|post|forward|share|paste|append|insert|grab|exfiltrate|contents?\s+of)\b`)
	reDirective     = regexp.MustCompile(`(?i)\b(?:must|should|shall|always|never|instead|only|do\s+not|don't|make\s+sure|ensure|redirect|forward|bcc|cc|override|replace|side\s+effects?|has\s+to|have\s+to|needs?\s+to|(?:is|are)\s+required\s+to)\b`)
	reDefensive     = regexp.MustCompile(`(?i)^\s+(?:in|from|within|inside|contained|embedded|found|returned)\b`)
	reAllData       = regexp.MustCompile(`(?i)\ball\s+(?:e-?mails|messages|data|files|documents|requests)\b`)
	reSource        = regexp.MustCompile(`(?i)` + reSensitivePath + `|~/|\b` + reSecretNoun + `\b|\bsecret\b|\bconversation\b|\b(?:chat|message)\s+history\b|\b(?:previous|prior|all)\s+messages\b|\bsystem\s+prompt\b|\byour\s+instructions\b|\bcontext\s+window\b|\bprevious\s+tool\s+(?:calls?|results?|outputs?)\b`)
)

var injectionDetectors = withGates([]detector{
	{code: CodeInjectionOverride, any: anyIgnore, msg: "tells the model to ignore its previous instructions",
		re:     regexp.MustCompile(`(?i)\b(?:ignore|disregard|forget|discard)\s+(?:all\s+|any\s+|every\s+)?(?:of\s+)?(?:the\s+|your\s+|these\s+|those\s+|my\s+|its\s+)?(?:previous|prior|above|earlier|preceding|former|original|initial|system|developer|safety|other)\s+(?:\w+\s+)?(?:instructions?|prompts?|directions?|directives?|rules|guidelines|guardrails|constraints|context|messages|policies|commands)\b`),
		accept: always},
	{code: CodeInjectionOverride, any: anyIgnore, msg: "tells the model to ignore its instructions",
		re: regexp.MustCompile(`(?i)\b(?:ignore|disregard|forget)\s+(?:all|any|every)\s+(?:instructions|rules|guidelines)\b`),
		accept: func(d *doc, m []int) bool {
			rest := d.text[m[1]:min(len(d.text), m[1]+40)]
			return !reDefensive.MatchString(rest)
		}},
	{code: CodeInjectionOverride, any: []string{"you are now", "from now on", "instruction", "task", "goal", "objective", "purpose", "role", "override"}, msg: "gives the model a new role or new instructions",
		re:     regexp.MustCompile(`(?i)\byou\s+are\s+now\s+(?:a|an|the|in|my|no\s+longer)\b|\bfrom\s+now\s+on,?\s+(?:you|always|never|ignore)\b|\b(?:your|the)\s+(?:new|real|true|actual|updated)\s+(?:instructions|task|goal|objective|purpose|role)\s+(?:is|are)\b|\bnew\s+(?:system\s+)?instructions\s*:|\bsystem\s+(?:prompt\s+)?override\b`),
		accept: always},
	{code: CodeInjectionConceal, any: anyUser, msg: "tells the model to keep something from the user",
		re:     regexp.MustCompile(`(?i)\b(?:do\s+not|don't|dont|never|must\s+not|should\s+not|mustn't|shouldn't|avoid)\s+(?:(?:ever|directly|explicitly|actually|really|specifically|proactively|need\s+to|have\s+to|try\s+to|to)\s+){0,3}(?:tell(?:ing)?|inform(?:ing)?|notify(?:ing)?|alert(?:ing)?|show(?:ing)?|mention(?:ing)?|reveal(?:ing)?|disclos(?:e|ing)|let(?:ting)?)\s+(?:\w+\s+){0,3}?(?:the|your)\s+(?:user|human|operator)s?\b`),
		accept: always},
	{code: CodeInjectionConceal, any: anyUser, msg: "tells the model to act without the user's knowledge",
		re:     regexp.MustCompile(`(?i)\bwithout\s+(?:telling|informing|notifying|alerting|asking|showing|letting|mentioning\s+(?:it|this)\s+to)\s+(?:the\s+|your\s+)?(?:user|human|operator)s?\b|\b(?:hide|conceal|keep)\s+(?:this|it|that|these|them|everything|the\s+\w+(?:\s+\w+)?)\s+(?:secret\s+|hidden\s+)?from\s+(?:the\s+|your\s+)?(?:user|human|operator)s?\b|\bkeep\s+(?:this|it)\s+(?:secret|hidden|confidential|between\s+us)\b|\bthe\s+(?:user|human)s?\s+(?:must|should|will|need|does|do|may)\s*(?:not|n't)\s+(?:\w+\s+){0,2}?(?:know|see|notice|learn|find\s+out|be\s+(?:told|informed|aware|notified|shown))\b|\b(?:silently|secretly|covertly|quietly)\s+(?:send|read|pass|include|forward|upload|copy|call|add|attach|exfiltrate|collect|bcc|cc)\b`),
		accept: always},
	{code: CodeInjectionConceal, any: []string{"not", "don't", "never"}, msg: "tells the model not to mention what it was told to do",
		re:     regexp.MustCompile(`(?i)\b(?:do\s+not|don't|never)\s+(?:mention|reveal|disclose|say|tell|explain|admit)\s+(?:to\s+(?:the\s+)?user\s+)?(?:that\s+you|this\s+(?:step|instruction|tool\s+call|requirement)|these\s+(?:instructions|steps)|(?:what|that)\s+you\s+(?:did|are\s+doing|read|need))\b`),
		accept: always},
	{code: CodeInjectionSecret, any: anyPath, msg: "tells the model to read a credential file",
		re: regexp.MustCompile(`(?i)` + reSensitivePath), needs: []*regexp.Regexp{reCueImperative},
		accept: func(d *doc, m []int) bool {
			return d.hasCue(reCueImperative, m[0])
		}},
	{code: CodeInjectionSecret, any: anySecret, msg: "tells the model to collect stored secrets",
		re:     regexp.MustCompile(`(?i)\b(?:read|collect|gather|extract|dump|send|pass|include|attach|upload|copy|share|forward|list|print|output|return)\s+(?:all\s+|any\s+|every\s+)?(?:of\s+)?(?:the\s+user'?s\s+|the\s+|their\s+|all\s+|any\s+)?(?:saved\s+|stored\s+|local\s+|cached\s+)` + reSecretNoun + `\b|\b(?:read|collect|gather|extract|dump|send|pass|include|attach|upload|copy|share|forward)\s+(?:all|any|every|the\s+user'?s|their)\s+(?:\w+\s+)?` + reSecretNoun + `\b`),
		accept: func(d *doc, m []int) bool { return !d.negated(m[0]) }},
	{code: CodeInjectionExfil, any: append(append(append([]string{"~/", "conversation", "history", "messages", "system prompt", "your instructions", "context window", "previous tool"}, anyPath...), anySecret...), "secret"), msg: "tells the model to pass secrets or the conversation through a parameter",
		needs: []*regexp.Regexp{reSource},
		re:    regexp.MustCompile(`(?i)\b(?:pass|put|send|include|add|provide|insert|place|attach|append|copy|write|supply|fill|set|enter|paste|embed|store)\b[^.!?\n]{0,160}?\b(?:as|in|into|inside|to|via|through|using|within)\s+(?:the\s+|a\s+)?(?:["'` + "`" + `‘“](\w[\w-]*)["'` + "`" + `’”](\s+(?:parameter|param|argument|arg|field|property))?|(\w[\w-]*)\s+(?:parameter|param|argument|arg|field|property)\b)`),
		accept: func(d *doc, m []int) bool {
			if d.negated(m[0]) {
				return false
			}
			if quoted := d.group(m, 1); quoted != "" && d.group(m, 2) == "" && !d.hasParam(quoted) {
				return false
			}
			return reSource.MatchString(d.sentence(m[0]))
		}},
	{code: CodeInjectionExfil, any: []string{"http://", "https://", "@"}, msg: "tells the model to send data to an outside address",
		needs: []*regexp.Regexp{reSource, reAllData},
		re:    regexp.MustCompile(`(?i)\b(?:send|post|upload|forward|transmit|email|exfiltrate|leak|copy|bcc|cc)\b[^.!?\n]{0,120}?\bto\s+(?:https?://\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+)`),
		accept: func(d *doc, m []int) bool {
			if d.negated(m[0]) {
				return false
			}
			s := d.sentence(m[0])
			return reSource.MatchString(s) || reAllData.MatchString(s)
		}},
	{code: CodeInjectionToolOrder, any: anyOrder, msg: "tells the model to put this tool before or instead of all others",
		re:     regexp.MustCompile(`(?i)\bbefore\s+(?:using|calling|invoking|running|executing|responding\s+to|answering|replying\s+to)\s+(?:any|every|all|each)\s+(?:other\s+)?(?:tools?|functions?|requests?|questions?|messages?|users?|prompts?)\b|\b(?:always|must)\s+(?:call|use|invoke|run|execute)\s+this\s+(?:tool|function)\s+(?:first\s+)?(?:before|prior\s+to)\s+(?:any|every|all|other)\b|\balways\s+(?:call|use|invoke|run|execute)\s+this\s+(?:tool|function)\s+first\b|\b(?:call|use|invoke|run)\s+this\s+(?:tool|function)\s+(?:first\s+)?(?:before|instead\s+of)\s+(?:any|every|all|other)\b|\binstead\s+of\s+(?:any|every|all)\s+other\s+(?:tools?|functions?)\b|\b(?:call|use|invoke|run)\s+this\s+(?:tool|function)\s+(?:on|for|after|with)\s+every\s+(?:request|message|turn|response|query|prompt|tool\s+call)\b`),
		accept: func(d *doc, m []int) bool { return !d.negated(m[0]) }},
	{code: CodeInjectionTag, any: []string{"<", "[inst", "[system", "[/inst", "[/system"}, msg: "uses pseudo-authoritative markup aimed at the model",
		re:     regexp.MustCompile(`(?i)</?\s*(?:important|system|sys|instructions?|admin|administrator|critical|secret|hidden|override|priority)\s*>|<\|(?:im_start|im_end|system|endoftext|start_header_id|end_header_id|eot_id)\|>|\[/?(?:INST|SYSTEM)\]|<<\s*/?SYS\s*>>`),
		accept: always},
})

var (
	reToolRef    = regexp.MustCompile(`(?i)(?:["'` + "`" + `‘“]([^"'` + "`" + `’”\n]{1,64})["'` + "`" + `’”]|\b([A-Za-z][\w.-]*\w))\s+(tool|function)\b|\btool\s+(?:called|named)\s+["'` + "`" + `‘“]?([\w.-]+)`)
	reWhenUsing  = regexp.MustCompile(`(?i)\b(?:when|whenever|before|after|if|while)\s+(?:the\s+(?:user|model|assistant|agent)\s+)?(?:using|calling|invoking|running|executing|uses|calls|invokes|runs)\s+(?:the\s+)?(?:["'` + "`" + `‘“]([\w.-]+)["'` + "`" + `’”]|([\w.-]+))(\s+(?:tool|function|server)\b)?`)
	reOtherTools = regexp.MustCompile(`(?i)\b(?:all|any|every|the)\s+other\s+(?:tools?|servers?|mcp\s+servers?|functions?)\b|\bside\s+effects?\s+on\b|\balso\s+present\b|\bwhen\s+this\s+tool\s+is\s+(?:available|present|installed|loaded|enabled)\b`)
	reOrdering   = regexp.MustCompile(`(?i)\b(?:before|instead\s+of|prior\s+to|rather\s+than)\s+(?:using\s+|calling\s+|invoking\s+|running\s+)?$`)
	reServerRef  = regexp.MustCompile(`(?i)\b(?:the\s+)?["'` + "`" + `]?([A-Za-z][\w.-]*)["'` + "`" + `]?\s+(?:mcp\s+)?server\b`)
)

// Gates of the shadowing expressions, and of the first filter of
// findShadowing.
var (
	gateShadowing  = orGate([]*gate{wordsGate(anyToolRef), wordsGate(anyUsing), wordsGate(anyOther), litGate("server")})
	gateToolCalled = orGate([]*gate{litGate("tool called"), litGate("tool named")})

	wToolRef    = newWindowed(reToolRef)
	wWhenUsing  = newWindowed(reWhenUsing)
	wServerRef  = newWindowed(reServerRef)
	wOtherTools = newWindowed(reOtherTools)
	wDirective  = newWindowedMatch(reDirective)
)

// genericServerWords precede "server" without naming another MCP server.
var genericServerWords = map[string]bool{
	"this": true, "that": true, "the": true, "a": true, "an": true, "mcp": true, "our": true, "your": true, "its": true,
	"same": true, "local": true, "remote": true, "web": true, "http": true, "https": true, "api": true, "sql": true,
	"database": true, "db": true, "language": true, "lsp": true, "file": true, "dev": true, "development": true,
	"production": true, "staging": true, "test": true, "proxy": true, "smtp": true, "imap": true, "mail": true,
	"email": true, "dns": true, "ssh": true, "ftp": true, "sftp": true, "git": true, "origin": true, "upstream": true,
	"backend": true, "application": true, "app": true, "authorization": true, "auth": true, "resource": true,
	"media": true, "game": true, "build": true, "content": true, "each": true, "every": true, "any": true, "other": true,
}

// genericToolWords are words that precede "tool" in honest prose.
var genericToolWords = map[string]bool{
	"this": true, "that": true, "the": true, "a": true, "an": true, "any": true, "each": true, "every": true, "other": true,
	"another": true, "same": true, "which": true, "what": true, "it": true, "its": true, "your": true, "one": true,
}

// identifierLike reports whether an unquoted word reads as a tool
// identifier rather than an English word: snake_case, kebab-case, dotted
// or camelCase.
func identifierLike(s string) bool {
	if strings.ContainsAny(strings.TrimRight(s, ".-_"), "_.-") {
		return true
	}
	for i := 1; i < len(s); i++ {
		if isUpper(rune(s[i])) && isLower(rune(s[i-1])) {
			return true
		}
	}
	return false
}

func (o *ownSet) foreign(name string) bool {
	o.build()
	n := normName(name)
	if n == "" || genericToolWords[n] || o.isOwn(n) {
		return false
	}
	// A single word that is a word of one of the server's own names ("the
	// search tool" on a server with search_repositories) is its own.
	if !strings.ContainsAny(n, "_.- ") {
		if o.isNameWord(n) || o.isServerWord(n) {
			return false
		}
	}
	return true
}

// gateAnyInjection holds when one of the detectors' word lists does: most
// texts hold none, and are done with at once.
var gateAnyInjection = func() *gate {
	var ks []*gate
	for i := range injectionDetectors {
		ks = append(ks, injectionDetectors[i].anyGate)
	}
	return orGate(ks)
}()

func checkInjection(out *findings, u *unit, own *ownSet) {
	if !u.scan.exotic && !gateAnyInjection.ok(&u.scan.bits) {
		return
	}
	var d *doc // made for the first match
	for i := range injectionDetectors {
		det := &injectionDetectors[i]
		if !u.scan.words(det) || !u.scan.may(det.reGate) {
			continue
		}
		for _, m := range det.w.findAll(u.scan) {
			if d == nil {
				d = &doc{text: u.text, own: own, u: u}
			}
			if det.accept(d, m) {
				out.add(Finding{Code: det.code, Kind: u.kind, Subject: u.subject, Field: u.field,
					Evidence: evidence(u.text, m[0], m[1]),
					Message:  fmt.Sprintf("The %s %s.", describeField(u), det.msg)})
				break
			}
		}
	}
}

func checkShadowing(out *findings, u *unit, own *ownSet) {
	d := &doc{text: u.text, own: own}
	if s, e, ref, ok := findShadowing(d, u.scan); ok {
		out.add(Finding{Code: CodeShadowing, Kind: u.kind, Subject: u.subject, Field: u.field,
			Evidence: evidence(u.text, s, e),
			Message:  fmt.Sprintf("The %s tells the model how %s must behave.", describeField(u), ref)})
	}
}

// findShadowing returns the first reference to another tool or server in a
// directive sentence.
func findShadowing(d *doc, sc *textScan) (start, end int, ref string, ok bool) {
	directive := func(pos int) bool {
		s, e := d.sentenceSpan(pos)
		return wDirective.matchIn(sc, s, e) // reDirective.MatchString(d.sentence(pos))
	}
	if sc.exotic {
		lower := sc.lowered()
		has := func(ws []string) bool { return (&detector{any: ws}).mayMatch(lower) }
		if !has(anyToolRef) && !has(anyUsing) && !has(anyOther) && !strings.Contains(lower, "server") {
			return 0, 0, "", false
		}
	} else if !gateShadowing.ok(&sc.bits) {
		return 0, 0, "", false
	}
	// A reference other than "when using X" counts only in a sentence
	// with a directive. A sentence is a span of the text, so without the
	// literals of a directive in the text no such reference counts, and
	// the expressions need not run.
	directed := sc.may(wDirective.gate)
	if directed {
		for _, m := range wToolRef.findAllBy(sc, findToolRefs) {
			name, quoted := d.group(m, 1), true
			if name == "" {
				name, quoted = d.group(m, 2), false
			}
			if name == "" {
				name, quoted = d.group(m, 4), true
			}
			if !quoted && !identifierLike(name) {
				continue
			}
			if d.own.foreign(name) && directive(m[0]) {
				return m[0], m[1], fmt.Sprintf("the tool %q", name), true
			}
		}
	}
	for _, m := range wWhenUsing.findAllBy(sc, findWhenUsing) {
		name, quoted := d.group(m, 1), true
		if name == "" {
			name, quoted = d.group(m, 2), false
		}
		kind := strings.ToLower(strings.TrimSpace(d.group(m, 3)))
		if !quoted && !identifierLike(name) && kind == "" {
			continue
		}
		if kind == "server" {
			if !d.own.isServerWord(strings.ToLower(name)) && !genericServerWords[strings.ToLower(name)] {
				return m[0], m[1], fmt.Sprintf("the server %q", name), true
			}
			continue
		}
		if d.own.foreign(name) {
			return m[0], m[1], fmt.Sprintf("the tool %q", name), true
		}
	}
	if !directed {
		return 0, 0, "", false
	}
	for _, m := range wOtherTools.findAll(sc) {
		// "before any other tool" orders the calls (tool_order); it does not
		// say how the other tools behave.
		if reOrdering.MatchString(d.text[max(0, m[0]-40):m[0]]) {
			continue
		}
		if directive(m[0]) {
			return m[0], m[1], "other tools", true
		}
	}
	for _, m := range wServerRef.findAllBy(sc, findServerRefs) {
		name := strings.ToLower(d.group(m, 1))
		if genericServerWords[name] || d.own.isServerWord(name) || d.own.isOwn(name) {
			continue
		}
		if directive(m[0]) {
			return m[0], m[1], fmt.Sprintf("the server %q", d.group(m, 1)), true
		}
	}
	return 0, 0, "", false
}

// isNameByte is the class [\w.-].
func isNameByte(c byte) bool { return isWordByte(c) || c == '.' || c == '-' }

// hasPrefixFold reports whether s starts with prefix (lower-case ASCII)
// with ASCII case folded.
func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if lowerByte(s[i]) != prefix[i] {
			return false
		}
	}
	return true
}

// checkInjectionPayload runs the injection and shadowing checks over text
// revealed by a hidden-text check: the evidence is where it was hidden,
// Decoded what it says.
func checkInjectionPayload(out *findings, u *unit, p payload) {
	d := &doc{text: p.text, u: u}
	sc := scanText(p.text)
	for i := range injectionDetectors {
		det := &injectionDetectors[i]
		if !sc.words(det) || !sc.may(det.reGate) {
			continue
		}
		for _, m := range det.w.findAll(sc) {
			if det.accept(d, m) {
				out.add(Finding{Code: det.code, Kind: u.kind, Subject: u.subject, Field: u.field,
					Evidence: evidence(u.text, p.start, p.end), Decoded: clip(p.text),
					Message: fmt.Sprintf("Text hidden in the %s %s.", describeField(u), det.msg)})
				break
			}
		}
	}
}

func describeField(u *unit) string {
	switch u.kind {
	case KindServer:
		return "server's " + strings.ReplaceAll(u.field, "/", " ")
	default:
		return u.kind + " " + fmt.Sprintf("%q", u.subject) + " " + strings.ReplaceAll(u.field, "/", " ")
	}
}
